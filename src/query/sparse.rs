//! The fetches of flag and sparse components: `&T`, `&mut T`, `Option<&T>`
//! and `Option<&mut T>` become `SparseRef`, `SparseMut`, `SparseOpt` and
//! `SparseOptMut`, whose chunks are a chunk's entities beside a view of the
//! component's sparse set ([`SparseChunk`], [`SparseChunkMut`]), each row's
//! value looked up by its entity's slot.
//!
//! A query that requires such a component (`&T`, `&mut T`) visits only the
//! entities that have it: its plan adds the per-entity check, so every row
//! it hands out has a value.

use std::marker::PhantomData;

use crate::component::Component;
use crate::query_param::{Access, FetchKind, QueryParam, sealed};
use crate::storage::{
    ColumnAccess, PlacedRow, RowAccess, SparseChunk, SparseChunkMut, SparseChunks, SparseChunksMut, SparseRows,
    SparseRowsMut,
};

/// The fetches of flag and sparse components: values looked up row by row.
#[doc(hidden)]
pub struct InSparseSets;

impl<T: Component> FetchKind<T> for InSparseSets {
    type Ref = SparseRef<T>;
    type Mut = SparseMut<T>;
    type Opt = SparseOpt<T>;
    type OptMut = SparseOptMut<T>;
}

/// `&T` of a flag or sparse component.
#[doc(hidden)]
pub struct SparseRef<T>(PhantomData<fn() -> T>);

/// `&mut T` of a flag or sparse component.
#[doc(hidden)]
pub struct SparseMut<T>(PhantomData<fn() -> T>);

/// `Option<&T>` of a flag or sparse component.
#[doc(hidden)]
pub struct SparseOpt<T>(PhantomData<fn() -> T>);

/// `Option<&mut T>` of a flag or sparse component.
#[doc(hidden)]
pub struct SparseOptMut<T>(PhantomData<fn() -> T>);

/// The rows of a required component's chunk: each row's value, which every
/// row has (the query's per-entity check admitted only entities with one).
#[doc(hidden)]
pub struct Present<I>(I);

impl<V, I: Iterator<Item = Option<V>>> Iterator for Present<I> {
    type Item = V;

    #[inline]
    fn next(&mut self) -> Option<V> {
        let value = self.0.next()?;
        Some(value.expect(
            "a sparse chunk holds only entities with the required component: the query splits chunks at the others",
        ))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

/// The fetch of a flag or sparse component: `$chunk` chunks from `$state`
/// (taken by `ColumnAccess::$take`), whose rows `$rows` makes.
macro_rules! sparse_fetch {
    (
        $param:ident, $item:ty, $chunk:ident, $state:ident, $rows:ty, $take:ident, $write:literal, $required:literal,
        rows: |$c:ident| $make_rows:expr,
        row: |$columns:ident, $row:ident| $fetch_row:expr,
        placed: |$placed:ident| $placed_row:expr $(,)?
    ) => {
        impl<T: Component> sealed::Sealed for $param<T> {}

        impl<T: Component> QueryParam for $param<T> {
            type Item<'a> = $item;
            type Chunk<'a> = $chunk<'a, T>;
            type Rows<'a> = $rows;
            type State<'a> = $state<'a, T>;
            type Key = Self;

            fn access(access: &mut Access) {
                access.add(T::component_info(), $write, $required);
            }

            #[inline]
            fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
                columns.$take()
            }

            #[inline]
            fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
                state.next().unwrap_or_else($chunk::empty)
            }

            #[inline]
            fn empty_chunk<'a>() -> Self::Chunk<'a> {
                $chunk::empty()
            }

            #[inline]
            fn rows<'a>($c: Self::Chunk<'a>, _: usize) -> Self::Rows<'a> {
                $make_rows
            }

            #[inline]
            fn fetch_row<'a>($columns: &mut ColumnAccess<'a, '_>, $row: u32) -> Option<Self::Item<'a>> {
                $fetch_row
            }

            #[inline]
            fn placed_row<'a>($placed: &mut PlacedRow<'a, '_>) -> Option<Self::Item<'a>> {
                $placed_row
            }

            #[inline]
            fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
                chunk.split_at(mid)
            }

            /// Refused: single-row reads (`modify_with`) take archetype
            /// columns only.
            #[inline]
            fn read_row<'a>(_: &RowAccess<'a>) -> Option<Self::Item<'a>> {
                None
            }
        }
    };
}

sparse_fetch!(
    SparseRef, &'a T, SparseChunk, SparseChunks, Present<SparseRows<'a, T>>, read_sparse, false, true,
    rows: |chunk| Present(chunk.into_iter()),
    row: |columns, row| columns.read_sparse_row(row).flatten(),
    placed: |row| row.read_sparse::<T>().flatten(),
);
sparse_fetch!(
    SparseMut, &'a mut T, SparseChunkMut, SparseChunksMut, Present<SparseRowsMut<'a, T>>, write_sparse, true, true,
    rows: |chunk| Present(chunk.into_iter()),
    row: |columns, row| columns.write_sparse_row(row).flatten(),
    placed: |row| row.write_sparse::<T>().flatten(),
);
sparse_fetch!(
    SparseOpt, Option<&'a T>, SparseChunk, SparseChunks, SparseRows<'a, T>, read_sparse, false, false,
    rows: |chunk| chunk.into_iter(),
    row: |columns, row| columns.read_sparse_row(row),
    placed: |row| row.read_sparse::<T>(),
);
sparse_fetch!(
    SparseOptMut, Option<&'a mut T>, SparseChunkMut, SparseChunksMut, SparseRowsMut<'a, T>, write_sparse, true, false,
    rows: |chunk| chunk.into_iter(),
    row: |columns, row| columns.write_sparse_row(row),
    placed: |row| row.write_sparse::<T>(),
);
