//! AERC, automatic entity reference counting: `retain` / `release` with
//! owners, so a destroyed entity that something still holds keeps its slot.
//!
//! An entity's slot (its index) is reused only after the entity is destroyed
//! *and* its last retain is released. In between, the entity is *disabled*:
//! its components are gone and it is in no group, but its handle answers
//! [`Context::is_enabled`] with `Ok(false)` rather than
//! [`Error::StaleEntity`], so whoever holds it can tell what happened.
//! [`ContextEvent::EntityReleased`] fires
//! once per entity, when its slot is freed: right after `EntityDestroyed` if
//! nothing retains it, else at its last release.
//!
//! Collectors retain what they collect, and reactive systems what they
//! execute over; user code can retain too, with an [`Owner`] of its own.
//!
//! Two modes, chosen when the context is built ([`ContextBuilder::aerc`]):
//! [`AercMode::Safe`] (the default) records each entity's owners, so retaining
//! twice with one owner or releasing without a retain is an error (the
//! context's own owners, of collectors and reactive systems, are only
//! counted: user code cannot retain or release with them);
//! [`AercMode::Fast`] keeps only a count of user retains (releasing more
//! than users retained is still an error). In both modes the retains of
//! collectors and reactive systems are counted apart from users', so no user
//! release can take one.
//!
//! [`ContextBuilder::aerc`]: crate::ContextBuilder::aerc

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use smallvec::SmallVec;

use crate::context::Context;
use crate::entity::{Entity, EntityMeta};
use crate::error::Error;
use crate::event::ContextEvent;

/// How a context counts retains. See the [module docs](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AercMode {
    /// Records who retains each entity: a second retain by the same owner, or
    /// a release by an owner that holds no retain, is an [`Error`].
    #[default]
    Safe,
    /// Keeps only a count per entity: cheaper, and checks only that releases
    /// do not outnumber retains.
    Fast,
}

/// Who holds a retain on an entity. Make one per holder with [`Owner::new`];
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
/// assert_eq!(game.is_enabled(e)?, false);          // destroyed, but its slot is kept
/// assert_eq!(game.retained_destroyed_entities().collect::<Vec<_>>(), [e]);
/// game.release(e, me)?;                             // now the slot is free
/// assert!(game.is_enabled(e).is_err());
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

/// A context's retain bookkeeping beyond the per-entity counts: in safe mode,
/// each slot's user owners.
pub(crate) struct Aerc {
    mode: AercMode,
    /// Per slot index, the user owners holding a retain (safe mode only).
    owners: Vec<SmallVec<[Owner; 2]>>,
}

impl Aerc {
    pub(crate) fn new(mode: AercMode) -> Self {
        Aerc {
            mode,
            owners: Vec::new(),
        }
    }

    pub(crate) fn mode(&self) -> AercMode {
        self.mode
    }

    /// Adds user `owner`'s retain to the entity whose meta is `meta`. (The
    /// retains of collectors and reactive systems are only counted, apart
    /// from users', by `retain_internal`: they cannot misuse retains, and pay
    /// no owner bookkeeping per entity.)
    #[inline]
    pub(crate) fn retain(&mut self, meta: &mut EntityMeta, entity: Entity, owner: Owner) -> Result<(), Misuse> {
        debug_assert!(!owner.is_internal(), "internal retains go through `retain_internal`");
        let count = meta.user_retains.checked_add(1).ok_or(Misuse::TooManyRetains)?;
        if self.mode == AercMode::Safe {
            let index = entity.index() as usize;
            if index >= self.owners.len() {
                self.owners.resize_with(index + 1, SmallVec::new);
            }
            let owners = &mut self.owners[index];
            if owners.contains(&owner) {
                return Err(Misuse::AlreadyRetained);
            }
            owners.push(owner);
        }
        meta.user_retains = count;
        Ok(())
    }

    /// Adds a collector's, reactive system's or entity index's retain.
    #[inline(always)]
    pub(crate) fn retain_internal(meta: &mut EntityMeta) -> Result<(), Misuse> {
        meta.internal_retains = meta.internal_retains.checked_add(1).ok_or(Misuse::TooManyRetains)?;
        Ok(())
    }

