//! Snapshots (feature `serde`): JSON and postcard round trips of values,
//! flags, sparse and unique components and entity references; creation
//! order; components not listed are skipped; the target's groups, indices
//! and collectors see the restored entities; bad input (malformed,
//! truncated, unknown names, wrong types, out-of-range positions) and a
//! non-empty target are errors that leave the target empty and usable.
#![cfg(feature = "serde")]

mod snapshot_fixture;

use reactecs::StorageKind;
use reactecs::prelude::*;
use serde::{Deserialize, Serialize};
use snapshot_fixture::*;

/// A small game: a player holding the unique score, two orcs (one frozen,
/// one poisoned), an archer targeting the first orc, a squad, an entity
/// with only a component not listed, and a target whose entity was
/// destroyed before the snapshot.
fn game() -> Context {
    let mut game = Context::with_name("Game");
    let player = game
        .create_entity_with((Position { x: 0.0, y: 0.0 }, Name("player".into())))
        .unwrap();
    game.add(player, Score(42)).unwrap();
    let orc = game
        .create_entity_with((Position { x: 5.0, y: 1.0 }, Velocity(-1.0, 0.0)))
        .unwrap();
    game.add(orc, Frozen).unwrap();
    let other = game.create_entity_with(Position { x: 7.0, y: 2.0 }).unwrap();
    game.add(other, Poison(3)).unwrap();
    let gone = game.create_entity();
    game.create_entity_with((Position { x: -3.0, y: 0.5 }, Target(orc), Secret(7)))
        .unwrap();
    game.create_entity_with(Squad {
        members: vec![orc, other],
        leader: Some(other),
    })
    .unwrap();
    game.create_entity_with(Secret(9)).unwrap();
    game.create_entity_with(Target(gone)).unwrap();
    game.destroy_entity(gone).unwrap();
    game.check_invariants().unwrap();
    game
}

/// Checks that `restored` holds `game()`'s entities and values, with
/// references pointing at the restored entities.
fn check_restored(restored: &Context) {
    restored.check_invariants().unwrap();
    let all = in_creation_order(restored);
    assert_eq!(all.len(), 7, "the destroyed entity is not in the snapshot");
    for (index, &e) in all.iter().enumerate() {
        assert_eq!(restored.creation_index(e), Ok(index as u64));
    }
    let [player, orc, other, archer, squad, secret_only, orphan] = all[..] else {
        unreachable!()
    };
    assert_eq!(restored.get::<Name>(player), Ok(&Name("player".into())));
    assert_eq!(restored.unique::<Score>(), Some(&Score(42)));
    assert_eq!(restored.unique_entity::<Score>(), Some(player));
    assert_eq!(restored.get::<Velocity>(orc), Ok(&Velocity(-1.0, 0.0)));
    assert!(restored.has::<Frozen>(orc));
    assert!(!restored.has::<Frozen>(other));
    assert_eq!(Frozen::STORAGE, StorageKind::Flag);
    assert_eq!(restored.get::<Poison>(other), Ok(&Poison(3)));
    assert_eq!(Poison::STORAGE, StorageKind::Sparse);
    assert_eq!(restored.get::<Position>(other), Ok(&Position { x: 7.0, y: 2.0 }));
    // The reference names the restored orc.
    assert_eq!(restored.get::<Target>(archer), Ok(&Target(orc)));
    assert_eq!(
        restored.get::<Position>(restored.get::<Target>(archer).unwrap().0),
        Ok(&Position { x: 5.0, y: 1.0 })
    );
    assert_eq!(
        restored.get::<Squad>(squad),
        Ok(&Squad {
            members: vec![orc, other],
            leader: Some(other)
        })
    );
    // Not listed: skipped; an entity with nothing listed comes back empty.
    assert!(!restored.has::<Secret>(archer));
    assert!(restored.entity(secret_only).unwrap().is_empty());
    // A reference to an entity destroyed before the snapshot names nothing.
    let dangling = restored.get::<Target>(orphan).unwrap().0;
    assert!(!restored.is_alive(dangling));
    assert!(matches!(
        restored.get::<Position>(dangling),
        Err(Error::StaleEntity { .. })
    ));
}

fn to_json(context: &Context) -> String {
    serde_json::to_string(&context.snapshot()).unwrap()
}

fn from_json(context: &mut Context, json: &str) -> Result<(), Error> {
    context.restore(&mut serde_json::Deserializer::from_str(json), RestoreLimits::default())
}

