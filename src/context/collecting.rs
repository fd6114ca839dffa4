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
use crate::query::{QueryPlan, ReadOnlyQueryParam, for_each_in_blocks};
use crate::routes::Membership;
use crate::storage::{Archetype, ArchetypeId, Archetypes, ColumnAccess, SparseLend, SparseSets};

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
        if let Some(place) = self.in_place::<Q>(id.key)? {
            let mut visited = 0;
            for (archetype, col) in place.walk.iter().copied() {
                let archetype = place.archetypes.get(archetype);
                if let Some(blocks) = archetype.changed_blocks(col, place.since) {
                    visited += place.visit_blocks::<Q>(archetype, blocks, &mut f);
                }
            }
            self.looked_now(id.key);
            return Ok(visited);
        }
        self.visit_gathered(id, |game, batch| {
            let mut visited = 0;
            for item in batch.iter().filter_map(|&e| game.entity(e).ok()?.query::<Q>()) {
                visited += 1;
                f(item);
            }
            visited
        })
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
        if let Some(place) = self.in_place::<Q>(id.key)? {
            let states = place.par_fold_blocks(pieces, &init, &f);
            self.looked_now(id.key);
            return Ok(states);
        }
        self.visit_gathered(id, |game, batch| {
            let piece = batch.len().div_ceil(pieces).max(64);
            batch
                .par_chunks(piece)
                .map(|entities| {
                    let mut state = init();
                    for item in entities.iter().filter_map(|&e| game.entity(e).ok()?.query::<Q>()) {
                        f(&mut state, item);
                    }
                    state
                })
                .collect()
        })
    }

    /// How [`drain_collected`](Context::drain_collected) reads collector
    /// `key` in place, if it can (see [`InPlace::of`]).
    fn in_place<Q: ReadOnlyQueryParam>(&mut self, key: CollectorKey) -> Result<Option<InPlace<'_>>, Error> {
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
        Ok(InPlace::of(
            plan,
            collectors.get(key),
            routes.membership(),
            archetypes,
            sparse,
        ))
    }

    /// Gathers collector `id`'s batch and takes it out, lets `visit` read
    /// it beside the context, then lets the batch go (released even if
    /// `visit` panics, so no slot stays held).
    fn visit_gathered<R>(&mut self, id: CollectorId, visit: impl FnOnce(&Context, &[Entity]) -> R) -> Result<R, Error> {
        self.gather(id.key);
        let batch = self.take_collected(id)?;
        let visited = panic::catch_unwind(AssertUnwindSafe(|| visit(self, &batch)));
        self.let_go(id, batch)?;
        visited.map_err(|payload| panic::resume_unwind(payload))
    }

    /// Takes collector `id`'s entities out (still retained) and forgets its
    /// kept removed values: the collector is empty.
    fn take_collected(&mut self, id: CollectorId) -> Result<Vec<Entity>, Error> {
        let collector = self.collector_mut(id)?;
        let batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.clear();
        }
        Ok(batch)
    }

    /// Releases the entities [`take_collected`](Context::take_collected)
    /// took out, and gives their list's memory back to collector `id`.
    fn let_go(&mut self, id: CollectorId, mut batch: Vec<Entity>) -> Result<(), Error> {
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

/// What reading a collector's batch in place needs: its query's plan, the
/// storage, the collector's last look, and the archetypes to walk, each
/// with its watched column, in order.
struct InPlace<'c> {
    plan: &'c QueryPlan,
    archetypes: &'c Archetypes,
    sparse: &'c SparseSets,
    since: u32,
    walk: SmallVec<[(ArchetypeId, usize); 8]>,
}

impl<'c> InPlace<'c> {
    /// Whether collector `data`'s batch can be read in place: one group,
    /// updates taken, nothing pushed or kept, no per-entity membership
    /// check, no watched flag or sparse component, one watched column per
    /// archetype, and `plan` (its query's) requiring no flag or sparse
    /// component. If so, the walk: the group's archetypes with stamps and
    /// `plan`'s components.
    fn of(
        plan: &'c QueryPlan,
        data: Option<&CollectorData>,
        membership: &Membership,
        archetypes: &'c Archetypes,
        sparse: &'c SparseSets,
    ) -> Option<Self> {
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
        Some(InPlace {
            plan,
            archetypes,
            sparse,
            since: data.seen,
            walk,
        })
    }

    /// Calls `f` with `Q`'s items of the rows of `archetype` that `blocks`
    /// names (see [`for_each_in_blocks`]); gives how many.
    fn visit_blocks<'a, Q: ReadOnlyQueryParam>(
        &'a self,
        archetype: &'a Archetype,
        blocks: impl IntoIterator<Item = (usize, u64)>,
        f: &mut impl FnMut(Q::Item<'a>),
    ) -> usize {
        let columns = ColumnAccess::shared(archetype, SparseLend::shared(self.sparse), self.plan.columns());
        for_each_in_blocks::<Q>(columns, archetype.chunk_shift(), blocks, f)
    }

    /// The stamped rows cut into about `pieces` pieces of blocks (about the
    /// same rows each, one archetype each), each folded in parallel into a
    /// state `init` makes; the states in row order.
    #[cfg(feature = "parallel")]
    fn par_fold_blocks<Q: ReadOnlyQueryParam, S: Send>(
        &self,
        pieces: usize,
        init: &(impl Fn() -> S + Send + Sync),
        f: &(impl Fn(&mut S, Q::Item<'_>) + Send + Sync),
    ) -> Vec<S> {
        use rayon::prelude::*;
        let mut blocks: Vec<(usize, usize, u64)> = Vec::new();
        for (at, &(archetype, col)) in self.walk.iter().enumerate() {
            if let Some(changed) = self.archetypes.get(archetype).changed_blocks(col, self.since) {
                blocks.extend(changed.map(|(start, mask)| (at, start, mask)));
            }
        }
        let rows = |&(_, _, mask): &(usize, usize, u64)| mask.count_ones() as usize;
        let per_piece = blocks.iter().map(rows).sum::<usize>().div_ceil(pieces.max(1)).max(64);
        let mut cuts = vec![0];
        let mut filled = 0;
        for (i, block) in blocks.iter().enumerate() {
            let new_archetype = i > 0 && blocks[i - 1].0 != block.0;
            if filled >= per_piece || (new_archetype && filled > 0) {
                cuts.push(i);
                filled = 0;
            }
            filled += rows(block);
        }
        cuts.push(blocks.len());
        cuts.par_windows(2)
            .filter(|cut| cut[0] < cut[1])
            .map(|cut| {
                let piece = &blocks[cut[0]..cut[1]];
                let archetype = self.archetypes.get(self.walk[piece[0].0].0);
                let mut state = init();
                self.visit_blocks::<Q>(
                    archetype,
                    piece.iter().map(|&(_, start, mask)| (start, mask)),
                    &mut |item| f(&mut state, item),
                );
                state
            })
            .collect()
    }
}
