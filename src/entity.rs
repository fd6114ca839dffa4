//! `Entity`: a generational handle, and the per-entity bookkeeping behind it.

use std::fmt;

use slotmap::{Key, SlotMap};

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

/// What a context keeps per entity slot in use.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntityMeta {
    /// Where the entity's row is (meaningless once disabled).
    pub(crate) location: Location,
    /// The position of the entity in creation order since the last `reset`.
    pub(crate) creation_index: u64,
    /// Retains held by user owners (AERC).
    pub(crate) user_retains: u32,
    /// Retains held by collectors and reactive systems, counted apart so a
    /// user release can never take one.
    pub(crate) internal_retains: u32,
    /// False once destroyed: the slot is kept only for its retainers.
    pub(crate) enabled: bool,
}

impl EntityMeta {
    /// Whether anything retains the entity.
    #[inline]
    pub(crate) fn is_retained(&self) -> bool {
        self.user_retains != 0 || self.internal_retains != 0
    }

    /// How many retains hold the entity.
    pub(crate) fn retain_count(&self) -> usize {
        self.user_retains as usize + self.internal_retains as usize
    }
}

/// The entity slots of a context: enabled entities, and destroyed ones whose
/// slots are kept because something still retains them (AERC). Lookups by
/// handle see enabled entities only, unless they say otherwise.
#[derive(Default)]
pub(crate) struct Entities {
    slots: SlotMap<Entity, EntityMeta>,
    /// Slots held by destroyed, still retained entities.
    disabled: usize,
}

impl Entities {
    /// The meta of an enabled entity.
    #[inline]
    pub(crate) fn get(&self, entity: Entity) -> Option<&EntityMeta> {
        self.slots.get(entity).filter(|meta| meta.enabled)
    }

    /// The meta of an enabled entity, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, entity: Entity) -> Option<&mut EntityMeta> {
        self.slots.get_mut(entity).filter(|meta| meta.enabled)
    }

    /// The meta of an entity whose slot is in use, enabled or not.
    #[inline]
    pub(crate) fn slot(&self, entity: Entity) -> Option<&EntityMeta> {
        self.slots.get(entity)
    }

    /// The meta of an entity whose slot is in use, mutably.
    #[inline]
    pub(crate) fn slot_mut(&mut self, entity: Entity) -> Option<&mut EntityMeta> {
        self.slots.get_mut(entity)
    }

    /// Points an enabled entity moved by storage at its new row.
    #[inline]
    pub(crate) fn relocate(&mut self, entity: Entity, location: Location) {
        self.slots[entity].location = location;
    }

    /// The number of enabled entities.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.disabled
    }

    /// How many slots exist, used or free (an upper bound on slot indices).
    pub(crate) fn slot_capacity(&self) -> usize {
        self.slots.capacity() + 1
    }

    /// The number of destroyed entities kept for their retainers.
    pub(crate) fn disabled_len(&self) -> usize {
        self.disabled
    }

    /// Enabled entities, in slot order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = Entity> + '_ {
        self.slots
            .iter()
            .filter(|(_, meta)| meta.enabled)
            .map(|(entity, _)| entity)
    }

    /// Every slot in use, enabled or not, in slot order.
    pub(crate) fn iter_slots(&self) -> impl Iterator<Item = (Entity, &EntityMeta)> + '_ {
        self.slots.iter()
    }

    /// Room for `additional` more entities.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    /// Takes a free slot for a new, enabled entity whose meta `make` builds.
    #[inline]
    pub(crate) fn insert_with_key(&mut self, make: impl FnOnce(Entity) -> EntityMeta) -> Entity {
        self.slots.insert_with_key(make)
    }

    /// Ends an enabled entity's life: frees its slot if nothing retains it
    /// (returns true), else keeps the slot, disabled, for its retainers.
    pub(crate) fn disable(&mut self, entity: Entity) -> bool {
        let meta = &mut self.slots[entity];
        debug_assert!(meta.enabled);
        if !meta.is_retained() {
            self.slots.remove(entity);
            true
        } else {
            meta.enabled = false;
            self.disabled += 1;
            false
        }
    }

    /// Frees the slot of a disabled entity whose last retain went.
    pub(crate) fn free_disabled(&mut self, entity: Entity) {
        debug_assert!(self.slots.get(entity).is_some_and(|m| !m.enabled && !m.is_retained()));
        self.slots.remove(entity);
        self.disabled -= 1;
    }
}
