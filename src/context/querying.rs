//! Queries on the context: `query` (reads) and `query_mut` (reads and
//! writes that collectors see). See the [`query`](crate::query) module.

use std::borrow::Cow;

use super::Context;
use crate::error::Error;
use crate::query::{Query, QueryMut, QueryParam, QueryPlan, QuerySource, ReadOnlyQueryParam};
use crate::storage::SparseLend;

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
        let plan = match self.queries.get::<Q>() {
            Some(plan) => Cow::Borrowed(plan),
            None => Cow::Owned(
                QueryPlan::of::<Q>(self.name)
                    .expect("a query that only reads never aliases: `Q` is a `ReadOnlyQueryParam`"),
            ),
        };
        Query::new(&self.archetypes, self.query_source(), self.name, plan)
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
    /// loop: write keys with [`modify_all`](Context::modify_all),
    /// [`modify_matching`](Context::modify_matching),
    /// [`modify_each`](Context::modify_each) or
    /// [`get_mut`](Context::get_mut), which keep indices current).
    pub fn query_mut<Q: QueryParam>(&mut self) -> Result<QueryMut<'_, Q>, Error> {
        let plan = self.queries.current::<Q>(&self.archetypes, self.name)?;
        if self.indices.any_keyed()
            && let Some((component, index)) = plan.written().find_map(|id| self.indices.keyed_by(id))
        {
            return Err(Error::KeyedWrite {
                context: self.name,
                component,
                index,
            });
        }
        let source = QuerySource {
            groups: &self.groups,
            membership: self.routes.membership(),
            sparse: SparseLend::exclusive(&mut self.sparse, plan.columns()),
        };
        Ok(QueryMut::new(&mut self.archetypes, source, self.name, plan))
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
