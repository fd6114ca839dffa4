//! What a query can fetch: the `QueryParam` trait, its implementations for
//! `Entity`, `()` and tuples, the `FetchKind` through which a component's
//! `&T`, `&mut T`, `Option<&T>` and `Option<&mut T>` become the fetch of its
//! storage kind (`query/refs.rs`), and the `Access` record that catches
//! aliasing. It stands below `query/` (which re-exports it), so that what
//! names fetches without running a query (a component's declaration, an
//! `EntityRef`) does not depend on queries, groups and routes.

use std::any::TypeId;
use std::iter::Zip;

use smallvec::SmallVec;

use crate::entity::Entity;
use crate::error::Error;
use crate::id::ComponentId;
use crate::storage::{ColumnAccess, ColumnPlan, ComponentInfo, ComponentSet, EntityChunks, PlacedRow, RowAccess};

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// What a query fetches: `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`,
/// `Entity`, or a tuple of these (up to 10). Sealed: these are all.
///
/// A component stored in archetype columns comes chunk by chunk as a slice
/// (`&[T]`, `&mut [T]`, `Option<&[T]>`); a flag or sparse component as a
/// [`SparseChunk`](crate::query::SparseChunk) or
/// [`SparseChunkMut`](crate::query::SparseChunkMut).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be fetched by a query",
    label = "expected `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`, `Entity`, or a tuple of them",
    note = "component types must be declared with `reactecs::component!`"
)]
pub trait QueryParam: sealed::Sealed {
    /// What one entity yields, e.g. `(&'a mut Position, &'a Velocity)`.
    type Item<'a>;
    /// What one chunk yields, e.g. `(&'a mut [Position], &'a [Velocity])`.
    type Chunk<'a>: Send;
    /// Iterates one chunk's items.
    #[doc(hidden)]
    type Rows<'a>: Iterator<Item = Self::Item<'a>>;
    /// Per-archetype fetch state.
    #[doc(hidden)]
    type State<'a>: Send;
    /// The query type with every borrow `'static`: what a context keys its
    /// plan of the query type by.
    #[doc(hidden)]
    type Key: 'static;
    /// Whether it fetches a flag or sparse component (kept out of
    /// archetypes).
    #[doc(hidden)]
    const SPARSE: bool = false;

    /// Records the components read and written.
    #[doc(hidden)]
    fn access(access: &mut Access);
    /// Prepares to fetch from one archetype, taking the columns `access`
    /// recorded, in the same order; `None` if it lacks a required component
    /// or a column is refused.
    #[doc(hidden)]
    fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>>;
    /// The next chunk's data; `len` is its row count.
    #[doc(hidden)]
    fn next_chunk<'a>(state: &mut Self::State<'a>, len: usize) -> Self::Chunk<'a>;
    /// A chunk of no rows.
    #[doc(hidden)]
    fn empty_chunk<'a>() -> Self::Chunk<'a>;
    /// The items of one chunk.
    #[doc(hidden)]
    fn rows<'a>(chunk: Self::Chunk<'a>, len: usize) -> Self::Rows<'a>;
    /// The chunk cut in two at row `mid` (for parallel batches).
    #[doc(hidden)]
    fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>);
    /// The item of one row (for one entity); `None` if the archetype lacks a
    /// required component, a column cannot be borrowed, or `row` is not live.
    #[doc(hidden)]
    fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>>;
    /// The item of the row `row` gives access to, reading only; `None` if
    /// the archetype lacks a required component, the item would read the
    /// column lent out, or it writes.
    #[doc(hidden)]
    fn read_row<'a>(row: &RowAccess<'a>) -> Option<Self::Item<'a>>;
    /// The item of one row of a prepared view (columns at the offsets its
    /// plan keeps); `None` if the archetype or the entity lacks a required
    /// component.
    #[doc(hidden)]
    fn placed_row<'a>(row: &mut PlacedRow<'a, '_>) -> Option<Self::Item<'a>>;
}

/// A [`QueryParam`] that only reads: usable with [`Context::query`](crate::Context::query) on a
/// shared context.
pub trait ReadOnlyQueryParam: QueryParam {}

/// The components a query reads and writes, and the ones an entity must have.
#[doc(hidden)]
#[derive(Default)]
pub struct Access {
    /// Each component named, in the order the query names it.
    entries: SmallVec<[Entry; 8]>,
}

/// One component a query names.
#[derive(Clone, Copy)]
struct Entry {
    id: ComponentId,
    /// The type of its values.
    ty: TypeId,
    write: bool,
    /// Not behind an `Option`: an entity must have it.
    required: bool,
    /// Kept out of archetypes (a flag or sparse component).
    sparse: bool,
}

impl Access {
    pub(crate) fn of<Q: QueryParam>() -> Self {
        let mut access = Access::default();
        Q::access(&mut access);
        access
    }

    /// Records the component `info` describes, written or only read, and
    /// required or behind an `Option`.
    pub(crate) fn add(&mut self, info: &ComponentInfo, write: bool, required: bool) {
        self.entries.push(Entry {
            id: info.id(),
            ty: info.ty.type_id(),
            write,
            required,
            sparse: info.storage().is_sparse(),
        });
    }

