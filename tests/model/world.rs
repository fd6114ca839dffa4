//! The model the randomized tests run: an operation language ([`Op`]) over
//! one context, a naive model of what the context must then hold
//! ([`World`]), and a decoder from bytes to operations ([`run_bytes`]) for
//! the fuzz target (`fuzz/`) and the long random run. Shared by
//! `tests/model.rs` and `fuzz/fuzz_targets/ops.rs`, which include it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::{Counted, Counter, check};
use reactecs::prelude::*;
use reactecs::{CollectorSpec, SubscriptionId};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Small(u8);
/// Big and over-aligned: rows of it straddle cache lines, and columns of it
/// must keep 64-byte alignment in every chunk.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(align(64))]
struct Wide([u64; 9]);
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Flag;
/// A unique component: one live entity at most has it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Leader(u8);
/// A zero-sized tag kept out of archetypes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Lit;
/// A value kept out of archetypes, in a sparse set.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mark(u8);
reactecs::component!(Small, Wide, Flag, unique Leader, flag Lit, sparse Mark);

/// A component kind and value, as the model stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Small,
    Wide,
    Flag,
    Counted,
    Leader,
    /// The flag `Lit`, kept out of archetypes.
    Lit,
    /// The sparse `Mark`.
    Mark,
}

impl Kind {
    /// Every kind, in order.
    const ALL: [Kind; 7] = [
        Kind::Small,
        Kind::Wide,
        Kind::Flag,
        Kind::Counted,
        Kind::Leader,
        Kind::Lit,
        Kind::Mark,
    ];

    /// Whether the kind is a zero-sized tag (its value in the model is 0).
    fn is_tag(self) -> bool {
        matches!(self, Kind::Flag | Kind::Lit)
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Op {
    Create,
    CreateWith(u8),
    /// Creates an entity with `Small` and `Wide`, so without `Flag` (which
    /// puts it in the groups of the `Small#` and `Wide*` indices at once).
    CreateSmallWide(u8),
    /// Creates entities with `Small` and `Wide` in one `create_entities_with`,
    /// which stops at the first primary key clash (possibly with an entity
    /// it made).
    CreateBatch(Vec<u8>),
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
    /// Adds the `u8` to every `Small` (false) or `Wide` (true) of the first
    /// groups with `modify_each`, which stops at the first primary key clash.
    ModifyEach(bool, u8),
    /// Clears one of the collectors.
    Clear(usize),
    /// Deactivates one of the collectors (which clears it).
    Deactivate(usize),
    /// Activates one of the collectors.
    Activate(usize),
    /// Makes one more collector, of spec `which` (see [`collector_spec`]),
    /// while there are fewer than [`MAX_COLLECTORS`].
    CollectLate(usize),
    /// Adds the entity index of spec `which` (see [`index_spec`]): refused
    /// if one has its name, or if it is primary and two entities of its
    /// group have a key in common.
    IndexLate(usize),
    /// Deactivates one of the entity indices (which empties it).
    DeactivateIndex(usize),
    /// Activates one of the entity indices (which files its group again).
    ActivateIndex(usize),
    /// Removes one of the entity indices.
    RemoveIndex(usize),
    /// Adds the `u8` to the entity's `Small` (false) or `Wide` (true) with
    /// `modify`, or (with `true`) with `modify_with`, reading the entity's
    /// other components through the same lookup.
    Modify(usize, bool, u8, bool),
    /// Reads the entity through its view (`entity_mut`), and writes its
    /// `Small` and `Wide` back unchanged, silently.
    View(usize),
    /// Adds the `u8` to the entity's `Small` (false) or `Wide` (true)
    /// through `get_mut`: a stamped write, which the indices keyed on it
    /// follow when the `Mut` drops. Skipped when it would give the entity a
    /// primary key another entity has (that conflict is tested on its own,
    /// in `tests/index_writes.rs`).
    Write(usize, bool, u8),
    /// Removes one of the collectors (while more than one is left).
    RemoveCollector(usize),
    /// Subscribes a context handler, or unsubscribes it if there is one:
    /// replacements must then show values, or no longer.
    Listen,
    /// Subscribes a handler to one of the first groups, or unsubscribes it
    /// if there is one.
    ListenGroup(usize),
    /// `set_unique(Leader(v))`: replaces the holder's value, or creates a
    /// holder.
    SetUnique(u8),
    /// `take_unique::<Leader>()`: takes the value from its holder, which is
    /// destroyed if that leaves it empty; `UniqueAbsent` if nobody holds it.
    TakeUnique,
}

/// A program's bytes, read front to back; zeros once they run out.
pub(crate) struct Bytes<'a>(pub(crate) &'a [u8]);

impl Bytes<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&byte, rest)) => {
                self.0 = rest;
                byte
            }
            None => 0,
        }
    }

    fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// An index to pick an entity, a collector or an index with (modulo).
    fn index(&mut self) -> usize {
        usize::from(u16::from_le_bytes([self.u8(), self.u8()]))
    }

    fn below(&mut self, n: usize) -> usize {
        usize::from(self.u8()) % n
    }

    fn kind(&mut self) -> Kind {
        Kind::ALL[self.below(Kind::ALL.len())]
    }
}

impl Op {
    /// How often each operation is picked, in the order of [`Op::decode`]'s
    /// arms (structural changes most, configuration least).
    const WEIGHTS: [u8; 30] = [
        4, 4, 3, 1, 3, 8, 6, 6, 1, 2, 1, 4, 4, 2, 2, 1, 1, 1, 1, 1, 2, 1, 5, 3, 1, 1, 1, 2, 1, 4,
    ];

    /// The next operation of a program: one byte picks the operation, the
    /// next ones its arguments.
    pub(crate) fn decode(b: &mut Bytes<'_>) -> Op {
        let total: usize = Op::WEIGHTS.iter().map(|&w| usize::from(w)).sum();
        let mut pick = usize::from(b.u8()) % total;
        let which = Op::WEIGHTS
            .iter()
            .position(|&w| {
                let here = pick < usize::from(w);
                pick = pick.saturating_sub(usize::from(w));
                here
            })
            .expect("the pick is below the total weight");
        match which {
            0 => Op::Create,
            1 => Op::CreateWith(b.u8()),
            2 => Op::CreateSmallWide(b.u8()),
            3 => Op::CreateBatch((0..b.below(4)).map(|_| b.u8()).collect()),
            4 => Op::Destroy(b.index()),
            5 => Op::Add(b.index(), b.kind(), b.u8()),
            6 => Op::Remove(b.index(), b.kind()),
            7 => Op::Replace(b.index(), b.kind(), b.u8()),
            8 => Op::DestroyAll,
            9 => Op::Reset(b.bool()),
            10 => Op::WatchLate(b.below(LATE_GROUPS)),
            11 => Op::Retain(b.index(), b.below(OWNERS)),
            12 => Op::Release(b.index(), b.below(OWNERS)),
            13 => Op::Clear(b.index()),
            14 => Op::ModifyEach(b.bool(), b.u8()),
            15 => Op::Deactivate(b.index()),
            16 => Op::Activate(b.index()),
            17 => Op::CollectLate(b.below(COLLECTOR_SPECS)),
            18 => Op::IndexLate(b.below(INDEX_SPECS)),
            19 => Op::DeactivateIndex(b.index()),
            20 => Op::ActivateIndex(b.index()),
            21 => Op::RemoveIndex(b.index()),
            22 => Op::Modify(b.index(), b.bool(), b.u8(), b.bool()),
            23 => Op::View(b.index()),
            24 => Op::RemoveCollector(b.index()),
            25 => Op::Listen,
            26 => Op::ListenGroup(b.index()),
            27 => Op::SetUnique(b.u8()),
            28 => Op::TakeUnique,
            29 => Op::Write(b.index(), b.bool(), b.u8()),
            _ => unreachable!("one arm per weight"),
        }
    }
}

