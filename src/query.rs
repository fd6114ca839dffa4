//! Typed queries: tuples of `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`
//! and `Entity`, iterated entity by entity or chunk by chunk (as slices).
//!
//! ```
//! use reactecs::prelude::*;
//! #[derive(Clone, Copy)] struct Position(f32);
//! #[derive(Clone, Copy)] struct Velocity(f32);
//! reactecs::component!(Position, Velocity);
//!
//! let mut game = Context::new();
//! game.create_entities_with((0..1000).map(|i| (Position(0.0), Velocity(i as f32))))?;
//!
//! // Entity by entity:
//! for (pos, vel) in game.query_mut::<(&mut Position, &Velocity)>()?.iter() {
//!     pos.0 += vel.0;
//! }
//! // Chunk by chunk: plain slices, so simple loops vectorise.
//! game.query_mut::<(&mut Position, &Velocity)>()?.for_each_chunk(|(pos, vel)| {
//!     for (p, v) in pos.iter_mut().zip(vel) {
//!         p.0 += v.0;
//!     }
//! });
//! let total: f32 = game.query::<&Position>().iter().map(|p| p.0).sum();
//! assert_eq!(total, 2.0 * (0..1000).sum::<i32>() as f32);
//! # Ok::<(), reactecs::Error>(())
//! ```
//!
//! Writes through a query's `&mut T` are silent, like
//! [`Context::get_mut`]: no event fires, so groups' subscribers and reactive
//! systems do not hear of them. Use [`Context::modify_each`] (or
//! [`Context::replace`]) when they must.
//!
//! A query borrows the context for as long as it lives, so structural changes
//! (create, destroy, add, remove) cannot happen while iterating: the borrow
//! checker refuses them.
//!
//! ```compile_fail
//! # use reactecs::prelude::*;
//! # struct Health(u32);
//! # reactecs::component!(Health);
//! # let mut game = Context::new();
//! for (e, health) in game.query::<(Entity, &Health)>().iter() {
//!     if health.0 == 0 {
//!         game.destroy_entity(e)?; // error: `game` is borrowed by the query
//!     }
//! }
//! # Ok::<(), reactecs::Error>(())
//! ```
//!
//! Collect what to change first, then change it after the loop: into a `Vec`
//! you keep between frames (no allocation in steady state), or through a
//! group's [`entities`](crate::Group::entities) list, which does not borrow
//! the context. A command buffer for recording changes during iteration is
//! planned.
//!
//! ```
//! # use reactecs::prelude::*;
//! # struct Health(u32);
//! # reactecs::component!(Health);
//! # let mut game = Context::new();
//! # game.create_entities_with([Health(0), Health(3)])?;
//! let mut dead = Vec::new();
//! dead.extend(game.query::<(Entity, &Health)>().iter().filter(|(_, h)| h.0 == 0).map(|(e, _)| e));
//! for e in dead.drain(..) {
//!     game.destroy_entity(e)?;
//! }
//! assert_eq!(game.len(), 1);
//! # Ok::<(), reactecs::Error>(())
//! ```

use std::iter::Zip;
use std::marker::PhantomData;

use smallvec::SmallVec;

use crate::component::{Component, ComponentId};
use crate::context::Context;
use crate::entity::Entity;
use crate::error::Error;
use crate::event::ContextEvent;
use crate::group::{GroupEvent, GroupId};
use crate::groups::Groups;
use crate::matcher::Matcher;
use crate::storage::{
    Archetype, Archetypes, ChunkLens, ColumnAccess, ColumnChunks, ColumnChunksMut, ComponentRef, ComponentSet,
    EntityChunks,
};

mod sealed {
    pub trait Sealed {}
}

/// What a query fetches: `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`,
/// `Entity`, or a tuple of these (up to 10). Sealed: these are all.
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

    /// Records the components read and written.
    #[doc(hidden)]
    fn access(access: &mut Access);
    /// Prepares to fetch from one archetype; `None` if it lacks a required
    /// component or a column cannot be borrowed.
    #[doc(hidden)]
    fn fetch<'a>(columns: &mut ColumnAccess<'a>) -> Option<Self::State<'a>>;
    /// The next chunk's data; `len` is its row count.
    #[doc(hidden)]
    fn next_chunk<'a>(state: &mut Self::State<'a>, len: usize) -> Self::Chunk<'a>;
    /// The items of one chunk.
    #[doc(hidden)]
    fn rows<'a>(chunk: Self::Chunk<'a>, len: usize) -> Self::Rows<'a>;
}

