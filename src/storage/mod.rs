//! Archetype chunk storage. This module holds all of reactecs' `unsafe` code.
//!
//! Entities with the same component set live in one [`Archetype`]; an
//! archetype stores its rows in chunks of at most [`CHUNK_BYTES`] (16 KiB):
//! an entity array followed by one array per component (structure of
//! arrays), each aligned for its type. A chunk holds a power of two of rows,
//! so a row number (counted across the archetype's chunks) splits into chunk
//! and row within it with a shift and a mask. Zero-sized components take no
//! chunk space; a row larger than a chunk gets a chunk of its own size.
//! Removing a row moves the archetype's last row into the hole, so every
//! chunk but the last is full; emptied chunks are kept for reuse.
//!
//! The files, by job:
//! - `archetype.rs`: one archetype's chunks, rows and typed access;
//! - `archetypes.rs`: every archetype of a context, by component set and by
//!   component (the index queries start from);
//! - `edges.rs`: the archetype graph, each transition (A, +c) -> B and
//!   (A, -c) -> B cached on A's edges with a plan of where each column's
//!   value moves;
//! - `spawn.rs`: bundle plans and `RowWriter`, which write new rows;
//! - `spawn_batch.rs`: many rows of one bundle type at once, the bundle's
//!   types checked once per batch;
//! - `moves.rs`: moving rows along transitions and out of storage;
//! - `columns.rs`: the columns queries take, chunk by chunk, as a plan
//!   checked once per query says;
//! - `lend.rs`: the archetypes lent to a query that writes, whole or split
//!   by component (one side writes its plan's columns row by row while the
//!   other reads other components of any row);
//! - `sparse.rs`: the components kept out of archetypes (`flag` and
//!   `sparse` kinds), a sparse set per type keyed by entity slot;
//! - `sparse_access.rs`: those components as a query fetches them, looked
//!   up row by row by entity slot;
//! - `stamps/`: change stamps of the columns some consumer watches: per
//!   row the `Tick` of its last mutable access, per block of 64 rows a
//!   summary, the `Clock` (current tick, floor, rebase) and the
//!   changed-rows scan, one file each, their invariants in the module
//!   docs; every `&mut` storage hands out (`ArchetypeMut`, a writable
//!   `ColumnAccess`, `RowAccess`) stamps its row, or gives a `Stamp` to mark
//!   once the write stands;
//! - `component_info.rs`: what storage knows of each declared component
//!   type (`ComponentInfo`: name, layout, drop glue, storage kind), the
//!   registry of them all, and `ComponentRef`, a view of one value;
//! - `chunk.rs`, `type_info.rs`, `location.rs`, `bitset.rs`, `stats.rs`: the
//!   raw chunk memory, type-erased values, row addresses, component sets and
//!   memory statistics.
//!
//! Storage knows entity handles (`entity.rs`) and component ids (`id.rs`),
//! and nothing above them: it is generic over the types it stores, and
//! holds what it knows of each declared component type itself
//! (`component_info.rs`).
//!
//! # Why the safe API cannot be misused
//!
//! Everything outside this module goes through safe functions, so a bug there
//! can at worst give a wrong answer, never undefined behaviour:
//!
//! - A column's element type is fixed by a `TypeInfo`, which only
//!   `TypeInfo::of::<T>()` can build, so its `TypeId`, layout and drop glue
//!   agree. Every typed access (`get`, `get_mut`, `insert`, `take`, `replace`,
//!   `column_slice`, `RowWriter::put`, `ComponentRef::get`) compares the
//!   column's `TypeId` with `T` before casting (`RowWriter::put` compares with
//!   the type its bundle plan recorded from the column).
//! - Row locations are checked (`Archetype::contains_row`) before they are read.
//! - A query's column borrows cannot alias: `ColumnPlan::new` refuses a plan
//!   that writes a component and names it again, each `ColumnAccess` (one
//!   per borrow of an archetype) takes each planned column once, and only a
//!   `ColumnAccess` made from an `ArchetypeMut` or by the walks of an
//!   `ArchetypesLend` (lent from `&mut Archetypes` for one plan, checked as
//!   each walk starts; each archetype handed out once per walk) writes; the
//!   `&Archetypes` a lend shows (`ArchetypesLend::archetypes`) is borrowed
//!   from the lend, so the borrow checker keeps it apart from the accesses
//!   of its walks. A split lend's read side (`ReadLend`, shared between
//!   threads) reads values only through its own plan (`access`, `row`),
//!   whose components `Archetypes::split` checked are none the write side
//!   writes, and shows nothing else but archetypes' component sets.
//! - A query's flag and sparse values cannot alias either: `ColumnAccess`
//!   takes them in plan order too; a write view is made only from sets lent
//!   from `&mut SparseSets` for one plan (every `ColumnAccess` made with that
//!   lend must follow it, checked when made, so no view of the lend reads
//!   what another writes); and it hands out the entry of each row's entity,
//!   once: `spawn` refuses a slot a live row holds, so the rows of one
//!   `Archetypes` have distinct slots, and each archetype is lent once.
//! - A placed plan's column offsets are trusted without a lookup: `place`
//!   checked each column's type against the plan's, archetypes never change
//!   their layout, a plan is walked only in the `Archetypes` it was placed in
//!   (checked by stamp, once per walk), its archetypes are placed in strictly
//!   increasing order (so a walk hands each out once), and every take still
//!   compares `T` with the type the plan recorded.
//! - No `&mut Archetype` leaves this module: exclusive access goes out as an
//!   `ArchetypeMut`, which writes only through its own methods, so code
//!   outside cannot swap or overwrite an archetype and leave the edge and
//!   bundle plans (which record each archetype's layout by its place in the
//!   list) describing another layout.
//! - A move between archetypes only follows edges built here, from
//!   `set.with(c)` / `set.without(c)`, so the source and target columns differ
//!   by exactly that one component.
//! - Change stamps are atomics (so a stamp can be written through a shared
//!   borrow of the archetype or set), marked with relaxed loads and stores
//!   (a column's as a writable `ColumnAccess` takes the column, before it
//!   hands out any row, or for the rows it handed out; a sparse set's, by
//!   entity slot, where a query's chunks are handed out, one at a time
//!   under the parallel iterator's lock, never on the worker threads; or
//!   for one entity under an exclusive borrow). Scans read them as `u32`s
//!   only under `&mut`, or with atomic loads.
//! - No code outside this module runs while a row is half-written: moves copy
//!   bits and write one owned value; `spawn`'s `RowWriter` removes its row and
//!   then drops what it wrote if it is dropped early (including by a panic, and
//!   even if one of those drops panics); a panicking component `Drop` during
//!   `despawn` still leaves the row removed.
//!
//! Every `unsafe fn` here lists its contract under `# Safety`, and every
//! `unsafe` block says which part of that contract it meets. The unit tests of
//! this module run under Miri (`cargo +nightly miri test --lib storage`).