    /// The required components stored in archetypes, in the order the
    /// query names them: an archetype without one is not visited.
    pub(crate) fn required(&self) -> impl Iterator<Item = ComponentId> + '_ {
        self.entries.iter().filter(|e| e.required && !e.sparse).map(|e| e.id)
    }

    /// The required flag and sparse components, in the order the query
    /// names them: checked entity by entity.
    pub(crate) fn required_sparse(&self) -> impl Iterator<Item = ComponentId> + '_ {
        self.entries.iter().filter(|e| e.required && e.sparse).map(|e| e.id)
    }

    /// The columns to take from each archetype, in the order the query names
    /// them; [`Error::QueryAliasing`] (naming `context`) if a component is
    /// written and also read or written again.
    pub(crate) fn plan(&self, context: &'static str) -> Result<ColumnPlan, Error> {
        ColumnPlan::new(self.entries.iter().map(|e| (e.id, e.ty, e.write))).map_err(|id| Error::QueryAliasing {
            context,
            component: id.name(),
        })
    }

    /// The first component the query names, if any.
    pub(crate) fn first(&self) -> Option<ComponentId> {
        self.entries.first().map(|e| e.id)
    }

    /// Whether an entity with components `set` has every required one.
    #[inline]
    pub(crate) fn fits(&self, set: &ComponentSet) -> bool {
        self.required().all(|id| set.contains(id))
    }

    /// The first required component (in the order the query names them)
    /// that an entity whose archetype components are `set`, and whose flag
    /// and sparse components `has_sparse` tells, lacks.
    pub(crate) fn missing(&self, set: &ComponentSet, has_sparse: impl Fn(ComponentId) -> bool) -> Option<ComponentId> {
        self.entries
            .iter()
            .filter(|e| e.required)
            .find(|e| {
                if e.sparse {
                    !has_sparse(e.id)
                } else {
                    !set.contains(e.id)
                }
            })
            .map(|e| e.id)
    }
}

impl sealed::Sealed for () {}

/// Fetches nothing: one `()` per entity (for [`Context::modify_each`](crate::Context::modify_each) when the
/// closure needs no other component).
impl QueryParam for () {
    type Item<'a> = ();
    type Chunk<'a> = ();
    type Rows<'a> = std::iter::RepeatN<()>;
    type State<'a> = ();
    type Key = ();

    fn access(_: &mut Access) {}

    #[inline]
    fn fetch<'a>(_: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
        Some(())
    }

    #[inline]
    fn next_chunk<'a>(_: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {}

    #[inline]
    fn empty_chunk<'a>() -> Self::Chunk<'a> {}

    #[inline]
    fn rows<'a>((): Self::Chunk<'a>, len: usize) -> Self::Rows<'a> {
        std::iter::repeat_n((), len)
    }

    #[inline]
    fn fetch_row<'a>(_: &mut ColumnAccess<'a, '_>, _: u32) -> Option<Self::Item<'a>> {
        Some(())
    }

    #[inline]
    fn placed_row<'a>(_: &mut PlacedRow<'a, '_>) -> Option<Self::Item<'a>> {
        Some(())
    }

    fn split_chunk<'a>((): Self::Chunk<'a>, _: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
        ((), ())
    }

    #[inline]
    fn read_row<'a>(_: &RowAccess<'a>) -> Option<Self::Item<'a>> {
        Some(())
    }
}

impl ReadOnlyQueryParam for () {}

impl sealed::Sealed for Entity {}

impl QueryParam for Entity {
    type Item<'a> = Entity;
    type Chunk<'a> = &'a [Entity];
    type Rows<'a> = std::iter::Copied<std::slice::Iter<'a, Entity>>;
    type State<'a> = EntityChunks<'a>;
    type Key = Entity;

    fn access(_: &mut Access) {}

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
        Some(columns.entities())
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
        chunk.iter().copied()
    }

    #[inline]
    fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
        columns.entity_at(row)
    }

    #[inline]
    fn placed_row<'a>(row: &mut PlacedRow<'a, '_>) -> Option<Self::Item<'a>> {
        row.entity()
    }

    #[inline]
    fn read_row<'a>(row: &RowAccess<'a>) -> Option<Self::Item<'a>> {
        Some(row.entity())
    }

    fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
        chunk.split_at(mid)
    }
}

impl ReadOnlyQueryParam for Entity {}

/// How a query fetches `&T`, `&mut T`, `Option<&T>` and `Option<&mut T>`
/// for a component `T` of one storage kind: the `QueryParam` each becomes.
/// Implemented by [`InColumns`](crate::query::InColumns) and
/// [`InSparseSets`](crate::query::InSparseSets); a component's
/// declaration names its kind's (as `Component::Fetch`).
#[doc(hidden)]
pub trait FetchKind<T: ?Sized + 'static>: 'static {
    /// What `&T` becomes.
    type Ref: for<'a> QueryParam<Item<'a> = &'a T>;
    /// What `&mut T` becomes.
    type Mut: for<'a> QueryParam<Item<'a> = &'a mut T>;
    /// What `Option<&T>` becomes.
    type Opt: for<'a> QueryParam<Item<'a> = Option<&'a T>>;
    /// What `Option<&mut T>` becomes.
    type OptMut: for<'a> QueryParam<Item<'a> = Option<&'a mut T>>;
}

