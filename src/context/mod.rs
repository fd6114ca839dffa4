//! `Context`: owns entities and their components, and tells about every change.
//!
//! The context's API is spread over this folder; a concept's side of it is
//! the file named after the concept:
//!
//! - `mod.rs`: the struct, construction, counts;
//! - `lifecycle.rs`: creating and destroying entities, `reset`;
//! - `change.rs`: `add`, `remove`, `take`, `replace`, `modify`,
//!   `modify_with`;
//! - `bulk_change.rs`: `modify_each` over a group, a matcher or a list (`Selection`)
//!   (observed writes over many entities);
//! - `tracking.rs`: change stamps: which columns carry them, collectors
//!   gathering, hand-over before structural changes;
//! - `access.rs`: `get`, `get_mut`, `has`, entity views;
//! - `entity_mut.rs`: `EntityMut`, the view that reads, writes and changes
//!   one entity;
//! - `mut_ref.rs`: `Mut`, what `get_mut` lends, which re-keys indices when
//!   dropped;
//! - `dispatch.rs`: carrying out a change's route (indices, collectors,
//!   group events, context events), and subscriptions;
//! - `group.rs`: groups (`add_group`, `group`, `subscribe_group`);
//! - `collector.rs`: collectors (`add_collector`, `collector`, and
//!   `collector_mut`'s `CollectorMut`); `drain.rs`: draining one;
//! - `index.rs`: entity indices (`add_index`, `index`, and `index_mut`'s
//!   `IndexMut`);
//! - `aerc.rs`: AERC (`retain`, `release`, and `aerc`'s `Aerc` view);
//! - `unique.rs`: unique components;
//! - `pool.rs`: component pools (`pool`, whose `PoolMut` is in the `pool`
//!   module);
//! - `sparse.rs`: components kept out of archetypes (`flag` and `sparse`
//!   kinds), `set_flag`;
//! - `query.rs`: queries and views (`view.rs`, `view_mut.rs`);
//! - `builder.rs`, `invariants.rs`: options, and the invariant walker.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::aerc::{AercMode, Retains};
use crate::collector::Collectors;
use crate::entity::Entity;
use crate::error::Error;
use crate::event::Subscribers;
use crate::group::Groups;
use crate::id::{ComponentId, ContextId};
use crate::index::Indices;
use crate::pool::Pools;
use crate::query::QueryPlans;
use crate::routes::Routes;
use crate::slot_table::SlotTable;
use crate::storage::{Archetypes, ComponentInfo, ComponentSet, SparseSets, StorageStats, registry};
use crate::unique::Uniques;

mod access;
mod aerc;
mod builder;
mod bulk_change;
mod change;
mod collector;
mod dispatch;
mod drain;
mod entity_mut;
mod group;
mod index;
mod invariants;
mod lifecycle;
mod mut_ref;
mod pool;
mod query;
mod sparse;
mod tracking;
mod unique;
mod view;
mod view_mut;

pub use aerc::Aerc;
pub use builder::ContextBuilder;
pub use bulk_change::Selection;
pub use collector::CollectorMut;
pub use entity_mut::EntityMut;
pub use index::IndexMut;
pub use mut_ref::Mut;
pub use view::View;
pub use view_mut::ViewMut;