/// A [`QueryParam`] that only reads: usable with [`Context::query`] on a
/// shared context.
pub trait ReadOnlyQueryParam: QueryParam {}

/// The components a query reads and writes, and the ones an entity must have.
#[doc(hidden)]
#[derive(Default)]
pub struct Access {
    reads: SmallVec<[ComponentId; 8]>,
    writes: SmallVec<[ComponentId; 8]>,
    required: ComponentSet,
}

impl Access {
    fn of<Q: QueryParam>() -> Self {
        let mut access = Access::default();
        Q::access(&mut access);
        access
    }

    fn add(&mut self, id: ComponentId, write: bool, required: bool) {
        if write {
            self.writes.push(id);
        } else {
            self.reads.push(id);
        }
        if required {
            self.required.insert(id);
        }
    }

    /// A component the query writes and also reads or writes again.
    fn conflict(&self) -> Option<ComponentId> {
        self.writes
            .iter()
            .enumerate()
            .find_map(|(i, id)| (self.writes[i + 1..].contains(id) || self.reads.contains(id)).then_some(*id))
    }
}

impl sealed::Sealed for () {}

/// Fetches nothing: one `()` per entity (for [`Context::modify_each`] when the
/// closure needs no other component).
impl QueryParam for () {
    type Item<'a> = ();
    type Chunk<'a> = ();
    type Rows<'a> = std::iter::RepeatN<()>;
    type State<'a> = ();

    fn access(_: &mut Access) {}

    #[inline]
    fn fetch<'a>(_: &mut ColumnAccess<'a>) -> Option<Self::State<'a>> {
        Some(())
    }

    #[inline]
    fn next_chunk<'a>(_: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {}

    #[inline]
    fn rows<'a>((): Self::Chunk<'a>, len: usize) -> Self::Rows<'a> {
        std::iter::repeat_n((), len)
    }
}

impl ReadOnlyQueryParam for () {}

impl sealed::Sealed for Entity {}

impl QueryParam for Entity {
    type Item<'a> = Entity;
    type Chunk<'a> = &'a [Entity];
    type Rows<'a> = std::iter::Copied<std::slice::Iter<'a, Entity>>;
    type State<'a> = EntityChunks<'a>;

    fn access(_: &mut Access) {}

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a>) -> Option<Self::State<'a>> {
        Some(columns.entities())
    }

    #[inline]
    fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
        state.next().unwrap_or_default()
    }

    #[inline]
    fn rows<'a>(chunk: Self::Chunk<'a>, _: usize) -> Self::Rows<'a> {
        chunk.iter().copied()
    }
}

impl ReadOnlyQueryParam for Entity {}

impl<T: Component> sealed::Sealed for &T {}

impl<T: Component> QueryParam for &T {
    type Item<'a> = &'a T;
    type Chunk<'a> = &'a [T];
    type Rows<'a> = std::slice::Iter<'a, T>;
    type State<'a> = ColumnChunks<'a, T>;

    fn access(access: &mut Access) {
        access.add(T::component_id(), false, true);
    }

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a>) -> Option<Self::State<'a>> {
        columns.read(T::component_id())
    }

    #[inline]
    fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
        state.next().unwrap_or_default()
    }

    #[inline]
    fn rows<'a>(chunk: Self::Chunk<'a>, _: usize) -> Self::Rows<'a> {
        chunk.iter()
    }
}

impl<T: Component> ReadOnlyQueryParam for &T {}

impl<T: Component> sealed::Sealed for &mut T {}

impl<T: Component> QueryParam for &mut T {
    type Item<'a> = &'a mut T;
    type Chunk<'a> = &'a mut [T];
    type Rows<'a> = std::slice::IterMut<'a, T>;
    type State<'a> = ColumnChunksMut<'a, T>;

    fn access(access: &mut Access) {
        access.add(T::component_id(), true, true);
    }

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a>) -> Option<Self::State<'a>> {
        columns.write(T::component_id())
    }

    #[inline]
    fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
        state.next().unwrap_or_default()
    }

    #[inline]
    fn rows<'a>(chunk: Self::Chunk<'a>, _: usize) -> Self::Rows<'a> {
        chunk.iter_mut()
    }
}

