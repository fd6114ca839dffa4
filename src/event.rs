//! Context events and subscriptions.
//!
//! A context fires its events synchronously, during the call that causes them,
//! after the storage change is complete (so a handler never sees a half-done
//! change), in this order:
//!
//! | call | events |
//! |---|---|
//! | `create_entity` | `EntityCreated`, then group `Added` for each group it joins (NoneOf-only groups) |
//! | `create_entity_with(bundle)` | `EntityCreated`, group `Added` per group joined, then `ComponentAdded` per component in bundle order |
//! | `add` | group `Added` / `Removed` per group joined or left, then `ComponentAdded` (the new value) |
//! | `remove` / `take` | group `Removed` (with the removed value) / `Added` per group left or joined, then `ComponentRemoved` (the removed value) |
//! | `replace`, component present | group `Updated` per group watching the component, then `ComponentReplaced` (old and new value), then the old value is dropped |
//! | `replace`, component absent | as `add`: a replace of an absent component is an add |
//! | `modify`, `modify_with` | as `replace` (the value before the closure ran is the old one) |
//! | `modify_each` | per entity visited, as `replace` |
//! | `set_flag` | as `add` when setting an unset flag, as `remove` when clearing a set one; none when the flag is already so |
//! | `get_mut`, `query_mut`, an [`EntityMut`](crate::EntityMut)'s `get_mut` and `query` | none: silent writes |
//! | `destroy_entity` | `EntityWillBeDestroyed` (components still readable), group `Removed` per group it was in (components still readable), one `ComponentRemoved` per component by increasing component id, then `EntityDestroyed` |
//! | `destroy_entity`, nothing retains the entity | ... then `EntityReleased` right after `EntityDestroyed` (the slot is free) |
//! | `release` / a collector cleared / a reactive system done, last retain of a destroyed entity | `EntityReleased` (the slot is free) |
//! | `destroy_all_entities` / `reset` | `destroy_entity`'s events for each entity, in [`Context::entities`](crate::Context::entities) order |
//! | `add_group` (new matcher) | `GroupCreated` |
//!
//! Group events ([`GroupEvent`](crate::GroupEvent)) go to the subscribers of
//! each group ([`Context::subscribe_group`](crate::Context::subscribe_group)),
//! in group creation order; every group's membership is updated before the
//! first of them fires. Context events go to [`Context::subscribe`](crate::Context::subscribe)'s
//! handlers.
//!
//! Collectors attached to a group get its events before the group's
//! subscribers do.
//!
//! Handlers get read-only event data and cannot reach the context, so no
//! event is ever stale: what a handler reads is the state the event describes.
//! Handlers run in subscription order. The context's own consumers (groups'
//! collectors and entity indices) are plain data the context updates
//! directly, as each change's compiled route says, with no boxed closure on
//! the hot path; a context with no subscriber, no group handler, no collector
//! and no index pays one branch per change.

use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::id::GroupId;
pub use crate::id::SubscriptionId;
use crate::matcher::Matcher;
use crate::storage::ComponentRef;

