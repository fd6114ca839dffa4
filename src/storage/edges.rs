//! `Edges`: the archetype graph's cached transitions, (A, +c) -> B and (A, -c) -> B.

use super::archetype::ArchetypeId;
use crate::component::ComponentId;

const UNKNOWN: u32 = u32::MAX;

/// The transitions out of one archetype that have been taken so far, indexed
/// by component id, so a structural change costs one array read after its
/// first time (no set hashing, no lookup).
#[derive(Default)]
pub(crate) struct Edges {
    add: Vec<u32>,
    remove: Vec<u32>,
}

impl Edges {
    /// The archetype reached by adding `id`, if known.
    #[inline]
    pub(super) fn add(&self, id: ComponentId) -> Option<ArchetypeId> {
        lookup(&self.add, id)
    }

    /// The archetype reached by removing `id`, if known.
    #[inline]
    pub(super) fn remove(&self, id: ComponentId) -> Option<ArchetypeId> {
        lookup(&self.remove, id)
    }

    pub(super) fn set_add(&mut self, id: ComponentId, to: ArchetypeId) {
        store(&mut self.add, id, to);
    }

    pub(super) fn set_remove(&mut self, id: ComponentId, to: ArchetypeId) {
        store(&mut self.remove, id, to);
    }

    /// Every cached transition: (component, `true` for an add edge, target).
    pub(super) fn iter(&self) -> impl Iterator<Item = (ComponentId, bool, ArchetypeId)> + '_ {
        let adds = known(&self.add).map(|(id, to)| (id, true, to));
        adds.chain(known(&self.remove).map(|(id, to)| (id, false, to)))
    }
}

fn known(table: &[u32]) -> impl Iterator<Item = (ComponentId, ArchetypeId)> + '_ {
    table
        .iter()
        .enumerate()
        .filter(|(_, to)| **to != UNKNOWN)
        .map(|(i, &to)| (ComponentId::from_index(i), ArchetypeId(to)))
}

#[inline]
fn lookup(table: &[u32], id: ComponentId) -> Option<ArchetypeId> {
    match table.get(id.index()) {
        Some(&to) if to != UNKNOWN => Some(ArchetypeId(to)),
        _ => None,
    }
}

fn store(table: &mut Vec<u32>, id: ComponentId, to: ArchetypeId) {
    if table.len() <= id.index() {
        table.resize(id.index() + 1, UNKNOWN);
    }
    table[id.index()] = to.0;
}
