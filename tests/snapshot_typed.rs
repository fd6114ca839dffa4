//! Typed snapshots (feature `serde`): `Context::snapshot_of` writes what
//! `Context::snapshot` writes, `Context::restore_of` reads what either
//! writes and restores what `Context::restore` restores (values, flags,
//! sparse and unique components, entity references, creation order and
//! slots, several archetypes and entities without components); a column
//! of a type outside the list is read through the registry; type lists a
//! snapshot cannot hold are refused; bad input leaves the target empty and
//! usable.
#![cfg(feature = "serde")]

use std::collections::HashMap;

mod snapshot_fixture;

use reactecs::prelude::*;
use reactecs::{ContextDiff, SnapshotTuple};
use snapshot_fixture::*;

/// Every listed type `game()` holds, in no particular order.
type All = (Velocity, Target, Position, Squad, Frozen, Poison, Score, Name);

/// A game whose entities are spread over several archetypes, with rows
/// not in creation order (a removal moved one, a freed slot was reused):
/// a player holding the unique score, two orcs (one frozen, one poisoned),
/// an entity destroyed before the snapshot, an archer targeting the first
/// orc, a squad naming an entity created after it, an entity without
/// components, one with only a type not listed, a target of the destroyed
/// entity, and the entity created last (in the destroyed one's slot).
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
    let other = game
        .create_entity_with((Position { x: 7.0, y: 2.0 }, Velocity(0.0, 9.0)))
        .unwrap();
    game.add(other, Poison(3)).unwrap();
    let gone = game.create_entity_with(Position { x: 1.0, y: 1.0 }).unwrap();
    let archer = game
        .create_entity_with((Position { x: -3.0, y: 0.5 }, Velocity(2.0, 2.0), Secret(7)))
        .unwrap();
    game.add(archer, Target(orc)).unwrap();
    let squad = game
        .create_entity_with(Squad {
            members: vec![orc, other],
            leader: None,
        })
        .unwrap();
    game.create_entity();
    game.create_entity_with(Secret(9)).unwrap();
    game.create_entity_with(Target(gone)).unwrap();
    // The first orc's row moves to another archetype; the other orc's row
    // takes its place, ahead of it in creation order.
    game.remove::<Velocity>(orc).unwrap();
    game.destroy_entity(gone).unwrap();
    let last = game.create_entity_with(Velocity(3.0, 3.0)).unwrap();
    assert_eq!(last.index(), gone.index(), "the last entity reuses a slot");
    game.get_mut::<Squad>(squad).unwrap().members.push(last);
    game.get_mut::<Squad>(squad).unwrap().leader = Some(last);
    game.check_invariants().unwrap();
    game
}

/// What a context holds of the listed types, independent of its handles:
/// per entity in creation order, its components by name (but `Secret`,
/// which snapshots leave out), handles written as creation positions
/// (`dead` for a handle that names no entity).
fn describe(context: &Context) -> Vec<String> {
    let all = in_creation_order(context);
    let position: HashMap<Entity, usize> = all.iter().enumerate().map(|(p, &e)| (e, p)).collect();
    let name = |e: &Entity| position.get(e).map_or("dead".to_owned(), |p| p.to_string());
    all.iter()
        .map(|&e| {
            let view = context.entity(e).unwrap();
            let mut parts: Vec<String> = view
                .components()
                .filter(|c| c.name() != "Secret")
                .map(|c| match c.name() {
                    "Target" => format!("Target({})", name(&view.get::<Target>().unwrap().0)),
                    "Squad" => {
                        let squad = view.get::<Squad>().unwrap();
                        let members: Vec<String> = squad.members.iter().map(name).collect();
                        format!("Squad({:?}, {:?})", members, squad.leader.as_ref().map(name))
                    }
                    _ => format!("{c:?}"),
                })
                .collect();
            parts.sort();
            parts.join(" ")
        })
        .collect()
}

