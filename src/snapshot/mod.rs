//! Snapshots (feature `serde`): a context's entities, in creation order,
//! with the values of the component types that opted in, written to any
//! serde format and restored into an empty context.
//!
//! - [`snapshot!`](crate::snapshot!) lists the component types a snapshot
//!   holds (each `Serialize + DeserializeOwned`); the values of other types
//!   are left out.
//! - [`Context::snapshot`] gives a [`Snapshot`], which implements
//!   `Serialize` and writes straight from storage (nothing is copied).
//! - [`Context::restore`] reads one into an empty context: all or nothing,
//!   within the bounds of a [`RestoreLimits`] (the defaults for your own
//!   saves, tighter ones for input from strangers: the threat model is on
//!   `RestoreLimits`).
//! - [`Context::snapshot_of`] and [`Context::restore_of`] do the same for
//!   the types of a [`SnapshotTuple`] (`(Position, Velocity)`), in the same
//!   format, with each value's own serde code compiled for the format: a
//!   few times faster.
//! - [`MapEntities`]: implemented by components that hold [`Entity`]
//!   handles, so that the restored handles name the restored entities.
//!
//! # Which path
//!
//! Both write and read one format, so either path reads what the other
//! wrote, and they give the same context.
//!
//! - `snapshot()` / `restore(input)` take every type listed in
//!   [`snapshot!`](crate::snapshot!) without naming one: for tools, editors
//!   and saves of contexts whose types are not known where the snapshot is
//!   taken. Every value goes through `erased-serde`, a virtual call per
//!   primitive: on the ecs_bench_suite serialize workload (10,000 entities
//!   of four types, postcard) about 24 times plain serde of a `Vec` of
//!   structs to write and 36 times to read.
//! - `snapshot_of::<C>()` / `restore_of::<C>(input)` name the types: for
//!   the hot paths (network state, frequent saves, replays). On that
//!   workload about 2.6 times plain serde to write and 2 times to read
//!   (benches/README.md's `snapshot` row; the snapshot's layout alone, per
//!   type `(position, value)` pairs, costs serde itself about 1.9 and 1.3
//!   times the instructions). `snapshot_of` writes only the types of `C`;
//!   `restore_of` reads a column of a type outside `C` (but listed in
//!   `snapshot!`) through the registry, as `restore` does, so any snapshot
//!   still reads and only the types of `C` are fast. The types must be
//!   listed in `snapshot!` too (checked when called:
//!   [`Error::SnapshotTypeRefused`](crate::Error::SnapshotTypeRefused)),
//!   which finds their [`MapEntities`] implementation.
//!
//! # What a snapshot holds
//!
//! Every live entity, in creation order (entity `p` of the snapshot is the
//! `p`-th, so a restore recreates them with creation indices `0..n`, in
//! slots `0..n`), and per opted-in component type that some entity has,
//! its declared name (the type's key: names are stable across builds, ids
//! and type paths are not) and the `(entity position, value)` pairs, by
//! position. In the serde data model:
//!
//! ```text
//! struct Snapshot { entities: u32, components: [(name: str, [(position: u32, value)])] }
//! ```
//!
//! so in JSON `{"entities":2,"components":[["Position",[[0,{"x":1.0}],[1,{"x":2.0}]]]]}`.
//! Unique components are components of their holder and come along (the
//! restored holder is `unique_entity`); flag and sparse components too.
//! An entity none of whose components opted in is restored without
//! components (it keeps its place in creation order, and the handles that
//! name it). Groups, collectors, entity indices and subscriptions are not
//! part of a snapshot: those of the target context see the restored
//! entities being created, as they see any creation.
//!
//! # Order after a restore
//!
//! Stated on `Context::restore` ("Order after a restore") and tested in
//! `tests/snapshot.rs`: creation order is kept, creation indices become
//! `0..n` (equal to those before saving only if the saved entities had
//! `0..n`), `entities()` lists creation order (slots `0..n`), and groups
//! and queries go archetype by archetype (archetypes in the order of their
//! first restored entity, in a new context) with rows in creation order,
//! except where the later addition of `MapEntities` values moved rows. So
//! group and query order equals the order before saving only when the
//! saved storage had that layout; it is deterministic (one snapshot, one
//! order; a snapshot of the restored context restores to it again).
//! Compare a saved and a restored context by creation order
//! (`Context::diff`), not by iteration order.
//!
//! # Entity handles
//!
//! A handle means something only in its context, and differs per run, so
//! inside a snapshot an [`Entity`] is written as the position of its entity
//! (a `u32`), or `u32::MAX` for a handle that names no entity of the
//! snapshot (a destroyed entity, a placeholder, another context's). Read
//! back, a position is a placeholder handle; the restore then calls
//! [`MapEntities::map_entities`] on each value of a type that implements it,
//! which replaces each placeholder with the restored entity (and `u32::MAX`
//! with a handle that names no entity: `is_alive` is false, calls refuse it
//! as stale). A type that holds handles but does not implement
//! `MapEntities` keeps the placeholders, which name no entity either.
//! Serializing an `Entity` outside a snapshot is an error, and so is
//! deserializing one outside a restore (a number read from anywhere else
//! would become a handle that names nothing).
//!
//! # Untrusted input
//!
//! What a hostile snapshot can and cannot do, and the bounds a caller
//! sets, are on [`RestoreLimits`] (public docs).
//!
//! # Decisions
//!
//! - Opt-in by a separate macro, `reactecs::snapshot!(Position, Target)`,
//!   next to (or far from) the `component!` declaration: it needs the
//!   serde traits, which plain components must not, and it keeps
//!   `component!`'s keyword list as it is. Whether a type implements
//!   `MapEntities` is found by the macro, not written in it.
//! - Column by column (one list per type), so a format writes each type's
//!   name once and a reader fills one typed buffer per type.
//! - A restore reads everything into those buffers and checks it before it
//!   creates an entity: bad input (malformed, truncated, an unknown or
//!   unlisted component name, a wrong value type, a position out of range,
//!   two holders of a unique component) changes nothing. The entities are
//!   then created in order, each in one step with its components, except
//!   those of types that implement `MapEntities`, added afterwards (their
//!   values can name entities created later). The keys the values would
//!   have in the target's entity indices are checked first too (filed under
//!   placeholders, then emptied again), so a duplicate key of a
//!   [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) is refused before
//!   anything is created or told. (Should a creation still be refused, the
//!   restore is undone: the entities made are destroyed, the collectors
//!   emptied, and the context is empty again.)
//! - `snapshot` and `restore` serialize and read values through
//!   `erased-serde`: the functions of each listed type are registered with
//!   `inventory` and must be plain function pointers, which cannot be
//!   generic over the format. The typed path is generic over both the
//!   format and the types, so serde monomorphises it; it shares the rest
//!   (entity positions, the buffers, the checks, the creation) with the
//!   erased one.
//! - The typed writer reads each type's column chunk by chunk (and sparse
//!   sets entry by entry), pairs each value with its entity's position,
//!   and sorts the pairs only if storage does not hold them in creation
//!   order already (several archetypes, rows moved by removals).
//! - Registration in `snapshot!` is checked at run time, not by a trait
//!   bound: `snapshot!` stays callable from any crate and for a type listed
//!   twice, which an `impl` per listed type would forbid; the serde traits,
//!   which the bound does require, are checked at compile time.
//! - A restore creates its entities run by run (consecutive entities with
//!   the same components): the bundle plan and the target's interest are
//!   looked up once per run, and a run nothing hears of (no index, group,
//!   collector or subscriber, no unique component) goes straight into
//!   storage, as `create_entities_with` does.

