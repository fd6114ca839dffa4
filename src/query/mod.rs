//! Typed queries: tuples of `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`
//! and `Entity`, iterated entity by entity or chunk by chunk (as slices).
//!
//! On [`Context`](crate::Context): [`query`](crate::Context::query),
//! [`query_mut`](crate::Context::query_mut), [`view`](crate::Context::view),
//! [`view_mut`](crate::Context::view_mut) and
//! [`query_mut_and_view`](crate::Context::query_mut_and_view); the
//! context's side is in `context/query.rs` (views: `context/view.rs`,
//! `context/view_mut.rs`).
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
//! Flag and sparse components (declared `flag T` or `sparse T`: kept out of
//! archetypes) are fetched like the others: `&T` and `&mut T` visit only the
//! entities that have one (checked row by row), `Option<&T>` every entity.
//! Their values are looked up by entity, so the chunk methods hand them out
//! as a [`SparseChunk`] or [`SparseChunkMut`] (the chunk's entities beside a
//! view of the set) rather than a slice, and the rows of a chunk that lacks
//! some come as runs.
//!
//! Writes through a query's `&mut T` are seen by collectors (and so by
//! reactive systems), like [`Context::get_mut`](crate::Context::get_mut):
//! every row of each archetype the query visits is stamped as changed when
//! the query starts on that archetype (before any row is handed out, row by
//! row or as a slice, sequentially or in parallel), whether or not it is
//! then written, and even if the loop stops early. No event fires (group handlers and subscribers
//! hear of [`Context::modify_each`](crate::Context::modify_each) and
//! [`Context::replace`](crate::Context::replace), which also re-key entity
//! indices). Flag and sparse components are stamped per entity (the rows
//! that have a value). See the crate docs, "What sees a write".
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
//! the context.
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

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use crate::error::Error;
use crate::group::{GroupId, Groups};
use crate::id::ComponentId;
use crate::matcher::Matcher;
use crate::routes::{Member, Membership};
use crate::storage::{Archetype, Archetypes, ArchetypesLend, ColumnAccess, ComponentSet, SparseLend, Visit};

mod changed_rows;
mod columns;
mod iter;
mod plan;
mod refs;
mod sparse;

pub(crate) use crate::query_param::Access;
#[doc(hidden)]
pub use crate::query_param::{FetchKind, Rows1, Rows2, Rows3, Rows4, Rows5, Rows6, Rows7, Rows8, Rows9, Rows10};
pub use crate::query_param::{QueryParam, ReadOnlyQueryParam};
pub use crate::storage::{SparseChunk, SparseChunkMut, SparseRows, SparseRowsMut};
pub(crate) use changed_rows::for_each_in_blocks;
#[doc(hidden)]
pub use columns::{ColumnMut, ColumnOpt, ColumnOptMut, ColumnRef, InColumns, OptionRows};
use iter::{ChunkIter, RowCheck, RowIter, Runs, rows};
pub(crate) use plan::{QueryPlan, QueryPlans};
#[doc(hidden)]
pub use sparse::{InSparseSets, Present, SparseMut, SparseOpt, SparseOptMut, SparseRef};

/// What narrows a query: its plan (columns and required components), an
/// optional matcher and an optional group; and where its archetypes come
/// from. Shared by [`Query`] and [`QueryMut`]. `P` holds the plan: the
/// context's or one made for the query (`Cow`, for [`Query`]), or the
/// context's (`&QueryPlan`, for [`QueryMut`]: a query that writes is moved
/// out of a `Result` every call, so it is kept small).
struct Scope<'w, P> {
    groups: &'w Groups,
    membership: &'w Membership,
    /// Where flag and sparse components are: for the per-entity check, and
    /// for the parameters that fetch them.
    sparse: SparseLend<'w>,
    context: &'static str,
    /// The plan of the query type.
    plan: P,
    /// The matcher narrowed to, as a membership (archetype filter and
    /// per-entity check). Boxed: a membership is large, and a query that
    /// narrows nothing is moved around whole.
    matcher: Option<Box<Member>>,
    /// The group narrowed to (its index).
    group: Option<u32>,
}

/// What a query reads besides its archetypes: the context's groups, their
/// membership, and the sparse sets.
pub(crate) struct QuerySource<'w> {
    pub(crate) groups: &'w Groups,
    pub(crate) membership: &'w Membership,
    pub(crate) sparse: SparseLend<'w>,
}