/// Runs the program `bytes` encodes: the first byte picks the AERC mode and
/// whether a subscriber spies on every event, then operations follow (at most
/// `max_ops`), each checked against the model; at the end, dropping the
/// context must drop every value made. Panics at the first divergence.
pub(crate) fn run_bytes(bytes: &[u8], max_ops: usize) -> usize {
    let mut b = Bytes(bytes);
    let setup = b.u8();
    let mode = if setup & 1 == 1 { AercMode::Fast } else { AercMode::Safe };
    let counter = Counter::default();
    let mut ran = 0;
    {
        let mut world = World::new(mode, setup & 2 == 2, counter.clone());
        while !b.is_empty() && ran < max_ops {
            world.apply(&Op::decode(&mut b));
            world.compare();
            ran += 1;
        }
    }
    assert_eq!(counter.live(), 0, "dropping the context drops every value");
    ran
}

type Values = BTreeMap<Kind, u8>;
type Model = BTreeMap<Entity, Values>;

/// How many groups `Op::WatchLate` can create.
pub(crate) const LATE_GROUPS: usize = 4;
/// How many user owners retain and release.
pub(crate) const OWNERS: usize = 2;
/// How many collector specs [`collector_spec`] knows; the first
/// `FIRST_COLLECTORS` are made at the start.
pub(crate) const COLLECTOR_SPECS: usize = 9;
const FIRST_COLLECTORS: usize = 5;
/// `Op::CollectLate` makes no more collectors than this.
const MAX_COLLECTORS: usize = 8;
/// How many entity index specs [`index_spec`] knows; the first
/// `FIRST_INDICES` are added at the start.
pub(crate) const INDEX_SPECS: usize = 8;
const FIRST_INDICES: usize = 3;

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
    /// Entities whose archetype components were replaced (stamped) since the
    /// collector last gathered, not in `entities`: they join it when it is
    /// read, in storage order (which the model does not predict: it takes
    /// the context's order after checking the set), or in order at the
    /// entity's next structural change.
    stamped: BTreeSet<Entity>,
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
        7 => (
            // Mixed kinds: an archetype component and a flag.
            Matcher::all_of::<(Small, Lit)>().added_or_removed().into(),
            vec![on(
                |v| v.contains_key(&K::Small) && v.contains_key(&K::Lit),
                &[K::Small, K::Lit],
                Trigger::AddedOrRemoved,
            )],
            false,
        ),
        8 => (
            // AnyOf mixing kinds, NoneOf a flag, keeping removed values.
            Matcher::any_of::<(Mark, Small)>()
                .none_of::<Lit>()
                .added_or_removed()
                .keep_removed::<Small>(),
            vec![on(
                |v| (v.contains_key(&K::Mark) || v.contains_key(&K::Small)) && !v.contains_key(&K::Lit),
                &[K::Mark, K::Small],
                Trigger::AddedOrRemoved,
            )],
            true,
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

/// The `u8` a component value stands for in the model.
trait Valued: Component {
    fn value(&self) -> u8;
}

impl Valued for Small {
    fn value(&self) -> u8 {
        self.0
    }
}

impl Valued for Wide {
    fn value(&self) -> u8 {
        self.0[0] as u8
    }
}

impl Valued for Mark {
    fn value(&self) -> u8 {
        self.0
    }
}

impl Valued for Counted {
    fn value(&self) -> u8 {
        self.label.parse().unwrap()
    }
}

/// An index's key function over the model's value of its component.
#[derive(Clone, Copy)]
enum Keys {
    /// `EntityIndex::new`, `PrimaryEntityIndex::new`.
    One(fn(u8) -> u8),
    /// `::multi`: any number of keys, a repeated one counting once.
    Many(fn(u8) -> Vec<u8>),
}

/// An entity index, for the context (`matcher`, `None` for the default
/// `AllOf(component)`) and for the model (`rule`, the group's membership).
struct IndexSpec {
    name: &'static str,
    primary: bool,
    component: Kind,
    keys: Keys,
    matcher: Option<Matcher>,
    rule: MemberRule,
    /// Every key is below this.
    key_space: u8,
}

impl IndexSpec {
    /// The keys an entity with `values` is filed under: none outside the
    /// group.
    fn keys_of(&self, values: &Values) -> Vec<u8> {
        if !(self.rule)(values) {
            return Vec::new();
        }
        let value = values[&self.component];
        match self.keys {
            Keys::One(key) => vec![key(value)],
            Keys::Many(keys) => {
                let mut unique = Vec::new();
                for key in keys(value) {
                    if !unique.contains(&key) {
                        unique.push(key);
                    }
                }
                unique
            }
        }
    }
}

/// Index spec `which`.
fn index_spec(which: usize) -> IndexSpec {
    use Kind as K;
    match which {
        // Four keys, shared by many entities; on a group watched already.
        0 => IndexSpec {
            name: "Small%4",
            primary: false,
            component: K::Small,
            keys: Keys::One(|v| v % 4),
            matcher: None,
            rule: |v| v.contains_key(&K::Small),
            key_space: 4,
        },
        // Zero keys for some values, two for others, or one key twice; the
        // group changes on removing `Counted`.
        1 => IndexSpec {
            name: "Wide*",
            primary: false,
            component: K::Wide,
            keys: Keys::Many(|v| if v % 5 == 0 { vec![] } else { vec![v % 3, v % 2 + 1] }),
            matcher: Some(Matcher::all_of::<Wide>().none_of::<Counted>()),
            rule: |v| v.contains_key(&K::Wide) && !v.contains_key(&K::Counted),
            key_space: 3,
        },
        // Removing `Flag` may make an entity join and clash.
        2 => IndexSpec {
            name: "Small#",
            primary: true,
            component: K::Small,
            keys: Keys::One(|v| v >> 6),
            matcher: Some(Matcher::all_of::<Small>().none_of::<Flag>()),
            rule: |v| v.contains_key(&K::Small) && !v.contains_key(&K::Flag),
            key_space: 4,
        },
        // Every `CreateWith` is checked against it.
        3 => IndexSpec {
            name: "Counted#*",
            primary: true,
            component: K::Counted,
            keys: Keys::Many(|v| if v % 5 == 0 { vec![] } else { vec![v % 16, 16 + v % 8] }),
            matcher: None,
            rule: |v| v.contains_key(&K::Counted),
            key_space: 24,
        },
        // Two indices on one group, keyed on different components; one
        // change may clash in `Small#` and `Wide#` at once.
        4 => IndexSpec {
            name: "SmallWide%2",
            primary: false,
            component: K::Small,
            keys: Keys::One(|v| v % 2),
            matcher: Some(Matcher::all_of::<(Small, Wide)>()),
            rule: |v| v.contains_key(&K::Small) && v.contains_key(&K::Wide),
            key_space: 2,
        },
        // Keyed on a sparse component, in a group that a flag leaves.
        6 => IndexSpec {
            name: "Mark%3",
            primary: false,
            component: K::Mark,
            keys: Keys::One(|v| v % 3),
            matcher: Some(Matcher::all_of::<Mark>().none_of::<Lit>()),
            rule: |v| v.contains_key(&K::Mark) && !v.contains_key(&K::Lit),
            key_space: 3,
        },
        // A primary index on a sparse component, in a group mixing kinds.
        7 => IndexSpec {
            name: "Mark#",
            primary: true,
            component: K::Mark,
            keys: Keys::One(|v| v >> 6),
            matcher: Some(Matcher::all_of::<(Mark, Small)>()),
            rule: |v| v.contains_key(&K::Mark) && v.contains_key(&K::Small),
            key_space: 4,
        },
        _ => IndexSpec {
            name: "Wide#",
            primary: true,
            component: K::Wide,
            keys: Keys::One(|v| v >> 5),
            matcher: Some(Matcher::all_of::<(Small, Wide)>()),
            rule: |v| v.contains_key(&K::Small) && v.contains_key(&K::Wide),
            key_space: 8,
        },
    }
}

/// An index's id, of either type.
#[derive(Clone, Copy, Debug)]
enum IndexHandle {
    Entities(IndexId<EntityIndex<u8>>),
    Primary(IndexId<PrimaryEntityIndex<u8>>),
}

impl IndexHandle {
    /// Adds the index of `spec` to `game`.
    fn add(game: &mut Context, spec: &IndexSpec) -> Result<Self, Error> {
        match spec.component {
            Kind::Small => Self::add_on::<Small>(game, spec),
            Kind::Wide => Self::add_on::<Wide>(game, spec),
            Kind::Counted => Self::add_on::<Counted>(game, spec),
            Kind::Mark => Self::add_on::<Mark>(game, spec),
            Kind::Flag | Kind::Leader | Kind::Lit => unreachable!("no index keys on {:?}", spec.component),
        }
    }

    fn add_on<T: Valued>(game: &mut Context, spec: &IndexSpec) -> Result<Self, Error> {
        let name = spec.name;
        if spec.primary {
            let mut index = match spec.keys {
                Keys::One(key) => PrimaryEntityIndex::new(name, move |t: &T| key(t.value())),
                Keys::Many(keys) => PrimaryEntityIndex::multi(name, move |t: &T| keys(t.value())),
            };
            if let Some(matcher) = &spec.matcher {
                index = index.matching(matcher.clone());
            }
            game.add_index(index).map(IndexHandle::Primary)
        } else {
            let mut index = match spec.keys {
                Keys::One(key) => EntityIndex::new(name, move |t: &T| key(t.value())),
                Keys::Many(keys) => EntityIndex::multi(name, move |t: &T| keys(t.value())),
            };
            if let Some(matcher) = &spec.matcher {
                index = index.matching(matcher.clone());
            }
            game.add_index(index).map(IndexHandle::Entities)
        }
    }

    /// Finding the index by name gives this id, as its own type only.
    fn assert_named(&self, game: &Context, name: &str) {
        let entities = game.index_id::<EntityIndex<u8>>(name);
        let primary = game.index_id::<PrimaryEntityIndex<u8>>(name);
        let wrong = match *self {
            IndexHandle::Entities(id) => {
                assert_eq!(entities.as_ref().ok(), Some(&id), "{name}");
                primary.err()
            }
            IndexHandle::Primary(id) => {
                assert_eq!(primary.as_ref().ok(), Some(&id), "{name}");
                entities.err()
            }
        };
        assert!(matches!(wrong, Some(Error::WrongIndexType { .. })), "{name}: {wrong:?}");
    }

    fn view<'a>(&self, game: &'a Context) -> Result<&'a dyn Index, Error> {
        match *self {
            IndexHandle::Entities(id) => game.index(id).map(|i| i as &dyn Index),
            IndexHandle::Primary(id) => game.index(id).map(|i| i as &dyn Index),
        }
    }

    /// The entities filed under `key`, sorted.
    fn get(&self, game: &Context, key: u8) -> Vec<Entity> {
        match *self {
            IndexHandle::Entities(id) => {
                let listed = game.index(id).unwrap().get(&key);
                assert_eq!(listed, game.index(id).unwrap().get(&key));
                let mut listed = listed.to_vec();
                listed.sort();
                listed
            }
            IndexHandle::Primary(id) => {
                let found = game.index(id).unwrap().get(&key);
                assert_eq!(found, game.index(id).unwrap().get(&key));
                found.into_iter().collect()
            }
        }
    }

    /// The keys `entity` is filed under, sorted.
    fn keys_of(&self, game: &Context, entity: Entity) -> Vec<u8> {
        let mut keys: Vec<u8> = match *self {
            IndexHandle::Entities(id) => game.index(id).unwrap().keys_of(entity).copied().collect(),
            IndexHandle::Primary(id) => game.index(id).unwrap().keys_of(entity).copied().collect(),
        };
        keys.sort_unstable();
        keys
    }

    fn activate(&self, game: &mut Context) -> Result<(), Error> {
        match *self {
            IndexHandle::Entities(id) => game.index_mut(id)?.activate(),
            IndexHandle::Primary(id) => game.index_mut(id)?.activate(),
        }
    }

    fn deactivate(&self, game: &mut Context) -> Result<(), Error> {
        match *self {
            IndexHandle::Entities(id) => game.index_mut(id)?.deactivate(),
            IndexHandle::Primary(id) => game.index_mut(id)?.deactivate(),
        }
        Ok(())
    }

    fn remove(&self, game: &mut Context) -> Result<(), Error> {
        match *self {
            IndexHandle::Entities(id) => game.index_mut(id)?.remove(),
            IndexHandle::Primary(id) => game.index_mut(id)?.remove(),
        }
        Ok(())
    }
}