/// Checks that `restored` holds `game()`'s entities, values and
/// references, in creation order and in slots `0..n`.
fn check_restored(restored: &Context) {
    restored.check_invariants().unwrap();
    let all = in_creation_order(restored);
    assert_eq!(all.len(), 9, "the destroyed entity is not in the snapshot");
    for (index, &e) in all.iter().enumerate() {
        assert_eq!(restored.creation_index(e), Ok(index as u64));
        assert_eq!(e.index(), index as u32, "restored in slots 0..n, in creation order");
    }
    let [player, orc, other, archer, squad, empty, secret_only, orphan, last] = all[..] else {
        unreachable!()
    };
    assert_eq!(restored.get::<Name>(player), Ok(&Name("player".into())));
    assert_eq!(restored.unique::<Score>(), Some(&Score(42)));
    assert_eq!(restored.unique_entity::<Score>(), Some(player));
    assert!(!restored.has::<Velocity>(orc));
    assert!(restored.has::<Frozen>(orc));
    assert!(!restored.has::<Frozen>(other));
    assert_eq!(restored.get::<Velocity>(other), Ok(&Velocity(0.0, 9.0)));
    assert_eq!(restored.get::<Poison>(other), Ok(&Poison(3)));
    assert_eq!(restored.get::<Position>(archer), Ok(&Position { x: -3.0, y: 0.5 }));
    // References name the restored entities, also one created later.
    assert_eq!(restored.get::<Target>(archer), Ok(&Target(orc)));
    assert_eq!(
        restored.get::<Squad>(squad),
        Ok(&Squad {
            members: vec![orc, other, last],
            leader: Some(last)
        })
    );
    assert_eq!(restored.get::<Velocity>(last), Ok(&Velocity(3.0, 3.0)));
    // Not listed: left out; entities without listed components come back empty.
    assert!(!restored.has::<Secret>(archer));
    assert!(restored.entity(empty).unwrap().is_empty());
    assert!(restored.entity(secret_only).unwrap().is_empty());
    // A reference to an entity destroyed before the snapshot names nothing.
    let dangling = restored.get::<Target>(orphan).unwrap().0;
    assert!(!restored.is_alive(dangling));
    assert!(matches!(
        restored.get::<Position>(dangling),
        Err(Error::StaleEntity { .. })
    ));
}

fn typed_json(context: &Context) -> String {
    serde_json::to_string(&context.snapshot_of::<All>().unwrap()).unwrap()
}

fn typed_bytes(context: &Context) -> Vec<u8> {
    postcard::to_stdvec(&context.snapshot_of::<All>().unwrap()).unwrap()
}

fn restore_json_of<C: SnapshotTuple>(context: &mut Context, json: &str) -> Result<(), Error> {
    context.restore_of::<C>(&mut serde_json::Deserializer::from_str(json), RestoreLimits::default())
}

fn restore_bytes_of<C: SnapshotTuple>(context: &mut Context, bytes: &[u8]) -> Result<(), Error> {
    context.restore_of::<C>(&mut postcard::Deserializer::from_bytes(bytes), RestoreLimits::default())
}

#[test]
fn typed_json_round_trip_keeps_values_flags_sparse_unique_and_references() {
    let saved = game();
    let json = typed_json(&saved);
    let mut restored = Context::with_name("Game");
    restore_json_of::<All>(&mut restored, &json).unwrap();
    check_restored(&restored);
    assert_same_values(&saved, &restored);
}

#[test]
fn typed_postcard_round_trip_keeps_values_flags_sparse_unique_and_references() {
    let saved = game();
    let bytes = typed_bytes(&saved);
    let mut restored = Context::with_name("Game");
    restore_bytes_of::<All>(&mut restored, &bytes).unwrap();
    check_restored(&restored);
    assert_same_values(&saved, &restored);
}

#[test]
fn the_typed_writer_writes_what_the_erased_writer_writes() {
    let game = game();
    assert_eq!(typed_json(&game), serde_json::to_string(&game.snapshot()).unwrap());
    assert_eq!(typed_bytes(&game), postcard::to_stdvec(&game.snapshot()).unwrap());
    // The order of the tuple does not matter.
    type Reversed = (Name, Score, Poison, Frozen, Squad, Position, Target, Velocity);
    assert_eq!(
        postcard::to_stdvec(&game.snapshot_of::<Reversed>().unwrap()).unwrap(),
        typed_bytes(&game)
    );
}

