//! Flag and sparse components: kept out of archetypes (adding or removing one
//! moves nothing), and otherwise the same as archetype components: the same
//! calls, events, groups, collectors, indices, uniques and destruction.

mod common;

use common::*;
use reactecs::prelude::*;
use reactecs::{Component, EntityIndex, Error, PrimaryEntityIndex, StorageKind};

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Burning;
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Selected;
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Target(u32);
#[derive(Debug, Default)]
struct GameOver;
/// A zero-sized component kept in archetypes.
#[derive(Debug, Default)]
struct Calm;
reactecs::component!(Calm);
#[derive(Debug)]
struct Owned(#[allow(dead_code)] Counted);
reactecs::component!(flag Burning, flag Selected, sparse Target, unique flag GameOver, sparse Owned);

#[test]
fn the_declared_kind_is_recorded() {
    assert_eq!(Burning::component_info().storage(), StorageKind::Flag);
    assert_eq!(Target::component_info().storage(), StorageKind::Sparse);
    assert_eq!(Position::component_info().storage(), StorageKind::Archetype);
    assert!(GameOver::component_info().is_unique());
    assert!(StorageKind::Flag.is_sparse() && !StorageKind::Archetype.is_sparse());
}

#[test]
fn adding_and_removing_a_flag_or_a_sparse_value_moves_nothing() {
    let mut game = Context::new();
    let e = game.create_entity_with(Position { x: 1.0, y: 2.0 }).unwrap();
    let archetypes = game.storage_stats().archetypes;
    game.add(e, Burning).unwrap();
    game.add(e, Target(7)).unwrap();
    assert_eq!(game.storage_stats().archetypes, archetypes, "no archetype for flags");
    assert_eq!(game.storage_stats().sparse_values, 2);
    assert!(game.has::<Burning>(e));
    assert!(game.entity(e).is_ok_and(|v| v.has_all::<(Position, Burning, Target)>()));
    assert!(
        game.entity(e).is_ok_and(|v| v.has_any::<(Selected, Target)>())
            && !game.entity(e).is_ok_and(|v| v.has_any::<(Selected, Velocity)>())
    );
    assert_eq!(game.get::<Target>(e), Ok(&Target(7)));
    game.get_mut::<Target>(e).unwrap().0 = 8;
    game.replace(e, Target(9)).unwrap();
    assert_eq!(game.take::<Target>(e), Ok(Target(9)));
    game.remove::<Burning>(e).unwrap();
    assert!(!game.has::<Burning>(e) && !game.has::<Target>(e));
    assert_eq!(game.get::<Position>(e), Ok(&Position { x: 1.0, y: 2.0 }));
    assert_eq!(game.storage_stats().sparse_values, 0);
    check(&game);
}

#[test]
fn misuse_is_the_same_error_whatever_the_kind() {
    let mut game = Context::new();
    let e = game.create_entity();
    game.add(e, Burning).unwrap();
    assert!(matches!(
        game.add(e, Burning),
        Err(Error::ComponentAlreadyPresent {
            component: "Burning",
            ..
        })
    ));
    assert!(matches!(
        game.remove::<Target>(e),
        Err(Error::ComponentAbsent {
            component: "Target",
            ..
        })
    ));
    assert!(matches!(game.get::<Target>(e), Err(Error::ComponentAbsent { .. })));
    assert!(matches!(
        game.modify(e, |t: &mut Target| t.0),
        Err(Error::ComponentAbsent { .. })
    ));
    game.destroy_entity(e).unwrap();
    assert!(matches!(game.add(e, Target(1)), Err(Error::StaleEntity { .. })));
    assert!(matches!(game.get::<Burning>(e), Err(Error::StaleEntity { .. })));
    assert!(matches!(
        game.set_flag::<Burning>(e, true),
        Err(Error::StaleEntity { .. })
    ));
    assert!(!game.has::<Burning>(e));
    check(&game);
}

#[test]
fn set_flag_is_idempotent_and_fires_only_on_a_change() {
    let mut game = Context::new();
    let e = game.create_entity();
    let spy = Spy::attach(&mut game);
    game.set_flag::<Burning>(e, true).unwrap();
    game.set_flag::<Burning>(e, true).unwrap();
    game.set_flag::<Burning>(e, false).unwrap();
    game.set_flag::<Burning>(e, false).unwrap();
    // Any zero-sized component works, whatever its kind.
    game.set_flag::<Calm>(e, true).unwrap();
    assert!(game.has::<Calm>(e));
    assert_eq!(
        spy.take(),
        [
            format!("added {e} Burning"),
            format!("removed {e} Burning"),
            format!("added {e} Calm")
        ]
    );
}

#[test]
fn groups_mixing_kinds_see_entities_join_and_leave_by_flag() {
    let mut game = Context::new();
    let burning_movers = game.add_group(Matcher::all_of::<(Position, Burning)>());
    let calm = game.add_group(Matcher::all_of::<Position>().none_of::<Burning>());
    let joined = game.add_collector(Matcher::all_of::<(Position, Burning)>().added());
    let left = game.add_collector(Matcher::all_of::<(Position, Burning)>().removed());
    let a = game.create_entity_with(Position { x: 0.0, y: 0.0 }).unwrap();
    let b = game.create_entity_with(Position { x: 1.0, y: 0.0 }).unwrap();
    let c = game.create_entity_with(Burning).unwrap();
    assert_eq!(game.group(burning_movers).unwrap().len(), 0);
    assert_eq!(game.group(calm).unwrap().len(), 2);

    game.add(a, Burning).unwrap();
    assert_eq!(game.collector(joined).unwrap().entities(), [a]);
    assert_eq!(game.group(burning_movers).unwrap().iter().collect::<Vec<_>>(), [a]);
    assert_eq!(game.group(calm).unwrap().iter().collect::<Vec<_>>(), [b]);
    assert!(game.group(burning_movers).unwrap().contains(a));
    assert!(!game.group(burning_movers).unwrap().contains(c), "c has no Position");

    // c joins by gaining Position (an archetype move, gated by its flag).
    game.add(c, Position { x: 2.0, y: 0.0 }).unwrap();
    assert_eq!(game.collector(joined).unwrap().entities(), [a, c]);
    assert_eq!(game.group(burning_movers).unwrap().len(), 2);
    assert_eq!(game.group(calm).unwrap().len(), 1);

    game.set_flag::<Burning>(a, false).unwrap();
    game.remove::<Position>(c).unwrap();
    assert_eq!(game.collector(left).unwrap().entities(), [a, c]);
    assert_eq!(game.group(calm).unwrap().iter().collect::<Vec<_>>(), [a, b]);
    assert!(Matcher::all_of::<Burning>().matches(&game, c));
    assert!(!Matcher::all_of::<(Position, Burning)>().matches(&game, c));
    check(&game);
}

#[test]
fn any_of_mixing_kinds_is_decided_per_entity() {
    let mut game = Context::new();
    let marked = game.add_group(Matcher::any_of::<(Velocity, Burning)>());
    let joined = game.add_collector(Matcher::any_of::<(Velocity, Burning)>().added());
    let left = game.add_collector(Matcher::any_of::<(Velocity, Burning)>().removed());
    let a = game.create_entity_with(Burning).unwrap();
    let b = game.create_entity();
    game.add(a, Velocity { x: 0.0, y: 0.0 }).unwrap(); // already a member
    game.add(b, Velocity { x: 0.0, y: 0.0 }).unwrap(); // joins
    game.add(b, Burning).unwrap(); // already a member
    game.remove::<Burning>(a).unwrap(); // still one by Velocity
    game.remove::<Velocity>(a).unwrap(); // leaves
    assert_eq!(game.collector(joined).unwrap().entities(), [a, b]);
    assert_eq!(game.collector(left).unwrap().entities(), [a]);
    assert_eq!(game.group(marked).unwrap().iter().collect::<Vec<_>>(), [b]);
    check(&game);
}

#[test]
fn a_group_of_two_flags_hears_each_change_once() {
    let mut game = Context::new();
    let both = game.add_group(Matcher::all_of::<(Burning, Selected)>());
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = log.clone();
    game.subscribe_group(both, move |event: &GroupEvent<'_>| {
        let kind = match event {
            GroupEvent::Added { .. } => "added",
            GroupEvent::Removed { .. } => "removed",
            _ => "updated",
        };
        sink.lock().unwrap().push(format!("{kind} {}", event.entity()));
    })
    .unwrap();
    let e = game.create_entity();
    game.set_flag::<Burning>(e, true).unwrap();
    game.set_flag::<Selected>(e, true).unwrap();
    game.set_flag::<Burning>(e, false).unwrap();
    game.set_flag::<Selected>(e, false).unwrap();
    assert_eq!(*log.lock().unwrap(), [format!("added {e}"), format!("removed {e}")]);
    assert!(game.group(both).unwrap().is_empty());
}