mod column;
mod limits;
mod read;
mod read_typed;
mod registry;
mod restore;
mod tuple;
mod write;
mod write_typed;

use crate::context::Context;
use crate::entity::Entity;

pub(crate) use column::Column;
#[doc(hidden)]
pub use column::MapFn;
pub use limits::RestoreLimits;
pub(crate) use limits::{ARCHETYPE_BYTES, Budget};
pub(crate) use read::{Parsed, ReadColumn, Registered, dangling, parse};
pub(crate) use read_typed::TypedReader;
#[doc(hidden)]
pub use registry::{MapProbe, RegisteredSnapshot, SnapshotRegistration, ViaMapEntities, ViaNoMap};
pub use tuple::SnapshotTuple;
pub(crate) use tuple::checked_ids;
pub use write_typed::TypedSnapshot;

/// The position that names no entity of a snapshot.
const DANGLING: u32 = u32::MAX;

/// The most entities a snapshot holds (positions `u32::MAX - 1` and
/// `u32::MAX` are not entities').
const MAX_ENTITIES: u32 = u32::MAX - 2;

/// A context's entities and their opted-in components, ready to be
/// serialized (see the [`snapshot`](crate::snapshot!) docs for what it holds
/// and how handles are written). Made by [`Context::snapshot`]; it borrows
/// the context and copies nothing.
///
/// # Errors
/// Serializing fails (with the serializer's error) if two types listed in
/// [`snapshot!`](crate::snapshot!) share a declared name and one of them is
/// present, if a component's own `Serialize` fails, or if the context has
/// more than `u32::MAX - 2` entities.
pub struct Snapshot<'a> {
    context: &'a Context,
}

/// The context's name and how many entities the snapshot holds:
/// `Snapshot { context: "Game", entities: 3 }`.
impl std::fmt::Debug for Snapshot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("context", &self.context.name())
            .field("entities", &self.context.len())
            .finish()
    }
}

