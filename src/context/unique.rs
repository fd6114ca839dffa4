//! Unique components on the context: `set_unique`, `unique`,
//! `unique_entity`, `take_unique` (see `unique.rs` for who holds each).

use super::Context;
use crate::component::Component;
use crate::entity::Entity;
use crate::error::Error;
use crate::id::ComponentId;

impl Context {
    /// Sets unique component `T` (declared `component!(unique T)`): replaces
    /// the holder's value (firing `ComponentReplaced`), or, if no entity holds
    /// one, creates an entity with just `value` (firing `EntityCreated` and
    /// `ComponentAdded`). Returns the holder.
    ///
    /// # Errors
    /// [`Error::NotUnique`] if `T` is not declared unique, or
    /// [`Error::DuplicatePrimaryKey`] if the value has a key a
    /// [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) has for another
    /// entity; nothing changes.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug, PartialEq)] struct Score(u32);
    /// reactecs::component!(unique Score);
    ///
    /// let mut game = Context::new();
    /// let holder = game.set_unique(Score(1))?;
    /// assert_eq!(game.set_unique(Score(2))?, holder); // same entity, new value
    /// assert_eq!(game.unique::<Score>(), Some(&Score(2)));
    /// assert_eq!(game.unique_entity::<Score>(), Some(holder));
    ///
    /// // A second holder is refused:
    /// let other = game.create_entity();
    /// assert!(matches!(game.add(other, Score(3)), Err(Error::UniqueAlreadyHeld { .. })));
    ///
    /// assert_eq!(game.take_unique::<Score>()?, Score(2));
    /// assert!(!game.is_alive(holder)); // it had nothing else
    /// assert_eq!(game.unique::<Score>(), None);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn set_unique<T: Component>(&mut self, value: T) -> Result<Entity, Error> {
        self.unique_id::<T>()?;
        match self.uniques.holder(T::component_id()) {
            Some(holder) => {
                self.replace(holder, value)?;
                Ok(holder)
            }
            None => self.create_entity_with(value),
        }
    }

    /// The value of unique component `T`, if an entity holds it (O(1): the
    /// holder is recorded, not searched). Always `None` for a component not
    /// declared unique (`set_unique` reports that as [`Error::NotUnique`]).
    /// To write it: [`set_unique`](Context::set_unique) (as `replace`), or
    /// `get_mut` of its [`unique_entity`](Context::unique_entity).
    pub fn unique<T: Component>(&self) -> Option<&T> {
        self.get(self.uniques.holder(T::component_id())?).ok()
    }

    /// The entity holding unique component `T`, if any.
    pub fn unique_entity<T: Component>(&self) -> Option<Entity> {
        self.uniques.holder(T::component_id())
    }

    /// [`take_unique`](Context::take_unique), the value let go of (into
    /// its pool, for a `pooled` component): what
    /// [`CommandBuffer::remove_unique`](crate::CommandBuffer::remove_unique)
    /// plays back as.
    pub(crate) fn remove_unique<T: Component>(&mut self) -> Result<(), Error> {
        let value = self.take_unique::<T>()?;
        self.pools.put(value);
        Ok(())
    }

    /// Removes unique component `T` from its holder and gives it back,
    /// firing `ComponentRemoved`; a holder left with no components is
    /// destroyed too (as Entitas' `RemoveScore()` does), so `set_unique` then
    /// `take_unique` leaves nothing behind (unless a handler panics on the
    /// way: then an emptied holder may stay alive). Drop the value, or hand
    /// a `pooled` one back with [`pool().recycle(value)`](crate::PoolMut::recycle).
    ///
    /// # Errors
    /// [`Error::NotUnique`] if `T` is not declared unique; [`Error::UniqueAbsent`]
    /// if no entity holds it (so a second call is an error); as
    /// [`remove`](Context::remove) otherwise.
    pub fn take_unique<T: Component>(&mut self) -> Result<T, Error> {
        let id = self.unique_id::<T>()?;
        let holder = self.uniques.holder(id).ok_or(Error::UniqueAbsent {
            context: self.name,
            component: T::component_info().name(),
        })?;
        let value = self.take::<T>(holder)?;
        if self.entity(holder).is_ok_and(|view| view.is_empty()) {
            self.destroy_entity(holder)?;
        }
        Ok(value)
    }

    fn unique_id<T: Component>(&self) -> Result<ComponentId, Error> {
        if T::component_info().is_unique() {
            Ok(T::component_id())
        } else {
            Err(Error::NotUnique {
                context: self.name,
                component: T::component_info().name(),
            })
        }
    }
}
