//! AERC, automatic entity reference counting: `retain` / `release` with
//! owners, so a destroyed entity that something still holds keeps its slot.
//!
//! On [`Context`](crate::Context): [`retain`](crate::Context::retain),
//! [`release`](crate::Context::release), and [`aerc`](crate::Context::aerc),
//! the read-only [`Aerc`](crate::Aerc) view (mode, retain counts, owners,
//! whether an entity is enabled). The context's side is in `context/aerc.rs`.
//!
//! An entity's slot (its index) is reused only after the entity is destroyed
//! *and* its last retain is released. In between, the entity is *disabled*:
//! its components are gone and it is in no group, but its handle answers
//! [`Aerc::is_enabled`](crate::Aerc::is_enabled) with `Ok(false)` rather than
//! [`Error::StaleEntity`](crate::Error::StaleEntity), so whoever holds it can tell what happened.
//! [`ContextEvent::EntityReleased`](crate::ContextEvent::EntityReleased) fires
//! once per entity, when its slot is freed: right after `EntityDestroyed` if
//! nothing retains it, else at its last release.
//!
//! Collectors retain what they collect, and reactive systems what they
//! execute over; user code can retain too, with an [`Owner`] of its own.
//!
//! Two modes, chosen when the context is built ([`ContextBuilder::aerc`](crate::ContextBuilder::aerc)):
//! [`AercMode::Safe`] (the default) records each entity's owners, so retaining
//! twice with one owner or releasing without a retain is an error (the
//! context's own owners, of collectors and reactive systems, are only
//! counted: user code cannot retain or release with them);
//! [`AercMode::Fast`] keeps only a count of user retains (releasing more
//! than users retained is still an error). In both modes the retains of
//! collectors and reactive systems are counted apart from users', so no user
//! release can take one.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use smallvec::SmallVec;

use crate::entity::Entity;

/// How a context counts retains. See the [module docs](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AercMode {
    /// Records who retains each entity: a second retain by the same owner, or
    /// a release by an owner that holds no retain, is an [`Error`](crate::Error).
    #[default]
    Safe,
    /// Keeps only a count per entity: cheaper, and checks only that releases
    /// do not outnumber retains.
    Fast,
}

/// Who holds a retain on an entity. Make one per holder with [`Owner::new`](crate::Owner::new);
/// each is distinct from every other owner in the program.
///
/// # Example
/// ```
/// use reactecs::{Context, Owner};
/// let mut game = Context::new();
/// let e = game.create_entity();
/// let me = Owner::new();
/// game.retain(e, me)?;
/// game.destroy_entity(e)?;
/// assert_eq!(game.aerc().is_enabled(e)?, false);          // destroyed, but its slot is kept
/// assert_eq!(game.aerc().retained_destroyed().collect::<Vec<_>>(), [e]);
/// game.release(e, me)?;                             // now the slot is free
/// assert!(game.aerc().is_enabled(e).is_err());
/// # Ok::<(), reactecs::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner(u64);

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// Marks the owners of collectors and reactive systems, which only the
/// context retains and releases with.
const INTERNAL: u64 = 1 << 63;

impl Owner {
    /// A new owner, distinct from all others.
    #[allow(
        clippy::new_without_default,
        reason = "each call makes a distinct owner; `Default` would hide that"
    )]
    pub fn new() -> Self {
        Owner(NEXT_OWNER.fetch_add(1, Ordering::Relaxed))
    }

    /// A new owner for a collector or a reactive system.
    pub(crate) fn internal() -> Self {
        Owner(Self::new().0 | INTERNAL)
    }

    /// Whether this owner belongs to a collector or a reactive system.
    pub fn is_internal(self) -> bool {
        self.0 & INTERNAL != 0
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_internal() {
            write!(f, "internal owner #{}", self.0 & !INTERNAL)
        } else {
            write!(f, "owner #{}", self.0)
        }
    }
}

/// What went wrong with a retain or release (the context adds its name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Misuse {
    AlreadyRetained,
    NotRetained,
    TooManyRetains,
}

/// The retain counts of a context's entity slots: a side table, indexed by
/// slot, that only retains and releases touch (lookups never do). It grows
/// to the highest slot retained, so a context whose entities nobody retains
/// pays nothing for it.
///
/// Internal retains (of collectors, reactive systems and entity indices)
/// are only counted; user retains are counted apart (so a user release can
/// never take an internal one) and, in safe mode, recorded with their owners.
pub(crate) struct Retains {
    mode: AercMode,
    /// Per slot, the internal retains.
    internal: Vec<u32>,
    /// Per slot, the user retains.
    user: Vec<u32>,
    /// Per slot, the user owners holding a retain (safe mode only).
    owners: Vec<SmallVec<[Owner; 2]>>,
}

