//! The compiled routes: what one structural change (`Route`) or one
//! replacement (`ReplaceRoute`) must do, and how each is worked out from the
//! groups' membership and what hangs on each group.

use std::ops::Range;

use super::membership::{Gate, Membership};
use super::{Consumers, Taps};
use crate::id::{CollectorKey, ComponentId, IndexKey};
use crate::storage::{ArchetypeId, ComponentSet};

/// What an entity moving between two archetypes (or entering or leaving
/// storage) must do, in order:
///
/// 1. phase one, before any event: file the entity in (or take it out of)
///    the entity indices of the groups it joins (or leaves): [`indices`];
/// 2. phase two: the entity goes in (or out of) the entity list of each
///    group joined (or left) that keeps one; then, in group creation order,
///    for each group joined or left that someone hears: feed its collectors
///    that take the event, then build the group event for its handlers if it
///    has any: [`steps`];
/// 3. the context's subscribers' component events, if there are any:
///    [`subscribers`].
///
/// Groups that change membership but that nobody hears and that keep no
/// entity list do not appear: their entity counts come from the archetypes'
/// lengths.
///
/// A step or filing of a group with a per-entity check is *gated*: it
/// happens only if a [`Gate`] for the change says the entity's membership
/// really changes (see [`Route::passes`]).
///
/// [`indices`]: Route::indices
/// [`steps`]: Route::steps
/// [`subscribers`]: Route::subscribers
#[derive(Debug, Default)]
pub(crate) struct Route {
    /// Active indices of the groups joined or left, in group order.
    pub(crate) indices: Box<[Filing]>,
    /// The groups joined or left that someone hears, in group order.
    pub(crate) steps: Box<[Step]>,
    /// Every step's collectors, one range per step.
    collectors: Box<[CollectorKey]>,
    /// Whether the context has subscribers (for `ComponentAdded` and
    /// friends).
    pub(crate) subscribers: bool,
    /// Whether any step or filing is gated.
    pub(crate) gated: bool,
    /// Whether any step's group keeps its entity list.
    pub(crate) lists: bool,
    /// Nothing but collectors to feed: no index, no gate, no group handler,
    /// no entity list, no subscriber, no removed value to keep. Such a route is carried out
    /// by every step's collectors collecting the entity
    /// ([`all_collectors`](Route::all_collectors)), with no event built.
    pub(crate) lean: bool,
}

/// One entity index filing (joined) or unfiling an entity, in a [`Route`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filing {
    pub(crate) key: IndexKey,
    pub(crate) joined: bool,
    /// The group the index follows.
    pub(crate) group: u32,
    pub(crate) gated: bool,
}

/// One group joined or left, in a [`Route`].
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub(crate) group: u32,
    pub(crate) joined: bool,
    /// Whether it happens only if the change's gate passes the group.
    pub(crate) gated: bool,
    /// Whether the group has handlers (a group event must be built for them).
    pub(crate) emit: bool,
    /// Whether the group keeps its entity list (the entity goes in or out).
    pub(crate) list: bool,
    collectors: Range<u32>,
}

impl Step {
    /// Whether some collector of the step's group takes its event.
    #[inline(always)]
    pub(crate) fn collects(&self) -> bool {
        !self.collectors.is_empty()
    }
}

