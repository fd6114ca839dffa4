//! Every workload's parameters, in one place: each column reads them from
//! here. [`Params::suite`] is what the table reports (ecs_bench_suite's
//! sizes for its five workloads); [`Params::small`] keeps every check exact
//! at sizes a test runs in moments.

/// The sizes of every workload.
#[derive(Clone, Debug)]
pub struct Params {
    /// simple_insert: entities created (each with Transform, Position,
    /// Rotation, Velocity) into a fresh world.
    pub insert_entities: usize,
    /// simple_iter: entities whose Position advances by their Velocity.
    pub iter_entities: usize,
    /// fragmented_iter: entities per kind (26 kinds, A..Z, each with Data).
    pub fragment_per_kind: usize,
    /// fragmented_iter: runs after which Data is set back to 1.0 (outside
    /// the timed run), so that doubling never leaves f32's exact range.
    pub fragment_reset_every: usize,
    /// heavy_compute: entities, each inverting its matrix `heavy_inversions` times.
    pub heavy_entities: usize,
    /// heavy_compute: matrix inversions per entity per run.
    pub heavy_inversions: usize,
    /// add_remove: entities that get B then lose it, per run.
    pub add_remove_entities: usize,
    /// reactive_replace: entities, all of which change per frame.
    pub replace_entities: usize,
    /// reactive_replace_sparse: entities.
    pub sparse_entities: usize,
    /// reactive_replace_sparse: entities changed per frame (by random access).
    pub sparse_changed: usize,
    /// reactive_add_remove: entities; the tag goes on every other one.
    pub tag_entities: usize,
    /// index_lookup: entities with a unique random key.
    pub index_entities: usize,
    /// index_lookup: lookups of random keys per run.
    pub index_lookups: usize,
    /// boids: birds in the example's simulation (its world sized for about
    /// four per cell).
    pub boids: usize,
    /// memory_1m: entities created with two 12-byte components.
    pub memory_entities: usize,
}

impl Params {
    /// The sizes the table reports.
    pub fn suite() -> Self {
        Params {
            insert_entities: 10_000,
            iter_entities: 10_000,
            fragment_per_kind: 20,
            fragment_reset_every: 64,
            heavy_entities: 1_000,
            heavy_inversions: 100,
            add_remove_entities: 10_000,
            replace_entities: 10_000,
            sparse_entities: 100_000,
            sparse_changed: 1_000,
            tag_entities: 10_000,
            index_entities: 100_000,
            index_lookups: 100_000,
            boids: 100_000,
            memory_entities: 1_000_000,
        }
    }

    /// Small sizes for the test: every check stays exact.
    pub fn small() -> Self {
        Params {
            insert_entities: 300,
            iter_entities: 300,
            fragment_per_kind: 3,
            fragment_reset_every: 5,
            heavy_entities: 40,
            heavy_inversions: 10,
            add_remove_entities: 300,
            replace_entities: 300,
            sparse_entities: 2_000,
            sparse_changed: 37,
            tag_entities: 301,
            index_entities: 2_000,
            index_lookups: 3_000,
            boids: 2_000,
            memory_entities: 5_000,
        }
    }
}
