//! The fetches of components stored in archetype columns (the default
//! kind): `&T`, `&mut T`, `Option<&T>` and `Option<&mut T>` become
//! `ColumnRef`, `ColumnMut`, `ColumnOpt` and `ColumnOptMut`, whose chunks are
//! the columns' slices.

use std::marker::PhantomData;

use super::param::{Access, QueryParam, sealed};
use crate::component::Component;
use crate::storage::{ColumnAccess, ColumnChunks, ColumnChunksMut, RowAccess};

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

impl<T: Component> sealed::Sealed for ColumnRef<T> {}

impl<T: Component> QueryParam for ColumnRef<T> {
    type Item<'a> = &'a T;
    type Chunk<'a> = &'a [T];
    type Rows<'a> = std::slice::Iter<'a, T>;
    type State<'a> = ColumnChunks<'a, T>;
    type Key = Self;

    fn access(access: &mut Access) {
        access.add::<T>(false, true);
    }

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
        columns.read().flatten()
    }

    #[inline]
    fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
        state.next().unwrap_or_default()
    }

    #[inline]
    fn empty_chunk<'a>() -> Self::Chunk<'a> {
        &[]
    }

    #[inline]
    fn rows<'a>(chunk: Self::Chunk<'a>, _: usize) -> Self::Rows<'a> {
        chunk.iter()
    }

    #[inline]
    fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
        columns.read_row(row).flatten()
    }

    #[inline]
    fn read_row<'a>(row: &RowAccess<'a>) -> Option<Self::Item<'a>> {
        row.read(T::component_id())
    }

    fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
        chunk.split_at(mid)
    }
}

impl<T: Component> sealed::Sealed for ColumnMut<T> {}

impl<T: Component> QueryParam for ColumnMut<T> {
    type Item<'a> = &'a mut T;
    type Chunk<'a> = &'a mut [T];
    type Rows<'a> = std::slice::IterMut<'a, T>;
    type State<'a> = ColumnChunksMut<'a, T>;
    type Key = Self;

    fn access(access: &mut Access) {
        access.add::<T>(true, true);
    }

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
        columns.write().flatten()
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
        chunk.iter_mut()
    }

    #[inline]
    fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
        columns.write_row(row).flatten()
    }

    #[inline]
    fn read_row<'a>(_: &RowAccess<'a>) -> Option<Self::Item<'a>> {
        None
    }

    fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
        chunk.split_at_mut(mid)
    }
}

impl<T: Component> sealed::Sealed for ColumnOpt<T> {}

impl<T: Component> QueryParam for ColumnOpt<T> {
    type Item<'a> = Option<&'a T>;
    type Chunk<'a> = Option<&'a [T]>;
    type Rows<'a> = OptionRows<std::slice::Iter<'a, T>>;
    type State<'a> = Option<ColumnChunks<'a, T>>;
    type Key = Self;

    fn access(access: &mut Access) {
        access.add::<T>(false, false);
    }

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
        columns.read()
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
        OptionRows::new(chunk.map(<[T]>::iter), len)
    }

    #[inline]
    fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
        columns.read_row(row)
    }

    #[inline]
    fn read_row<'a>(row: &RowAccess<'a>) -> Option<Self::Item<'a>> {
        let id = T::component_id();
        if row.has(id) {
            row.read(id).map(Some)
        } else {
            Some(None)
        }
    }

    fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
        match chunk {
            Some(values) => {
                let (head, tail) = values.split_at(mid);
                (Some(head), Some(tail))
            }
            None => (None, None),
        }
    }
}

impl<T: Component> sealed::Sealed for ColumnOptMut<T> {}

impl<T: Component> QueryParam for ColumnOptMut<T> {
    type Item<'a> = Option<&'a mut T>;
    type Chunk<'a> = Option<&'a mut [T]>;
    type Rows<'a> = OptionRows<std::slice::IterMut<'a, T>>;
    type State<'a> = Option<ColumnChunksMut<'a, T>>;
    type Key = Self;

    fn access(access: &mut Access) {
        access.add::<T>(true, false);
    }

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
        columns.write()
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
        OptionRows::new(chunk.map(<[T]>::iter_mut), len)
    }

    #[inline]
    fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
        columns.write_row(row)
    }

    #[inline]
    fn read_row<'a>(_: &RowAccess<'a>) -> Option<Self::Item<'a>> {
        None
    }

    fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
        match chunk {
            Some(values) => {
                let (head, tail) = values.split_at_mut(mid);
                (Some(head), Some(tail))
            }
            None => (None, None),
        }
    }
}

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
