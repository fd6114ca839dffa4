//! AERC on the context: `retain`, `release`, and `aerc()`'s [`Aerc`] view
//! of what they tell (see the [`aerc`](crate::aerc) module); and the
//! releases of the context's own retains (collectors, reactive systems).

use std::fmt;

use super::Context;
use crate::aerc::{AercMode, Misuse, Owner};
use crate::entity::Entity;
use crate::error::Error;
use crate::event::ContextEvent;
use crate::slot_table::Liveness;

impl Context {
    /// A read-only view of the context's retains: its [`AercMode`], each
    /// entity's retain count and owners, whether an entity is enabled, and
    /// the destroyed entities kept for their retainers (see [`Aerc`]).
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    ///
    /// let mut game = Context::new();
    /// let e = game.create_entity();
    /// let owner = Owner::new();
    /// game.retain(e, owner)?;
    /// assert_eq!(game.aerc().retain_count(e)?, 1);
    /// assert_eq!(game.aerc().owners(e)?, Some(&[owner][..])); // safe mode lists them
    /// game.destroy_entity(e)?;
    /// assert_eq!(game.aerc().is_enabled(e)?, false); // destroyed, its slot kept
    /// assert_eq!(game.aerc().retained_destroyed().collect::<Vec<_>>(), [e]);
    /// game.release(e, owner)?;
    /// assert!(game.aerc().is_enabled(e).is_err()); // stale now
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn aerc(&self) -> Aerc<'_> {
        Aerc { context: self }
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
        if !self.entities.holds_slot(entity) {
            return Err(self.dead(entity, None));
        }
        self.retains
            .retain_user(entity.index(), owner)
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
        let liveness = self.entities.liveness(entity);
        if liveness == Liveness::Stale {
            return Err(self.dead(entity, None));
        }
        self.retains
            .release_user(entity.index(), owner)
            .map_err(|misuse| misuse_error(misuse, context, entity, owner))?;
        if liveness == Liveness::Disabled && !self.retains.is_retained(entity.index()) {
            self.free_released(entity);
            self.fire_released();
        }
        Ok(())
    }

    /// Frees the slot of a destroyed entity whose last retain went, and
    /// queues its `EntityReleased` for [`fire_released`](Context::fire_released).
    fn free_released(&mut self, entity: Entity) {
        self.entities.free_disabled(entity);
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
    /// (User code cannot release an internal retain, so it is there.)
    #[inline(always)]
    pub(crate) fn release_own(&mut self, entity: Entity) {
        debug_assert!(
            self.entities.holds_slot(entity),
            "{entity} lost its slot while retained"
        );
        let released = self.retains.release_internal(entity.index());
        debug_assert!(released, "{entity} was not retained by the context");
        // Only a destroyed entity's slot is freed: none is, unless some are
        // kept for their retainers.
        if self.entities.any_disabled()
            && !self.retains.is_retained(entity.index())
            && self.entities.liveness(entity) == Liveness::Disabled
        {
            self.free_released(entity);
        }
    }

    /// Releases the context's retain on each of `entities` (emptied), then
    /// fires the `EntityReleased` events.
    pub(crate) fn release_all(&mut self, entities: &mut Vec<Entity>) {
        debug_assert!(
            entities.iter().all(|&e| self.entities.holds_slot(e)),
            "an entity lost its slot while retained"
        );
        self.retains.release_internal_all(entities);
        // Only a destroyed entity's slot is freed: none is, unless some are
        // kept for their retainers.
        if self.entities.any_disabled() {
            for &entity in entities.iter() {
                if !self.retains.is_retained(entity.index()) && self.entities.liveness(entity) == Liveness::Disabled {
                    self.free_released(entity);
                }
            }
        }
        entities.clear();
        self.fire_released();
    }
}

fn misuse_error(misuse: Misuse, context: &'static str, entity: Entity, owner: Owner) -> Error {
    match misuse {
        Misuse::TooManyRetains => Error::TooManyRetains { context, entity },
        Misuse::AlreadyRetained => Error::AlreadyRetained { context, entity, owner },
        Misuse::NotRetained => Error::NotRetained { context, entity, owner },
    }
}

/// A read-only view of a context's retains, from [`Context::aerc`] (Entitas'
/// `entity.retainCount`, `entity.owners`, `entity.isEnabled`, and the
/// context's retained entities). Retaining and releasing are
/// [`Context::retain`] and [`Context::release`].
#[derive(Clone, Copy)]
pub struct Aerc<'a> {
    context: &'a Context,
}

impl<'a> Aerc<'a> {
    /// How the context counts retains.
    pub fn mode(&self) -> AercMode {
        self.context.retains.mode()
    }

    /// Whether the entity is enabled: `Ok(true)` while alive, `Ok(false)`
    /// once destroyed while something still retains it (see
    /// [`Context::is_alive`] for a plain yes or no).
    ///
    /// # Errors
    /// [`Error::StaleEntity`] once the slot is freed (destroyed and released).
    pub fn is_enabled(&self, entity: Entity) -> Result<bool, Error> {
        match self.context.entities.liveness(entity) {
            Liveness::Alive(_) => Ok(true),
            Liveness::Disabled => Ok(false),
            Liveness::Stale => Err(self.context.dead(entity, None)),
        }
    }

    /// How many retains hold the entity (enabled or destroyed).
    ///
    /// A collector's retain counts from when it collects the entity: at
    /// once for what is pushed to it (the entity joins or leaves its group,
    /// a `replace` or `modify*`), but for a write through `&mut`
    /// ([`get_mut`](Context::get_mut), queries, views), which only stamps
    /// the row, when the collector next looks (it is read, or its reactive
    /// system runs), or when the entity moves to another archetype or is
    /// destroyed before then (the stamped change is handed to the collector
    /// at that moment, so nothing is lost). Until then such a write adds
    /// nothing here.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] if the slot is free.
    pub fn retain_count(&self, entity: Entity) -> Result<usize, Error> {
        if !self.context.entities.holds_slot(entity) {
            return Err(self.context.dead(entity, None));
        }
        Ok(self.context.retains.count(entity.index()))
    }

    /// Who retains the entity, among owners made with [`Owner::new`]:
    /// `Some(owners)` in safe mode (in the order the retains were made, except
    /// that a release moves the newest into the released one's place), `None`
    /// in fast mode, which does not record them. Retains held by collectors
    /// and reactive systems are counted in
    /// [`retain_count`](Aerc::retain_count) but not listed here: they are
    /// made and released by the context alone, so there is no misuse to catch,
    /// and skipping the bookkeeping keeps reactive frames cheap.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] if the slot is free.
    pub fn owners(&self, entity: Entity) -> Result<Option<&'a [Owner]>, Error> {
        if !self.context.entities.holds_slot(entity) {
            return Err(self.context.dead(entity, None));
        }
        let retains = &self.context.retains;
        Ok((retains.mode() == AercMode::Safe).then(|| retains.owners(entity.index())))
    }

    /// The destroyed entities whose slots are kept because something still
    /// retains them, in slot order.
    pub fn retained_destroyed(&self) -> impl Iterator<Item = Entity> + use<'a> {
        self.context
            .entities
            .held()
            .filter(|&(_, disabled)| disabled)
            .map(|(entity, _)| entity)
    }
}

/// The mode and how many destroyed entities are kept:
/// `Aerc { mode: Safe, retained_destroyed: 1 }`.
impl fmt::Debug for Aerc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aerc")
            .field("mode", &self.mode())
            .field("retained_destroyed", &self.context.entities.disabled_len())
            .finish()
    }
}
