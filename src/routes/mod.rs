//! Change routes: what a change must do, worked out once.
//!
//! Every change to a context reaches some of its consumers: the entity
//! indices, collectors and handlers of the groups the entity joins, leaves
//! or is updated in, and the context's own subscribers. Which ones depends
//! only on where the change happens:
//!
//! - a structural change (add, remove, take, and the unique calls that do
//!   them) moves the entity along an archetype transition (A, ±c) -> B: its
//!   [`Route`] is keyed by the transition;
//! - creating an entity puts it into an archetype, and destroying it takes
//!   it out: one `Route` per archetype each way (every bundle type that
//!   creates into an archetype shares its route);
//! - adding or removing a component kept out of archetypes (a flag or a
//!   sparse component) c on an entity of archetype A leaves it there: one
//!   `Route` per (A, c) each way;
//! - a replacement (`replace`, `modify`, `modify_with`, `modify_each`) of component c on an
//!   entity of archetype A: a [`ReplaceRoute`] keyed by (A, c). It keeps
//!   only what needs the moment of the change (indices, which may refuse a
//!   key; handlers and subscribers, which see the old and the new value):
//!   collectors take replacements of components kept in archetype columns
//!   from the rows' change stamps when they are read, as they take every
//!   other `&mut` write (see `context/tracking.rs` and `storage/stamps/`).
//!   Its collectors stay listed for the hand-over of a stamped entity
//!   before a structural change.
//!
//! A route is compiled the first time it is needed, from the groups'
//! [`Membership`] (which archetypes each group accepts) and the consumers
//! attached to each group ([`Taps`]); it lists the active entity indices to
//! update, the active collectors to feed (those whose trigger takes the
//! event), and whether a group event or a context event must be built at all.
//! Routes are dropped whenever consumers change (a group is made or starts
//! keeping its entity list, a collector or an index is added, removed,
//! switched on or off, a subscription made or ended), and compiled again on
//! next use; a context with no consumer at all is [idle](Routes::is_idle) and
//! skips routing altogether.
//!
//! So a change looks its route up (one or two array reads) and does what it
//! says: nothing outside this module works out "which groups, collectors and
//! indices does this change reach". Groups keep no per-entity state and no
//! counters: a group's entities are the rows of its archetypes, so moving an
//! entity that no one listens to costs the move alone. The one exception is
//! a group someone asked for its entity list
//! ([`Group::entities`](crate::Group::entities)): from then on its routes
//! carry a step that keeps the list current. The first call, through a
//! shared view, cannot drop the compiled routes; it flags them
//! ([`Membership::request_listing`]) and the next structural change drops
//! them before it looks its route up.

mod membership;
mod route;

use crate::id::{CollectorKey, ComponentId, IndexKey};
use crate::matcher::Matcher;
use crate::storage::{ArchetypeId, Archetypes, ComponentSet, TransitionId};

pub(crate) use membership::{Gate, Holding, Member, Membership};
pub(crate) use route::{ReplaceRoute, Route};

/// Which group events a collector takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Takes {
    /// Entities joining the group.
    pub(crate) joined: bool,
    /// Entities leaving the group.
    pub(crate) left: bool,
    /// A component of the group's matcher replaced on a member.
    pub(crate) updated: bool,
}

/// A collector attached to a group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CollectorTap {
    pub(crate) key: CollectorKey,
    pub(crate) takes: Takes,
}

/// An entity index following a group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexTap {
    pub(crate) key: IndexKey,
    /// The component its keys are made from.
    pub(crate) component: ComponentId,
}

/// What hangs on one group, in the order it attached.
#[derive(Default)]
pub(crate) struct Taps {
    pub(crate) collectors: Vec<CollectorTap>,
    pub(crate) indices: Vec<IndexTap>,
}

/// What a route depends on beyond the attachments: whether each consumer is
/// active, whether a group has handlers, whether the context has
/// subscribers. The context answers; routes are dropped when an answer
/// changes.
pub(crate) trait Consumers {
    fn collector_active(&self, key: CollectorKey) -> bool;
    fn collector_keeps_removed(&self, key: CollectorKey) -> bool;
    fn index_active(&self, key: IndexKey) -> bool;
    fn group_handlers(&self, group: u32) -> bool;
    /// Whether group `group` keeps its entity list (someone called
    /// [`Group::entities`](crate::Group::entities)).
    fn group_listed(&self, group: u32) -> bool;
    fn subscribers(&self) -> bool;
}

