//! Queries on the context: `query` (reads) and `query_mut` (reads and
//! silent writes). See the [`query`](crate::query) module.

use super::Context;
use crate::error::Error;
use crate::query::{Query, QueryMut, QueryParam, ReadOnlyQueryParam};

impl Context {
    /// A read-only query: every entity with the components of `Q`, e.g.
    /// `game.query::<(Entity, &Position)>()`. See the [`query`](crate::query)
    /// module.
    pub fn query<Q: ReadOnlyQueryParam>(&self) -> Query<'_, Q> {
        Query::new(&self.archetypes, &self.groups, self.routes.membership(), self.name)
    }

    /// A query that can write, e.g. `game.query_mut::<(&mut Position,
    /// &Velocity)>()`. Writes are silent: no event fires.
    ///
    /// # Errors
    /// [`Error::QueryAliasing`] if `Q` names a component mutably and also a
    /// second time (`(&mut Position, &Position)`): that would alias.
    pub fn query_mut<Q: QueryParam>(&mut self) -> Result<QueryMut<'_, Q>, Error> {
        QueryMut::new(&mut self.archetypes, &self.groups, self.routes.membership(), self.name)
    }
}