fn to_bytes(context: &Context) -> Vec<u8> {
    postcard::to_stdvec(&context.snapshot()).unwrap()
}

fn from_bytes(context: &mut Context, bytes: &[u8]) -> Result<(), Error> {
    context.restore(&mut postcard::Deserializer::from_bytes(bytes), RestoreLimits::default())
}

#[test]
fn json_round_trip_keeps_values_flags_sparse_unique_and_references() {
    let saved = game();
    let json = to_json(&saved);
    let mut restored = Context::with_name("Game");
    from_json(&mut restored, &json).unwrap();
    check_restored(&restored);
    assert_same_values(&saved, &restored);
}

#[test]
fn postcard_round_trip_keeps_values_flags_sparse_unique_and_references() {
    let saved = game();
    let bytes = to_bytes(&saved);
    let mut restored = Context::with_name("Game");
    from_bytes(&mut restored, &bytes).unwrap();
    check_restored(&restored);
    assert_same_values(&saved, &restored);
    // `Secret` is not listed for snapshots: the diff names what was lost.
    assert_eq!(
        saved.diff::<Secret>(&restored).to_string(),
        "entity #3: Secret(7) != (no Secret)\nentity #5: Secret(9) != (no Secret)\n"
    );
}

#[test]
fn a_restored_context_snapshots_to_the_same_output() {
    let original = game();
    let json = to_json(&original);
    let mut restored = Context::new();
    from_json(&mut restored, &json).unwrap();
    assert_eq!(to_json(&restored), json);
    let bytes = to_bytes(&original);
    let mut again = Context::new();
    from_bytes(&mut again, &bytes).unwrap();
    assert_eq!(to_bytes(&again), bytes);
    assert_same_values(&original, &restored);
    assert_same_values(&restored, &again);
}

#[test]
fn the_json_form_lists_components_by_name_with_entity_positions() {
    let mut game = Context::new();
    let a = game.create_entity_with((Position { x: 1.0, y: 2.0 }, Frozen)).unwrap();
    game.create_entity_with((Target(a), Secret(1))).unwrap();
    assert_eq!(
        to_json(&game),
        r#"{"entities":2,"components":[["Frozen",[[0,null]]],["Position",[[0,{"x":1.0,"y":2.0}]]],["Target",[[1,0]]]]}"#
    );
}

#[test]
fn creation_order_is_kept_when_slots_were_reused() {
    let mut game = Context::new();
    let first: Vec<Entity> = (0..4)
        .map(|i| game.create_entity_with(Velocity(i as f32, 0.0)).unwrap())
        .collect();
    game.destroy_entity(first[1]).unwrap();
    game.destroy_entity(first[2]).unwrap();
    // These take the freed slots 2 and 1: slot order is not creation order.
    game.create_entity_with(Velocity(4.0, 0.0)).unwrap();
    game.create_entity_with(Velocity(5.0, 0.0)).unwrap();
    let order = |context: &Context| -> Vec<f32> {
        in_creation_order(context)
            .into_iter()
            .map(|e| context.get::<Velocity>(e).unwrap().0)
            .collect()
    };
    assert_eq!(order(&game), [0.0, 3.0, 4.0, 5.0]);
    let mut restored = Context::new();
    from_json(&mut restored, &to_json(&game)).unwrap();
    assert_eq!(order(&restored), [0.0, 3.0, 4.0, 5.0]);
    assert_same_values(&game, &restored);
    // Restored in slots 0..n, so slot order is creation order again.
    let by_slot: Vec<f32> = restored
        .entities()
        .map(|e| restored.get::<Velocity>(e).unwrap().0)
        .collect();
    assert_eq!(by_slot, [0.0, 3.0, 4.0, 5.0]);
}

#[test]
fn components_not_listed_are_left_out() {
    let mut game = Context::new();
    game.create_entity_with((Secret(1), Position { x: 0.0, y: 0.0 }))
        .unwrap();
    let json = to_json(&game);
    assert!(!json.contains("Secret"), "{json}");
    let mut restored = Context::new();
    from_json(&mut restored, &json).unwrap();
    let e = restored.entities().next().unwrap();
    assert_eq!(
        restored.entity(e).unwrap().component_names().collect::<Vec<_>>(),
        ["Position"]
    );
}

