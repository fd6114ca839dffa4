//! `Entity`: a handle to an entity of one context, a slot index and a tag.
//! How tags are given out, so that a stale handle or one of another context
//! names nothing, is told with the slots behind the handles, in
//! `slot_table.rs`.

use std::fmt;
use std::num::NonZeroU32;

/// A handle to an entity of one context: a slot index and a tag.
///
/// When an entity is destroyed its slot may be reused, but the next entity in
/// it has another tag, so an old handle is detected as stale
/// ([`Error::StaleEntity`](crate::Error::StaleEntity)) and never reaches the
/// new entity. Handles are per context: a handle used on another context
/// (alive or dropped) names nothing there, and every call refuses it
/// ([`Error::ForeignEntity`](crate::Error::ForeignEntity)).
///
/// `Display` prints `index v tag`, e.g. `3v1048577` (`Debug`:
/// `Entity(3v1048577)`; tags are the low bits of creation numbers whose
/// start differs per context, so they are large and differ between
/// contexts and runs). A
/// placeholder made by a [`CommandBuffer`](crate::CommandBuffer) prints as
/// `p` and its number, e.g. `p0`: it names no entity of any context until the
/// buffer is played back ([`CommandBuffer::resolve`](crate::CommandBuffer::resolve)).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C, align(8))]
pub struct Entity {
    pub(crate) index: u32,
    pub(crate) tag: NonZeroU32,
}

impl Entity {
    /// A handle that no context ever issues, for filling plain-data tables
    /// before their real entities are known (`vec![Entity::PLACEHOLDER; n]`,
    /// or `Entity::default()`, which is this handle).
    ///
    /// Every call refuses it as a handle of another context, with
    /// [`Error::ForeignEntity`](crate::Error::ForeignEntity), and changes
    /// nothing; `is_alive`, `has` and the other questions answer `false`.
    /// It is not a [`CommandBuffer`](crate::CommandBuffer) placeholder
    /// (those print as `p0`, `p1`, ... and are resolved at playback): a
    /// command recorded on it fails at playback, as a foreign handle.
    /// It prints as `placeholder`.
    ///
    /// ```
    /// use reactecs::{Context, Entity, Error};
    ///
    /// let mut targets = vec![Entity::default(); 3];
    /// let mut game = Context::with_name("Game");
    /// targets[0] = game.create_entity();
    /// assert!(game.is_alive(targets[0]));
    /// assert!(!game.is_alive(targets[1]));
    /// assert!(matches!(game.destroy_entity(targets[1]), Err(Error::ForeignEntity { .. })));
    /// assert_eq!(targets[2], Entity::PLACEHOLDER);
    /// assert_eq!(targets[2].to_string(), "placeholder");
    /// ```
    pub const PLACEHOLDER: Entity = Entity {
        index: u32::MAX,
        tag: NonZeroU32::MAX,
    };

    /// The slot index (reused after destruction).
    #[inline]
    pub fn index(self) -> u32 {
        self.index
    }

    /// The entity's tag: the low 32 bits of its creation number, which tell
    /// it apart from the entities that use its slot before and after it.
    #[inline]
    pub fn tag(self) -> u32 {
        self.tag.get()
    }

    /// Whether this is [`Entity::PLACEHOLDER`].
    pub(crate) fn is_null(self) -> bool {
        self == Entity::PLACEHOLDER
    }

    /// How many placeholder numbers there are: `0..PLACEHOLDERS`.
    pub(crate) const PLACEHOLDERS: u32 = u32::MAX;

    /// Placeholder `number` of a command buffer: tag `u32::MAX`, which no
    /// entity gets (see the `slot_table` module docs), so it never names one. `number` is
    /// below [`Entity::PLACEHOLDERS`], so a placeholder is never
    /// [`Entity::PLACEHOLDER`].
    pub(crate) fn placeholder(number: u32) -> Entity {
        debug_assert!(number < Entity::PLACEHOLDERS);
        Entity {
            index: number,
            tag: NonZeroU32::MAX,
        }
    }

    /// The number of this placeholder, if it is one.
    #[inline]
    pub(crate) fn placeholder_number(self) -> Option<u32> {
        (self.tag == NonZeroU32::MAX && self.index < Entity::PLACEHOLDERS).then_some(self.index)
    }
}

impl Default for Entity {
    /// [`Entity::PLACEHOLDER`]: a handle no context issues.
    fn default() -> Self {
        Entity::PLACEHOLDER
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.placeholder_number() {
            Some(number) => write!(f, "p{number}"),
            None if self.is_null() => f.write_str("placeholder"),
            None => write!(f, "{}v{}", self.index, self.tag),
        }
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entity({self})")
    }
}