/// A world of entities and their components.
///
/// Entities are created and destroyed here; components are added, removed,
/// replaced and read here; every change fires an event
/// ([`ContextEvent`](crate::ContextEvent), order in the
/// [`event`](crate::event) module docs). Underneath, entities with the same
/// component set share an archetype whose rows are packed in 16 KiB chunks.
///
/// # Which call writes
///
/// One table for every write; the rule for what each one reaches (who
/// sees it, when indices follow) is the crate docs' "[What sees a
/// write](crate#what-sees-a-write)". A collector sees every write but
/// [`get_mut_untracked`](EntityMut::get_mut_untracked)'s; the calls marked
/// "told" also fire what [`replace`](Context::replace) fires (events with
/// the old and the new value, entity indices re-keyed at once).
///
/// | to write | call | seen by collectors | told as `replace` |
/// |---|---|---|---|
/// | one entity | [`get_mut`](Context::get_mut); [`entity_mut`](Context::entity_mut), then [`get_mut`](EntityMut::get_mut) or [`query`](EntityMut::query) | yes | no |
/// | one entity, told | [`replace`](Context::replace), [`modify`](Context::modify), [`modify_with`](Context::modify_with), [`set_if_neq`](Context::set_if_neq) | yes | yes |
/// | many entities, by handle | [`view_mut`](Context::view_mut), then [`get_mut`](ViewMut::get_mut) per handle | yes | no |
/// | many entities, told | [`modify_each`](Context::modify_each)`(&handles, f)` | yes | yes |
/// | a whole group | [`query_mut`](Context::query_mut)`()?.`[`in_group`](crate::QueryMut::in_group)`(g)?` | yes | no |
/// | a whole group, told | [`modify_each`](Context::modify_each)`(g, f)` (`g`: a group id or a [`Matcher`](crate::Matcher)) | yes | yes |
/// | in parallel (feature `parallel`) | [`query_mut`](Context::query_mut)`()?.par_for_each(f)` | yes | no |
/// | later (while a query borrows the context) | a [`CommandBuffer`](crate::CommandBuffer) (`replace`, `add`, ...), then [`playback`](crate::CommandBuffer::playback) | yes | yes |
/// | without being seen | [`entity_mut`](Context::entity_mut)`(e)?.`[`get_mut_untracked`](EntityMut::get_mut_untracked)`()` | no | no |
///
/// Each row, with a collector counting what it sees:
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
/// use reactecs::prelude::*;
/// #[derive(Clone, Debug, PartialEq)] struct Pos(f32);
/// #[derive(Clone, Debug, PartialEq)] struct Vel(f32);
/// reactecs::component!(Pos, Vel);
///
/// let mut game = Context::new();
/// let moved = game.add_collector(Matcher::all_of::<Pos>().updated());
/// let told = Arc::new(AtomicUsize::new(0));
/// let counter = told.clone();
/// game.subscribe(move |event: &ContextEvent<'_>| {
///     if let ContextEvent::ComponentReplaced { .. } = event {
///         counter.fetch_add(1, Relaxed);
///     }
/// });
/// let es = game.create_entities_with((1..=4).map(|i| (Pos(0.0), Vel(i as f32))))?;
/// let movers = game.add_group(Matcher::all_of::<(Pos, Vel)>());
/// // (entities the collector saw, replacements told) since the last look.
/// let look = |game: &mut Context| -> Result<(usize, usize), Error> {
///     let seen = game.collector(moved)?.len();
///     game.collector_mut(moved)?.clear();
///     Ok((seen, told.swap(0, Relaxed)))
/// };
///
/// // One entity.
/// game.get_mut::<Pos>(es[0])?.0 += 1.0;
/// assert_eq!(look(&mut game)?, (1, 0));
/// game.replace(es[0], Pos(5.0))?;
/// game.modify(es[1], |p: &mut Pos| p.0 += 1.0)?;
/// game.set_if_neq(es[2], Pos(0.0))?; // the same value: nothing to tell
/// assert_eq!(look(&mut game)?, (2, 2));
///
/// // Many entities, by handle.
/// let mut view = game.view_mut::<(&mut Pos, &Vel)>()?;
/// for &e in &es[..2] {
///     let (p, v) = view.get_mut(e)?;
///     p.0 += v.0;
/// }
/// assert_eq!(look(&mut game)?, (2, 0));
/// game.modify_each::<Pos, &Vel>(&es[2..], |p, v| p.0 += v.0)?;
/// assert_eq!(look(&mut game)?, (2, 2));
///
/// // A whole group.
/// game.query_mut::<(&mut Pos, &Vel)>()?.in_group(movers)?.for_each(|(p, v)| p.0 += v.0);
/// assert_eq!(look(&mut game)?, (4, 0));
/// game.modify_each::<Pos, &Vel>(movers, |p, v| p.0 += v.0)?;
/// assert_eq!(look(&mut game)?, (4, 4));
///
/// // In parallel.
/// #[cfg(feature = "parallel")]
/// {
///     game.query_mut::<&mut Pos>()?.par_for_each(|p| p.0 += 1.0);
///     assert_eq!(look(&mut game)?, (4, 0));
/// }
///
/// // Later: recorded while a query reads, played back after.
/// let mut commands = CommandBuffer::new();
/// for (e, p) in game.query::<(Entity, &Pos)>().iter() {
///     commands.replace(e, Pos(p.0 * 2.0));
/// }
/// commands.playback(&mut game)?;
/// assert_eq!(look(&mut game)?, (4, 4));
///
/// // Without being seen.
/// if let Some(mut p) = game.entity_mut(es[3])?.get_mut_untracked::<Pos>() {
///     p.0 = 0.0;
/// }
/// assert_eq!(look(&mut game)?, (0, 0));
/// # Ok::<(), reactecs::Error>(())
/// ```
///
/// # Example
/// ```
/// use reactecs::{Context, Error};
/// #[derive(Debug, PartialEq)] struct Position { x: f32, y: f32 }
/// #[derive(Debug, PartialEq)] struct Velocity { x: f32, y: f32 }
/// reactecs::component!(Position, Velocity);
///
/// let mut game = Context::with_name("Game");
/// let e = game.create_entity();
/// game.add(e, Position { x: 0.0, y: 0.0 })?;
/// game.add(e, Velocity { x: 1.0, y: 0.0 })?;
/// game.replace(e, Position { x: 1.0, y: 0.0 })?;
/// assert_eq!(game.get::<Position>(e)?, &Position { x: 1.0, y: 0.0 });
///
/// // Misuse is a typed error that names what went wrong, and changes nothing.
/// let err = game.add(e, Velocity { x: 9.0, y: 9.0 }).unwrap_err();
/// assert!(matches!(err, Error::ComponentAlreadyPresent { .. }));
/// assert_eq!(game.get::<Velocity>(e)?, &Velocity { x: 1.0, y: 0.0 });
///
/// game.destroy_entity(e)?;
/// assert!(!game.is_alive(e));
/// # Ok::<(), Error>(())
/// ```
///
/// # Handles belong to their context
/// An [`Entity`] names an entity of the context that created it. Every call
/// that takes one refuses a handle of another context (alive or dropped)
/// with [`Error::ForeignEntity`], and a destroyed entity's with
/// [`Error::StaleEntity`] ([`Error::EntityDisabled`] while it is retained);
/// calls about a component name it in these errors. The per-method
/// `# Errors` sections list `StaleEntity` for both.
///
/// ```
/// use reactecs::{Context, Error};
/// struct Piece;
/// reactecs::component!(Piece);
///
/// let mut game = Context::with_name("Game");
/// let mut input = Context::with_name("Input");
/// let piece = game.create_entity_with(Piece)?;
/// let click = input.create_entity();
/// assert_eq!(click.index(), piece.index()); // the same slot in each context...
/// assert!(matches!(game.get::<Piece>(click), Err(Error::ForeignEntity { .. }))); // ...but not Game's
/// assert!(matches!(game.destroy_entity(click), Err(Error::ForeignEntity { .. })));
/// assert!(game.is_alive(piece));
/// # Ok::<(), Error>(())
/// ```
pub struct Context {
    pub(crate) name: &'static str,
    /// The instance id the ids of this context's groups, collectors and
    /// indices carry.
    pub(crate) instance: u64,
    pub(crate) entities: SlotTable,
    pub(crate) retains: Retains,
    pub(crate) archetypes: Archetypes,
    /// The values of flag and sparse components, by entity slot.
    pub(crate) sparse: SparseSets,
    pub(crate) routes: Routes,
    pub(crate) groups: Groups,
    pub(crate) collectors: Collectors,
    pub(crate) indices: Indices,
    pub(crate) subscribers: Subscribers,
    pub(crate) uniques: Uniques,
    /// The removed values of pooled components, kept for reuse.
    pub(crate) pools: Pools,
    /// The plans of the query types run with `query_mut`.
    pub(crate) queries: QueryPlans,
    /// Entities whose `EntityReleased` waits for the end of a batch release.
    pub(crate) released: Vec<Entity>,
    /// For a declared context, the components it accepts (`None`: all).
    accepts: Option<ComponentSet>,
    next_subscription: u64,
    /// The bundle plans made for the component sets of restored entities,
    /// so that restoring again after a `reset` makes no new ones.
    #[cfg(feature = "serde")]
    pub(crate) restore_plans: std::collections::HashMap<ComponentSet, crate::storage::BundleId>,
}