macro_rules! zip_ty {
    ($first:ty) => { $first };
    ($first:ty, $second:ty $(, $rest:ty)*) => { zip_ty!(Zip<$first, $second> $(, $rest)*) };
}

macro_rules! zip_expr {
    ($first:expr) => { $first };
    ($first:expr, $second:expr $(, $rest:expr)*) => { zip_expr!($first.zip($second) $(, $rest)*) };
}

macro_rules! zip_pat {
    ($first:pat) => { $first };
    ($first:pat, $second:pat $(, $rest:pat)*) => { zip_pat!(($first, $second) $(, $rest)*) };
}

macro_rules! tuple_query {
    ($rows:ident; $($name:ident),+) => {
        /// The rows of a tuple query's chunk: the elements' rows, zipped.
        #[doc(hidden)]
        pub struct $rows<I>(I);

        #[allow(non_snake_case)]
        impl<$($name: Iterator),+> Iterator for $rows<zip_ty!($($name),+)> {
            type Item = ($($name::Item,)+);

            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                let zip_pat!($($name),+) = self.0.next()?;
                Some(($($name,)+))
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }

            #[inline]
            fn fold<Acc, Fold: FnMut(Acc, Self::Item) -> Acc>(self, init: Acc, mut fold: Fold) -> Acc {
                self.0.fold(init, move |acc, zip_pat!($($name),+)| fold(acc, ($($name,)+)))
            }
        }

        impl<$($name: QueryParam),+> sealed::Sealed for ($($name,)+) {}

        #[allow(non_snake_case)]
        impl<$($name: QueryParam),+> QueryParam for ($($name,)+) {
            type Item<'a> = ($($name::Item<'a>,)+);
            type Chunk<'a> = ($($name::Chunk<'a>,)+);
            type Rows<'a> = $rows<zip_ty!($($name::Rows<'a>),+)>;
            type State<'a> = ($($name::State<'a>,)+);
            type Key = ($($name::Key,)+);
            const SPARSE: bool = $($name::SPARSE)||+;

            fn access(access: &mut Access) {
                $($name::access(access);)+
            }

            #[inline]
            fn fetch<'a>(columns: &mut ColumnAccess<'a, '_>) -> Option<Self::State<'a>> {
                Some(($($name::fetch(columns)?,)+))
            }

            #[inline]
            fn next_chunk<'a>(state: &mut Self::State<'a>, len: usize) -> Self::Chunk<'a> {
                let ($($name,)+) = state;
                ($($name::next_chunk($name, len),)+)
            }

            #[inline]
            fn empty_chunk<'a>() -> Self::Chunk<'a> {
                ($($name::empty_chunk(),)+)
            }

            #[inline]
            fn rows<'a>(chunk: Self::Chunk<'a>, len: usize) -> Self::Rows<'a> {
                let ($($name,)+) = chunk;
                $rows(zip_expr!($($name::rows($name, len)),+))
            }

            #[inline]
            fn fetch_row<'a>(columns: &mut ColumnAccess<'a, '_>, row: u32) -> Option<Self::Item<'a>> {
                Some(($($name::fetch_row(columns, row)?,)+))
            }

            #[inline]
            fn read_row<'a>(row: &RowAccess<'a>) -> Option<Self::Item<'a>> {
                Some(($($name::read_row(row)?,)+))
            }

            #[inline(always)]
            fn placed_row<'a>(row: &mut PlacedRow<'a, '_>) -> Option<Self::Item<'a>> {
                Some(($($name::placed_row(row)?,)+))
            }

            fn split_chunk<'a>(chunk: Self::Chunk<'a>, mid: usize) -> (Self::Chunk<'a>, Self::Chunk<'a>) {
                let ($($name,)+) = chunk;
                let ($($name,)+) = ($($name::split_chunk($name, mid),)+);
                (($($name.0,)+), ($($name.1,)+))
            }
        }

        impl<$($name: ReadOnlyQueryParam),+> ReadOnlyQueryParam for ($($name,)+) {}
    };
}

tuple_query!(Rows1; A);
tuple_query!(Rows2; A, B);
tuple_query!(Rows3; A, B, C);
tuple_query!(Rows4; A, B, C, D);
tuple_query!(Rows5; A, B, C, D, E);
tuple_query!(Rows6; A, B, C, D, E, F);
tuple_query!(Rows7; A, B, C, D, E, F, G);
tuple_query!(Rows8; A, B, C, D, E, F, G, H);
tuple_query!(Rows9; A, B, C, D, E, F, G, H, I);
tuple_query!(Rows10; A, B, C, D, E, F, G, H, I, J);
