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
//! [`Context::get_mut`](crate::Context::get_mut): no event fires, so groups' subscribers and reactive
//! systems do not hear of them. Use [`Context::modify_each`](crate::Context::modify_each) (or
//! [`Context::replace`](crate::Context::replace)) when they must.
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
use std::marker::PhantomData;

use crate::component::ComponentId;
use crate::error::Error;
use crate::group::{GroupId, Groups};
use crate::matcher::Matcher;
use crate::routes::Membership;
use crate::storage::{Archetype, Archetypes, ColumnAccess, ComponentSet, Visit};

mod iter;
mod param;
mod plan;

use iter::{ChunkIter, rows};
pub(crate) use param::Access;
#[doc(hidden)]
pub use param::{OptionRows, Rows1, Rows2, Rows3, Rows4, Rows5, Rows6, Rows7, Rows8, Rows9, Rows10};
pub use param::{QueryParam, ReadOnlyQueryParam};
pub(crate) use plan::{QueryPlan, QueryPlans};

/// What narrows a query: its plan (columns and required components), an
/// optional matcher and an optional group; and where its archetypes come
/// from. Shared by [`Query`] and [`QueryMut`].
struct Scope<'w> {
    groups: &'w Groups,
    membership: &'w Membership,
    context: &'static str,
    /// The context's plan of the query type, or one made for this query.
    plan: Cow<'w, QueryPlan>,
    matcher: Option<Matcher>,
    /// The group narrowed to (its index).
    group: Option<u32>,
}

impl<'w> Scope<'w> {
    fn new(groups: &'w Groups, membership: &'w Membership, context: &'static str, plan: Cow<'w, QueryPlan>) -> Self {
        Scope {
            groups,
            membership,
            context,
            plan,
            matcher: None,
            group: None,
        }
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
            matcher: self.matcher.as_ref(),
        }
    }

    fn count(&self, archetypes: &Archetypes) -> usize {
        let walk = self.walk(archetypes);
        archetypes
            .visit(walk.visit)
            .filter(|a| walk.accepts(a))
            .map(Archetype::len)
            .sum()
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
    matcher: Option<&'s Matcher>,
}

impl<'s> Walk<'s> {
    /// Whether the query visits `archetype`: it holds entities, with every
    /// required component, that the matcher accepts.
    #[inline(always)]
    fn accepts(&self, archetype: &Archetype) -> bool {
        let set = archetype.set();
        !archetype.is_empty()
            && self.check.iter().all(|&id| Some(id) == self.listed || set.contains(id))
            && self.matcher.is_none_or(|m| m.matches_components(set))
    }

    /// What a placed walk filters by: the matcher only (the archetypes a
    /// plan is placed in have every required component, and the walk skips
    /// empty ones itself).
    #[inline(always)]
    fn placed_filter(&self) -> impl Fn(&ComponentSet) -> bool + use<'s> {
        let matcher = self.matcher;
        move |set| matcher.is_none_or(|m| m.matches_components(set))
    }
}

/// The archetypes a query visits, with access to their columns: those its
/// plan is placed in, or those found otherwise (see [`Scope::walk`]).
enum Walked<P, F> {
    Placed(P),
    Found(F),
}

impl<'w, 'p, P, F> Iterator for Walked<P, F>
where
    P: Iterator<Item = ColumnAccess<'w, 'p>>,
    F: Iterator<Item = ColumnAccess<'w, 'p>>,
{
    type Item = ColumnAccess<'w, 'p>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Walked::Placed(placed) => placed.next(),
            Walked::Found(found) => found.next(),
        }
    }

    /// One loop per kind of walk, not a choice per archetype.
    #[inline]
    fn fold<B, G: FnMut(B, Self::Item) -> B>(self, init: B, f: G) -> B {
        match self {
            Walked::Placed(placed) => placed.fold(init, f),
            Walked::Found(found) => found.fold(init, f),
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
    scope: Scope<'w>,
    /// Rows per parallel task (`None`: [`iter::default_batch`]).
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    batch: Option<usize>,
    _q: PhantomData<fn() -> Q>,
}

impl<'w, Q: ReadOnlyQueryParam> Query<'w, Q> {
    pub(crate) fn new(
        archetypes: &'w Archetypes,
        groups: &'w Groups,
        membership: &'w Membership,
        context: &'static str,
        plan: Cow<'w, QueryPlan>,
    ) -> Self {
        Query {
            archetypes,
            scope: Scope::new(groups, membership, context, plan),
            batch: None,
            _q: PhantomData,
        }
    }

    /// Only entities that `matcher` matches too.
    pub fn matching(mut self, matcher: Matcher) -> Self {
        self.scope.matcher = Some(matcher);
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
            Walked::Placed(plan.walk_placed(archetypes, walk.placed_filter()))
        } else {
            let columns = plan.columns();
            Walked::Found(
                archetypes
                    .visit(walk.visit)
                    .filter(move |a| walk.accepts(a))
                    .map(move |a| ColumnAccess::shared(a, columns)),
            )
        }
    }
    /// The items, entity by entity.
    pub fn iter(&self) -> impl Iterator<Item = Q::Item<'w>> + '_ {
        rows::<Q, _>(self.columns())
    }

    /// Calls `f` with each entity's items: one tight loop per chunk (see
    /// [`QueryMut::for_each`]).
    pub fn for_each(&self, mut f: impl FnMut(Q::Item<'w>)) {
        ChunkIter::<Q, _>::new(self.columns()).for_each(|(chunk, len)| Q::rows(chunk, len).for_each(&mut f));
    }

    /// The items, chunk by chunk, as slices.
    pub fn chunks(&self) -> impl Iterator<Item = Q::Chunk<'w>> + '_ {
        ChunkIter::<Q, _>::new(self.columns()).map(|(chunk, _)| chunk)
    }

    /// Calls `f` with each chunk's slices.
    pub fn for_each_chunk(&self, mut f: impl FnMut(Q::Chunk<'w>)) {
        ChunkIter::<Q, _>::new(self.columns()).for_each(|(chunk, _)| f(chunk));
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
        iter::par_for_each::<Q, _>(self.columns(), batch, f);
    }

    /// Calls `f` with each chunk's slices (a chunk larger than a batch comes
    /// in pieces), spreading them over rayon's thread pool in batches (see
    /// [`batch_size`](Self::batch_size)). Needs the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each_chunk(&self, f: impl Fn(Q::Chunk<'w>) + Send + Sync) {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_for_each_chunk::<Q, _>(self.columns(), batch, f);
    }

    /// The number of entities the query visits.
    pub fn count(&self) -> usize {
        self.scope.count(self.archetypes)
    }
}

/// A query over an exclusively borrowed context: reads and writes. Made by
/// [`Context::query_mut`](crate::Context::query_mut). Writes are silent (see
/// the [module docs](self)).
pub struct QueryMut<'w, Q: QueryParam> {
    archetypes: &'w mut Archetypes,
    scope: Scope<'w>,
    /// Rows per parallel task (`None`: [`iter::default_batch`]).
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    batch: Option<usize>,
    _q: PhantomData<fn() -> Q>,
}

