//! The context's side of collectors: making them (`add_collector`),
//! reading them (`collector`, `collectors`), and the handle that acts on
//! one (`collector_mut`'s [`CollectorMut`]: activate, deactivate, clear,
//! remove, drain; the drains' bodies are in `drain.rs`), and the draining
//! reactive systems do.

use smallvec::SmallVec;

use super::Context;
use crate::aerc::Owner;
use crate::collector::{Collector, CollectorData, CollectorId, CollectorSpec, IntoCollectorId, TriggerOnEvent};
use crate::entity::Entity;
use crate::error::Error;
use crate::query::ReadOnlyQueryParam;

impl Context {
    /// Makes a collector: from now on it gathers the entities that the
    /// groups of `spec`'s matchers (made if needed) report under each
    /// trigger. It starts active. Each collector is separate (two collectors
    /// on one trigger collect the same entities, and are cleared apart), so
    /// every call makes a new one, unlike [`add_group`](Context::add_group),
    /// which returns the existing group for an equal matcher: make
    /// collectors once (a [`ReactiveSystem`](crate::ReactiveSystem)'s
    /// `trigger` runs once), not per frame, or they pile up (and retain what
    /// they gather) until [`CollectorMut::remove`].
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
    ///
    /// To act on the collector (activate, deactivate, clear, remove,
    /// drain), use [`collector_mut`](Context::collector_mut).
    pub fn collector(&mut self, id: impl IntoCollectorId) -> Result<Collector<'_>, Error> {
        let id = id.into_collector_id();
        self.collector_data(id)?;
        self.gather(id.key);
        let data = self.collector_data(id)?;
        Ok(Collector::new(id, data, self.routes.membership(), &self.entities))
    }

    /// The handle that acts on collector `id`: switch it off and on
    /// ([`activate`](CollectorMut::activate),
    /// [`deactivate`](CollectorMut::deactivate)), empty it
    /// ([`clear`](CollectorMut::clear)), remove it
    /// ([`remove`](CollectorMut::remove)), or read and clear it in one go
    /// ([`drain`](CollectorMut::drain), and `par_drain` with the `parallel`
    /// feature). Making the handle gathers nothing (a drain reads what was
    /// written in place); to read the collected entities, use
    /// [`collector`](Context::collector).
    ///
    /// # Errors
    /// [`Error::UnknownCollector`] if it was removed or belongs to another
    /// context.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug)] struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let mut game = Context::new();
    /// let hurt = game.add_collector(Matcher::all_of::<Health>().updated());
    /// let e = game.create_entity_with(Health(10))?;
    /// game.replace(e, Health(9))?;
    /// game.collector_mut(hurt)?.clear();
    /// assert!(game.collector(hurt)?.is_empty());
    ///
    /// game.collector_mut(hurt)?.deactivate(); // hears nothing until activated
    /// game.replace(e, Health(8))?;
    /// assert!(game.collector(hurt)?.is_empty() && !game.collector(hurt)?.is_active());
    /// game.collector_mut(hurt)?.activate();
    /// game.replace(e, Health(7))?;
    /// assert_eq!(game.collector(hurt)?.entities(), [e]);
    ///
    /// game.collector_mut(hurt)?.remove();
    /// assert!(matches!(game.collector(hurt), Err(Error::UnknownCollector { .. })));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn collector_mut(&mut self, id: CollectorId) -> Result<CollectorMut<'_>, Error> {
        self.collector_data(id)?;
        Ok(CollectorMut { context: self, id })
    }

    /// Takes collector `id`'s entities out (still retained) and forgets its
    /// kept removed values: the collector is empty.
    pub(super) fn take_collected(&mut self, id: CollectorId) -> Result<Vec<Entity>, Error> {
        let collector = self.collector_data_mut(id)?;
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
        self.collector_data_mut(id)?.return_batch(batch);
        Ok(())
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

    /// [`CollectorMut::activate`] of collector `id`.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub(crate) fn activate_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        let collector = self.collector_data_mut(id)?;
        if !collector.active {
            collector.active = true;
            // Changes made while it was off are not replayed.
            let seen = self.end_change_tick();
            self.collector_data_mut(id)?.seen = seen;
            self.invalidate_routes();
            self.raise_stamp_floor();
        }
        Ok(())
    }

    /// [`CollectorMut::deactivate`] of collector `id`.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub(crate) fn deactivate_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        let collector = self.collector_data_mut(id)?;
        if collector.active {
            collector.active = false;
            self.invalidate_routes();
        }
        self.clear_collector(id)?;
        self.raise_stamp_floor();
        Ok(())
    }

    /// [`CollectorMut::clear`] of collector `id`.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub(crate) fn clear_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        self.collector_data_mut(id)?;
        // What was written so far is taken and let go of with the rest.
        self.looked_now(id.key);
        let batch = self.take_collected(id)?;
        self.let_go(id, batch)
    }

    /// [`CollectorMut::remove`] of collector `id`.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub(crate) fn remove_collector(&mut self, id: CollectorId) -> Result<(), Error> {
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

    pub(super) fn collector_data_mut(&mut self, id: CollectorId) -> Result<&mut CollectorData, Error> {
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
        self.collector_data_mut(id)?;
        self.gather(id.key);
        let collector = self.collector_data_mut(id)?;
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
        self.collector_data_mut(id)?.return_batch(batch);
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
        if let Some(store) = &mut self.collector_data_mut(id)?.removed {
            store.end_batch();
        }
        Ok(())
    }
}

