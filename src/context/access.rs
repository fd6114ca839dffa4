//! Reading and writing one entity: `get` and `get_mut` (one lookup each),
//! `has`, and the entity views `EntityRef` and `EntityMut` (one lookup for
//! many components).

use super::Context;
use super::{EntityMut, Mut};
use crate::component::{Component, typed_id};
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::id::ComponentId;
use crate::matcher::Matcher;
use crate::storage::{ComponentSet, Tick};

impl Context {
    /// The entity's `T`.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity), or [`Error::ComponentAbsent`] if there is no `T`.
    #[inline(always)]
    pub fn get<T: Component>(&self, entity: Entity) -> Result<&T, Error> {
        if T::STORAGE.is_sparse() {
            if self.entities.location(entity).is_some()
                && let Some(value) = self.sparse.get(T::component_id(), entity.index())
            {
                return Ok(value);
            }
            return Err(self.get_error(entity, T::component_id()));
        }
        // A disabled entity's raw archetype id names no archetype.
        if let Some((archetype, row)) = self.entities.raw_location(entity)
            && let Some(archetype) = self.archetypes.try_get(archetype)
            && let Some(value) = archetype.get(typed_id::<T>(), row)
        {
            return Ok(value);
        }
        Err(self.get_error(entity, T::component_id()))
    }

    /// Why [`get`](Context::get) of component `id` found nothing.
    #[cold]
    #[inline(never)]
    fn get_error(&self, entity: Entity, id: ComponentId) -> Error {
        if self.is_alive(entity) {
            self.absent(entity, id)
        } else {
            self.not_alive_for(entity, id)
        }
    }