impl<'w, P: std::ops::Deref<Target = QueryPlan>> Scope<'w, P> {
    fn new(source: QuerySource<'w>, context: &'static str, plan: P) -> Self {
        Scope {
            groups: source.groups,
            membership: source.membership,
            sparse: source.sparse,
            context,
            plan,
            matcher: None,
            group: None,
        }
    }

    /// The per-entity check, when the group or the matcher names a flag or
    /// sparse component, or the query requires one.
    fn check(&self) -> Option<RowCheck<'_>> {
        let group = self.group.map(|group| self.membership.group(group));
        RowCheck::of(
            &self.plan.required_sparse,
            [group, self.matcher.as_deref()],
            self.sparse,
        )
    }

    /// What `Debug` shows of a query: its parameters, its context, what
    /// narrows it, and how many entities it visits.
    fn debug(&self, f: &mut fmt::Formatter<'_>, kind: &str, params: &str, count: usize) -> fmt::Result {
        f.debug_struct(kind)
            .field("params", &params)
            .field("context", &self.context)
            .field("matching", &self.matcher.as_ref().map(|member| &member.matcher))
            .field(
                "in_group",
                &self.group.map(|group| &self.membership.group(group).matcher),
            )
            .field("count", &count)
            .finish()
    }

    fn set_group(&mut self, group: GroupId) -> Result<(), Error> {
        self.group = Some(self.groups.lookup(group, self.context)?);
        Ok(())
    }

    /// Which archetypes the query visits: where they come from, and what
    /// each must pass besides (see [`Walk::accepts`]). They come from its
    /// group's list; or else from the archetypes its plan is placed in, if
    /// the plan is current; or else from the storage's list of archetypes
    /// with its rarest required component, or every archetype if it requires
    /// none.
    fn walk(&self, archetypes: &Archetypes) -> Walk<'_> {
        let required = &self.plan.required[..];
        let placed = self.group.is_none() && self.plan.is_current(archetypes);
        let (visit, check, listed) = match self.group {
            Some(group) => (Visit::Listed(&self.membership.group(group).archetypes), required, None),
            None if placed => (Visit::Listed(self.plan.columns.placed()), &[][..], None),
            None => {
                let rarest = required
                    .iter()
                    .copied()
                    .min_by_key(|&id| archetypes.with_component(id).len());
                (rarest.map_or(Visit::All, Visit::With), required, rarest)
            }
        };
        Walk {
            visit,
            placed,
            check,
            listed,
            matcher: self.matcher.as_deref(),
        }
    }

    fn count(&self, archetypes: &Archetypes) -> usize {
        let walk = self.walk(archetypes);
        let accepted = archetypes.visit(walk.visit).filter(|a| walk.accepts(a));
        match self.check() {
            None => accepted.map(Archetype::len).sum(),
            Some(check) => accepted
                .map(|a| a.entities().filter(|&e| check.admits(a.set(), e)).count())
                .sum(),
        }
    }
}

/// The archetypes a query visits: see [`Scope::walk`].
#[derive(Clone, Copy)]
struct Walk<'s> {
    visit: Visit<'s>,
    /// `visit` lists the archetypes the plan is placed in.
    placed: bool,
    /// The required components the visited archetypes may lack...
    check: &'s [ComponentId],
    /// ...but for this one, which the storage's list of them all have.
    listed: Option<ComponentId>,
    matcher: Option<&'s Member>,
}

impl<'s> Walk<'s> {
    /// Whether the query visits `archetype`: it holds entities, with every
    /// required component, that the matcher accepts.
    #[inline(always)]
    fn accepts(&self, archetype: &Archetype) -> bool {
        let set = archetype.set();
        !archetype.is_empty()
            && self.check.iter().all(|&id| Some(id) == self.listed || set.contains(id))
            && self.matcher.is_none_or(|m| m.accepts(set))
    }

    /// What a placed walk filters by: the matcher only (the archetypes a
    /// plan is placed in have every required component, and the walk skips
    /// empty ones itself).
    #[inline(always)]
    fn placed_filter(&self) -> impl Fn(&ComponentSet) -> bool + use<'s> {
        let matcher = self.matcher;
        move |set| matcher.is_none_or(|m| m.accepts(set))
    }
}