/// The handle that acts on one collector, from [`Context::collector_mut`]
/// (Entitas' `collector.Activate()`, `Deactivate()`,
/// `ClearCollectedEntities()`): the collector's id was checked when the
/// handle was made, and the handle borrows the context, so none of its
/// calls can find the collector gone. To read what it collected, use
/// [`Context::collector`] (a read-only [`Collector`]).
pub struct CollectorMut<'a> {
    context: &'a mut Context,
    id: CollectorId,
}

impl CollectorMut<'_> {
    /// The collector's id.
    pub fn id(&self) -> CollectorId {
        self.id
    }

    /// Lets the collector collect again (events since its deactivation are
    /// not replayed). Activating an active collector does nothing.
    pub fn activate(&mut self) {
        let done = self.context.activate_collector(self.id);
        debug_assert!(done.is_ok(), "the handle's collector exists");
    }

    /// Stops the collector, clearing it (releasing what it held). It
    /// collects nothing until [`activate`](CollectorMut::activate)d.
    pub fn deactivate(&mut self) {
        let done = self.context.deactivate_collector(self.id);
        debug_assert!(done.is_ok(), "the handle's collector exists");
    }

    /// Empties the collector, releasing each entity it held (a destroyed
    /// entity whose last retain this was is freed:
    /// [`ContextEvent::EntityReleased`](crate::ContextEvent::EntityReleased)).
    pub fn clear(&mut self) {
        let done = self.context.clear_collector(self.id);
        debug_assert!(done.is_ok(), "the handle's collector exists");
    }

    /// Removes the collector, releasing what it held. Its id is then
    /// unknown.
    pub fn remove(self) {
        let done = self.context.remove_collector(self.id);
        debug_assert!(done.is_ok(), "the handle's collector exists");
    }

    /// Calls `f` with `Q`'s items of each entity the collector holds, then
    /// clears the collector (as a reactive system's run does, releasing
    /// what it held): the batch [`Context::collector`] would
    /// give, in its order, with the components read where they are rather
    /// than looked up entity by entity. Entities of the batch that are
    /// destroyed, or lack a component `Q` requires, are skipped (as a
    /// reactive system's `filter` would). Returns how many were visited.
    ///
    /// If `f` panics, the entities already handed to it (the one it
    /// panicked on included) are consumed and the rest stay collected, in
    /// their order, for the next drain: nothing is delivered twice, nothing
    /// is lost, whichever way the batch was read.
    ///
    /// For a collector of one group's updates (an `added()` or `updated()`
    /// trigger) with nothing pushed since its last look (no entity joined
    /// or left its group, none was handed over at a structural change),
    /// the rows written since that look are read in place, run by run,
    /// without listing or retaining them: the way to consume many changes
    /// per frame. Otherwise the batch is gathered and each entity looked
    /// up.
    ///
    /// # Errors
    /// Those of planning `Q`: none for a read-only `Q`, which every
    /// [`Context::query`] accepts (the collector cannot be gone: see
    /// [`CollectorMut`]).
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug, PartialEq)] struct Position(f32);
    /// reactecs::component!(Position);
    ///
    /// let mut game = Context::new();
    /// let moved = game.add_collector(Matcher::all_of::<Position>().updated());
    /// game.create_entities_with((0..4).map(|i| (Position(i as f32),)))?;
    /// game.query_mut::<&mut Position>()?.for_each(|p| p.0 += 10.0);
    /// let mut sum = 0.0;
    /// let visited = game.collector_mut(moved)?.drain::<&Position>(|p| sum += p.0)?;
    /// assert_eq!((visited, sum), (4, 46.0));
    /// assert_eq!(game.collector_mut(moved)?.drain::<&Position>(|_| {})?, 0, "drained");
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn drain<Q: ReadOnlyQueryParam>(&mut self, f: impl FnMut(Q::Item<'_>)) -> Result<usize, Error> {
        self.context.drain_collected::<Q>(self.id, f)
    }

    /// As [`drain`](CollectorMut::drain), the batch split
    /// into pieces of consecutive entities visited in parallel on rayon's
    /// thread pool: each piece folded into a state `init` makes, the states
    /// given in batch order (so their concatenation follows
    /// `drain`'s order, whatever the threads did). Entitas'
    /// `JobSystem`, without its races: `f` gets shared access only. Needs
    /// the `parallel` feature. If `f` panics, what was handed to it (in
    /// any piece) is consumed and the rest stays collected, in its order,
    /// as for [`drain`](CollectorMut::drain).
    ///
    /// # Errors
    /// Those of planning `Q`: none for a read-only `Q`, which every
    /// [`Context::query`] accepts (the collector cannot be gone: see
    /// [`CollectorMut`]).
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug)] struct Position(f32);
    /// reactecs::component!(Position);
    ///
    /// let mut game = Context::new();
    /// let moved = game.add_collector(Matcher::all_of::<Position>().updated());
    /// game.create_entities_with((0..1000).map(|i| (Position(i as f32),)))?;
    /// game.query_mut::<&mut Position>()?.par_for_each(|p| p.0 += 1.0);
    /// // One command buffer per piece, played back in batch order.
    /// let buffers = game.collector_mut(moved)?.par_drain::<(Entity, &Position), _>(CommandBuffer::new, |commands, (e, p)| {
    ///     if p.0 > 500.0 {
    ///         commands.destroy_entity(e);
    ///     }
    /// })?;
    /// for mut buffer in buffers {
    ///     buffer.playback(&mut game)?;
    /// }
    /// assert_eq!(game.len(), 500);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    #[cfg(feature = "parallel")]
    pub fn par_drain<Q: ReadOnlyQueryParam, S: Send>(
        &mut self,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) -> Result<Vec<S>, Error> {
        self.context.par_drain_collected::<Q, S>(self.id, init, f)
    }
}

impl std::fmt::Debug for CollectorMut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollectorMut").field("id", &self.id).finish()
    }
}
