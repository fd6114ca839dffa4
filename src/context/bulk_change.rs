//! Observed writes over many entities at once, with the guarantees of
//! [`modify_each`](Context::modify_each) (events with the old and the new
//! value, entity indices re-keyed, collectors): `modify_all` over a group
//! with no extra items, `modify_many` over a list of entities,
//! `modify_matching` over what a matcher matches.

use super::Context;
use crate::component::Component;
use crate::entity::Entity;
use crate::error::Error;
use crate::group::GroupId;
use crate::matcher::Matcher;
use crate::query::ReadOnlyQueryParam;

impl Context {
    /// [`modify_each`](Context::modify_each) with nothing but the value:
    /// `game.modify_all::<Health>(group, |h| h.0 += 1)`. Returns the number
    /// of entities visited.
    ///
    /// # Errors
    /// As [`modify_each`](Context::modify_each).
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Debug, PartialEq)] struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let mut game = Context::new();
    /// game.create_entities_with([Health(1), Health(2)])?;
    /// let living = game.add_group(Matcher::all_of::<Health>());
    /// let hurt = game.add_collector(Matcher::all_of::<Health>().updated());
    /// assert_eq!(game.modify_all::<Health>(living, |h| h.0 += 10)?, 2);
    /// assert_eq!(game.collector(hurt)?.len(), 2);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn modify_all<T: Component + Clone>(
        &mut self,
        group: GroupId,
        mut f: impl FnMut(&mut T),
    ) -> Result<usize, Error> {
        self.modify_each::<T, ()>(group, |value, ()| f(value))
    }

    /// [`modify_with`](Context::modify_with) for each of `entities`, in
    /// order: changes `T` through `&mut`, passing the entity's `Q` items
    /// too, and tells observers as `replace` would. Returns the number of
    /// entities changed (all of them, when it succeeds).
    ///
    /// # Errors
    /// The first entity that `modify_with` refuses (stale, lacking `T` or a
    /// component of `Q`, or given a primary key another entity has) stops
    /// the call with that error; the entities before it keep their new
    /// values (their events have fired), that one and those after it are
    /// unchanged. [`Error::QueryAliasing`] if `Q` reads `T`.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Debug, PartialEq)] struct Position(f32);
    /// #[derive(Clone, Debug, PartialEq)] struct Velocity(f32);
    /// reactecs::component!(Position, Velocity);
    ///
    /// let mut game = Context::new();
    /// let movers = game.create_entities_with((0..3).map(|i| (Position(0.0), Velocity(i as f32))))?;
    /// let moved = game.modify_many::<Position, &Velocity>(&movers[1..], |p, v| p.0 += v.0)?;
    /// assert_eq!(moved, 2);
    /// assert_eq!(game.get::<Position>(movers[2])?, &Position(2.0));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn modify_many<T, Q>(
        &mut self,
        entities: &[Entity],
        mut f: impl FnMut(&mut T, Q::Item<'_>),
    ) -> Result<usize, Error>
    where
        T: Component + Clone,
        Q: ReadOnlyQueryParam,
    {
        for &entity in entities {
            self.modify_with::<T, Q, ()>(entity, |value, items| f(value, items))?;
        }
        Ok(entities.len())
    }

    /// [`modify_each`](Context::modify_each) over the entities `matcher`
    /// matches: its group (made if there is none yet, and kept, as
    /// [`add_group`](Context::add_group) does). Returns the number of
    /// entities visited.
    ///
    /// # Errors
    /// As [`modify_each`](Context::modify_each).
    pub fn modify_matching<T, Q>(
        &mut self,
        matcher: Matcher,
        f: impl FnMut(&mut T, Q::Item<'_>),
    ) -> Result<usize, Error>
    where
        T: Component + Clone,
        Q: ReadOnlyQueryParam,
    {
        let group = self.add_group(matcher);
        self.modify_each::<T, Q>(group, f)
    }
}