mod archetype;
mod archetypes;
mod bitset;
mod bundle_plan;
mod chunk;
mod column_plan;
mod columns;
mod component_info;
mod edges;
mod lend;
mod location;
mod moves;
mod placed_row;
mod sparse;
mod sparse_access;
mod spawn;
mod spawn_batch;
mod stamps;
mod stats;
mod transition;
mod type_info;

pub(crate) use archetype::Archetype;
pub(crate) use archetypes::{Archetypes, Visit};
pub use bitset::ComponentSet;
pub(crate) use bundle_plan::BundleId;
pub use chunk::CHUNK_BYTES;
pub(crate) use column_plan::{ColumnPlan, PlannedColumns};
pub use columns::{
    ChunkLens, ColumnAccess, ColumnChunks, ColumnChunksMut, EntityChunks, RowAccess, SparseChunks, SparseChunksMut,
};
pub use component_info::{ComponentInfo, ComponentRef, DebugFn, RegisteredComponent, Registration, StorageKind};
pub(crate) use component_info::{IdCell, TypedId, registry};
pub(crate) use edges::TransitionId;
pub(crate) use lend::{ArchetypesLend, ReadLend};
pub(crate) use location::{ArchetypeId, Location};
pub(crate) use moves::Moved;
pub use placed_row::PlacedRow;
pub(crate) use placed_row::{PreparedRows, RowSets, SharedRows};
pub(crate) use sparse::{SparseSet, SparseSets};
pub(crate) use sparse_access::SparseLend;
pub use sparse_access::{SparseChunk, SparseChunkMut, SparseRows, SparseRowsMut};
pub use spawn::RowWriter;
pub(crate) use spawn_batch::RowValues;
/// The clock (reached through `Archetypes::clock` outside storage), named
/// by tests for its rules' constants.
#[cfg(test)]
pub(crate) use stamps::Clock;
pub(crate) use stamps::{Stamp, Tick};
pub use stats::StorageStats;
pub(crate) use type_info::TypeIdHasher;

#[cfg(test)]
mod tests;