    /// The entity's `T`, mutably, as a [`Mut`] (use it as a `&mut T`).
    /// Handing it out counts as a change: the collectors watching `T` (an
    /// `added()` or `updated()` trigger on a group naming it) collect the
    /// entity when next read, as if it had been
    /// [`replace`](Context::replace)d. Entity indices keyed on `T` move the
    /// entity to its new keys when the `Mut` drops. No event with the old
    /// and the new value fires (group handlers and subscribers hear only of
    /// `replace` and `modify*`). See the crate docs, "What sees a write";
    /// for a write collectors are not to see,
    /// [`EntityMut::get_mut_untracked`].
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity), or [`Error::ComponentAbsent`] if there is no `T`.
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
    /// game.get_mut::<Health>(e)?.0 -= 3;
    /// assert_eq!(game.collector(hurt)?.entities(), [e]);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    #[inline]
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<Mut<'_, T>, Error> {
        self.get_mut_tracked(entity, true)
    }

    /// [`get_mut`](Context::get_mut), stamping only if `tracked`; re-keying
    /// the indices keyed on `T` when the `Mut` drops.
    #[inline(always)]
    pub(super) fn get_mut_tracked<T: Component>(&mut self, entity: Entity, tracked: bool) -> Result<Mut<'_, T>, Error> {
        if self.indices.any_keyed() && self.indices.keys_on(T::component_id()) {
            self.get_mut_unkeyed::<T>(entity, tracked)?;
            return Ok(Mut::keyed(self, entity));
        }
        self.get_mut_unkeyed(entity, tracked).map(Mut::value)
    }

    /// The entity's `T` as a `&mut`, stamping (or for a flag or sparse
    /// component, pushing to its collectors) only if `tracked`. Indices
    /// keyed on `T` do not follow what is written through it: the caller
    /// re-keys (see [`Mut`]).
    #[inline(always)]
    pub(super) fn get_mut_unkeyed<T: Component>(&mut self, entity: Entity, tracked: bool) -> Result<&mut T, Error> {
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive_for(entity, T::component_id()));
        };
        if T::STORAGE.is_sparse() {
            let tick = if tracked {
                self.archetypes.change_tick()
            } else {
                Tick::NEVER
            };
            return match self.sparse.get_mut(T::component_id(), entity.index(), tick) {
                Some((value, stamp)) => {
                    stamp.mark();
                    Ok(value)
                }
                None => Err(Error::absent(self.name, entity, T::component_info().name())),
            };
        }
        let archetype = self.archetypes.lend_mut(at.archetype);
        let archetype = if tracked { archetype } else { archetype.untracked() };
        match archetype.into_mut(typed_id::<T>(), at.row) {
            Some(value) => Ok(value),
            None => Err(Error::absent(self.name, entity, T::component_info().name())),
        }
    }

    /// Sets the entity's `T` to `value` only if it differs from the current
    /// one, as [`replace`](Context::replace) does (events, indices,
    /// collectors); an equal value changes nothing and nobody hears of it.
    /// Returns whether it was set. Without a `T`, this is an
    /// [`add`](Context::add) (and returns true).
    ///
    /// # Errors
    /// As [`replace`](Context::replace).
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug, PartialEq)] struct Cell(i32, i32);
    /// reactecs::component!(Cell);
    ///
    /// let mut game = Context::new();
    /// let moved = game.add_collector(Matcher::all_of::<Cell>().updated());
    /// let e = game.create_entity_with(Cell(0, 0))?;
    /// assert!(!game.set_if_neq(e, Cell(0, 0))?);
    /// assert!(game.collector(moved)?.is_empty());
    /// assert!(game.set_if_neq(e, Cell(0, 1))?);
    /// assert_eq!(game.collector(moved)?.entities(), [e]);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn set_if_neq<T: Component + PartialEq>(&mut self, entity: Entity, value: T) -> Result<bool, Error> {
        match self.get::<T>(entity) {
            Ok(current) if *current == value => Ok(false),
            Ok(_) | Err(Error::ComponentAbsent { .. }) => self.replace(entity, value).map(|()| true),
            Err(error) => Err(error),
        }
    }

    /// Whether the entity is alive and has a `T`.
    #[inline]
    pub fn has<T: Component>(&self, entity: Entity) -> bool {
        if T::STORAGE.is_sparse() {
            return self.entities.location(entity).is_some() && self.sparse.contains(T::component_id(), entity.index());
        }
        self.component_set(entity)
            .is_some_and(|set| set.contains(T::component_id()))
    }

    /// Whether the entity is alive and has the component with id `id`
    /// (whatever its storage kind).
    #[inline]
    pub(crate) fn has_id(&self, entity: Entity, id: ComponentId) -> bool {
        self.component_set(entity)
            .is_some_and(|set| set.contains(id) || self.sparse.contains(id, entity.index()))
    }

    /// The archetype components of a live entity (not those kept out of
    /// archetypes).
    #[inline]
    pub(crate) fn component_set(&self, entity: Entity) -> Option<&ComponentSet> {
        let at = self.entities.location(entity)?;
        Some(self.archetypes.get(at.archetype).set())
    }

    /// The entity's position in creation order since the context was made or
    /// last [`reset`](Context::reset).
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed,
    /// retained entity).
    pub fn creation_index(&self, entity: Entity) -> Result<u64, Error> {
        match self.entities.location(entity) {
            Some(_) => Ok(self.entities.creation_index(entity)),
            None => Err(self.not_alive(entity)),
        }
    }

    /// A read-only view of the entity and its components.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`]).
    pub fn entity(&self, entity: Entity) -> Result<EntityRef<'_>, Error> {
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive(entity));
        };
        Ok(EntityRef::new(
            entity,
            self.archetypes.get(at.archetype),
            at.row,
            &self.sparse,
        ))
    }

    /// A view of the entity that reads, writes and changes it for one
    /// lookup. Writes through [`get_mut`](EntityMut::get_mut) and
    /// [`query`](EntityMut::query) fire no event but are seen by
    /// collectors, like [`Context::get_mut`]'s; its [`add`](EntityMut::add),
    /// [`replace`](EntityMut::replace), [`modify`](EntityMut::modify) and
    /// the rest fire what the `Context` calls fire.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`]).
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug, PartialEq)] struct Position(f32);
    /// #[derive(Debug, PartialEq)] struct Velocity(f32);
    /// reactecs::component!(Position, Velocity);
    ///
    /// let mut game = Context::new();
    /// let e = game.create_entity_with((Position(0.0), Velocity(2.0)))?;
    /// let mut view = game.entity_mut(e)?;
    /// let (p, v) = view.query::<(&mut Position, &Velocity)>()?;
    /// p.0 += v.0;
    /// if let Some(mut v) = view.get_mut::<Velocity>() {
    ///     v.0 = 0.0;
    /// }
    /// assert_eq!(game.get::<Position>(e)?, &Position(2.0));
    /// assert_eq!(game.get::<Velocity>(e)?, &Velocity(0.0));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn entity_mut(&mut self, entity: Entity) -> Result<EntityMut<'_>, Error> {
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive(entity));
        };
        Ok(EntityMut::new(self, entity, at))
    }
}

impl Matcher {
    /// Whether `entity` is alive in `context` and matches. A destroyed entity
    /// never matches, not even a NoneOf-only matcher.
    pub fn matches(&self, context: &Context, entity: Entity) -> bool {
        context
            .component_set(entity)
            .is_some_and(|set| self.matches_by(|id| set.contains(id) || context.sparse.contains(id, entity.index())))
    }
}