/// An entity index as the model sees it: what it holds follows from the
/// model's values (see [`World::filing`]) while it is active.
struct ModelIndex {
    spec: IndexSpec,
    id: IndexHandle,
    active: bool,
}

/// A primary key clash the model expects: the index's name, the key, and the
/// entity holding it.
type Clash = (&'static str, u8, Entity);

pub(crate) struct World {
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
    /// How many events of any kind fired during the current op, if the
    /// subscriber counts them.
    events: Option<Arc<AtomicUsize>>,
    /// Every handle ever made, alive or not, so ops also hit stale handles.
    handles: Vec<Entity>,
    counter: Counter,
    /// Groups, each with its membership rule over the model and the member set
    /// its events built.
    groups: Vec<(GroupId, MemberRule, Members)>,
    /// Collectors removed by `Op::RemoveCollector`: their ids are unknown.
    removed_collectors: Vec<CollectorId>,
    /// The context subscription `Op::Listen` made, if any.
    listening: Option<SubscriptionId>,
    /// The group subscription `Op::ListenGroup` made, if any.
    listening_group: Option<SubscriptionId>,
    /// The entity indices added, in order.
    indices: Vec<ModelIndex>,
    /// The ids of removed indices, unknown from then on.
    removed_indices: Vec<IndexHandle>,
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
    pub(crate) fn new(mode: AercMode, spy: bool, counter: Counter) -> Self {
        let mut game = Context::builder().aerc(mode).build();
        let (seen_released, events) = if spy {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let events = Arc::new(AtomicUsize::new(0));
            let (sink, count) = (seen.clone(), events.clone());
            game.subscribe(move |event: &ContextEvent<'_>| {
                count.fetch_add(1, Ordering::Relaxed);
                if let ContextEvent::EntityReleased { entity } = event {
                    sink.lock().unwrap().push(*entity);
                }
            });
            (Some(seen), Some(events))
        } else {
            (None, None)
        };
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
            events,
            handles: Vec::new(),
            counter,
            groups: Vec::new(),
            indices: Vec::new(),
            removed_indices: Vec::new(),
            removed_collectors: Vec::new(),
            listening: None,
            listening_group: None,
        };
        world.watch_groups();
        for which in 0..FIRST_COLLECTORS {
            world.make_collector(which);
        }
        for which in 0..FIRST_INDICES {
            world.make_index(which);
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

    /// The retains the model expects on `e`: its users', one per collector
    /// holding it, and one per active entity index holding it.
    fn retains(&self, e: Entity) -> usize {
        self.blocking_retains(e) + self.index_retains(e)
    }

    /// The retains that forbid a reset: its users' and its collectors'.
    fn blocking_retains(&self, e: Entity) -> usize {
        let user = self.user.get(&e).map_or(0, Vec::len);
        user + self.collectors.iter().filter(|c| c.entities.contains(&e)).count()
    }

    /// One per active index holding `e`: it is alive, in the index's group,
    /// with at least one key.
    fn index_retains(&self, e: Entity) -> usize {
        let Some(values) = self.model.get(&e) else { return 0 };
        let holding = |index: &&ModelIndex| index.active && !index.spec.keys_of(values).is_empty();
        self.indices.iter().filter(holding).count()
    }

    /// Per key, the live entities an index of `spec` files under it (whether
    /// or not such an index is active).
    fn filing(&self, spec: &IndexSpec) -> BTreeMap<u8, BTreeSet<Entity>> {
        let mut filing: BTreeMap<u8, BTreeSet<Entity>> = BTreeMap::new();
        for (&e, values) in &self.model {
            for key in spec.keys_of(values) {
                filing.entry(key).or_default().insert(e);
            }
        }
        filing
    }

    /// The primary key clashes the model expects if `e` (`None`: an entity
    /// being created) had `after`: a key of an active primary index that
    /// another entity holds.
    fn clashes(&self, e: Option<Entity>, after: &Values) -> Vec<Clash> {
        let mut clashes = Vec::new();
        for index in self.indices.iter().filter(|i| i.active && i.spec.primary) {
            let keys = index.spec.keys_of(after);
            if keys.is_empty() {
                continue;
            }
            for (&holder, values) in &self.model {
                let held = index.spec.keys_of(values);
                for &key in keys.iter().filter(|key| held.contains(key)) {
                    if Some(holder) != e {
                        clashes.push((index.spec.name, key, holder));
                    }
                }
            }
        }
        clashes
    }

    /// No event fired during the current op (if the subscriber counts them).
    fn assert_quiet(&self) {
        if let Some(events) = &self.events {
            assert_eq!(events.load(Ordering::Relaxed), 0, "a refused change fires no event");
        }
    }

    /// The context refused a change of `e` (`None`: a creation) with a
    /// primary key clash, one of `clashes`.
    fn assert_refused<T: std::fmt::Debug>(&self, e: Option<Entity>, clashes: &[Clash], result: Result<T, Error>) {
        let Err(Error::DuplicatePrimaryKey {
            index,
            key,
            holder,
            entity,
            ..
        }) = &result
        else {
            panic!("expected one of the clashes {clashes:?} for {e:?}, got {result:?}");
        };
        assert_eq!(*entity, e, "{result:?}");
        let clash = (*index, key.parse::<u8>().unwrap(), *holder);
        assert!(clashes.contains(&clash), "{clash:?} is not one of {clashes:?}");
    }

    /// The live entity that has the unique `Leader`, if one does.
    fn leader(&self) -> Option<Entity> {
        self.model
            .iter()
            .find(|(_, values)| values.contains_key(&Kind::Leader))
            .map(|(&e, _)| e)
    }

    /// Whether giving an entity without one a `kind` is refused because
    /// another live entity holds it (a unique `Leader`); checks `result`.
    fn refused_unique(&self, kind: Kind, result: &Result<(), Error>) -> bool {
        let Some(holder) = self.leader().filter(|_| kind == Kind::Leader) else {
            return false;
        };
        assert!(
            matches!(result, Err(Error::UniqueAlreadyHeld { holder: h, .. }) if *h == holder),
            "{result:?}"
        );
        self.assert_quiet();
        true
    }

    /// The model's side of a component change that gives live `e` the values
    /// `after`: refused if it clashes with a primary key, else done.
    fn change(&mut self, e: Entity, after: Values, replaced: Option<Kind>, result: Result<(), Error>) {
        let clashes = self.clashes(Some(e), &after);
        if !clashes.is_empty() {
            self.assert_quiet();
            return self.assert_refused(Some(e), &clashes, result);
        }
        result.unwrap();
        let before = self.model.insert(e, after.clone()).expect("a live entity");
        self.observe(e, Some(&before), Some(&after), replaced);
    }

    /// `result`, from filling an index of primary `spec` (adding or
    /// activating it), is the clash of two entities of its group with a key
    /// in common, if the model has any; else it is `Ok`.
    fn filled<T: std::fmt::Debug>(&self, spec: &IndexSpec, result: Result<T, Error>) -> Option<T> {
        let filing = self.filing(spec);
        if !spec.primary || filing.values().all(|held| held.len() < 2) {
            return Some(result.unwrap());
        }
        let Err(Error::DuplicatePrimaryKey {
            index,
            key,
            holder,
            entity: Some(entity),
            ..
        }) = &result
        else {
            panic!("{}: expected a clash in {filing:?}, got {result:?}", spec.name);
        };
        assert_eq!(*index, spec.name);
        let held = &filing[&key.parse::<u8>().unwrap()];
        assert!(
            holder != entity && held.contains(holder) && held.contains(entity),
            "{result:?}: key held by {held:?}"
        );
        None
    }

    /// Adds the index of spec `which`, unless one has its name.
    fn make_index(&mut self, which: usize) {
        let spec = index_spec(which);
        let result = IndexHandle::add(&mut self.game, &spec);
        if self.indices.iter().any(|i| i.spec.name == spec.name) {
            assert!(matches!(result, Err(Error::DuplicateIndexName { .. })), "{result:?}");
        } else if let Some(id) = self.filled(&spec, result) {
            self.indices.push(ModelIndex { spec, id, active: true });
        } else {
            assert!(
                self.game.indices().all(|index| index.name() != spec.name),
                "a refused index is not added"
            );
        }
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
            Kind::Leader => self.game.add(e, Leader(v)),
            Kind::Lit => self.game.add(e, Lit),
            Kind::Mark => self.game.add(e, Mark(v)),
        }
    }

    fn replace(&mut self, e: Entity, kind: Kind, v: u8) -> Result<(), Error> {
        match kind {
            Kind::Small => self.game.replace(e, Small(v)),
            Kind::Wide => self.game.replace(e, Wide([u64::from(v); 9])),
            Kind::Flag => self.game.replace(e, Flag),
            Kind::Counted => self.game.replace(e, self.counter.make(&v.to_string())),
            Kind::Leader => self.game.replace(e, Leader(v)),
            Kind::Lit => self.game.replace(e, Lit),
            Kind::Mark => self.game.replace(e, Mark(v)),
        }
    }

    fn remove(&mut self, e: Entity, kind: Kind) -> Result<(), Error> {
        match kind {
            Kind::Small => self.game.remove::<Small>(e),
            Kind::Wide => self.game.remove::<Wide>(e),
            Kind::Flag => self.game.remove::<Flag>(e),
            Kind::Counted => self.game.remove::<Counted>(e),
            Kind::Leader => self.game.remove::<Leader>(e),
            Kind::Lit => self.game.remove::<Lit>(e),
            Kind::Mark => self.game.remove::<Mark>(e),
        }
    }

    /// The collectors see `e` change from `before` to `after` (`None`: not
    /// alive); `replaced` names the component if this is a replace of a
    /// present one.
    fn observe(&mut self, e: Entity, before: Option<&Values>, after: Option<&Values>, replaced: Option<Kind>) {
        // A structural change first hands the entity's stamped replacements
        // to the collectors that hold them, in order.
        if replaced.is_none() {
            for collector in &mut self.collectors {
                if collector.stamped.remove(&e) && !collector.entities.contains(&e) {
                    collector.entities.push(e);
                }
            }
        }
        let stamped = replaced.is_some();
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
                if stamped && updated {
                    if !collector.entities.contains(&e) {
                        collector.stamped.insert(e);
                    }
                } else if !collector.entities.contains(&e) {
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

    /// Reads every collector, which gathers its stamped entities: the model
    /// checks them as a set and takes the context's order.
    fn gather_all(&mut self) {
        for which in 0..self.collectors.len() {
            let c = &self.collectors[which];
            let got = self.game.collector(c.id).unwrap().entities().to_vec();
            let c = &mut self.collectors[which];
            if !c.active {
                assert!(c.stamped.is_empty(), "an inactive collector holds no stamped entity");
            }
            let known = c.entities.len();
            assert!(got.len() >= known, "{}: {got:?} lost some of {:?}", c.id, c.entities);
            assert_eq!(got[..known], c.entities[..], "{}: collected in order", c.id);
            let tail: BTreeSet<Entity> = got[known..].iter().copied().collect();
            assert_eq!(tail.len(), got.len() - known, "{}: each entity once", c.id);
            assert_eq!(tail, std::mem::take(&mut c.stamped), "{}: gathered", c.id);
            c.entities = got;
        }
    }

    fn clear(&mut self, which: usize) {
        self.game.collector_mut(self.collectors[which].id).unwrap().clear();
        self.forget_collected(which);
    }

    /// The model's side of clearing collector `which`: it releases what it
    /// held and forgets its kept values.
    fn forget_collected(&mut self, which: usize) {
        let held = std::mem::take(&mut self.collectors[which].entities);
        self.collectors[which].kept.clear();
        self.collectors[which].stamped.clear();
        for e in held {
            self.free_if_released(e);
        }
    }

    fn make_collector(&mut self, which: usize) {
        let (spec, triggers, keeps_small) = collector_spec(which);
        let id = self.game.add_collector(spec);
        self.collectors.push(ModelCollector {
            id,
            triggers,
            keeps_small,
            active: true,
            stamped: BTreeSet::new(),
            entities: Vec::new(),
            kept: BTreeMap::new(),
        });
    }

    pub(crate) fn apply(&mut self, op: &Op) {
        if let Some(events) = &self.events {
            events.store(0, Ordering::Relaxed);
        }
        match *op {
            Op::Create => {
                let e = self.game.create_entity();
                self.born(e, Values::new());
            }
            Op::CreateWith(v) => {
                let result =
                    self.game
                        .create_entity_with((Small(v), Flag, Mark(v), self.counter.make(&v.to_string()), Lit));
                let values: Values = [
                    (Kind::Small, v),
                    (Kind::Flag, 0),
                    (Kind::Mark, v),
                    (Kind::Counted, v),
                    (Kind::Lit, 0),
                ]
                .into();
                let clashes = self.clashes(None, &values);
                if !clashes.is_empty() {
                    self.assert_quiet();
                    return self.assert_refused(None, &clashes, result);
                }
                self.born(result.unwrap(), values);
            }
            Op::CreateSmallWide(v) => {
                let result = self.game.create_entity_with((Small(v), Wide([u64::from(v); 9])));
                let values: Values = [(Kind::Small, v), (Kind::Wide, v)].into();
                let clashes = self.clashes(None, &values);
                if !clashes.is_empty() {
                    self.assert_quiet();
                    return self.assert_refused(None, &clashes, result);
                }
                self.born(result.unwrap(), values);
            }
            Op::CreateBatch(ref batch) => {
                let bundles = batch.iter().map(|&v| (Small(v), Wide([u64::from(v); 9])));
                let result = self.game.create_entities_with(bundles);
                let made = match &result {
                    Ok(made) => made.clone(),
                    Err(_) => {
                        // The entities made before the clash stay.
                        let mut made: Vec<Entity> =
                            self.game.entities().filter(|e| !self.model.contains_key(e)).collect();
                        made.sort_by_key(|&e| self.game.creation_index(e).unwrap());
                        made
                    }
                };
                let mut made = made.into_iter();
                for (at, &v) in batch.iter().enumerate() {
                    let values: Values = [(Kind::Small, v), (Kind::Wide, v)].into();
                    let clashes = self.clashes(None, &values);
                    if !clashes.is_empty() {
                        assert_eq!(made.next(), None, "made after the clash");
                        if at == 0 {
                            self.assert_quiet();
                        }
                        return self.assert_refused(None, &clashes, result);
                    }
                    self.born(made.next().expect("made before any clash"), values);
                }
                assert_eq!(made.next(), None, "made more than asked");
                result.unwrap();
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
                let Some(values) = self.model.get(&e) else {
                    return self.assert_not_alive(e, result);
                };
                if values.contains_key(&kind) {
                    assert!(
                        matches!(result, Err(Error::ComponentAlreadyPresent { .. })),
                        "{result:?}"
                    );
                    return;
                }
                if self.refused_unique(kind, &result) {
                    return;
                }
                let mut after = values.clone();
                after.insert(kind, if kind.is_tag() { 0 } else { v });
                self.change(e, after, None, result);
            }
            Op::Remove(i, kind) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.remove(e, kind);
                let Some(values) = self.model.get(&e) else {
                    return self.assert_not_alive(e, result);
                };
                let mut after = values.clone();
                if after.remove(&kind).is_none() {
                    assert!(matches!(result, Err(Error::ComponentAbsent { .. })), "{result:?}");
                    return;
                }
                self.change(e, after, None, result);
            }
            Op::Replace(i, kind, v) => {
                let Some(e) = self.pick(i) else { return };
                let result = self.replace(e, kind, v);
                let Some(values) = self.model.get(&e) else {
                    return self.assert_not_alive(e, result);
                };
                if !values.contains_key(&kind) && self.refused_unique(kind, &result) {
                    return;
                }
                let mut after = values.clone();
                // A tag the entity has is never updated: nothing happens.
                let replaced = after
                    .insert(kind, if kind.is_tag() { 0 } else { v })
                    .filter(|_| !kind.is_tag())
                    .map(|_| kind);
                self.change(e, after, replaced, result);
            }
            Op::SetUnique(v) => {
                let result = self.game.set_unique(Leader(v));
                match self.leader() {
                    Some(holder) => {
                        assert_eq!(result, Ok(holder));
                        let mut after = self.model[&holder].clone();
                        after.insert(Kind::Leader, v);
                        self.change(holder, after, Some(Kind::Leader), Ok(()));
                    }
                    None => self.born(result.unwrap(), [(Kind::Leader, v)].into()),
                }
            }
            Op::TakeUnique => {
                let result = self.game.take_unique::<Leader>();
                let Some(holder) = self.leader() else {
                    assert!(matches!(result, Err(Error::UniqueAbsent { .. })), "{result:?}");
                    return self.assert_quiet();
                };
                let mut after = self.model[&holder].clone();
                let value = after.remove(&Kind::Leader);
                let emptied = after.is_empty();
                // Refused if leaving `Leader` makes the holder clash in a
                // primary index of a NoneOf group (never once it is empty).
                self.change(holder, after, None, result.map(|l| assert_eq!(Some(l.0), value)));
                if emptied {
                    self.destroy(holder);
                }
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
                // The reset gathers first: collectors retain what they hold.
                self.gather_all();
                // Indices' retains go with the entities: they do not count.
                let retained = self
                    .model
                    .keys()
                    .chain(&self.disabled)
                    .filter(|&&e| self.blocking_retains(e) > 0);
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
            Op::ModifyEach(wide, by) => {
                let mut visited = Vec::new();
                let (kind, result, rule) = if wide {
                    let (group, rule, _) = self.groups[1];
                    let result = self.game.modify_each::<Wide, Entity>(group, |w, e| {
                        visited.push(e);
                        *w = Wide([u64::from((w.0[0] as u8).wrapping_add(by)); 9]);
                    });
                    (Kind::Wide, result, rule)
                } else {
                    let (group, rule, _) = self.groups[0];
                    let result = self.game.modify_each::<Small, Entity>(group, |s, e| {
                        visited.push(e);
                        s.0 = s.0.wrapping_add(by);
                    });
                    (Kind::Small, result, rule)
                };
                // Entity by entity, in the context's order, as `replace` does.
                for (at, &e) in visited.iter().enumerate() {
                    let mut after = self.model[&e].clone();
                    let v = after[&kind].wrapping_add(by);
                    let replaced = after.insert(kind, v).map(|_| kind);
                    let clashes = self.clashes(Some(e), &after);
                    if !clashes.is_empty() {
                        assert_eq!(at + 1, visited.len(), "modify_each stops at a clash");
                        if at == 0 {
                            self.assert_quiet();
                        }
                        return self.assert_refused(Some(e), &clashes, result);
                    }
                    let before = self.model.insert(e, after.clone()).expect("a live entity");
                    self.observe(e, Some(&before), Some(&after), replaced);
                }
                assert_eq!(result.unwrap(), visited.len());
                let members: BTreeSet<Entity> = self.model.iter().filter(|(_, v)| rule(v)).map(|(&e, _)| e).collect();
                assert_eq!(visited.len(), members.len(), "each member visited once");
                assert_eq!(visited.into_iter().collect::<BTreeSet<_>>(), members);
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
                self.game.collector_mut(self.collectors[which].id).unwrap().deactivate();
                self.collectors[which].active = false;
                self.forget_collected(which);
            }
            Op::Activate(c) => {
                let which = self.pick_collector(c);
                self.game.collector_mut(self.collectors[which].id).unwrap().activate();
                self.collectors[which].active = true;
            }
            Op::CollectLate(which) => {
                if self.collectors.len() < MAX_COLLECTORS {
                    self.make_collector(which);
                }
            }
            Op::IndexLate(which) => self.make_index(which),
            Op::DeactivateIndex(i) => {
                let Some(which) = self.pick_index(i) else { return };
                self.indices[which].id.deactivate(&mut self.game).unwrap();
                self.indices[which].active = false;
            }
            Op::ActivateIndex(i) => {
                let Some(which) = self.pick_index(i) else { return };
                let index = &self.indices[which];
                let result = index.id.activate(&mut self.game);
                if index.active {
                    result.unwrap();
                } else if self.filled(&index.spec, result).is_some() {
                    self.indices[which].active = true;
                }
            }
            Op::RemoveIndex(i) => {
                let Some(which) = self.pick_index(i) else { return };
                let index = self.indices.remove(which);
                index.id.remove(&mut self.game).unwrap();
                self.removed_indices.push(index.id);
            }
            Op::Modify(i, wide, by, with) => {
                let Some(e) = self.pick(i) else { return };
                let kind = if wide { Kind::Wide } else { Kind::Small };
                let result = self.modify(e, kind, by, with);
                let Some(values) = self.model.get(&e) else {
                    return self.assert_not_alive(e, result);
                };
                let mut after = values.clone();
                let Some(v) = after.get_mut(&kind) else {
                    self.assert_quiet();
                    let absent = if wide { "Wide" } else { "Small" };
                    assert!(
                        matches!(result, Err(Error::ComponentAbsent { component, .. }) if component == absent),
                        "{result:?}"
                    );
                    return;
                };
                *v = v.wrapping_add(by);
                self.change(e, after, Some(kind), result);
            }
            Op::Write(i, wide, by) => {
                let Some(e) = self.pick(i) else { return };
                let kind = if wide { Kind::Wide } else { Kind::Small };
                let Some(values) = self.model.get(&e).cloned() else {
                    let result = self.game.get_mut::<Small>(e).map(drop);
                    return self.assert_not_alive(e, result);
                };
                let mut after = values.clone();
                let Some(v) = after.get_mut(&kind) else {
                    let result = if wide {
                        self.game.get_mut::<Wide>(e).map(drop)
                    } else {
                        self.game.get_mut::<Small>(e).map(drop)
                    };
                    assert!(matches!(result, Err(Error::ComponentAbsent { .. })), "{result:?}");
                    return;
                };
                *v = v.wrapping_add(by);
                if !self.clashes(Some(e), &after).is_empty() {
                    return;
                }
                if wide {
                    let mut w = self.game.get_mut::<Wide>(e).unwrap();
                    *w = Wide([u64::from((w.0[0] as u8).wrapping_add(by)); 9]);
                } else {
                    self.game.get_mut::<Small>(e).unwrap().0 = after[&kind];
                }
                self.assert_quiet();
                self.model.insert(e, after.clone());
                self.observe(e, Some(&values), Some(&after), Some(kind));
            }
            Op::View(i) => {
                let Some(e) = self.pick(i) else { return };
                let expected = self.model.get(&e).cloned();
                let viewed = self.view(e);
                match expected {
                    Some(values) => {
                        let viewed = viewed.unwrap();
                        let present = |kind| values.get(&kind).copied();
                        let kinds = [Kind::Small, Kind::Wide, Kind::Flag, Kind::Lit, Kind::Mark];
                        assert_eq!(viewed, kinds.map(present), "{e}");
                        self.assert_quiet();
                        // The view wrote `Small`, `Wide` and `Mark` back
                        // through `&mut`: replacements that collectors see.
                        for kind in [Kind::Small, Kind::Wide, Kind::Mark] {
                            if values.contains_key(&kind) {
                                self.observe(e, Some(&values), Some(&values), Some(kind));
                            }
                        }
                    }
                    None => self.assert_not_alive(e, viewed.map(drop)),
                }
            }
            Op::RemoveCollector(c) => {
                if self.collectors.len() <= 1 {
                    return;
                }
                let which = self.pick_collector(c);
                self.clear(which);
                let removed = self.collectors.remove(which);
                self.game.collector_mut(removed.id).unwrap().remove();
                self.removed_collectors.push(removed.id);
            }
            Op::Listen => match self.listening.take() {
                Some(id) => self.game.unsubscribe(id).unwrap(),
                None => self.listening = Some(self.game.subscribe(|_| {})),
            },
            Op::ListenGroup(g) => match self.listening_group.take() {
                Some(id) => self.game.unsubscribe(id).unwrap(),
                None => {
                    let (group, _, _) = self.groups[g % self.groups.len()];
                    let handler = |event: &GroupEvent<'_>| {
                        if let GroupEvent::Updated { old, new, .. } = event {
                            assert_eq!(old.info().name(), new.info().name(), "an update keeps the component");
                        }
                    };
                    self.listening_group = Some(self.game.subscribe_group(group, handler).unwrap());
                }
            },
        }
    }

    /// Adds `by` to the entity's `Small` or `Wide` with `modify`, or with
    /// `modify_with` (which also reads, through the same lookup, the entity
    /// handle and its other components, checked against the model).
    fn modify(&mut self, e: Entity, kind: Kind, by: u8, with: bool) -> Result<(), Error> {
        let expected = self.model.get(&e).cloned().unwrap_or_default();
        let (mark, lit) = (expected.get(&Kind::Mark).copied(), expected.contains_key(&Kind::Lit));
        let others = move |me: Entity, small: Option<&Small>, wide: Option<&Wide>, flag: Option<&Flag>| {
            assert_eq!(me, e);
            assert_eq!(small.map(|s| s.0), expected.get(&Kind::Small).copied());
            assert_eq!(wide.map(|w| w.0[0] as u8), expected.get(&Kind::Wide).copied());
            assert_eq!(flag.is_some(), expected.contains_key(&Kind::Flag));
        };
        let add = |w: &mut Wide| *w = Wide([u64::from((w.0[0] as u8).wrapping_add(by)); 9]);
        match (kind, with) {
            (Kind::Small, false) => self.game.modify(e, |s: &mut Small| s.0 = s.0.wrapping_add(by)),
            (Kind::Small, true) => self
                .game
                .modify_with::<Small, (Entity, Option<&Wide>, Option<&Flag>), _>(e, |s, (me, w, f)| {
                    others(me, Some(s), w, f);
                    s.0 = s.0.wrapping_add(by);
                }),
            (_, false) => self.game.modify(e, add),
            // `Mark` and `Lit` in `Q`: the path through a plan, as a query.
            (_, true) => self
                .game
                .modify_with::<Wide, (Option<&Small>, Option<&Flag>, Entity, Option<&Mark>, Option<&Lit>), _>(
                    e,
                    |w, (s, f, me, mark_seen, lit_seen)| {
                        others(me, s, Some(w), f);
                        assert_eq!(mark_seen.map(|m| m.0), mark);
                        assert_eq!(lit_seen.is_some(), lit);
                        add(w);
                    },
                ),
        }
    }

    /// The entity's `Small`, `Wide`, `Flag`, `Lit` and `Mark` (as the
    /// model's values) read through its view, whose `Small`, `Wide` and
    /// `Mark` are then written back unchanged through `get_mut` and queries
    /// (replacements that collectors see).
    fn view(&mut self, e: Entity) -> Result<[Option<u8>; 5], Error> {
        let (wide_keyed, mark_keyed) = (self.keyed(Kind::Wide), self.keyed(Kind::Mark));
        let mut view = self.game.entity_mut(e)?;
        assert_eq!(view.entity(), e);
        let (me, small, wide, flag) = view.query::<(Entity, Option<&Small>, Option<&Wide>, Option<&Flag>)>()?;
        assert_eq!(me, e);
        let read = [small.map(|s| s.0), wide.map(|w| w.0[0] as u8), flag.map(|_| 0)];
        let (lit, mark) = view.query::<(Option<&Lit>, Option<&Mark>)>()?;
        let read = [read[0], read[1], read[2], lit.map(|_| 0), mark.map(|m| m.0)];
        if let Some(mut small) = view.get_mut::<Small>() {
            *small = Small(small.0);
        }
        // A view's query cannot lend a component an active index keys on:
        // then it is written back through `get_mut`.
        if wide_keyed {
            let refused = view.query::<(Option<&mut Wide>, Option<&Small>)>().map(drop);
            assert!(matches!(refused, Err(Error::KeyedWrite { .. })), "{refused:?}");
            if let Some(mut wide) = view.get_mut::<Wide>() {
                *wide = Wide(wide.0);
            }
        } else if let (Some(wide), _) = view.query::<(Option<&mut Wide>, Option<&Small>)>()? {
            *wide = Wide(wide.0);
        }
        if mark_keyed {
            let refused = view.query::<(Option<&mut Mark>, Option<&Lit>)>().map(drop);
            assert!(matches!(refused, Err(Error::KeyedWrite { .. })), "{refused:?}");
            if view.has::<Lit>()
                && let Some(mut mark) = view.get_mut::<Mark>()
            {
                *mark = Mark(mark.0);
            }
        } else if let (Some(mark), Some(_)) = view.query::<(Option<&mut Mark>, Option<&Lit>)>()? {
            *mark = Mark(mark.0);
        }
        assert_eq!(view.has::<Flag>(), read[2].is_some());
        Ok(read)
    }

    /// Whether an active index keys on `kind`.
    fn keyed(&self, kind: Kind) -> bool {
        self.indices
            .iter()
            .any(|index| index.active && index.spec.component == kind)
    }

    fn pick_index(&self, i: usize) -> Option<usize> {
        (!self.indices.is_empty()).then(|| i % self.indices.len())
    }

    /// Groups over the model's components, each with a subscriber that keeps
    /// its own member set from the group's events alone.
    fn watch_groups(&mut self) {
        let matchers: [(Matcher, MemberRule); 6] = [
            (Matcher::all_of::<Small>(), |v| v.contains_key(&Kind::Small)),
            (Matcher::all_of::<(Small, Wide)>(), |v| {
                v.contains_key(&Kind::Small) && v.contains_key(&Kind::Wide)
            }),
            (Matcher::any_of::<(Flag, Counted)>(), |v| {
                v.contains_key(&Kind::Flag) || v.contains_key(&Kind::Counted)
            }),
            (Matcher::none_of::<Flag>(), |v| !v.contains_key(&Kind::Flag)),
            (Matcher::all_of::<(Lit, Small)>(), |v| {
                v.contains_key(&Kind::Lit) && v.contains_key(&Kind::Small)
            }),
            (Matcher::any_of::<(Lit, Mark)>(), |v| {
                v.contains_key(&Kind::Lit) || v.contains_key(&Kind::Mark)
            }),
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
            2 => (Matcher::none_of::<Lit>().all_of::<Wide>(), |v| {
                !v.contains_key(&Kind::Lit) && v.contains_key(&Kind::Wide)
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
        let id = self.game.add_group(matcher);
        let seed: BTreeSet<Entity> = self.game.group(id).unwrap().iter().collect();
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
    pub(crate) fn compare(&mut self) {
        self.gather_all();
        check(&self.game);
        for (id, rule, members) in &self.groups {
            let expected: BTreeSet<Entity> = self
                .model
                .iter()
                .filter(|(_, values)| rule(values))
                .map(|(&e, _)| e)
                .collect();
            let group = self.game.group(*id).unwrap();
            assert_eq!(*members.lock().unwrap(), expected, "{group}: events");
            assert_eq!(group.len(), expected.len(), "{group}: len");
            assert_eq!(
                group.entities().iter().copied().collect::<BTreeSet<_>>(),
                expected,
                "{group}: entities"
            );
        }
        assert_eq!(self.game.len(), self.model.len());
        let leader = self.leader();
        assert_eq!(self.game.unique_entity::<Leader>(), leader);
        assert_eq!(
            self.game.unique::<Leader>().map(|l| l.0),
            leader.map(|e| self.model[&e][&Kind::Leader])
        );
        for &e in &self.handles {
            self.compare_entity(e);
        }
        self.compare_queries();
        let mut disabled: Vec<Entity> = self.disabled.iter().copied().collect();
        disabled.sort_by_key(|e| e.index());
        let retained: Vec<Entity> = self.game.aerc().retained_destroyed().collect();
        assert_eq!(retained, disabled, "retained destroyed entities, in slot order");
        self.compare_collectors();
        self.compare_indices();
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

    /// Queries that fetch flag and sparse components visit exactly the
    /// entities that have them (for `&T`), and see the model's values.
    fn compare_queries(&mut self) {
        let expected: BTreeMap<Entity, (u8, Option<u8>, bool)> = self
            .model
            .iter()
            .filter_map(|(&e, v)| {
                let mark = *v.get(&Kind::Mark)?;
                Some((e, (mark, v.get(&Kind::Small).copied(), v.contains_key(&Kind::Lit))))
            })
            .collect();
        let query = self.game.query::<(Entity, &Mark, Option<&Small>, Option<&Lit>)>();
        let seen: BTreeMap<Entity, (u8, Option<u8>, bool)> = query
            .iter()
            .map(|(e, mark, small, lit)| (e, (mark.0, small.map(|s| s.0), lit.is_some())))
            .collect();
        assert_eq!(seen, expected, "a query over `&Mark`");
        assert_eq!(query.count(), expected.len());
        let lit: BTreeSet<Entity> = self
            .model
            .iter()
            .filter(|(_, v)| v.contains_key(&Kind::Lit))
            .map(|(&e, _)| e)
            .collect();
        let seen: BTreeSet<Entity> = self.game.query::<(Entity, &Lit)>().iter().map(|(e, _)| e).collect();
        assert_eq!(seen, lit, "a query over the flag `&Lit`");
        // Written back unchanged, chunk by chunk and entity by entity.
        // A query cannot lend a component an active index keys on: then
        // each is written back through `get_mut`, whose `Mut` re-keys.
        let mut written = 0;
        if self.keyed(Kind::Mark) {
            let refused = self.game.query_mut::<(&mut Mark, Option<&Small>)>().map(drop);
            assert!(matches!(refused, Err(Error::KeyedWrite { .. })), "{refused:?}");
            let refused = self.game.query_mut::<(Entity, Option<&mut Mark>)>().map(drop);
            assert!(matches!(refused, Err(Error::KeyedWrite { .. })), "{refused:?}");
            for &e in expected.keys() {
                let mut mark = self.game.get_mut::<Mark>(e).unwrap();
                *mark = Mark(mark.0);
                written += 1;
            }
        } else {
            let mut query = self.game.query_mut::<(&mut Mark, Option<&Small>)>().unwrap();
            query.for_each_chunk(|(mut marks, _)| {
                for mark in marks.iter_mut() {
                    let mark = mark.expect("a `&mut Mark` query visits marked entities only");
                    *mark = Mark(mark.0);
                }
                written += marks.len();
            });
            let mut query = self.game.query_mut::<(Entity, Option<&mut Mark>)>().unwrap();
            query.for_each(|(e, mark)| {
                assert_eq!(mark.map(|m| m.0), self.model[&e].get(&Kind::Mark).copied());
            });
        }
        assert_eq!(written, expected.len());
        // Those writes are replacements of `Mark` that collectors see.
        for e in expected.into_keys() {
            let values = self.model[&e].clone();
            self.observe(e, Some(&values), Some(&values), Some(Kind::Mark));
        }
    }

    fn compare_entity(&self, e: Entity) {
        let enabled = self.game.aerc().is_enabled(e);
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
                    Kind::Leader => self.game.get::<Leader>(e).ok().map(|l| l.0),
                    Kind::Lit => self.game.has::<Lit>(e).then_some(0),
                    Kind::Mark => self.game.get::<Mark>(e).ok().map(|m| m.0),
                }
            };
            for kind in Kind::ALL {
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
            let count = self.game.aerc().retain_count(e);
            assert!(matches!(count, Err(Error::StaleEntity { .. })), "{e}: {count:?}");
            let owners = self.game.aerc().owners(e);
            assert!(matches!(owners, Err(Error::StaleEntity { .. })), "{e}: {owners:?}");
            let get = self.game.get::<Small>(e);
            assert!(matches!(get, Err(Error::StaleEntity { .. })), "{get:?}");
            assert!(!self.user.contains_key(&e), "the model frees {e} while retained");
            return;
        }
        assert_eq!(self.game.aerc().retain_count(e), Ok(self.retains(e)), "retains of {e}");
        let owners = self.game.aerc().owners(e).unwrap();
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

    /// Each index holds, key by key, what the model's values give (nothing
    /// while inactive), and each removed one is unknown.
    fn compare_indices(&self) {
        assert_eq!(self.game.indices().count(), self.indices.len());
        for index in &self.indices {
            let (spec, id) = (&index.spec, index.id);
            let view = id.view(&self.game).unwrap();
            assert_eq!(view.name(), spec.name);
            assert_eq!(view.is_active(), index.active, "{view}");
            assert_eq!(view.to_string().ends_with(", inactive"), !index.active, "{view}");
            id.assert_named(&self.game, spec.name);
            let filing = if index.active {
                self.filing(spec)
            } else {
                BTreeMap::new()
            };
            if spec.primary {
                assert!(filing.values().all(|held| held.len() == 1), "{view}: {filing:?}");
            }
            for key in 0..=spec.key_space {
                let expected: Vec<Entity> = filing
                    .get(&key)
                    .map_or(Vec::new(), |held| held.iter().copied().collect());
                assert_eq!(id.get(&self.game, key), expected, "{view}: key {key}");
            }
            assert_eq!(view.key_count(), filing.len(), "{view}: keys");
            let held: BTreeSet<Entity> = filing.values().flatten().copied().collect();
            assert_eq!(view.entity_count(), held.len(), "{view}: entities");
            assert_eq!(view.is_empty(), held.is_empty(), "{view}");
            for &e in &self.handles {
                let mut expected = match self.model.get(&e) {
                    Some(values) if index.active => spec.keys_of(values),
                    _ => Vec::new(),
                };
                expected.sort_unstable();
                assert_eq!(id.keys_of(&self.game, e), expected, "{view}: keys of {e}");
            }
        }
        for id in &self.removed_indices {
            let view = id.view(&self.game).err();
            assert!(matches!(view, Some(Error::UnknownIndex { .. })), "{view:?}");
        }
        for which in 0..INDEX_SPECS {
            let name = index_spec(which).name;
            if self.indices.iter().all(|index| index.spec.name != name) {
                let found = self.game.index_id::<EntityIndex<u8>>(name);
                assert!(matches!(found, Err(Error::UnknownIndex { .. })), "{name}: {found:?}");
            }
        }
    }

    fn compare_collectors(&mut self) {
        self.gather_all();
        assert_eq!(self.game.collectors().count(), self.collectors.len());
        for &id in &self.removed_collectors {
            let found = self.game.collector(id).err();
            assert!(matches!(found, Some(Error::UnknownCollector { .. })), "{found:?}");
        }
        for c in &self.collectors {
            let collector = self.game.collector(c.id).unwrap();
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
