//! Random operation sequences, checked against a naive model: a map from
//! each live entity to its component values, the destroyed entities kept for
//! their retainers (AERC), the user retains, and what each collector holds.
//! Invariants are checked after every step, and every value is counted so
//! drops must equal constructions at the end.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use common::{Counted, Counter, check};
use proptest::prelude::*;
use reactecs::CollectorSpec;
use reactecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Small(u8);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Wide([u64; 9]);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Flag;
reactecs::component!(Small, Wide, Flag);

/// A component kind and value, as the model stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Small,
    Wide,
    Flag,
    Counted,
}

#[derive(Clone, Debug)]
enum Op {
    Create,
    CreateWith(u8),
    Destroy(usize),
    Add(usize, Kind, u8),
    Remove(usize, Kind),
    Replace(usize, Kind, u8),
    DestroyAll,
    /// Resets the context; with `true`, first releases every user retain and
    /// clears every collector, so that the reset can succeed.
    Reset(bool),
    /// Creates one of the late groups (if not made yet) in the middle of the run.
    WatchLate(usize),
    /// Retains the entity with user owner 0 or 1.
    Retain(usize, usize),
    /// Releases the entity with user owner 0 or 1.
    Release(usize, usize),
    /// Clears one of the collectors.
    Clear(usize),
    /// Deactivates one of the collectors (which clears it).
    Deactivate(usize),
    /// Activates one of the collectors.
    Activate(usize),
    /// Makes one more collector, of spec `which` (see [`collector_spec`]),
    /// while there are fewer than [`MAX_COLLECTORS`].
    CollectLate(usize),
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Small),
        Just(Kind::Wide),
        Just(Kind::Flag),
        Just(Kind::Counted)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Create),
        4 => any::<u8>().prop_map(Op::CreateWith),
        3 => any::<usize>().prop_map(Op::Destroy),
        8 => (any::<usize>(), kind(), any::<u8>()).prop_map(|(e, k, v)| Op::Add(e, k, v)),
        6 => (any::<usize>(), kind()).prop_map(|(e, k)| Op::Remove(e, k)),
        6 => (any::<usize>(), kind(), any::<u8>()).prop_map(|(e, k, v)| Op::Replace(e, k, v)),
        1 => Just(Op::DestroyAll),
        2 => any::<bool>().prop_map(Op::Reset),
        1 => (0..LATE_GROUPS).prop_map(Op::WatchLate),
        4 => (any::<usize>(), 0..OWNERS).prop_map(|(e, o)| Op::Retain(e, o)),
        4 => (any::<usize>(), 0..OWNERS).prop_map(|(e, o)| Op::Release(e, o)),
        2 => any::<usize>().prop_map(Op::Clear),
        1 => any::<usize>().prop_map(Op::Deactivate),
        1 => any::<usize>().prop_map(Op::Activate),
        1 => (0..COLLECTOR_SPECS).prop_map(Op::CollectLate),
    ]
}

type Values = BTreeMap<Kind, u8>;
type Model = BTreeMap<Entity, Values>;

/// How many groups `Op::WatchLate` can create.
const LATE_GROUPS: usize = 3;
/// How many user owners retain and release.
const OWNERS: usize = 2;
/// How many collector specs [`collector_spec`] knows; the first
/// `FIRST_COLLECTORS` are made at the start.
const COLLECTOR_SPECS: usize = 7;
const FIRST_COLLECTORS: usize = 5;
/// `Op::CollectLate` makes no more collectors than this.
const MAX_COLLECTORS: usize = 8;

/// One trigger of a collector, as the model sees it: the group's membership
/// rule, the components whose replacement is an update (the matcher's AllOf
/// and AnyOf), and the trigger.
struct ModelTrigger {
    rule: MemberRule,
    watched: &'static [Kind],
    trigger: Trigger,
}

fn on(rule: MemberRule, watched: &'static [Kind], trigger: Trigger) -> ModelTrigger {
    ModelTrigger { rule, watched, trigger }
}

