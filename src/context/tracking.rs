//! Change tracking: which columns carry change stamps, collectors gathering
//! the rows stamped since they last looked, and handing a stamped entity to
//! its collectors before it leaves its row.
//!
//! Every mutable access to a watched component stamps it (storage does it:
//! `get_mut`, entity views, queries, `modify*`, `replace`): per row for a
//! component kept in archetype columns, per entity slot for a flag or
//! sparse one. A collector gathers what was stamped after its last look
//! when it is read ([`Context::collector`], a reactive system's drain):
//! group by group, archetype by archetype, rows in order, then the flag and
//! sparse components' slots in order.
//!
//! A row that leaves its archetype (a structural change, or destruction)
//! or may leave a group (a flag or sparse component added or removed) while
//! stamped hands its entity to the collectors that watch it first, so no
//! change is lost and the collector retains the entity exactly as a push
//! would have.
//!
//! The ticks, the floor and their rules (when ticks are rebased, by how
//! much, where the floor stands given the collectors' looks) are storage's:
//! see `storage/stamps/`. Here are the collectors' side of them: which
//! collectors are active, when each looks, and gathering before a rebase.

use smallvec::SmallVec;

use super::Context;
use super::change::replace_route;
use super::dispatch::ConsumerView;
use crate::collector::Trigger;
use crate::entity::Entity;
use crate::id::{CollectorKey, ComponentId};
use crate::routes::Holding;
use crate::storage::{ComponentSet, Location, Tick};

impl Context {
    /// Gives change stamps to the columns of the components some active
    /// collector watches for replacements (an `added()` or `updated()`
    /// trigger on a group whose AllOf or AnyOf names them), and drops the
    /// others'. A zero-sized component (a tag or flag) is never watched: it
    /// can be added and removed, never updated. Called whenever consumers
    /// change.
    pub(super) fn sync_watched(&mut self) {
        let (mut watched, mut sparse) = (ComponentSet::new(), ComponentSet::new());
        for (_, data) in self.collectors.iter() {
            if !data.active {
                continue;
            }
            for &(group, trigger) in &data.triggers {
                if !trigger.takes().updated {
                    continue;
                }
                let matcher = &self.routes.membership().group(group).matcher;
                for id in matcher.watched() {
                    if self.archetypes.is_tag(id) {
                        continue;
                    }
                    if self.archetypes.is_sparse(id) {
                        sparse.insert(id);
                    } else {
                        watched.insert(id);
                    }
                }
            }
        }
        self.archetypes.set_watched(&watched);
        self.sparse.set_watched(&sparse);
    }

    /// Ends the current change tick and gives it: a consumer that looked
    /// now remembers it, and every later write stamps a larger tick.
    /// Rebases ticks first when the clock says (see `storage::Clock`), so
    /// they stay below 2^31.
    pub(super) fn end_change_tick(&mut self) -> Tick {
        if self.archetypes.clock().needs_rebase() {
            self.rebase_change_ticks();
        }
        self.archetypes.end_tick()
    }

    /// Makes every tick smaller by the same amount, keeping their order:
    /// collectors the clock calls stale gather first, then every stamp,
    /// every collector's last look and the current tick drop by the base
    /// the clock gives for the oldest last look.
    #[cold]
    fn rebase_change_ticks(&mut self) {
        let clock = self.archetypes.clock();
        let now = clock.now();
        let stale: SmallVec<[CollectorKey; 8]> = self
            .collectors
            .iter()
            .filter(|(_, data)| data.active && clock.is_stale(data.seen))
            .map(|(key, _)| key)
            .collect();
        for key in stale {
            self.gather_rows(key);
            if let Some(data) = self.collectors.get_mut(key) {
                data.seen = now;
            }
        }
        let base = self.archetypes.clock().rebase_base(self.oldest_look());
        self.collectors.rebase(base);
        self.archetypes.rebase_ticks(base);
        self.sparse.rebase_stamps(base);
        self.raise_stamp_floor();
    }

    /// The oldest last look of an active collector, if one is active.
    fn oldest_look(&self) -> Option<Tick> {
        self.collectors
            .iter()
            .filter(|(_, data)| data.active)
            .map(|(_, data)| data.seen)
            .reduce(Tick::older)
    }

    /// Collector `key` takes the entities stamped since it last looked, and
    /// remembers this look. Nothing for an inactive collector.
    pub(super) fn gather(&mut self, key: CollectorKey) {
        if !self.collectors.is_active(key) {
            return;
        }
        self.gather_rows(key);
        self.looked_now(key);
    }