/// One of two iterators of the same items: the archetypes a query visits
/// (those its plan is placed in, or those found otherwise: see
/// [`Scope::walk`]), or its chunks or rows (all of them, or those passing a
/// per-entity check).
enum OneOf<A, B> {
    First(A),
    Second(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for OneOf<A, B> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            OneOf::First(first) => first.next(),
            OneOf::Second(second) => second.next(),
        }
    }

    /// One loop per kind, not a choice per item.
    #[inline]
    fn fold<Acc, G: FnMut(Acc, T) -> Acc>(self, init: Acc, f: G) -> Acc {
        match self {
            OneOf::First(first) => first.fold(init, f),
            OneOf::Second(second) => second.fold(init, f),
        }
    }
}

/// A query over a shared context: reads only. Made by
/// [`Context::query`](crate::Context::query).
///
/// It visits every entity that has the query's required components (all but
/// the `Option`s), narrowed by [`matching`](Query::matching) and
/// [`in_group`](Query::in_group), in a deterministic order: archetypes in
/// creation order, rows in chunk order.
pub struct Query<'w, Q: ReadOnlyQueryParam> {
    archetypes: &'w Archetypes,
    scope: Scope<'w, Cow<'w, QueryPlan>>,
    /// Rows per parallel task (`None`: [`iter::default_batch`]).
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    batch: Option<usize>,
    _q: PhantomData<fn() -> Q>,
}

impl<'w, Q: ReadOnlyQueryParam> Query<'w, Q> {
    pub(crate) fn new(
        archetypes: &'w Archetypes,
        source: QuerySource<'w>,
        context: &'static str,
        plan: Cow<'w, QueryPlan>,
    ) -> Self {
        Query {
            archetypes,
            scope: Scope::new(source, context, plan),
            batch: None,
            _q: PhantomData,
        }
    }

    /// Only entities that `matcher` matches too (it may name flag and sparse
    /// components: see [`QueryMut::matching`]).
    pub fn matching(mut self, matcher: Matcher) -> Self {
        self.scope.matcher = Some(Box::new(Member::new(matcher, self.archetypes)));
        self
    }

    /// Only entities of group `group` (the query walks the group's
    /// archetypes).
    ///
    /// # Errors
    /// [`Error::UnknownGroup`] if the group is not one of this context's.
    pub fn in_group(mut self, group: GroupId) -> Result<Self, Error> {
        self.scope.set_group(group)?;
        Ok(self)
    }

