//! `EntityMut`: a view of one live entity, from [`Context::entity_mut`],
//! that reads, writes and changes it.

use std::fmt;

use super::{Context, Mut};
use crate::component::Component;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::query::QueryParam;
use crate::storage::Location;

/// A view of one live entity that reads, writes and changes it, from
/// [`Context::entity_mut`]: the handle is checked once, when the view is
/// made, and the view follows the entity as its changes move it.
///
/// - Reads and writes: [`get`](EntityMut::get),
///   [`get_mut`](EntityMut::get_mut), [`has`](EntityMut::has) and
///   [`query`](EntityMut::query) (several components at once, some
///   mutably). No event fires for a write through them, and collectors
///   see it, as with [`Context::get_mut`].
/// - Changes: [`add`](EntityMut::add), [`remove`](EntityMut::remove),
///   [`take`](EntityMut::take), [`replace`](EntityMut::replace),
///   [`modify`](EntityMut::modify) and [`set_flag`](EntityMut::set_flag)
///   are the `Context` calls of the same names for this entity: the same
///   events, the same groups, collectors and indices kept current, the same
///   errors, and a refused change changes nothing. Those that return the
///   view chain: `view.add(a)?.add(b)?`.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Clone, Debug, PartialEq)] struct Hull(u32);
/// #[derive(Debug, PartialEq)] struct Shield(u32);
/// #[derive(Default)] struct Docked;
/// reactecs::component!(Hull, Shield, flag Docked);
///
/// let mut game = Context::new();
/// let shielded = game.add_group(Matcher::all_of::<Shield>());
/// let ship = game.create_entity_with(Hull(100))?;
/// let mut view = game.entity_mut(ship)?;
/// view.add(Shield(20))?.set_flag::<Docked>(true)?;
/// view.modify(|hull: &mut Hull| hull.0 -= 30)?;
/// assert_eq!(view.take::<Shield>()?, Shield(20));
/// assert!(view.has::<Docked>() && !view.has::<Shield>());
/// assert_eq!(view.get::<Hull>(), Some(&Hull(70)));
/// assert!(game.group(shielded)?.is_empty(), "the group saw the shield come and go");
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct EntityMut<'a> {
    context: &'a mut Context,
    entity: Entity,
    at: Location,
}

impl<'a> EntityMut<'a> {
    /// The view of live `entity`, at `at`.
    pub(super) fn new(context: &'a mut Context, entity: Entity, at: Location) -> Self {
        EntityMut { context, entity, at }
    }

    /// The entity's handle.
    pub fn entity(&self) -> Entity {
        self.entity
    }

    /// The entity's `T`, if it has one (the view's entity is alive: absence
    /// is the only other answer, as for [`EntityRef::get`]).
    pub fn get<T: Component>(&self) -> Option<&T> {
        self.as_readonly().get::<T>()
    }

