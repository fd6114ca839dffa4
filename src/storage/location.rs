//! Where a row is: `ArchetypeId` and `Location`.

/// The index of an archetype in its context, in creation order (archetype 0
/// is the empty one, where `create_entity` puts new entities).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ArchetypeId(pub(crate) u32);

impl ArchetypeId {
    /// The position of this archetype in creation order.
    #[inline(always)]
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where an entity's row is: its archetype, and its row there, counted
/// across the archetype's chunks (chunks hold a power of two of rows, so the
/// chunk is `row >> shift` and the row within it `row & mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) archetype: ArchetypeId,
    pub(crate) row: u32,
}