/// Marks "not compiled yet" in the route tables.
const NONE: u32 = u32::MAX;

/// The routes of one context, compiled on demand, and what they are
/// compiled from.
#[derive(Default)]
pub(crate) struct Routes {
    membership: Membership,
    /// Per group, what hangs on it.
    taps: Vec<Taps>,
    /// Every compiled route of a structural change.
    routes: Vec<Route>,
    /// Every compiled route of a replacement.
    replace_routes: Vec<ReplaceRoute>,
    /// By transition: its route in `routes`, or `NONE`.
    moves: Vec<u32>,
    /// By archetype: the route of an entity created into it.
    spawns: Vec<u32>,
    /// By archetype: the route of an entity destroyed out of it.
    despawns: Vec<u32>,
    /// By archetype, then by column: the route in `replace_routes`.
    replaces: Vec<Vec<u32>>,
    /// By archetype, then by sparse component id: the route in
    /// `replace_routes`.
    sparse_replaces: Vec<Vec<u32>>,
    /// By archetype, then by `2 * component id + added`: the route of
    /// adding or removing a sparse component.
    toggles: Vec<Vec<u32>>,
    /// No consumer at all: every route would be empty.
    idle: bool,
}

/// The entry of `table` at `at`, or `NONE`.
#[inline(always)]
fn entry(table: &[u32], at: usize) -> u32 {
    table.get(at).copied().unwrap_or(NONE)
}

/// Records `route` at `at` of `table` (grown to at least `len`).
fn record(table: &mut Vec<u32>, at: usize, len: usize, route: usize) {
    if table.len() <= at {
        table.resize(len.max(at + 1), NONE);
    }
    table[at] = u32::try_from(route).expect("fewer than 2^32 routes: each costs memory, which runs out first");
}

impl Routes {
    pub(crate) fn new() -> Self {
        Routes {
            idle: true,
            ..Routes::default()
        }
    }

    /// Whether no change needs routing (no active consumer, no handler, no
    /// subscriber, no group keeping its entity list, none starting to).
    #[inline(always)]
    pub(crate) fn is_idle(&self) -> bool {
        self.idle && !self.membership.listing_requested()
    }

    /// Whether the compiled routes of structural changes must be dropped
    /// first: a group started keeping its entity list since they were
    /// compiled (through a shared view, which cannot drop them).
    #[inline(always)]
    fn stale(&self) -> bool {
        self.membership.listing_requested()
    }

    /// Drops the compiled routes if a group started keeping its entity list
    /// since they were compiled (see [`stale`](Routes::stale)).
    fn refresh(&mut self, consumers: &dyn Consumers) {
        if self.membership.take_listing() {
            self.invalidate(consumers);
        }
    }

    /// The groups' membership.
    #[inline(always)]
    pub(crate) fn membership(&self) -> &Membership {
        &self.membership
    }

    /// Learns about new archetypes, if any: call after anything that may
    /// create one, so groups list every archetype they accept.
    #[inline(always)]
    pub(crate) fn sync(&mut self, archetypes: &Archetypes) {
        if self.membership.behind(archetypes) {
            self.membership.sync(archetypes);
        }
    }

    /// Adds the group of `matcher` (no equal one exists); returns its index.
    /// Call [`invalidate`](Routes::invalidate) after.
    pub(crate) fn add_group(&mut self, matcher: Matcher, archetypes: &Archetypes) -> u32 {
        let group = self.membership.add(matcher, archetypes);
        self.taps.push(Taps::default());
        group
    }

    /// Collector `key` takes `takes` of group `group`'s events.
    pub(crate) fn attach_collector(&mut self, group: u32, key: CollectorKey, takes: Takes) {
        self.taps[group as usize].collectors.push(CollectorTap { key, takes });
    }

    /// Collector `key` no longer takes group `group`'s events.
    pub(crate) fn detach_collector(&mut self, group: u32, key: CollectorKey) {
        self.taps[group as usize].collectors.retain(|tap| tap.key != key);
    }

