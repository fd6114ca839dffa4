//! `StorageStats`: how much memory a context's storage holds: its
//! archetypes' chunks, the sparse sets of flag and sparse components, and
//! (counted by the context) the values its component pools keep.

use super::archetypes::Archetypes;
use super::sparse::SparseSets;

/// A snapshot of a context's storage, from
/// [`Context::storage_stats`](crate::Context::storage_stats).
///
/// Read its fields; only the context makes one (`#[non_exhaustive]`: more
/// figures may be added without a breaking change).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct StorageStats {
    /// Distinct component sets seen so far, including the empty archetype a
    /// refused operation may leave behind (see [`Error`](crate::Error)).
    pub archetypes: usize,
    /// Chunks holding at least one entity.
    pub chunks: usize,
    /// Empty chunks kept for reuse (freed by `shrink_to_fit`).
    pub spare_chunks: usize,
    /// Bytes allocated for chunks, in use and spare.
    pub bytes: usize,
    /// Values of flag and sparse components, kept out of archetypes.
    pub sparse_values: usize,
    /// Bytes allocated for the sparse sets of flag and sparse components
    /// (their slot indices and values).
    pub sparse_bytes: usize,
    /// Bytes of change stamps: 4 per row (in use and spare) of each column,
    /// and per entity slot of each flag or sparse set, that a collector
    /// watches for changes, and 16 more per block of 64 (4 more per 64
    /// blocks); nothing while no
    /// one watches.
    pub stamp_bytes: usize,
    /// Values kept in the component pools of `pooled` components, for
    /// reuse (dropped by `shrink_to_fit`; see [`PoolMut`](crate::PoolMut)).
    pub pooled_values: usize,
}

impl StorageStats {
    pub(crate) fn of(archetypes: &Archetypes, sparse: &SparseSets) -> Self {
        archetypes.iter().fold(
            StorageStats {
                archetypes: archetypes.len(),
                sparse_values: sparse.len(),
                sparse_bytes: sparse.bytes(),
                stamp_bytes: sparse.stamp_bytes(),
                ..StorageStats::default()
            },
            |mut stats, archetype| {
                stats.chunks += archetype.chunk_count();
                stats.spare_chunks += archetype.spare_chunk_count();
                stats.bytes += (archetype.chunk_count() + archetype.spare_chunk_count()) * archetype.chunk_bytes();
                stats.stamp_bytes += archetype.stamp_bytes();
                stats
            },
        )
    }
}