#[test]
fn a_group_handler_sees_a_sparse_value_come_and_go_with_the_entity_as_it_is_then() {
    let mut game = Context::new();
    let targeted = game.add_group(Matcher::all_of::<(Position, Target)>());
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = log.clone();
    game.subscribe_group(targeted, move |event: &GroupEvent<'_>| {
        let seen = match event {
            GroupEvent::Added { entity, .. } => format!("added {:?}", entity.get::<Target>().map(|t| t.0)),
            GroupEvent::Removed { entity, removed, .. } => format!(
                "removed {:?}, has it: {}",
                removed.and_then(|r| r.get::<Target>()).map(|t| t.0),
                entity.has::<Target>()
            ),
            _ => "updated".to_owned(),
        };
        sink.lock().unwrap().push(seen);
    })
    .unwrap();
    let e = game.create_entity_with(Position { x: 0.0, y: 0.0 }).unwrap();
    game.add(e, Target(4)).unwrap();
    assert!(
        matches!(game.add(e, Target(5)), Err(Error::ComponentAlreadyPresent { .. })),
        "present: refused, and no event"
    );
    assert_eq!(game.take::<Target>(e), Ok(Target(4)));
    assert!(
        matches!(game.take::<Target>(e), Err(Error::ComponentAbsent { .. })),
        "absent: refused, and no event"
    );
    assert_eq!(
        *log.lock().unwrap(),
        ["added Some(4)", "removed Some(4), has it: false"]
    );
    assert!(game.group(targeted).unwrap().is_empty());
    check(&game);
}