    /// Index `key`, keyed on `component`, follows group `group`.
    pub(crate) fn attach_index(&mut self, group: u32, key: IndexKey, component: ComponentId) {
        self.taps[group as usize].indices.push(IndexTap { key, component });
    }

    /// Index `key` no longer follows group `group`.
    pub(crate) fn detach_index(&mut self, group: u32, key: IndexKey) {
        self.taps[group as usize].indices.retain(|tap| tap.key != key);
    }

    /// Drops every compiled route (consumers changed), and works out whether
    /// any consumer is left.
    pub(crate) fn invalidate(&mut self, consumers: &dyn Consumers) {
        self.routes.clear();
        self.replace_routes.clear();
        self.moves.clear();
        self.spawns.clear();
        self.despawns.clear();
        self.replaces.clear();
        self.sparse_replaces.clear();
        self.toggles.clear();
        let active = self.taps.iter().enumerate().any(|(group, taps)| {
            consumers.group_handlers(group as u32)
                || consumers.group_listed(group as u32)
                || taps.collectors.iter().any(|tap| consumers.collector_active(tap.key))
                || taps.indices.iter().any(|tap| consumers.index_active(tap.key))
        });
        self.idle = !active && !consumers.subscribers();
    }

    /// The route of transition `transition`, compiled (with the answers of
    /// `consumers()`, asked only then) if needed.
    #[inline(always)]
    pub(crate) fn of_move<C: Consumers>(
        &mut self,
        transition: TransitionId,
        archetypes: &Archetypes,
        consumers: impl FnOnce() -> C,
    ) -> (&Route, &Membership) {
        let mut route = entry(&self.moves, transition.index());
        if route == NONE || self.stale() {
            route = self.compile_move(transition, archetypes, &consumers());
        }
        (&self.routes[route as usize], &self.membership)
    }

    #[cold]
    #[inline(never)]
    fn compile_move(&mut self, transition: TransitionId, archetypes: &Archetypes, consumers: &dyn Consumers) -> u32 {
        self.refresh(consumers);
        self.sync(archetypes);
        let edge = archetypes.transition(transition);
        let route = Route::of_move(
            &self.membership,
            (edge.from, edge.to),
            (edge.component, edge.added),
            &self.taps,
            consumers,
        );
        self.routes.push(route);
        let len = archetypes.transition_count();
        record(&mut self.moves, transition.index(), len, self.routes.len() - 1);
        entry(&self.moves, transition.index())
    }

    /// The route of an entity entering (`spawn`) or leaving archetype
    /// `archetype`, compiled if needed.
    #[inline(always)]
    pub(crate) fn of_archetype<C: Consumers>(
        &mut self,
        archetype: ArchetypeId,
        spawn: bool,
        archetypes: &Archetypes,
        consumers: impl FnOnce() -> C,
    ) -> (&Route, &Membership) {
        let table = if spawn { &self.spawns } else { &self.despawns };
        let mut route = entry(table, archetype.index());
        if route == NONE || self.stale() {
            route = self.compile_archetype(archetype, spawn, archetypes, &consumers());
        }
        (&self.routes[route as usize], &self.membership)
    }

    #[cold]
    #[inline(never)]
    fn compile_archetype(
        &mut self,
        archetype: ArchetypeId,
        spawn: bool,
        archetypes: &Archetypes,
        consumers: &dyn Consumers,
    ) -> u32 {
        self.refresh(consumers);
        self.sync(archetypes);
        let route = Route::of_archetype(&self.membership, archetype, spawn, &self.taps, consumers);
        self.routes.push(route);
        let table = if spawn { &mut self.spawns } else { &mut self.despawns };
        record(table, archetype.index(), archetypes.len(), self.routes.len() - 1);
        entry(table, archetype.index())
    }

    /// The route of adding (`added`) or removing sparse component
    /// `component` on an entity of archetype `archetype`, compiled if
    /// needed. The archetype holds an entity, so the membership knows it
    /// already.
    #[inline(always)]
    pub(crate) fn of_toggle<C: Consumers>(
        &mut self,
        archetype: ArchetypeId,
        component: ComponentId,
        added: bool,
        archetypes: &Archetypes,
        consumers: impl FnOnce() -> C,
    ) -> (&Route, &Membership) {
        let route = self.toggle_index(archetype, component, added, archetypes, consumers);
        (&self.routes[route as usize], &self.membership)
    }

