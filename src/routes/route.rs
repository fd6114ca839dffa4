//! The compiled routes: what one structural change (`Route`) or one
//! replacement (`ReplaceRoute`) must do, and how each is worked out from the
//! groups' membership and what hangs on each group.

use std::ops::Range;

use super::membership::Membership;
use super::{Consumers, Taps};
use crate::component::ComponentId;
use crate::id::{CollectorKey, IndexKey};
use crate::storage::ArchetypeId;

/// What an entity moving between two archetypes (or entering or leaving
/// storage) must do, in order:
///
/// 1. phase one, before any event: file the entity in (or take it out of)
///    the entity indices of the groups it joins (or leaves): [`indices`];
/// 2. phase two, in group creation order, for each group joined or left that
///    someone hears: feed its collectors that take the event, then build the
///    group event for its handlers if it has any: [`steps`];
/// 3. the context's subscribers' component events, if there are any:
///    [`subscribers`].
///
/// Groups that change membership but that nobody hears do not appear: their
/// entity counts come from the archetypes' lengths.
///
/// [`indices`]: Route::indices
/// [`steps`]: Route::steps
/// [`subscribers`]: Route::subscribers
#[derive(Debug, Default)]
pub(crate) struct Route {
    /// Active indices of the groups joined (`true`) or left, in group order.
    pub(crate) indices: Box<[(IndexKey, bool)]>,
    /// The groups joined or left that someone hears, in group order.
    pub(crate) steps: Box<[Step]>,
    /// Every step's collectors, one range per step.
    collectors: Box<[CollectorKey]>,
    /// Whether the context has subscribers (for `ComponentAdded` and
    /// friends).
    pub(crate) subscribers: bool,
}

/// One group joined or left, in a [`Route`].
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub(crate) group: u32,
    pub(crate) joined: bool,
    /// Whether the group has handlers (a group event must be built for them).
    pub(crate) emit: bool,
    collectors: Range<u32>,
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

    /// Whether any index files the entity on this change.
    #[inline]
    pub(crate) fn files(&self) -> bool {
        self.indices.iter().any(|&(_, joined)| joined)
    }

    /// The route for groups `changes` (group, joined), ascending.
    pub(super) fn compile(
        changes: impl Iterator<Item = (u32, bool)>,
        taps: &[Taps],
        consumers: &dyn Consumers,
    ) -> Route {
        let mut indices = Vec::new();
        let mut steps = Vec::new();
        let mut collectors = Vec::new();
        for (group, joined) in changes {
            let taps = &taps[group as usize];
            indices.extend(
                taps.indices
                    .iter()
                    .filter(|tap| consumers.index_active(tap.key))
                    .map(|tap| (tap.key, joined)),
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
            if start != end || emit {
                steps.push(Step {
                    group,
                    joined,
                    emit,
                    collectors: start..end,
                });
            }
        }
        Route {
            indices: indices.into(),
            steps: steps.into(),
            collectors: collectors.into(),
            subscribers: consumers.subscribers(),
        }
    }

    /// The route of a move from archetype `from` to `to`: the groups of one
    /// and not the other.
    pub(super) fn of_move(
        membership: &Membership,
        from: ArchetypeId,
        to: ArchetypeId,
        taps: &[Taps],
        consumers: &dyn Consumers,
    ) -> Route {
        let (before, after) = (membership.of_archetype(from), membership.of_archetype(to));
        let mut changes = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < before.len() || j < after.len() {
            match (before.get(i), after.get(j)) {
                (Some(&a), Some(&b)) if a == b => (i, j) = (i + 1, j + 1),
                (Some(&a), Some(&b)) if a < b => {
                    changes.push((a, false));
                    i += 1;
                }
                (Some(&a), None) => {
                    changes.push((a, false));
                    i += 1;
                }
                (_, Some(&b)) => {
                    changes.push((b, true));
                    j += 1;
                }
                (None, None) => unreachable!("the loop condition"),
            }
        }
        Route::compile(changes.into_iter(), taps, consumers)
    }
}

/// What replacing one component of an entity of one archetype must do: for
/// the groups of the archetype whose matcher watches the component, re-key
/// their entity indices keyed on it, feed their collectors that take updates,
/// and build `Updated` events for those with handlers; then
/// `ComponentReplaced` for the context's subscribers.
#[derive(Debug, Default)]
pub(crate) struct ReplaceRoute {
    /// Active collectors taking updates, in group order (one may appear
    /// twice, if it watches two such groups: collecting is idempotent).
    pub(crate) collectors: Box<[CollectorKey]>,
    /// Active indices keyed on the component, in group order.
    pub(crate) indices: Box<[IndexKey]>,
    /// The groups with handlers, in creation order.
    pub(crate) groups: Box<[u32]>,
    /// Whether the context has subscribers.
    pub(crate) subscribers: bool,
    /// Nothing but collectors: no index to re-key, no value to show.
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

    /// The route for replacing component `component` on archetype
    /// `archetype`.
    pub(super) fn compile(
        membership: &Membership,
        archetype: ArchetypeId,
        component: ComponentId,
        taps: &[Taps],
        consumers: &dyn Consumers,
    ) -> ReplaceRoute {
        let mut route = (Vec::new(), Vec::new(), Vec::new());
        for &group in membership.of_archetype(archetype) {
            if !membership.group(group).matcher.watches(component) {
                continue;
            }
            let taps = &taps[group as usize];
            route.0.extend(
                taps.collectors
                    .iter()
                    .filter(|tap| tap.takes.updated && consumers.collector_active(tap.key))
                    .map(|tap| tap.key),
            );
            route.1.extend(
                taps.indices
                    .iter()
                    .filter(|tap| tap.component == component && consumers.index_active(tap.key))
                    .map(|tap| tap.key),
            );
            if consumers.group_handlers(group) {
                route.2.push(group);
            }
        }
        let subscribers = consumers.subscribers();
        ReplaceRoute {
            lean: route.1.is_empty() && route.2.is_empty() && !subscribers,
            collectors: route.0.into(),
            indices: route.1.into(),
            groups: route.2.into(),
            subscribers,
        }
    }
}
