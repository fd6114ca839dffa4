//! What the snapshot tests share: component types that opt in to
//! snapshots (values, a flag, a sparse and a unique component, types holding
//! entity handles), one declared but not listed, and checks of a restored
//! or refused context.
#![allow(dead_code)]

pub mod hostile;

use reactecs::MapEntities;
use reactecs::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Velocity(pub f32, pub f32);

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Frozen;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Poison(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Score(pub u32);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Name(pub String);

/// Holds a handle: mapped at restore.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target(pub Entity);

impl MapEntities for Target {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        self.0 = map(self.0);
    }
}

/// Holds several handles, some maybe absent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Squad {
    pub members: Vec<Entity>,
    pub leader: Option<Entity>,
}

impl MapEntities for Squad {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        self.members.map_entities(map);
        self.leader.map_entities(map);
    }
}

/// Declared, but not listed for snapshots.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Secret(pub u64);

/// Keyed by a primary index in one test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetId(pub u64);

reactecs::component!(Position, Velocity, flag Frozen, sparse Poison, unique Score, Name, Target, Squad, Secret, NetId);
reactecs::snapshot!(Position, Velocity, Frozen, Poison, Score, Name, Target);
reactecs::snapshot!(Squad, NetId);

/// The fixture's types that hold no handles: what `Context::diff`
/// compares between a saved and a restored context (handles differ per
/// context: `Target` and `Squad` are checked by hand).
pub type Values = (Position, Velocity, Frozen, Poison, Score, Name, NetId);

/// Asserts that `restored` holds the values of `saved`, entity by entity
/// matched by creation order (`Context::diff` over [`Values`]).
pub fn assert_same_values(saved: &Context, restored: &Context) {
    let diff = saved.diff::<Values>(restored);
    assert!(diff.is_empty(), "the round trip changed:\n{diff}");
}

/// The entities in creation order.
pub fn in_creation_order(context: &Context) -> Vec<Entity> {
    let mut all: Vec<Entity> = context.entities().collect();
    all.sort_by_key(|&e| context.creation_index(e).unwrap());
    all
}

/// After a failed restore: no entities, invariants hold, and a new entity
/// is the first in creation order, in slot 0.
pub fn assert_empty_and_usable(context: &mut Context) {
    assert!(context.is_empty());
    assert_eq!(context.entities().count(), 0);
    assert_eq!(context.unique_entity::<Score>(), None);
    context.check_invariants().unwrap();
    let e = context.create_entity_with(Position { x: 1.0, y: 1.0 }).unwrap();
    assert_eq!(context.creation_index(e), Ok(0));
    assert_eq!(e.index(), 0);
    context.check_invariants().unwrap();
    let collectors: Vec<CollectorId> = context.collectors().map(|c| c.id()).collect();
    context.destroy_entity(e).unwrap();
    for id in collectors {
        context.collector_mut(id).unwrap().clear();
    }
    context.reset().unwrap();
}

/// What a refused restore must leave as it was, as lines: every entity with
/// its components, creation index and retain count, every group with its
/// members, every collector with what it holds, every index.
pub fn whole_state(context: &mut Context) -> Vec<String> {
    // Collectors first: reading them gathers (and retains) what was written.
    let collectors: Vec<String> = context.collectors().map(|collector| format!("{collector:?}")).collect();
    let mut lines: Vec<String> = context
        .entities()
        .map(|e| {
            format!(
                "{:?} created {} retained {}",
                context.entity(e).unwrap(),
                context.creation_index(e).unwrap(),
                context.aerc().retain_count(e).unwrap()
            )
        })
        .collect();
    lines.extend(
        context
            .groups()
            .map(|group| format!("{group:?} {:?}", group.entities())),
    );
    lines.extend(collectors);
    lines.extend(context.indices().map(|index| index.to_string()));
    lines
}

