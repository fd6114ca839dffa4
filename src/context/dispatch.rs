//! Event dispatch: subscriptions, and the group events of a change (phase
//! two, after every group's membership is updated).

use super::Context;
use crate::collectors::Collectors;
use crate::entity::Entities;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::event::{ContextEvent, SubscriptionId};
use crate::group::{GroupEvent, GroupId};
use crate::groups::Groups;
use crate::storage::{ComponentRef, Location, Moved};

impl Context {
    /// Calls `handler` with every event from now on, after the handlers
    /// subscribed before it. The handler sees read-only data and cannot reach
    /// the context. Handlers are `Send + Sync` so that the context is too (share
    /// state through `Arc<Mutex<_>>`, an `mpsc::Sender`, or atomics).
    ///
    /// # Example
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use reactecs::{Context, ContextEvent};
    /// struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let mut game = Context::new();
    /// let sink = log.clone();
    /// game.subscribe(move |event: &ContextEvent<'_>| {
    ///     if let ContextEvent::ComponentReplaced { old, new, .. } = event {
    ///         let (old, new) = (old.get::<Health>().unwrap().0, new.get::<Health>().unwrap().0);
    ///         sink.lock().unwrap().push((old, new));
    ///     }
    /// });
    /// let e = game.create_entity_with((Health(10),))?;
    /// game.replace(e, Health(7))?;
    /// assert_eq!(*log.lock().unwrap(), [(10, 7)]);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn subscribe(&mut self, handler: impl FnMut(&ContextEvent<'_>) + Send + Sync + 'static) -> SubscriptionId {
        let id = self.next_subscription_id();
        self.subscribers.add(id, Box::new(handler));
        id
    }

    pub(crate) fn next_subscription_id(&mut self) -> SubscriptionId {
        let id = SubscriptionId(self.next_subscription);
        self.next_subscription += 1;
        id
    }

    /// Stops a subscription, to the context or to one of its groups.
    ///
    /// # Errors
    /// [`Error::UnknownSubscription`] if `id` is not subscribed here.
    pub fn unsubscribe(&mut self, id: SubscriptionId) -> Result<(), Error> {
        if self.subscribers.remove(id) || self.groups.unsubscribe(id) {
            Ok(())
        } else {
            Err(Error::UnknownSubscription {
                context: self.name,
                id: id.0,
            })
        }
    }

    /// Updates every group for a move (phase one), then fires the group events
    /// (phase two): `Added` for groups joined, `Removed` (with `removed`, the
    /// removed value, if a removal caused it) for groups left.
    #[inline]
    pub(super) fn after_move(&mut self, entity: Entity, moved: Moved, removed: Option<ComponentRef<'_>>) {
        let changes = self.groups.apply_transition(moved.transition, &self.archetypes);
        if changes != 0 && self.indices.any_active() {
            self.index_move(entity, moved.transition, changes);
        }
        if changes == 0 || !self.groups.has_consumers() {
            return;
        }
        let view = EntityRef::new(entity, self.archetypes.get(moved.to.archetype), moved.to);
        for i in 0..changes {
            let change = self.groups.change(moved.transition, i);
            let event = membership_event(self.groups.id(change.group), change.joined, view, removed);
            emit_group(
                &mut self.groups,
                &mut self.collectors,
                &mut self.entities,
                change.group,
                &event,
            );
        }
    }

    /// Fires `Added` (or `Removed`) to every group of the entity's archetype,
    /// for a creation (or destruction) whose phase one is done.
    pub(super) fn fire_archetype_groups(
        &mut self,
        entity: Entity,
        location: Location,
        removed: Option<ComponentRef<'_>>,
        joined: bool,
    ) {
        if !self.groups.has_consumers() {
            return;
        }
        let view = EntityRef::new(entity, self.archetypes.get(location.archetype), location);
        for i in 0..self.groups.of_archetype(location.archetype).len() {
            let index = self.groups.of_archetype(location.archetype)[i];
            let event = membership_event(self.groups.id(index), joined, view, removed);
            emit_group(
                &mut self.groups,
                &mut self.collectors,
                &mut self.entities,
                index,
                &event,
            );
        }
    }
}

/// Delivers a group event to group `index`'s collectors, then to its
/// subscribers. Takes the context's parts, so callers can hold its storage
/// borrowed.
#[inline(always)]
fn emit_group(
    groups: &mut Groups,
    collectors: &mut Collectors,
    entities: &mut Entities,
    index: u32,
    event: &GroupEvent<'_>,
) {
    let group = groups.get(index);
    if !group.collectors.is_empty() {
        for &(key, trigger) in &group.collectors {
            collectors.deliver(key, trigger, event, entities);
        }
    }
    groups.emit(index, event);
}

/// `Added` if the entity `joined` the group, else `Removed` (with the removed
/// value, if a removal caused it).
fn membership_event<'a>(
    group: GroupId,
    joined: bool,
    entity: EntityRef<'a>,
    removed: Option<ComponentRef<'a>>,
) -> GroupEvent<'a> {
    if joined {
        GroupEvent::Added { group, entity }
    } else {
        GroupEvent::Removed { group, entity, removed }
    }
}

/// A component of group `index`'s matcher was replaced on member `entity`:
/// the group's collectors that take `Updated` collect it. (The group's
/// subscribers get the event separately, only if there are any, so that the
/// values are not looked up for collectors alone.)
#[inline(always)]
pub(crate) fn collect_updated(
    groups: &Groups,
    collectors: &mut Collectors,
    entities: &mut Entities,
    index: u32,
    entity: Entity,
) {
    for &(key, trigger) in &groups.get(index).collectors {
        if trigger.on_updated() {
            collectors.collect(key, entity, entities);
        }
    }
}