    fn columns(&self) -> impl Iterator<Item = ColumnAccess<'w, '_>> + '_ {
        let archetypes = self.archetypes;
        let walk = self.scope.walk(archetypes);
        let plan = &self.scope.plan.columns;
        if walk.placed {
            OneOf::First(plan.walk_placed(archetypes, self.scope.sparse, walk.placed_filter()))
        } else {
            let (columns, sparse) = (plan.columns(), self.scope.sparse);
            OneOf::Second(
                archetypes
                    .visit(walk.visit)
                    .filter(move |a| walk.accepts(a))
                    .map(move |a| ColumnAccess::shared(a, sparse, columns)),
            )
        }
    }
    /// The chunks of the visited archetypes, with their row counts: whole
    /// chunks, or (when a per-entity check narrows the query) the runs of
    /// rows that pass it.
    fn chunk_runs(&self) -> impl Iterator<Item = (Q::Chunk<'w>, usize)> + '_ {
        match self.scope.check() {
            None => OneOf::First(ChunkIter::<Q, _>::new(self.columns())),
            Some(check) => OneOf::Second(Runs::<Q, _>::new(self.columns(), check)),
        }
    }

    /// The items, entity by entity.
    pub fn iter(&self) -> impl Iterator<Item = Q::Item<'w>> + '_ {
        match self.scope.check() {
            None => OneOf::First(rows::<Q, _>(self.columns())),
            Some(check) => OneOf::Second(RowIter::<Q, _>::new(Runs::<Q, _>::new(self.columns(), check))),
        }
    }

    /// Calls `f` with each entity's items: one tight loop per chunk (see
    /// [`QueryMut::for_each`]).
    pub fn for_each(&self, mut f: impl FnMut(Q::Item<'w>)) {
        self.each_run(|chunk, len| Q::rows(chunk, len).for_each(&mut f));
    }

    /// Calls `f` with each chunk (or run) of [`chunk_runs`](Self::chunk_runs)
    /// and its length, the common case directly (see [`QueryMut::each_run`]).
    #[inline]
    fn each_run(&self, mut f: impl FnMut(Q::Chunk<'w>, usize)) {
        let walk = self.scope.walk(self.archetypes);
        if walk.placed && self.scope.check().is_none() {
            let placed = self
                .scope
                .plan
                .columns
                .walk_placed(self.archetypes, self.scope.sparse, walk.placed_filter());
            return ChunkIter::<Q, _>::new(placed).for_each(|(chunk, len)| f(chunk, len));
        }
        self.chunk_runs().for_each(|(chunk, len)| f(chunk, len));
    }

    /// The items, chunk by chunk, as slices (runs of rows, within chunks,
    /// when the group or the matcher names flag or sparse components).
    pub fn chunks(&self) -> impl Iterator<Item = Q::Chunk<'w>> + '_ {
        self.chunk_runs().map(|(chunk, _)| chunk)
    }

    /// Calls `f` with each chunk's slices (see [`chunks`](Query::chunks)).
    pub fn for_each_chunk(&self, mut f: impl FnMut(Q::Chunk<'w>)) {
        self.each_run(|chunk, _| f(chunk));
    }

    /// Rows per parallel task for [`par_for_each`](Self::par_for_each) and
    /// [`par_for_each_chunk`](Self::par_for_each_chunk). By default about
    /// eight tasks per thread of rayon's pool, and no fewer than 64 rows
    /// each: right from 2 to 64 cores when every row costs about the same;
    /// set it lower when a few rows cost much more than the rest. Chunks
    /// larger than a batch are split, smaller ones grouped.
    #[cfg(feature = "parallel")]
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch = Some(rows.max(1));
        self
    }

    /// Calls `f` with each entity's items, spreading the rows over rayon's
    /// thread pool in batches (see [`batch_size`](Self::batch_size)). Needs
    /// the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each(&self, f: impl Fn(Q::Item<'w>) + Send + Sync) {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_for_each::<Q, _>(self.chunk_runs(), batch, f);
    }

    /// As [`par_for_each`](Self::par_for_each), `f` also given a state
    /// `init` makes per task (scratch space, reused across the batches one
    /// task runs; rayon's `for_each_init`). Needs the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each_init<S>(
        &self,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'w>) + Send + Sync,
    ) {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_for_each_init::<Q, _, S>(self.chunk_runs(), batch, init, f);
    }

    /// Folds the rows into states in parallel: each batch of rows (see
    /// [`batch_size`](Self::batch_size)) into a state `init` makes, on
    /// rayon's thread pool; gives the states in row order, whatever order
    /// the threads ran in. So a result made by concatenating them (a
    /// `CommandBuffer` per batch, appended in order; lists; sums of
    /// integers) equals the sequential run's. Needs the `parallel` feature.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug)] struct Health(i32);
    /// reactecs::component!(Health);
    ///
    /// let mut game = Context::new();
    /// game.create_entities_with((0..1000).map(|i| (Health(i % 7 - 3),)))?;
    /// // Each batch records the dead into its own buffer...
    /// let buffers = game.query::<(Entity, &Health)>().par_fold(CommandBuffer::new, |buffer, (e, h)| {
    ///     if h.0 <= 0 {
    ///         buffer.destroy_entity(e);
    ///     }
    /// });
    /// // ...played back in row order: as if recorded by one loop.
    /// let mut all = CommandBuffer::new();
    /// for mut buffer in buffers {
    ///     all.append(&mut buffer);
    /// }
    /// all.playback(&mut game)?;
    /// assert_eq!(game.len(), 1000 - 572);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    #[cfg(feature = "parallel")]
    pub fn par_fold<S: Send>(
        &self,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'w>) + Send + Sync,
    ) -> Vec<S> {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_fold::<Q, _, S>(self.chunk_runs(), batch, init, f)
    }

    /// Calls `f` with each chunk's slices (a chunk larger than a batch comes
    /// in pieces), spreading them over rayon's thread pool in batches (see
    /// [`batch_size`](Self::batch_size)). Needs the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each_chunk(&self, f: impl Fn(Q::Chunk<'w>) + Send + Sync) {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_for_each_chunk::<Q, _>(self.chunk_runs(), batch, f);
    }

    /// The number of entities the query visits.
    pub fn count(&self) -> usize {
        self.scope.count(self.archetypes)
    }
}