    /// As [`of_toggle`](Routes::of_toggle), the route's index, valid for
    /// [`route`](Routes::route) until groups, collectors, indices or
    /// subscriptions change.
    #[inline(always)]
    pub(crate) fn toggle_index<C: Consumers>(
        &mut self,
        archetype: ArchetypeId,
        component: ComponentId,
        added: bool,
        archetypes: &Archetypes,
        consumers: impl FnOnce() -> C,
    ) -> u32 {
        let at = 2 * component.index() + usize::from(added);
        let table = self.toggles.get(archetype.index()).map_or(&[][..], Vec::as_slice);
        let route = entry(table, at);
        if route != NONE && !self.stale() {
            return route;
        }
        self.compile_toggle(archetype, component, added, archetypes, &consumers())
    }

    /// The route at `index` (from [`toggle_index`](Routes::toggle_index)).
    #[inline(always)]
    pub(crate) fn route(&self, index: u32) -> &Route {
        &self.routes[index as usize]
    }

    #[cold]
    #[inline(never)]
    fn compile_toggle(
        &mut self,
        archetype: ArchetypeId,
        component: ComponentId,
        added: bool,
        archetypes: &Archetypes,
        consumers: &dyn Consumers,
    ) -> u32 {
        self.refresh(consumers);
        self.sync(archetypes);
        let set = archetypes.get(archetype).set();
        let route = Route::of_toggle(
            &self.membership,
            (archetype, set),
            (component, added),
            &self.taps,
            consumers,
        );
        self.routes.push(route);
        let a = archetype.index();
        if self.toggles.len() <= a {
            self.toggles.resize_with(a + 1, Vec::new);
        }
        let at = 2 * component.index() + usize::from(added);
        record(&mut self.toggles[a], at, at + 1, self.routes.len() - 1);
        entry(&self.toggles[a], at)
    }

    /// The route of replacing component `component`, kept in column
    /// `column` of archetype `archetype` (of `columns` columns), or kept out
    /// of archetypes (`column` `None`), compiled if needed. The archetype
    /// holds an entity, so the membership knows it already; `set` gives its
    /// components (asked only when compiling).
    #[inline(always)]
    pub(crate) fn of_replace<'s, C: Consumers>(
        &mut self,
        archetype: ArchetypeId,
        column: Option<usize>,
        component: ComponentId,
        columns: usize,
        set: impl FnOnce() -> &'s ComponentSet,
        consumers: impl FnOnce() -> C,
    ) -> (&ReplaceRoute, &Membership) {
        let (tables, at) = match column {
            Some(column) => (&self.replaces, column),
            None => (&self.sparse_replaces, component.index()),
        };
        let table = tables.get(archetype.index()).map_or(&[][..], Vec::as_slice);
        let mut route = entry(table, at);
        if route == NONE {
            route = self.compile_replace(archetype, column, component, columns, set(), &consumers());
        }
        (&self.replace_routes[route as usize], &self.membership)
    }

    #[cold]
    #[inline(never)]
    fn compile_replace(
        &mut self,
        archetype: ArchetypeId,
        column: Option<usize>,
        component: ComponentId,
        columns: usize,
        set: &ComponentSet,
        consumers: &dyn Consumers,
    ) -> u32 {
        let route = ReplaceRoute::compile(
            &self.membership,
            (archetype, set),
            (component, column.is_none()),
            &self.taps,
            consumers,
        );
        self.replace_routes.push(route);
        let a = archetype.index();
        let (tables, at, len) = match column {
            Some(column) => (&mut self.replaces, column, columns),
            None => (&mut self.sparse_replaces, component.index(), component.index() + 1),
        };
        if tables.len() <= a {
            tables.resize_with(a + 1, Vec::new);
        }
        record(&mut tables[a], at, len, self.replace_routes.len() - 1);
        entry(&tables[a], at)
    }

    /// Checks the membership against the archetypes.
    pub(crate) fn check(&self, archetypes: &Archetypes) -> Result<(), String> {
        self.membership.check(archetypes)?;
        if self.taps.len() != self.membership.len() {
            return Err(format!(
                "{} groups but {} tap lists",
                self.membership.len(),
                self.taps.len()
            ));
        }
        Ok(())
    }
}