impl<'w, Q: QueryParam> QueryMut<'w, Q> {
    pub(crate) fn new(
        archetypes: &'w mut Archetypes,
        groups: &'w Groups,
        membership: &'w Membership,
        context: &'static str,
        plan: &'w QueryPlan,
    ) -> Self {
        QueryMut {
            archetypes,
            scope: Scope::new(groups, membership, context, Cow::Borrowed(plan)),
            batch: None,
            _q: PhantomData,
        }
    }

    /// Only entities that `matcher` matches too.
    pub fn matching(mut self, matcher: Matcher) -> Self {
        self.scope.matcher = Some(matcher);
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

    fn columns(&mut self) -> impl Iterator<Item = ColumnAccess<'_, '_>> + '_ {
        let walk = self.scope.walk(self.archetypes);
        let plan = &self.scope.plan.columns;
        if walk.placed {
            let matcher = walk.matcher;
            Walked::Placed(plan.walk_placed_mut(self.archetypes, move |set| {
                matcher.is_none_or(|m| m.matches_components(set))
            }))
        } else {
            let columns = plan.columns();
            Walked::Found(
                self.archetypes
                    .visit_mut(walk.visit)
                    .filter(move |a| walk.accepts(a))
                    .map(move |a| ColumnAccess::exclusive(a, columns)),
            )
        }
    }

    /// The items, entity by entity.
    pub fn iter(&mut self) -> impl Iterator<Item = Q::Item<'_>> + '_ {
        rows::<Q, _>(self.columns())
    }

    /// Calls `f` with each entity's items. Prefer it to a `for` loop over
    /// [`iter`](QueryMut::iter) in hot code: it runs one tight loop per chunk,
    /// which the compiler vectorises more readily (about 2.5x faster in the
    /// `simple_iter` bench).
    pub fn for_each(&mut self, mut f: impl FnMut(Q::Item<'_>)) {
        ChunkIter::<Q, _>::new(self.columns()).for_each(|(chunk, len)| Q::rows(chunk, len).for_each(&mut f));
    }

    /// The items, chunk by chunk, as slices.
    pub fn chunks(&mut self) -> impl Iterator<Item = Q::Chunk<'_>> + '_ {
        ChunkIter::<Q, _>::new(self.columns()).map(|(chunk, _)| chunk)
    }

    /// Calls `f` with each chunk's slices.
    pub fn for_each_chunk(&mut self, mut f: impl FnMut(Q::Chunk<'_>)) {
        ChunkIter::<Q, _>::new(self.columns()).for_each(|(chunk, _)| f(chunk));
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
        iter::par_for_each::<Q, _>(self.columns(), batch, f);
    }

    /// Calls `f` with each chunk's slices (a chunk larger than a batch comes
    /// in pieces), spreading them over rayon's thread pool in batches (see
    /// [`batch_size`](Self::batch_size)). Needs the `parallel` feature.
    #[cfg(feature = "parallel")]
    pub fn par_for_each_chunk(&mut self, f: impl Fn(Q::Chunk<'_>) + Send + Sync) {
        let batch = self.batch.unwrap_or_else(|| iter::default_batch(self.count()));
        iter::par_for_each_chunk::<Q, _>(self.columns(), batch, f);
    }

    /// The number of entities the query visits.
    pub fn count(&self) -> usize {
        self.scope.count(self.archetypes)
    }
}