/// Something that happened in a context. See the [module docs](self) for the
/// order in which events fire.
///
/// # Example
/// ```
/// use std::sync::mpsc;
/// use reactecs::{Context, ContextEvent};
/// #[derive(Debug)] struct Position(f32, f32);
/// reactecs::component!(Position);
///
/// let (tx, rx) = mpsc::channel();
/// let mut game = Context::new();
/// game.subscribe(move |event: &ContextEvent<'_>| {
///     let line = match event {
///         ContextEvent::EntityCreated { entity } => format!("created {entity}"),
///         ContextEvent::ComponentAdded { component, .. } => format!("added {component:?}"),
///         ContextEvent::ComponentReplaced { old, new, .. } => format!("{old:?} -> {new:?}"),
///         other => format!("{other:?}"),
///     };
///     tx.send(line).unwrap();
/// });
/// let e = game.create_entity_with((Position(0.0, 0.0),))?;
/// game.replace(e, Position(1.0, 0.0))?;
/// let lines: Vec<String> = rx.try_iter().collect();
/// assert_eq!(lines, [format!("created {e}"), "added Position(0.0, 0.0)".into(), "Position(0.0, 0.0) -> Position(1.0, 0.0)".into()]);
/// # Ok::<(), reactecs::Error>(())
/// ```
///
/// Events compare equal when they are the same variant about the same
/// entity, group or values: the component views and entity views they carry
/// compare by what they view, not by value (see [`ComponentRef`]'s
/// equality).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContextEvent<'a> {
    /// An entity was created.
    EntityCreated {
        /// The new entity.
        entity: Entity,
    },
    /// An entity is about to be destroyed; its components are still readable.
    EntityWillBeDestroyed {
        /// The entity and its components.
        entity: EntityRef<'a>,
    },
    /// An entity was destroyed; its handle is now stale.
    EntityDestroyed {
        /// The destroyed entity.
        entity: Entity,
    },
    /// A destroyed entity's last retain went (or nothing retained it when it
    /// was destroyed): its slot is free and may be reused. Fires once per
    /// entity. See [`aerc`](crate::aerc).
    EntityReleased {
        /// The released entity.
        entity: Entity,
    },
    /// A component was added to an entity.
    ComponentAdded {
        /// The entity.
        entity: Entity,
        /// The new value.
        component: ComponentRef<'a>,
    },
    /// A component was removed from an entity (also once per component when
    /// the entity is destroyed).
    ComponentRemoved {
        /// The entity.
        entity: Entity,
        /// The removed value.
        component: ComponentRef<'a>,
    },
    /// A component's value was replaced: by `replace`, or changed in place
    /// by `modify`, `modify_with` or `modify_each`.
    ComponentReplaced {
        /// The entity.
        entity: Entity,
        /// The value before.
        old: ComponentRef<'a>,
        /// The value now.
        new: ComponentRef<'a>,
    },
    /// A group was created by [`Context::add_group`](crate::Context::add_group).
    GroupCreated {
        /// The new group.
        group: GroupId,
        /// Its matcher.
        matcher: &'a Matcher,
    },
}

impl ContextEvent<'_> {
    /// The entity the event is about (`None` for `GroupCreated`).
    pub fn entity(&self) -> Option<Entity> {
        match *self {
            ContextEvent::EntityCreated { entity }
            | ContextEvent::EntityDestroyed { entity }
            | ContextEvent::EntityReleased { entity }
            | ContextEvent::ComponentAdded { entity, .. }
            | ContextEvent::ComponentRemoved { entity, .. }
            | ContextEvent::ComponentReplaced { entity, .. } => Some(entity),
            ContextEvent::EntityWillBeDestroyed { entity } => Some(entity.entity()),
            ContextEvent::GroupCreated { .. } => None,
        }
    }
}

type Handler = Box<dyn FnMut(&ContextEvent<'_>) + Send + Sync>;

/// The user handlers of one context, in subscription order.
#[derive(Default)]
pub(crate) struct Subscribers {
    handlers: Vec<(SubscriptionId, Handler)>,
}

impl Subscribers {
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.handlers.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.handlers.len()
    }

    pub(crate) fn add(&mut self, id: SubscriptionId, handler: Handler) {
        self.handlers.push((id, handler));
    }

    /// Removes a subscription; `false` if there is none with this id.
    pub(crate) fn remove(&mut self, id: SubscriptionId) -> bool {
        let before = self.handlers.len();
        self.handlers.retain(|(have, _)| *have != id);
        self.handlers.len() != before
    }

    /// Calls every handler with `event`.
    #[inline]
    pub(crate) fn emit(&mut self, event: &ContextEvent<'_>) {
        for (_, handler) in &mut self.handlers {
            handler(event);
        }
    }
}
