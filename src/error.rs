//! `Error`: every misuse of a context, as one enum.

use crate::entity::Entity;

/// Everything that can go wrong when using a context.
///
/// An operation that returns an `Error` has changed nothing: no component was
/// moved, added, dropped or lost, and no event was fired.
///
/// Messages name the context, the entity (`3v1`) and the component type, and
/// say what to do instead.
///
/// # Example
/// ```
/// use reactecs::{Context, Error};
/// #[derive(Debug)]
/// struct Health(u32);
/// reactecs::component!(Health);
///
/// let mut game = Context::with_name("Game");
/// let e = game.create_entity();
/// match game.remove::<Health>(e) {
///     Err(Error::ComponentAbsent { component, .. }) => assert_eq!(component, "Health"),
///     other => panic!("expected ComponentAbsent, got {other:?}"),
/// }
/// let message = game.get::<Health>(e).unwrap_err().to_string();
/// assert_eq!(message, format!("entity {e} in context `Game` has no component `Health`: check with `has`, or use `replace` to add it"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The entity was destroyed, or the handle comes from another context.
    #[error(
        "entity {entity} is not alive in context `{context}`: it was destroyed (check `is_alive` before using a kept handle)"
    )]
    StaleEntity {
        /// The context asked.
        context: &'static str,
        /// The handle given.
        entity: Entity,
    },

    /// `add` of a component the entity already has.
    #[error(
        "entity {entity} in context `{context}` already has component `{component}`: use `replace` to overwrite it"
    )]
    ComponentAlreadyPresent {
        /// The context asked.
        context: &'static str,
        /// The entity.
        entity: Entity,
        /// The component's declared name.
        component: &'static str,
    },

    /// `remove`, `take`, `get` or `get_mut` of a component the entity lacks.
    #[error(
        "entity {entity} in context `{context}` has no component `{component}`: check with `has`, or use `replace` to add it"
    )]
    ComponentAbsent {
        /// The context asked.
        context: &'static str,
        /// The entity.
        entity: Entity,
        /// The component's declared name.
        component: &'static str,
    },

    /// A bundle names the same component type twice.
    #[error(
        "a bundle given to context `{context}` has component `{component}` twice: an entity holds one value per component type"
    )]
    DuplicateComponent {
        /// The context asked.
        context: &'static str,
        /// The component's declared name.
        component: &'static str,
    },

    /// `unsubscribe` with an id that is not (or no longer) subscribed.
    #[error("context `{context}` has no subscription {id}: it was never made here or was already removed")]
    UnknownSubscription {
        /// The context asked.
        context: &'static str,
        /// The id given.
        id: u64,
    },
}