/// A collector as the model sees it.
struct ModelCollector {
    id: CollectorId,
    triggers: Vec<ModelTrigger>,
    /// Whether it keeps removed `Small` values.
    keeps_small: bool,
    active: bool,
    /// Collected entities, in the order they were first collected.
    entities: Vec<Entity>,
    /// The `Small` each collected entity had when it last left a group
    /// through a `Removed` or `AddedOrRemoved` trigger.
    kept: BTreeMap<Entity, u8>,
}

/// Collector spec `which`: for the context, for the model, and whether it
/// keeps removed `Small` values.
fn collector_spec(which: usize) -> (CollectorSpec, Vec<ModelTrigger>, bool) {
    use Kind as K;
    match which {
        0 => (
            Matcher::all_of::<Small>().added().into(),
            vec![on(|v| v.contains_key(&K::Small), &[K::Small], Trigger::Added)],
            false,
        ),
        1 => (
            Matcher::all_of::<Flag>().removed().into(),
            vec![on(|v| v.contains_key(&K::Flag), &[K::Flag], Trigger::Removed)],
            false,
        ),
        2 => (
            Matcher::any_of::<(Small, Wide)>().updated().into(),
            vec![on(
                |v| v.contains_key(&K::Small) || v.contains_key(&K::Wide),
                &[K::Small, K::Wide],
                Trigger::Updated,
            )],
            false,
        ),
        3 => (
            // A NoneOf-only matcher: a new empty entity joins its group.
            Matcher::none_of::<Flag>().added_or_removed().into(),
            vec![on(|v| !v.contains_key(&K::Flag), &[], Trigger::AddedOrRemoved)],
            false,
        ),
        4 => (
            // Two groups, keeping removed values. Leaving the first group
            // always happens with a `Small` readable (removed, or still there).
            Matcher::all_of::<Small>()
                .none_of::<Flag>()
                .removed()
                .and(Matcher::any_of::<(Wide, Counted)>().added())
                .keep_removed::<Small>(),
            vec![
                on(
                    |v| v.contains_key(&K::Small) && !v.contains_key(&K::Flag),
                    &[K::Small],
                    Trigger::Removed,
                ),
                on(
                    |v| v.contains_key(&K::Wide) || v.contains_key(&K::Counted),
                    &[K::Wide, K::Counted],
                    Trigger::Added,
                ),
            ],
            true,
        ),
        5 => (
            // On a group that exists already (from `watch_groups`).
            Matcher::all_of::<(Small, Wide)>().added_or_removed().into(),
            vec![on(
                |v| v.contains_key(&K::Small) && v.contains_key(&K::Wide),
                &[K::Small, K::Wide],
                Trigger::AddedOrRemoved,
            )],
            false,
        ),
        _ => (
            // New groups, made once archetypes and cached edges exist.
            Matcher::any_of::<(Wide, Flag)>()
                .none_of::<Counted>()
                .removed()
                .and(Matcher::all_of::<Counted>().updated()),
            vec![
                on(
                    |v| (v.contains_key(&K::Wide) || v.contains_key(&K::Flag)) && !v.contains_key(&K::Counted),
                    &[K::Wide, K::Flag],
                    Trigger::Removed,
                ),
                on(|v| v.contains_key(&K::Counted), &[K::Counted], Trigger::Updated),
            ],
            false,
        ),
    }
}

struct World {
    game: Context,
    mode: AercMode,
    /// The live entities and their values.
    model: Model,
    /// Destroyed entities that something still retains (disabled).
    disabled: BTreeSet<Entity>,
    /// Per live or disabled entity, the user owners (indices into `owners`)
    /// holding a retain: a set in safe mode, a multiset in fast mode.
    user: BTreeMap<Entity, Vec<usize>>,
    owners: [Owner; OWNERS],
    collectors: Vec<ModelCollector>,
    /// The entities whose `EntityReleased` the model expects since the last
    /// comparison.
    released: Vec<Entity>,
    /// The `EntityReleased` events seen, if a subscriber records them.
    seen_released: Option<Arc<Mutex<Vec<Entity>>>>,
    /// Every handle ever made, alive or not, so ops also hit stale handles.
    handles: Vec<Entity>,
    counter: Counter,
    /// Groups, each with its membership rule over the model and the member set
    /// its events built.
    groups: Vec<(GroupId, MemberRule, Members)>,
}