#[test]
fn the_typed_json_form_lists_components_by_name_with_entity_positions() {
    let mut game = Context::new();
    let a = game.create_entity_with((Position { x: 1.0, y: 2.0 }, Frozen)).unwrap();
    game.create_entity_with((Target(a), Secret(1))).unwrap();
    game.create_entity();
    let json = serde_json::to_string(&game.snapshot_of::<(Target, Position, Frozen, Velocity)>().unwrap()).unwrap();
    assert_eq!(
        json,
        r#"{"entities":3,"components":[["Frozen",[[0,null]]],["Position",[[0,{"x":1.0,"y":2.0}]]],["Target",[[1,0]]]]}"#
    );
}

#[test]
fn typed_write_then_erased_read_and_erased_write_then_typed_read_give_the_same_context() {
    let game = game();
    let mut erased = Context::with_name("Game");
    erased
        .restore(
            &mut postcard::Deserializer::from_bytes(&postcard::to_stdvec(&game.snapshot()).unwrap()),
            RestoreLimits::default(),
        )
        .unwrap();
    let mut typed_then_erased = Context::with_name("Game");
    typed_then_erased
        .restore(
            &mut postcard::Deserializer::from_bytes(&typed_bytes(&game)),
            RestoreLimits::default(),
        )
        .unwrap();
    let mut erased_then_typed = Context::with_name("Game");
    restore_bytes_of::<All>(&mut erased_then_typed, &postcard::to_stdvec(&game.snapshot()).unwrap()).unwrap();
    let mut erased_then_typed_json = Context::with_name("Game");
    restore_json_of::<All>(
        &mut erased_then_typed_json,
        &serde_json::to_string(&game.snapshot()).unwrap(),
    )
    .unwrap();
    let expected = describe(&game);
    assert_eq!(describe(&erased), expected);
    assert_eq!(describe(&typed_then_erased), expected);
    assert_eq!(describe(&erased_then_typed), expected);
    assert_eq!(describe(&erased_then_typed_json), expected);
    for restored in [&erased, &typed_then_erased, &erased_then_typed, &erased_then_typed_json] {
        check_restored(restored);
        assert_same_values(&game, restored);
        assert_eq!(restored.diff::<Values>(&erased), ContextDiff::default());
        // Same slots, same creation order, same snapshot.
        assert_eq!(
            restored.entities().map(|e| e.index()).collect::<Vec<_>>(),
            erased.entities().map(|e| e.index()).collect::<Vec<_>>()
        );
        assert_eq!(typed_bytes(restored), typed_bytes(&game));
    }
}

#[test]
fn entity_references_between_entities_are_remapped() {
    let mut game = Context::new();
    // A ring: each entity targets the next, the last the first; the first
    // is created before the entity it targets.
    let ring: Vec<Entity> = (0..5).map(|_| game.create_entity()).collect();
    for (i, &e) in ring.iter().enumerate() {
        game.add(e, Target(ring[(i + 1) % ring.len()])).unwrap();
    }
    let mut restored = Context::new();
    restore_bytes_of::<Target>(
        &mut restored,
        &postcard::to_stdvec(&game.snapshot_of::<Target>().unwrap()).unwrap(),
    )
    .unwrap();
    let all = in_creation_order(&restored);
    assert_eq!(all.len(), 5);
    for (i, &e) in all.iter().enumerate() {
        assert_eq!(restored.get::<Target>(e), Ok(&Target(all[(i + 1) % all.len()])));
    }
    assert_eq!(describe(&restored), describe(&game));
}

