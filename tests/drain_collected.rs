//! `CollectorMut::drain`: the batch `collector` gives, read in place,
//! in the same order, each entity once, skipping entities that are gone or
//! lack the query's components, releasing what the collector held (also
//! when the visitor panics); checked against a twin context read the
//! Entitas way (`collector`, then `get` per entity, then `CollectorMut::clear`)
//! under random writes, moves, joins, leaves and deaths.

mod common;

use common::*;
use reactecs::prelude::*;

#[derive(Debug, Default)]
struct Lit;

/// A component wide enough that a chunk holds few rows, so runs of
/// changed rows meet chunk boundaries.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bulky([u64; 60]);

reactecs::component!(flag Lit, Bulky);

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

/// What the Entitas way sees: the collector's entities, each read with
/// `get`, then the collector cleared.
fn read_entitas_way(game: &mut Context, id: CollectorId) -> Vec<(Entity, f32)> {
    let entities = game.collector(id).unwrap().entities().to_vec();
    let seen = entities
        .iter()
        .filter_map(|&e| game.get::<Position>(e).ok().map(|p| (e, p.x)))
        .collect();
    game.collector_mut(id).unwrap().clear();
    seen
}

fn read_in_place(game: &mut Context, id: CollectorId) -> Vec<(Entity, f32)> {
    let mut seen = Vec::new();
    let visited = game
        .collector_mut(id)
        .unwrap()
        .drain::<(Entity, &Position)>(|(e, p)| seen.push((e, p.x)))
        .unwrap();
    assert_eq!(visited, seen.len());
    seen
}

#[test]
fn query_writes_are_visited_in_place_in_storage_order_once() {
    let mut game = Context::new();
    let es = game.create_entities_with((0..300).map(|i| (pos(i as f32),))).unwrap();
    let moved = game.add_collector(Matcher::all_of::<Position>().updated());
    game.query_mut::<&mut Position>().unwrap().for_each(|p| p.x += 1.0);
    let seen = read_in_place(&mut game, moved);
    let expected: Vec<(Entity, f32)> = es.iter().enumerate().map(|(i, &e)| (e, i as f32 + 1.0)).collect();
    assert_eq!(seen, expected);
    assert!(read_in_place(&mut game, moved).is_empty(), "drained");
    assert_eq!(game.aerc().retain_count(es[0]), Ok(0), "nothing stays retained");
    check(&game);
}

#[test]
fn scattered_writes_across_chunks_and_archetypes_are_visited_in_storage_order() {
    let mut game = Context::new();
    let plain = game.create_entities_with((0..200).map(|i| (pos(i as f32),))).unwrap();
    let bulky = game
        .create_entities_with((0..200).map(|i| (pos(i as f32), Bulky([i; 60]))))
        .unwrap();
    assert!(
        game.storage_stats().chunks > 4,
        "the bulky archetype spans several chunks"
    );
    let moved = game.add_collector(Matcher::all_of::<Position>().updated());
    // Rows 3k and runs around chunk ends, written out of order.
    let written: Vec<Entity> = bulky
        .iter()
        .chain(&plain)
        .enumerate()
        .filter(|(i, _)| i % 3 == 0 || (i % 50) > 45)
        .map(|(_, &e)| e)
        .collect();
    for &e in written.iter().rev() {
        game.get_mut::<Position>(e).unwrap().x += 0.5;
    }
    let storage_order: Vec<Entity> = plain
        .iter()
        .chain(&bulky)
        .copied()
        .filter(|e| written.contains(e))
        .collect();
    let seen = read_in_place(&mut game, moved);
    assert_eq!(seen.iter().map(|&(e, _)| e).collect::<Vec<_>>(), storage_order);
    for (e, x) in seen {
        assert_eq!(game.get::<Position>(e).unwrap().x, x);
    }
    check(&game);
}

#[test]
fn pushed_entities_come_first_then_stamped_rows_each_once() {
    let mut game = Context::new();
    let es = game.create_entities_with((0..5).map(|i| (pos(i as f32),))).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    game.get_mut::<Position>(es[4]).unwrap().x = 40.0;
    game.get_mut::<Position>(es[1]).unwrap().x = 10.0;
    let late = game.create_entity_with(pos(7.0)).unwrap();
    game.get_mut::<Position>(late).unwrap().x = 70.0;
    assert_eq!(
        read_in_place(&mut game, id),
        [(late, 70.0), (es[1], 10.0), (es[4], 40.0)]
    );
    assert_eq!(game.aerc().retain_count(late), Ok(0), "released");
    check(&game);
}