    /// The entity's `T`, mutably, if it has one: a change collectors see
    /// and indices follow, as [`Context::get_mut`].
    pub fn get_mut<T: Component>(&mut self) -> Option<Mut<'_, T>> {
        self.context.get_mut::<T>(self.entity).ok()
    }

    /// The entity's `T`, mutably, if it has one, without counting as a
    /// change: collectors do not see what is written through it (bevy's
    /// `bypass_change_detection`). For writes that must not wake reactive
    /// systems, such as a system's own bookkeeping on the component it
    /// reacts to. Entity indices keyed on `T` still follow the write (an
    /// index is a lookup, not a consumer of changes).
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug)] struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let mut game = Context::new();
    /// let hurt = game.add_collector(Matcher::all_of::<Health>().updated());
    /// let e = game.create_entity_with(Health(10))?;
    /// if let Some(mut health) = game.entity_mut(e)?.get_mut_untracked::<Health>() {
    ///     health.0 = 12; // regeneration: not news to `hurt`
    /// }
    /// assert!(game.collector(hurt)?.is_empty());
    /// assert_eq!(game.get::<Health>(e)?.0, 12);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn get_mut_untracked<T: Component>(&mut self) -> Option<Mut<'_, T>> {
        self.context.get_mut_tracked::<T>(self.entity, false).ok()
    }

    /// Whether the entity has a `T`.
    pub fn has<T: Component>(&self) -> bool {
        self.as_readonly().has::<T>()
    }

    /// Several of the entity's components at once, as a query's item:
    /// `view.query::<(&mut Position, &Velocity)>()` gives
    /// `(&mut Position, &Velocity)`. `Option<&T>` gives `None` for a
    /// component the entity lacks; `Entity` gives its handle. Collectors
    /// see what is written through it.
    ///
    /// # Errors
    /// [`Error::ComponentAbsent`] naming the first component of `Q` (other
    /// than an `Option`) the entity lacks; [`Error::QueryAliasing`] if `Q`
    /// names a component mutably twice, or mutably and shared;
    /// [`Error::KeyedWrite`] if `Q` names mutably a component an entity
    /// index keys on (the index could not follow the write: use
    /// [`get_mut`](EntityMut::get_mut), whose [`Mut`] re-keys the entity
    /// when dropped, or [`modify`](EntityMut::modify)).
    pub fn query<Q: QueryParam>(&mut self) -> Result<Q::Item<'_>, Error> {
        // The context's plan of `Q`, placed in its archetypes: one lookup.
        self.context.view_mut::<Q>()?.into_item(self.entity)
    }

    /// A read-only view of the entity (as bevy_ecs' `EntityMut::as_readonly`).
    pub fn as_readonly(&self) -> EntityRef<'_> {
        EntityRef::new(
            self.entity,
            self.context.archetypes.get(self.at.archetype),
            self.at.row,
            &self.context.sparse,
        )
    }

    /// Adds `value`, as [`Context::add`] does for this entity.
    ///
    /// # Errors
    /// Those of [`Context::add`]; nothing changes.
    pub fn add<T: Component>(&mut self, value: T) -> Result<&mut Self, Error> {
        let added = self.context.add(self.entity, value);
        self.changed(added)
    }

    /// Removes the entity's `T`, as [`Context::remove`] does.
    ///
    /// # Errors
    /// Those of [`Context::remove`]; nothing changes.
    pub fn remove<T: Component>(&mut self) -> Result<&mut Self, Error> {
        let removed = self.context.remove::<T>(self.entity);
        self.changed(removed)
    }

    /// Removes the entity's `T` and gives it back, as [`Context::take`]
    /// does.
    ///
    /// # Errors
    /// Those of [`Context::take`]; nothing changes.
    pub fn take<T: Component>(&mut self) -> Result<T, Error> {
        let taken = self.context.take::<T>(self.entity);
        self.follow();
        taken
    }

    /// Sets the entity's `T` to `value` (an add if it has none), as
    /// [`Context::replace`] does.
    ///
    /// # Errors
    /// Those of [`Context::replace`]; nothing changes.
    pub fn replace<T: Component>(&mut self, value: T) -> Result<&mut Self, Error> {
        let replaced = self.context.replace(self.entity, value);
        self.changed(replaced)
    }

    /// Changes the entity's `T` in place and fires what a replace fires, as
    /// [`Context::modify`] does; returns what `f` returns.
    ///
    /// # Errors
    /// Those of [`Context::modify`]; nothing changes.
    pub fn modify<T, R>(&mut self, f: impl FnOnce(&mut T) -> R) -> Result<R, Error>
    where
        T: Component + Clone,
    {
        let modified = self.context.modify(self.entity, f);
        self.follow();
        modified
    }

    /// Sets or clears flag `T`, as [`Context::set_flag`] does.
    ///
    /// # Errors
    /// Those of [`Context::set_flag`]; nothing changes.
    pub fn set_flag<T: Component + Default>(&mut self, value: bool) -> Result<&mut Self, Error> {
        let set = self.context.set_flag::<T>(self.entity, value);
        self.changed(set)
    }

    /// Follows the entity after a change, and hands the view back for the
    /// next one.
    fn changed(&mut self, outcome: Result<(), Error>) -> Result<&mut Self, Error> {
        self.follow();
        outcome.map(|()| self)
    }

    /// Reads where the entity is after a change (which may have moved it).
    fn follow(&mut self) {
        self.at = self
            .context
            .entities
            .location(self.entity)
            .expect("changes through a view never destroy its entity, so it keeps a location");
    }
}

impl fmt::Debug for EntityMut<'_> {
    /// As [`EntityRef`]'s: the entity and its components.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_readonly().fmt(f)
    }
}
