//! Keeping entity indices current. A change that files an entity runs in
//! two steps: before anything changes, every index concerned makes the keys
//! of the entity's new value (the one call of its key function; a primary
//! index refuses a key another entity has), then, right after the groups'
//! membership is updated and before any event fires, the entity is filed
//! with those keys. So a refused key or a panicking key function leaves the
//! context unchanged.

use super::Context;
use crate::bundle::Bundle;
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::error::Error;
use crate::storage::{ArchetypeId, ComponentRef, Location, TransitionId};

impl Context {
    /// Before adding `value` to `entity`: see
    /// [`prepare_move`](Context::prepare_move).
    pub(super) fn prepare_insert<T: Component>(&mut self, entity: Entity, value: &T) -> Result<(), Error> {
        let from = self.location(entity)?;
        match self.archetypes.add_transition(from.archetype, T::component_id()) {
            Some(transition) => {
                let value = ComponentRef::new(T::component_info(), value);
                self.prepare_move(entity, from, transition, Some(value))
            }
            None => Ok(()), // `add` reports the component present
        }
    }

    /// Before removing component `id` from `entity` (which can make it join
    /// a NoneOf group): see [`prepare_move`](Context::prepare_move).
    pub(super) fn prepare_removal(&mut self, entity: Entity, id: ComponentId) -> Result<(), Error> {
        let from = self.location(entity)?;
        match self.archetypes.remove_transition(from.archetype, id) {
            Some(transition) => self.prepare_move(entity, from, transition, None),
            None => Ok(()), // `take` reports the component absent
        }
    }

    /// Before moving the entity at `from` along `transition`, which adds
    /// `added` (or removes a component, for `None`): the indices of the
    /// groups it will join make its keys.
    fn prepare_move(
        &mut self,
        entity: Entity,
        from: Location,
        transition: TransitionId,
        added: Option<ComponentRef<'_>>,
    ) -> Result<(), Error> {
        let Context {
            groups,
            archetypes,
            indices,
            name,
            ..
        } = self;
        let source = archetypes.get(from.archetype);
        for i in 0..groups.delta(transition, archetypes).len() {
            let change = groups.change(transition, i);
            let keys = &groups.get(change.group).indices;
            if !change.joined || keys.is_empty() {
                continue;
            }
            let value_of = |id| match added {
                Some(value) if value.id() == id => Some(value),
                _ => source.component_ref(id, from),
            };
            indices.prepare(keys, Some(entity), value_of, name)?;
        }
        Ok(())
    }

    /// Before creating an entity from `bundle` in `archetype`: the indices of
    /// its groups make its keys.
    pub(super) fn prepare_spawn<B: Bundle>(&mut self, archetype: ArchetypeId, bundle: &B) -> Result<(), Error> {
        self.groups.sync(&self.archetypes);
        for &group in self.groups.of_archetype(archetype) {
            let keys = &self.groups.get(group).indices;
            if !keys.is_empty() {
                self.indices
                    .prepare(keys, None, |id| bundle.component_ref(id), self.name)?;
            }
        }
        Ok(())
    }

    /// Before replacing component `new` of the entity at `location`: the
    /// indices keyed on it make its new keys.
    pub(super) fn prepare_replace(
        &mut self,
        entity: Entity,
        location: Location,
        new: ComponentRef<'_>,
    ) -> Result<(), Error> {
        let id = new.id();
        for &group in self.groups.of_archetype(location.archetype) {
            let group = self.groups.get(group);
            if !group.indices.is_empty() && group.matcher.watches(id) {
                let value_of = |have| (have == id).then_some(new);
                self.indices
                    .prepare(&group.indices, Some(entity), value_of, self.name)?;
            }
        }
        Ok(())
    }

    /// Files the entity, just moved along `transition`, in the indices of
    /// the `changes` groups it joined (with the keys prepared), and takes it
    /// out of those of the groups it left.
    pub(super) fn index_move(&mut self, entity: Entity, transition: TransitionId, changes: usize) {
        for i in 0..changes {
            let change = self.groups.change(transition, i);
            let keys = &self.groups.get(change.group).indices;
            if keys.is_empty() {
                continue;
            }
            if change.joined {
                self.indices.joined(keys, entity, &mut self.entities);
            } else {
                self.indices.left(keys, entity, &mut self.entities);
            }
        }
    }

    /// Files a new entity of `archetype` in the indices of its groups (with
    /// the keys prepared; `joined`), or takes one about to be destroyed out
    /// of them.
    pub(super) fn index_archetype(&mut self, entity: Entity, archetype: ArchetypeId, joined: bool) {
        for &group in self.groups.of_archetype(archetype) {
            let keys = &self.groups.get(group).indices;
            if keys.is_empty() {
                continue;
            }
            if joined {
                self.indices.joined(keys, entity, &mut self.entities);
            } else {
                self.indices.left(keys, entity, &mut self.entities);
            }
        }
    }

    /// Moves the entity of `archetype`, whose component `id` was just
    /// replaced, to the keys the indices keyed on `id` prepared.
    pub(super) fn index_replace(&mut self, entity: Entity, archetype: ArchetypeId, id: ComponentId) {
        for &group in self.groups.of_archetype(archetype) {
            let group = self.groups.get(group);
            if !group.indices.is_empty() && group.matcher.watches(id) {
                self.indices.replaced(&group.indices, entity, id, &mut self.entities);
            }
        }
    }
}