impl<T: Component> sealed::Sealed for Option<&T> {}

impl<T: Component> QueryParam for Option<&T> {
    type Item<'a> = Option<&'a T>;
    type Chunk<'a> = Option<&'a [T]>;
    type Rows<'a> = OptionRows<std::slice::Iter<'a, T>>;
    type State<'a> = Option<ColumnChunks<'a, T>>;

    fn access(access: &mut Access) {
        access.add(T::component_id(), false, false);
    }

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a>) -> Option<Self::State<'a>> {
        let id = T::component_id();
        if columns.has(id) {
            columns.read(id).map(Some)
        } else {
            Some(None)
        }
    }

    #[inline]
    fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
        state.as_mut().map(|column| column.next().unwrap_or_default())
    }

    #[inline]
    fn rows<'a>(chunk: Self::Chunk<'a>, len: usize) -> Self::Rows<'a> {
        OptionRows::new(chunk.map(<[T]>::iter), len)
    }
}

impl<T: Component> ReadOnlyQueryParam for Option<&T> {}

impl<T: Component> sealed::Sealed for Option<&mut T> {}

impl<T: Component> QueryParam for Option<&mut T> {
    type Item<'a> = Option<&'a mut T>;
    type Chunk<'a> = Option<&'a mut [T]>;
    type Rows<'a> = OptionRows<std::slice::IterMut<'a, T>>;
    type State<'a> = Option<ColumnChunksMut<'a, T>>;

    fn access(access: &mut Access) {
        access.add(T::component_id(), true, false);
    }

    #[inline]
    fn fetch<'a>(columns: &mut ColumnAccess<'a>) -> Option<Self::State<'a>> {
        let id = T::component_id();
        if columns.has(id) {
            columns.write(id).map(Some)
        } else {
            Some(None)
        }
    }

    #[inline]
    fn next_chunk<'a>(state: &mut Self::State<'a>, _: usize) -> Self::Chunk<'a> {
        state.as_mut().map(|column| column.next().unwrap_or_default())
    }

    #[inline]
    fn rows<'a>(chunk: Self::Chunk<'a>, len: usize) -> Self::Rows<'a> {
        OptionRows::new(chunk.map(<[T]>::iter_mut), len)
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

            fn access(access: &mut Access) {
                $($name::access(access);)+
            }

            #[inline]
            fn fetch<'a>(columns: &mut ColumnAccess<'a>) -> Option<Self::State<'a>> {
                Some(($($name::fetch(columns)?,)+))
            }

            #[inline]
            fn next_chunk<'a>(state: &mut Self::State<'a>, len: usize) -> Self::Chunk<'a> {
                let ($($name,)+) = state;
                ($($name::next_chunk($name, len),)+)
            }

            #[inline]
            fn rows<'a>(chunk: Self::Chunk<'a>, len: usize) -> Self::Rows<'a> {
                let ($($name,)+) = chunk;
                $rows(zip_expr!($($name::rows($name, len)),+))
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

/// Which archetypes a query visits: those with the query's required
/// components, accepted by the optional matcher and the optional group.
#[derive(Clone, Copy)]
struct Filter<'w> {
    required: &'w ComponentSet,
    matcher: Option<&'w Matcher>,
    group: Option<&'w Matcher>,
}

impl Filter<'_> {
    #[inline]
    fn accepts(&self, archetype: &Archetype) -> bool {
        let set = archetype.set();
        archetype.len() != 0
            && set.is_superset(self.required)
            && self.matcher.is_none_or(|m| m.matches_components(set))
            && self.group.is_none_or(|m| m.matches_components(set))
    }
}

/// The chunks of the archetypes that `archetypes` yields, in order, with
/// their row counts.
struct ChunkIter<'w, Q: QueryParam, I> {
    archetypes: I,
    current: Option<(Q::State<'w>, ChunkLens<'w>)>,
}

impl<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>> ChunkIter<'w, Q, I> {
    #[inline]
    fn new(archetypes: I) -> Self {
        ChunkIter {
            archetypes,
            current: None,
        }
    }
}