    /// Collector `key` remembers a look now (at the tick this ends), and
    /// the stamps' floor follows the oldest look (found again only if this
    /// collector's was it: a frame of many collectors stays linear).
    pub(super) fn looked_now(&mut self, key: CollectorKey) {
        let seen = self.end_change_tick();
        if let Some(data) = self.collectors.get_mut(key) {
            let was = std::mem::replace(&mut data.seen, seen);
            if self.archetypes.clock().rests_on(was) {
                self.raise_stamp_floor();
            }
        }
    }

    /// Moves the stamps' floor (see `storage::Floor`) to the oldest last
    /// look of an active collector (`storage::Clock::raise_floor`): a
    /// stamp at or below it is old news to every collector. Called
    /// whenever a collector starts, stops, or was the oldest to look, so
    /// the floor is always the oldest look.
    pub(super) fn raise_stamp_floor(&mut self) {
        self.archetypes.clock().raise_floor(self.oldest_look());
    }

    /// Every collector gathers (see [`gather`](Context::gather)).
    pub(super) fn gather_all(&mut self) {
        let keys: SmallVec<[CollectorKey; 8]> = self.collectors.iter().map(|(key, _)| key).collect();
        for key in keys {
            self.gather(key);
        }
    }

    /// Collector `key` (active) takes the entities whose rows are stamped
    /// after its last look, in each of its groups watching updates: group
    /// by group, archetype by archetype, component by component, row by
    /// row.
    fn gather_rows(&mut self, key: CollectorKey) {
        let Context {
            archetypes,
            sparse,
            routes,
            collectors,
            retains,
            entities,
            ..
        } = self;
        let Some(data) = collectors.get(key) else {
            return;
        };
        let since = data.seen;
        let triggers: SmallVec<[(u32, Trigger); 2]> = data.triggers.clone();
        for (group, trigger) in triggers {
            if !trigger.takes().updated {
                continue;
            }
            let member = routes.membership().group(group);
            for &archetype in &member.archetypes {
                let found = archetypes.get(archetype);
                if found.is_empty() || !found.is_stamped() {
                    continue;
                }
                // A group that checks entities one by one: ask for each.
                let gate = member.is_gated().then(|| found.set().clone());
                let columns: SmallVec<[usize; 4]> = member
                    .matcher
                    .watched()
                    .filter_map(|id| found.column_index(id))
                    .collect();
                let Some(data) = collectors.get_mut(key) else {
                    return;
                };
                for col in columns {
                    match &gate {
                        None => archetypes.changed_since(archetype, col, since, |entity| data.collect(entity, retains)),
                        Some(set) => archetypes.changed_since(archetype, col, since, |entity| {
                            if member.admits(set, Holding::Slot(sparse, entity.index()), None) {
                                data.collect(entity, retains);
                            }
                        }),
                    }
                }
            }
            // Flag and sparse components: stamped by entity slot; each slot's
            // entity is a member or not by its archetype and its values.
            for id in member.matcher.watched() {
                if !sparse.watched().contains(id) {
                    continue;
                }
                let (Some(values), Some(data)) = (sparse.set(id), collectors.get_mut(key)) else {
                    continue;
                };
                values.changed_since(since, |slot| {
                    let Some(entity) = entities.live_at(slot) else {
                        return;
                    };
                    let Some(at) = entities.location(entity) else {
                        return;
                    };
                    let set = archetypes.get(at.archetype).set();
                    if member.admits(set, Holding::Slot(sparse, slot), None) {
                        data.collect(entity, retains);
                    }
                });
            }
        }
    }

    /// Before `entity` (a live row at `at`) leaves its row or may leave or
    /// join a group: each active collector watching a stamped column of the
    /// row in a group the entity is in, stamped after that collector last
    /// looked, takes the entity now; the row is then unchanged.
    #[inline(always)]
    pub(super) fn flush_stamps(&mut self, entity: Entity, at: Location) {
        // Stamps exist only while a collector watches: never when idle.
        if !self.routes.is_idle()
            && (self.archetypes.get(at.archetype).row_stamped(at.row) || self.sparse.slot_stamped(entity.index()))
        {
            self.flush_stamped(entity, at);
        }
    }

