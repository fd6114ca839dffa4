//! Queries on the context: `query` (reads) and `query_mut` (reads and
//! writes that collectors see). See the [`query`](crate::query) module.

use std::borrow::Cow;

use super::Context;
use super::{View, ViewMut};
use crate::error::Error;
use crate::index::Indices;
use crate::query::{Query, QueryMut, QueryParam, QueryPlan, QuerySource, ReadOnlyQueryParam};
use crate::storage::{ReadLend, SparseLend};

impl Context {
    /// A read-only query: every entity with the components of `Q`, e.g.
    /// `game.query::<(Entity, &Position)>()`. See the [`query`](crate::query)
    /// module.
    ///
    /// It uses the plan [`query_mut`](Context::query_mut) keeps for the same
    /// `Q` (which columns to take; which archetypes to visit, if up to date),
    /// and otherwise works one out for the call.
    ///
    /// A flag or sparse component (declared `flag T` or `sparse T`) is
    /// fetched like any other: the query visits only the entities that have
    /// it (for `&T`), looking each one's value up by entity, and its chunk
    /// methods hand out [`SparseChunk`](crate::query::SparseChunk)s for it.
    pub fn query<Q: ReadOnlyQueryParam>(&self) -> Query<'_, Q> {
        Query::new(&self.archetypes, self.query_source(), self.name, self.read_plan::<Q>())
    }

    /// A query that can write, e.g. `game.query_mut::<(&mut Position,
    /// &Velocity)>()`. Writes fire no event; collectors see them (the rows
    /// of each archetype visited are stamped as the query starts on it: see
    /// the crate docs, "What sees a write").
    ///
    /// The context keeps a plan per query type, made on the first call and
    /// brought up to date when new archetypes have appeared since, so a query
    /// run every frame costs a lookup to set up, and a few loads per
    /// archetype it visits.
    ///
    /// # Errors
    /// [`Error::QueryAliasing`] if `Q` names a component mutably and also a
    /// second time (`(&mut Position, &Position)`): that would alias;
    /// [`Error::KeyedWrite`] if `Q` names mutably a component an active
    /// entity index keys on (the index could not follow writes made in a
    /// loop: write keys with [`modify_each`](Context::modify_each) or
    /// [`get_mut`](Context::get_mut), which keep indices current).
    pub fn query_mut<Q: QueryParam>(&mut self) -> Result<QueryMut<'_, Q>, Error> {
        let plan = self.queries.current::<Q>(&self.archetypes, self.name)?;
        refuse_keyed_writes(&self.indices, plan, self.name)?;
        let source = QuerySource {
            groups: &self.groups,
            membership: self.routes.membership(),
            sparse: SparseLend::exclusive(&mut self.sparse, plan.columns()),
        };
        Ok(QueryMut::new(
            self.archetypes.lend(plan.columns()),
            source,
            self.name,
            plan,
        ))
    }

    /// A query that writes (as [`query_mut`](Context::query_mut)) and, beside
    /// it, a [`View`] that reads other components of any entity by handle:
    /// the query writes each entity's `&mut Steering` while the view reads
    /// any neighbour's `(&Position, &Velocity)`, sequentially or in parallel
    /// (the view is `Sync`). `R` may name what `Q` only reads, not what `Q`
    /// writes: checked once per call.
    ///
    /// The view's [`get`](View::get) finds the entity and its archetype once
    /// for all of `R`'s components.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Copy)] struct Position(f32);
    /// #[derive(Clone, Copy, Default)] struct Steering(f32);
    /// #[derive(Clone, Copy)] struct Leader(Entity);
    /// reactecs::component!(Position, Steering, Leader);
    ///
    /// let mut flock = Context::new();
    /// let lead = flock.create_entity_with((Position(10.0),))?;
    /// let follower = flock.create_entity_with((Position(4.0), Steering::default(), Leader(lead)))?;
    /// let (mut steer, positions) =
    ///     flock.query_mut_and_view::<(&mut Steering, &Leader, &Position), &Position>()?;
    /// steer.for_each(|(steering, leader, at)| {
    ///     steering.0 = positions.get(leader.0).map_or(0.0, |p| p.0 - at.0);
    /// });
    /// assert_eq!(flock.get::<Steering>(follower)?.0, 6.0);
    ///
    /// // The view may not read what the query writes.
    /// assert!(matches!(
    ///     flock.query_mut_and_view::<&mut Position, &Position>(),
    ///     Err(Error::QueryAliasing { component: "Position", .. })
    /// ));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`query_mut`](Context::query_mut); [`Error::QueryAliasing`] if `R`
    /// names a component `Q` writes. Nothing is lent or stamped then.
    pub fn query_mut_and_view<Q: QueryParam, R: ReadOnlyQueryParam>(
        &mut self,
    ) -> Result<(QueryMut<'_, Q>, View<'_, R>), Error> {
        let Context {
            name,
            entities,
            archetypes,
            sparse,
            routes,
            groups,
            indices,
            queries,
            instance,
            ..
        } = self;
        let indices: &Indices = indices;
        let (plan, read_plan) = queries.current_pair::<Q, R>(archetypes, name)?;
        refuse_keyed_writes(indices, plan, name)?;
        let (write, write_sparse, read) = archetypes
            .split(sparse, plan.columns(), read_plan.column_plan())
            .map_err(|id| Error::QueryAliasing {
                context: name,
                component: id.name(),
            })?;
        let source = QuerySource {
            groups,
            membership: routes.membership(),
            sparse: write_sparse,
        };
        Ok((
            QueryMut::new(write, source, name, plan),
            View::new(entities, indices, *instance, read, Cow::Borrowed(read_plan), name),
        ))
    }

    /// A [`View`]: read-only access to the components `R` names of any
    /// entity, by handle (one lookup of the entity for all of them), e.g.
    /// shared by the closures of a parallel loop. See
    /// [`query_mut_and_view`](Context::query_mut_and_view) for a view beside
    /// a query that writes.
    ///
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Copy)] struct Position(f32);
    /// #[derive(Clone, Copy)] struct Velocity(f32);
    /// reactecs::component!(Position, Velocity);
    ///
    /// let mut game = Context::new();
    /// let e = game.create_entity_with((Position(1.0), Velocity(2.0)))?;
    /// let view = game.view::<(&Position, Option<&Velocity>)>();
    /// let (p, v) = view.get(e)?;
    /// assert_eq!((p.0, v.map(|v| v.0)), (1.0, Some(2.0)));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn view<R: ReadOnlyQueryParam>(&self) -> View<'_, R> {
        // The plan a query or view of `R` placed in every archetype so far,
        // or one placed now for this view.
        let plan = match self.read_plan::<R>() {
            Cow::Borrowed(plan) if plan.is_current(&self.archetypes) => Cow::Borrowed(plan),
            plan => Cow::Owned(plan.into_owned().placed(&self.archetypes)),
        };
        View::new(
            &self.entities,
            &self.indices,
            self.instance,
            ReadLend::shared(&self.archetypes, &self.sparse),
            plan,
            self.name,
        )
    }

    /// The plan `query_mut` keeps for `Q`, or one worked out for the call.
    /// Random access by handle to the components `Q` names, reading and
    /// writing, prepared once for many entities: see [`ViewMut`]. Writes
    /// through it are seen by collectors as [`get_mut`](Context::get_mut)'s
    /// are.
    ///
    /// # Errors
    /// [`Error::QueryAliasing`] if `Q` writes a component it also names
    /// elsewhere; [`Error::KeyedWrite`] if `Q` writes a component an entity
    /// index keys on (as [`query_mut`](Context::query_mut)).
    pub fn view_mut<Q: QueryParam>(&mut self) -> Result<ViewMut<'_, Q>, Error> {
        let plan = self.queries.current::<Q>(&self.archetypes, self.name)?;
        refuse_keyed_writes(&self.indices, plan, self.name)?;
        let rows = self.archetypes.lend(plan.columns()).prepared(
            plan.column_plan(),
            SparseLend::exclusive(&mut self.sparse, plan.columns()),
        );
        Ok(ViewMut::new(&self.entities, rows, self.name))
    }

    fn read_plan<Q: ReadOnlyQueryParam>(&self) -> Cow<'_, QueryPlan> {
        match self.queries.get::<Q>() {
            Some(plan) => Cow::Borrowed(plan),
            None => Cow::Owned(
                QueryPlan::of::<Q>(self.name)
                    .expect("a query that only reads never aliases: `Q` is a `ReadOnlyQueryParam`"),
            ),
        }
    }

    /// What a query reads besides the archetypes.
    fn query_source(&self) -> QuerySource<'_> {
        QuerySource {
            groups: &self.groups,
            membership: self.routes.membership(),
            sparse: SparseLend::shared(&self.sparse),
        }
    }
}

/// [`Error::KeyedWrite`] if `plan` writes a component an active entity index
/// of context `context` keys on.
#[inline(always)]
fn refuse_keyed_writes(indices: &Indices, plan: &QueryPlan, context: &'static str) -> Result<(), Error> {
    if indices.any_keyed()
        && let Some((component, index)) = plan.written().find_map(|id| indices.keyed_by(id))
    {
        return Err(Error::KeyedWrite {
            context,
            component,
            index,
        });
    }
    Ok(())
}
