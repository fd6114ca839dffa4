//! The context's side of collectors: making them, reading them, switching
//! them, removing them, and draining them for reactive systems (the
//! visitor drains, `drain_collected` and `par_drain_collected`, are in
//! `drain.rs`).

use smallvec::SmallVec;

use super::Context;
use crate::aerc::Owner;
use crate::collector::{
    Collector, CollectorData, CollectorId, CollectorSpec, IntoCollectorId, RemovedView, TriggerOnEvent,
};
use crate::component::Component;
use crate::entity::Entity;
use crate::error::Error;

impl Context {
    /// Makes a collector: from now on it gathers the entities that the
    /// groups of `spec`'s matchers (made if needed) report under each
    /// trigger. It starts active. Each collector is separate (two collectors
    /// on one trigger collect the same entities, and are cleared apart), so
    /// every call makes a new one, unlike [`add_group`](Context::add_group),
    /// which returns the existing group for an equal matcher: make
    /// collectors once (a [`ReactiveSystem`](crate::ReactiveSystem)'s
    /// `trigger` runs once), not per frame, or they pile up (and retain what
    /// they gather) until [`remove_collector`](Context::remove_collector).
    ///
    /// Collectors are plain data in the context, updated directly by group
    /// events; each collected entity is retained by the collector until
    /// cleared.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Debug, PartialEq)] struct Health(u32);
    /// struct Dead;
    /// reactecs::component!(Health, Dead);
    ///
    /// let mut game = Context::new();
    /// // Over two groups; keeping the Health each entity had when it left.
    /// let spec = Matcher::all_of::<Health>().removed().and(Matcher::all_of::<Dead>().added());
    /// let gone = game.add_collector(spec.keep_removed::<Health>());
    /// let e = game.create_entity_with(Health(3))?;
    /// game.remove::<Health>(e)?;
    /// let collector = game.collector(gone)?;
    /// assert_eq!(collector.entities(), [e]);
    /// assert_eq!(collector.removed::<Health>().get(e), Some(&Health(3)));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn add_collector(&mut self, spec: impl Into<CollectorSpec>) -> CollectorId {
        let (specs, removed) = spec.into().into_parts();
        let mut triggers = SmallVec::new();
        for TriggerOnEvent { matcher, trigger } in specs {
            let group = self.add_group(matcher);
            triggers.push((group.index, trigger));
        }
        let seen = self.end_change_tick();
        let key = self
            .collectors
            .insert(triggers.clone(), removed, self.entities.slot_capacity(), seen);
        for (index, trigger) in triggers {
            self.routes.attach_collector(index, key, trigger.takes());
        }
        self.invalidate_routes();
        self.raise_stamp_floor();
        CollectorId {
            context: self.instance,
            key,
        }
    }

    /// The collector with id `id`, having first gathered the entities whose
    /// watched components were written (stamped) since it last looked:
    /// reading a collector is what brings it up to date, so this takes
    /// `&mut self`.
    ///
    /// `id` is a [`CollectorId`] from
    /// [`add_collector`](Context::add_collector): passing a trigger
    /// (`matcher.added()`) or a [`CollectorSpec`] here is a compile error
    /// whose note names `add_collector` (see [`IntoCollectorId`]).
    ///
    /// # Errors
    /// [`Error::UnknownCollector`] if it was removed or belongs to another
    /// context.
    pub fn collector(&mut self, id: impl IntoCollectorId) -> Result<Collector<'_>, Error> {
        let id = id.into_collector_id();
        self.collector_data(id)?;
        self.gather(id.key);
        let data = self.collector_data(id)?;
        Ok(Collector::new(id, data, self.routes.membership(), &self.entities))
    }

    /// Takes collector `id`'s entities out (still retained) and forgets its
    /// kept removed values: the collector is empty.
    pub(super) fn take_collected(&mut self, id: CollectorId) -> Result<Vec<Entity>, Error> {
        let collector = self.collector_mut(id)?;
        let batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.clear();
        }
        Ok(batch)
    }

    /// Releases the entities [`take_collected`](Context::take_collected)
    /// took out, and gives their list's memory back to collector `id`.
    pub(super) fn let_go(&mut self, id: CollectorId, mut batch: Vec<Entity>) -> Result<(), Error> {
        self.release_all(&mut batch);
        self.collector_mut(id)?.return_batch(batch);
        Ok(())
    }

    /// The removed values collector `id` keeps (see
    /// [`Collector::removed`]), through a shared borrow: removed values are
    /// recorded as entities leave, so nothing needs gathering, and the
    /// context can be read alongside (e.g. in a reactive system's
    /// `execute`, for the entities it executes).
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn removed_values<T: Component + Clone>(&self, id: CollectorId) -> Result<RemovedView<'_, T>, Error> {
        let data = self.collector_data(id)?;
        Ok(Collector::new(id, data, self.routes.membership(), &self.entities).removed::<T>())
    }

    /// Every collector, in slot order (creation order, except that a new
    /// collector may take the slot of a removed one), each brought up to
    /// date first as [`collector`](Context::collector) does.
    pub fn collectors(&mut self) -> impl Iterator<Item = Collector<'_>> + '_ {
        self.gather_all();
        self.collectors_as_they_are()
    }

    /// Every collector as it is (nothing gathered).
    pub(super) fn collectors_as_they_are(&self) -> impl Iterator<Item = Collector<'_>> + '_ {
        let context = self.instance;
        self.collectors.iter().map(move |(key, data)| {
            Collector::new(
                CollectorId { context, key },
                data,
                self.routes.membership(),
                &self.entities,
            )
        })
    }

    /// Lets the collector collect again (events since its deactivation are
    /// not replayed). Activating an active collector does nothing.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn activate_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        let collector = self.collector_mut(id)?;
        if !collector.active {
            collector.active = true;
            // Changes made while it was off are not replayed.
            let seen = self.end_change_tick();
            self.collector_mut(id)?.seen = seen;
            self.invalidate_routes();
            self.raise_stamp_floor();
        }
        Ok(())
    }

    /// Stops the collector, clearing it (releasing what it held). It
    /// collects nothing until activated.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn deactivate_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        let collector = self.collector_mut(id)?;
        if collector.active {
            collector.active = false;
            self.invalidate_routes();
        }
        self.clear_collector(id)?;
        self.raise_stamp_floor();
        Ok(())
    }

    /// Empties the collector, releasing each entity it held (a destroyed
    /// entity whose last retain this was is freed:
    /// [`ContextEvent::EntityReleased`](crate::ContextEvent::EntityReleased)).
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn clear_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        self.collector_mut(id)?;
        // What was written so far is taken and let go of with the rest.
        self.looked_now(id.key);
        let batch = self.take_collected(id)?;
        self.let_go(id, batch)
    }

    /// Removes the collector, releasing what it held. Its id is then unknown.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn remove_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        self.clear_collector(id)?;
        let data = self
            .collectors
            .remove(id.key)
            .expect("the collector exists: `clear_collector` found it just above");
        for &(index, _) in &data.triggers {
            self.routes.detach_collector(index, id.key);
        }
        self.invalidate_routes();
        self.raise_stamp_floor();
        Ok(())
    }

    pub(super) fn collector_data(&self, id: CollectorId) -> Result<&CollectorData, Error> {
        let found = (id.context == self.instance)
            .then(|| self.collectors.get(id.key))
            .flatten();
        found.ok_or(Error::UnknownCollector {
            context: self.name,
            collector: id,
        })
    }

    pub(super) fn collector_mut(&mut self, id: CollectorId) -> Result<&mut CollectorData, Error> {
        let context = self.name;
        let found = (id.context == self.instance)
            .then(|| self.collectors.get_mut(id.key))
            .flatten();
        found.ok_or(Error::UnknownCollector { context, collector: id })
    }

    /// Moves the collector's entities into `out` for a reactive system that
    /// holds retains as `to` (an internal owner): entities that pass `filter`
    /// (and are enabled, unless `include_destroyed` or the collector has a
    /// trigger that collects removals, as Entitas hands destroyed entities
    /// to the filter) are handed over from the collector's retain to `to`'s;
    /// the rest are released. The collector is empty
    /// afterwards, and its kept removed values become the batch's until
    /// [`finish_batch`](Context::finish_batch).
    pub(crate) fn drain_collector(
        &mut self,
        id: CollectorId,
        to: Owner,
        include_destroyed: bool,
        out: &mut Vec<Entity>,
        mut filter: impl FnMut(&Context, Entity) -> bool,
    ) -> Result<(), Error> {
        debug_assert!(out.is_empty(), "a reactive system drains into an empty buffer");
        self.collector_mut(id)?;
        self.gather(id.key);
        let collector = self.collector_mut(id)?;
        debug_assert!(collector.owner.is_internal() && to.is_internal());
        let include_destroyed = include_destroyed || collector.triggers.iter().any(|(_, trigger)| trigger.takes().left);
        let mut batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.start_batch();
        }
        // Internal owners are only counted, so handing every retain from the
        // collector to `to` changes nothing. Filtering afterwards, in place,
        // keeps a panicking filter from leaking retains: what it did not reach
        // stays in `out`, held by `to`, for the caller to release.
        if out.is_empty() {
            // `out` takes the batch's memory, the collector `out`'s: no copy.
            std::mem::swap(out, &mut batch);
        } else {
            out.extend_from_slice(&batch);
        }
        self.collector_mut(id)?.return_batch(batch);
        // With no destroyed entity kept anywhere, every collected one is enabled.
        let all_enabled = !self.entities.any_disabled();
        out.retain(|&entity| {
            let enabled = all_enabled || self.entities.location(entity).is_some();
            let keep = (enabled || include_destroyed) && filter(self, entity);
            if !keep {
                self.release_own(entity);
            }
            keep
        });
        self.fire_released();
        Ok(())
    }

    /// Ends the batch that [`drain_collector`](Context::drain_collector)
    /// started: forgets its kept removed values.
    pub(crate) fn finish_batch(&mut self, id: CollectorId) -> Result<(), Error> {
        if let Some(store) = &mut self.collector_mut(id)?.removed {
            store.end_batch();
        }
        Ok(())
    }
}
