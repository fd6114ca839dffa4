//! `Error`: every misuse of a context, as one enum.

use crate::aerc::Owner;
use crate::entity::Entity;
use crate::id::{CollectorId, GroupId, SubscriptionId};

/// Everything that can go wrong when using a context.
///
/// An operation that returns an `Error` has changed nothing: no entity was
/// created or destroyed, no component was moved, added, dropped or lost, no
/// event was fired, and no group, collector, entity index, unique holder or
/// retain count changed. Storage may remember what a refused `add`,
/// `replace` or `set_flag` looked up on its way: the archetype the entity
/// would have moved to, left empty and without a chunk, as a later operation
/// would have made it
/// ([`StorageStats::archetypes`](crate::StorageStats::archetypes) counts it).
/// That is a cache, not a change: nothing iterates or matches differently.
/// (Archetypes are never taken back, as in bevy_ecs and hecs: their ids
/// index the compiled change routes and every group's list of archetypes.
/// The route that finds an index refusing a key is the one compiled for the
/// move into that archetype, so the lookup comes first.) A refused creation
/// leaves no archetype: the unique holders are checked before a new
/// bundle's archetype is made.
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
    /// The entity was destroyed (and its slot freed), or the handle is a
    /// command buffer's placeholder.
    #[error(
        "entity {entity} is not alive in context `{context}`{}: it was destroyed (check `is_alive` before using a \
         kept handle)",
        asked_for(component)
    )]
    StaleEntity {
        /// The context asked.
        context: &'static str,
        /// The handle given.
        entity: Entity,
        /// The component the call was about, if it was about one.
        component: Option<&'static str>,
    },

    /// The handle was made by another context (alive or dropped): it names
    /// no entity of this one. Handles are per context; a system that works
    /// on several contexts keeps each context's handles apart.
    #[error(
        "entity {entity} does not belong to context `{context}`{}: it was made by another context (use a handle \
         only with the context that created it)",
        asked_for(component)
    )]
    ForeignEntity {
        /// The context asked.
        context: &'static str,
        /// The handle given.
        entity: Entity,
        /// The component the call was about, if it was about one.
        component: Option<&'static str>,
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

    /// `unsubscribe` with an id that is not (or no longer) one of this
    /// context's subscriptions.
    #[error("context `{context}` has no {id}: it was already removed, or the id comes from another context")]
    UnknownSubscription {
        /// The context asked.
        context: &'static str,
        /// The id given.
        id: SubscriptionId,
    },

    /// A `GroupId` that is not one of this context's groups.
    #[error("context `{context}` has no {group}: the id comes from another context")]
    UnknownGroup {
        /// The context asked.
        context: &'static str,
        /// The id given.
        group: GroupId,
    },

    /// `single_entity` on a group holding more than one entity.
    #[error("group {group} in context `{context}` holds {count} entities, not at most one")]
    NotSingleEntity {
        /// The context asked.
        context: &'static str,
        /// The group's matcher, printed.
        group: String,
        /// How many entities it holds.
        count: usize,
    },

    /// A query that names a component mutably and a second time, which would
    /// alias (`(&mut Position, &Position)`).
    #[error(
        "a query on context `{context}` borrows component `{component}` mutably and a second time: \
         name each component once in a query that writes it"
    )]
    QueryAliasing {
        /// The context asked.
        context: &'static str,
        /// The component's declared name.
        component: &'static str,
    },

    /// A second entity was to get a unique component.
    #[error(
        "unique component `{component}` is already held by entity {holder} in context `{context}`: no other \
         entity can get it; use `set_unique` to change its value"
    )]
    UniqueAlreadyHeld {
        /// The context asked.
        context: &'static str,
        /// The component's declared name.
        component: &'static str,
        /// The entity that holds it.
        holder: Entity,
        /// The entity that was to get it (`None` when it was to be created
        /// with it).
        entity: Option<Entity>,
    },

    /// A unique-component operation on a component not declared `unique`.
    #[error(
        "component `{component}` is not unique: declare it with `reactecs::component!(unique {component})` \
         to use it with `set_unique` in context `{context}`"
    )]
    NotUnique {
        /// The context asked.
        context: &'static str,
        /// The component's declared name.
        component: &'static str,
    },

    /// `take_unique` when no entity holds the unique component.
    #[error("no entity holds unique component `{component}` in context `{context}`: set it with `set_unique` first")]
    UniqueAbsent {
        /// The context asked.
        context: &'static str,
        /// The component's declared name.
        component: &'static str,
    },

    /// Use of a destroyed entity that is kept only because something still
    /// retains it (AERC): its components are gone.
    #[error(
        "entity {entity} in context `{context}` was destroyed{}; its slot is kept only because it is still \
         retained (check `aerc().is_enabled(e)` before using a retained handle)",
        asked_for(component)
    )]
    EntityDisabled {
        /// The context asked.
        context: &'static str,
        /// The entity.
        entity: Entity,
        /// The component the call was about, if it was about one.
        component: Option<&'static str>,
    },

    /// A second `retain` by the same owner (safe AERC mode).
    #[error(
        "entity {entity} in context `{context}` is already retained by {owner}: an owner retains an entity once; \
         release it before retaining again"
    )]
    AlreadyRetained {
        /// The context asked.
        context: &'static str,
        /// The entity.
        entity: Entity,
        /// The owner given.
        owner: Owner,
    },

    /// A `release` by an owner that holds no retain (safe mode), or of an
    /// entity whose count is zero (fast mode).
    #[error("entity {entity} in context `{context}` is not retained by {owner}: release only what you retained")]
    NotRetained {
        /// The context asked.
        context: &'static str,
        /// The entity.
        entity: Entity,
        /// The owner given.
        owner: Owner,
    },

    /// `retain` or `release` with the owner of a collector or a reactive
    /// system: only the context may use those.
    #[error(
        "{owner} in context `{context}` belongs to a collector or a reactive system: retain and release \
         with an `Owner::new()` of your own"
    )]
    InternalOwner {
        /// The context asked.
        context: &'static str,
        /// The owner given.
        owner: Owner,
    },

    /// A retain that would overflow the entity's retain count (2^32 - 1).
    #[error("entity {entity} in context `{context}` cannot be retained more than 4294967295 times")]
    TooManyRetains {
        /// The context asked.
        context: &'static str,
        /// The entity.
        entity: Entity,
    },

    /// `reset` while entities are retained.
    #[error(
        "context `{context}` cannot reset: {count} entities are still retained; clear collectors \
         (`Systems::clear_reactive_systems`) and release your retains first"
    )]
    EntitiesRetained {
        /// The context asked.
        context: &'static str,
        /// How many entities hold at least one retain.
        count: usize,
    },

    /// A `CollectorId` that is not (or no longer) one of this context's
    /// collectors.
    #[error("context `{context}` has no {collector}: it was removed, or the id comes from another context")]
    UnknownCollector {
        /// The context asked.
        context: &'static str,
        /// The id given.
        collector: CollectorId,
    },

    /// A component added to a declared context that its declaration does not
    /// name.
    #[error(
        "component `{component}` is not declared for context `{context}` (it is declared for {declared:?}): \
         add `{context}` to the contexts named in its one declaration, `reactecs::component!(..., {context}: {component})`"
    )]
    WrongContext {
        /// The context asked.
        context: &'static str,
        /// The component's declared name.
        component: &'static str,
        /// The contexts the component is declared for.
        declared: &'static [&'static str],
    },

    /// A change (or a new or re-activated primary index) that would give a
    /// second entity a key a primary index has for another.
    #[error(
        "primary index `{index}` in context `{context}` has key {key} for entity {holder} already, so {} \
         cannot have it too: a primary key belongs to one entity; change or remove {holder}'s key first, \
         or use an `EntityIndex` for keys shared by several entities",
        entity.map_or_else(|| "a new entity".to_owned(), |e| format!("entity {e}"))
    )]
    DuplicatePrimaryKey {
        /// The context asked.
        context: &'static str,
        /// The index's name.
        index: &'static str,
        /// The key, printed with `Debug`.
        key: String,
        /// The entity that has the key.
        holder: Entity,
        /// The entity that was to get it (`None` when it was to be created
        /// with it).
        entity: Option<Entity>,
    },

    /// [`Context::query_mut`](crate::Context::query_mut) or
    /// [`EntityMut::query`](crate::EntityMut::query) was asked to lend
    /// mutably a component an active entity index keys on: the index could
    /// not follow writes made through it. Nothing was lent.
    #[error(
        "context `{context}`: a query cannot lend `{component}` mutably, since entity index `{index}` keys on it \
         and could not follow the writes; write it with `get_mut` (its `Mut` re-keys the entity when dropped), \
         `modify`, or over many entities `modify_each` (a group, a matcher or a list of handles)"
    )]
    KeyedWrite {
        /// The context asked.
        context: &'static str,
        /// The component's name.
        component: &'static str,
        /// The name of an index keyed on it.
        index: &'static str,
    },

    /// A write through `&mut` (`get_mut`, `query_mut`) gave
    /// `entity` a key that primary index `index` has for `holder`. Found
    /// when the index caught up with the write, and reported by the next
    /// read of the index: `holder` keeps the key and `entity` is not in the
    /// index until a later change gives it a free key. The index stays
    /// usable; the read after this one answers normally.
    #[error(
        "primary index `{index}` in context `{context}`: a write through `&mut` gave entity {entity} key {key}, \
         which entity {holder} has; {holder} keeps it and {entity} is out of the index until its key changes \
         (write primary keys with `replace` or `modify`, which refuse a key in use before anything changes)"
    )]
    PrimaryKeyConflict {
        /// The context asked.
        context: &'static str,
        /// The index's name.
        index: &'static str,
        /// The key, printed with `Debug`.
        key: String,
        /// The entity that has the key.
        holder: Entity,
        /// The entity written to have it too, now out of the index.
        entity: Entity,
    },

    /// The key function of index `index` panicked while it re-keyed
    /// `entity` after a write through `&mut` (a [`Mut`](crate::Mut)
    /// dropped), and the thread was already unwinding from another panic, so
    /// the key function's panic could not go on. Reported by the next read
    /// of the index: `entity` is out of the index until a later change files
    /// it again. The index stays usable; the read after this one answers
    /// normally.
    #[error(
        "index `{index}` in context `{context}`: its key function panicked re-keying entity {entity}          while the thread was unwinding from another panic; {entity} is out of the index until its key changes"
    )]
    KeyFunctionPanicked {
        /// The context asked.
        context: &'static str,
        /// The index's name.
        index: &'static str,
        /// The entity being re-keyed, now out of the index.
        entity: Entity,
    },

    /// An [`IndexId`](crate::IndexId) or a name that is not (or no longer)
    /// one of this context's indices.
    #[error(
        "context `{context}` has no {index}: it was removed, never added here, or the id comes from another context"
    )]
    UnknownIndex {
        /// The context asked.
        context: &'static str,
        /// The id, or the name, given.
        index: String,
    },

    /// [`ComponentId::from_index`](crate::ComponentId::from_index) with an
    /// index no declared component has.
    #[error(
        "no component is declared with index {index}: the {declared} declared components have indices below \
         {declared}; take ids from `T::component_id()` or `ComponentInfo::all()`"
    )]
    UnknownComponent {
        /// The index given.
        index: usize,
        /// How many components the program declares.
        declared: usize,
    },

    /// An index asked for by name as a type it is not.
    #[error(
        "index `{index}` in context `{context}` is a {found}, not a `{expected}`: ask for it with its own type and key type"
    )]
    WrongIndexType {
        /// The context asked.
        context: &'static str,
        /// The index's name.
        index: &'static str,
        /// What it is (`EntityIndex` or `PrimaryEntityIndex`).
        found: &'static str,
        /// The type asked for.
        expected: &'static str,
    },

    /// `add_index` with a name another index of the context has.
    #[error("context `{context}` has an index named `{index}` already: give each index its own name")]
    DuplicateIndexName {
        /// The context asked.
        context: &'static str,
        /// The name.
        index: &'static str,
    },

    /// An index whose matcher does not require the component its keys are
    /// made from.
    #[error(
        "index `{index}` in context `{context}` makes its keys from `{component}`, but its matcher {matcher} does \
         not require it: add `{component}` to the matcher's AllOf set"
    )]
    IndexNotKeyed {
        /// The context asked.
        context: &'static str,
        /// The index's name.
        index: &'static str,
        /// The key component's declared name.
        component: &'static str,
        /// The matcher, printed.
        matcher: String,
    },

    /// Commands of a [`CommandBuffer`](crate::CommandBuffer) that failed at
    /// playback. Each failed command changed nothing; every other command
    /// of the buffer was applied.
    #[error(
        "{} of the commands played back on context `{context}` failed and changed nothing (the others were \
         applied): {}; see `failures` for each command's error",
        failures.len(),
        list_failures(failures)
    )]
    CommandsFailed {
        /// The context played back on.
        context: &'static str,
        /// The failed commands, in recorded order.
        failures: Vec<CommandFailure>,
    },

    /// A command buffer command on a placeholder entity that names no entity
    /// at playback.
    #[error(
        "placeholder {placeholder} names no entity in context `{context}`: {}",
        creator.map_or_else(
            || "no command before it in its command buffer creates it; use a placeholder only in the buffer \
                that made it (or one that buffer was appended to)".to_owned(),
            |index| format!("the command that was to create it (#{index}) failed"),
        )
    )]
    UnresolvedPlaceholder {
        /// The context played back on.
        context: &'static str,
        /// The placeholder given.
        placeholder: Entity,
        /// The position in the buffer of the command that was to create it,
        /// if the buffer has one.
        creator: Option<usize>,
    },

    /// [`Contexts::get_many_mut`](crate::Contexts::get_many_mut) asked for
    /// the same context twice.
    #[error(
        "context `{context}` is asked for twice by `get_many_mut`: one `&mut Context` per context, so name each \
         context once"
    )]
    ContextRequestedTwice {
        /// The context named twice.
        context: &'static str,
        /// Every context asked for, in the order given.
        requested: Vec<&'static str>,
    },

    /// [`Context::restore`](crate::Context::restore) read input that is not
    /// a snapshot this program can restore (feature `serde`). The context
    /// is left without entities.
    #[cfg(feature = "serde")]
    #[error(
        "cannot restore a snapshot into context `{context}`: {reason} (the context is left empty; check that the input is a whole snapshot, in the format it was written in, of component types listed in `reactecs::snapshot!`)"
    )]
    InvalidSnapshot {
        /// The context restored into.
        context: &'static str,
        /// What was wrong: the format's error message, or which check
        /// failed.
        reason: String,
    },

    /// [`Context::restore`](crate::Context::restore) into a context that
    /// has entities (feature `serde`).
    #[cfg(feature = "serde")]
    #[error(
        "cannot restore a snapshot into context `{context}`: it has {entities} entities (alive, or destroyed and still retained); restore into a new context, or `reset` this one first"
    )]
    RestoreTargetNotEmpty {
        /// The context restored into.
        context: &'static str,
        /// How many entities it has.
        entities: usize,
    },

    /// [`Context::snapshot_of`](crate::Context::snapshot_of) or
    /// [`Context::restore_of`](crate::Context::restore_of) with a type list
    /// a snapshot cannot hold (feature `serde`): a type not listed in
    /// [`snapshot!`](crate::snapshot!), a type named twice in the list, or
    /// one whose declared name another listed type has. Nothing is written
    /// or changed.
    #[cfg(feature = "serde")]
    #[error("component `{component}` cannot be in a typed snapshot of context `{context}`: {reason}")]
    SnapshotTypeRefused {
        /// The context asked.
        context: &'static str,
        /// The component's declared name.
        component: &'static str,
        /// Why, and what to do instead.
        reason: &'static str,
    },
}

