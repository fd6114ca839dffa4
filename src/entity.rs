//! `Entity`: a generational handle, and the per-entity bookkeeping behind it.

use std::fmt;

use slotmap::Key;

use crate::storage::Location;

slotmap::new_key_type! {
    /// A handle to an entity of one context: an index and a generation.
    ///
    /// When an entity is destroyed its index may be reused, but with a new
    /// generation, so an old handle is detected as stale
    /// ([`Error::StaleEntity`](crate::Error::StaleEntity)) and never reaches the
    /// new entity. Handles are per context: a handle used on another context is
    /// not detected (it may name an entity there).
    ///
    /// `Display` prints `index v generation`, e.g. `3v1` (`Debug`: `Entity(3v1)`).
    pub struct Entity;
}

impl Entity {
    /// The slot index (reused after destruction).
    pub fn index(self) -> u32 {
        self.data().as_ffi() as u32
    }

    /// The generation of the slot when this handle was made.
    pub fn generation(self) -> u32 {
        (self.data().as_ffi() >> 32) as u32
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index(), self.generation())
    }
}

/// What a context keeps per live entity.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntityMeta {
    /// Where the entity's row is.
    pub(crate) location: Location,
    /// The position of the entity in creation order since the last `reset`.
    pub(crate) creation_index: u64,
}
