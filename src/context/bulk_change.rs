//! Observed writes over many entities at once: [`modify_each`](Context::modify_each)
//! over a group, the entities a matcher matches, or a list of handles
//! ([`Selection`]), with the guarantees of [`modify`](Context::modify)
//! (events with the old and the new value, entity indices re-keyed,
//! collectors).

use super::Context;
use crate::component::Component;
use crate::entity::Entity;
use crate::error::Error;
use crate::group::GroupId;
use crate::matcher::Matcher;
use crate::query::ReadOnlyQueryParam;

/// The entities a [`modify_each`](Context::modify_each) visits: a group's
/// members, the entities a [`Matcher`] matches (through its group, made if
/// there is none yet and kept, as [`add_group`](Context::add_group) does),
/// or a list of handles, in order. Made by `From`: pass a `GroupId`, a
/// `Matcher`, or `&[Entity]` (also `&Vec<Entity>` and `&[Entity; N]`).
#[derive(Clone, Debug)]
pub enum Selection<'a> {
    /// The members of a group.
    Group(GroupId),
    /// What a matcher matches.
    Matching(Matcher),
    /// These entities, in this order.
    Entities(&'a [Entity]),
}

impl From<GroupId> for Selection<'_> {
    fn from(group: GroupId) -> Self {
        Selection::Group(group)
    }
}

impl From<Matcher> for Selection<'_> {
    fn from(matcher: Matcher) -> Self {
        Selection::Matching(matcher)
    }
}

impl<'a> From<&'a [Entity]> for Selection<'a> {
    fn from(entities: &'a [Entity]) -> Self {
        Selection::Entities(entities)
    }
}

impl<'a> From<&'a Vec<Entity>> for Selection<'a> {
    fn from(entities: &'a Vec<Entity>) -> Self {
        Selection::Entities(entities)
    }
}

impl<'a, const N: usize> From<&'a [Entity; N]> for Selection<'a> {
    fn from(entities: &'a [Entity; N]) -> Self {
        Selection::Entities(entities)
    }
}

impl Context {
    /// Changes component `T` of many entities through `&mut`: the members of
    /// a group, what a [`Matcher`] matches, or a list of handles (see
    /// [`Selection`]). `f` gets the entity's `Q` items too (e.g. `&Velocity`,
    /// `(Entity, &Velocity)`, or `()` for none), and observers are told as if
    /// each value had been [`replace`](Context::replace)d:
    /// `ComponentReplaced` (old and new value) and the `Updated` event of each
    /// group watching `T`; entity indices keyed on `T` move each entity to its
    /// new keys. When nothing observes and no index is keyed on `T`, no value
    /// is cloned. Returns the number of entities visited: for a group or a
    /// matcher, its members that have `T` and `Q`'s components (the others
    /// are passed over); for a list, all of them (each must have them). If
    /// `f`, or the key function of an
    /// index, panics, the entities visited before keep their new values; an
    /// entity whose key function panicked gets its old value back.
    ///
    /// # Errors
    /// [`Error::UnknownGroup`]; [`Error::QueryAliasing`] if `Q` reads `T`.
    /// For a list, the first entity [`modify_with`](Context::modify_with)
    /// refuses (stale, or lacking `T` or a component of `Q`) stops the call
    /// with that error: the entities before it keep their new values, it
    /// and those after it are unchanged.
    /// [`Error::DuplicatePrimaryKey`] if `f` gives an entity a key that a
    /// primary index has for another entity: that entity's `T` is put back
    /// as it was (no event fires for it), and `modify_each` stops there; the
    /// entities visited before it keep their new values (their events have
    /// fired). Keys are checked entity by entity, so two entities cannot swap
    /// keys in one call.
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
    /// let movers = game.add_group(Matcher::all_of::<(Position, Velocity)>());
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
    ///
    /// // The same over a list of handles, or what a matcher matches; `()`
    /// // when `f` needs nothing but the value.
    /// let more = game.create_entities_with((0..3).map(|i| (Position(0.0), Velocity(i as f32))))?;
    /// assert_eq!(game.modify_each::<Position, &Velocity>(&more[1..], |p, v| p.0 += v.0)?, 2);
    /// assert_eq!(game.modify_each::<Position, ()>(Matcher::all_of::<Position>(), |p, ()| p.0 = 0.0)?, 4);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn modify_each<'a, T, Q>(
        &mut self,
        selection: impl Into<Selection<'a>>,
        mut f: impl FnMut(&mut T, Q::Item<'_>),
    ) -> Result<usize, Error>
    where
        T: Component + Clone,
        Q: ReadOnlyQueryParam,
    {
        match selection.into() {
            Selection::Group(group) => self.modify_group::<T, Q>(group, f),
            Selection::Matching(matcher) => {
                let group = self.add_group(matcher);
                self.modify_group::<T, Q>(group, f)
            }
            Selection::Entities(entities) => {
                for &entity in entities {
                    self.modify_with::<T, Q, ()>(entity, |value, items| f(value, items))?;
                }
                Ok(entities.len())
            }
        }
    }
}