/// One command of a [`CommandBuffer`](crate::CommandBuffer) that failed at
/// playback, in [`Error::CommandsFailed`].
///
/// `Display` prints its position, what it was to do and why it failed, e.g.
/// ``#2 add `Position` to 3v1: entity 3v1 is not alive in context `Game`: ...``.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandFailure {
    /// The command's position in the buffer (0 for the first recorded).
    pub index: usize,
    /// What the command was to do, e.g. ``add `Position` to 3v1``;
    /// placeholders print as `p0`, `p1`, ...
    pub command: String,
    /// The entity the command named, as recorded: the entity it acts on (a
    /// real one or a placeholder), or the placeholder a create was to make;
    /// `None` for commands on unique components.
    pub entity: Option<Entity>,
    /// Why it failed: the error the direct call returned (e.g.
    /// [`Error::StaleEntity`]), or [`Error::UnresolvedPlaceholder`].
    pub error: Box<Error>,
}

impl std::fmt::Display for CommandFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{} {}: {}", self.index, self.command, self.error)
    }
}

/// ` (asked for `Position`)` when a call about a component met a dead
/// entity, for the messages of [`Error::StaleEntity`] and its kin.
fn asked_for(component: &Option<&'static str>) -> String {
    component.map_or_else(String::new, |name| format!(" (asked for `{name}`)"))
}

/// The first few failures, for [`Error::CommandsFailed`]'s message.
fn list_failures(failures: &[CommandFailure]) -> String {
    const SHOWN: usize = 3;
    let mut list = failures
        .iter()
        .take(SHOWN)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    if failures.len() > SHOWN {
        list.push_str(&format!("; and {} more", failures.len() - SHOWN));
    }
    list
}

impl Error {
    /// [`Error::ComponentAbsent`] for the component named `component`, of
    /// `entity`.
    #[cold]
    pub(crate) fn absent(context: &'static str, entity: Entity, component: &'static str) -> Error {
        Error::ComponentAbsent {
            context,
            entity,
            component,
        }
    }
}