impl<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>> Iterator for ChunkIter<'w, Q, I> {
    type Item = (Q::Chunk<'w>, usize);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((state, lens)) = &mut self.current
                && let Some(len) = lens.next()
            {
                return Some((Q::next_chunk(state, len), len));
            }
            let mut columns = self.archetypes.next()?;
            let state = Q::fetch(&mut columns);
            // The filter checked the required components and `Access` the aliasing,
            // so every visited archetype can be fetched.
            debug_assert!(state.is_some(), "a query skipped an archetype it accepted");
            self.current = state.map(|state| (state, columns.chunk_lens()));
        }
    }
}

/// The items of the chunks of a [`ChunkIter`], one entity at a time.
struct RowIter<'w, Q: QueryParam, I> {
    chunks: ChunkIter<'w, Q, I>,
    rows: Option<Q::Rows<'w>>,
}

impl<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>> Iterator for RowIter<'w, Q, I> {
    type Item = Q::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.rows.as_mut().and_then(Iterator::next) {
                return Some(item);
            }
            let (chunk, len) = self.chunks.next()?;
            self.rows = Some(Q::rows(chunk, len));
        }
    }

    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, mut f: F) -> B {
        let mut acc = init;
        if let Some(rows) = self.rows {
            acc = rows.fold(acc, &mut f);
        }
        for (chunk, len) in self.chunks {
            acc = Q::rows(chunk, len).fold(acc, &mut f);
        }
        acc
    }
}

#[inline]
fn rows<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>>(archetypes: I) -> RowIter<'w, Q, I> {
    RowIter {
        chunks: ChunkIter::new(archetypes),
        rows: None,
    }
}

/// A query over a shared context: reads only. Made by [`Context::query`].
///
/// It visits every entity that has the query's required components (all but
/// the `Option`s), narrowed by [`matching`](Query::matching) and
/// [`in_group`](Query::in_group), in a deterministic order: archetypes in
/// creation order, rows in chunk order.
pub struct Query<'w, Q: ReadOnlyQueryParam> {
    archetypes: &'w Archetypes,
    groups: &'w Groups,
    context: &'static str,
    access: Access,
    matcher: Option<&'w Matcher>,
    group: Option<&'w Matcher>,
    _q: PhantomData<fn() -> Q>,
}

impl<'w, Q: ReadOnlyQueryParam> Query<'w, Q> {
    pub(crate) fn new(context: &'w Context) -> Self {
        Query {
            archetypes: &context.archetypes,
            groups: &context.groups,
            context: context.name(),
            access: Access::of::<Q>(),
            matcher: None,
            group: None,
            _q: PhantomData,
        }
    }

    /// Only entities that `matcher` matches too.
    pub fn matching(mut self, matcher: &'w Matcher) -> Self {
        self.matcher = Some(matcher);
        self
    }

    /// Only entities of group `group`.
    ///
    /// # Errors
    /// [`Error::UnknownGroup`] if the group is not one of this context's.
    pub fn in_group(mut self, group: GroupId) -> Result<Self, Error> {
        self.group = Some(group_matcher(self.groups, self.context, group)?);
        Ok(self)
    }

    fn filter(&self) -> Filter<'_> {
        Filter {
            required: &self.access.required,
            matcher: self.matcher,
            group: self.group,
        }
    }

    fn columns(&self) -> impl Iterator<Item = ColumnAccess<'w>> + '_ {
        let filter = self.filter();
        self.archetypes
            .iter()
            .filter(move |a| filter.accepts(a))
            .map(ColumnAccess::shared)
    }

    /// The items, entity by entity.
    pub fn iter(&self) -> impl Iterator<Item = Q::Item<'w>> + '_ {
        rows::<Q, _>(self.columns())
    }

    /// The items, chunk by chunk, as slices.
    pub fn chunks(&self) -> impl Iterator<Item = Q::Chunk<'w>> + '_ {
        ChunkIter::<Q, _>::new(self.columns()).map(|(chunk, _)| chunk)
    }

    /// The number of entities the query visits.
    pub fn count(&self) -> usize {
        let filter = self.filter();
        self.archetypes
            .iter()
            .filter(|a| filter.accepts(a))
            .map(Archetype::len)
            .sum()
    }
}

/// A query over an exclusively borrowed context: reads and writes. Made by
/// [`Context::query_mut`]. Writes are silent (see the [module docs](self)).
pub struct QueryMut<'w, Q: QueryParam> {
    archetypes: &'w mut Archetypes,
    groups: &'w Groups,
    context: &'static str,
    access: Access,
    matcher: Option<&'w Matcher>,
    group: Option<&'w Matcher>,
    _q: PhantomData<fn() -> Q>,
}

