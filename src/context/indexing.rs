//! Keeping entity indices current: filing entities as they join, leave and
//! change in groups (right after the groups' membership is updated, before
//! any event fires), and the primary-key checks made before a change.

use super::Context;
use crate::bundle::Bundle;
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::storage::{ArchetypeId, ComponentRef, Location, TransitionId};

impl Context {
    /// Files the entity, just moved to `to` along `transition`, in the
    /// indices of the `changes` groups it joined, and takes it out of those
    /// of the groups it left.
    pub(super) fn index_move(&mut self, entity: Entity, transition: TransitionId, to: Location, changes: usize) {
        let view = EntityRef::new(entity, self.archetypes.get(to.archetype), to);
        for i in 0..changes {
            let change = self.groups.change(transition, i);
            let keys = &self.groups.get(change.group).indices;
            if keys.is_empty() {
                continue;
            }
            if change.joined {
                self.indices.joined(keys, view, &mut self.entities);
            } else {
                self.indices.left(keys, entity, &mut self.entities);
            }
        }
    }

    /// Files a new entity at `location` in the indices of its archetype's
    /// groups (`joined`), or takes one about to be destroyed out of them.
    pub(super) fn index_archetype(&mut self, entity: Entity, location: Location, joined: bool) {
        let view = EntityRef::new(entity, self.archetypes.get(location.archetype), location);
        for &group in self.groups.of_archetype(location.archetype) {
            let keys = &self.groups.get(group).indices;
            if keys.is_empty() {
                continue;
            }
            if joined {
                self.indices.joined(keys, view, &mut self.entities);
            } else {
                self.indices.left(keys, entity, &mut self.entities);
            }
        }
    }

    /// Moves the entity at `location`, whose component `id` was just
    /// replaced, to its new keys in the indices keyed on `id`.
    pub(super) fn index_replace(&mut self, entity: Entity, location: Location, id: ComponentId) {
        let archetype = self.archetypes.get(location.archetype);
        let Some(new) = archetype.component_ref(id, location) else {
            return;
        };
        for &group in self.groups.of_archetype(location.archetype) {
            let group = self.groups.get(group);
            if !group.indices.is_empty() && group.matcher.watches(id) {
                self.indices
                    .replaced(&group.indices, entity, id, new, &mut self.entities);
            }
        }
    }

    /// Before adding `value` to `entity`: see [`check_primary_move`](Context::check_primary_move).
    pub(super) fn check_primary_insert<T: Component>(&mut self, entity: Entity, value: &T) -> Result<(), Error> {
        let from = self.location(entity)?;
        match self.archetypes.add_transition(from.archetype, T::component_id()) {
            Some(transition) => {
                let value = ComponentRef::new(T::component_info(), value);
                self.check_primary_move(entity, from, transition, Some(value))
            }
            None => Ok(()), // `add` reports the component present
        }
    }

    /// Before removing component `id` from `entity`: removing may make it join
    /// a NoneOf group; see [`check_primary_move`](Context::check_primary_move).
    pub(super) fn check_primary_removal(&mut self, entity: Entity, id: ComponentId) -> Result<(), Error> {
        let from = self.location(entity)?;
        match self.archetypes.remove_transition(from.archetype, id) {
            Some(transition) => self.check_primary_move(entity, from, transition, None),
            None => Ok(()), // `take` reports the component absent
        }
    }

    /// Before moving the entity at `from` along `transition`, which adds
    /// `added` (or removes a component, for `None`): no primary index of a
    /// group it would join may have one of its keys for another entity.
    pub(super) fn check_primary_move(
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
            indices.check(keys, Some(entity), value_of, name)?;
        }
        Ok(())
    }

    /// Before creating an entity from `bundle` in `archetype`: no primary
    /// index of its groups may have one of its keys.
    pub(super) fn check_primary_spawn<B: Bundle>(&mut self, archetype: ArchetypeId, bundle: &B) -> Result<(), Error> {
        self.groups.sync(&self.archetypes);
        for &group in self.groups.of_archetype(archetype) {
            let keys = &self.groups.get(group).indices;
            if !keys.is_empty() {
                self.indices
                    .check(keys, None, |id| bundle.component_ref(id), self.name)?;
            }
        }
        Ok(())
    }

    /// Before replacing component `new` of the entity at `location`: no
    /// primary index keyed on it may have one of the new keys for another
    /// entity.
    pub(super) fn check_primary_replace(
        &self,
        entity: Entity,
        location: Location,
        new: ComponentRef<'_>,
    ) -> Result<(), Error> {
        let id = new.id();
        for &group in self.groups.of_archetype(location.archetype) {
            let group = self.groups.get(group);
            if !group.indices.is_empty() && group.matcher.watches(id) {
                let value_of = |have| (have == id).then_some(new);
                self.indices.check(&group.indices, Some(entity), value_of, self.name)?;
            }
        }
        Ok(())
    }
}
