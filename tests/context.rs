//! Context: entity lifecycle and component operations.

mod common;

use common::*;
use reactecs::{Context, Entity, Error};

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

#[test]
fn a_new_context_is_empty_and_has_its_name() {
    let game = Context::with_name("Game");
    assert_eq!(game.name(), "Game");
    assert!(game.is_empty());
    assert_eq!(game.len(), 0);
    assert_eq!(game.entities().count(), 0);
    assert_eq!(Context::new().name(), "Context");
    check(&game);
}

#[test]
fn created_entities_are_alive_counted_and_listed() {
    let mut game = Context::new();
    let a = game.create_entity();
    let b = game.create_entity();
    assert!(game.is_alive(a) && game.is_alive(b));
    assert_ne!(a, b);
    assert_eq!(game.len(), 2);
    assert_eq!(game.entities().collect::<Vec<_>>(), [a, b]);
    assert_eq!(game.creation_index(a), Ok(0));
    assert_eq!(game.creation_index(b), Ok(1));
    check(&game);
}

#[test]
fn destroyed_entity_is_stale_and_its_slot_is_reused_with_a_new_tag() {
    let mut game = Context::new();
    let a = game.create_entity();
    game.add(a, pos(1.0)).unwrap();
    game.destroy_entity(a).unwrap();
    assert!(!game.is_alive(a));
    assert_eq!(game.len(), 0);
    let b = game.create_entity();
    assert_eq!(b.index(), a.index());
    assert_ne!(b.tag(), a.tag());
    assert!(!game.is_alive(a), "the old handle never reaches the new entity");
    assert!(!game.has::<Position>(b));
    assert!(matches!(game.get::<Position>(a), Err(Error::StaleEntity { .. })));
    check(&game);
}

#[test]
fn entity_displays_as_index_v_tag() {
    let mut game = Context::new();
    let e = game.create_entity();
    assert_eq!(e.to_string(), format!("{}v{}", e.index(), e.tag()));
    let other = game.create_entity();
    assert_eq!(other.index(), e.index() + 1, "a new slot");
    assert_eq!(other.to_string(), format!("{}v{}", other.index(), other.tag()));
    // Tags are creation numbers: never zero, and one per entity made.
    assert_ne!(e.tag(), 0);
    assert_eq!(other.tag(), e.tag() + 1);
}

#[test]
fn add_get_has_and_get_mut() {
    let mut game = Context::new();
    let e = game.create_entity();
    assert!(!game.has::<Position>(e));
    game.add(e, pos(1.0)).unwrap();
    game.add(e, Name("hero".into())).unwrap();
    assert!(game.has::<Position>(e));
    assert_eq!(game.get::<Position>(e), Ok(&pos(1.0)));
    assert_eq!(game.get::<Name>(e).map(|n| n.0.as_str()), Ok("hero"));
    game.get_mut::<Position>(e).unwrap().x = 5.0;
    assert_eq!(game.get::<Position>(e), Ok(&pos(5.0)));
    check(&game);
}

#[test]
fn remove_drops_the_component_and_take_returns_it() {
    let mut game = Context::new();
    let e = game.create_entity_with((pos(1.0), Name("n".into()), Frozen)).unwrap();
    game.remove::<Position>(e).unwrap();
    assert!(!game.has::<Position>(e));
    assert_eq!(game.take::<Name>(e), Ok(Name("n".into())));
    assert!(!game.has::<Name>(e));
    assert!(game.has::<Frozen>(e));
    check(&game);
}

#[test]
fn replace_overwrites_a_present_component_and_adds_an_absent_one() {
    let mut game = Context::new();
    let e = game.create_entity();
    game.replace(e, pos(1.0)).unwrap();
    assert_eq!(game.get::<Position>(e), Ok(&pos(1.0)));
    game.replace(e, pos(2.0)).unwrap();
    assert_eq!(game.get::<Position>(e), Ok(&pos(2.0)));
    assert_eq!(
        game.entity(e).unwrap().component_names().collect::<Vec<_>>(),
        ["Position"]
    );
    check(&game);
}

