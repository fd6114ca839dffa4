#![doc = include_str!("../README.md")]
// Also set in Cargo.toml's [lints]; stated here where readers look for them.
#![deny(unsafe_code, missing_docs)]
//!
//! # Where things are
//!
//! - The [`guide`]: coming from Entitas, bevy_ecs or hecs, each concept
//!   mapped to reactecs, and the deliberate deviations.
//! - [`Context`]: entities, components, events; start here.
//! - [`component!`]: declare component types, and where their values live
//!   ([`StorageKind`]: archetype columns, or `flag` / `sparse` components
//!   kept out of archetypes, which move nothing when added or removed).
//! - [`ContextEvent`] and the [`event`] module: what fires when, in which order.
//! - [`Matcher`] and [`Group`]: live sets of entities, with [`GroupEvent`]s.
//! - The [`query`] module: typed iteration, entity by entity or chunk by chunk.
//! - Unique components: [`Context::set_unique`] and friends.
//! - [`EntityRef`] and [`EntityMut`]: views of one entity, to read (and
//!   write) several of its components for one lookup.
//! - The [`system`] module: [`System`] (initialize, execute, cleanup,
//!   teardown; each may fail, see [`SystemResult`]), [`Systems`] to run
//!   systems in order, [`Feature`] to time them (and report which system
//!   failed, as a [`SystemFailed`]), and [`feature_system!`] to gather a
//!   feature's systems from anywhere.
//! - Collectors ([`Context::collector`], [`Collector`]) and reactive systems
//!   ([`ReactiveSystem`], [`Reactive`]; [`MultiReactiveSystem`] over several
//!   contexts): run only for what changed.
//! - [`CommandBuffer`]: structural changes recorded now (while iterating, on
//!   other threads) and played back later; [`DeferredSystem`]s record into
//!   one that their [`Deferred`] wrapper plays back after them.
//! - The [`aerc`] module: retain / release, so a destroyed entity that is
//!   still held keeps its slot.
//! - The [`index`] module: [`EntityIndex`] (key -> entities) and
//!   [`PrimaryEntityIndex`] (key -> entity), kept current by every change.
//! - Component pools: components declared `pooled` whose removed values are
//!   reused ([`Recycle`], [`Context::create_component`]).
//! - [`context!`] and [`Contexts`]: several contexts side by side, lent one
//!   at a time or several at once ([`Contexts::get_many_mut`]); systems of
//!   one context run among them with [`InContext`] ([`Feature::with_in`]).
//! - Snapshots (feature `serde`): `snapshot!` lists the component types
//!   a snapshot holds; `Context::snapshot` writes the context's entities
//!   to any serde format and `Context::restore` reads them into an empty
//!   context, remapping the handles components hold (`MapEntities`).
//! - [`Error`]: every misuse, as one enum.
//! - `storage` (private): archetypes of 16 KiB structure-of-arrays chunks; the
//!   one module allowed raw-memory code.

pub mod aerc;
mod bundle;
mod collector;
mod command_buffer;
mod component;
mod context;
mod contexts;
mod entity;
mod entity_ref;
mod error;
pub mod event;
#[doc = include_str!("../GUIDE.md")]
pub mod guide {}
mod group;
mod id;
pub mod index;
mod matcher;
mod pool;
pub mod query;
mod renamed;
mod routes;
#[cfg(feature = "serde")]
mod snapshot;
#[allow(
    unsafe_code,
    reason = "storage is the one module that manages raw chunk memory; every block documents its invariant"
)]
mod storage;
pub mod system;
mod unique;

pub use aerc::{AercMode, Owner};
pub use bundle::{Bundle, ComponentTuple};
pub use collector::{Collector, CollectorId, CollectorSpec, RemovedView, Trigger, TriggerOnEvent};
pub use command_buffer::CommandBuffer;
pub use component::{Component, ComponentId, ComponentInfo, ComponentRef, StorageKind};
pub use context::{Context, ContextBuilder, EntityMut};
pub use contexts::{ContextId, ContextKind, ContextKinds, Contexts};
pub use entity::Entity;
pub use entity_ref::EntityRef;
pub use error::{CommandFailure, Error};
pub use event::{ContextEvent, SubscriptionId};
pub use group::{EntityList, Group, GroupEvent, GroupId, GroupIter};
pub use index::{EntityIndex, Index, IndexId, PrimaryEntityIndex};
pub use matcher::{Matcher, MatcherChain};
pub use pool::Recycle;
pub use query::{Query, QueryMut, QueryParam, ReadOnlyQueryParam};
#[cfg(feature = "serde")]
pub use snapshot::{MapEntities, RestoreLimits, Snapshot, SnapshotTuple, TypedSnapshot};
pub use storage::{CHUNK_BYTES, ComponentSet, StorageStats};
pub use system::{
    ContextEntity, Deferred, DeferredSystem, Feature, InContext, MultiReactive, MultiReactiveSystem, Reactive,
    ReactiveSystem, System, SystemFailed, SystemResult, Systems,
};

/// The names a reactive program needs: `use reactecs::prelude::*;`.
///
/// Contexts and their entities, components, matchers, groups, collectors
/// (and their triggers), indices, queries, command buffers, and every kind
/// of system with its wrappers ([`Reactive`], [`MultiReactive`],
/// [`InContext`], [`Deferred`]) and fallible phases ([`SystemResult`],
/// [`SystemFailed`]). Rarely named items (ids of contexts and
/// subscriptions, storage statistics, timing views, [`system::Phase`]) stay
/// at their paths.
pub mod prelude {
    pub use crate::{
        AercMode, Collector, CollectorId, CollectorSpec, CommandBuffer, Component, ComponentRef, Context,
        ContextEntity, ContextEvent, ContextKind, Contexts, Deferred, DeferredSystem, Entity, EntityIndex, EntityMut,
        EntityRef, Error, Feature, Group, GroupEvent, GroupId, InContext, Index, IndexId, Matcher, MatcherChain,
        MultiReactive, MultiReactiveSystem, Owner, PrimaryEntityIndex, Query, QueryMut, Reactive, ReactiveSystem,
        Recycle, System, SystemFailed, SystemResult, Systems, Trigger, TriggerOnEvent,
    };
}

/// Items the macros expand to. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::component::{ComponentRegistration, DebugFn, DebugProbe, RegisteredComponent, ViaDebug, ViaName};
    pub use crate::contexts::ContextRegistration;
    pub use crate::pool::PoolMaker;
    pub use crate::query::{InColumns, InSparseSets};
    #[cfg(feature = "serde")]
    pub use crate::snapshot::{MapFn, MapProbe, RegisteredSnapshot, SnapshotRegistration, ViaMapEntities, ViaNoMap};
    pub use crate::storage::{
        ChunkLens, ColumnAccess, ColumnChunks, ColumnChunksMut, EntityChunks, RowAccess, RowWriter,
    };
    pub use crate::system::SystemRegistration;
    pub use inventory;
}
