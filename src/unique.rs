//! Unique components: singletons held by at most one entity, found in O(1).
//!
//! On [`Context`](crate::Context): [`set_unique`](crate::Context::set_unique),
//! [`unique`](crate::Context::unique), [`unique_entity`](crate::Context::unique_entity),
//! [`take_unique`](crate::Context::take_unique); the context's side is in
//! `context/unique.rs`. This file keeps who holds each.

use crate::entity::Entity;
use crate::error::Error;
use crate::id::ComponentId;
use crate::storage::{ComponentInfo, ComponentSet};

/// Who holds each unique component of one context.
pub(crate) struct Uniques {
    /// Every component declared `unique`.
    set: ComponentSet,
    /// Per component id, the entity holding it (unique components only).
    holders: Vec<Option<Entity>>,
}

impl Uniques {
    pub(crate) fn new(infos: &[ComponentInfo]) -> Self {
        Uniques {
            set: infos.iter().filter(|i| i.is_unique()).map(ComponentInfo::id).collect(),
            holders: vec![None; infos.len()],
        }
    }

    /// Whether `set` has a unique component.
    #[inline]
    pub(crate) fn any_in(&self, set: &ComponentSet) -> bool {
        set.intersects(&self.set)
    }

    fn unique_ids<'s>(&'s self, set: &'s ComponentSet) -> impl Iterator<Item = ComponentId> + 's {
        set.iter().filter(|&id| self.set.contains(id))
    }

    /// Checks that no entity holds a unique component of `set`, for an entity
    /// about to be created with exactly `set`.
    pub(crate) fn check_free(&self, set: &ComponentSet, context: &'static str) -> Result<(), Error> {
        for id in self.unique_ids(set) {
            if let Some(holder) = self.holders[id.index()] {
                return Err(held(context, id, holder, None));
            }
        }
        Ok(())
    }

    /// Checks that no entity but `entity` holds unique component `id`.
    pub(crate) fn check_free_for(&self, id: ComponentId, entity: Entity, context: &'static str) -> Result<(), Error> {
        match self.holders[id.index()] {
            Some(holder) if holder != entity => Err(held(context, id, holder, Some(entity))),
            _ => Ok(()),
        }
    }

    pub(crate) fn holder(&self, id: ComponentId) -> Option<Entity> {
        self.holders.get(id.index()).copied().flatten()
    }

    pub(crate) fn set_holder(&mut self, id: ComponentId, holder: Option<Entity>) {
        self.holders[id.index()] = holder;
    }

    /// Records `entity` as the holder of the unique components of `set`.
    #[inline]
    pub(crate) fn hold(&mut self, set: &ComponentSet, entity: Entity) {
        if self.any_in(set) {
            for id in set.iter().filter(|&id| self.set.contains(id)) {
                self.holders[id.index()] = Some(entity);
            }
        }
    }

    /// Forgets `entity` as the holder of the unique components of `set`.
    #[inline]
    pub(crate) fn release(&mut self, set: &ComponentSet, entity: Entity) {
        if self.any_in(set) {
            for id in set.iter().filter(|&id| self.set.contains(id)) {
                debug_assert_eq!(self.holders[id.index()], Some(entity));
                self.holders[id.index()] = None;
            }
        }
    }

    /// Checks the holders against the live entities and their component
    /// sets.
    pub(crate) fn check<'a>(
        &self,
        live: impl Iterator<Item = (Entity, &'a ComponentSet)> + Clone,
    ) -> Result<(), String> {
        for id in self.set.iter() {
            let holders: Vec<Entity> = live
                .clone()
                .filter(|(_, set)| set.contains(id))
                .map(|(e, _)| e)
                .collect();
            if holders.as_slice() != self.holder(id).as_slice() {
                return Err(format!(
                    "unique component {} is held by {holders:?} but recorded as {:?}",
                    id.name(),
                    self.holder(id)
                ));
            }
        }
        Ok(())
    }
}

fn held(context: &'static str, id: ComponentId, holder: Entity, entity: Option<Entity>) -> Error {
    Error::UniqueAlreadyHeld {
        context,
        component: id.name(),
        holder,
        entity,
    }
}