#[test]
fn entities_gone_or_lacking_the_query_are_skipped_and_released() {
    let mut game = Context::new();
    let a = game.create_entity_with(pos(1.0)).unwrap();
    let b = game
        .create_entity_with((pos(2.0), Velocity { x: 0.0, y: 0.0 }))
        .unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().updated());
    game.get_mut::<Position>(a).unwrap().x = 3.0;
    game.get_mut::<Position>(b).unwrap().x = 4.0;
    game.destroy_entity(a).unwrap(); // handed over, retained by the collector
    assert!(!game.aerc().is_enabled(a).unwrap());
    let mut seen = Vec::new();
    let visited = game
        .collector_mut(id)
        .unwrap()
        .drain::<(Entity, &Velocity)>(|(e, _)| seen.push(e))
        .unwrap();
    assert_eq!((visited, seen), (1, vec![b]));
    assert!(!game.is_alive(a), "the destroyed entity was released and freed");
    check(&game);
}

#[test]
fn a_panicking_visitor_releases_what_the_collector_held() {
    let mut game = Context::new();
    let es = game.create_entities_with((0..3).map(|i| (pos(i as f32),))).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let late = game.create_entity_with(pos(5.0)).unwrap();
    game.get_mut::<Position>(es[0]).unwrap().x = 9.0;
    assert_eq!(game.aerc().retain_count(late), Ok(1));
    assert_panics("visitor", || {
        game.collector_mut(id)
            .unwrap()
            .drain::<&Position>(|_| panic!("visitor"))
    });
    assert_eq!(game.aerc().retain_count(late), Ok(0));
    check(&game);
}