/// The parameters, the context, the matcher and group narrowed to, and the
/// count: `Query { params: "&game::Position", context: "Game", .. }`.
impl<Q: ReadOnlyQueryParam> fmt::Debug for Query<'_, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.scope.debug(f, "Query", std::any::type_name::<Q>(), self.count())
    }
}

/// A query over an exclusively borrowed context: reads and writes. Made by
/// [`Context::query_mut`](crate::Context::query_mut). Writes fire no event (see
/// the [module docs](self)).
pub struct QueryMut<'w, Q: QueryParam> {
    /// Lent to write the columns the plan writes.
    archetypes: ArchetypesLend<'w>,
    scope: Scope<'w, &'w QueryPlan>,
    /// Rows per parallel task (`None`: [`iter::default_batch`]).
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    batch: Option<usize>,
    _q: PhantomData<fn() -> Q>,
}

impl<'w, Q: QueryParam> QueryMut<'w, Q> {
    pub(crate) fn new(
        archetypes: ArchetypesLend<'w>,
        source: QuerySource<'w>,
        context: &'static str,
        plan: &'w QueryPlan,
    ) -> Self {
        QueryMut {
            archetypes,
            scope: Scope::new(source, context, plan),
            batch: None,
            _q: PhantomData,
        }
    }

    /// Only entities that `matcher` matches too. It may name flag and
    /// sparse components (`Matcher::all_of::<Burning>()`): they are checked
    /// entity by entity, and the chunk methods then hand out runs of
    /// consecutive rows that pass.
    pub fn matching(mut self, matcher: Matcher) -> Self {
        self.scope.matcher = Some(Box::new(Member::new(matcher, self.archetypes.archetypes())));
        self
    }

    /// Only entities of group `group`.
    ///
    /// # Errors
    /// [`Error::UnknownGroup`] if the group is not one of this context's.
    pub fn in_group(mut self, group: GroupId) -> Result<Self, Error> {
        self.scope.set_group(group)?;
        Ok(self)
    }