impl Retains {
    pub(crate) fn new(mode: AercMode) -> Self {
        Retains {
            mode,
            internal: Vec::new(),
            user: Vec::new(),
            owners: Vec::new(),
        }
    }

    pub(crate) fn mode(&self) -> AercMode {
        self.mode
    }

    /// Adds an internal retain to slot `index`.
    #[inline(always)]
    pub(crate) fn retain_internal(&mut self, index: u32) {
        let count = match self.internal.get_mut(index as usize) {
            Some(count) => count,
            None => self.grow_internal(index as usize),
        };
        // One per collector, reactive system and index holding the entity:
        // far fewer than 2^32, so this never wraps.
        debug_assert!(*count < u32::MAX);
        *count = count.wrapping_add(1);
    }

    /// Room for slot `index`'s count, which it gives.
    #[cold]
    #[inline(never)]
    fn grow_internal(&mut self, index: usize) -> &mut u32 {
        self.internal.resize((index + 1).next_power_of_two(), 0);
        &mut self.internal[index]
    }

    /// Takes an internal retain off slot `index`; false if there was none (a
    /// bug).
    #[inline(always)]
    pub(crate) fn release_internal(&mut self, index: u32) -> bool {
        match self.internal.get_mut(index as usize) {
            Some(count) if *count > 0 => {
                *count -= 1;
                true
            }
            _ => false,
        }
    }

    /// Takes an internal retain off the slot of each of `entities` (each
    /// has one).
    #[inline]
    pub(crate) fn release_internal_all(&mut self, entities: &[Entity]) {
        for entity in entities {
            let count = self.internal.get_mut(entity.index() as usize);
            debug_assert!(count.as_ref().is_some_and(|c| **c > 0), "{entity} was not retained");
            if let Some(count) = count {
                *count = count.saturating_sub(1);
            }
        }
    }

    /// Adds user `owner`'s retain to slot `index`.
    pub(crate) fn retain_user(&mut self, index: u32, owner: Owner) -> Result<(), Misuse> {
        debug_assert!(!owner.is_internal(), "internal retains go through `retain_internal`");
        let index = index as usize;
        let count = self.user.get(index).copied().unwrap_or(0);
        let count = count.checked_add(1).ok_or(Misuse::TooManyRetains)?;
        if self.mode == AercMode::Safe {
            if index >= self.owners.len() {
                self.owners.resize_with(index + 1, SmallVec::new);
            }
            let owners = &mut self.owners[index];
            if owners.contains(&owner) {
                return Err(Misuse::AlreadyRetained);
            }
            owners.push(owner);
        }
        if index >= self.user.len() {
            self.user.resize(index + 1, 0);
        }
        self.user[index] = count;
        Ok(())
    }

    /// Takes user `owner`'s retain off slot `index`.
    pub(crate) fn release_user(&mut self, index: u32, owner: Owner) -> Result<(), Misuse> {
        debug_assert!(!owner.is_internal(), "internal retains go through `release_internal`");
        let index = index as usize;
        let count = self.user.get(index).copied().unwrap_or(0);
        let count = count.checked_sub(1).ok_or(Misuse::NotRetained)?;
        if self.mode == AercMode::Safe {
            let owners = self.owners.get_mut(index).ok_or(Misuse::NotRetained)?;
            let at = owners.iter().position(|&o| o == owner).ok_or(Misuse::NotRetained)?;
            owners.swap_remove(at);
        }
        self.user[index] = count;
        Ok(())
    }

    /// The internal retains on slot `index`.
    #[inline]
    pub(crate) fn internal(&self, index: u32) -> u32 {
        self.internal.get(index as usize).copied().unwrap_or(0)
    }

    /// The user retains on slot `index`.
    #[inline]
    pub(crate) fn user(&self, index: u32) -> u32 {
        self.user.get(index as usize).copied().unwrap_or(0)
    }

    /// Whether anything retains slot `index`.
    #[inline]
    pub(crate) fn is_retained(&self, index: u32) -> bool {
        self.internal(index) != 0 || self.user(index) != 0
    }

    /// How many retains hold slot `index`.
    pub(crate) fn count(&self, index: u32) -> usize {
        self.internal(index) as usize + self.user(index) as usize
    }

    /// The user owners of slot `index` (safe mode; empty otherwise).
    pub(crate) fn owners(&self, index: u32) -> &[Owner] {
        self.owners.get(index as usize).map_or(&[], |owners| owners)
    }
}
