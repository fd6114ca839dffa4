//! `Groups`: the groups of one context as plain data, and the bookkeeping that
//! keeps them current: which groups accept each archetype, and the cached
//! group delta (groups joined, groups left) of each archetype transition.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use smallvec::SmallVec;

use crate::collectors::{CollectorKey, Trigger};
use crate::entity::Entity;
use crate::error::Error;
use crate::event::SubscriptionId;
use crate::group::{GroupEvent, GroupId};
use crate::indices::IndexKey;
use crate::matcher::Matcher;
use crate::storage::{ArchetypeId, Archetypes, TransitionId};

pub(crate) type GroupHandler = Box<dyn FnMut(&GroupEvent<'_>) + Send + Sync>;

/// One group: its matcher, the archetypes the matcher accepts (in creation
/// order), its entity count, its cached entity list and its subscribers.
pub(crate) struct GroupData {
    pub(crate) matcher: Matcher,
    pub(crate) archetypes: Vec<ArchetypeId>,
    pub(crate) len: usize,
    cache: Mutex<EntityCache>,
    /// The collectors fed by this group, in the order they attached.
    pub(crate) collectors: Vec<(CollectorKey, Trigger)>,
    /// The entity indices that follow this group, in the order they attached.
    pub(crate) indices: Vec<IndexKey>,
    handlers: Vec<(SubscriptionId, GroupHandler)>,
}

/// A group's entities collected into a list, rebuilt only after a change.
struct EntityCache {
    valid: bool,
    list: Arc<Vec<Entity>>,
}

/// One group gained or lost by a transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) group: u32,
    pub(crate) joined: bool,
}

/// Every group of a context.
pub(crate) struct Groups {
    context: u32,
    list: Vec<GroupData>,
    by_matcher: HashMap<Matcher, u32>,
    /// Per archetype, the groups whose matcher accepts it, ascending.
    by_archetype: Vec<SmallVec<[u32; 4]>>,
    /// Per transition, the groups it makes an entity join or leave, ascending;
    /// `None` until first needed, and again after a group is created.
    deltas: Vec<Option<Box<[Change]>>>,
    /// Handlers and collectors across all groups: zero means no group event
    /// needs building.
    consumer_count: usize,
}

impl Groups {
    /// The groups of the context with instance id `context` (none yet).
    pub(crate) fn new(context: u32) -> Self {
        Groups {
            context,
            list: Vec::new(),
            by_matcher: HashMap::new(),
            by_archetype: Vec::new(),
            deltas: Vec::new(),
            consumer_count: 0,
        }
    }

    /// The number of groups.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are no groups (then changes need no group bookkeeping).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The public id of group `index`.
    #[inline]
    pub(crate) fn id(&self, index: u32) -> GroupId {
        GroupId {
            context: self.context,
            index,
        }
    }

    /// The index of group `id`; [`Error::UnknownGroup`] (naming `context`)
    /// if it is not one of these groups.
    pub(crate) fn lookup(&self, id: GroupId, context: &'static str) -> Result<u32, Error> {
        if id.context == self.context && (id.index as usize) < self.list.len() {
            Ok(id.index)
        } else {
            Err(Error::UnknownGroup { context, group: id })
        }
    }

    #[inline]
    pub(crate) fn get(&self, index: u32) -> &GroupData {
        &self.list[index as usize]
    }

