//! Archetype chunk storage. This module holds all of reactecs' `unsafe` code.
//!
//! Entities with the same component set live in one [`Archetype`]; an
//! archetype stores its rows in chunks of [`CHUNK_BYTES`] (16 KiB): an entity
//! array followed by one array per component (structure of arrays), each
//! aligned for its type. Zero-sized components take no chunk space; a row
//! larger than a chunk gets a chunk of its own size. Removing a row moves the
//! archetype's last row into the hole, so every chunk but the last is full;
//! emptied chunks are kept for reuse. The archetype graph caches each
//! transition (A, +c) -> B and (A, -c) -> B on A's [`Edges`](edges::Edges),
//! with a plan of where each column's value moves.
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
//! - Row locations are checked (`Archetype::contains`) before they are read.
//! - A move between archetypes only follows edges built here, from
//!   `set.with(c)` / `set.without(c)`, so the source and target columns differ
//!   by exactly that one component.
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
mod chunk;
mod columns;
mod component_ref;
mod edges;
mod stats;
mod type_info;

pub(crate) use archetype::{Archetype, ArchetypeId, Location};
pub use archetypes::RowWriter;
pub(crate) use archetypes::{Archetypes, BundleId, Moved};
pub use bitset::ComponentSet;
pub use chunk::CHUNK_BYTES;
pub use columns::{ChunkLens, ColumnAccess, ColumnChunks, ColumnChunksMut, EntityChunks};
pub use component_ref::ComponentRef;
pub(crate) use edges::TransitionId;
pub use stats::StorageStats;
pub(crate) use type_info::TypeInfo;

#[cfg(test)]
mod tests;
