//! Components kept out of archetypes (the `flag` and `sparse` storage
//! kinds): adding and taking them (the entity stays in its row, so the route
//! is the (archetype, component) toggle's, not a transition's), and the
//! Entitas-style flag calls `set_flag` and `is_flag`.
//!
//! `add`, `take`, `remove`, `replace`, `get` and `has` come here through the
//! ordinary calls when the component's kind says so; the events, their order
//! and the errors are the same as for an archetype component.

use super::Context;
use super::change::value_of;
use crate::component::{Component, ComponentId, ComponentRef};
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::event::ContextEvent;
use crate::routes::{Gate, Holding};
use crate::storage::Location;

impl Context {
    /// [`add`](Context::add) of a component kept out of archetypes (the
    /// caller checked that the context accepts it).
    pub(super) fn add_sparse<T: Component>(&mut self, entity: Entity, value: T) -> Result<(), Error> {
        let id = T::component_id();
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive(entity));
        };
        if self.sparse.contains(id, entity.index()) {
            return Err(Error::ComponentAlreadyPresent {
                context: self.name,
                entity,
                component: T::component_info().name(),
            });
        }
        let unique = T::registration().is_unique();
        if unique {
            self.uniques.check_free_for(id, entity, self.name)?;
        }
        if !self.routes.is_idle() {
            let added = ComponentRef::new(T::component_info(), &value);
            self.prepare_toggle(entity, at, id, Some(added))?;
        }
        if self.sparse.insert(T::component_info(), entity.index(), value).is_err() {
            unreachable!("the entity has no `T` yet");
        }
        if unique {
            self.uniques.set_holder(id, Some(entity));
        }
        if !self.routes.is_idle() {
            self.after_toggle(entity, at, id, None);
        }
        Ok(())
    }

    /// [`take`](Context::take) of a component kept out of archetypes.
    pub(super) fn take_sparse<T: Component>(&mut self, entity: Entity) -> Result<T, Error> {
        let id = T::component_id();
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive(entity));
        };
        if !self.sparse.contains(id, entity.index()) {
            return Err(self.absent(entity, id));
        }
        if !self.routes.is_idle() {
            self.prepare_toggle(entity, at, id, None)?;
        }
        let value = self.sparse.take::<T>(id, entity.index()).expect("the entity has a `T`");
        if T::registration().is_unique() {
            self.uniques.set_holder(id, None);
        }
        if !self.routes.is_idle() {
            let removed = ComponentRef::new(T::component_info(), &value);
            self.after_toggle(entity, at, id, Some(removed));
        }
        Ok(value)
    }

    /// Before sparse component `id` is added (with value `added`) to or
    /// removed (`None`) from live `entity` at `at`: the indices it joins
    /// make its keys, and may refuse.
    fn prepare_toggle(
        &mut self,
        entity: Entity,
        at: Location,
        id: ComponentId,
        added: Option<ComponentRef<'_>>,
    ) -> Result<(), Error> {
        let (routes, archetypes, sparse, mut dispatch) = self.split();
        let (route, membership) = routes.of_toggle(at.archetype, id, added.is_some(), archetypes, dispatch.asker());
        if !route.files() {
            return Ok(());
        }
        let archetype = archetypes.get(at.archetype);
        let holding = Holding::Slot(sparse, entity.index());
        let gate = route
            .gated
            .then(|| Gate::toggling(membership, archetype.set(), id, added.is_some(), holding));
        let value_of = value_of(archetype, at.row, sparse, entity);
        dispatch.prepare_filing(route, gate.as_ref(), Some(entity), |c| {
            if c == id { added } else { value_of(c) }
        })
    }

    /// After sparse component `id` was added to live `entity` at `at`
    /// (`removed` `None`) or removed (`removed`, its value): the toggle's
    /// route carried out, then `ComponentAdded` or `ComponentRemoved`.
    fn after_toggle(&mut self, entity: Entity, at: Location, id: ComponentId, removed: Option<ComponentRef<'_>>) {
        let (routes, archetypes, sparse, mut dispatch) = self.split();
        let added = removed.is_none();
        let (route, membership) = routes.of_toggle(at.archetype, id, added, archetypes, dispatch.asker());
        if route.is_empty() {
            return;
        }
        let archetype = archetypes.get(at.archetype);
        let holding = Holding::Slot(sparse, entity.index());
        let gate = route
            .gated
            .then(|| Gate::toggling(membership, archetype.set(), id, added, holding));
        dispatch.file(route, gate.as_ref(), entity);
        dispatch.notify(
            route,
            gate.as_ref(),
            EntityRef::new(entity, archetype, at.row, sparse),
            removed,
        );
        if route.subscribers {
            let event = match removed {
                Some(component) => Some(ContextEvent::ComponentRemoved { entity, component }),
                None => sparse
                    .set(id)
                    .and_then(|set| set.component_ref(entity.index()))
                    .map(|component| ContextEvent::ComponentAdded { entity, component }),
            };
            if let Some(event) = event {
                dispatch.subscribers.emit(&event);
            }
        }
    }

    /// Sets (`true`) or clears flag `T` on the entity, as Entitas' `isT =
    /// value`: adds or removes the zero-sized component, with the events of
    /// [`add`](Context::add) or [`remove`](Context::remove), and does
    /// nothing (no event, no error) when the entity already is as asked. Any
    /// zero-sized component with a `Default` (the value it adds) works; one
    /// declared `flag` never moves the entity.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`]), and the errors of
    /// `add` and `remove` (a declared context's [`Error::WrongContext`], a
    /// unique flag's [`Error::UniqueAlreadyHeld`], a primary index's
    /// [`Error::DuplicatePrimaryKey`]); nothing changes then.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Default)]
    /// struct Burning;
    /// reactecs::component!(flag Burning);
    ///
    /// let mut game = Context::new();
    /// let e = game.create_entity();
    /// let burning = game.collector(Matcher::all_of::<Burning>().added());
    /// game.set_flag::<Burning>(e, true)?;
    /// game.set_flag::<Burning>(e, true)?; // already set: nothing happens
    /// assert!(game.is_flag::<Burning>(e));
    /// assert_eq!(game.get_collector(burning)?.entities(), [e]);
    /// game.set_flag::<Burning>(e, false)?;
    /// assert!(!game.is_flag::<Burning>(e));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn set_flag<T: Component + Default>(&mut self, entity: Entity, value: bool) -> Result<(), Error> {
        const { assert!(size_of::<T>() == 0, "`set_flag` takes a zero-sized component") };
        if !self.is_alive(entity) {
            return Err(self.not_alive(entity));
        }
        match (value, self.has::<T>(entity)) {
            (true, false) => self.add(entity, T::default()),
            (false, true) => self.remove::<T>(entity),
            _ => Ok(()),
        }
    }

    /// Whether the entity is alive and has flag `T` (Entitas' `isT`): the
    /// same as [`has`](Context::has), for zero-sized components.
    #[inline]
    pub fn is_flag<T: Component>(&self, entity: Entity) -> bool {
        const { assert!(size_of::<T>() == 0, "`is_flag` takes a zero-sized component") };
        self.has::<T>(entity)
    }
}