impl<'w, Q: QueryParam> QueryMut<'w, Q> {
    pub(crate) fn new(context: &'w mut Context) -> Result<Self, Error> {
        let access = Access::of::<Q>();
        if let Some(id) = access.conflict() {
            return Err(Error::QueryAliasing {
                context: context.name(),
                component: id.info().map_or("?", |info| info.name()),
            });
        }
        Ok(QueryMut {
            context: context.name(),
            archetypes: &mut context.archetypes,
            groups: &context.groups,
            access,
            matcher: None,
            group: None,
            _q: PhantomData,
        })
    }

    /// Only entities that `matcher` matches too.
    pub fn matching(mut self, matcher: &'w Matcher) -> Self {
        self.matcher = Some(matcher);
        self
    }

    /// Only entities of group `group`.
    ///
    /// # Errors
    /// [`Error::UnknownGroup`] if the group is not one of this context's.
    pub fn in_group(mut self, group: GroupId) -> Result<Self, Error> {
        self.group = Some(group_matcher(self.groups, self.context, group)?);
        Ok(self)
    }

    fn columns(&mut self) -> impl Iterator<Item = ColumnAccess<'_>> + '_ {
        let filter = Filter {
            required: &self.access.required,
            matcher: self.matcher,
            group: self.group,
        };
        self.archetypes
            .iter_mut()
            .filter(move |a| filter.accepts(a))
            .map(ColumnAccess::exclusive)
    }

    /// The items, entity by entity.
    pub fn iter(&mut self) -> impl Iterator<Item = Q::Item<'_>> + '_ {
        rows::<Q, _>(self.columns())
    }

    /// Calls `f` with each entity's items (a little faster than `iter` with a
    /// `for` loop: one tight loop per chunk).
    pub fn for_each(&mut self, f: impl FnMut(Q::Item<'_>)) {
        self.iter().for_each(f);
    }

    /// The items, chunk by chunk, as slices.
    pub fn chunks(&mut self) -> impl Iterator<Item = Q::Chunk<'_>> + '_ {
        ChunkIter::<Q, _>::new(self.columns()).map(|(chunk, _)| chunk)
    }

    /// Calls `f` with each chunk's slices.
    pub fn for_each_chunk(&mut self, f: impl FnMut(Q::Chunk<'_>)) {
        self.chunks().for_each(f);
    }

    /// Calls `f` with each entity's items, spreading chunks over rayon's
    /// thread pool. Needs the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each(&mut self, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        use rayon::iter::{ParallelBridge, ParallelIterator};
        ChunkIter::<Q, _>::new(self.columns())
            .par_bridge()
            .for_each(|(chunk, len)| Q::rows(chunk, len).for_each(&f));
    }

    /// Calls `f` with each chunk's slices, spreading chunks over rayon's
    /// thread pool. Needs the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each_chunk(&mut self, f: impl Fn(Q::Chunk<'_>) + Send + Sync) {
        use rayon::iter::{ParallelBridge, ParallelIterator};
        ChunkIter::<Q, _>::new(self.columns())
            .par_bridge()
            .for_each(|(chunk, _)| f(chunk));
    }

    /// The number of entities the query visits.
    pub fn count(&self) -> usize {
        let filter = Filter {
            required: &self.access.required,
            matcher: self.matcher,
            group: self.group,
        };
        self.archetypes
            .iter()
            .filter(|a| filter.accepts(a))
            .map(Archetype::len)
            .sum()
    }
}

fn group_matcher<'w>(groups: &'w Groups, context: &'static str, group: GroupId) -> Result<&'w Matcher, Error> {
    let index = groups.index_of(group).ok_or(Error::UnknownGroup { context, group })?;
    Ok(&groups.get(index).matcher)
}

