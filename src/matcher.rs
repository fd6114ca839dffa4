//! `Matcher`: which entities a group holds, as AllOf / AnyOf / NoneOf sets of
//! component ids.

use std::fmt;

use crate::bundle::ComponentTuple;
use crate::id::ComponentId;
use crate::storage::ComponentSet;

/// A description of a set of entities by their components: all of these, at
/// least one of those, none of these.
///
/// Start with [`Matcher::all_of`](crate::Matcher::all_of), [`Matcher::any_of`](crate::Matcher::any_of) or
/// [`Matcher::none_of`](crate::Matcher::none_of) and chain the others in any order (the chaining
/// methods come from [`MatcherChain`], which is in the
/// [prelude](crate::prelude)). Runtime ids work the same way through the
/// `*_ids` variants. Matchers compare and hash by their three sets, so the
/// order in which types were given does not matter, and equal matchers get
/// the same group ([`Context::add_group`](crate::Context::add_group)).
///
/// A matcher with neither AllOf nor AnyOf (only NoneOf, or nothing at all)
/// is allowed, but it matches nearly everything: every entity without the
/// NoneOf components, including entities with no components at all. A
/// component listed both in AllOf and in NoneOf makes a matcher that matches
/// nothing.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// struct Position; struct Velocity; struct Frozen;
/// reactecs::component!(Position, Velocity, Frozen);
///
/// let movers = Matcher::all_of::<(Position, Velocity)>().none_of::<Frozen>();
/// assert_eq!(movers, Matcher::none_of::<Frozen>().all_of::<(Velocity, Position)>());
/// assert_eq!(movers.to_string(), "AllOf(Position, Velocity).NoneOf(Frozen)");
///
/// let mut game = Context::new();
/// let e = game.create_entity_with((Position, Velocity))?;
/// assert!(movers.matches(&game, e));
/// game.add(e, Frozen)?;
/// assert!(!movers.matches(&game, e));
/// # Ok::<(), reactecs::Error>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Matcher {
    all: ComponentSet,
    any: ComponentSet,
    none: ComponentSet,
}

impl Matcher {
    /// Entities that have every component of `C` (a type or a tuple).
    pub fn all_of<C: ComponentTuple>() -> Self {
        Matcher::default().all_of::<C>()
    }

    /// Entities that have at least one component of `C`.
    pub fn any_of<C: ComponentTuple>() -> Self {
        Matcher::default().any_of::<C>()
    }

    /// Entities that have no component of `C`. Alone, this matches nearly
    /// everything (see the type's docs).
    pub fn none_of<C: ComponentTuple>() -> Self {
        Matcher::default().none_of::<C>()
    }

    /// Entities that have every component listed by id.
    pub fn all_of_ids(ids: impl IntoIterator<Item = ComponentId>) -> Self {
        Matcher::default().all_of_ids(ids)
    }

    /// Entities that have at least one component listed by id.
    pub fn any_of_ids(ids: impl IntoIterator<Item = ComponentId>) -> Self {
        Matcher::default().any_of_ids(ids)
    }

    /// Entities that have none of the components listed by id.
    pub fn none_of_ids(ids: impl IntoIterator<Item = ComponentId>) -> Self {
        Matcher::default().none_of_ids(ids)
    }

    /// The AllOf set.
    pub fn all(&self) -> &ComponentSet {
        &self.all
    }

    /// The AnyOf set.
    pub fn any(&self) -> &ComponentSet {
        &self.any
    }

    /// The NoneOf set.
    pub fn none(&self) -> &ComponentSet {
        &self.none
    }

    /// Whether an entity with exactly the components `set` matches.
    #[inline]
    pub fn matches_components(&self, set: &ComponentSet) -> bool {
        set.is_superset(&self.all) && (self.any.is_empty() || set.intersects(&self.any)) && !set.intersects(&self.none)
    }