/// Gives each context an instance id, so ids of its groups are recognised.
/// 64 bits: at one context a nanosecond, it would take 584 years to come
/// round, so an id of a dropped context is never taken for a new one's.
static NEXT_CONTEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Default for Context {
    fn default() -> Self {
        Self::new()
    }
}

impl Context {
    /// An empty context named `Context`, accepting every declared component,
    /// in safe AERC mode. See [`Context::builder`] for the options.
    pub fn new() -> Self {
        Self::with_name("Context")
    }

    /// An empty context with a name (used in error messages and `Debug`),
    /// accepting every declared component, in safe AERC mode.
    pub fn with_name(name: &'static str) -> Self {
        ContextBuilder::new().name(name).build()
    }

    /// Options for a new context: its name, its [`AercMode`], and which
    /// declared context it is (see [`Context::of`]).
    pub fn builder() -> ContextBuilder {
        ContextBuilder::new()
    }

    fn from_parts(name: &'static str, aerc: AercMode, accepts: Option<ComponentSet>) -> Self {
        let instance = NEXT_CONTEXT_ID.fetch_add(1, Ordering::Relaxed);
        let archetypes = Archetypes::new(registry());
        let mut routes = Routes::new();
        routes.sync(&archetypes);
        let sparse = SparseSets::new(archetypes.clock());
        Context {
            name,
            instance,
            entities: SlotTable::new(instance),
            retains: Retains::new(aerc),
            archetypes,
            sparse,
            routes,
            groups: Groups::new(instance),
            uniques: Uniques::new(registry()),
            pools: Pools::default(),
            collectors: Collectors::new(),
            indices: Indices::default(),
            subscribers: Subscribers::default(),
            queries: QueryPlans::default(),
            released: Vec::new(),
            accepts,
            next_subscription: 0,
            #[cfg(feature = "serde")]
            restore_plans: std::collections::HashMap::default(),
        }
    }

