//! The context's side of collectors: making them, reading them, switching
//! them, removing them, and draining them (for reactive systems, and in
//! place with `drain_collected`).

use std::panic::{self, AssertUnwindSafe};

use smallvec::SmallVec;

use super::Context;
use crate::aerc::Owner;
use crate::collector::{Collector, CollectorData, CollectorId, CollectorSpec, RemovedView, TriggerOnEvent};
use crate::component::Component;
use crate::entity::Entity;
use crate::error::Error;
use crate::id::CollectorKey;
use crate::query::{QueryPlan, ReadOnlyQueryParam, for_each_in_runs};
use crate::routes::Membership;
use crate::storage::{ArchetypeId, Archetypes, ColumnAccess, SparseLend, SparseSets};

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
    /// # Errors
    /// [`Error::UnknownCollector`] if it was removed or belongs to another
    /// context.
    pub fn collector(&mut self, id: CollectorId) -> Result<Collector<'_>, Error> {
        self.collector_data(id)?;
        self.gather(id.key);
        let data = self.collector_data(id)?;
        Ok(Collector::new(id, data, self.routes.membership(), &self.entities))
    }

    /// Calls `f` with `Q`'s items of each entity collector `id` holds, then
    /// clears the collector (as a reactive system's run does, releasing
    /// what it held): the batch [`collector`](Context::collector) would
    /// give, in its order, with the components read where they are rather
    /// than looked up entity by entity. Entities of the batch that are
    /// destroyed, or lack a component `Q` requires, are skipped (as a
    /// reactive system's `filter` would). Returns how many were visited.
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
    /// [`Error::UnknownCollector`].
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
    /// let visited = game.drain_collected::<&Position>(moved, |p| sum += p.0)?;
    /// assert_eq!((visited, sum), (4, 46.0));
    /// assert_eq!(game.drain_collected::<&Position>(moved, |_| {})?, 0, "drained");
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn drain_collected<Q: ReadOnlyQueryParam>(
        &mut self,
        id: CollectorId,
        mut f: impl FnMut(Q::Item<'_>),
    ) -> Result<usize, Error> {
        self.collector_data(id)?;
        if let Some(visited) = self.drain_in_place::<Q>(id.key, &mut f)? {
            let seen = self.end_change_tick();
            self.collector_mut(id)?.seen = seen;
            return Ok(visited);
        }
        self.gather(id.key);
        let collector = self.collector_mut(id)?;
        let mut batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.clear();
        }
        let mut visited = 0;
        // The batch is out of the collector, still retained: released
        // whether or not `f` panics, so no slot stays held.
        let visit = panic::catch_unwind(AssertUnwindSafe(|| {
            for &entity in &batch {
                if let Some(item) = self.entity(entity).ok().and_then(|view| view.query::<Q>()) {
                    visited += 1;
                    f(item);
                }
            }
        }));
        self.release_all(&mut batch);
        self.collector_mut(id)?.return_batch(batch);
        match visit {
            Ok(()) => Ok(visited),
            Err(payload) => panic::resume_unwind(payload),
        }
    }

    /// [`drain_collected`](Context::drain_collected)'s way in place, if it
    /// applies to collector `key` (see [`in_place_walk`]): visits the rows
    /// stamped since the collector's last look and gives how many. `None`,
    /// having visited nothing, if it does not apply.
    fn drain_in_place<Q: ReadOnlyQueryParam>(
        &mut self,
        key: CollectorKey,
        f: &mut impl FnMut(Q::Item<'_>),
    ) -> Result<Option<usize>, Error> {
        let Context {
            archetypes,
            sparse,
            routes,
            collectors,
            queries,
            name,
            ..
        } = self;
        let plan = queries.current::<Q>(archetypes, name)?;
        let Some((since, walk)) = in_place_walk(plan, collectors.get(key), routes.membership(), archetypes, sparse)
        else {
            return Ok(None);
        };
        let lend = SparseLend::shared(sparse);
        let mut visited = 0;
        for (archetype, col) in walk {
            let archetype = archetypes.get(archetype);
            visited += for_each_in_runs::<Q>(
                ColumnAccess::shared(archetype, lend, plan.columns()),
                archetype.chunk_shift(),
                |run| archetype.changed_runs(col, since, run),
                f,
            );
        }
        Ok(Some(visited))
    }

    /// As [`drain_collected`](Context::drain_collected), the batch split
    /// into pieces of consecutive entities visited in parallel on rayon's
    /// thread pool: each piece folded into a state `init` makes, the states
    /// given in batch order (so their concatenation follows
    /// `drain_collected`'s order, whatever the threads did). Entitas'
    /// `JobSystem`, without its races: `f` gets shared access only. Needs
    /// the `parallel` feature.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
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
    /// let buffers = game.par_drain_collected::<(Entity, &Position), _>(moved, CommandBuffer::new, |commands, (e, p)| {
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
    pub fn par_drain_collected<Q: ReadOnlyQueryParam, S: Send>(
        &mut self,
        id: CollectorId,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) -> Result<Vec<S>, Error> {
        use rayon::prelude::*;
        self.collector_data(id)?;
        let pieces = rayon::current_num_threads() * 4;
        if let Some(states) = self.par_drain_in_place::<Q, S>(id.key, pieces, &init, &f)? {
            let seen = self.end_change_tick();
            self.collector_mut(id)?.seen = seen;
            return Ok(states);
        }
        self.gather(id.key);
        let collector = self.collector_mut(id)?;
        let mut batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.clear();
        }
        let piece = batch.len().div_ceil(pieces).max(64);
        let shared = &*self;
        let visit = panic::catch_unwind(AssertUnwindSafe(|| {
            batch
                .par_chunks(piece)
                .map(|entities| {
                    let mut state = init();
                    for &entity in entities {
                        if let Some(item) = shared.entity(entity).ok().and_then(|view| view.query::<Q>()) {
                            f(&mut state, item);
                        }
                    }
                    state
                })
                .collect::<Vec<S>>()
        }));
        self.release_all(&mut batch);
        self.collector_mut(id)?.return_batch(batch);
        visit.map_err(|payload| panic::resume_unwind(payload))
    }

    /// [`par_drain_collected`](Context::par_drain_collected)'s way in
    /// place, if it applies (see [`in_place_walk`]): the stamped rows, cut
    /// into about `pieces` pieces of runs, each folded in parallel. `None`
    /// if it does not apply.
    #[cfg(feature = "parallel")]
    fn par_drain_in_place<Q: ReadOnlyQueryParam, S: Send>(
        &mut self,
        key: CollectorKey,
        pieces: usize,
        init: &(impl Fn() -> S + Send + Sync),
        f: &(impl Fn(&mut S, Q::Item<'_>) + Send + Sync),
    ) -> Result<Option<Vec<S>>, Error> {
        use rayon::prelude::*;
        let Context {
            archetypes,
            sparse,
            routes,
            collectors,
            queries,
            name,
            ..
        } = self;
        let plan = queries.current::<Q>(archetypes, name)?;
        let Some((since, walk)) = in_place_walk(plan, collectors.get(key), routes.membership(), archetypes, sparse)
        else {
            return Ok(None);
        };
        let archetypes = &*archetypes;
        // Each archetype's runs, then pieces of about the same rows each.
        let mut runs: Vec<(usize, usize, usize)> = Vec::new();
        for (at, &(archetype, col)) in walk.iter().enumerate() {
            archetypes
                .get(archetype)
                .changed_runs(col, since, |first, len| runs.push((at, first, len)));
        }
        let rows: usize = runs.iter().map(|&(_, _, len)| len).sum();
        let per_piece = rows.div_ceil(pieces.max(1)).max(64);
        let mut cuts = vec![0];
        let mut filled = 0;
        for (i, &(at, _, len)) in runs.iter().enumerate() {
            let new_archetype = i > 0 && runs[i - 1].0 != at;
            if filled >= per_piece || (new_archetype && filled > 0) {
                cuts.push(i);
                filled = 0;
            }
            filled += len;
        }
        cuts.push(runs.len());
        let states = cuts
            .par_windows(2)
            .filter(|cut| cut[0] < cut[1])
            .map(|cut| {
                let piece = &runs[cut[0]..cut[1]];
                let archetype = archetypes.get(walk[piece[0].0].0);
                let mut state = init();
                for_each_in_runs::<Q>(
                    ColumnAccess::shared(archetype, SparseLend::shared(sparse), plan.columns()),
                    archetype.chunk_shift(),
                    |run| piece.iter().for_each(|&(_, first, len)| run(first, len)),
                    &mut |item| f(&mut state, item),
                );
                state
            })
            .collect();
        Ok(Some(states))
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
        self.clear_collector(id)
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
        let seen = self.end_change_tick();
        let collector = self.collector_mut(id)?;
        collector.seen = seen;
        let mut batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.clear();
        }
        self.release_all(&mut batch);
        self.collector_mut(id)?.return_batch(batch);
        Ok(())
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
        Ok(())
    }

    fn collector_data(&self, id: CollectorId) -> Result<&CollectorData, Error> {
        let found = (id.context == self.instance)
            .then(|| self.collectors.get(id.key))
            .flatten();
        found.ok_or(Error::UnknownCollector {
            context: self.name,
            collector: id,
        })
    }

    fn collector_mut(&mut self, id: CollectorId) -> Result<&mut CollectorData, Error> {
        let context = self.name;
        let found = (id.context == self.instance)
            .then(|| self.collectors.get_mut(id.key))
            .flatten();
        found.ok_or(Error::UnknownCollector { context, collector: id })
    }

    /// Moves the collector's entities into `out` for a reactive system that
    /// holds retains as `to` (an internal owner): entities that pass `filter`
    /// (and are enabled, unless `include_destroyed`) are handed over from the
    /// collector's retain to `to`'s; the rest are released. The collector is empty
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
        let batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.start_batch();
        }
        // Internal owners are only counted, so handing every retain from the
        // collector to `to` changes nothing. Filtering afterwards, in place,
        // keeps a panicking filter from leaking retains: what it did not reach
        // stays in `out`, held by `to`, for the caller to release.
        out.extend_from_slice(&batch);
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