#[test]
fn groups_indices_and_collectors_of_the_target_see_the_restored_entities() {
    let mut target = Context::with_name("Game");
    let positioned = target.add_group(Matcher::all_of::<Position>());
    let targeting = target.add_group(Matcher::all_of::<Target>());
    let collector = target.add_collector(Matcher::all_of::<Position>().added());
    let names = target
        .add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))
        .unwrap();
    from_bytes(&mut target, &to_bytes(&game())).unwrap();
    target.check_invariants().unwrap();
    assert_same_values(&game(), &target);
    assert_eq!(target.group(positioned).unwrap().len(), 4);
    assert_eq!(target.group(targeting).unwrap().len(), 2);
    assert_eq!(target.collector(collector).unwrap().len(), 4);
    let player = target.index(names).unwrap().get("player").unwrap();
    assert_eq!(target.unique_entity::<Score>(), Some(player));
    check_restored(&target);
}

#[test]
fn a_listed_group_s_entities_follow_a_restore_and_its_undoing() {
    let mut source = Context::new();
    let a = source.create_entity_with(NetId(1)).unwrap();
    source.create_entity_with(NetId(2)).unwrap();
    source.create_entity_with((NetId(2), Target(a))).unwrap();
    let clashing = to_json(&source);
    source.destroy_entity(in_creation_order(&source)[2]).unwrap();
    let fine = to_json(&source);

    let mut target = Context::with_name("Game");
    target
        .add_index(PrimaryEntityIndex::new("NetId", |id: &NetId| id.0))
        .unwrap();
    let group = target.add_group(Matcher::all_of::<NetId>());
    // Listed while empty: the restore's creations and its undoing keep it.
    assert!(target.group(group).unwrap().entities().is_empty());
    from_json(&mut target, &clashing).unwrap_err();
    assert!(target.group(group).unwrap().entities().is_empty());
    target.check_invariants().unwrap();
    from_json(&mut target, &fine).unwrap();
    let group = target.group(group).unwrap();
    // Joined in creation order, as the restore creates them.
    assert_eq!(&*group.entities(), in_creation_order(&target));
    assert_eq!(group.entities().len(), 2);
    target.check_invariants().unwrap();
}

#[test]
fn restoring_fires_creation_events_in_creation_order() {
    let mut source = Context::new();
    let a = source.create_entity_with(Position { x: 1.0, y: 0.0 }).unwrap();
    source.create_entity_with(Target(a)).unwrap();
    let json = to_json(&source);
    let mut target = Context::new();
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = events.clone();
    target.subscribe(move |event: &ContextEvent<'_>| {
        let line = match event {
            ContextEvent::EntityCreated { .. } => "created".to_owned(),
            ContextEvent::ComponentAdded { component, .. } => format!("added {}", component.name()),
            _ => return,
        };
        seen.lock().unwrap().push(line);
    });
    from_json(&mut target, &json).unwrap();
    // Handle-holding components come after every entity is created.
    assert_eq!(
        *events.lock().unwrap(),
        ["created", "added Position", "created", "added Target"]
    );
}

#[test]
fn restoring_after_a_reset_starts_creation_indices_at_zero() {
    let json = to_json(&game());
    let mut target = Context::with_name("Game");
    from_json(&mut target, &json).unwrap();
    target.reset().unwrap();
    from_json(&mut target, &json).unwrap();
    check_restored(&target);
}