#[test]
fn several_archetypes_and_entities_without_components_keep_creation_order_and_slots() {
    let mut game = Context::new();
    let mut made = Vec::new();
    for i in 0..40u32 {
        let f = i as f32;
        let e = match i % 5 {
            0 => game
                .create_entity_with((Position { x: f, y: 0.0 }, Velocity(f, f)))
                .unwrap(),
            1 => game.create_entity_with(Position { x: f, y: 1.0 }).unwrap(),
            2 => game.create_entity(),
            3 => game.create_entity_with((Velocity(f, 0.0), Poison(i))).unwrap(),
            _ => game.create_entity_with(Secret(u64::from(i))).unwrap(),
        };
        made.push(e);
    }
    // Rows move (removals, destructions) and slots are reused.
    for &e in made.iter().step_by(7) {
        game.destroy_entity(e).unwrap();
    }
    for &e in made.iter().skip(5).step_by(10) {
        if game.has::<Velocity>(e) {
            game.remove::<Velocity>(e).unwrap();
        }
    }
    for i in 0..6u32 {
        game.create_entity_with(Velocity(100.0 + i as f32, 0.0)).unwrap();
    }
    let expected = describe(&game);
    type Listed = (Position, Velocity, Poison);
    let bytes = postcard::to_stdvec(&game.snapshot_of::<Listed>().unwrap()).unwrap();
    assert_eq!(bytes, postcard::to_stdvec(&game.snapshot()).unwrap());
    let mut restored = Context::new();
    restore_bytes_of::<Listed>(&mut restored, &bytes).unwrap();
    restored.check_invariants().unwrap();
    assert_eq!(describe(&restored), expected);
    assert_same_values(&game, &restored);
    // `Secret` is not listed: those entities come back without components.
    assert!(game.entities().any(|e| game.has::<Secret>(e)));
    assert!(restored.entities().all(|e| !restored.has::<Secret>(e)));
    assert_eq!(restored.len(), game.len());
    let slots: Vec<u32> = restored.entities().map(|e| e.index()).collect();
    assert_eq!(slots, (0..game.len() as u32).collect::<Vec<_>>());
    for (index, e) in in_creation_order(&restored).into_iter().enumerate() {
        assert_eq!(e.index(), index as u32);
    }
}

#[test]
fn a_typed_snapshot_leaves_out_the_types_not_in_its_list() {
    let game = game();
    let json = serde_json::to_string(&game.snapshot_of::<(Position, Velocity)>().unwrap()).unwrap();
    assert!(
        !json.contains("Name") && !json.contains("Target") && !json.contains("Frozen"),
        "{json}"
    );
    let mut restored = Context::with_name("Game");
    restore_json_of::<(Position, Velocity)>(&mut restored, &json).unwrap();
    restored.check_invariants().unwrap();
    assert_eq!(restored.len(), game.len(), "every entity is kept");
    let all = in_creation_order(&restored);
    assert_eq!(
        restored.entity(all[0]).unwrap().component_names().collect::<Vec<_>>(),
        ["Position"]
    );
    assert_eq!(restored.unique_entity::<Score>(), None);
    // The listed types came through; the others did not, entity by entity.
    assert!(game.diff::<(Position, Velocity)>(&restored).is_empty());
    assert_eq!(
        game.diff::<(Name, Score)>(&restored).to_string(),
        "entity #0: Name(\"player\") != (no Name)\nentity #0: Score(42) != (no Score)\n"
    );
    // A single type is a list of one.
    let velocities = serde_json::to_string(&game.snapshot_of::<Velocity>().unwrap()).unwrap();
    assert_eq!(
        velocities,
        r#"{"entities":9,"components":[["Velocity",[[2,[0.0,9.0]],[3,[2.0,2.0]],[8,[3.0,3.0]]]]]}"#
    );
}

#[test]
fn columns_of_types_outside_the_list_are_read_through_the_registry() {
    let game = game();
    let bytes = postcard::to_stdvec(&game.snapshot()).unwrap();
    // Only two types typed: the other six columns fall back to the registry.
    let mut restored = Context::with_name("Game");
    restore_bytes_of::<(Position, Velocity)>(&mut restored, &bytes).unwrap();
    check_restored(&restored);
    assert_eq!(describe(&restored), describe(&game));
}

