//! `Context::check_invariants`: the walker the tests run after every step.

use std::collections::HashMap;

use super::Context;
use crate::aerc::AercMode;
use crate::entity::Entity;
use crate::storage::Tick;

impl Context {
    /// Walks the storage and the entity records and reports the first broken
    /// invariant: every chunk but an archetype's last is full; columns match
    /// component sets and are aligned; cached edges lead where they should;
    /// every live entity's record points at a row holding that entity, and
    /// every row belongs to a live entity; every flag or sparse value
    /// belongs to a live entity; creation numbers are distinct;
    /// every group lists exactly the archetypes its matcher accepts, and a
    /// group that keeps its entity list holds exactly its members; unique
    /// components have the recorded holder; every entity index holds only
    /// members of its group, each retained; retain counts cover every holder.
    ///
    /// Indices are judged by what they were told, not by the values as they
    /// are now: a write through [`get_mut`](Context::get_mut) (which does
    /// not re-key indices) that changes a member's keys is legal and is not
    /// reported.
    /// Tests call it after each step; it costs a full scan.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.archetypes.check()?;
        self.entities.check()?;
        let mut rows = 0;
        for archetype in self.archetypes.iter() {
            rows += archetype.len();
            for (row, entity) in archetype.entities().enumerate() {
                match self.entities.location(entity) {
                    Some(at) if at.archetype == archetype.id() && at.row as usize == row => {}
                    Some(at) => {
                        return Err(format!(
                            "entity {entity} is at row {row} of archetype {:?} but its record says {at:?}",
                            archetype.id(),
                        ));
                    }
                    None => {
                        return Err(format!(
                            "row {row} of archetype {:?} holds dead entity {entity}",
                            archetype.id()
                        ));
                    }
                }
            }
        }
        if rows != self.entities.len() {
            return Err(format!("{rows} rows for {} live entities", self.entities.len()));
        }
        for (entity, disabled) in self.entities.held() {
            if disabled && !self.retains.is_retained(entity.index()) {
                return Err(format!("destroyed entity {entity} keeps its slot with no retain"));
            }
        }
        self.routes.check(&self.archetypes)?;
        self.check_group_lists()?;
        self.sparse.check(&|slot| self.entities.live_at(slot).is_some())?;
        self.sparse.check_stamps(self.archetypes.clock())?;
        self.check_looks()?;
        let live: Vec<_> = self
            .entities
            .alive()
            .filter_map(|e| {
                let mut set = self.component_set(e)?.clone();
                self.sparse.ids_of(e.index()).for_each(|id| {
                    set.insert(id);
                });
                Some((e, set))
            })
            .collect();
        self.uniques.check(live.iter().map(|(e, set)| (*e, set)))?;
        self.check_retains()?;
        Ok(())
    }

    /// The collectors' side of the change stamps (invariants 2 and 3 of
    /// `storage/stamps/`): every last look is a tick ended (before the
    /// current one), and the floor is the oldest last look of an active
    /// collector (so no stamp a collector has yet to gather is at or
    /// below it).
    fn check_looks(&self) -> Result<(), String> {
        let clock = self.archetypes.clock();
        let (now, floor) = (clock.now(), clock.floor().get());
        let mut oldest = None;
        for (_, data) in self.collectors.iter() {
            if !now.is_newer_than(data.seen) {
                return Err(format!(
                    "a collector last looked at {}, not before the current tick {now}",
                    data.seen
                ));
            }
            if data.active {
                oldest = Some(oldest.map_or(data.seen, |oldest: Tick| oldest.older(data.seen)));
            }
        }
        match oldest {
            Some(oldest) if oldest != floor => Err(format!(
                "the stamps' floor is {floor}, but the oldest look of an active collector is {oldest}"
            )),
            _ => Ok(()),
        }
    }

    /// AERC: safe-mode owners against counts, every collected or indexed
    /// entity retained at least once per holder, and every entity index
    /// consistent in itself and holding members of its group only. (Not that
    /// it holds every member with keys: a write through `get_mut` say, which
    /// does not re-key indices, may give a member keys the index hears of
    /// only at its next event, and that is allowed.)
    fn check_retains(&self) -> Result<(), String> {
        if self.retains.mode() == AercMode::Safe {
            for (entity, _) in self.entities.held() {
                let (owners, count) = (self.retains.owners(entity.index()), self.retains.user(entity.index()));
                if owners.len() != count as usize {
                    return Err(format!(
                        "entity {entity} has {count} user retains but {} recorded owners",
                        owners.len()
                    ));
                }
            }
        }
        // A free slot keeps no retain (its next entity would inherit it).
        let held: std::collections::HashSet<u32> = self.entities.held().map(|(e, _)| e.index()).collect();
        if let Some(index) = (0..self.entities.slot_capacity() as u32).find(|index| {
            !held.contains(index) && (self.retains.is_retained(*index) || !self.retains.owners(*index).is_empty())
        }) {
            return Err(format!("free slot {index} keeps a retain"));
        }
        // Each collector holding an entity accounts for one internal retain
        // (reactive systems, outside the context, may hold more).
        let mut held: HashMap<Entity, u32> = HashMap::new();
        for collector in self.collectors_as_they_are() {
            for entity in collector.iter() {
                if !self.entities.holds_slot(entity) {
                    return Err(format!("{} holds freed entity {entity}", collector.id()));
                }
                if !collector.contains(entity) {
                    return Err(format!("{} lists {entity} but does not find it", collector.id()));
                }
                *held.entry(entity).or_default() += 1;
            }
        }
        for (_, entry) in self.indices.iter() {
            let index = &*entry.store;
            let filed = index.check().map_err(|broken| format!("{index}: {broken}"))?;
            if !index.is_active() && !filed.is_empty() {
                return Err(format!("{index} holds {} entities", filed.len()));
            }
            let group = self.group_view(self.groups.id(entry.group));
            for &entity in &filed {
                if !group.contains(entity) {
                    return Err(format!("{index} holds {entity}, which is not in its group"));
                }
                *held.entry(entity).or_default() += 1;
            }
        }
        for (entity, count) in held {
            let internal = self.retains.internal(entity.index());
            if internal < count {
                return Err(format!(
                    "{count} collectors and indices hold {entity}, which has {internal} internal retains"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::storage::Tick;

    #[derive(Clone, Debug, PartialEq)]
    struct Heat(u32);
    crate::component!(Heat);

    /// A context of 100 `Heat`s, two collectors watching them (the second
    /// added later: its last look is newer), and one write.
    fn watched() -> (Context, Vec<Entity>, CollectorId, CollectorId) {
        let mut game = Context::new();
        let entities = game.create_entities_with((0..100).map(Heat)).unwrap();
        let first = game.add_collector(Matcher::all_of::<Heat>().updated());
        game.modify(entities[7], |h: &mut Heat| h.0 += 1).unwrap();
        let second = game.add_collector(Matcher::all_of::<Heat>().updated());
        game.check_invariants().unwrap();
        (game, entities, first, second)
    }

    #[test]
    fn check_invariants_finds_a_row_stamped_after_the_current_tick() {
        let (mut game, entities, ..) = watched();
        let at = game.entities.location(entities[9]).unwrap();
        let col = game
            .archetypes
            .get(at.archetype)
            .column_index(Heat::component_id())
            .unwrap();
        let later = Tick::new(game.archetypes.change_tick().get() + 3);
        game.archetypes.plant_stamp(at, col, later);
        let broken = game.check_invariants().unwrap_err();
        assert!(broken.contains("after the current tick"), "{broken}");
    }

    #[test]
    fn check_invariants_finds_a_floor_above_an_active_collectors_look() {
        let (game, _, first, second) = watched();
        let newest = game.collectors.get(second.key).unwrap().seen;
        assert!(newest.is_newer_than(game.collectors.get(first.key).unwrap().seen));
        // The floor moved to the second collector's look, past the first's:
        // the first's changes would read as old news.
        game.archetypes.clock().raise_floor(Some(newest));
        let broken = game.check_invariants().unwrap_err();
        assert!(broken.contains("oldest look of an active collector"), "{broken}");
    }
}
