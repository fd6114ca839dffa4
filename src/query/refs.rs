//! A component fetched by reference: `&T`, `&mut T`, `Option<&T>` and
//! `Option<&mut T>`. Each is the fetch of `T`'s storage kind (named by its
//! declaration, as `Component::Fetch`): from archetype columns
//! (`columns.rs`) or from its sparse set (`sparse.rs`).

use crate::component::Component;
use crate::query_param::{Access, FetchKind, QueryParam, ReadOnlyQueryParam, sealed};
use crate::storage::{ColumnAccess, PlacedRow, RowAccess};

/// The `QueryParam` of `&T`, `&mut T`, `Option<&T>` or `Option<&mut T>`:
/// the one for `T`'s storage kind (`$kind`, a [`FetchKind`] type), which it
/// hands every call to.
macro_rules! by_kind {
    ($(#[$doc:meta])* $param:ty, $item:ty, $kind:ident) => {
        $(#[$doc])*
        impl<T: Component> QueryParam for $param {
            type Item<'a> = $item;
            type Chunk<'a> = <$kind<T> as QueryParam>::Chunk<'a>;
            type Rows<'a> = <$kind<T> as QueryParam>::Rows<'a>;
            type State<'a> = <$kind<T> as QueryParam>::State<'a>;
            type Key = $kind<T>;
            const SPARSE: bool = T::STORAGE.is_sparse();

            fn access(access: &mut Access) {
                $kind::<T>::access(access);
            }

            #[inline(always)]
            fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
                $kind::<T>::fetch(columns)
            }

            #[inline(always)]
            fn next_chunk<'a>(state: &mut Self::State<'a>, len: usize) -> Self::Chunk<'a> {
                $kind::<T>::next_chunk(state, len)
            }

            #[inline(always)]
            fn empty_chunk<'a>() -> Self::Chunk<'a> {
                $kind::<T>::empty_chunk()
            }

            #[inline(always)]
            fn rows<'a>(chunk: Self::Chunk<'a>, len: usize) -> Self::Rows<'a> {
                $kind::<T>::rows(chunk, len)
            }

            #[inline(always)]
            fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
                $kind::<T>::split_chunk(chunk, mid)
            }

            #[inline(always)]
            fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
                $kind::<T>::fetch_row(columns, row)
            }

            #[inline(always)]
            fn read_row<'a>(row: &RowAccess<'a>) -> Option<Self::Item<'a>> {
                $kind::<T>::read_row(row)
            }

            #[inline(always)]
            fn placed_row<'a>(row: &mut PlacedRow<'a, '_>) -> Option<Self::Item<'a>> {
                $kind::<T>::placed_row(row)
            }
        }

        impl<T: Component> sealed::Sealed for $param {}
    };
}

/// `T`'s fetch of kind `Ref`, `Mut`, `Opt` or `OptMut`, as `T` is stored.
type Ref<T> = <<T as Component>::Fetch as FetchKind<T>>::Ref;
type Mut<T> = <<T as Component>::Fetch as FetchKind<T>>::Mut;
type Opt<T> = <<T as Component>::Fetch as FetchKind<T>>::Opt;
type OptMut<T> = <<T as Component>::Fetch as FetchKind<T>>::OptMut;

by_kind!(
    /// `T`, read: from its archetype column, or its sparse set if it is
    /// declared `flag` or `sparse`.
    &T, &'a T, Ref
);
by_kind!(
    /// `T`, written: from its archetype column, or its sparse set if it is
    /// declared `flag` or `sparse`.
    &mut T, &'a mut T, Mut
);
by_kind!(
    /// `T`, read, if the entity has one.
    Option<&T>, Option<&'a T>, Opt
);
by_kind!(
    /// `T`, written, if the entity has one.
    Option<&mut T>, Option<&'a mut T>, OptMut
);

impl<T: Component> ReadOnlyQueryParam for &T {}

impl<T: Component> ReadOnlyQueryParam for Option<&T> {}