#[test]
fn a_replace_reaches_a_gated_group_only_for_its_members() {
    let mut game = Context::new();
    let hot = game.add_collector(Matcher::all_of::<(Position, Burning)>().updated());
    let targeted = game.add_collector(Matcher::all_of::<Target>().updated());
    let a = game.create_entity_with((Position { x: 0.0, y: 0.0 }, Burning)).unwrap();
    let b = game
        .create_entity_with((Position { x: 0.0, y: 0.0 }, Target(1)))
        .unwrap();
    game.replace(a, Position { x: 1.0, y: 0.0 }).unwrap();
    game.replace(b, Position { x: 1.0, y: 0.0 }).unwrap();
    game.modify(b, |p: &mut Position| p.x = 2.0).unwrap();
    game.replace(b, Target(2)).unwrap();
    game.modify(b, |t: &mut Target| t.0 += 1).unwrap();
    assert_eq!(game.collector(hot).unwrap().entities(), [a]);
    assert_eq!(game.collector(targeted).unwrap().entities(), [b]);
    assert_eq!(game.get::<Target>(b), Ok(&Target(3)));
    check(&game);
}

#[test]
fn modify_each_over_a_gated_group_changes_and_tells_its_members_only() {
    let mut game = Context::new();
    let burning = game.add_group(Matcher::all_of::<(Position, Burning)>());
    let updated = game.add_collector(Matcher::all_of::<(Position, Burning)>().updated());
    let hot = game
        .create_entity_with((Position { x: 0.0, y: 0.0 }, Velocity { x: 1.0, y: 0.0 }, Burning))
        .unwrap();
    let cold = game
        .create_entity_with((Position { x: 0.0, y: 0.0 }, Velocity { x: 1.0, y: 0.0 }))
        .unwrap();
    let visited = game
        .modify_each::<Position, &Velocity>(burning, |p, v| p.x += v.x)
        .unwrap();
    assert_eq!(visited, 1);
    assert_eq!(game.get::<Position>(hot).unwrap().x, 1.0);
    assert_eq!(game.get::<Position>(cold).unwrap().x, 0.0);
    assert_eq!(game.collector(updated).unwrap().entities(), [hot]);
    // A sparse value changed through modify_each.
    let targets = game.add_group(Matcher::all_of::<Target>());
    game.add(cold, Target(1)).unwrap();
    let visited = game.modify_each::<Target, ()>(targets, |t, ()| t.0 *= 10).unwrap();
    assert_eq!((visited, game.get::<Target>(cold)), (1, Ok(&Target(10))));
}

#[test]
fn destroying_an_entity_removes_its_flags_with_events_in_id_order() {
    let mut game = Context::new();
    let counter = Counter::default();
    let e = game
        .create_entity_with((
            Target(3),
            Position { x: 0.0, y: 0.0 },
            Burning,
            Owned(counter.make("o")),
        ))
        .unwrap();
    let group = game.add_group(Matcher::all_of::<Burning>());
    let left = game.add_collector(Matcher::all_of::<Burning>().removed());
    let spy = Spy::attach(&mut game);
    let expected: Vec<String> = game
        .entity(e)
        .unwrap()
        .components()
        .map(|c| format!("removed {e} {c:?}"))
        .collect();
    assert_eq!(expected.len(), 4);
    game.destroy_entity(e).unwrap();
    let events = spy.take();
    assert!(events[0].starts_with(&format!("will destroy {e}")));
    assert!(
        ["Burning", "Owned", "Position", "Target(3)"]
            .iter()
            .all(|c| events[0].contains(c))
    );
    assert_eq!(events[1..5], expected[..]);
    assert_eq!(events[5..], [format!("destroyed {e}")]);
    assert_eq!(game.collector(left).unwrap().entities(), [e]);
    assert!(game.group(group).unwrap().is_empty());
    game.collector_mut(left).unwrap().clear();
    assert_eq!(counter.live(), 0, "the sparse value was dropped once");
    assert_eq!(game.storage_stats().sparse_values, 0);
    // The slot is reused without the old flags.
    let next = game.create_entity();
    assert_eq!(next.index(), e.index());
    assert!(!game.has::<Burning>(next) && !game.has::<Target>(next));
    check(&game);
}