    /// Takes one such retain off; false if there was none (a bug).
    #[inline(always)]
    pub(crate) fn release_internal(meta: &mut EntityMeta) -> bool {
        meta.internal_retains
            .checked_sub(1)
            .map(|count| meta.internal_retains = count)
            .is_some()
    }

    /// Takes user `owner`'s retain off the entity whose meta is `meta`.
    #[inline]
    pub(crate) fn release(&mut self, meta: &mut EntityMeta, entity: Entity, owner: Owner) -> Result<(), Misuse> {
        debug_assert!(!owner.is_internal(), "internal retains go through `release_own`");
        let count = meta.user_retains.checked_sub(1).ok_or(Misuse::NotRetained)?;
        if self.mode == AercMode::Safe {
            let owners = self
                .owners
                .get_mut(entity.index() as usize)
                .ok_or(Misuse::NotRetained)?;
            let at = owners.iter().position(|&o| o == owner).ok_or(Misuse::NotRetained)?;
            owners.swap_remove(at);
        }
        meta.user_retains = count;
        Ok(())
    }

    /// Forgets the owners recorded for slot `index`, whose entity is gone.
    pub(crate) fn forget(&mut self, index: u32) {
        if let Some(owners) = self.owners.get_mut(index as usize) {
            debug_assert!(owners.is_empty(), "a freed slot had owners");
            owners.clear();
        }
    }

    /// The owners of the entity in slot `index` (safe mode; empty otherwise).
    pub(crate) fn owners(&self, index: u32) -> &[Owner] {
        self.owners.get(index as usize).map_or(&[], |owners| owners)
    }
}

impl Context {
    /// How this context counts retains.
    pub fn aerc_mode(&self) -> AercMode {
        self.aerc.mode()
    }

    /// Whether the entity is enabled: `Ok(true)` while alive, `Ok(false)`
    /// once destroyed while something still retains it.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] once the slot is freed (destroyed and released).
    pub fn is_enabled(&self, entity: Entity) -> Result<bool, Error> {
        self.entities
            .slot(entity)
            .map(|meta| meta.enabled)
            .ok_or(Error::StaleEntity {
                context: self.name,
                entity,
            })
    }

    /// Adds a retain by `owner`: the entity's slot is not reused until every
    /// retain is released, even after the entity is destroyed. Works on an
    /// enabled entity and on a destroyed one that is still retained.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] if the slot is free;
    /// [`Error::AlreadyRetained`] in safe mode if `owner` holds a retain on the
    /// entity already; [`Error::InternalOwner`] for the owner of a collector
    /// or a reactive system. Nothing changes on error.
    pub fn retain(&mut self, entity: Entity, owner: Owner) -> Result<(), Error> {
        let context = self.name;
        if owner.is_internal() {
            return Err(Error::InternalOwner { context, owner });
        }
        let meta = self
            .entities
            .slot_mut(entity)
            .ok_or(Error::StaleEntity { context, entity })?;
        self.aerc
            .retain(meta, entity, owner)
            .map_err(|misuse| misuse_error(misuse, context, entity, owner))
    }

    /// Takes `owner`'s retain off the entity. If that was the last one and
    /// the entity is destroyed, its slot is freed and
    /// [`ContextEvent::EntityReleased`] fires.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] if the slot is free; [`Error::NotRetained`] if
    /// `owner` holds no retain (safe mode) or no user retain is left (fast
    /// mode);
    /// [`Error::InternalOwner`] for the owner of a collector or a reactive
    /// system. Nothing changes on error.
    pub fn release(&mut self, entity: Entity, owner: Owner) -> Result<(), Error> {
        let context = self.name;
        if owner.is_internal() {
            return Err(Error::InternalOwner { context, owner });
        }
        let meta = self
            .entities
            .slot_mut(entity)
            .ok_or(Error::StaleEntity { context, entity })?;
        self.aerc
            .release(meta, entity, owner)
            .map_err(|misuse| misuse_error(misuse, context, entity, owner))?;
        if !meta.is_retained() && !meta.enabled {
            self.free_released(entity);
            self.fire_released();
        }
        Ok(())
    }