/// A context named "Game" holding one entity at (9, 9), seen by a group, a
/// collector, a primary index and a subscriber: the target of a restore
/// that must be refused. Returns the entity and what the subscriber hears.
pub fn occupied() -> (Context, Entity, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let mut target = Context::with_name("Game");
    target.add_group(Matcher::all_of::<Position>());
    target.add_collector(Matcher::all_of::<Position>().added());
    target
        .add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))
        .unwrap();
    let kept = target
        .create_entity_with((Position { x: 9.0, y: 9.0 }, Name("kept".into())))
        .unwrap();
    let heard = listen(&mut target);
    (target, kept, heard)
}

/// Every event `context` fires from now on, as lines.
pub fn listen(context: &mut Context) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&heard);
    context.subscribe(move |event: &ContextEvent<'_>| sink.lock().unwrap().push(format!("{event:?}")));
    heard
}

/// Restores `json` with `restore` into a context with a group, a collector
/// and a subscriber, expects an `InvalidSnapshot` whose reason contains
/// `says`, and checks no event fired and the context is left empty and usable.
pub fn refused_by(json: &str, says: &str, restore: impl FnOnce(&mut Context, &str) -> Result<(), Error>) {
    let mut target = Context::with_name("Game");
    let group = target.add_group(Matcher::all_of::<Position>());
    let collector = target.add_collector(Matcher::all_of::<Position>().added());
    let heard = listen(&mut target);
    let err = restore(&mut target, json).unwrap_err();
    match &err {
        Error::InvalidSnapshot { context, reason } => {
            assert_eq!(*context, "Game");
            assert!(reason.contains(says), "{reason:?} should say {says:?}");
        }
        other => panic!("expected InvalidSnapshot, got {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("cannot restore a snapshot into context `Game`"),
        "{err}"
    );
    assert!(!err.to_string().contains("  "), "one space between words: {err}");
    assert_eq!(target.group(group).unwrap().len(), 0);
    assert_eq!(target.collector(collector).unwrap().len(), 0);
    assert_eq!(
        *heard.lock().unwrap(),
        Vec::<String>::new(),
        "a refused restore fires nothing"
    );
    assert_empty_and_usable(&mut target);
}

/// Input that is not a snapshot a program with these types can restore, and
/// what the error says: malformed JSON, unknown and unlisted names, values
/// of the wrong shape, and what the checks after reading refuse.
pub const BAD_SNAPSHOTS: &[(&str, &str)] = &[
    ("not json", "expected"),
    ("[]", "invalid length 0"),
    (r#"{"entities":1}"#, "missing field `components`"),
    (r#"{"entities":1,"components":[],"extra":0}"#, "unknown field `extra`"),
    (
        r#"{"entities":1,"components":[["Position",[[0,{"x":1.0,"y":2.0}]]],["Nope",[[0,1]]]]}"#,
        "no component is declared with the name `Nope`",
    ),
    (
        r#"{"entities":1,"components":[["Secret",[[0,1]]]]}"#,
        "component `Secret` is not listed for snapshots",
    ),
    (
        r#"{"entities":2,"components":[["Position",[[0,{"x":1.0,"y":2.0}],[1,"fast"]]]]}"#,
        "in the values of component `Position`",
    ),
    (r#"{"entities":1,"components":[["Name",[[0,12]]]]}"#, "invalid type"),
    (
        r#"{"entities":1,"components":[["Velocity",[[0,[1.0,0.0]],[1,[2.0,0.0]]]]]}"#,
        "given to entity 1, but the snapshot has 1 entities",
    ),
    (
        r#"{"entities":2,"components":[["Velocity",[[1,[1.0,0.0]],[1,[2.0,0.0]]]]]}"#,
        "not in increasing entity order",
    ),
    (
        r#"{"entities":2,"components":[["Target",[[0,5]]]]}"#,
        "refers to entity 5, but the snapshot has 2 entities",
    ),
    (
        r#"{"entities":2,"components":[["Score",[[0,1],[1,2]]]]}"#,
        "unique component `Score` is held by 2 entities",
    ),
    (
        r#"{"entities":1,"components":[["Velocity",[[0,[1.0,0.0]]]],["Velocity",[]]]}"#,
        "component `Velocity` is listed twice",
    ),
];