#[test]
fn a_bundle_with_flags_creates_in_one_step_with_every_event() {
    let mut game = Context::new();
    let joined = game.add_collector(Matcher::all_of::<(Position, Burning)>().added());
    let spy = Spy::attach(&mut game);
    let e = game
        .create_entity_with((Burning, Position { x: 0.0, y: 0.0 }, Target(4)))
        .unwrap();
    assert_eq!(
        spy.take(),
        [
            format!("created {e}"),
            format!("added {e} Burning"),
            format!("added {e} Position {{ x: 0.0, y: 0.0 }}"),
            format!("added {e} Target(4)"),
        ]
    );
    assert_eq!(game.collector(joined).unwrap().entities(), [e]);
    let many = game
        .create_entities_with((0..3).map(|i| (Target(i), Selected)))
        .unwrap();
    assert!(many.iter().all(|&m| game.has::<Selected>(m)));
    assert_eq!(game.get::<Target>(many[2]), Ok(&Target(2)));
    assert!(matches!(
        game.create_entity_with((Burning, Burning)),
        Err(Error::DuplicateComponent { .. })
    ));
    check(&game);
}

#[test]
fn entity_indices_key_on_sparse_components() {
    let mut game = Context::new();
    let by_target = game.add_index(EntityIndex::new("Target", |t: &Target| t.0)).unwrap();
    let unique_target = game
        .add_index(PrimaryEntityIndex::new("Targeted", |t: &Target| (t.0, 0u8)))
        .unwrap();
    let a = game.create_entity_with(Target(1)).unwrap();
    let b = game.create_entity();
    game.add(b, Target(2)).unwrap();
    assert_eq!(game.index(by_target).unwrap().get(&1), [a]);
    game.replace(b, Target(5)).unwrap();
    assert_eq!(game.index(by_target).unwrap().get(&5), [b]);
    assert!(game.index(by_target).unwrap().get(&2).is_empty());
    assert!(matches!(
        game.replace(b, Target(1)),
        Err(Error::DuplicatePrimaryKey { .. })
    ));
    assert_eq!(game.get::<Target>(b), Ok(&Target(5)), "a refused key changes nothing");
    let c = game.create_entity();
    assert!(matches!(game.add(c, Target(1)), Err(Error::DuplicatePrimaryKey { .. })));
    assert!(!game.has::<Target>(c));
    game.modify(b, |t: &mut Target| t.0 = 6).unwrap();
    assert_eq!(game.index(unique_target).unwrap().get(&(6, 0)), Some(b));
    game.remove::<Target>(a).unwrap();
    assert!(game.index(by_target).unwrap().get(&1).is_empty());
    game.destroy_entity(b).unwrap();
    assert!(game.index(by_target).unwrap().get(&6).is_empty());
    check(&game);
}

#[test]
fn a_unique_flag_has_one_holder() {
    let mut game = Context::new();
    let a = game.create_entity();
    let b = game.create_entity();
    game.set_flag::<GameOver>(a, true).unwrap();
    assert_eq!(game.unique_entity::<GameOver>(), Some(a));
    assert!(matches!(
        game.set_flag::<GameOver>(b, true),
        Err(Error::UniqueAlreadyHeld { .. })
    ));
    assert!(matches!(
        game.create_entity_with(GameOver),
        Err(Error::UniqueAlreadyHeld { .. })
    ));
    game.destroy_entity(a).unwrap();
    assert_eq!(game.unique_entity::<GameOver>(), None);
    game.set_flag::<GameOver>(b, true).unwrap();
    let _ = game.take_unique::<GameOver>().unwrap();
    let c = game.create_entity_with(GameOver).unwrap();
    assert_eq!(game.unique_entity::<GameOver>(), Some(c));
    check(&game);
}

#[test]
fn reset_and_drop_release_every_sparse_value_once() {
    let counter = Counter::default();
    let mut game = Context::new();
    let gone = game.add_collector(Matcher::all_of::<Owned>().removed());
    for i in 0..10 {
        let e = game.create_entity_with(Owned(counter.make(&i.to_string()))).unwrap();
        if i % 2 == 0 {
            game.set_flag::<Burning>(e, true).unwrap();
        }
    }
    game.reset().unwrap();
    assert_eq!(counter.live(), 0);
    assert!(game.collector(gone).unwrap().is_empty());
    let e = game.create_entity_with(Owned(counter.make("kept"))).unwrap();
    assert!(!game.has::<Burning>(e));
    drop(game);
    assert_eq!(counter.live(), 0);
}

#[test]
fn an_entity_view_and_its_debug_show_every_kind() {
    let mut game = Context::new();
    let e = game
        .create_entity_with((Position { x: 1.0, y: 0.0 }, Burning, Target(2)))
        .unwrap();
    let view = game.entity(e).unwrap();
    assert_eq!(view.len(), 3);
    assert!(view.has::<Burning>() && view.get::<Target>() == Some(&Target(2)));
    let mut names: Vec<_> = view.component_names().collect();
    let sorted = {
        let mut ids: Vec<_> = view.component_ids().collect();
        ids.sort();
        ids.iter().map(|id| id.info().unwrap().name()).collect::<Vec<_>>()
    };
    assert_eq!(names, sorted, "by increasing id, whatever the kind");
    names.sort();
    assert_eq!(names, ["Burning", "Position", "Target"]);
    assert!(format!("{view:?}").contains("Target(2)"));
    let mut view = game.entity_mut(e).unwrap();
    view.get_mut::<Target>().unwrap().0 = 3;
    assert!(view.has::<Burning>());
    assert_eq!(game.get::<Target>(e), Ok(&Target(3)));
}