impl Route {
    /// Whether the change needs no work beyond storage.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.indices.is_empty() && self.steps.is_empty() && !self.subscribers
    }

    /// The active collectors of `step`'s group that take its event, in the
    /// order they attached.
    #[inline(always)]
    pub(crate) fn collectors(&self, step: &Step) -> &[CollectorKey] {
        &self.collectors[step.collectors.start as usize..step.collectors.end as usize]
    }

    /// The collectors of every step, in order (what a lean route feeds).
    #[inline(always)]
    pub(crate) fn all_collectors(&self) -> &[CollectorKey] {
        &self.collectors
    }

    /// Whether the route can be carried out right after the storage
    /// change, with no check before it and nothing asked of the entity:
    /// no index to file (none can refuse the change), no gated step, no
    /// subscriber; only collectors and group handlers to tell.
    #[inline(always)]
    pub(crate) fn is_direct(&self) -> bool {
        !self.gated && !self.subscribers && self.indices.is_empty()
    }

    /// Whether any index may file the entity on this change.
    #[inline]
    pub(crate) fn files(&self) -> bool {
        self.indices.iter().any(|filing| filing.joined)
    }

    /// Whether a step or filing of `group`, gated or not, happens for the
    /// change `gate` describes (`None`: the route has no gated entry).
    #[inline(always)]
    pub(crate) fn passes(gated: bool, group: u32, gate: Option<&Gate<'_>>) -> bool {
        !gated || gate.is_none_or(|gate| gate.passes(group))
    }

    /// The route for groups `changes` (group, joined, gated), ascending.
    pub(super) fn compile(
        changes: impl Iterator<Item = (u32, bool, bool)>,
        taps: &[Taps],
        consumers: &dyn Consumers,
    ) -> Route {
        let mut indices = Vec::new();
        let mut steps = Vec::new();
        let mut collectors = Vec::new();
        for (group, joined, gated) in changes {
            let taps = &taps[group as usize];
            indices.extend(
                taps.indices
                    .iter()
                    .filter(|tap| consumers.index_active(tap.key))
                    .map(|tap| Filing {
                        key: tap.key,
                        joined,
                        group,
                        gated,
                    }),
            );
            let start = collectors.len() as u32;
            collectors.extend(
                taps.collectors
                    .iter()
                    .filter(|tap| {
                        (if joined { tap.takes.joined } else { tap.takes.left }) && consumers.collector_active(tap.key)
                    })
                    .map(|tap| tap.key),
            );
            let end = collectors.len() as u32;
            let emit = consumers.group_handlers(group);
            let list = consumers.group_listed(group);
            if start != end || emit || list {
                steps.push(Step {
                    group,
                    joined,
                    gated,
                    emit,
                    list,
                    collectors: start..end,
                });
            }
        }
        let gated = steps.iter().any(|step| step.gated) || indices.iter().any(|filing| filing.gated);
        let subscribers = consumers.subscribers();
        let keeps = |step: &Step| {
            !step.joined
                && collectors[step.collectors.start as usize..step.collectors.end as usize]
                    .iter()
                    .any(|&key| consumers.collector_keeps_removed(key))
        };
        let lists = steps.iter().any(|step| step.list);
        let lean = indices.is_empty()
            && !subscribers
            && !gated
            && !lists
            && steps.iter().all(|step| !step.emit && !keeps(step));
        Route {
            indices: indices.into(),
            steps: steps.into(),
            collectors: collectors.into(),
            subscribers,
            gated,
            lists,
            lean,
        }
    }

    /// The route of a move from archetype `from` to `to` along a transition
    /// adding (`added`) or removing component `component`: the groups of one
    /// and not the other, and the gated groups of both whose AnyOf is left to
    /// the per-entity check.
    pub(super) fn of_move(
        membership: &Membership,
        (from, to): (ArchetypeId, ArchetypeId),
        (component, added): (ComponentId, bool),
        taps: &[Taps],
        consumers: &dyn Consumers,
    ) -> Route {
        let (before, after) = (membership.of_archetype(from), membership.of_archetype(to));
        let gated = |group: u32| membership.group(group).is_gated();
        let mut changes = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < before.len() || j < after.len() {
            match (before.get(i), after.get(j)) {
                (Some(&a), Some(&b)) if a == b => {
                    let member = membership.group(a);
                    if member.is_gated() && member.is_relaxed() {
                        changes.push((a, member.joins_on(component, added), true));
                    }
                    (i, j) = (i + 1, j + 1);
                }
                (Some(&a), Some(&b)) if a < b => {
                    changes.push((a, false, gated(a)));
                    i += 1;
                }
                (Some(&a), None) => {
                    changes.push((a, false, gated(a)));
                    i += 1;
                }
                (_, Some(&b)) => {
                    changes.push((b, true, gated(b)));
                    j += 1;
                }
                (None, None) => unreachable!("the loop runs while `before` or `after` has an element left"),
            }
        }
        Route::compile(changes.into_iter(), taps, consumers)
    }

    /// The route of an entity entering (`spawn`) or leaving archetype
    /// `archetype`: every group accepting it, gated where the group checks
    /// entities.
    pub(super) fn of_archetype(
        membership: &Membership,
        archetype: ArchetypeId,
        spawn: bool,
        taps: &[Taps],
        consumers: &dyn Consumers,
    ) -> Route {
        let groups = membership
            .of_archetype(archetype)
            .iter()
            .map(|&g| (g, spawn, membership.group(g).is_gated()));
        Route::compile(groups, taps, consumers)
    }

    /// The route of adding (`added`) or removing sparse component
    /// `component` on an entity of archetype `archetype` (components `set`):
    /// the groups accepting it whose matcher names the component, gated
    /// unless the archetype and the component decide membership alone.
    pub(super) fn of_toggle(
        membership: &Membership,
        (archetype, set): (ArchetypeId, &ComponentSet),
        (component, added): (ComponentId, bool),
        taps: &[Taps],
        consumers: &dyn Consumers,
    ) -> Route {
        let changes = membership.of_archetype(archetype).iter().filter_map(|&group| {
            let member = membership.group(group);
            if !member.sparse.contains(component) {
                return None;
            }
            let before = member.decide(set, Some((component, !added)));
            let after = member.decide(set, Some((component, added)));
            match (before, after) {
                (Some(before), Some(after)) => (before != after).then_some((group, after, false)),
                _ => Some((group, member.joins_on(component, added), true)),
            }
        });
        Route::compile(changes, taps, consumers)
    }
}

