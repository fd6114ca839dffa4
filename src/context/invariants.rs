//! `Context::check_invariants`: the walker the tests run after every step.

use std::collections::HashSet;

use super::Context;
use crate::aerc::AercMode;

impl Context {
    /// Walks the storage and the entity meta and reports the first broken
    /// invariant: every chunk but an archetype's last is full; columns match
    /// component sets and are aligned; cached edges lead where they should;
    /// every live entity's meta points at a row holding that entity, and every
    /// row belongs to a live entity; creation indices are distinct; every group
    /// lists exactly the archetypes its matcher accepts, with the right count;
    /// unique components have the recorded holder; every entity index holds
    /// only members of its group, each retained. Tests call
    /// it after each step; it costs a full scan.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.archetypes.check()?;
        let mut rows = 0;
        for archetype in self.archetypes.iter() {
            rows += archetype.len();
            for entity in archetype.entities() {
                let Some(meta) = self.entities.get(entity) else {
                    return Err(format!(
                        "a row of archetype {:?} holds dead entity {entity}",
                        archetype.id()
                    ));
                };
                if meta.location.archetype != archetype.id() {
                    return Err(format!(
                        "entity {entity} is in archetype {:?} but its meta says {:?}",
                        archetype.id(),
                        meta.location.archetype
                    ));
                }
            }
        }
        if rows != self.entities.len() {
            return Err(format!("{rows} rows for {} live entities", self.entities.len()));
        }
        let mut indices = HashSet::new();
        for (entity, meta) in self.entities.iter_slots() {
            if !meta.enabled {
                if !meta.is_retained() {
                    return Err(format!("destroyed entity {entity} keeps its slot with no retain"));
                }
                continue;
            }
            let archetype = self.archetypes.get(meta.location.archetype);
            if archetype.entity_at(meta.location) != Some(entity) {
                return Err(format!(
                    "entity {entity}'s meta points at {:?}, which holds {:?}",
                    meta.location,
                    archetype.entity_at(meta.location)
                ));
            }
            if meta.creation_index >= self.next_creation_index || !indices.insert(meta.creation_index) {
                return Err(format!(
                    "entity {entity} has creation index {} (duplicate or out of range)",
                    meta.creation_index
                ));
            }
        }
        self.groups.check(&self.archetypes)?;
        self.uniques.check(self)?;
        self.check_retains()?;
        Ok(())
    }

    /// AERC: the disabled count, safe-mode owners against counts, and every
    /// collected entity retained beyond its recorded (user) owners.
    fn check_retains(&self) -> Result<(), String> {
        let disabled = self.entities.iter_slots().filter(|(_, meta)| !meta.enabled).count();
        if disabled != self.entities.disabled_len() {
            return Err(format!(
                "{disabled} disabled slots, counted {}",
                self.entities.disabled_len()
            ));
        }
        let safe = self.aerc.mode() == AercMode::Safe;
        if safe {
            for (entity, meta) in self.entities.iter_slots() {
                let owners = self.aerc.owners(entity.index());
                if owners.len() != meta.user_retains as usize {
                    return Err(format!(
                        "entity {entity} has {} user retains but {} recorded owners",
                        meta.user_retains,
                        owners.len()
                    ));
                }
            }
        }
        // Each collector holding an entity accounts for one internal retain
        // (reactive systems, outside the context, may hold more).
        let mut held: std::collections::HashMap<crate::Entity, u32> = std::collections::HashMap::new();
        for collector in self.collectors() {
            for entity in collector.iter() {
                if self.entities.slot(entity).is_none() {
                    return Err(format!("{} holds freed entity {entity}", collector.id()));
                }
                if !collector.contains(entity) {
                    return Err(format!("{} lists {entity} but does not find it", collector.id()));
                }
                *held.entry(entity).or_default() += 1;
            }
        }
        // Each active entity index holds exactly its group's members that
        // have keys, each with one internal retain.
        for entry in self.indices.iter() {
            let index = &*entry.store;
            let filed = index.check().map_err(|broken| format!("{index}: {broken}"))?;
            if !index.is_active() && !filed.is_empty() {
                return Err(format!("{index} holds {} entities", filed.len()));
            }
            let group = self.groups.get(entry.group);
            for &entity in &filed {
                if !group.matcher.matches(self, entity) {
                    return Err(format!("{index} holds {entity}, which is not in its group"));
                }
                *held.entry(entity).or_default() += 1;
            }
            if index.is_active() {
                let member = crate::Group::new(self, self.groups.id(entry.group), group);
                for entity in member.iter().filter(|&e| !index.holds(e)) {
                    let value = self
                        .entity(entity)
                        .ok()
                        .and_then(|e| e.component_ref(index.component()));
                    // User code: a key function that panics (on a value
                    // written silently, say) cannot tell, so it does not count.
                    let has_keys = |value| {
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| index.has_keys(value)))
                            .unwrap_or(false)
                    };
                    if value.is_some_and(has_keys) {
                        return Err(format!("{index} misses {entity}, a member of its group with keys"));
                    }
                }
            }
        }
        for (entity, count) in held {
            let internal = self.entities.slot(entity).map_or(0, |meta| meta.internal_retains);
            if internal < count {
                return Err(format!(
                    "{count} collectors and indices hold {entity}, which has {internal} internal retains"
                ));
            }
        }
        Ok(())
    }
}