#[test]
fn retained_entities_keep_their_flags_until_destroyed_and_released() {
    let mut game = Context::new();
    let collected = game.add_collector(Matcher::all_of::<Burning>().added());
    let e = game.create_entity_with(Burning).unwrap();
    game.destroy_entity(e).unwrap();
    assert!(matches!(game.aerc().is_enabled(e), Ok(false)));
    assert!(!game.has::<Burning>(e));
    let next = game.create_entity();
    assert_ne!(next.index(), e.index(), "a retained slot is not reused");
    game.collector_mut(collected).unwrap().clear();
    check(&game);
}

/// Ten entities with Position and Velocity; the even ones burning.
fn burning_world() -> (Context, Vec<Entity>) {
    let mut game = Context::new();
    let entities = game
        .create_entities_with((0..10).map(|i| (Position { x: i as f32, y: 0.0 }, Velocity { x: 1.0, y: 0.0 })))
        .unwrap();
    for &e in entities.iter().step_by(2) {
        game.set_flag::<Burning>(e, true).unwrap();
    }
    (game, entities)
}

#[test]
fn a_query_matching_a_flag_visits_the_entities_that_have_it() {
    let (mut game, entities) = burning_world();
    let burning = Matcher::all_of::<Burning>();
    let seen: Vec<Entity> = game.query::<Entity>().matching(burning.clone()).iter().collect();
    assert_eq!(seen, entities.iter().copied().step_by(2).collect::<Vec<_>>());
    assert_eq!(game.query::<&Position>().matching(burning.clone()).count(), 5);
    let calm = Matcher::all_of::<Position>().none_of::<Burning>();
    assert_eq!(game.query::<&Position>().matching(calm.clone()).count(), 5);
    // Chunk methods hand out runs of rows that pass: here runs of one.
    let mut runs = Vec::new();
    game.query_mut::<(&mut Position, &Velocity)>()
        .unwrap()
        .matching(burning.clone())
        .for_each_chunk(|(p, v)| {
            runs.push(p.len());
            for (p, v) in p.iter_mut().zip(v) {
                p.x += v.x;
            }
        });
    assert_eq!(runs, [1; 5]);
    game.query_mut::<&mut Position>()
        .unwrap()
        .matching(calm)
        .for_each(|p| p.y = 1.0);
    for (i, &e) in entities.iter().enumerate() {
        let p = game.get::<Position>(e).unwrap();
        let burning = i % 2 == 0;
        assert_eq!(p.x, i as f32 + if burning { 1.0 } else { 0.0 });
        assert_eq!(p.y, if burning { 0.0 } else { 1.0 });
    }
}

#[test]
fn a_query_in_a_gated_group_visits_its_members_only() {
    let (mut game, entities) = burning_world();
    let hot = game.add_group(Matcher::all_of::<(Position, Burning)>());
    game.set_flag::<Burning>(entities[0], false).unwrap();
    game.set_flag::<Burning>(entities[1], true).unwrap();
    let members: Vec<Entity> = game.group(hot).unwrap().iter().collect();
    let queried: Vec<Entity> = game.query::<Entity>().in_group(hot).unwrap().iter().collect();
    let mut sorted = queried.clone();
    sorted.sort();
    let mut expected = members.clone();
    expected.sort();
    assert_eq!(sorted, expected);
    assert_eq!(queried, [1, 2, 4, 6, 8].map(|i| entities[i]), "in row order");
    let mut query = game
        .query_mut::<(Entity, &mut Position)>()
        .unwrap()
        .in_group(hot)
        .unwrap();
    assert_eq!(query.count(), 5);
    let chunks: usize = query.chunks().map(|(es, _)| es.len()).sum();
    assert_eq!(chunks, 5);
    let touched: Vec<Entity> = query
        .iter()
        .map(|(e, p)| {
            p.y = 9.0;
            e
        })
        .collect();
    assert_eq!(touched, queried);
    assert_eq!(game.get::<Position>(entities[0]).unwrap().y, 0.0);
}

/// Ten entities with `Position { x: i }`; those with even `i` have
/// `Target(i)`, those divisible by three are `Burning`. Some have
/// `Velocity` too, so the query walks two archetypes; a few `Target`s are
/// removed and re-added, so the sets' entries are not in slot order.
fn targeted_world() -> (Context, Vec<Entity>) {
    let mut game = Context::new();
    let entities: Vec<Entity> = (0..10)
        .map(|i| {
            let pos = Position { x: i as f32, y: 0.0 };
            if i % 4 == 1 {
                game.create_entity_with((pos, Velocity { x: 1.0, y: 0.0 })).unwrap()
            } else {
                game.create_entity_with(pos).unwrap()
            }
        })
        .collect();
    for (i, &e) in entities.iter().enumerate() {
        if i % 2 == 0 {
            game.add(e, Target(i as u32)).unwrap();
        }
        if i % 3 == 0 {
            game.set_flag::<Burning>(e, true).unwrap();
        }
    }
    game.remove::<Target>(entities[0]).unwrap();
    game.add(entities[0], Target(0)).unwrap();
    (game, entities)
}