impl Context {
    /// A read-only query: every entity with the components of `Q`, e.g.
    /// `game.query::<(Entity, &Position)>()`. See the [`query`](crate::query)
    /// module.
    pub fn query<Q: ReadOnlyQueryParam>(&self) -> Query<'_, Q> {
        Query::new(self)
    }

    /// A query that can write, e.g. `game.query_mut::<(&mut Position,
    /// &Velocity)>()`. Writes are silent: no event fires.
    ///
    /// # Errors
    /// [`Error::QueryAliasing`] if `Q` names a component mutably and also a
    /// second time (`(&mut Position, &Position)`): that would alias.
    pub fn query_mut<Q: QueryParam>(&mut self) -> Result<QueryMut<'_, Q>, Error> {
        QueryMut::new(self)
    }

    /// Changes component `T` of every entity of `group` through `&mut`, passing
    /// the entity's `Q` items too (e.g. `&Velocity`, or `(Entity, &Velocity)`),
    /// and tells observers as if each value had been [`replace`](Context::replace)d:
    /// `ComponentReplaced` (old and new value) and the `Updated` event of each
    /// group watching `T`. When nothing observes, no value is cloned. Returns
    /// the number of entities visited (members of `group` that have `T` and
    /// `Q`'s components).
    ///
    /// # Errors
    /// [`Error::UnknownGroup`]; [`Error::QueryAliasing`] if `Q` reads `T`.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Debug)] struct Position(f32);
    /// struct Velocity(f32);
    /// reactecs::component!(Position, Velocity);
    ///
    /// let mut game = Context::new();
    /// game.create_entity_with((Position(0.0), Velocity(2.0)))?;
    /// let movers = game.group(Matcher::all_of::<(Position, Velocity)>()).id();
    /// let replaced = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    /// let seen = replaced.clone();
    /// game.subscribe(move |event: &ContextEvent<'_>| {
    ///     if let ContextEvent::ComponentReplaced { .. } = event {
    ///         seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ///     }
    /// });
    /// let moved = game.modify_each::<Position, &Velocity>(movers, |pos, vel| pos.0 += vel.0)?;
    /// assert_eq!(moved, 1);
    /// assert_eq!(replaced.load(std::sync::atomic::Ordering::Relaxed), 1);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn modify_each<T, Q>(&mut self, group: GroupId, mut f: impl FnMut(&mut T, Q::Item<'_>)) -> Result<usize, Error>
    where
        T: Component + Clone,
        Q: ReadOnlyQueryParam,
    {
        let index = self.groups.index_of(group).ok_or(Error::UnknownGroup {
            context: self.name,
            group,
        })?;
        let mut access = Access::of::<Q>();
        access.add(T::component_id(), true, true);
        if let Some(id) = access.conflict() {
            return Err(Error::QueryAliasing {
                context: self.name,
                component: id.info().map_or("?", |info| info.name()),
            });
        }
        let id = T::component_id();
        let info = T::component_info();
        let matcher = self.groups.get(index).matcher.clone();
        let mut visited = 0;
        let Context {
            archetypes,
            groups,
            subscribers,
            ..
        } = self;
        for archetype in archetypes.iter_mut() {
            let set = archetype.set();
            if archetype.len() == 0 || !set.is_superset(&access.required) || !matcher.matches_components(set) {
                continue;
            }
            let watchers: SmallVec<[u32; 4]> = groups
                .of_archetype(archetype.id())
                .iter()
                .copied()
                .filter(|&g| groups.get(g).matcher.watches(id) && groups.get(g).handler_count() != 0)
                .collect();
            let observed = !subscribers.is_empty() || !watchers.is_empty();
            let mut columns = ColumnAccess::exclusive(archetype);
            let lens = columns.chunk_lens();
            let mut entities = columns.entities();
            let (Some(mut values), Some(mut state)) = (columns.write::<T>(id), Q::fetch(&mut columns)) else {
                continue;
            };
            for len in lens {
                let chunk = values.next().unwrap_or_default();
                let rows = Q::rows(Q::next_chunk(&mut state, len), len);
                let entity_chunk = entities.next().unwrap_or_default();
                visited += chunk.len();
                for ((value, item), &entity) in chunk.iter_mut().zip(rows).zip(entity_chunk) {
                    if !observed {
                        f(value, item);
                        continue;
                    }
                    let before = value.clone();
                    f(value, item);
                    let (old, new) = (ComponentRef::new(info, &before), ComponentRef::new(info, &*value));
                    for &g in &watchers {
                        let group = groups.id(g);
                        groups.emit(
                            g,
                            &GroupEvent::Updated {
                                group,
                                entity,
                                old,
                                new,
                            },
                        );
                    }
                    if !subscribers.is_empty() {
                        subscribers.emit(&ContextEvent::ComponentReplaced { entity, old, new });
                    }
                }
            }
        }
        Ok(visited)
    }
}