    /// The context's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// This context's instance id, which the ids of its groups, collectors
    /// and indices carry.
    pub fn id(&self) -> ContextId {
        ContextId(self.instance)
    }

    /// The number of live (enabled) entities.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether there are no live entities.
    pub fn is_empty(&self) -> bool {
        self.entities.len() == 0
    }

    /// Whether `entity` is alive here (false once destroyed, even while it is
    /// still retained; see [`Aerc::is_enabled`]).
    #[inline]
    pub fn is_alive(&self, entity: Entity) -> bool {
        self.entities.location(entity).is_some()
    }

    /// Every live entity, in slot order: deterministic for a given sequence of
    /// operations (destroyed slots are reused last-freed first).
    pub fn entities(&self) -> impl Iterator<Item = Entity> + '_ {
        self.entities.alive()
    }

    /// How many archetypes and chunks the storage holds, and their bytes;
    /// how many values the component pools hold.
    pub fn storage_stats(&self) -> StorageStats {
        StorageStats {
            pooled_values: self.pools.total(),
            ..StorageStats::of(&self.archetypes, &self.sparse)
        }
    }

    /// Frees memory kept for reuse: empty chunks that archetypes hold on to so
    /// churn does not allocate, the spare capacity of the sparse sets of
    /// flag and sparse components, and the values in the component pools
    /// (which keep their bounds: see [`pool`](Context::pool)).
    pub fn shrink_to_fit(&mut self) {
        self.archetypes.shrink_to_fit();
        self.sparse.shrink_to_fit();
        self.pools.clear();
    }

    /// The error for using `entity`, which is not alive: disabled (destroyed
    /// but retained) or stale.
    #[cold]
    #[inline(never)]
    pub(crate) fn not_alive(&self, entity: Entity) -> Error {
        self.dead(entity, None)
    }

    /// Why a call about component `id` found `entity` not alive.
    #[cold]
    pub(crate) fn not_alive_for(&self, entity: Entity, id: ComponentId) -> Error {
        self.dead(entity, Some(id.name()))
    }

    /// [`Error::EntityDisabled`], [`Error::ForeignEntity`] for a handle
    /// whose tag this context never gave out, else [`Error::StaleEntity`].
    #[cold]
    #[inline(never)]
    pub(crate) fn dead(&self, entity: Entity, component: Option<&'static str>) -> Error {
        self.entities.why_dead(self.name, entity, component)
    }

    /// [`Error::WrongContext`] unless this context accepts component `id`.
    #[inline(always)]
    pub(crate) fn check_accepts(&self, id: ComponentId) -> Result<(), Error> {
        match &self.accepts {
            Some(accepts) if !accepts.contains(id) => Err(self.wrong_context(id)),
            _ => Ok(()),
        }
    }

    #[cold]
    fn wrong_context(&self, id: ComponentId) -> Error {
        Error::WrongContext {
            context: self.name,
            component: id.name(),
            declared: id.info().map_or(&[], ComponentInfo::contexts),
        }
    }

    /// [`Error::ComponentAbsent`] for component `id` of live `entity`.
    #[cold]
    pub(crate) fn absent(&self, entity: Entity, id: ComponentId) -> Error {
        Error::absent(self.name, entity, id.name())
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.name)
            .field("entities", &self.entities.len())
            .field("retained_destroyed", &self.entities.disabled_len())
            .field("collectors", &self.collectors.len())
            .field("aerc", &self.retains.mode())
            .field("archetypes", &self.archetypes.len())
            .field("groups", &self.groups.len())
            .field("subscribers", &self.subscribers.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::matcher::Matcher;

    /// The ids of a dropped context are refused by every later one, however
    /// many contexts come between (with 32-bit instance ids, the context
    /// made 2^32 after another had its instance id).
    #[test]
    fn a_dropped_contexts_ids_are_refused_by_a_context_made_2_pow_32_later() {
        #[derive(Debug)]
        struct Mark;
        crate::component!(Mark);
        let (group, collector, index) = {
            let mut old = Context::new();
            let group = old.add_group(Matcher::all_of::<Mark>());
            let collector = old.add_collector(Matcher::all_of::<Mark>().added());
            let index = old.add_index(crate::EntityIndex::new("Mark", |_: &Mark| 0u8)).unwrap();
            (group, collector, index)
        };
        // Other tests make contexts meanwhile: skip to 2^32 after `old`.
        let target = group.context + (1 << 32);
        NEXT_CONTEXT_ID.fetch_max(target, Ordering::Relaxed);
        let mut new = Context::new();
        assert!(new.instance >= target);
        new.add_group(Matcher::all_of::<Mark>());
        new.add_collector(Matcher::all_of::<Mark>().added());
        new.add_index(crate::EntityIndex::new("Mark", |_: &Mark| 0u8)).unwrap();
        assert!(matches!(new.group(group), Err(Error::UnknownGroup { .. })));
        assert!(matches!(new.collector(collector), Err(Error::UnknownCollector { .. })));
        assert!(matches!(new.index(index), Err(Error::UnknownIndex { .. })));
    }
}