#[test]
fn a_query_fetches_sparse_values_of_the_entities_that_have_them() {
    let (game, entities) = targeted_world();
    let seen: Vec<(Entity, u32, f32)> = game
        .query::<(Entity, &Target, &Position)>()
        .iter()
        .map(|(e, t, p)| (e, t.0, p.x))
        .collect();
    let mut sorted = seen.clone();
    sorted.sort_by_key(|&(_, t, _)| t);
    let expected: Vec<(Entity, u32, f32)> = (0..10).step_by(2).map(|i| (entities[i], i as u32, i as f32)).collect();
    assert_eq!(sorted, expected, "every entity with a `Target`, and only those");
    assert_eq!(game.query::<&Target>().count(), 5);
    let mut each = Vec::new();
    game.query::<(&Target, Entity)>().for_each(|(t, e)| each.push((e, t.0)));
    assert_eq!(
        each,
        seen.iter().map(|&(e, t, _)| (e, t)).collect::<Vec<_>>(),
        "for_each agrees with iter"
    );
    // Optional: every entity, with or without.
    let optional: Vec<Option<u32>> = game
        .query::<(&Position, Option<&Target>)>()
        .iter()
        .filter(|(p, _)| p.x < 10.0)
        .map(|(_, t)| t.map(|t| t.0))
        .collect();
    assert_eq!(optional.len(), 10);
    assert_eq!(optional.iter().flatten().count(), 5);
    // A flag as a parameter, and mixed with a matcher and another sparse one.
    assert_eq!(game.query::<(Entity, &Burning)>().count(), 4);
    let both: Vec<u32> = game
        .query::<(&Target, &Burning)>()
        .iter()
        .map(|(t, _)| t.0)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(both, [0, 6]);
    let calm = game.query::<&Target>().matching(Matcher::none_of::<Burning>()).count();
    assert_eq!(calm, 3);
    // Chunk by chunk: a sparse parameter comes as a `SparseChunk` beside the
    // columns' slices, row for row.
    let mut rows = 0;
    game.query::<(&Position, &Target)>()
        .for_each_chunk(|(positions, targets)| {
            assert_eq!(positions.len(), targets.len());
            for ((p, t), e) in positions.iter().zip(targets.iter()).zip(targets.entities()) {
                let t = t.expect("a `&Target` query's rows have one");
                assert_eq!(p.x as u32, t.0);
                assert_eq!(game.get::<Target>(*e), Ok(t));
                rows += 1;
            }
        });
    assert_eq!(rows, 5);
}

#[test]
fn a_query_writes_sparse_values_in_place() {
    let (mut game, entities) = targeted_world();
    game.query_mut::<(&Position, &mut Target)>()
        .unwrap()
        .for_each(|(p, t)| t.0 += 100 + p.x as u32);
    for (i, &e) in entities.iter().enumerate() {
        let expected = (i % 2 == 0).then_some(Target(100 + 2 * i as u32));
        assert_eq!(game.get::<Target>(e).ok().copied(), expected);
    }
    // Optional and written, entity by entity.
    let mut query = game.query_mut::<(Entity, Option<&mut Target>)>().unwrap();
    for (_, target) in query.iter() {
        if let Some(target) = target {
            target.0 -= 100;
        }
    }
    // Chunk by chunk, with a group narrowing the query to burning entities.
    let burning = game.add_group(Matcher::all_of::<Burning>());
    game.query_mut::<&mut Target>()
        .unwrap()
        .in_group(burning)
        .unwrap()
        .for_each_chunk(|mut targets| {
            for target in targets.iter_mut() {
                target.expect("rows have one").0 = 1;
            }
        });
    for (i, &e) in entities.iter().enumerate() {
        let expected = match i {
            _ if i % 2 != 0 => None,
            _ if i % 3 == 0 => Some(Target(1)),
            _ => Some(Target(2 * i as u32)),
        };
        assert_eq!(game.get::<Target>(e).ok().copied(), expected, "entity {i}");
    }
    // A written sparse component named again is refused, as any other.
    assert!(matches!(
        game.query_mut::<(&mut Target, &Target)>().err(),
        Some(Error::QueryAliasing {
            component: "Target",
            ..
        })
    ));
    check(&game);
}

#[test]
fn an_entity_view_fetches_sparse_values_too() {
    let (mut game, entities) = targeted_world();
    let mut view = game.entity_mut(entities[2]).unwrap();
    let (pos, target, burning) = view.query::<(&mut Position, &mut Target, Option<&Burning>)>().unwrap();
    assert!(burning.is_none());
    pos.x = target.0 as f32 * 10.0;
    target.0 = 7;
    assert_eq!(game.get::<Target>(entities[2]), Ok(&Target(7)));
    assert_eq!(game.get::<Position>(entities[2]).unwrap().x, 20.0);
    let mut view = game.entity_mut(entities[1]).unwrap();
    assert!(matches!(
        view.query::<(&Position, &Target)>(),
        Err(Error::ComponentAbsent {
            component: "Target",
            ..
        })
    ));
}