impl Context {
    /// A snapshot of this context: every live entity in creation order, with
    /// the values of its components whose types are listed in
    /// [`snapshot!`](crate::snapshot!). Serialize it with any serde format;
    /// [`restore`](Context::restore) reads it back. Where the types are
    /// known, [`snapshot_of`](Context::snapshot_of) writes the same, several
    /// times faster.
    ///
    /// # Example
    /// ```
    /// use reactecs::{Context, Entity, MapEntities, RestoreLimits};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Debug, PartialEq, Serialize, Deserialize)]
    /// struct Health(u32);
    /// #[derive(Serialize, Deserialize)]
    /// struct Target(Entity);
    /// impl MapEntities for Target {
    ///     fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
    ///         self.0 = map(self.0);
    ///     }
    /// }
    /// reactecs::component!(Health, Target);
    /// reactecs::snapshot!(Health, Target);
    ///
    /// let mut game = Context::with_name("Game");
    /// let orc = game.create_entity_with(Health(30))?;
    /// game.create_entity_with((Health(10), Target(orc)))?;
    /// let json = serde_json::to_string(&game.snapshot()).unwrap();
    /// assert_eq!(json, r#"{"entities":2,"components":[["Health",[[0,30],[1,10]]],["Target",[[1,0]]]]}"#);
    ///
    /// let mut loaded = Context::with_name("Game");
    /// loaded.restore(&mut serde_json::Deserializer::from_str(&json), RestoreLimits::default())?;
    /// let archer = loaded.entities().nth(1).unwrap();
    /// let target = loaded.get::<Target>(archer)?.0;
    /// assert_eq!(loaded.get::<Health>(target)?, &Health(30));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { context: self }
    }
}

/// Implemented by components that hold [`Entity`] handles, so that a
/// [`restore`](Context::restore) makes them name the restored entities:
/// `map_entities` replaces each handle the value holds with `map`'s answer
/// for it. [`snapshot!`](crate::snapshot!) finds the implementation by
/// itself.
///
/// Implemented for `Entity`, `Option<T>` and `Vec<T>` (of `T:
/// MapEntities`), to delegate to from a component's fields.
///
/// # Example
/// ```
/// use reactecs::{Entity, MapEntities};
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Squad { leader: Entity, members: Vec<Entity>, target: Option<Entity> }
/// impl MapEntities for Squad {
///     fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
///         self.leader.map_entities(map);
///         self.members.map_entities(map);
///         self.target.map_entities(map);
///     }
/// }
/// reactecs::component!(Squad);
/// reactecs::snapshot!(Squad);
/// ```
pub trait MapEntities {
    /// Replaces each handle held with `map(handle)`.
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity);
}

impl MapEntities for Entity {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        *self = map(*self);
    }
}

impl<T: MapEntities> MapEntities for Option<T> {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        if let Some(value) = self {
            value.map_entities(map);
        }
    }
}

impl<T: MapEntities> MapEntities for Vec<T> {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        for value in self {
            value.map_entities(map);
        }
    }
}

/// Lists component types whose values snapshots hold (feature `serde`).
///
/// Each type must be declared with [`component!`](crate::component!) and
/// implement `serde::Serialize` and `serde::de::DeserializeOwned` (a
/// compile error otherwise). A type that holds [`Entity`] handles
/// implements [`MapEntities`] too, which the macro finds by itself. The
/// list can be split over several calls anywhere in the program; listing a
/// type twice is harmless.
///
/// In a snapshot a type is keyed by its declared name (`Position` for
/// `component!(Position)`), so two listed types must not share one.
///
/// ```
/// # use serde::{Deserialize, Serialize};
/// #[derive(Serialize, Deserialize)] struct Position { x: f32, y: f32 }
/// #[derive(Serialize, Deserialize, Default)] struct Frozen;
/// #[derive(Serialize, Deserialize)] struct Score(u32);
/// reactecs::component!(Position, flag Frozen, unique Score);
/// reactecs::snapshot!(Position, Frozen, Score);
/// ```
///
/// See [`Context::snapshot`] and [`Context::restore`].
#[macro_export]
macro_rules! snapshot {
    ($($ty:ty),+ $(,)?) => {
        $(const _: () = {
            fn map() -> ::core::option::Option<$crate::__private::MapFn<$ty>> {
                #[allow(unused_imports)]
                use $crate::__private::{ViaMapEntities as _, ViaNoMap as _};
                (&&$crate::__private::MapProbe::<$ty>::new()).map_fn()
            }
            static REGISTRATION: $crate::__private::SnapshotRegistration<$ty> =
                $crate::__private::SnapshotRegistration::new(map);
            $crate::__private::inventory::submit! {
                $crate::__private::RegisteredSnapshot(&REGISTRATION)
            }
        };)+
    };
}
