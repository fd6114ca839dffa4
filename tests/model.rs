//! Random operation sequences, checked against a naive model (a map from
//! entity to its component values). Invariants are checked after every step,
//! and every value is counted so drops must equal constructions at the end.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use common::{Counted, Counter, check};
use proptest::prelude::*;
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
    Reset,
    /// Creates one of the late groups (if not made yet) in the middle of the run.
    WatchLate(usize),
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
        1 => Just(Op::Reset),
        1 => (0..LATE_GROUPS).prop_map(Op::WatchLate),
    ]
}

type Model = BTreeMap<Entity, BTreeMap<Kind, u8>>;

/// How many groups `Op::WatchLate` can create.
const LATE_GROUPS: usize = 3;

struct World {
    game: Context,
    model: Model,
    /// Every handle ever made, alive or not, so ops also hit stale handles.
    handles: Vec<Entity>,
    counter: Counter,
    /// Groups, each with its membership rule over the model and the member set
    /// its events built.
    groups: Vec<(GroupId, MemberRule, Members)>,
}

type MemberRule = fn(&BTreeMap<Kind, u8>) -> bool;
type Members = Arc<Mutex<BTreeSet<Entity>>>;

impl World {
    fn pick(&self, index: usize) -> Option<Entity> {
        (!self.handles.is_empty()).then(|| self.handles[index % self.handles.len()])
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

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Create => {
                let e = self.game.create_entity();
                self.model.insert(e, BTreeMap::new());
                self.handles.push(e);
            }
            Op::CreateWith(v) => {
                let e = self
                    .game
                    .create_entity_with((Small(v), Flag, self.counter.make(&v.to_string())))
                    .unwrap();
                let values = [(Kind::Small, v), (Kind::Flag, 0), (Kind::Counted, v)];
                self.model.insert(e, values.into_iter().collect());
                self.handles.push(e);
            }
            Op::Destroy(i) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.game.destroy_entity(e);
                assert_eq!(result.is_ok(), self.model.remove(&e).is_some(), "{result:?}");
            }
            Op::Add(i, kind, v) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.add(e, kind, v);
                match self.model.get_mut(&e) {
                    None => assert!(matches!(result, Err(Error::StaleEntity { .. })), "{result:?}"),
                    Some(values) if values.contains_key(&kind) => {
                        assert!(
                            matches!(result, Err(Error::ComponentAlreadyPresent { .. })),
                            "{result:?}"
                        )
                    }
                    Some(values) => {
                        result.unwrap();
                        values.insert(kind, if kind == Kind::Flag { 0 } else { v });
                    }
                }
            }
            Op::Remove(i, kind) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.remove(e, kind);
                match self.model.get_mut(&e) {
                    None => assert!(matches!(result, Err(Error::StaleEntity { .. })), "{result:?}"),
                    Some(values) => match values.remove(&kind) {
                        Some(_) => result.unwrap(),
                        None => assert!(matches!(result, Err(Error::ComponentAbsent { .. })), "{result:?}"),
                    },
                }
            }
            Op::Replace(i, kind, v) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.replace(e, kind, v);
                match self.model.get_mut(&e) {
                    None => assert!(matches!(result, Err(Error::StaleEntity { .. })), "{result:?}"),
                    Some(values) => {
                        result.unwrap();
                        values.insert(kind, if kind == Kind::Flag { 0 } else { v });
                    }
                }
            }
            Op::DestroyAll => {
                self.game.destroy_all_entities();
                self.model.clear();
            }
            Op::Reset => {
                self.game.reset().unwrap();
                self.model.clear();
            }
            Op::WatchLate(which) => self.watch_late(which),
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

    /// The context agrees with the model, entity by entity and value by value.
    fn compare(&self) {
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
            let Some(values) = self.model.get(&e) else {
                assert!(!self.game.is_alive(e));
                continue;
            };
            assert!(self.game.is_alive(e));
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
        }
        let counted = self.model.values().filter(|v| v.contains_key(&Kind::Counted)).count();
        assert_eq!(
            self.counter.live(),
            counted as isize,
            "live Counted values match the model"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn context_matches_a_naive_model(ops in proptest::collection::vec(op(), 1..200)) {
        let counter = Counter::default();
        {
            let mut world = World { game: Context::new(), model: Model::new(), handles: Vec::new(), counter: counter.clone(), groups: Vec::new() };
            world.watch_groups();
            for op in &ops {
                world.apply(op);
                world.compare();
            }
        }
        prop_assert_eq!(counter.live(), 0, "dropping the context drops every value");
    }
}