#[test]
fn modify_with_and_modify_each_pass_sparse_components_too() {
    let (mut game, entities) = targeted_world();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = seen.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        if let ContextEvent::ComponentReplaced { .. } = event {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    // An archetype component changed, a sparse one and a flag read.
    game.modify_with::<Position, (&Target, Option<&Burning>), _>(entities[2], |p, (t, burning)| {
        assert!(burning.is_none());
        p.y = t.0 as f32;
    })
    .unwrap();
    assert_eq!(game.get::<Position>(entities[2]).unwrap().y, 2.0);
    // A sparse component changed, another read.
    game.modify_with::<Target, (&Position, &Burning), _>(entities[6], |t, (p, _)| t.0 += p.x as u32)
        .unwrap();
    assert_eq!(game.get::<Target>(entities[6]), Ok(&Target(12)));
    assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), 2, "each a replace");
    // Missing, and aliasing, are the usual errors.
    assert!(matches!(
        game.modify_with::<Position, &Target, _>(entities[1], |_, _| ()),
        Err(Error::ComponentAbsent {
            component: "Target",
            ..
        })
    ));
    assert!(matches!(
        game.modify_with::<Target, &Target, _>(entities[0], |_, _| ()),
        Err(Error::QueryAliasing { .. })
    ));
    // Over a group: the members with every required component.
    let all = game.add_group(Matcher::all_of::<Position>());
    let visited = game
        .modify_each::<Position, (&Target, Option<&Burning>)>(all, |p, (t, burning)| {
            p.y = if burning.is_some() { -1.0 } else { t.0 as f32 };
        })
        .unwrap();
    assert_eq!(visited, 5, "the five with a `Target`");
    for (i, &e) in entities.iter().enumerate() {
        let expected = match i {
            _ if i % 2 != 0 => 0.0,
            _ if i % 3 == 0 => -1.0,
            _ => i as f32,
        };
        assert_eq!(game.get::<Position>(e).unwrap().y, expected, "entity {i}");
    }
    check(&game);
}

#[cfg(feature = "parallel")]
#[test]
fn par_for_each_writes_sparse_values() {
    let (mut game, entities) = targeted_world();
    game.query_mut::<(&mut Target, &Position)>()
        .unwrap()
        .batch_size(1)
        .par_for_each(|(t, p)| t.0 = p.x as u32 * 3);
    for (i, &e) in entities.iter().enumerate().step_by(2) {
        assert_eq!(game.get::<Target>(e), Ok(&Target(3 * i as u32)));
    }
}

#[cfg(feature = "parallel")]
#[test]
fn par_for_each_matching_a_flag_visits_the_entities_that_have_it() {
    let (mut game, entities) = burning_world();
    game.query_mut::<&mut Position>()
        .unwrap()
        .matching(Matcher::all_of::<Burning>())
        .batch_size(2)
        .par_for_each(|p| p.y = 5.0);
    for (i, &e) in entities.iter().enumerate() {
        assert_eq!(game.get::<Position>(e).unwrap().y, if i % 2 == 0 { 5.0 } else { 0.0 });
    }
}

// Found by the model (tests/model.rs) with mixed kinds.

#[test]
fn modify_each_over_a_plain_group_tells_a_gated_group_only_of_its_members() {
    let mut game = Context::new();
    let all = game.add_group(Matcher::all_of::<Position>());
    let hot = game.add_collector(Matcher::all_of::<(Position, Burning)>().updated());
    let a = game.create_entity_with((Position { x: 0.0, y: 0.0 }, Burning)).unwrap();
    game.create_entity_with(Position { x: 0.0, y: 0.0 }).unwrap();
    let visited = game.modify_each::<Position, ()>(all, |p, ()| p.x += 1.0).unwrap();
    assert_eq!(visited, 2);
    assert_eq!(game.collector(hot).unwrap().entities(), [a]);
}

#[test]
fn an_index_added_late_files_the_members_of_a_gated_group_with_sparse_keys() {
    let mut game = Context::new();
    let a = game.create_entity_with((Target(1), Burning)).unwrap();
    let b = game.create_entity_with(Target(2)).unwrap();
    let calm = game
        .add_index(
            EntityIndex::new("Calm", |t: &Target| t.0).matching(Matcher::all_of::<Target>().none_of::<Burning>()),
        )
        .unwrap();
    assert!(game.index(calm).unwrap().get(&1).is_empty(), "{a} burns");
    assert_eq!(game.index(calm).unwrap().get(&2), [b]);
    game.set_flag::<Burning>(a, false).unwrap();
    assert_eq!(game.index(calm).unwrap().get(&1), [a]);
    check(&game);
}

