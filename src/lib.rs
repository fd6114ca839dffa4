#![doc = include_str!("../README.md")]
// Also set in Cargo.toml's [lints]; stated here where readers look for them.
#![deny(unsafe_code, missing_docs)]
//!
//! # Where things are
//!
//! - The [`guide`]: coming from Entitas, bevy_ecs or hecs, each concept
//!   mapped to reactecs, and the deliberate deviations.
//! - [`Context`]: entities, components, events; start here. Built with
//!   [`Context::new`], [`Context::with_name`], [`Context::of`] (a declared
//!   context) or [`Context::builder`] ([`ContextBuilder`]: name, AERC mode).
//! - [`Entity`]: a generational handle that knows its context (index and
//!   tag, [`Entity::tag`]); stale and foreign handles are refused.
//! - [`component!`]: declare component types, and where their values live
//!   ([`StorageKind`]: archetype columns, or `flag` / `sparse` components
//!   kept out of archetypes, which move nothing when added or removed).
//!   [`Bundle`]s (tuples of components) create an entity with all its
//!   components at once ([`Context::create_entity_with`]), or many
//!   ([`Context::create_entities_with`], which returns their handles, or
//!   [`Context::create_entities_with_count`], which returns how many).
//! - [`ContextEvent`] and the [`event`] module: what fires when, in which order.
//! - [`Matcher`] and [`Group`]: live sets of entities, with [`GroupEvent`]s
//!   ([`Context::add_group`] makes one, [`Context::group`] reads it).
//! - The [`query`] module: typed iteration, entity by entity or chunk by chunk.
//! - Unique components: [`Context::set_unique`] and friends.
//! - [`EntityRef`] and [`EntityMut`] ([`Context::entity`],
//!   [`Context::entity_mut`]): views of one entity, to read (and write)
//!   several of its components for one lookup.
//! - The [`system`] module: [`System`] (initialize, execute, cleanup,
//!   teardown; each may fail, see [`SystemResult`]), [`Systems`] to run
//!   systems in order, [`Feature`] to time them (and report which system
//!   failed, as a [`SystemFailed`]), and [`feature_system!`] to gather a
//!   feature's systems from anywhere.
//! - Collectors ([`Context::add_collector`] makes one from a
//!   [`CollectorSpec`], [`Context::collector`] reads it as a [`Collector`],
//!   [`Context::collector_mut`] acts on it: [`CollectorMut`] activates,
//!   deactivates, clears, removes and drains it)
//!   and reactive systems ([`ReactiveSystem`], [`Reactive`];
//!   [`MultiReactive`] over several contexts): run only for what
//!   changed.
//! - [`CommandBuffer`]: structural changes recorded now (while iterating, on
//!   other threads) and played back later; [`DeferredSystem`]s record into
//!   one that their [`Deferred`] wrapper plays back after them.
//! - The [`aerc`] module: retain / release ([`Context::retain`],
//!   [`Context::release`]), so a destroyed entity that is still held keeps
//!   its slot; [`Context::aerc`] ([`Aerc`]) reads counts and owners.
//! - The [`index`] module: [`EntityIndex`] (key -> entities) and
//!   [`PrimaryEntityIndex`] (key -> entity), kept current by every change
//!   ([`Context::add_index`]; lookups through [`Context::index`]: the
//!   index itself, whose `get` takes a key; [`Context::index_mut`] acts on
//!   one: [`IndexMut`]).
//! - Component pools: components declared `pooled` whose removed values are
//!   reused ([`Recycle`], [`Context::pool`], [`PoolMut`]).
//! - [`context!`] and [`Contexts`]: several contexts side by side, lent one
//!   at a time ([`Contexts::context_mut`]) or several at once
//!   ([`Contexts::get_many_mut`]); systems of one context run among them
//!   with [`InContext`] ([`Feature::with_in`]).
//! - Snapshots (feature `serde`): `snapshot!` lists the component types
//!   a snapshot holds. `Context::snapshot` writes the context's entities to
//!   any serde format and `Context::restore` reads them into an empty
//!   context, every listed type through a registry; `Context::snapshot_of`
//!   and `Context::restore_of` do the same for the types of a
//!   `SnapshotTuple` (`(Position, Velocity)`), a few times faster.
//!   Handles inside components are remapped to the restored entities
//!   (`MapEntities`). Each restore takes `RestoreLimits`, which bound what
//!   a snapshot may claim (tighten them for input from strangers).
//! - Optional features: `parallel` (rayon: `par_for_each` on queries),
//!   `tracing` (a span per system phase), `serde` (snapshots).
//! - Comparing contexts: [`Context::diff`] (entities matched by creation
//!   order) and [`Context::diff_by_key`] (matched by a key component, such
//!   as a net id) list how two contexts differ in the component types named,
//!   as a [`ContextDiff`] that prints one difference per line: for checking
//!   a save/load round trip, a replay or a client against its server. See
//!   the [`diff`] module.
//! - [`Error`]: every misuse, as one enum.
//! - [`Context::storage_stats`] ([`StorageStats`]): archetypes, chunks and
//!   bytes in use, for tuning. `storage` (private): archetypes of 16 KiB
//!   structure-of-arrays chunks ([`CHUNK_BYTES`]); the one module allowed
//!   raw-memory code.
//!
//! # Naming
//!
//! One pattern across groups, collectors, indices and subscriptions:
//!
//! | what | makes | reads by id | removes | lists |
//! |---|---|---|---|---|
//! | groups | [`add_group`](Context::add_group) | [`group`](Context::group) | (none: see below) | [`groups`](Context::groups) |
//! | collectors | [`add_collector`](Context::add_collector) | [`collector`](Context::collector) | [`collector_mut`](Context::collector_mut)`(id)?.`[`remove`](CollectorMut::remove)`()` | [`collectors`](Context::collectors) |
//! | entity indices | [`add_index`](Context::add_index) | [`index`](Context::index) | [`index_mut`](Context::index_mut)`(id)?.`[`remove`](IndexMut::remove)`()` | [`indices`](Context::indices) |
//! | handlers | [`subscribe`](Context::subscribe), [`subscribe_group`](Context::subscribe_group) | | [`unsubscribe`](Context::unsubscribe) | |
//!
//! - `add_*` makes a thing and returns its id; the noun alone reads it by
//!   id (no `get_` prefix, as the Rust API guidelines have it); `remove_*`
//!   takes it away. The reader takes only an id: a [`Matcher`] passed to
//!   [`group`](Context::group), or a trigger (`matcher.added()`) to
//!   [`collector`](Context::collector), is a compile error whose note
//!   names `add_group` / `add_collector` ([`IntoGroupId`],
//!   [`IntoCollectorId`]). Handlers keep the verb pair everyone knows,
//!   `subscribe` / `unsubscribe`. Every id knows its context: another
//!   context's is refused with an error.
//! - [`add_group`](Context::add_group) returns the existing group for an
//!   equal matcher (as Entitas' `GetGroup` does), so calling it again is
//!   free; groups are never removed (a group costs a list of archetypes,
//!   and collectors and indices follow groups by id).
//!   [`add_collector`](Context::add_collector) makes a new collector every
//!   call: make collectors once (in a system's `trigger`, or at set-up),
//!   not per frame.
//! - What acts on one collector or index is on its handle, from the noun
//!   with `_mut`: [`collector_mut`](Context::collector_mut) ([`CollectorMut`]:
//!   activate, deactivate, clear, remove, drain) and
//!   [`index_mut`](Context::index_mut) ([`IndexMut`]: activate, deactivate,
//!   remove), as [`entity_mut`](Context::entity_mut) is to
//!   [`entity`](Context::entity). `_with` is creation
//!   from bundles: [`create_entity_with`](Context::create_entity_with),
//!   [`create_entities_with`](Context::create_entities_with) (the new
//!   handles, in a `Vec`), and
//!   [`create_entities_with_count`](Context::create_entities_with_count)
//!   when the handles are not wanted (how many were made: no `Vec`).
//! - Views: [`entity`](Context::entity) / [`entity_mut`](Context::entity_mut),
//!   and [`EntityMut::as_readonly`] from one to the other.
//! - [`Contexts::context`] / [`Contexts::context_mut`] are the panicking
//!   shorthands for a declared context (it is always there unless the
//!   build is broken); [`Contexts::get`] / [`Contexts::get_mut`],
//!   [`by_name`](Contexts::by_name) and [`by_id`](Contexts::by_id) answer
//!   with an `Option`.
//!
//! # Which return type
//!
//! - `bool` answers a yes/no question about this context:
//!   [`has`](Context::has), [`is_alive`](Context::is_alive),
//!   [`Matcher::matches`]. A handle that
//!   names nothing here (stale, or another context's) has nothing, so the
//!   answer is `false`; ask [`entity`](Context::entity) to learn why.
//! - `Option` answers "which one, if any" where absence is an ordinary
//!   answer and nothing else can go wrong: a component of a view whose
//!   entity is alive ([`EntityRef::get`], [`EntityMut::get`],
//!   [`EntityRef::query`]), the unique holder or value
//!   ([`unique`](Context::unique), [`unique_entity`](Context::unique_entity)),
//!   [`GroupEvent::component`], the entity under a primary key
//!   ([`PrimaryEntityIndex::get`]),
//!   [`Contexts::get`].
//! - `Result<_, Error>` for a call given a handle or an id that may be
//!   stale, another context's or removed ([`Context::get`],
//!   [`group`](Context::group), [`collector`](Context::collector),
//!   [`index`](Context::index)), and for every change that can be refused
//!   ([`add`](Context::add), [`EntityMut::add`], [`add_index`](Context::add_index),
//!   ...): the error says which. A call that returns an `Error` changed
//!   nothing (see [`Error`] for the storage cache it may keep, and
//!   [`create_entities_with`](Context::create_entities_with), which keeps
//!   the entities it made before the refused one).
//!
//! # What sees a write
//!
//! Which call to use for one entity, many, a whole group, in parallel,
//! later or unseen is the table at the top of [`Context`]'s docs (and in
//! "Writing" above); this section is the rule behind its columns.
//!
//! Every write to a component through `&mut` is seen by the collectors
//! watching it (an `added()`, `updated()` or `added_or_removed()` trigger on
//! a group whose AllOf or AnyOf names the component), and so by reactive
//! systems: there is no fast-but-silent path. What differs is who else
//! hears of it, and when. A zero-sized component (a tag or flag) is never
//! updated: it is only added and removed, and replacing one the entity has
//! changes nothing.
//!
//! | write | collectors (reactive systems) | group handlers, subscribers (old and new value) | entity indices keyed on the component |
//! |---|---|---|---|
//! | [`replace`](Context::replace), [`modify`](Context::modify), [`modify_with`](Context::modify_with), [`modify_each`](Context::modify_each), [`set_if_neq`](Context::set_if_neq) (a different value) | yes | yes, at the moment of the change | re-keyed at once (a clashing primary key refuses the write) |
//! | [`get_mut`](Context::get_mut), [`EntityMut::get_mut`] (a [`Mut`], used as `&mut T`) | yes | no | re-keyed when the `Mut` drops (a clashing primary key: the write stands, the entity leaves the index, and the next read of the index reports [`Error::PrimaryKeyConflict`]) |
//! | [`query_mut`](Context::query_mut) (`iter`, `for_each`, chunks, `par_for_each`), [`EntityMut::query`], [`view_mut`](Context::view_mut) ([`ViewMut::get_mut`] by handle) | yes | no | refused: a query does not lend a key component mutably ([`Error::KeyedWrite`]) |
//! | [`EntityMut::get_mut_untracked`] | no | no | re-keyed, as `get_mut` |
//! | `set_if_neq` with an equal value | no | no | nothing to do |
//!
//! An entity index is a lookup, not a consumer of changes: it is current
//! whenever the context can be read, so every write that can change a key
//! either re-keys the entity or is refused. A query hands out many `&mut`s
//! whose writes end at no point the context could observe (an item may
//! outlive the loop), so it does not lend a key component: write keys with
//! [`modify_each`](Context::modify_each) (over a group, a matcher or a
//! list of handles) or `get_mut`.
//!
//! How: a column that a collector watches carries a change stamp per row.
//! Handing out `&mut` stamps the row (a `&mut` handed out counts as a
//! write, whether or not it is written through: a query stamps every row of
//! each archetype it visits as it starts on it, `get_mut` its one row).
//! Reading a collector
//! ([`collector`](Context::collector), a reactive system's run) first
//! gathers the rows stamped since it last looked; before an entity leaves
//! its row (a component added or removed, the entity destroyed) or may
//! leave a group, the collectors watching its stamped row take it, so
//! nothing is lost and the collector retains it as always. A batch lists
//! each entity once: first the entities pushed to it (joins, leaves,
//! stamped entities handed over at a structural change), in the order that
//! happened, then the
//! stamped rows, in storage order (archetype by archetype of the group,
//! rows in order; then flag and sparse components, by slot). Columns
//! nobody watches carry no stamps and cost
//! nothing; stamps cost 4 bytes per row of a watched column
//! ([`StorageStats::stamp_bytes`]).
//! Flag and sparse components carry their stamps per entity slot, and are
//! seen the same way.