#[test]
fn type_lists_a_snapshot_cannot_hold_are_refused() {
    let game = game();
    let refused = |err: Error, component: &str, says: &str| match err {
        Error::SnapshotTypeRefused {
            context,
            component: named,
            reason,
        } => {
            assert_eq!(context, "Game");
            assert_eq!(named, component);
            assert!(reason.contains(says), "{reason:?} should say {says:?}");
        }
        other => panic!("expected SnapshotTypeRefused, got {other:?}"),
    };
    refused(
        game.snapshot_of::<(Position, Secret)>().err().unwrap(),
        "Secret",
        "not listed in `reactecs::snapshot!`",
    );
    refused(
        game.snapshot_of::<(Position, Velocity, Position)>().err().unwrap(),
        "Position",
        "names it twice",
    );
    let message = game.snapshot_of::<Secret>().err().unwrap().to_string();
    assert!(
        message.starts_with("component `Secret` cannot be in a typed snapshot of context `Game`"),
        "{message}"
    );
    // Restoring with such a list changes nothing, empty or not.
    let json = typed_json(&game);
    let mut target = Context::with_name("Game");
    refused(
        restore_json_of::<(Position, Secret)>(&mut target, &json).unwrap_err(),
        "Secret",
        "not listed",
    );
    assert_empty_and_usable(&mut target);
    let kept = target.create_entity_with(Velocity(1.0, 1.0)).unwrap();
    refused(
        restore_json_of::<(Velocity, Velocity)>(&mut target, &json).unwrap_err(),
        "Velocity",
        "names it twice",
    );
    assert_eq!(target.len(), 1);
    assert_eq!(target.get::<Velocity>(kept), Ok(&Velocity(1.0, 1.0)));
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
fn a_type_whose_declared_name_another_listed_type_has_is_refused() {
    let mut game = Context::with_name("Game");
    game.create_entity_with(third::Twin(1)).unwrap();
    match game.snapshot_of::<third::Twin>() {
        Err(Error::SnapshotTypeRefused { component, reason, .. }) => {
            assert_eq!(component, "Twin");
            assert!(reason.contains("same name"), "{reason}");
        }
        other => panic!("expected SnapshotTypeRefused, got {:?}", other.err()),
    }
    let mut target = Context::with_name("Game");
    let err =
        restore_json_of::<fourth::Twin>(&mut target, r#"{"entities":1,"components":[["Twin",[[0,1]]]]}"#).unwrap_err();
    assert!(matches!(err, Error::SnapshotTypeRefused { .. }), "{err:?}");
    assert_empty_and_usable(&mut target);
}

#[test]
fn restoring_into_a_context_with_entities_is_an_error_that_changes_nothing() {
    let json = typed_json(&game());
    let (mut target, kept, heard) = occupied();
    let before = whole_state(&mut target);
    let err = restore_json_of::<All>(&mut target, &json).unwrap_err();
    assert!(
        matches!(err, Error::RestoreTargetNotEmpty { entities: 1, .. }),
        "{err:?}"
    );
    assert_eq!(target.len(), 1);
    assert_eq!(target.get::<Position>(kept), Ok(&Position { x: 9.0, y: 9.0 }));
    assert_eq!(whole_state(&mut target), before);
    assert_eq!(*heard.lock().unwrap(), Vec::<String>::new(), "no event");
    target.check_invariants().unwrap();
}

#[test]
fn groups_indices_collectors_and_subscribers_of_the_target_see_the_restored_entities() {
    let bytes = typed_bytes(&game());
    let mut target = Context::with_name("Game");
    let positioned = target.add_group(Matcher::all_of::<Position>());
    let moving = target.add_group(Matcher::all_of::<Velocity>());
    let targeting = target.add_group(Matcher::all_of::<Target>());
    let collector = target.add_collector(Matcher::all_of::<Position>().added());
    let names = target
        .add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))
        .unwrap();
    let created = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = created.clone();
    target.subscribe(move |event: &ContextEvent<'_>| {
        if let ContextEvent::EntityCreated { .. } = event {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    restore_bytes_of::<All>(&mut target, &bytes).unwrap();
    target.check_invariants().unwrap();
    assert_eq!(created.load(std::sync::atomic::Ordering::Relaxed), 9);
    assert_eq!(target.group(positioned).unwrap().len(), 4);
    assert_eq!(target.group(moving).unwrap().len(), 3);
    assert_eq!(target.group(targeting).unwrap().len(), 2);
    assert_eq!(target.collector(collector).unwrap().len(), 4);
    let player = target.index(names).unwrap().get("player").unwrap();
    assert_eq!(target.unique_entity::<Score>(), Some(player));
    check_restored(&target);
}

#[test]
fn a_typed_restore_fires_creation_events_in_creation_order() {
    let mut source = Context::new();
    let a = source.create_entity_with(Position { x: 1.0, y: 0.0 }).unwrap();
    source.create_entity_with(Target(a)).unwrap();
    source
        .create_entity_with((Position { x: 2.0, y: 0.0 }, Velocity(1.0, 1.0)))
        .unwrap();
    let json = serde_json::to_string(&source.snapshot_of::<(Position, Velocity, Target)>().unwrap()).unwrap();
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
    restore_json_of::<(Position, Velocity, Target)>(&mut target, &json).unwrap();
    // Handle-holding components come after every entity is created, as
    // with `restore`.
    assert_eq!(
        *events.lock().unwrap(),
        [
            "created",
            "added Position",
            "created",
            "created",
            "added Position",
            "added Velocity",
            "added Target"
        ]
    );
}

/// [`refused_by`] through a typed restore of every type.
fn refused(json: &str, says: &str) {
    refused_by(json, says, restore_json_of::<All>);
}

#[test]
fn bad_json_is_an_error_that_leaves_the_target_empty_and_usable() {
    let json = typed_json(&game());
    refused(&json[..json.len() / 2], "EOF");
    refused(&json[..json.len() - 1], "EOF");
    // Names outside the list go to the registry, which refuses `Nope` and
    // `Secret`; the checks after reading are those of `restore`.
    for &(bad, says) in BAD_SNAPSHOTS {
        refused(bad, says);
    }
}

#[test]
fn every_truncation_of_a_typed_postcard_snapshot_is_an_error_that_leaves_the_target_empty() {
    let bytes = typed_bytes(&game());
    let mut target = Context::with_name("Game");
    let group = target.add_group(Matcher::all_of::<Position>());
    let collector = target.add_collector(Matcher::all_of::<Velocity>().added());
    for end in 0..bytes.len() {
        let err = restore_bytes_of::<All>(&mut target, &bytes[..end]).unwrap_err();
        assert!(matches!(err, Error::InvalidSnapshot { .. }), "at {end}: {err:?}");
        assert!(target.is_empty(), "at {end}");
        assert_eq!(target.group(group).unwrap().len(), 0);
        assert_eq!(target.collector(collector).unwrap().len(), 0);
        target.check_invariants().unwrap();
    }
    assert_empty_and_usable(&mut target);
    restore_bytes_of::<All>(&mut target, &bytes).unwrap();
    check_restored(&target);
}

#[test]
fn a_typed_restore_undone_by_a_primary_key_clash_fires_no_event() {
    let mut source = Context::new();
    let a = source.create_entity_with(NetId(1)).unwrap();
    source.create_entity_with(NetId(2)).unwrap();
    source.create_entity_with((NetId(2), Target(a))).unwrap();
    let bytes = postcard::to_stdvec(&source.snapshot_of::<(NetId, Target)>().unwrap()).unwrap();
    let mut target = Context::with_name("Game");
    target
        .add_index(PrimaryEntityIndex::new("NetId", |id: &NetId| id.0))
        .unwrap();
    let heard = listen(&mut target);
    let err = restore_bytes_of::<(NetId, Target)>(&mut target, &bytes).unwrap_err();
    assert!(matches!(err, Error::DuplicatePrimaryKey { .. }), "{err:?}");
    assert_eq!(
        *heard.lock().unwrap(),
        Vec::<String>::new(),
        "no event, not even of entities undone"
    );
    assert_empty_and_usable(&mut target);
}

#[test]
fn a_clash_with_a_primary_index_of_the_target_undoes_a_typed_restore() {
    let mut source = Context::new();
    let a = source.create_entity_with(NetId(1)).unwrap();
    source.create_entity_with(NetId(2)).unwrap();
    source.create_entity_with((NetId(2), Target(a))).unwrap();
    let bytes = postcard::to_stdvec(&source.snapshot_of::<(NetId, Target)>().unwrap()).unwrap();
    let mut target = Context::with_name("Game");
    let ids = target
        .add_index(PrimaryEntityIndex::new("NetId", |id: &NetId| id.0))
        .unwrap();
    let group = target.add_group(Matcher::all_of::<NetId>());
    let err = restore_bytes_of::<(NetId, Target)>(&mut target, &bytes).unwrap_err();
    assert!(matches!(err, Error::DuplicatePrimaryKey { .. }), "{err:?}");
    assert_eq!(target.group(group).unwrap().len(), 0);
    assert_eq!(target.index(ids).unwrap().iter().count(), 0);
    assert_empty_and_usable(&mut target);
    source.destroy_entity(in_creation_order(&source)[2]).unwrap();
    let bytes = postcard::to_stdvec(&source.snapshot_of::<(NetId, Target)>().unwrap()).unwrap();
    restore_bytes_of::<(NetId, Target)>(&mut target, &bytes).unwrap();
    assert_eq!(target.group(group).unwrap().len(), 2);
    assert_eq!(target.index(ids).unwrap().iter().count(), 2);
}

#[test]
fn a_typed_snapshot_of_an_empty_context_restores_to_an_empty_context() {
    let json = serde_json::to_string(&Context::new().snapshot_of::<All>().unwrap()).unwrap();
    assert_eq!(json, r#"{"entities":0,"components":[]}"#);
    let mut target = Context::new();
    restore_json_of::<All>(&mut target, &json).unwrap();
    assert_empty_and_usable(&mut target);
}

#[test]
fn an_entity_still_serializes_only_inside_a_snapshot_after_a_typed_one() {
    let game = game();
    typed_json(&game);
    let e = in_creation_order(&game)[0];
    let err = serde_json::to_string(&e).unwrap_err();
    assert!(err.to_string().contains("outside a context snapshot"), "{err}");
}

mod twelve {
    use serde::{Deserialize, Serialize};

    macro_rules! types {
        ($($name:ident),+) => {
            $(#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
            pub struct $name(pub u8);)+
            reactecs::component!($($name),+);
            reactecs::snapshot!($($name),+);
        };
    }

    types!(T01, T02, T03, T04, T05, T06, T07, T08, T09, T10, T11, T12);

    pub type Twelve = (T01, T02, T03, T04, T05, T06, T07, T08, T09, T10, T11, T12);
}

#[test]
fn a_tuple_of_twelve_types_writes_and_reads_each() {
    use twelve::*;
    let mut game = Context::new();
    game.create_entity_with((T01(1), T02(2), T03(3), T04(4), T05(5), T06(6)))
        .unwrap();
    game.create_entity_with((T07(7), T08(8), T09(9), T10(10), T11(11), T12(12)))
        .unwrap();
    game.create_entity_with((T01(21), T12(32))).unwrap();
    let bytes = postcard::to_stdvec(&game.snapshot_of::<Twelve>().unwrap()).unwrap();
    assert_eq!(bytes, postcard::to_stdvec(&game.snapshot()).unwrap());
    let mut restored = Context::new();
    restore_bytes_of::<Twelve>(&mut restored, &bytes).unwrap();
    restored.check_invariants().unwrap();
    assert_eq!(describe(&restored), describe(&game));
    let last = in_creation_order(&restored)[2];
    assert_eq!(restored.get::<T12>(last), Ok(&T12(32)));
}