#[test]
fn a_single_component_is_a_bundle_of_one() {
    let mut game = Context::new();
    let e = game.create_entity_with(pos(3.0)).unwrap();
    assert_eq!(game.get::<Position>(e), Ok(&pos(3.0)));
    assert!(game.entity(e).is_ok_and(|v| v.has_all::<Position>()));
    assert!(!game.entity(e).is_ok_and(|v| v.has_any::<Frozen>()));
    let same = game.create_entity_with((pos(4.0),)).unwrap();
    assert_eq!(
        game.storage_stats().archetypes,
        2,
        "`x` and `(x,)` land in the same archetype"
    );
    let many = game.create_entities_with((0..10).map(|i| pos(i as f32))).unwrap();
    assert_eq!(game.get::<Position>(many[9]), Ok(&pos(9.0)));
    assert!(game.is_alive(same));
    check(&game);
}

/// A flag, for bundles with a component kept out of archetypes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Lit;
reactecs::component!(flag Lit);

#[test]
fn a_batch_made_by_storage_alone_equals_entities_made_one_by_one() {
    let counter = Counter::default();
    let bundles = |counter: Counter| {
        (0..300u64).map(move |i| {
            (
                pos(i as f32),
                counter.make(&format!("c{i}")),
                Name(format!("n{i}")),
                Opaque(i),
            )
        })
    };
    // Nobody listens to `batch`: its entities go in as one batch.
    let mut batch = Context::new();
    let made = batch.create_entities_with(bundles(counter.clone())).unwrap();
    // A subscriber makes `single` create them one by one.
    let mut single = Context::new();
    let _spy = Spy::attach(&mut single);
    let one_by_one = single.create_entities_with(bundles(counter.clone())).unwrap();
    assert_eq!(counter.live(), 600, "every value moved in, none dropped");
    assert_eq!(made.len(), 300);
    assert_eq!(batch.entities().collect::<Vec<_>>(), made, "in creation order");
    for (i, (&b, &s)) in made.iter().zip(&one_by_one).enumerate() {
        assert_eq!(b.index(), s.index());
        assert_eq!(batch.creation_index(b), Ok(i as u64));
        assert_eq!(batch.get::<Position>(b), single.get::<Position>(s));
        assert_eq!(batch.get::<Name>(b), Ok(&Name(format!("n{i}"))));
        assert_eq!(batch.get::<Opaque>(b).map(|o| o.0), Ok(i as u64));
        assert_eq!(
            batch.get::<Counted>(b).map(|c| c.label.as_str()),
            Ok(format!("c{i}").as_str())
        );
    }
    check(&batch);
    // Single components, empty bundles and bundles with a flag (kept out of
    // archetypes: written row by row) are batches too.
    let positions = batch.create_entities_with((0..5).map(|i| pos(i as f32))).unwrap();
    assert_eq!(batch.get::<Position>(positions[4]), Ok(&pos(4.0)));
    let empty = batch.create_entities_with(vec![(); 3]).unwrap();
    assert!(empty.iter().all(|&e| batch.entity(e).unwrap().is_empty()));
    let lit = batch
        .create_entities_with((0..4).map(|i| (pos(i as f32), Lit)))
        .unwrap();
    assert!(
        lit.iter()
            .all(|&e| batch.has::<Lit>(e) && batch.get::<Position>(e).is_ok())
    );
    check(&batch);
    drop(batch);
    drop(single);
    assert_eq!(counter.live(), 0, "each value dropped once");
}