#[test]
fn restoring_into_a_context_with_entities_is_an_error_that_changes_nothing() {
    let json = to_json(&game());
    let (mut target, kept, heard) = occupied();
    let before = whole_state(&mut target);
    let err = from_json(&mut target, &json).unwrap_err();
    assert!(
        matches!(err, Error::RestoreTargetNotEmpty { entities: 1, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("`Game`"), "{err}");
    assert!(!err.to_string().contains("  "), "one space between words: {err}");
    assert_eq!(target.len(), 1);
    assert_eq!(target.get::<Position>(kept), Ok(&Position { x: 9.0, y: 9.0 }));
    assert_eq!(whole_state(&mut target), before);
    assert_eq!(*heard.lock().unwrap(), Vec::<String>::new(), "no event");
    // A destroyed entity still retained counts too.
    target.retain(kept, Owner::new()).unwrap();
    target.destroy_entity(kept).unwrap();
    let before = whole_state(&mut target);
    heard.lock().unwrap().clear();
    assert!(matches!(
        from_json(&mut target, &json),
        Err(Error::RestoreTargetNotEmpty { entities: 1, .. })
    ));
    assert_eq!(whole_state(&mut target), before);
    assert_eq!(*heard.lock().unwrap(), Vec::<String>::new(), "no event");
    target.check_invariants().unwrap();
}

/// [`refused_by`] through the registry's restore.
fn refused(json: &str, says: &str) {
    refused_by(json, says, from_json);
}

#[test]
fn bad_input_is_an_error_that_leaves_the_target_empty_and_usable() {
    let json = to_json(&game());
    refused(&json[..json.len() / 2], "EOF");
    for &(bad, says) in BAD_SNAPSHOTS {
        refused(bad, says);
    }
}

#[test]
fn every_truncation_of_binary_input_is_an_error_that_leaves_the_target_empty() {
    let bytes = to_bytes(&game());
    let mut target = Context::with_name("Game");
    let group = target.add_group(Matcher::all_of::<Position>());
    for end in 0..bytes.len() {
        let err = from_bytes(&mut target, &bytes[..end]).unwrap_err();
        assert!(matches!(err, Error::InvalidSnapshot { .. }), "at {end}: {err:?}");
        assert!(target.is_empty());
        assert_eq!(target.group(group).unwrap().len(), 0);
        target.check_invariants().unwrap();
    }
    assert_empty_and_usable(&mut target);
    from_bytes(&mut target, &bytes).unwrap();
    check_restored(&target);
}

#[test]
fn a_clash_with_a_primary_index_of_the_target_undoes_the_restore() {
    let mut source = Context::new();
    let a = source.create_entity_with(NetId(1)).unwrap();
    source.create_entity_with(NetId(2)).unwrap();
    source.create_entity_with((NetId(2), Target(a))).unwrap();
    let json = to_json(&source);
    let mut target = Context::with_name("Game");
    let ids = target
        .add_index(PrimaryEntityIndex::new("NetId", |id: &NetId| id.0))
        .unwrap();
    let group = target.add_group(Matcher::all_of::<NetId>());
    let collector = target.add_collector(Matcher::all_of::<NetId>().added());
    let err = from_json(&mut target, &json).unwrap_err();
    assert!(matches!(err, Error::DuplicatePrimaryKey { .. }), "{err:?}");
    assert_eq!(target.group(group).unwrap().len(), 0);
    assert_eq!(target.collector(collector).unwrap().len(), 0);
    assert_eq!(target.index(ids).unwrap().iter().count(), 0);
    assert_empty_and_usable(&mut target);
    // The same context takes a snapshot without the clash afterwards.
    source.destroy_entity(in_creation_order(&source)[2]).unwrap();
    from_json(&mut target, &to_json(&source)).unwrap();
    assert_eq!(target.group(group).unwrap().len(), 2);
    assert_eq!(target.index(ids).unwrap().iter().count(), 2);
}

#[test]
fn a_restore_undone_by_a_primary_key_clash_fires_no_event() {
    let mut source = Context::new();
    let a = source.create_entity_with(NetId(1)).unwrap();
    source.create_entity_with(NetId(2)).unwrap();
    source.create_entity_with((NetId(2), Target(a))).unwrap();
    let mut target = Context::with_name("Game");
    target
        .add_index(PrimaryEntityIndex::new("NetId", |id: &NetId| id.0))
        .unwrap();
    let heard = listen(&mut target);
    let err = from_json(&mut target, &to_json(&source)).unwrap_err();
    assert!(matches!(err, Error::DuplicatePrimaryKey { .. }), "{err:?}");
    assert_eq!(
        *heard.lock().unwrap(),
        Vec::<String>::new(),
        "no event, not even of entities undone"
    );
    assert_empty_and_usable(&mut target);
}

#[test]
fn a_declared_context_refuses_a_snapshot_with_components_it_does_not_accept() {
    #[derive(Debug, Serialize, Deserialize)]
    struct Key(u8);
    #[derive(Debug, Serialize, Deserialize)]
    struct Tile(u8);
    reactecs::context!(Input);
    reactecs::context!(Board);
    reactecs::component!(Input: Key);
    reactecs::component!(Board: Tile);
    reactecs::snapshot!(Key, Tile);
    let json = r#"{"entities":1,"components":[["Key",[[0,1]]]]}"#;
    let mut input = Context::of::<Input>();
    from_json(&mut input, json).unwrap();
    assert_eq!(input.len(), 1);
    let mut other = Context::of::<Input>();
    let err = from_json(&mut other, r#"{"entities":1,"components":[["Tile",[[0,1]]]]}"#).unwrap_err();
    assert!(matches!(err, Error::WrongContext { .. }), "{err:?}");
    assert!(other.is_empty());
    other.check_invariants().unwrap();
}

#[test]
fn an_entity_serializes_and_deserializes_only_inside_a_snapshot() {
    let mut game = Context::new();
    let e = game.create_entity();
    let err = serde_json::to_string(&e).unwrap_err();
    assert!(err.to_string().contains("outside a context snapshot"), "{err}");
    // Read outside a restore, a number is refused, not made a placeholder.
    for input in ["0", "4294967295"] {
        let err = serde_json::from_str::<Entity>(input).unwrap_err();
        assert!(err.to_string().contains("read outside a context snapshot"), "{err}");
        let err = postcard::from_bytes::<Entity>(&postcard::to_stdvec(&0u32).unwrap());
        assert!(err.is_err());
    }
    // A value holding a handle is refused the same way.
    assert!(serde_json::from_str::<Target>("0").is_err());
    // Inside a restore, and after it (the mark is put back), as before.
    let json = to_json(&game);
    let mut loaded = Context::new();
    from_json(&mut loaded, &json).unwrap();
    assert!(serde_json::from_str::<Entity>("0").is_err());
}

#[test]
fn a_snapshot_of_an_empty_context_restores_to_an_empty_context() {
    let json = to_json(&Context::new());
    assert_eq!(json, r#"{"entities":0,"components":[]}"#);
    let mut target = Context::new();
    from_json(&mut target, &json).unwrap();
    assert_empty_and_usable(&mut target);
}

mod first {
    #[derive(serde::Serialize, serde::Deserialize)]
    pub struct Marker(pub u8);
}

mod second {
    #[derive(serde::Serialize, serde::Deserialize)]
    pub struct Marker(pub u8);
}

use first::Marker as FirstMarker;
use second::Marker as SecondMarker;
reactecs::component!(first::Marker, second::Marker);
reactecs::snapshot!(first::Marker, second::Marker);

#[test]
fn two_listed_types_with_one_declared_name_are_refused_by_name() {
    // Declared as `first::Marker` and `second::Marker`: distinct names.
    let mut game = Context::new();
    game.create_entity_with((FirstMarker(1), SecondMarker(2))).unwrap();
    let json = to_json(&game);
    assert!(json.contains(r#"["first::Marker",[[0,1]]]"#), "{json}");
    let mut restored = Context::new();
    from_json(&mut restored, &json).unwrap();
    let e = restored.entities().next().unwrap();
    assert_eq!(restored.get::<SecondMarker>(e).unwrap().0, 2);
}

mod third {
    #[derive(serde::Serialize, serde::Deserialize)]
    pub struct Twin(pub u8);
    reactecs::component!(Twin);
    reactecs::snapshot!(Twin);
}

mod fourth {
    #[derive(serde::Serialize, serde::Deserialize)]
    pub struct Twin(pub u8);
    reactecs::component!(Twin);
    reactecs::snapshot!(Twin);
}

#[test]
fn two_listed_types_declared_with_the_same_name_cannot_be_written_or_read() {
    let mut game = Context::new();
    game.create_entity_with(third::Twin(1)).unwrap();
    let err = serde_json::to_string(&game.snapshot()).unwrap_err();
    assert!(err.to_string().contains("declared with the name `Twin`"), "{err}");
    let mut other = Context::new();
    other.create_entity_with(fourth::Twin(1)).unwrap();
    let err = serde_json::to_string(&other.snapshot()).unwrap_err();
    assert!(err.to_string().contains("declared with the name `Twin`"), "{err}");
    refused(
        r#"{"entities":1,"components":[["Twin",[[0,1]]]]}"#,
        "declared with the name `Twin`",
    );
}

/// The orders of `context`, entities named by their `Name`: `entities()`
/// with creation indices, each group's, and queries' (one over a sparse
/// component).
fn orders(context: &Context) -> Vec<String> {
    let name = |e: Entity| context.get::<Name>(e).map_or("-".to_owned(), |n| n.0.clone());
    let mut lines = vec![format!(
        "entities {:?}",
        context
            .entities()
            .map(|e| format!("{}@{}", name(e), context.creation_index(e).unwrap()))
            .collect::<Vec<_>>()
    )];
    for group in context.groups() {
        let members: Vec<String> = group.iter().map(name).collect();
        lines.push(format!("group {:?} {members:?}", group.matcher()));
    }
    let mut query = Vec::new();
    context
        .query::<(&Name, &Position)>()
        .for_each(|(n, _)| query.push(n.0.clone()));
    lines.push(format!("query (Name, Position) {query:?}"));
    let mut sparse = Vec::new();
    context
        .query::<(&Name, &Poison)>()
        .for_each(|(n, _)| sparse.push(n.0.clone()));
    lines.push(format!("query (Name, Poison) {sparse:?}"));
    lines
}

fn order_groups(context: &mut Context) {
    context.add_group(Matcher::all_of::<Position>());
    context.add_group(Matcher::all_of::<Name>().none_of::<Frozen>());
    context.add_group(Matcher::all_of::<Poison>());
    context.add_group(Matcher::all_of::<Name>());
}

/// Ten named entities, then a destroyed one, moves between archetypes,
/// a flag, a sparse component, a removal and a late entity in a reused
/// slot; with `handles`, one holds a `Target` (a `MapEntities` type).
fn history(handles: bool) -> Context {
    let mut game = Context::new();
    order_groups(&mut game);
    let e: Vec<Entity> = (0..10)
        .map(|i| {
            game.create_entity_with((Name(format!("n{i}")), Position { x: i as f32, y: 0.0 }))
                .unwrap()
        })
        .collect();
    game.add(e[2], Velocity(1.0, 0.0)).unwrap();
    game.add(e[5], Velocity(1.0, 0.0)).unwrap();
    game.destroy_entity(e[3]).unwrap();
    game.add(e[1], Frozen).unwrap();
    game.add(e[7], Poison(1)).unwrap();
    game.add(e[4], Poison(2)).unwrap();
    game.remove::<Position>(e[6]).unwrap();
    if handles {
        game.add(e[0], Target(e[9])).unwrap();
    }
    let late = game
        .create_entity_with((Name("late".into()), Velocity(0.0, 0.0)))
        .unwrap();
    game.add(late, Position { x: 0.0, y: 0.0 }).unwrap();
    game
}

/// The restored order, as the `restore` docs state it: entities in
/// creation order (indices `0..n`), in slots `0..n`; group and query
/// members archetype by archetype, archetypes in the order of their first
/// restored entity, rows in creation order (no `MapEntities` type here).
fn expected_restored_order(saved: &Context, members: impl Fn(Entity) -> bool) -> Vec<String> {
    // Archetype components (`Frozen` is a flag, `Poison` sparse: both
    // kept out of archetypes).
    let archetype = |e: Entity| -> Vec<&'static str> {
        saved
            .entity(e)
            .unwrap()
            .component_names()
            .filter(|&n| n != "Frozen" && n != "Poison")
            .collect()
    };
    let created = in_creation_order(saved);
    let mut archetypes: Vec<Vec<&'static str>> = Vec::new();
    for &e in &created {
        if !archetypes.contains(&archetype(e)) {
            archetypes.push(archetype(e));
        }
    }
    let mut members: Vec<Entity> = created.into_iter().filter(|&e| members(e)).collect();
    members.sort_by_key(|&e| archetypes.iter().position(|a| *a == archetype(e)));
    members
        .into_iter()
        .map(|e| saved.get::<Name>(e).unwrap().0.clone())
        .collect()
}

#[test]
fn order_after_a_restore_is_creation_order_not_the_order_before_saving() {
    let saved = history(false);
    let json = to_json(&saved);
    let mut restored = Context::new();
    order_groups(&mut restored);
    from_json(&mut restored, &json).unwrap();
    restored.check_invariants().unwrap();
    let diff = saved.diff::<(Name, Position, Velocity, Frozen, Poison)>(&restored);
    assert!(diff.is_empty(), "{diff}");

    // Creation order is kept, renumbered 0..n (n3 was destroyed: n4 had 4).
    let names = |c: &Context| -> Vec<String> {
        in_creation_order(c)
            .into_iter()
            .map(|e| c.get::<Name>(e).unwrap().0.clone())
            .collect()
    };
    assert_eq!(names(&restored), names(&saved));
    let before: Vec<u64> = in_creation_order(&saved)
        .into_iter()
        .map(|e| saved.creation_index(e).unwrap())
        .collect();
    assert_eq!(before, [0, 1, 2, 4, 5, 6, 7, 8, 9, 10]);
    for (rank, e) in in_creation_order(&restored).into_iter().enumerate() {
        assert_eq!(restored.creation_index(e), Ok(rank as u64));
        assert_eq!(e.index(), rank as u32, "slots 0..n");
    }
    // `entities()` is slot order: creation order after the restore, not
    // before it (`late` took n3's slot).
    let listed = |c: &Context| -> Vec<String> { c.entities().map(|e| c.get::<Name>(e).unwrap().0.clone()).collect() };
    assert_eq!(listed(&restored), names(&saved));
    assert_ne!(listed(&saved), names(&saved));

    // Groups and queries: archetypes in the order of their first restored
    // entity, rows in creation order; before saving, moves had reordered
    // rows (n9 filled n3's row, n2 and n5 moved out of theirs).
    let after = orders(&restored);
    let group_of = |i: usize| after[1 + i].clone();
    let members =
        |c: &Context, e: Entity| -> [bool; 4] { [c.has::<Position>(e), !c.has::<Frozen>(e), c.has::<Poison>(e), true] };
    for i in 0..4 {
        let expected = expected_restored_order(&saved, |e| members(&saved, e)[i]);
        assert!(
            group_of(i).ends_with(&format!("{expected:?}")),
            "{} vs {expected:?}",
            group_of(i)
        );
    }
    let expected = expected_restored_order(&saved, |e| saved.has::<Position>(e));
    assert_eq!(after[5], format!("query (Name, Position) {expected:?}"));
    assert_eq!(after[6], r#"query (Name, Poison) ["n4", "n7"]"#);
    let before = orders(&saved);
    assert_ne!(before[1], after[1], "the group order before saving is not kept");
    assert_eq!(before[6], r#"query (Name, Poison) ["n7", "n4"]"#);

    // Deterministic: groups made after the restore list the same, and a
    // snapshot of the restored context restores to the same orders again.
    let mut later = Context::new();
    from_json(&mut later, &json).unwrap();
    order_groups(&mut later);
    assert_eq!(orders(&later), after);
    let mut again = Context::new();
    order_groups(&mut again);
    from_json(&mut again, &to_json(&restored)).unwrap();
    assert_eq!(orders(&again), after);
}

#[test]
fn a_context_whose_storage_is_in_creation_order_keeps_every_order() {
    // Created with their final components, none destroyed or moved: the
    // order before saving is the restored order.
    let mut saved = Context::new();
    order_groups(&mut saved);
    for i in 0..6 {
        let name = Name(format!("n{i}"));
        match i % 3 {
            0 => saved.create_entity_with((name, Position { x: 0.0, y: 0.0 })),
            1 => saved.create_entity_with((name, Position { x: 0.0, y: 0.0 }, Frozen, Poison(1))),
            _ => saved.create_entity_with((name, Velocity(0.0, 0.0))),
        }
        .unwrap();
    }
    let mut restored = Context::new();
    order_groups(&mut restored);
    from_bytes(&mut restored, &to_bytes(&saved)).unwrap();
    assert_eq!(orders(&restored), orders(&saved));
    assert!(
        saved
            .diff::<(Name, Position, Velocity, Frozen, Poison)>(&restored)
            .is_empty()
    );
}

#[test]
fn with_mapped_handles_the_restored_order_is_still_deterministic() {
    let saved = history(true);
    let json = to_json(&saved);
    let mut restored = Context::new();
    order_groups(&mut restored);
    from_json(&mut restored, &json).unwrap();
    let after = orders(&restored);
    // Creation order, indices and slots as without handles.
    assert_eq!(
        after[0],
        r#"entities ["n0@0", "n1@1", "n2@2", "n4@3", "n5@4", "n6@5", "n7@6", "n8@7", "n9@8", "late@9"]"#
    );
    // n0's `Target` is added after every entity is created: n0 moves to an
    // archetype made last, and n9 fills its row.
    assert_eq!(
        after[4],
        r#"group AllOf(Name) ["n9", "n1", "n4", "n7", "n8", "n2", "n5", "late", "n6", "n0"]"#
    );
    let mut later = Context::new();
    from_json(&mut later, &json).unwrap();
    order_groups(&mut later);
    assert_eq!(orders(&later), after);
    let mut again = Context::new();
    order_groups(&mut again);
    from_json(&mut again, &to_json(&restored)).unwrap();
    assert_eq!(orders(&again), after);
}