pub mod aerc;
mod bundle;
mod collector;
mod command_buffer;
mod component;
mod context;
mod context_kind;
mod contexts;
pub mod diff;
mod entity;
mod entity_ref;
mod error;
pub mod event;
mod slot_table;
#[doc = include_str!("../GUIDE.md")]
pub mod guide {}
mod group;
mod id;
pub mod index;
mod matcher;
mod pool;
pub mod query;
mod query_param;
mod recycle;
mod routes;
#[cfg(feature = "serde")]
mod snapshot;
#[allow(
    unsafe_code,
    reason = "storage is the one module that manages raw chunk memory; every block documents its invariant"
)]
mod storage;
pub mod system;
mod type_name;
mod unique;

pub use aerc::{AercMode, Owner};
pub use bundle::{Bundle, ComponentTuple};
pub use collector::{Collector, CollectorId, CollectorSpec, IntoCollectorId, RemovedView, Trigger, TriggerOnEvent};
pub use command_buffer::CommandBuffer;
pub use component::{Component, ComponentId};
pub use context::{Aerc, CollectorMut, Context, ContextBuilder, EntityMut, IndexMut, Mut, Selection, View, ViewMut};
pub use contexts::{ContextId, ContextKind, ContextKinds, Contexts};
pub use diff::{ContextDiff, DiffTuple};
pub use entity::Entity;
pub use entity_ref::EntityRef;
pub use error::{CommandFailure, Error};
pub use event::{ContextEvent, SubscriptionId};
pub use group::{EntityList, Group, GroupEvent, GroupId, GroupIter, IntoGroupId};
pub use index::{EntityIndex, Index, IndexId, PrimaryEntityIndex};
pub use matcher::{Matcher, MatcherChain};
pub use pool::PoolMut;
pub use query::{Query, QueryMut, QueryParam, ReadOnlyQueryParam};
pub use recycle::Recycle;
#[cfg(feature = "serde")]
pub use snapshot::{MapEntities, RestoreLimits, Snapshot, SnapshotTuple, TypedSnapshot};
pub use storage::{CHUNK_BYTES, ComponentInfo, ComponentRef, ComponentSet, StorageKind, StorageStats};
pub use system::{
    ContextEntity, Deferred, DeferredSystem, Feature, InContext, MultiReactive, Reactive, ReactiveSystem, System,
    SystemFailed, SystemResult, Systems,
};