    /// Frees the slot of a destroyed entity whose last retain went, and
    /// queues its `EntityReleased` for [`fire_released`](Context::fire_released).
    fn free_released(&mut self, entity: Entity) {
        self.entities.free_disabled(entity);
        self.aerc.forget(entity.index());
        if !self.subscribers.is_empty() {
            self.released.push(entity);
        }
    }

    /// Fires the queued `EntityReleased` events. Batch releases queue them and
    /// fire them only once every count is settled, so a panicking handler
    /// cannot leave a batch half released.
    pub(crate) fn fire_released(&mut self) {
        if self.released.is_empty() {
            return;
        }
        let mut queued = std::mem::take(&mut self.released);
        for &entity in &queued {
            self.subscribers.emit(&ContextEvent::EntityReleased { entity });
        }
        queued.clear();
        self.released = queued;
    }

    /// Releases a retain the context itself made (for a collector or a
    /// reactive system), freeing the slot if it was the last one; the
    /// `EntityReleased` event waits for [`fire_released`](Context::fire_released).
    /// (User code cannot release an internal owner's retain, so it is there.)
    #[inline]
    pub(crate) fn release_own(&mut self, entity: Entity, owner: Owner) {
        let Some(meta) = self.entities.slot_mut(entity) else {
            debug_assert!(false, "retained entity {entity} lost its slot");
            return;
        };
        debug_assert!(owner.is_internal());
        let released = Aerc::release_internal(meta);
        debug_assert!(released, "{owner} did not retain {entity}");
        if released && !meta.is_retained() && !meta.enabled {
            self.free_released(entity);
        }
    }

    /// Releases `owner`'s retain on each of `entities` (emptied), then fires
    /// the `EntityReleased` events.
    pub(crate) fn release_all(&mut self, entities: &mut Vec<Entity>, owner: Owner) {
        for &entity in entities.iter() {
            self.release_own(entity, owner);
        }
        entities.clear();
        self.fire_released();
    }

    /// How many retains hold the entity (enabled or destroyed).
    ///
    /// # Errors
    /// [`Error::StaleEntity`] if the slot is free.
    pub fn retain_count(&self, entity: Entity) -> Result<usize, Error> {
        self.entities
            .slot(entity)
            .map(EntityMeta::retain_count)
            .ok_or(Error::StaleEntity {
                context: self.name,
                entity,
            })
    }

    /// Who retains the entity, among owners made with [`Owner::new`]:
    /// `Some(owners)` in safe mode (in the order the retains were made, except
    /// that a release moves the newest into the released one's place), `None`
    /// in fast mode, which does not record them. Retains held by collectors
    /// and reactive systems are counted in
    /// [`retain_count`](Context::retain_count) but not listed here: they are
    /// made and released by the context alone, so there is no misuse to catch,
    /// and skipping the bookkeeping keeps reactive frames cheap.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] if the slot is free.
    pub fn retain_owners(&self, entity: Entity) -> Result<Option<&[Owner]>, Error> {
        self.entities.slot(entity).ok_or(Error::StaleEntity {
            context: self.name,
            entity,
        })?;
        Ok((self.aerc.mode() == AercMode::Safe).then(|| self.aerc.owners(entity.index())))
    }

    /// The destroyed entities whose slots are kept because something still
    /// retains them, in slot order.
    pub fn retained_destroyed_entities(&self) -> impl Iterator<Item = Entity> + '_ {
        self.entities
            .iter_slots()
            .filter(|(_, meta)| !meta.enabled)
            .map(|(entity, _)| entity)
    }
}

fn misuse_error(misuse: Misuse, context: &'static str, entity: Entity, owner: Owner) -> Error {
    match misuse {
        Misuse::TooManyRetains => Error::TooManyRetains { context, entity },
        Misuse::AlreadyRetained => Error::AlreadyRetained { context, entity, owner },
        Misuse::NotRetained => Error::NotRetained { context, entity, owner },
    }
}