    #[inline(never)]
    fn flush_stamped(&mut self, entity: Entity, at: Location) {
        self.routes.sync(&self.archetypes);
        let columns: SmallVec<[usize; 4]> = self.archetypes.get(at.archetype).stamped_columns().collect();
        for col in columns {
            let stamp = self.archetypes.row_stamp(at, col);
            if !stamp.is_never() {
                let id = self.archetypes.get(at.archetype).component_id(col);
                self.hand_over(entity, at, (id, Some(col)), stamp);
                self.archetypes.clear_row_stamp(at, col);
            }
        }
        let slot = entity.index();
        let watched: SmallVec<[ComponentId; 4]> = self.sparse.watched().iter().collect();
        for id in watched {
            let stamp = self.sparse.set(id).map_or(Tick::NEVER, |set| set.stamp(slot));
            if !stamp.is_never() {
                self.hand_over(entity, at, (id, None), stamp);
                if let Some(set) = self.sparse.set_of_mut(id) {
                    set.clear_stamp(slot);
                }
            }
        }
    }

    /// `entity` (at `at`), whose component `id` (in column `column`, or
    /// kept out of archetypes) was stamped `stamp`, goes to each collector
    /// that watches it in a group the entity is in and last looked before.
    fn hand_over(&mut self, entity: Entity, at: Location, (id, column): (ComponentId, Option<usize>), stamp: Tick) {
        let p = self.parts();
        let ask = ConsumerView::asker(p.collectors, p.indices, p.groups, p.subscribers);
        let (route, skip) = replace_route(p.routes, p.archetypes, p.sparse, ask, (entity, at), (id, column));
        let (collectors, retains) = (p.collectors, p.retains);
        for (&key, group) in route.collectors.iter().zip(route.collector_groups.iter()) {
            if !skip.contains(group) && collectors.get(key).is_some_and(|data| stamp.is_newer_than(data.seen)) {
                collectors.collect(key, entity, retains);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::storage::Clock;

    #[derive(Clone, Debug, PartialEq)]
    struct Heat(u32);
    #[derive(Clone, Debug, PartialEq)]
    struct Glow(u32);
    crate::component!(Heat, sparse Glow);

    #[test]
    fn sparse_stamps_are_rebased_with_the_columns() {
        let mut game = Context::new();
        let entities = game.create_entities_with((0..10).map(|i| (Heat(i), Glow(i)))).unwrap();
        let glowing = game.add_collector(Matcher::all_of::<Glow>().updated());
        game.archetypes.jump_tick(Clock::REBASE_AT.before(2));
        for (frame, &e) in entities.iter().enumerate().take(6) {
            game.get_mut::<Glow>(e).unwrap().0 += 1;
            assert_eq!(game.collector(glowing).unwrap().entities(), [e], "frame {frame}");
            game.clear_collector(glowing).unwrap();
        }
        assert!(
            Clock::REBASE_AT
                .before(Clock::KEEP)
                .is_newer_than(game.archetypes.change_tick()),
            "the ticks were rebased"
        );
        assert!(game.collector(glowing).unwrap().is_empty(), "no old stamp looks new");
        game.check_invariants().unwrap();
    }

    #[test]
    fn ticks_are_rebased_without_losing_or_repeating_a_change() {
        let mut game = Context::new();
        let entities = game.create_entities_with((0..100).map(Heat)).unwrap();
        let lazy = game.add_collector(Matcher::all_of::<Heat>().updated());
        game.modify(entities[7], |h: &mut Heat| h.0 += 1).unwrap();
        // The lazy collector last looked long ago when the ticks pass the
        // rebase point; a busy one looks every frame.
        game.archetypes.jump_tick(Clock::REBASE_AT.before(3));
        let busy = game.add_collector(Matcher::all_of::<Heat>().updated());
        for frame in 0..8u32 {
            let e = entities[(frame * 11 % 100) as usize];
            *game.get_mut::<Heat>(e).unwrap() = Heat(frame);
            assert_eq!(game.collector(busy).unwrap().entities(), [e], "frame {frame}");
            game.clear_collector(busy).unwrap();
        }
        assert!(
            Clock::REBASE_AT
                .before(Clock::KEEP)
                .is_newer_than(game.archetypes.change_tick()),
            "the ticks were rebased"
        );
        let mut lazy_seen = game.collector(lazy).unwrap().entities().to_vec();
        lazy_seen.sort();
        let mut expected: Vec<Entity> = (0..8u32).map(|f| entities[(f * 11 % 100) as usize]).collect();
        expected.push(entities[7]);
        expected.sort();
        expected.dedup();
        assert_eq!(lazy_seen, expected);
        game.check_invariants().unwrap();
    }
}
