//! The fetches of components stored in archetype columns (the default
//! kind): `&T`, `&mut T`, `Option<&T>` and `Option<&mut T>` become
//! `ColumnRef`, `ColumnMut`, `ColumnOpt` and `ColumnOptMut`, whose chunks are
//! the columns' slices.

use std::marker::PhantomData;

use crate::component::Component;
use crate::query_param::{Access, FetchKind, QueryParam, sealed};
use crate::storage::{ColumnAccess, ColumnChunks, ColumnChunksMut, PlacedRow, RowAccess};

/// The fetches of components stored in archetype columns: chunks as slices.
#[doc(hidden)]
pub struct InColumns;

impl<T: Component> FetchKind<T> for InColumns {
    type Ref = ColumnRef<T>;
    type Mut = ColumnMut<T>;
    type Opt = ColumnOpt<T>;
    type OptMut = ColumnOptMut<T>;
}

/// `&T` of a component stored in columns.
#[doc(hidden)]
pub struct ColumnRef<T>(PhantomData<fn() -> T>);

/// `&mut T` of a component stored in columns.
#[doc(hidden)]
pub struct ColumnMut<T>(PhantomData<fn() -> T>);

/// `Option<&T>` of a component stored in columns.
#[doc(hidden)]
pub struct ColumnOpt<T>(PhantomData<fn() -> T>);

/// `Option<&mut T>` of a component stored in columns.
#[doc(hidden)]
pub struct ColumnOptMut<T>(PhantomData<fn() -> T>);

/// The two `QueryParam`s of one way of taking a column: `$required` (`&T` or
/// `&mut T`) and `$optional` (`Option<&T>` or `Option<&mut T>`). Reading and
/// writing differ only in the borrow (`$take`, `$take_row`, `$iter`,
/// `$split`) and in what a row lent out by itself gives (`read_row`), so one
/// text makes all four.
macro_rules! column_params {
    (
        $required:ident, $optional:ident, write: $write:literal,
        item: $item:ty, chunk: $chunk:ty, rows: $rows:ty, state: $state:ty,
        take: $take:ident, take_row: $take_row:ident, placed: $placed:ident, iter: $iter:ident, split: $split:ident,
        read_row: |$row:ident| $read_row:expr,
        read_row_optional: |$opt_row:ident| $read_row_optional:expr $(,)?
    ) => {
        impl<T: Component> sealed::Sealed for $required<T> {}

        impl<T: Component> QueryParam for $required<T> {
            type Item<'a> = $item;
            type Chunk<'a> = $chunk;
            type Rows<'a> = $rows;
            type State<'a> = $state;
            type Key = Self;

            fn access(access: &mut Access) {
                access.add(T::component_info(), $write, true);
            }

            #[inline(always)]
            fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
                columns.$take().flatten()
            }

            #[inline]
            fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
                state.next().unwrap_or_default()
            }

            #[inline]
            fn empty_chunk<'a>() -> Self::Chunk<'a> {
                Default::default()
            }

            #[inline]
            fn rows<'a>(chunk: Self::Chunk<'a>, _: usize) -> Self::Rows<'a> {
                chunk.$iter()
            }

            #[inline]
            fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
                columns.$take_row(row).flatten()
            }

            #[inline(always)]
            fn placed_row<'a>(row: &mut PlacedRow<'a, '_>) -> Option<Self::Item<'a>> {
                row.$placed::<T>().flatten()
            }

            #[inline]
            fn read_row<'a>($row: &RowAccess<'a>) -> Option<Self::Item<'a>> {
                $read_row
            }

            fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
                chunk.$split(mid)
            }
        }

        impl<T: Component> sealed::Sealed for $optional<T> {}

        impl<T: Component> QueryParam for $optional<T> {
            type Item<'a> = Option<$item>;
            type Chunk<'a> = Option<$chunk>;
            type Rows<'a> = OptionRows<$rows>;
            type State<'a> = Option<$state>;
            type Key = Self;

            fn access(access: &mut Access) {
                access.add(T::component_info(), $write, false);
            }

            #[inline(always)]
            fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
                columns.$take()
            }

            #[inline]
            fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
                state.as_mut().map(|column| column.next().unwrap_or_default())
            }

            #[inline]
            fn empty_chunk<'a>() -> Self::Chunk<'a> {
                None
            }

            #[inline]
            fn rows<'a>(chunk: Self::Chunk<'a>, len: usize) -> Self::Rows<'a> {
                OptionRows::new(chunk.map(<[T]>::$iter), len)
            }

            #[inline]
            fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
                columns.$take_row(row)
            }

            #[inline(always)]
            fn placed_row<'a>(row: &mut PlacedRow<'a, '_>) -> Option<Self::Item<'a>> {
                row.$placed::<T>()
            }

            #[inline]
            fn read_row<'a>($opt_row: &RowAccess<'a>) -> Option<Self::Item<'a>> {
                $read_row_optional
            }

            fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
                match chunk {
                    Some(values) => {
                        let (head, tail) = values.$split(mid);
                        (Some(head), Some(tail))
                    }
                    None => (None, None),
                }
            }
        }
    };
}

column_params!(
    ColumnRef, ColumnOpt, write: false,
    item: &'a T, chunk: &'a [T], rows: std::slice::Iter<'a, T>, state: ColumnChunks<'a, T>,
    take: read, take_row: read_row, placed: read, iter: iter, split: split_at,
    read_row: |row| row.read(T::component_id()),
    read_row_optional: |row| {
        let id = T::component_id();
        if row.has(id) {
            row.read(id).map(Some)
        } else {
            Some(None)
        }
    },
);

// A row lent out by itself is read only: neither write gives anything.
column_params!(
    ColumnMut, ColumnOptMut, write: true,
    item: &'a mut T, chunk: &'a mut [T], rows: std::slice::IterMut<'a, T>, state: ColumnChunksMut<'a, T>,
    take: write, take_row: write_row, placed: write, iter: iter_mut, split: split_at_mut,
    read_row: |_row| None,
    read_row_optional: |_row| None,
);

/// The rows of an optional column: its values, or `None` `len` times.
#[doc(hidden)]
pub enum OptionRows<I> {
    Present(I),
    Absent(usize),
}

impl<I> OptionRows<I> {
    fn new(rows: Option<I>, len: usize) -> Self {
        match rows {
            Some(rows) => OptionRows::Present(rows),
            None => OptionRows::Absent(len),
        }
    }
}

impl<I: Iterator> Iterator for OptionRows<I> {
    type Item = Option<I::Item>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            OptionRows::Present(rows) => rows.next().map(Some),
            OptionRows::Absent(0) => None,
            OptionRows::Absent(left) => {
                *left -= 1;
                Some(None)
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            OptionRows::Present(rows) => rows.size_hint(),
            OptionRows::Absent(left) => (*left, Some(*left)),
        }
    }
}
