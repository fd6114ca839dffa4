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
//! - a replacement (`replace`, `modify`, `modify_each`) of component c on an
//!   entity of archetype A: a [`ReplaceRoute`] keyed by (A, c).
//!
//! A route is compiled the first time it is needed, from the groups'
//! [`Membership`] (which archetypes each group accepts) and the consumers
//! attached to each group ([`Taps`]); it lists the active entity indices to
//! update, the active collectors to feed (those whose trigger takes the
//! event), and whether a group event or a context event must be built at all.
//! Routes are dropped whenever consumers change (a group is made, a collector
//! or an index is added, removed, switched on or off, a subscription made or
//! ended), and compiled again on next use; a context with no consumer at all
//! is [idle](Routes::is_idle) and skips routing altogether.
//!
//! So a change looks its route up (one or two array reads) and does what it
//! says: nothing outside this module works out "which groups, collectors and
//! indices does this change reach". Groups keep no per-entity state and no
//! counters: a group's entities are the rows of its archetypes, so moving an
//! entity that no one listens to costs the move alone.

mod membership;
mod route;

use crate::component::ComponentId;
use crate::id::{CollectorKey, IndexKey};
use crate::matcher::Matcher;
use crate::storage::{ArchetypeId, Archetypes, TransitionId};

pub(crate) use membership::{Member, Membership};
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
    fn index_active(&self, key: IndexKey) -> bool;
    fn group_handlers(&self, group: u32) -> bool;
    fn subscribers(&self) -> bool;
}

/// The routes of one context, compiled on demand, and what they are
/// compiled from.
#[derive(Default)]
pub(crate) struct Routes {
    membership: Membership,
    /// Per group, what hangs on it.
    taps: Vec<Taps>,
    /// By transition.
    moves: Vec<Option<Route>>,
    /// By archetype: an entity created into it.
    spawns: Vec<Option<Route>>,
    /// By archetype: an entity destroyed out of it.
    despawns: Vec<Option<Route>>,
    /// By archetype, then by column.
    replaces: Vec<Vec<Option<ReplaceRoute>>>,
    /// No consumer at all: every route would be empty.
    idle: bool,
}

impl Routes {
    pub(crate) fn new() -> Self {
        Routes {
            idle: true,
            ..Routes::default()
        }
    }

    /// Whether no change needs routing (no active consumer, no handler, no
    /// subscriber).
    #[inline(always)]
    pub(crate) fn is_idle(&self) -> bool {
        self.idle
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
        self.moves.clear();
        self.spawns.clear();
        self.despawns.clear();
        self.replaces.clear();
        let active = self.taps.iter().enumerate().any(|(group, taps)| {
            consumers.group_handlers(group as u32)
                || taps.collectors.iter().any(|tap| consumers.collector_active(tap.key))
                || taps.indices.iter().any(|tap| consumers.index_active(tap.key))
        });
        self.idle = !active && !consumers.subscribers();
    }

    /// The route of transition `transition` (compiled if needed).
    #[inline]
    pub(crate) fn of_move(
        &mut self,
        transition: TransitionId,
        archetypes: &Archetypes,
        consumers: &dyn Consumers,
    ) -> &Route {
        let t = transition.index();
        if self.moves.get(t).is_none_or(Option::is_none) {
            self.compile_move(transition, archetypes, consumers);
        }
        self.moves[t].as_ref().expect("compiled above")
    }

    #[cold]
    fn compile_move(&mut self, transition: TransitionId, archetypes: &Archetypes, consumers: &dyn Consumers) {
        self.sync(archetypes);
        let (from, to) = archetypes.transition_ends(transition);
        let route = Route::of_move(&self.membership, from, to, &self.taps, consumers);
        let t = transition.index();
        if self.moves.len() <= t {
            self.moves
                .resize_with(archetypes.transition_count().max(t + 1), || None);
        }
        self.moves[t] = Some(route);
    }

    /// The route of an entity entering (`spawn`) or leaving archetype
    /// `archetype` (compiled if needed).
    #[inline]
    pub(crate) fn of_archetype(
        &mut self,
        archetype: ArchetypeId,
        spawn: bool,
        archetypes: &Archetypes,
        consumers: &dyn Consumers,
    ) -> &Route {
        let a = archetype.index();
        let known = if spawn { &self.spawns } else { &self.despawns };
        if known.get(a).is_none_or(Option::is_none) {
            self.compile_archetype(archetype, spawn, archetypes, consumers);
        }
        let table = if spawn { &self.spawns } else { &self.despawns };
        table[a].as_ref().expect("compiled above")
    }

    #[cold]
    fn compile_archetype(
        &mut self,
        archetype: ArchetypeId,
        spawn: bool,
        archetypes: &Archetypes,
        consumers: &dyn Consumers,
    ) {
        self.sync(archetypes);
        let groups = self.membership.of_archetype(archetype).iter().map(|&g| (g, spawn));
        let route = Route::compile(groups, &self.taps, consumers);
        let table = if spawn { &mut self.spawns } else { &mut self.despawns };
        let a = archetype.index();
        if table.len() <= a {
            table.resize_with(archetypes.len().max(a + 1), || None);
        }
        table[a] = Some(route);
    }

    /// The route of replacing the component of column `column` of archetype
    /// `archetype` (compiled if needed).
    #[inline]
    pub(crate) fn of_replace(
        &mut self,
        archetype: ArchetypeId,
        column: usize,
        archetypes: &Archetypes,
        consumers: &dyn Consumers,
    ) -> &ReplaceRoute {
        let a = archetype.index();
        let known = self
            .replaces
            .get(a)
            .and_then(|columns| columns.get(column))
            .is_some_and(Option::is_some);
        if !known {
            self.compile_replace(archetype, column, archetypes, consumers);
        }
        self.replaces[a][column].as_ref().expect("compiled above")
    }

    #[cold]
    fn compile_replace(
        &mut self,
        archetype: ArchetypeId,
        column: usize,
        archetypes: &Archetypes,
        consumers: &dyn Consumers,
    ) {
        self.sync(archetypes);
        let target = archetypes.get(archetype);
        let component = target
            .component_infos()
            .nth(column)
            .expect("a column of the archetype")
            .id();
        let route = ReplaceRoute::compile(&self.membership, archetype, component, &self.taps, consumers);
        let a = archetype.index();
        if self.replaces.len() <= a {
            self.replaces.resize_with(archetypes.len().max(a + 1), Vec::new);
        }
        let columns = &mut self.replaces[a];
        if columns.len() <= column {
            columns.resize_with(target.set().len(), || None);
        }
        columns[column] = Some(route);
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