type MemberRule = fn(&Values) -> bool;
type Members = Arc<Mutex<BTreeSet<Entity>>>;

/// What the model expects of a retain or release.
#[derive(Debug)]
enum Expect {
    Ok,
    Stale,
    AlreadyRetained,
    NotRetained,
}

impl Expect {
    fn check(&self, result: Result<(), Error>) {
        let fits = match self {
            Expect::Ok => result.is_ok(),
            Expect::Stale => matches!(result, Err(Error::StaleEntity { .. })),
            Expect::AlreadyRetained => matches!(result, Err(Error::AlreadyRetained { .. })),
            Expect::NotRetained => matches!(result, Err(Error::NotRetained { .. })),
        };
        assert!(fits, "expected {self:?}, got {result:?}");
    }
}

impl World {
    fn new(mode: AercMode, spy: bool, counter: Counter) -> Self {
        let mut game = Context::builder().aerc(mode).build();
        let seen_released = spy.then(|| {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let sink = seen.clone();
            game.subscribe(move |event: &ContextEvent<'_>| {
                if let ContextEvent::EntityReleased { entity } = event {
                    sink.lock().unwrap().push(*entity);
                }
            });
            seen
        });
        let mut world = World {
            game,
            mode,
            model: Model::new(),
            disabled: BTreeSet::new(),
            user: BTreeMap::new(),
            owners: [Owner::new(), Owner::new()],
            collectors: Vec::new(),
            released: Vec::new(),
            seen_released,
            handles: Vec::new(),
            counter,
            groups: Vec::new(),
        };
        world.watch_groups();
        for which in 0..FIRST_COLLECTORS {
            world.make_collector(which);
        }
        world
    }

    fn pick(&self, index: usize) -> Option<Entity> {
        (!self.handles.is_empty()).then(|| self.handles[index % self.handles.len()])
    }

    fn pick_collector(&self, index: usize) -> usize {
        index % self.collectors.len()
    }

    /// Whether the entity's slot is in use (alive, or disabled).
    fn held(&self, e: Entity) -> bool {
        self.model.contains_key(&e) || self.disabled.contains(&e)
    }

    /// The retains the model expects on `e`: its users' and one per
    /// collector holding it.
    fn retains(&self, e: Entity) -> usize {
        let user = self.user.get(&e).map_or(0, Vec::len);
        user + self.collectors.iter().filter(|c| c.entities.contains(&e)).count()
    }

    /// The error a component operation on a non-live entity gives.
    fn assert_not_alive(&self, e: Entity, result: Result<(), Error>) {
        if self.disabled.contains(&e) {
            assert!(matches!(result, Err(Error::EntityDisabled { .. })), "{result:?}");
        } else {
            assert!(matches!(result, Err(Error::StaleEntity { .. })), "{result:?}");
        }
    }

    fn add(&mut self, e: Entity, kind: Kind, v: u8) -> Result<(), Error> {
        match kind {
            Kind::Small => self.game.add(e, Small(v)),
            Kind::Wide => self.game.add(e, Wide([u64::from(v); 9])),
            Kind::Flag => self.game.add(e, Flag),
            Kind::Counted => self.game.add(e, self.counter.make(&v.to_string())),
        }
    }

    fn replace(&mut self, e: Entity, kind: Kind, v: u8) -> Result<(), Error> {
        match kind {
            Kind::Small => self.game.replace(e, Small(v)),
            Kind::Wide => self.game.replace(e, Wide([u64::from(v); 9])),
            Kind::Flag => self.game.replace(e, Flag),
            Kind::Counted => self.game.replace(e, self.counter.make(&v.to_string())),
        }
    }

    fn remove(&mut self, e: Entity, kind: Kind) -> Result<(), Error> {
        match kind {
            Kind::Small => self.game.remove::<Small>(e),
            Kind::Wide => self.game.remove::<Wide>(e),
            Kind::Flag => self.game.remove::<Flag>(e),
            Kind::Counted => self.game.remove::<Counted>(e),
        }
    }

    /// The collectors see `e` change from `before` to `after` (`None`: not
    /// alive); `replaced` names the component if this is a replace of a
    /// present one.
    fn observe(&mut self, e: Entity, before: Option<&Values>, after: Option<&Values>, replaced: Option<Kind>) {
        for collector in self.collectors.iter_mut().filter(|c| c.active) {
            for t in &collector.triggers {
                let was = before.is_some_and(t.rule);
                let is = after.is_some_and(t.rule);
                let updated = was && is && replaced.is_some_and(|k| t.watched.contains(&k));
                let (joined, left) = (!was && is, was && !is);
                let fires = match t.trigger {
                    Trigger::Added => joined || updated,
                    Trigger::Removed => left,
                    Trigger::AddedOrRemoved => joined || left || updated,
                    Trigger::Updated => updated,
                };
                if !fires {
                    continue;
                }
                if !collector.entities.contains(&e) {
                    collector.entities.push(e);
                }
                // The removed value, or the one still there: the same.
                if left
                    && collector.keeps_small
                    && let Some(&v) = before.and_then(|b| b.get(&Kind::Small))
                {
                    collector.kept.insert(e, v);
                }
            }
        }
    }

    /// A new entity with `values`.
    fn born(&mut self, e: Entity, values: Values) {
        assert!(!self.handles.contains(&e), "handle {e} made twice");
        let taken = self.model.keys().chain(&self.disabled).find(|o| o.index() == e.index());
        assert!(taken.is_none(), "{e} takes the slot of {taken:?}");
        self.observe(e, None, Some(&values), None);
        self.model.insert(e, values);
        self.handles.push(e);
    }

    /// Destroys live `e` in the model: it leaves its groups, then is freed
    /// unless something retains it.
    fn destroy(&mut self, e: Entity) {
        let values = self.model.remove(&e).expect("destroying a live entity");
        self.observe(e, Some(&values), None, None);
        if self.retains(e) == 0 {
            self.released.push(e);
        } else {
            self.disabled.insert(e);
        }
    }

    /// Frees `e` if it is disabled and nothing retains it any more.
    fn free_if_released(&mut self, e: Entity) {
        if self.disabled.contains(&e) && self.retains(e) == 0 {
            self.disabled.remove(&e);
            self.user.remove(&e);
            self.released.push(e);
        }
    }

    fn destroy_all(&mut self) {
        let mut all: Vec<Entity> = self.model.keys().copied().collect();
        all.sort_by_key(|e| e.index());
        for e in all {
            self.destroy(e);
        }
    }

    fn retain(&mut self, e: Entity, owner: usize) {
        let result = self.game.retain(e, self.owners[owner]);
        let expect = if !self.held(e) {
            Expect::Stale
        } else {
            let user = self.user.entry(e).or_default();
            if self.mode == AercMode::Safe && user.contains(&owner) {
                Expect::AlreadyRetained
            } else {
                user.push(owner);
                Expect::Ok
            }
        };
        expect.check(result);
    }

    fn release(&mut self, e: Entity, owner: usize) {
        let user = self.user.get(&e).map_or(&[][..], Vec::as_slice);
        let at = user.iter().position(|&o| o == owner);
        let at = match self.mode {
            AercMode::Safe => at,
            // Fast mode only counts (users' retains apart from collectors'):
            // any user's retain goes.
            AercMode::Fast => at.or((!user.is_empty()).then_some(0)),
        };
        let expect = match at {
            _ if !self.held(e) => Expect::Stale,
            Some(at) => {
                let user = self.user.get_mut(&e).expect("a user retain");
                user.swap_remove(at);
                if user.is_empty() {
                    self.user.remove(&e);
                }
                Expect::Ok
            }
            None => Expect::NotRetained,
        };
        expect.check(self.game.release(e, self.owners[owner]));
        self.free_if_released(e);
    }

    fn clear(&mut self, which: usize) {
        self.game.clear_collector(self.collectors[which].id).unwrap();
        self.forget_collected(which);
    }

    /// The model's side of clearing collector `which`: it releases what it
    /// held and forgets its kept values.
    fn forget_collected(&mut self, which: usize) {
        let held = std::mem::take(&mut self.collectors[which].entities);
        self.collectors[which].kept.clear();
        for e in held {
            self.free_if_released(e);
        }
    }

    fn make_collector(&mut self, which: usize) {
        let (spec, triggers, keeps_small) = collector_spec(which);
        let id = self.game.collector(spec);
        self.collectors.push(ModelCollector {
            id,
            triggers,
            keeps_small,
            active: true,
            entities: Vec::new(),
            kept: BTreeMap::new(),
        });
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Create => {
                let e = self.game.create_entity();
                self.born(e, Values::new());
            }
            Op::CreateWith(v) => {
                let e = self
                    .game
                    .create_entity_with((Small(v), Flag, self.counter.make(&v.to_string())))
                    .unwrap();
                let values = [(Kind::Small, v), (Kind::Flag, 0), (Kind::Counted, v)];
                self.born(e, values.into_iter().collect());
            }
            Op::Destroy(i) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.game.destroy_entity(e);
                if self.model.contains_key(&e) {
                    result.unwrap();
                    self.destroy(e);
                } else {
                    self.assert_not_alive(e, result);
                }
            }
            Op::Add(i, kind, v) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.add(e, kind, v);
                let Some(values) = self.model.get_mut(&e) else {
                    return self.assert_not_alive(e, result);
                };
                if values.contains_key(&kind) {
                    assert!(
                        matches!(result, Err(Error::ComponentAlreadyPresent { .. })),
                        "{result:?}"
                    );
                    return;
                }
                result.unwrap();
                let before = values.clone();
                values.insert(kind, if kind == Kind::Flag { 0 } else { v });
                let after = values.clone();
                self.observe(e, Some(&before), Some(&after), None);
            }
            Op::Remove(i, kind) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.remove(e, kind);
                let Some(values) = self.model.get_mut(&e) else {
                    return self.assert_not_alive(e, result);
                };
                let before = values.clone();
                if values.remove(&kind).is_none() {
                    assert!(matches!(result, Err(Error::ComponentAbsent { .. })), "{result:?}");
                    return;
                }
                result.unwrap();
                let after = values.clone();
                self.observe(e, Some(&before), Some(&after), None);
            }
            Op::Replace(i, kind, v) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.replace(e, kind, v);
                let Some(values) = self.model.get_mut(&e) else {
                    return self.assert_not_alive(e, result);
                };
                result.unwrap();
                let before = values.clone();
                let replaced = values
                    .insert(kind, if kind == Kind::Flag { 0 } else { v })
                    .map(|_| kind);
                let after = values.clone();
                self.observe(e, Some(&before), Some(&after), replaced);
            }
            Op::DestroyAll => {
                self.game.destroy_all_entities();
                self.destroy_all();
            }
            Op::Reset(release_first) => {
                if release_first {
                    let retains: Vec<(Entity, usize)> = self
                        .user
                        .iter()
                        .flat_map(|(&e, owners)| owners.iter().map(move |&o| (e, o)))
                        .collect();
                    for (e, owner) in retains {
                        self.release(e, owner);
                    }
                    for which in 0..self.collectors.len() {
                        self.clear(which);
                    }
                }
                let retained = self
                    .model
                    .keys()
                    .chain(&self.disabled)
                    .filter(|&&e| self.retains(e) > 0);
                let retained = retained.count();
                let result = self.game.reset();
                if retained > 0 {
                    assert!(
                        matches!(result, Err(Error::EntitiesRetained { count, .. }) if count == retained),
                        "{retained} retained: {result:?}"
                    );
                } else {
                    result.unwrap();
                    // The reset clears every collector after the destruction.
                    self.destroy_all();
                    for which in 0..self.collectors.len() {
                        self.forget_collected(which);
                    }
                }
            }
            Op::WatchLate(which) => self.watch_late(which),
            Op::Retain(i, owner) => {
                let Some(e) = self.pick(i) else { return };
                self.retain(e, owner);
            }
            Op::Release(i, owner) => {
                let Some(e) = self.pick(i) else { return };
                self.release(e, owner);
            }
            Op::Clear(c) => self.clear(self.pick_collector(c)),
            Op::Deactivate(c) => {
                let which = self.pick_collector(c);
                self.game.deactivate_collector(self.collectors[which].id).unwrap();
                self.collectors[which].active = false;
                self.forget_collected(which);
            }
            Op::Activate(c) => {
                let which = self.pick_collector(c);
                self.game.activate_collector(self.collectors[which].id).unwrap();
                self.collectors[which].active = true;
            }
            Op::CollectLate(which) => {
                if self.collectors.len() < MAX_COLLECTORS {
                    self.make_collector(which);
                }
            }
        }
    }

    /// Groups over the model's components, each with a subscriber that keeps
    /// its own member set from the group's events alone.
    fn watch_groups(&mut self) {
        let matchers: [(Matcher, MemberRule); 4] = [
            (Matcher::all_of::<Small>(), |v| v.contains_key(&Kind::Small)),
            (Matcher::all_of::<(Small, Wide)>(), |v| {
                v.contains_key(&Kind::Small) && v.contains_key(&Kind::Wide)
            }),
            (Matcher::any_of::<(Flag, Counted)>(), |v| {
                v.contains_key(&Kind::Flag) || v.contains_key(&Kind::Counted)
            }),
            (Matcher::none_of::<Flag>(), |v| !v.contains_key(&Kind::Flag)),
        ];
        for (matcher, rule) in matchers {
            self.watch(matcher, rule);
        }
    }

    /// Creates a group once archetypes and cached edges exist (which must
    /// refresh every cached group delta).
    fn watch_late(&mut self, which: usize) {
        let (matcher, rule): (Matcher, MemberRule) = match which {
            0 => (Matcher::all_of::<Wide>(), |v| v.contains_key(&Kind::Wide)),
            1 => (Matcher::any_of::<(Small, Counted)>().none_of::<Flag>(), |v| {
                (v.contains_key(&Kind::Small) || v.contains_key(&Kind::Counted)) && !v.contains_key(&Kind::Flag)
            }),
            _ => (Matcher::none_of::<(Small, Wide)>(), |v| {
                !v.contains_key(&Kind::Small) && !v.contains_key(&Kind::Wide)
            }),
        };
        if self.game.groups().all(|g| *g.matcher() != matcher) {
            self.watch(matcher, rule);
        }
    }

    /// Subscribes a member set, seeded with the group's current entities and
    /// kept from its events alone; an `Updated` must be about a member.
    fn watch(&mut self, matcher: Matcher, rule: MemberRule) {
        let id = self.game.group(matcher);
        let seed: BTreeSet<Entity> = self.game.get_group(id).unwrap().iter().collect();
        let members = Arc::new(Mutex::new(seed));
        let sink = members.clone();
        self.game
            .subscribe_group(id, move |event: &GroupEvent<'_>| {
                let mut members = sink.lock().unwrap();
                match event {
                    GroupEvent::Added { entity, .. } => assert!(members.insert(entity.entity())),
                    GroupEvent::Removed { entity, .. } => assert!(members.remove(&entity.entity())),
                    GroupEvent::Updated { entity, .. } => assert!(members.contains(entity)),
                    other => panic!("unexpected {other:?}"),
                }
            })
            .unwrap();
        self.groups.push((id, rule, members));
    }

    /// The context agrees with the model: entity by entity and value by
    /// value, retains, collectors, and the released events since last time.
    fn compare(&mut self) {
        check(&self.game);
        for (id, rule, members) in &self.groups {
            let expected: BTreeSet<Entity> = self
                .model
                .iter()
                .filter(|(_, values)| rule(values))
                .map(|(&e, _)| e)
                .collect();
            let group = self.game.get_group(*id).unwrap();
            assert_eq!(*members.lock().unwrap(), expected, "{group}: events");
            assert_eq!(group.len(), expected.len(), "{group}: len");
            assert_eq!(
                group.entities().iter().copied().collect::<BTreeSet<_>>(),
                expected,
                "{group}: entities"
            );
        }
        assert_eq!(self.game.len(), self.model.len());
        for &e in &self.handles {
            self.compare_entity(e);
        }
        let mut disabled: Vec<Entity> = self.disabled.iter().copied().collect();
        disabled.sort_by_key(|e| e.index());
        let retained: Vec<Entity> = self.game.retained_destroyed_entities().collect();
        assert_eq!(retained, disabled, "retained destroyed entities, in slot order");
        self.compare_collectors();
        let mut expected = std::mem::take(&mut self.released);
        if let Some(seen) = &self.seen_released {
            let mut seen = std::mem::take(&mut *seen.lock().unwrap());
            seen.sort();
            expected.sort();
            assert_eq!(seen, expected, "EntityReleased events");
        }
        let counted = self.model.values().filter(|v| v.contains_key(&Kind::Counted)).count();
        assert_eq!(
            self.counter.live(),
            counted as isize,
            "live Counted values match the model"
        );
    }

    fn compare_entity(&self, e: Entity) {
        let enabled = self.game.is_enabled(e);
        if let Some(values) = self.model.get(&e) {
            assert!(self.game.is_alive(e));
            assert_eq!(enabled, Ok(true), "{e} is alive");
            let get = |kind: Kind| -> Option<u8> {
                match kind {
                    Kind::Small => self.game.get::<Small>(e).ok().map(|s| s.0),
                    Kind::Wide => self.game.get::<Wide>(e).ok().map(|w| {
                        assert!(w.0.iter().all(|&x| x == w.0[0]));
                        w.0[0] as u8
                    }),
                    Kind::Flag => self.game.get::<Flag>(e).ok().map(|_| 0),
                    Kind::Counted => self.game.get::<Counted>(e).ok().map(|c| c.label.parse().unwrap()),
                }
            };
            for kind in [Kind::Small, Kind::Wide, Kind::Flag, Kind::Counted] {
                assert_eq!(get(kind), values.get(&kind).copied(), "{kind:?} of {e}");
            }
            assert_eq!(self.game.entity(e).unwrap().len(), values.len());
        } else if self.disabled.contains(&e) {
            assert!(!self.game.is_alive(e));
            assert_eq!(enabled, Ok(false), "{e} is destroyed but retained");
            let get = self.game.get::<Small>(e);
            assert!(matches!(get, Err(Error::EntityDisabled { .. })), "{get:?}");
            let view = self.game.entity(e).err();
            assert!(matches!(view, Some(Error::EntityDisabled { .. })), "{view:?}");
            assert!(self.retains(e) > 0, "the model keeps {e} disabled with no retain");
        } else {
            assert!(!self.game.is_alive(e));
            assert!(matches!(enabled, Err(Error::StaleEntity { .. })), "{e}: {enabled:?}");
            let count = self.game.retain_count(e);
            assert!(matches!(count, Err(Error::StaleEntity { .. })), "{e}: {count:?}");
            let owners = self.game.retain_owners(e);
            assert!(matches!(owners, Err(Error::StaleEntity { .. })), "{e}: {owners:?}");
            let get = self.game.get::<Small>(e);
            assert!(matches!(get, Err(Error::StaleEntity { .. })), "{get:?}");
            assert!(!self.user.contains_key(&e), "the model frees {e} while retained");
            return;
        }
        assert_eq!(self.game.retain_count(e), Ok(self.retains(e)), "retains of {e}");
        let owners = self.game.retain_owners(e).unwrap();
        match self.mode {
            AercMode::Safe => {
                let owners = owners.expect("safe mode lists owners");
                let listed: BTreeSet<Owner> = owners.iter().copied().collect();
                assert_eq!(listed.len(), owners.len(), "{e}: owners listed twice: {owners:?}");
                let user = self.user.get(&e).map_or(&[][..], Vec::as_slice);
                let expected: BTreeSet<Owner> = user.iter().map(|&o| self.owners[o]).collect();
                assert_eq!(listed, expected, "owners of {e}");
            }
            AercMode::Fast => assert_eq!(owners, None, "fast mode lists no owners"),
        }
    }

    fn compare_collectors(&self) {
        assert_eq!(self.game.collectors().count(), self.collectors.len());
        for c in &self.collectors {
            let collector = self.game.get_collector(c.id).unwrap();
            assert_eq!(collector.entities(), c.entities.as_slice(), "{collector}");
            assert_eq!(collector.len(), c.entities.len(), "{collector}");
            assert_eq!(collector.is_active(), c.active, "{collector}");
            for &e in &self.handles {
                assert_eq!(collector.contains(e), c.entities.contains(&e), "{collector}: {e}");
            }
            if c.keeps_small {
                let removed = collector.removed::<Small>();
                for &e in &self.handles {
                    let kept = removed.get(e).map(|s| s.0);
                    assert_eq!(kept, c.kept.get(&e).copied(), "{collector}: removed Small of {e}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn context_matches_a_naive_model(
        ops in proptest::collection::vec(op(), 1..200),
        fast in any::<bool>(),
        spy in any::<bool>(),
    ) {
        let counter = Counter::default();
        {
            let mode = if fast { AercMode::Fast } else { AercMode::Safe };
            let mut world = World::new(mode, spy, counter.clone());
            for op in &ops {
                world.apply(op);
                world.compare();
            }
        }
        prop_assert_eq!(counter.live(), 0, "dropping the context drops every value");
    }
}

/// Fast mode counts users' retains apart from collectors': a user release
/// without a user retain is `NotRetained` even while a collector holds the
/// entity. (It used to take the collector's retain: the slot was then freed
/// at destroy while the collector still held the handle, the collector missed
/// the next entity in that slot, and clearing it tripped a `debug_assert`.)
#[test]
fn fast_mode_user_release_cannot_take_a_collectors_retain() {
    let mut game = Context::builder().aerc(AercMode::Fast).build();
    let flagged = game.collector(Matcher::all_of::<Flag>().added());
    let e = game.create_entity_with((Flag,)).unwrap();
    let release = game.release(e, Owner::new());
    assert!(matches!(release, Err(Error::NotRetained { .. })), "{release:?}");
    assert_eq!(game.retain_count(e), Ok(1), "the collector's retain");
    game.destroy_entity(e).unwrap();
    assert_eq!(game.is_enabled(e), Ok(false), "the collector still holds {e}");
    let next = game.create_entity_with((Flag,)).unwrap();
    assert_ne!(next.index(), e.index(), "{e}'s slot is kept");
    assert_eq!(game.get_collector(flagged).unwrap().entities(), [e, next]);
    game.clear_collector(flagged).unwrap();
    assert!(game.is_enabled(e).is_err(), "released by the clear");
    assert_eq!(game.len(), 1);
}