    /// Every group, in creation order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &GroupData> + '_ {
        self.list.iter()
    }

    /// The group of an equal matcher, if there is one.
    pub(crate) fn find(&self, matcher: &Matcher) -> Option<u32> {
        self.by_matcher.get(matcher).copied()
    }

    /// Whether any group has a subscriber or a collector (else no group
    /// event is built).
    #[inline]
    pub(crate) fn has_consumers(&self) -> bool {
        self.consumer_count != 0
    }

    /// The groups accepting archetype `archetype`, ascending.
    #[inline]
    pub(crate) fn of_archetype(&self, archetype: ArchetypeId) -> &[u32] {
        // Archetypes are learnt lazily while there are no groups.
        self.by_archetype.get(archetype.index()).map_or(&[], |groups| groups)
    }

    /// Learns about archetypes created since the last call: records which
    /// groups accept each. One comparison when there are none. Called on every
    /// change while groups exist, and when a group is created.
    #[inline]
    pub(crate) fn sync(&mut self, archetypes: &Archetypes) {
        if self.by_archetype.len() < archetypes.len() {
            self.sync_new(archetypes);
        }
    }

    #[cold]
    fn sync_new(&mut self, archetypes: &Archetypes) {
        for archetype in archetypes.iter().skip(self.by_archetype.len()) {
            let mut accepting = SmallVec::new();
            for (index, group) in self.list.iter_mut().enumerate() {
                if group.matcher.matches_components(archetype.set()) {
                    group.archetypes.push(archetype.id());
                    accepting.push(index as u32);
                }
            }
            self.by_archetype.push(accepting);
        }
    }

    /// Creates the group for `matcher` over the current archetypes. The caller
    /// has checked that no equal group exists.
    pub(crate) fn create(&mut self, matcher: Matcher, archetypes: &Archetypes) -> u32 {
        self.sync(archetypes);
        let index = u32::try_from(self.list.len()).expect("more than 2^32 groups");
        let mut group = GroupData {
            matcher: matcher.clone(),
            archetypes: Vec::new(),
            len: 0,
            cache: Mutex::new(EntityCache {
                valid: false,
                list: Arc::default(),
            }),
            collectors: Vec::new(),
            indices: Vec::new(),
            handlers: Vec::new(),
        };
        for archetype in archetypes.iter() {
            if matcher.matches_components(archetype.set()) {
                group.archetypes.push(archetype.id());
                group.len += archetype.len();
                self.by_archetype[archetype.id().index()].push(index);
            }
        }
        self.list.push(group);
        self.by_matcher.insert(matcher, index);
        // Every cached delta may now miss the new group.
        self.deltas.clear();
        index
    }

    /// Phase one of a move along `transition`: updates the entity count of
    /// every group joined or left and marks the cached lists of every group of
    /// either archetype stale (the move reorders rows). Returns how many
    /// changes [`Groups::change`] can then report.
    #[inline]
    pub(crate) fn apply_transition(&mut self, transition: TransitionId, archetypes: &Archetypes) -> usize {
        if self.list.is_empty() {
            return 0;
        }
        self.sync(archetypes);
        let (from, to) = archetypes.transition_ends(transition);
        self.ensure_delta(transition, from, to);
        let t = transition.index();
        let Groups {
            list,
            deltas,
            by_archetype,
            ..
        } = self;
        let delta = deltas[t].as_deref().expect("computed above");
        for change in delta {
            let group = &mut list[change.group as usize];
            if change.joined {
                group.len += 1;
            } else {
                group.len -= 1;
            }
        }
        for &index in by_archetype[from.index()].iter().chain(&by_archetype[to.index()]) {
            list[index as usize].invalidate();
        }
        delta.len()
    }

    /// The groups a move along `transition` makes an entity join or leave,
    /// without applying the move (for checks made before it).
    pub(crate) fn delta(&mut self, transition: TransitionId, archetypes: &Archetypes) -> &[Change] {
        if self.list.is_empty() {
            return &[];
        }
        self.sync(archetypes);
        let (from, to) = archetypes.transition_ends(transition);
        self.ensure_delta(transition, from, to);
        self.deltas[transition.index()].as_deref().expect("computed above")
    }

    #[inline]
    fn ensure_delta(&mut self, transition: TransitionId, from: ArchetypeId, to: ArchetypeId) {
        let t = transition.index();
        if self.deltas.get(t).is_none_or(Option::is_none) {
            self.compute_delta(t, from, to);
        }
    }

    #[cold]
    fn compute_delta(&mut self, t: usize, from: ArchetypeId, to: ArchetypeId) {
        let (before, after) = (&self.by_archetype[from.index()], &self.by_archetype[to.index()]);
        let mut delta = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < before.len() || j < after.len() {
            match (before.get(i), after.get(j)) {
                (Some(&a), Some(&b)) if a == b => (i, j) = (i + 1, j + 1),
                (Some(&a), Some(&b)) if a < b => {
                    delta.push(Change {
                        group: a,
                        joined: false,
                    });
                    i += 1;
                }
                (Some(&a), None) => {
                    delta.push(Change {
                        group: a,
                        joined: false,
                    });
                    i += 1;
                }
                (_, Some(&b)) => {
                    delta.push(Change { group: b, joined: true });
                    j += 1;
                }
                (None, None) => unreachable!("the loop condition"),
            }
        }
        if self.deltas.len() <= t {
            self.deltas.resize_with(t + 1, || None);
        }
        self.deltas[t] = Some(delta.into_boxed_slice());
    }

    /// The `i`th change of the transition last applied with
    /// [`Groups::apply_transition`].
    #[inline]
    pub(crate) fn change(&self, transition: TransitionId, i: usize) -> Change {
        self.deltas[transition.index()].as_deref().expect("applied before")[i]
    }

    /// Phase one of an entity entering (`joined`) or leaving `archetype` by
    /// creation or destruction: every group of the archetype gains or loses it.
    #[inline]
    pub(crate) fn apply_spawn_or_despawn(&mut self, archetype: ArchetypeId, archetypes: &Archetypes, joined: bool) {
        if self.list.is_empty() {
            return;
        }
        self.sync(archetypes);
        for &index in &self.by_archetype[archetype.index()] {
            let group = &mut self.list[index as usize];
            if joined {
                group.len += 1;
            } else {
                group.len -= 1;
            }
            group.invalidate();
        }
    }

    /// Calls group `index`'s handlers with `event`.
    #[inline]
    pub(crate) fn emit(&mut self, index: u32, event: &GroupEvent<'_>) {
        let handlers = &mut self.list[index as usize].handlers;
        if !handlers.is_empty() {
            for (_, handler) in handlers {
                handler(event);
            }
        }
    }

    /// Subscribes `handler` to group `index`.
    pub(crate) fn subscribe(&mut self, index: u32, id: SubscriptionId, handler: GroupHandler) {
        self.list[index as usize].handlers.push((id, handler));
        self.consumer_count += 1;
    }

    /// Feeds group `index`'s events to collector `key` too.
    pub(crate) fn attach_collector(&mut self, index: u32, key: CollectorKey, trigger: Trigger) {
        self.list[index as usize].collectors.push((key, trigger));
        self.consumer_count += 1;
    }

    /// Stops feeding group `index`'s events to collector `key`.
    pub(crate) fn detach_collector(&mut self, index: u32, key: CollectorKey) {
        let collectors = &mut self.list[index as usize].collectors;
        let before = collectors.len();
        collectors.retain(|(have, _)| *have != key);
        self.consumer_count -= before - collectors.len();
    }

    /// Group `index`'s membership changes reach entity index `key` too.
    pub(crate) fn attach_index(&mut self, index: u32, key: IndexKey) {
        self.list[index as usize].indices.push(key);
    }

    /// Stops telling entity index `key` about group `index`.
    pub(crate) fn detach_index(&mut self, index: u32, key: IndexKey) {
        self.list[index as usize].indices.retain(|&have| have != key);
    }

    /// Removes a group subscription; `false` if no group has it.
    pub(crate) fn unsubscribe(&mut self, id: SubscriptionId) -> bool {
        for group in &mut self.list {
            if let Some(at) = group.handlers.iter().position(|(have, _)| *have == id) {
                drop(group.handlers.remove(at));
                self.consumer_count -= 1;
                return true;
            }
        }
        false
    }

    /// Checks that each group's archetype list and count match a fresh scan.
    pub(crate) fn check(&self, archetypes: &Archetypes) -> Result<(), String> {
        if !self.list.is_empty() && self.by_archetype.len() != archetypes.len() {
            return Err(format!(
                "groups know {} archetypes of {}",
                self.by_archetype.len(),
                archetypes.len()
            ));
        }
        for (index, group) in self.list.iter().enumerate() {
            let expected: Vec<ArchetypeId> = archetypes
                .iter()
                .filter(|a| group.matcher.matches_components(a.set()))
                .map(|a| a.id())
                .collect();
            let len: usize = expected.iter().map(|&a| archetypes.get(a).len()).sum();
            if group.archetypes != expected || group.len != len {
                return Err(format!(
                    "group {} has archetypes {:?} and count {} (expected {expected:?} and {len})",
                    group.matcher, group.archetypes, group.len
                ));
            }
            for archetype in archetypes.iter() {
                let listed = self.by_archetype[archetype.id().index()].contains(&(index as u32));
                if listed != expected.contains(&archetype.id()) {
                    return Err(format!(
                        "archetype {:?} lists group {} wrongly ({listed})",
                        archetype.id(),
                        group.matcher
                    ));
                }
            }
        }
        if let Some(a) = self
            .by_archetype
            .iter()
            .position(|groups| !groups.is_sorted_by(|x, y| x < y))
        {
            return Err(format!("the groups of archetype {a} are not ascending"));
        }
        Ok(())
    }
}

impl GroupData {
    #[inline]
    fn invalidate(&mut self) {
        self.cache.get_mut().unwrap_or_else(PoisonError::into_inner).valid = false;
    }

    /// The group's entities as a shared list, rebuilt by `fill` only if a
    /// change happened since the last call. The list's memory is reused when no
    /// earlier list is still held.
    pub(crate) fn cached_entities(&self, fill: impl FnOnce(&mut Vec<Entity>)) -> Arc<Vec<Entity>> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if !cache.valid {
            match Arc::get_mut(&mut cache.list) {
                Some(list) => {
                    list.clear();
                    fill(list);
                }
                None => {
                    let mut list = Vec::with_capacity(self.len);
                    fill(&mut list);
                    cache.list = Arc::new(list);
                }
            }
            cache.valid = true;
        }
        Arc::clone(&cache.list)
    }

    /// The number of handlers subscribed to this group.
    pub(crate) fn handler_count(&self) -> usize {
        self.handlers.len()
    }

    /// Whether a handler or a collector takes this group's events.
    #[inline]
    pub(crate) fn has_consumers(&self) -> bool {
        !self.handlers.is_empty() || !self.collectors.is_empty()
    }
}