/// `create_entities_with_count` is `create_entities_with` without the
/// handles: the same entities (indices, creation order, values), the same
/// events in the same order, heard or not.
#[test]
fn create_entities_with_count_makes_what_create_entities_with_makes() {
    let bundles = || (0..50).map(|i| (pos(i as f32), Name(format!("n{i}"))));
    for heard in [false, true] {
        let mut listed = Context::new();
        let mut counted = Context::new();
        let spies = heard.then(|| (Spy::attach(&mut listed), Spy::attach(&mut counted)));
        listed.create_entity();
        counted.create_entity();
        let made = listed.create_entities_with(bundles()).unwrap();
        assert_eq!(counted.create_entities_with_count(bundles()), Ok(50));
        assert_eq!(counted.len(), 51);
        let counted_entities: Vec<Entity> = counted.entities().collect();
        assert_eq!(counted_entities[1..].len(), made.len());
        for (&l, &c) in made.iter().zip(&counted_entities[1..]) {
            assert_eq!(l.index(), c.index());
            assert_eq!(listed.creation_index(l), counted.creation_index(c));
            assert_eq!(listed.get::<Position>(l), counted.get::<Position>(c));
            assert_eq!(listed.get::<Name>(l), counted.get::<Name>(c));
        }
        if let Some((listed_spy, counted_spy)) = spies {
            // Entities print with their context's tag: compare indices.
            let untagged = |events: Vec<String>| -> Vec<String> {
                events
                    .iter()
                    .map(|line| {
                        line.split(' ')
                            .map(|word| match word.split_once('v') {
                                Some((index, tag))
                                    if index.bytes().all(|b| b.is_ascii_digit())
                                        && tag.bytes().all(|b| b.is_ascii_digit()) =>
                                {
                                    index
                                }
                                _ => word,
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect()
            };
            let events = untagged(listed_spy.take());
            assert_eq!(events.len(), 1 + 50 * 3, "created, then two component-added each");
            assert_eq!(untagged(counted_spy.take()), events);
        }
        // Flags go in row by row, empty bundles in one batch: counted alike.
        assert_eq!(
            counted.create_entities_with_count((0..4).map(|i| (pos(i as f32), Lit))),
            Ok(4)
        );
        assert_eq!(counted.create_entities_with_count(vec![(); 3]), Ok(3));
        assert_eq!(counted.create_entities_with_count(Vec::<Position>::new()), Ok(0));
        assert_eq!(counted.len(), 58);
        check(&listed);
        check(&counted);
    }
}

/// A unique component, for refused batches.
#[derive(Debug, PartialEq)]
struct Crown(u32);
reactecs::component!(unique Crown);

/// It refuses what `create_entities_with` refuses, and keeps what that keeps.
#[test]
fn create_entities_with_count_refuses_as_create_entities_with_does() {
    let mut game = Context::new();
    let refused = game.create_entities_with_count([(pos(0.0), pos(1.0))]);
    assert!(matches!(refused, Err(Error::DuplicateComponent { .. })), "{refused:?}");
    assert_eq!(game.len(), 0);
    let mut other = Context::new();
    let refused = other.create_entities_with_count([Crown(1), Crown(2)]);
    assert!(matches!(refused, Err(Error::UniqueAlreadyHeld { .. })), "{refused:?}");
    assert_eq!(other.len(), 1, "the entity made before the refused one stays");
    check(&game);
    check(&other);
}

#[test]
fn has_all_and_has_any() {
    let mut game = Context::new();
    let e = game
        .create_entity_with((pos(0.0), Velocity { x: 1.0, y: 1.0 }))
        .unwrap();
    assert!(game.entity(e).is_ok_and(|v| v.has_all::<(Position, Velocity)>()));
    assert!(
        !game
            .entity(e)
            .is_ok_and(|v| v.has_all::<(Position, Velocity, Frozen)>())
    );
    assert!(game.entity(e).is_ok_and(|v| v.has_any::<(Frozen, Velocity)>()));
    assert!(!game.entity(e).is_ok_and(|v| v.has_any::<(Frozen, Name)>()));
    assert!(game.entity(e).is_ok_and(|v| v.has_all::<()>()));
    assert!(!game.entity(e).is_ok_and(|v| v.has_any::<()>()));
    game.destroy_entity(e).unwrap();
    assert!(
        !game.entity(e).is_ok_and(|v| v.has_all::<()>()),
        "a dead entity has nothing"
    );
}

#[test]
fn component_ids_and_names_are_listed_in_id_order() {
    use reactecs::Component;
    let mut game = Context::new();
    let e = game
        .create_entity_with((Velocity { x: 0.0, y: 0.0 }, Frozen, pos(0.0)))
        .unwrap();
    let mut expected = vec![
        Velocity::component_id(),
        Frozen::component_id(),
        Position::component_id(),
    ];
    expected.sort();
    assert_eq!(game.entity(e).unwrap().component_ids().collect::<Vec<_>>(), expected);
    let names: Vec<_> = game.entity(e).unwrap().component_names().collect();
    let expected_names: Vec<_> = expected.iter().map(|id| id.info().unwrap().name()).collect();
    assert_eq!(names, expected_names);
    assert!(game.entity(e).is_ok_and(|v| v.has_component(Frozen::component_id())));
}

#[test]
fn debug_of_an_entity_lists_its_components() {
    let mut game = Context::new();
    let e = game.create_entity_with((pos(1.5), Opaque(3))).unwrap();
    let text = format!("{:?}", game.entity(e).unwrap());
    assert!(text.starts_with(&format!("{e} {{")), "{text}");
    assert!(text.contains("Position { x: 1.5, y: 0.0 }"), "{text}");
    assert!(
        text.contains("Opaque(..)"),
        "a type without Debug prints its name: {text}"
    );
    let view = game.entity(e).unwrap();
    assert_eq!(view.entity(), e);
    assert_eq!(view.len(), 2);
    assert_eq!(view.get::<Opaque>().map(|o| o.0), Some(3));
    assert!(view.has::<Position>() && !view.has::<Frozen>());
}

#[test]
fn destroy_all_entities_empties_the_context() {
    let mut game = Context::new();
    for i in 0..100 {
        let e = game.create_entity();
        if i % 2 == 0 {
            game.add(e, pos(i as f32)).unwrap();
        }
    }
    game.destroy_all_entities();
    assert!(game.is_empty());
    assert_eq!(game.entities().count(), 0);
    check(&game);
    let e = game.create_entity();
    assert_eq!(game.creation_index(e), Ok(100), "destroy_all keeps counting");
}

#[test]
fn reset_destroys_everything_and_restarts_creation_indices() {
    let mut game = Context::new();
    let spy = Spy::attach(&mut game);
    let a = game.create_entity_with((pos(1.0),)).unwrap();
    game.reset().unwrap();
    assert!(!game.is_alive(a));
    assert!(game.is_empty());
    spy.take();
    let b = game.create_entity();
    assert_eq!(game.creation_index(b), Ok(0));
    assert_eq!(spy.take(), [format!("created {b}")], "subscriptions survive reset");
    check(&game);
}

#[test]
fn entities_spread_over_many_chunks_keep_their_values_through_churn() {
    let mut game = Context::new();
    let n = scale(5_000);
    let entities: Vec<Entity> = (0..n)
        .map(|i| {
            game.create_entity_with((pos(i as f32), Velocity { x: i as f32, y: 0.0 }))
                .unwrap()
        })
        .collect();
    // Remove Velocity from every third, destroy every fifth, add a Name to every seventh.
    for (i, &e) in entities.iter().enumerate() {
        if i % 3 == 0 {
            game.remove::<Velocity>(e).unwrap();
        }
        if i % 5 == 0 {
            game.destroy_entity(e).unwrap();
        } else if i % 7 == 0 {
            game.add(e, Name(i.to_string())).unwrap();
        }
    }
    check(&game);
    for (i, &e) in entities.iter().enumerate() {
        assert_eq!(game.is_alive(e), i % 5 != 0);
        if i % 5 == 0 {
            continue;
        }
        assert_eq!(game.get::<Position>(e), Ok(&pos(i as f32)));
        assert_eq!(game.has::<Velocity>(e), i % 3 != 0);
        if i % 3 != 0 {
            assert_eq!(game.get::<Velocity>(e).map(|v| v.x), Ok(i as f32));
        }
        assert_eq!(
            game.get::<Name>(e).ok().map(|n| n.0.clone()),
            (i % 7 == 0).then(|| i.to_string())
        );
    }
    assert_eq!(game.len(), n - n.div_ceil(5));
}

#[test]
fn the_same_operations_give_the_same_entity_order() {
    // `entities()` runs in slot order, and destroyed slots are reused
    // last-freed first: the order that gives is stated here, and a second
    // context given the same operations agrees. Handles differ between
    // contexts (their tags are never shared); slots and creation indices
    // do not.
    struct Run {
        first: Vec<Entity>,
        second: Vec<Entity>,
        order: Vec<Entity>,
        slots: Vec<(u32, u64)>,
    }
    fn run() -> Run {
        let mut game = Context::new();
        let first: Vec<Entity> = (0..6)
            .map(|i| game.create_entity_with((pos(i as f32),)).unwrap())
            .collect();
        for i in [1, 3, 4] {
            game.destroy_entity(first[i]).unwrap();
        }
        let second: Vec<Entity> = (0..2).map(|_| game.create_entity()).collect();
        let order = game.entities().collect();
        let slots = game
            .entities()
            .map(|e| (e.index(), game.creation_index(e).unwrap()))
            .collect();
        Run {
            first,
            second,
            order,
            slots,
        }
    }
    let one = run();
    let (first, second) = (&one.first, &one.second);
    // The last slot freed (the fifth's) is taken first, then the fourth's;
    // the second's stays free.
    assert_eq!(one.order, [first[0], first[2], second[1], second[0], first[5]]);
    assert_eq!(one.slots, [(0, 0), (2, 2), (3, 7), (4, 6), (5, 5)]);
    assert_eq!(run().slots, one.slots);
}

#[test]
fn emptied_chunks_are_kept_for_reuse_until_shrink_to_fit() {
    let mut game = Context::new();
    let keep = game.create_entity_with((pos(1.0),)).unwrap();
    // Several chunks (1024 rows each for this archetype) even under Miri.
    let n = scale(10_000).max(2_100);
    let many: Vec<Entity> = (0..n).map(|_| game.create_entity_with((pos(0.0),)).unwrap()).collect();
    let full = game.storage_stats();
    assert!(full.chunks > 2);
    assert_eq!(full.bytes, full.chunks * reactecs::CHUNK_BYTES, "every chunk is 16 KiB");
    for e in many {
        game.destroy_entity(e).unwrap();
    }
    let emptied = game.storage_stats();
    assert_eq!(emptied.chunks, 1, "one chunk left for the kept entity");
    assert_eq!(emptied.spare_chunks, full.chunks - 1);
    assert_eq!(emptied.bytes, full.bytes, "nothing freed: chunks are recycled");
    // Refilling reuses them: no new allocation.
    for _ in 0..n {
        game.create_entity_with((pos(0.0),)).unwrap();
    }
    assert_eq!(game.storage_stats().bytes, full.bytes);
    game.destroy_all_entities();
    game.shrink_to_fit();
    let shrunk = game.storage_stats();
    assert_eq!((shrunk.chunks, shrunk.spare_chunks, shrunk.bytes), (0, 0, 0));
    assert!(!game.is_alive(keep));
    check(&game);
}

#[test]
fn context_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Context>();
    assert_send_sync::<reactecs::EntityRef<'static>>();
}

#[test]
fn context_can_move_to_another_thread() {
    let mut game = Context::new();
    let e = game.create_entity_with((Name("sent".into()),)).unwrap();
    let game = std::thread::spawn(move || {
        assert_eq!(game.get::<Name>(e).unwrap().0, "sent");
        game
    })
    .join()
    .unwrap();
    assert!(game.is_alive(e));
}

#[test]
fn creating_with_a_bundle_makes_only_the_bundles_archetype() {
    let mut game = Context::new();
    let before = game.storage_stats().archetypes;
    game.create_entity_with((pos(0.0), Velocity { x: 0.0, y: 0.0 }, Frozen, Name("a".into())))
        .unwrap();
    game.create_entity_with((pos(1.0), Velocity { x: 0.0, y: 0.0 }, Frozen, Name("b".into())))
        .unwrap();
    assert_eq!(game.storage_stats().archetypes, before + 1);
    // The same set in another order is the same archetype.
    game.create_entity_with((Frozen, Name("c".into()), Velocity { x: 0.0, y: 0.0 }, pos(2.0)))
        .unwrap();
    assert_eq!(game.storage_stats().archetypes, before + 1);
    check(&game);
}