    /// The archetypes `walk` visits, with read and write access to the
    /// columns `plan` takes.
    fn walk_columns<'a>(
        archetypes: ArchetypesLend<'a>,
        sparse: SparseLend<'a>,
        plan: &'a QueryPlan,
        walk: Walk<'a>,
    ) -> impl Iterator<Item = ColumnAccess<'a, 'a>> + 'a {
        let plan = &plan.columns;
        if walk.placed {
            OneOf::First(archetypes.walk_placed(plan, sparse, walk.placed_filter()))
        } else {
            OneOf::Second(archetypes.visit(walk.visit, sparse, plan.columns(), move |a| walk.accepts(a)))
        }
    }

    /// The chunks of the visited archetypes, with their row counts: whole
    /// chunks, or (when a per-entity check narrows the query) the runs of
    /// rows that pass it.
    fn chunk_runs(&mut self) -> impl Iterator<Item = (Q::Chunk<'_>, usize)> + '_ {
        let (walk, check) = (self.scope.walk(self.archetypes.archetypes()), self.scope.check());
        let columns = Self::walk_columns(self.archetypes.reborrow(), self.scope.sparse, self.scope.plan, walk);
        match check {
            None => OneOf::First(ChunkIter::<Q, _>::new(columns)),
            Some(check) => OneOf::Second(Runs::<Q, _>::new(columns, check)),
        }
    }

    /// Calls `f` with each chunk (or run) of [`chunk_runs`](Self::chunk_runs)
    /// and its length. The common case (a placed plan, no per-entity check)
    /// walks the placed archetypes directly, without building the iterator
    /// that could also have been another: a third of a short query's cost
    /// (`fragmented_iter`).
    #[inline]
    fn each_run(&mut self, mut f: impl FnMut(Q::Chunk<'_>, usize)) {
        let walk = self.scope.walk(self.archetypes.archetypes());
        if walk.placed && self.scope.check().is_none() {
            let placed = self.archetypes.reborrow().walk_placed(
                &self.scope.plan.columns,
                self.scope.sparse,
                walk.placed_filter(),
            );
            return ChunkIter::<Q, _>::new(placed).for_each(|(chunk, len)| f(chunk, len));
        }
        self.chunk_runs().for_each(|(chunk, len)| f(chunk, len));
    }

    /// The items, entity by entity.
    pub fn iter(&mut self) -> impl Iterator<Item = Q::Item<'_>> + '_ {
        let (walk, check) = (self.scope.walk(self.archetypes.archetypes()), self.scope.check());
        let columns = Self::walk_columns(self.archetypes.reborrow(), self.scope.sparse, self.scope.plan, walk);
        match check {
            None => OneOf::First(rows::<Q, _>(columns)),
            Some(check) => OneOf::Second(RowIter::<Q, _>::new(Runs::<Q, _>::new(columns, check))),
        }
    }

    /// Calls `f` with each entity's items. Prefer it to a `for` loop over
    /// [`iter`](QueryMut::iter) in hot code: it runs one tight loop per chunk,
    /// which the compiler vectorises more readily (about 2.5x faster in the
    /// `simple_iter` bench).
    pub fn for_each(&mut self, mut f: impl FnMut(Q::Item<'_>)) {
        self.each_run(|chunk, len| Q::rows(chunk, len).for_each(&mut f));
    }

    /// The items, chunk by chunk, as slices (runs of rows, within chunks,
    /// when the group or the matcher names flag or sparse components).
    pub fn chunks(&mut self) -> impl Iterator<Item = Q::Chunk<'_>> + '_ {
        self.chunk_runs().map(|(chunk, _)| chunk)
    }

    /// Calls `f` with each chunk's slices (see [`chunks`](QueryMut::chunks)).
    pub fn for_each_chunk(&mut self, mut f: impl FnMut(Q::Chunk<'_>)) {
        self.each_run(|chunk, _| f(chunk));
    }

    /// Rows per parallel task for [`par_for_each`](Self::par_for_each) and
    /// [`par_for_each_chunk`](Self::par_for_each_chunk). By default about
    /// eight tasks per thread of rayon's pool, and no fewer than 64 rows
    /// each: right from 2 to 64 cores when every row costs about the same;
    /// set it lower when a few rows cost much more than the rest. Chunks
    /// larger than a batch are split, smaller ones grouped.
    #[cfg(feature = "parallel")]
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch = Some(rows.max(1));
        self
    }

    /// Calls `f` with each entity's items, spreading the rows over rayon's
    /// thread pool in batches (see [`batch_size`](Self::batch_size)). Needs
    /// the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each(&mut self, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_for_each::<Q, _>(self.chunk_runs(), batch, f);
    }

    /// As [`par_for_each`](Self::par_for_each), `f` also given a state
    /// `init` makes per task (see [`Query::par_for_each_init`]). Needs the
    /// `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each_init<S>(
        &mut self,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_for_each_init::<Q, _, S>(self.chunk_runs(), batch, init, f);
    }

    /// Folds the rows into states in parallel, one per batch, given in row
    /// order (see [`Query::par_fold`]): e.g. a `CommandBuffer` per batch
    /// while writing each row. Needs the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_fold<S: Send>(
        &mut self,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) -> Vec<S> {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_fold::<Q, _, S>(self.chunk_runs(), batch, init, f)
    }

    /// Calls `f` with each chunk's slices (a chunk larger than a batch comes
    /// in pieces), spreading them over rayon's thread pool in batches (see
    /// [`batch_size`](Self::batch_size)). Needs the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each_chunk(&mut self, f: impl Fn(Q::Chunk<'_>) + Send + Sync) {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_for_each_chunk::<Q, _>(self.chunk_runs(), batch, f);
    }

    /// The number of entities the query visits.
    pub fn count(&self) -> usize {
        self.scope.count(self.archetypes.archetypes())
    }
}

/// As for [`Query`]: `QueryMut { params: "&mut game::Position", .. }`.
impl<Q: QueryParam> fmt::Debug for QueryMut<'_, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.scope
            .debug(f, "QueryMut", std::any::type_name::<Q>(), self.count())
    }
}