/// Whether [`Context::drain_collected`] reads collector `data`'s batch in
/// place: one group, updates taken, nothing pushed or kept, no per-entity
/// membership check, no watched flag or sparse component, one watched
/// column per archetype, and `plan` (its query's) requiring no flag or
/// sparse component. If so: the collector's last look, and the group's
/// archetypes with stamps and `plan`'s components, each with its watched
/// column, in order.
#[allow(clippy::type_complexity)]
fn in_place_walk(
    plan: &QueryPlan,
    data: Option<&CollectorData>,
    membership: &Membership,
    archetypes: &Archetypes,
    sparse: &SparseSets,
) -> Option<(u32, SmallVec<[(ArchetypeId, usize); 8]>)> {
    let data = data?;
    let &[(group, trigger)] = &data.triggers[..] else {
        return None;
    };
    if !data.active || !trigger.takes().updated || !data.entities.is_empty() || data.removed.is_some() {
        return None;
    }
    let member = membership.group(group);
    let watched = || member.matcher.watched();
    if member.is_gated() || plan.requires_sparse() || watched().any(|id| sparse.watched().contains(id)) {
        return None;
    }
    let mut walk = SmallVec::new();
    for &id in &member.archetypes {
        let archetype = archetypes.get(id);
        let mut columns = watched().filter_map(|id| archetype.column_index(id));
        let col = match (columns.next(), columns.next()) {
            (Some(col), None) => col,
            // Two watched columns here: their rows would need merging.
            (Some(_), Some(_)) => return None,
            (None, _) => continue,
        };
        if !archetype.is_empty() && archetype.is_stamped() && plan.fits(archetype.set()) {
            walk.push((id, col));
        }
    }
    Some((data.seen, walk))
}
