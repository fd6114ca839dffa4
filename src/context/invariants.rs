//! `Context::check_invariants`: the walker the tests run after every step.

use std::collections::HashMap;

use super::Context;
use crate::aerc::AercMode;
use crate::entity::Entity;

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