/// What replacing one component of an entity of one archetype must do: for
/// the groups of the archetype whose matcher watches the component, re-key
/// their entity indices keyed on it, feed their collectors that take updates,
/// and build `Updated` events for those with handlers; then
/// `ComponentReplaced` for the context's subscribers.
///
/// Its collectors take the change from change stamps when they are read
/// (the write stamps the row, or the slot of a flag or sparse component),
/// so carrying the route out does only what needs the moment of the
/// change (indices, which may refuse a key; handlers and subscribers, which
/// see the old and the new value). Its collectors stay listed for handing a
/// stamped entity over before a structural change.
///
/// A group with a per-entity check whose membership the archetype (and the
/// component, if it is sparse) does not decide is *gated*: its collectors,
/// indices and handlers are reached only if the entity is a member, which
/// the replacing call asks a [`Gate`].
#[derive(Debug, Default)]
pub(crate) struct ReplaceRoute {
    /// Active collectors taking updates, in group order (one may appear
    /// twice, if it watches two such groups: collecting is idempotent).
    pub(crate) collectors: Box<[CollectorKey]>,
    /// The group of each collector.
    pub(crate) collector_groups: Box<[u32]>,
    /// Active indices keyed on the component, in group order.
    pub(crate) indices: Box<[IndexKey]>,
    /// The group of each index.
    pub(crate) index_groups: Box<[u32]>,
    /// The groups with handlers, in creation order.
    pub(crate) groups: Box<[u32]>,
    /// The gated groups, ascending (empty for most routes).
    pub(crate) gated: Box<[u32]>,
    /// Whether the context has subscribers.
    pub(crate) subscribers: bool,
    /// Nothing to do at the moment of the change: no index to re-key, no
    /// value to show (collectors take it from change stamps).
    pub(crate) lean: bool,
}

impl ReplaceRoute {
    /// The route of a replace when nothing observes the context: lean, with
    /// nobody to tell.
    pub(crate) fn idle() -> Self {
        ReplaceRoute {
            lean: true,
            ..ReplaceRoute::default()
        }
    }

    /// Whether anyone must see the old and the new value.
    #[inline(always)]
    pub(crate) fn shows_values(&self) -> bool {
        self.subscribers || !self.groups.is_empty()
    }

    /// The route for replacing component `component` (kept out of
    /// archetypes if `sparse`) on archetype `archetype` (components `set`).
    pub(super) fn compile(
        membership: &Membership,
        (archetype, set): (ArchetypeId, &ComponentSet),
        (component, sparse): (ComponentId, bool),
        taps: &[Taps],
        consumers: &dyn Consumers,
    ) -> ReplaceRoute {
        let mut route = ReplaceRoute::default();
        let (mut collectors, mut collector_groups) = (Vec::new(), Vec::new());
        let (mut indices, mut index_groups) = (Vec::new(), Vec::new());
        let (mut groups, mut gated) = (Vec::new(), Vec::new());
        for &group in membership.of_archetype(archetype) {
            let member = membership.group(group);
            if !member.matcher.watches(component) {
                continue;
            }
            match member.decide(set, sparse.then_some((component, true))) {
                Some(false) => continue,
                Some(true) => {}
                None => gated.push(group),
            }
            let taps = &taps[group as usize];
            for tap in taps.collectors.iter() {
                if tap.takes.updated && consumers.collector_active(tap.key) {
                    collectors.push(tap.key);
                    collector_groups.push(group);
                }
            }
            for tap in taps.indices.iter() {
                if tap.component == component && consumers.index_active(tap.key) {
                    indices.push(tap.key);
                    index_groups.push(group);
                }
            }
            if consumers.group_handlers(group) {
                groups.push(group);
            }
        }
        route.subscribers = consumers.subscribers();
        route.lean = indices.is_empty() && groups.is_empty() && !route.subscribers;
        route.collectors = collectors.into();
        route.collector_groups = collector_groups.into();
        route.indices = indices.into();
        route.index_groups = index_groups.into();
        route.groups = groups.into();
        route.gated = gated.into();
        route
    }
}
