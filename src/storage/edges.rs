//! The edges of the archetype graph: each archetype's cached edges
//! (A, +c) -> B and (A, -c) -> B, as the ids of the transitions they lead
//! to (the transitions themselves are in `transition.rs`, the walk that
//! finds and makes them in `archetypes.rs`).

use crate::id::ComponentId;

const UNKNOWN: u32 = u32::MAX;

/// The transitions out of one archetype that have been taken so far, indexed
/// by component id, so a structural change costs one array read after its
/// first time (no set hashing, no lookup).
#[derive(Default)]
pub(crate) struct Edges {
    add: Vec<u32>,
    remove: Vec<u32>,
}

/// Identifies a `Transition` of one `Archetypes`, in creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TransitionId(pub(super) u32);

impl TransitionId {
    /// The position of this transition in creation order.
    #[inline]
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

impl Edges {
    /// The transition for adding `id`, if known.
    #[inline]
    pub(super) fn add(&self, id: ComponentId) -> Option<TransitionId> {
        lookup(&self.add, id)
    }

    /// The transition for removing `id`, if known.
    #[inline]
    pub(super) fn remove(&self, id: ComponentId) -> Option<TransitionId> {
        lookup(&self.remove, id)
    }

    pub(super) fn set_add(&mut self, id: ComponentId, to: TransitionId) {
        store(&mut self.add, id, to);
    }

    pub(super) fn set_remove(&mut self, id: ComponentId, to: TransitionId) {
        store(&mut self.remove, id, to);
    }
}

#[inline]
fn lookup(table: &[u32], id: ComponentId) -> Option<TransitionId> {
    match table.get(id.index()) {
        Some(&to) if to != UNKNOWN => Some(TransitionId(to)),
        _ => None,
    }
}

fn store(table: &mut Vec<u32>, id: ComponentId, to: TransitionId) {
    if table.len() <= id.index() {
        table.resize(id.index() + 1, UNKNOWN);
    }
    table[id.index()] = to.0;
}