/// The names a reactive program needs: `use reactecs::prelude::*;`.
///
/// Contexts and their entities, components, matchers, groups, collectors
/// (and their triggers), indices, queries and views, command buffers (and
/// the [`CommandFailure`]s a playback reports), subscriptions, every kind
/// of system with its wrappers ([`Reactive`], [`MultiReactive`],
/// [`InContext`], [`Deferred`]) and fallible phases ([`SystemResult`],
/// [`SystemFailed`]), [`ContextDiff`], and, with the `serde` feature, what
/// snapshot code names (`MapEntities`, `RestoreLimits`, `SnapshotTuple`).
/// Rarely named items (context ids, storage statistics, timing views,
/// [`system::Phase`], [`system::Parallel`]) stay at their paths.
pub mod prelude {
    pub use crate::{
        AercMode, Collector, CollectorId, CollectorSpec, CommandBuffer, CommandFailure, Component, ComponentRef,
        Context, ContextDiff, ContextEntity, ContextEvent, ContextKind, Contexts, Deferred, DeferredSystem, Entity,
        EntityIndex, EntityList, EntityMut, EntityRef, Error, Feature, Group, GroupEvent, GroupId, InContext, Index,
        IndexId, Matcher, MatcherChain, MultiReactive, Mut, Owner, PrimaryEntityIndex, Query, QueryMut, Reactive,
        ReactiveSystem, Recycle, SubscriptionId, System, SystemFailed, SystemResult, Systems, Trigger, TriggerOnEvent,
        View, ViewMut,
    };
    #[cfg(feature = "serde")]
    pub use crate::{MapEntities, RestoreLimits, SnapshotTuple};
}

/// Items the macros expand to. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::component::{ComponentRegistration, DebugProbe, ViaDebug, ViaName};
    pub use crate::contexts::ContextRegistration;
    pub use crate::query::{InColumns, InSparseSets};
    pub use crate::recycle::PoolMaker;
    #[cfg(feature = "serde")]
    pub use crate::snapshot::{MapFn, MapProbe, RegisteredSnapshot, SnapshotRegistration, ViaMapEntities, ViaNoMap};
    pub use crate::storage::{
        ChunkLens, ColumnAccess, ColumnChunks, ColumnChunksMut, DebugFn, EntityChunks, RegisteredComponent, RowAccess,
        RowWriter,
    };
    pub use crate::system::{AnySystem, SystemRegistration};
    pub use inventory;
}