#[test]
fn draining_an_unknown_collector_is_an_error() {
    let mut game = Context::new();
    let id = game.add_collector(Matcher::all_of::<Position>().updated());
    game.collector_mut(id).unwrap().remove();
    assert!(matches!(game.collector_mut(id), Err(Error::UnknownCollector { .. })));
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Two contexts run the same random program; after each step one reads
/// its collectors the Entitas way, the other in place: they see the same
/// entities, in the same order, with the same values, and stay consistent.
#[test]
fn drain_collected_sees_what_the_entitas_way_sees_under_random_programs() {
    twins_agree(read_in_place);
}

/// As `read_in_place`, in parallel, in pieces whose lists are concatenated.
#[cfg(feature = "parallel")]
fn read_in_parallel(game: &mut Context, id: CollectorId) -> Vec<(Entity, f32)> {
    let pieces = game
        .collector_mut(id)
        .unwrap()
        .par_drain::<(Entity, &Position), _>(Vec::new, |seen, (e, p)| seen.push((e, p.x)))
        .unwrap();
    pieces.concat()
}

#[cfg(feature = "parallel")]
#[test]
fn par_drain_collected_sees_what_the_entitas_way_sees_under_random_programs() {
    twins_agree(read_in_parallel);
}

/// Runs random programs on two contexts; after some steps one reads a
/// collector the Entitas way, the other with `read`: they must agree.
fn twins_agree(read: fn(&mut Context, CollectorId) -> Vec<(Entity, f32)>) {
    for seed in 0..if cfg!(miri) { 2 } else { 40u64 } {
        let mut rng = Rng(seed * 7919 + 1);
        let mut twins = [Context::new(), Context::new()];
        let specs = || {
            [
                Matcher::all_of::<Position>().updated(),
                Matcher::all_of::<Position>().added(),
                Matcher::all_of::<(Position, Velocity)>().updated(),
                Matcher::all_of::<Position>().any_of::<Lit>().added(),
                Matcher::all_of::<Position>().none_of::<Velocity>().added_or_removed(),
            ]
        };
        let ids: Vec<Vec<CollectorId>> = twins
            .iter_mut()
            .map(|game| specs().into_iter().map(|spec| game.add_collector(spec)).collect())
            .collect();
        // Entities by creation ordinal (handles differ between contexts).
        let mut created: [Vec<Entity>; 2] = [Vec::new(), Vec::new()];
        let mut alive: Vec<usize> = Vec::new();
        for step in 0..if cfg!(miri) { 60 } else { 200 } {
            let op = rng.below(10);
            let pick = alive.get(rng.below(alive.len().max(1))).copied();
            let value = rng.below(1000) as f32;
            for (game, created) in twins.iter_mut().zip(created.iter_mut()) {
                let e = pick.map(|ordinal| created[ordinal]);
                match (op, e) {
                    (0, _) => created.push(game.create_entity_with(pos(value)).unwrap()),
                    (1, Some(e)) => game.get_mut::<Position>(e).unwrap().x = value,
                    (2, _) => game.query_mut::<&mut Position>().unwrap().for_each(|p| p.x += 1.0),
                    (3, Some(e)) => game.destroy_entity(e).unwrap(),
                    (4, Some(e)) if !game.has::<Velocity>(e) => game.add(e, Velocity { x: value, y: 0.0 }).unwrap(),
                    (4, Some(e)) => game.remove::<Velocity>(e).unwrap(),
                    (5, Some(e)) => {
                        let lit = game.has::<Lit>(e);
                        game.set_flag::<Lit>(e, !lit).unwrap()
                    }
                    (6, Some(e)) => game.modify(e, |p: &mut Position| p.x -= 1.0).unwrap(),
                    (7, Some(e)) if game.has::<Velocity>(e) => game.get_mut::<Velocity>(e).unwrap().x = value,
                    _ => {}
                }
            }
            match (op, pick) {
                (0, _) => alive.push(created[0].len() - 1),
                (3, Some(ordinal)) => alive.retain(|&o| o != ordinal),
                _ => {}
            }
            if rng.below(3) == 0 {
                let which = rng.below(specs().len());
                let [a, b] = &mut twins;
                let ordinals = |created: &[Entity], seen: Vec<(Entity, f32)>| -> Vec<(usize, f32)> {
                    seen.into_iter()
                        .map(|(e, x)| (created.iter().position(|&c| c == e).unwrap(), x))
                        .collect()
                };
                let entitas = ordinals(&created[0], read_entitas_way(a, ids[0][which]));
                let in_place = ordinals(&created[1], read(b, ids[1][which]));
                assert_eq!(in_place, entitas, "seed {seed}, step {step}, collector {which}");
            }
        }
        for game in &twins {
            game.check_invariants().unwrap();
        }
    }
}

#[cfg(feature = "parallel")]
#[test]
fn par_drain_collected_pieces_come_in_batch_order() {
    // Thousands of changed rows in three archetypes, in place and gathered:
    // the pieces, concatenated, are the sequential drain, row for row.
    let n = if cfg!(miri) { 300 } else { 6_000 };
    let build = || {
        let mut game = Context::new();
        let updated = game.add_collector(Matcher::all_of::<Position>().updated());
        let added = game.add_collector(Matcher::all_of::<Position>().added());
        game.create_entities_with((0..n).map(|i| (pos(i as f32),))).unwrap();
        game.create_entities_with((0..n / 2).map(|i| (pos(i as f32), Bulky([i as u64; 60]))))
            .unwrap();
        game.create_entities_with((0..n / 3).map(|i| (pos(i as f32), Velocity { x: 1.0, y: 0.0 })))
            .unwrap();
        game.collector_mut(added).unwrap().drain::<&Position>(|_| {}).unwrap();
        (game, updated, added)
    };
    let write = |game: &mut Context| {
        let targets: Vec<Entity> = game
            .query::<(Entity, &Position)>()
            .iter()
            .map(|(e, _)| e)
            .step_by(3)
            .collect();
        for e in targets {
            game.get_mut::<Position>(e).unwrap().y = 1.0;
        }
        game.create_entity_with(pos(-1.0)).unwrap();
    };
    let (mut sequential, s_updated, s_added) = build();
    let (mut parallel, p_updated, p_added) = build();
    write(&mut sequential);
    write(&mut parallel);
    for (s_id, p_id) in [(s_updated, p_updated), (s_added, p_added)] {
        let expected: Vec<u64> = read_in_place(&mut sequential, s_id)
            .into_iter()
            .map(|(e, _)| sequential.creation_index(e).unwrap())
            .collect();
        let got: Vec<u64> = read_in_parallel(&mut parallel, p_id)
            .into_iter()
            .map(|(e, _)| parallel.creation_index(e).unwrap())
            .collect();
        assert!(expected.len() > n / 3);
        assert_eq!(got, expected);
    }
    check(&parallel);
}

/// Drains `id` with a visitor that panics on the entity `stop`, then drains
/// again without panicking: what the two visitors were handed, in order.
fn drain_with_a_panic_at(game: &mut Context, id: CollectorId, stop: Entity) -> (Vec<Entity>, Vec<Entity>) {
    let mut first = Vec::new();
    assert_panics("visitor", || {
        game.collector_mut(id).unwrap().drain::<(Entity, &Position)>(|(e, _)| {
            first.push(e);
            assert!(e != stop, "visitor");
        })
    });
    let mut second = Vec::new();
    game.collector_mut(id)
        .unwrap()
        .drain::<(Entity, &Position)>(|(e, _)| second.push(e))
        .unwrap();
    (first, second)
}

#[test]
fn a_panicking_visitor_consumes_what_it_was_handed_and_leaves_the_rest_in_place_read() {
    let mut game = Context::new();
    let es = game.create_entities_with((0..10).map(|i| (pos(i as f32),))).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().updated());
    game.query_mut::<&mut Position>().unwrap().for_each(|p| p.x += 1.0);
    let (first, second) = drain_with_a_panic_at(&mut game, id, es[3]);
    assert_eq!(first, es[..4], "handed up to the panic, which counts as handed");
    assert_eq!(second, es[4..], "the rest, in order, once");
    for &e in &es {
        assert_eq!(game.aerc().retain_count(e), Ok(0));
    }
    assert!(game.collector(id).unwrap().is_empty());
    check(&game);
}