#[test]
fn take_unique_keeps_a_holder_that_still_has_a_flag() {
    let mut game = Context::new();
    let holder = game.set_unique(Score(1)).unwrap();
    game.set_flag::<Burning>(holder, true).unwrap();
    assert_eq!(game.take_unique::<Score>(), Ok(Score(1)));
    assert!(game.is_alive(holder), "it still has Burning");
    let lone = game.set_unique(Score(2)).unwrap();
    game.take_unique::<Score>().unwrap();
    assert!(!game.is_alive(lone), "an emptied holder is destroyed");
}

#[test]
fn shrink_to_fit_frees_the_sparse_sets_spare_memory() {
    let mut game = Context::new();
    let entities = game.create_entities_with((0..1000).map(|i| Target(i as u32))).unwrap();
    let full = game.storage_stats().sparse_bytes;
    for &e in &entities[1..] {
        game.remove::<Target>(e).unwrap();
    }
    game.shrink_to_fit();
    let shrunk = game.storage_stats().sparse_bytes;
    assert!(shrunk < full / 10, "{shrunk} of {full} bytes");
    assert_eq!(game.get::<Target>(entities[0]), Ok(&Target(0)));
    game.add(entities[999], Target(9)).unwrap();
    assert_eq!(game.get::<Target>(entities[999]), Ok(&Target(9)));
    check(&game);
}

#[test]
fn misuse_with_listeners_is_refused_before_anything_is_told() {
    let mut game = Context::new();
    let _index = game.add_index(EntityIndex::new("Target", |t: &Target| t.0)).unwrap();
    let burning = game.add_group(Matcher::all_of::<Burning>());
    let events = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = events.clone();
    game.subscribe_group(burning, move |_: &GroupEvent<'_>| {
        seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    let spy = Spy::attach(&mut game);
    let e = game.create_entity_with((Burning, Target(1))).unwrap();
    spy.take();
    let before = events.load(std::sync::atomic::Ordering::Relaxed);
    let state = whole_state(&mut game);
    assert!(matches!(
        game.add(e, Burning),
        Err(Error::ComponentAlreadyPresent { .. })
    ));
    assert!(matches!(
        game.add(e, Target(2)),
        Err(Error::ComponentAlreadyPresent { .. })
    ));
    assert!(matches!(game.remove::<Selected>(e), Err(Error::ComponentAbsent { .. })));
    assert!(spy.take().is_empty());
    assert_eq!(events.load(std::sync::atomic::Ordering::Relaxed), before);
    assert_eq!(game.get::<Target>(e), Ok(&Target(1)));
    assert_eq!(whole_state(&mut game), state, "no entity, group or index changed");
    check(&game);
}

#[test]
fn a_collector_keeps_the_removed_value_of_a_sparse_component() {
    let mut game = Context::new();
    let lost = game.add_collector(Matcher::all_of::<Target>().removed().keep_removed::<Target>());
    let a = game.create_entity_with(Target(7)).unwrap();
    let b = game.create_entity_with((Target(8), Burning)).unwrap();
    assert_eq!(game.take::<Target>(a), Ok(Target(7)));
    game.destroy_entity(b).unwrap();
    let collector = game.collector(lost).unwrap();
    assert_eq!(collector.entities(), [a, b]);
    assert_eq!(collector.removed::<Target>().get(a), Some(&Target(7)));
    assert_eq!(collector.removed::<Target>().get(b), Some(&Target(8)));
}

#[test]
fn set_flag_is_idempotent_and_refuses_what_add_and_remove_refuse() {
    let mut game = Context::new();
    let e = game.create_entity_with(Position { x: 0.0, y: 0.0 }).unwrap();
    let burning = game.add_collector(Matcher::all_of::<Burning>().added_or_removed());
    let spy = Spy::attach(&mut game);
    game.set_flag::<Burning>(e, false).unwrap(); // already clear
    assert_eq!(spy.take(), Vec::<String>::new(), "nothing to do: no event");
    game.set_flag::<Burning>(e, true).unwrap();
    assert_eq!(spy.take().len(), 1, "one ComponentAdded");
    game.set_flag::<Burning>(e, true).unwrap(); // already set
    assert_eq!(spy.take(), Vec::<String>::new());
    assert_eq!(game.collector(burning).unwrap().entities().to_vec(), [e]);
    game.collector_mut(burning).unwrap().clear();
    game.set_flag::<Burning>(e, false).unwrap();
    game.set_flag::<Burning>(e, false).unwrap();
    assert_eq!(spy.take().len(), 1, "one ComponentRemoved");
    assert!(!game.has::<Burning>(e));
    game.destroy_entity(e).unwrap();
    // Destroyed, kept by the collector that saw it leave: refused as disabled.
    assert!(matches!(
        game.set_flag::<Burning>(e, true),
        Err(Error::EntityDisabled { .. })
    ));
    assert!(matches!(
        game.set_flag::<Burning>(e, false),
        Err(Error::EntityDisabled { .. })
    ));
    check(&game);
}