    /// Whether an entity matches, `has` telling which components it has
    /// (for entities whose components are not all in one set: flag and
    /// sparse components live beside the archetype's).
    #[inline]
    pub(crate) fn matches_by(&self, has: impl Fn(ComponentId) -> bool) -> bool {
        self.all.iter().all(&has) && (self.any.is_empty() || self.any.iter().any(&has)) && !self.none.iter().any(&has)
    }

    /// Whether a replace of component `id` on a member is an update for this
    /// matcher: `id` is in its AllOf or AnyOf set.
    #[inline]
    pub fn watches(&self, id: ComponentId) -> bool {
        self.all.contains(id) || self.any.contains(id)
    }

    /// The components whose replacement on a member is an update: the
    /// AllOf set, then the AnyOf components not in it.
    pub(crate) fn watched(&self) -> impl Iterator<Item = ComponentId> + '_ {
        self.all
            .iter()
            .chain(self.any.iter().filter(|&id| !self.all.contains(id)))
    }
}

/// The chaining half of [`Matcher`](crate::Matcher)'s builder: `Matcher::all_of::<A>()`
/// starts a matcher, `.any_of::<B>()`, `.none_of::<C>()` (and `.all_of` again)
/// add to it, in any order. In the [prelude](crate::prelude).
pub trait MatcherChain: Sized {
    /// Adds the components of `C` to the AllOf set.
    fn all_of<C: ComponentTuple>(self) -> Matcher;
    /// Adds the components of `C` to the AnyOf set.
    fn any_of<C: ComponentTuple>(self) -> Matcher;
    /// Adds the components of `C` to the NoneOf set.
    fn none_of<C: ComponentTuple>(self) -> Matcher;
    /// Adds components by id to the AllOf set.
    fn all_of_ids(self, ids: impl IntoIterator<Item = ComponentId>) -> Matcher;
    /// Adds components by id to the AnyOf set.
    fn any_of_ids(self, ids: impl IntoIterator<Item = ComponentId>) -> Matcher;
    /// Adds components by id to the NoneOf set.
    fn none_of_ids(self, ids: impl IntoIterator<Item = ComponentId>) -> Matcher;
}

impl MatcherChain for Matcher {
    fn all_of<C: ComponentTuple>(mut self) -> Matcher {
        C::for_each_id(|id| {
            self.all.insert(id);
        });
        self
    }

    fn any_of<C: ComponentTuple>(mut self) -> Matcher {
        C::for_each_id(|id| {
            self.any.insert(id);
        });
        self
    }

    fn none_of<C: ComponentTuple>(mut self) -> Matcher {
        C::for_each_id(|id| {
            self.none.insert(id);
        });
        self
    }

    fn all_of_ids(mut self, ids: impl IntoIterator<Item = ComponentId>) -> Matcher {
        ids.into_iter().for_each(|id| {
            self.all.insert(id);
        });
        self
    }

    fn any_of_ids(mut self, ids: impl IntoIterator<Item = ComponentId>) -> Matcher {
        ids.into_iter().for_each(|id| {
            self.any.insert(id);
        });
        self
    }

    fn none_of_ids(mut self, ids: impl IntoIterator<Item = ComponentId>) -> Matcher {
        ids.into_iter().for_each(|id| {
            self.none.insert(id);
        });
        self
    }
}

impl fmt::Display for Matcher {
    /// Reads like `AllOf(Position, Velocity).NoneOf(Frozen)`: each non-empty
    /// set, component names by increasing id. The empty matcher is `AllOf()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = [("AllOf", &self.all), ("AnyOf", &self.any), ("NoneOf", &self.none)];
        let mut first = true;
        for (label, set) in parts.into_iter().filter(|(_, set)| !set.is_empty()) {
            if !first {
                f.write_str(".")?;
            }
            first = false;
            write!(f, "{label}(")?;
            for (i, id) in set.iter().enumerate() {
                let name = id.name();
                write!(f, "{}{name}", if i == 0 { "" } else { ", " })?;
            }
            f.write_str(")")?;
        }
        if first {
            f.write_str("AllOf()")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