#[test]
fn a_panicking_visitor_consumes_what_it_was_handed_and_leaves_the_rest_gathered() {
    let mut game = Context::new();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    // Joins are pushed: the batch is gathered, and one of it lacks nothing.
    let es = game.create_entities_with((0..10).map(|i| (pos(i as f32),))).unwrap();
    game.get_mut::<Position>(es[0]).unwrap().x = 7.0;
    let (first, second) = drain_with_a_panic_at(&mut game, id, es[5]);
    assert_eq!(first, es[..6]);
    assert_eq!(second, es[6..]);
    for &e in &es {
        assert_eq!(game.aerc().retain_count(e), Ok(0));
    }
    check(&game);
}

#[cfg(feature = "parallel")]
#[test]
fn a_panicking_parallel_visitor_consumes_what_it_was_handed_and_leaves_the_rest() {
    use std::sync::Mutex;
    // In place (query writes) and gathered (joins), each large enough for
    // several pieces.
    let n = if cfg!(miri) { 300 } else { 3000 };
    for gathered in [false, true] {
        let mut game = Context::new();
        let mut es = Vec::new();
        let id = if gathered {
            let id = game.add_collector(Matcher::all_of::<Position>().added());
            es = game.create_entities_with((0..n).map(|i| (pos(i as f32),))).unwrap();
            id
        } else {
            es.extend(game.create_entities_with((0..n).map(|i| (pos(i as f32),))).unwrap());
            let id = game.add_collector(Matcher::all_of::<Position>().updated());
            game.query_mut::<&mut Position>().unwrap().for_each(|p| p.x += 1.0);
            id
        };
        let stop = es[n / 2];
        let handed = Mutex::new(Vec::new());
        assert_panics("visitor", || {
            game.collector_mut(id).unwrap().par_drain::<(Entity, &Position), _>(
                || (),
                |(), (e, _)| {
                    handed.lock().unwrap().push(e);
                    assert!(e != stop, "visitor");
                },
            )
        });
        let mut seen = handed.into_inner().unwrap();
        let rest: Vec<Entity> = game
            .collector_mut(id)
            .unwrap()
            .par_drain::<(Entity, &Position), _>(Vec::new, |piece, (e, _)| piece.push(e))
            .unwrap()
            .concat();
        // The rest comes in batch order.
        let mut in_order = rest.clone();
        in_order.sort_by_key(|e| es.iter().position(|x| x == e));
        assert_eq!(rest, in_order, "gathered: {gathered}");
        seen.extend(rest);
        seen.sort_by_key(|e| es.iter().position(|x| x == e));
        assert_eq!(seen, es, "each entity exactly once (gathered: {gathered})");
        for &e in &es {
            assert_eq!(game.aerc().retain_count(e), Ok(0));
        }
        check(&game);
    }
}
