//! Typed queries: what they visit, chunk slices, optional components,
//! filters, aliasing errors, silent writes, and `modify_each`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use reactecs::prelude::*;
use reactecs::{QueryParam, ReadOnlyQueryParam};

/// A component that counts its clones (to see `modify_each` skip them).
#[derive(Debug, PartialEq)]
struct Health(u32);

static HEALTH_CLONES: AtomicUsize = AtomicUsize::new(0);

impl Clone for Health {
    fn clone(&self) -> Self {
        HEALTH_CLONES.fetch_add(1, Ordering::SeqCst);
        Health(self.0)
    }
}

reactecs::component!(Health);

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

fn vel(x: f32) -> Velocity {
    Velocity { x, y: 0.0 }
}

/// Entities in four archetypes: P, PV, PVF, V.
fn mixed(n: usize) -> (Context, Vec<Entity>) {
    let mut game = Context::new();
    let mut all = Vec::new();
    for i in 0..n {
        let x = i as f32;
        let e = match i % 4 {
            0 => game.create_entity_with(pos(x)),
            1 => game.create_entity_with((pos(x), vel(1.0))),
            2 => game.create_entity_with((pos(x), vel(2.0), Frozen)),
            _ => game.create_entity_with(vel(3.0)),
        };
        all.push(e.unwrap());
    }
    (game, all)
}

#[test]
fn a_query_visits_exactly_the_entities_with_its_components() {
    let (game, all) = mixed(scale(400));
    let mut seen: Vec<Entity> = game
        .query::<(Entity, &Position, &Velocity)>()
        .iter()
        .map(|(e, p, v)| {
            assert_eq!(game.get::<Position>(e).unwrap(), p);
            assert_eq!(game.get::<Velocity>(e).unwrap(), v);
            e
        })
        .collect();
    seen.sort();
    let mut expected: Vec<Entity> = all
        .iter()
        .copied()
        .filter(|&e| game.entity(e).is_ok_and(|v| v.has_all::<(Position, Velocity)>()))
        .collect();
    expected.sort();
    assert_eq!(seen, expected);
    assert_eq!(game.query::<(&Position, &Velocity)>().count(), expected.len());
}

#[test]
fn writes_through_query_mut_land_and_fire_no_event() {
    let (mut game, all) = mixed(scale(400));
    let spy = Spy::attach(&mut game);
    for (p, v) in game.query_mut::<(&mut Position, &Velocity)>().unwrap().iter() {
        p.x += v.x;
    }
    assert!(spy.take().is_empty(), "query writes are silent");
    for (i, &e) in all.iter().enumerate() {
        let expected = match i % 4 {
            0 => Some(i as f32),
            1 => Some(i as f32 + 1.0),
            2 => Some(i as f32 + 2.0),
            _ => None,
        };
        assert_eq!(game.get::<Position>(e).ok().map(|p| p.x), expected);
    }
}

#[test]
fn chunk_slices_cover_archetypes_spread_over_many_chunks() {
    let mut game = Context::new();
    let n = scale(20_000);
    game.create_entities_with((0..n).map(|i| (pos(i as f32), vel(1.0))))
        .unwrap();
    game.create_entities_with((0..n).map(|i| (pos(i as f32), vel(1.0), Frozen)))
        .unwrap();
    let mut chunks = 0;
    let mut rows = 0;
    game.query_mut::<(&mut Position, &Velocity, Entity)>()
        .unwrap()
        .for_each_chunk(|(p, v, e)| {
            assert_eq!(p.len(), v.len());
            assert_eq!(p.len(), e.len());
            assert!(!p.is_empty());
            for (p, v) in p.iter_mut().zip(v) {
                p.x += v.x;
            }
            chunks += 1;
            rows += p.len();
        });
    assert_eq!(rows, 2 * n);
    if !cfg!(miri) {
        assert!(
            chunks > 4,
            "{n} rows per archetype span several chunks, got {chunks} chunks"
        );
    }
    let sum: f64 = game.query::<&Position>().iter().map(|p| f64::from(p.x)).sum();
    let expected = 2.0 * ((0..n).map(|i| i as f64).sum::<f64>() + n as f64);
    assert_eq!(sum, expected);
    assert_eq!(game.query::<&Position>().chunks().map(<[_]>::len).sum::<usize>(), 2 * n);
}

#[test]
fn optional_components_are_some_where_present_and_none_elsewhere() {
    let (mut game, _) = mixed(scale(200));
    for (e, p, v) in game.query::<(Entity, &Position, Option<&Velocity>)>().iter() {
        assert_eq!(game.get::<Position>(e).unwrap(), p);
        assert_eq!(game.get::<Velocity>(e).ok(), v);
    }
    let with = game
        .query::<(&Position, Option<&Velocity>)>()
        .iter()
        .filter(|(_, v)| v.is_some())
        .count();
    assert_eq!(with, game.query::<(&Position, &Velocity)>().count());
    for (_, v) in game.query_mut::<(&Position, Option<&mut Velocity>)>().unwrap().iter() {
        if let Some(v) = v {
            v.y = 9.0;
        }
    }
    assert!(game.query::<(&Position, &Velocity)>().iter().all(|(_, v)| v.y == 9.0));
    let untouched = game.query::<&Velocity>().iter().filter(|v| v.y == 0.0).count();
    assert_eq!(untouched, game.query::<&Velocity>().count() - with);
}

#[test]
fn a_query_run_again_sees_the_archetypes_created_since() {
    // The context keeps each query type's plan between calls: a plan made
    // by one call must take in archetypes created after it, whether
    // `query_mut` updates it or `query` (which cannot) finds it out of date.
    let mut game = Context::new();
    game.create_entity_with(pos(1.0)).unwrap();
    let sum_mut = |game: &mut Context| -> f32 {
        let mut total = 0.0;
        game.query_mut::<&mut Position>().unwrap().for_each(|p| total += p.x);
        total
    };
    let sum_read = |game: &Context| -> f32 { game.query::<&Position>().iter().map(|p| p.x).sum() };
    assert_eq!(sum_mut(&mut game), 1.0);
    // `query_mut` of the read-only type makes the plan `query` uses...
    assert_eq!(game.query_mut::<&Position>().unwrap().count(), 1);
    assert_eq!(sum_read(&game), 1.0);
    // ...which a new archetype puts out of date: `query` must not trust it.
    game.create_entity_with((pos(2.0), vel(0.0))).unwrap();
    assert_eq!(sum_read(&game), 3.0);
    assert_eq!(game.query::<&Position>().count(), 2);
    assert_eq!(game.query::<(&Position, &Velocity)>().count(), 1);
    // `query_mut` brings both plans up to date.
    assert_eq!(sum_mut(&mut game), 3.0);
    assert_eq!(game.query_mut::<&Position>().unwrap().count(), 2);
    assert_eq!(sum_read(&game), 3.0);
    game.create_entity_with((pos(4.0), Frozen)).unwrap();
    game.create_entity_with(vel(8.0)).unwrap();
    assert_eq!(sum_mut(&mut game), 7.0);
    assert_eq!(sum_read(&game), 7.0);
    // A narrowed query of the same type still narrows.
    let frozen: f32 = game
        .query_mut::<&mut Position>()
        .unwrap()
        .matching(Matcher::all_of::<Frozen>())
        .iter()
        .map(|p| p.x)
        .sum();
    assert_eq!(frozen, 4.0);
    // An aliasing query type stays an error on every call.
    for _ in 0..2 {
        assert!(matches!(
            game.query_mut::<(&mut Position, &Position)>(),
            Err(Error::QueryAliasing { .. })
        ));
    }
}

#[test]
fn aliasing_queries_are_errors() {
    let mut game = Context::with_name("Game");
    game.create_entity_with((pos(1.0), vel(1.0))).unwrap();
    fn aliasing<Q: reactecs::QueryParam>(game: &mut Context) {
        match game.query_mut::<Q>() {
            Err(Error::QueryAliasing { context, component }) => {
                assert_eq!((context, component), ("Game", "Position"));
            }
            Ok(_) => panic!("{} aliases", std::any::type_name::<Q>()),
            Err(other) => panic!("unexpected {other}"),
        }
    }
    aliasing::<(&mut Position, &Position)>(&mut game);
    aliasing::<(&Position, &mut Position)>(&mut game);
    aliasing::<(&mut Position, &mut Position)>(&mut game);
    aliasing::<(&mut Position, Option<&Position>)>(&mut game);
    aliasing::<(Option<&mut Position>, &Position)>(&mut game);
    aliasing::<(&Velocity, (&mut Position, Entity), &Position)>(&mut game);
    // Reading a component twice is fine.
    assert_eq!(game.query_mut::<(&Position, &Position)>().unwrap().count(), 1);
    assert_eq!(game.query::<(&Position, &Position)>().iter().count(), 1);
    assert_eq!(game.query_mut::<(&mut Position, &Velocity)>().unwrap().count(), 1);
}

#[test]
fn matching_narrows_a_query() {
    let (game, _) = mixed(scale(400));
    let thawed = Matcher::none_of::<Frozen>();
    for (e, _) in game.query::<(Entity, &Velocity)>().matching(thawed.clone()).iter() {
        assert!(!game.has::<Frozen>(e));
    }
    let all = game.query::<&Velocity>().count();
    let frozen = game.query::<(&Velocity, &Frozen)>().count();
    assert_eq!(game.query::<&Velocity>().matching(thawed.clone()).count(), all - frozen);
}

/// A flag, to narrow queries by a per-entity check.
#[derive(Default)]
struct Marked;

reactecs::component!(flag Marked);

/// `query` narrowed by `matcher` and `group`, if given.
fn narrowed<'w, Q: ReadOnlyQueryParam>(
    query: Query<'w, Q>,
    matcher: &Option<Matcher>,
    group: Option<GroupId>,
) -> Query<'w, Q> {
    let query = match matcher {
        Some(m) => query.matching(m.clone()),
        None => query,
    };
    match group {
        Some(g) => query.in_group(g).unwrap(),
        None => query,
    }
}

/// `query` narrowed by `matcher` and `group`, if given.
fn narrowed_mut<'w, Q: QueryParam>(
    query: QueryMut<'w, Q>,
    matcher: &Option<Matcher>,
    group: Option<GroupId>,
) -> QueryMut<'w, Q> {
    let query = match matcher {
        Some(m) => query.matching(m.clone()),
        None => query,
    };
    match group {
        Some(g) => query.in_group(g).unwrap(),
        None => query,
    }
}

/// Asserts that `way` visited what `iter` did, in its order.
fn same(visited: &[Entity], by_iter: &[Entity], what: &str, way: &str) {
    let first_difference = visited.iter().zip(by_iter).position(|(a, b)| a != b);
    assert!(
        visited == by_iter,
        "{what}: {way} visited {} entities, iter {}; first difference at {first_difference:?}",
        visited.len(),
        by_iter.len()
    );
}

/// What `iter` visits, in order, is what `for_each` and `for_each_chunk`
/// visit (they take a shorter walk when nothing checks entities one by
/// one), for `Query` and `QueryMut`, whatever narrows them.
#[test]
fn for_each_and_chunks_visit_what_iter_visits_in_its_order() {
    let (mut game, all) = mixed(scale(3000));
    for &e in all.iter().step_by(3) {
        game.add(e, Marked).unwrap();
    }
    let movers = game.add_group(Matcher::all_of::<Velocity>().none_of::<Frozen>());
    let marked = game.add_group(Matcher::all_of::<(Velocity, Marked)>());
    type Q<'a> = (Entity, &'a Velocity, Option<&'a Position>);
    let narrowings: [(&str, Option<Matcher>, Option<GroupId>); 5] = [
        ("nothing", None, None),
        ("an archetype matcher", Some(Matcher::none_of::<Frozen>()), None),
        ("a matcher naming a flag", Some(Matcher::all_of::<Marked>()), None),
        ("a group", None, Some(movers)),
        ("a group naming a flag", None, Some(marked)),
    ];
    // A shared context's query finds a placed plan only once `query_mut`
    // made one: both ways are compared.
    let plans = [false, true];
    for (placed, (what, matcher, group)) in plans.into_iter().flat_map(|p| narrowings.clone().map(|n| (p, n))) {
        if placed {
            game.query_mut::<Q<'_>>().unwrap();
        }
        let what = format!("{what}, plan placed: {placed}");
        let query = narrowed(game.query::<Q<'_>>(), &matcher, group);
        let by_iter: Vec<Entity> = query.iter().map(|(e, ..)| e).collect();
        assert!(!by_iter.is_empty(), "{what}: visits some");
        let mut by_for_each = Vec::new();
        query.for_each(|(e, ..)| by_for_each.push(e));
        let mut by_chunk: Vec<Entity> = Vec::new();
        query.for_each_chunk(|(entities, ..)| by_chunk.extend(entities.iter()));
        same(&by_for_each, &by_iter, &what, "Query::for_each");
        same(&by_chunk, &by_iter, &what, "Query::for_each_chunk");

        let mut written = Vec::new();
        narrowed_mut(game.query_mut::<(Entity, &mut Velocity)>().unwrap(), &matcher, group).for_each(|(e, v)| {
            v.x += 1.0;
            written.push(e);
        });
        same(&written, &by_iter, &what, "QueryMut::for_each");
        let mut chunked: Vec<Entity> = Vec::new();
        narrowed_mut(game.query_mut::<(Entity, &mut Velocity)>().unwrap(), &matcher, group)
            .for_each_chunk(|(entities, _)| chunked.extend(entities.iter()));
        same(&chunked, &by_iter, &what, "QueryMut::for_each_chunk");
        let by_iter_mut: Vec<Entity> =
            narrowed_mut(game.query_mut::<(Entity, &mut Velocity)>().unwrap(), &matcher, group)
                .iter()
                .map(|(e, _)| e)
                .collect();
        same(&by_iter_mut, &by_iter, &what, "QueryMut::iter");
    }
}

#[test]
fn a_query_in_a_group_visits_its_members_in_group_order() {
    let (mut game, _) = mixed(scale(400));
    let movers = game.add_group(Matcher::all_of::<Velocity>().none_of::<Frozen>());
    let from_query: Vec<Entity> = game
        .query::<(Entity, Option<&Position>)>()
        .in_group(movers)
        .unwrap()
        .iter()
        .map(|(e, _)| e)
        .collect();
    let from_group: Vec<Entity> = game.group(movers).unwrap().iter().collect();
    assert_eq!(from_query, from_group);
    let mut n = 0;
    game.query_mut::<&mut Velocity>()
        .unwrap()
        .in_group(movers)
        .unwrap()
        .for_each(|v| {
            v.x = 0.0;
            n += 1;
        });
    assert_eq!(n, from_group.len());
}

#[test]
fn a_group_of_another_context_is_an_error_in_a_query() {
    let mut other = Context::new();
    let foreign = other.add_group(Matcher::all_of::<Position>());
    let mut game = Context::with_name("Game");
    assert!(matches!(
        game.query::<&Position>().in_group(foreign),
        Err(Error::UnknownGroup { context: "Game", .. })
    ));
    assert!(matches!(
        game.query_mut::<&mut Position>().unwrap().in_group(foreign),
        Err(Error::UnknownGroup { .. })
    ));
    assert!(matches!(
        game.modify_each::<Position, ()>(foreign, |_, ()| {}),
        Err(Error::UnknownGroup { .. })
    ));
}

#[test]
fn a_query_over_an_empty_context_or_missing_component_yields_nothing() {
    let mut game = Context::new();
    assert_eq!(game.query::<&Position>().iter().count(), 0);
    game.create_entity_with(vel(1.0)).unwrap();
    let e = game.create_entity_with(pos(1.0)).unwrap();
    game.destroy_entity(e).unwrap(); // an empty archetype
    assert_eq!(game.query::<&Position>().iter().count(), 0);
    assert_eq!(game.query_mut::<&mut Position>().unwrap().chunks().count(), 0);
    assert_eq!(game.query::<Entity>().iter().count(), 1);
}

#[test]
fn modify_each_fires_replaced_with_old_and_new_values() {
    let mut game = Context::new();
    let a = game.create_entity_with((pos(1.0), vel(10.0))).unwrap();
    let b = game.create_entity_with((pos(2.0), vel(20.0), Frozen)).unwrap();
    game.create_entity_with(pos(3.0)).unwrap();
    let movers = game.add_group(Matcher::all_of::<(Position, Velocity)>());
    let spy = Spy::attach(&mut game);
    let visited = game
        .modify_each::<Position, (Entity, &Velocity)>(movers, |p, (_, v)| p.x += v.x)
        .unwrap();
    assert_eq!(visited, 2);
    assert_eq!(
        spy.take(),
        [
            format!("replaced {a} Position {{ x: 1.0, y: 0.0 }} -> Position {{ x: 11.0, y: 0.0 }}"),
            format!("replaced {b} Position {{ x: 2.0, y: 0.0 }} -> Position {{ x: 22.0, y: 0.0 }}"),
        ]
    );
    check(&game);
}

#[test]
fn modify_each_reading_the_component_it_writes_is_an_error() {
    let mut game = Context::new();
    game.create_entity_with(pos(1.0)).unwrap();
    let g = game.add_group(Matcher::all_of::<Position>());
    assert!(matches!(
        game.modify_each::<Position, &Position>(g, |_, _| {}),
        Err(Error::QueryAliasing {
            component: "Position",
            ..
        })
    ));
    assert_eq!(game.get::<Position>(game.entities().next().unwrap()).unwrap().x, 1.0);
}

#[test]
fn modify_each_clones_nothing_when_nobody_listens() {
    let mut game = Context::new();
    game.create_entities_with((0..scale(100)).map(|i| Health(i as u32)))
        .unwrap();
    let g = game.add_group(Matcher::all_of::<Health>());
    let before = HEALTH_CLONES.load(Ordering::SeqCst);
    assert_eq!(game.modify_each::<Health, ()>(g, |h, ()| h.0 += 1).unwrap(), scale(100));
    assert_eq!(HEALTH_CLONES.load(Ordering::SeqCst), before);
    let replaced = Arc::new(AtomicUsize::new(0));
    let count = replaced.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        if let ContextEvent::ComponentReplaced { old, new, .. } = event {
            assert_eq!(old.get::<Health>().unwrap().0 + 1, new.get::<Health>().unwrap().0);
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    game.modify_each::<Health, ()>(g, |h, ()| h.0 += 1).unwrap();
    assert_eq!(replaced.load(Ordering::SeqCst), scale(100));
}

#[cfg(feature = "parallel")]
#[test]
fn par_for_each_does_the_same_work_as_for_each() {
    // Two contexts built alike (four archetypes, several chunks): one
    // written by `for_each` and `for_each_chunk`, the other by their
    // parallel twins; every entity must end the same in both.
    fn state(game: &Context) -> Vec<(Option<Position>, Option<Velocity>)> {
        game.entities()
            .map(|e| {
                (
                    game.get::<Position>(e).ok().copied(),
                    game.get::<Velocity>(e).ok().copied(),
                )
            })
            .collect()
    }
    let n = scale(20_000);
    let (mut sequential, _) = mixed(n);
    let (mut parallel, _) = mixed(n);
    let before = state(&sequential);
    assert_eq!(state(&parallel), before);

    sequential
        .query_mut::<(&mut Position, &Velocity)>()
        .unwrap()
        .for_each(|(p, v)| p.x += v.x);
    sequential
        .query_mut::<(&mut Velocity,)>()
        .unwrap()
        .for_each_chunk(|(v,)| v.iter_mut().for_each(|v| v.y = v.x + 1.0));
    parallel
        .query_mut::<(&mut Position, &Velocity)>()
        .unwrap()
        .par_for_each(|(p, v)| p.x += v.x);
    parallel
        .query_mut::<(&mut Velocity,)>()
        .unwrap()
        .par_for_each_chunk(|(v,)| v.iter_mut().for_each(|v| v.y = v.x + 1.0));

    let after = state(&sequential);
    assert_eq!(state(&parallel), after);
    // And that work is the one asked for, on exactly the rows asked for.
    for ((p0, v0), (p1, v1)) in before.iter().zip(&after) {
        match (p0, v0) {
            (Some(p0), Some(v0)) => assert_eq!(p1.unwrap().x, p0.x + v0.x),
            _ => assert_eq!(p1, p0),
        }
        assert_eq!(v1.map(|v| v.y), v0.map(|v| v.x + 1.0));
    }
}

#[cfg(feature = "parallel")]
#[test]
fn par_for_each_writes_are_collected_like_sequential_ones() {
    // The same writes, sequential and parallel, in several archetypes and
    // chunks, with small batches (so threads share chunks): each collector
    // then holds the same entities, once each, in the same (storage) order.
    let n = scale(20_000);
    let (mut sequential, _) = mixed(n);
    let (mut parallel, _) = mixed(n);
    let mut batches = Vec::new();
    for game in [&mut sequential, &mut parallel] {
        let moved = game.add_collector(Matcher::all_of::<Position>().updated());
        let slowed = game.add_collector(Matcher::all_of::<(Position, Velocity)>().added());
        batches.push((moved, slowed));
    }
    sequential
        .query_mut::<(&mut Position, &Velocity)>()
        .unwrap()
        .for_each(|(p, v)| p.x += v.x);
    sequential
        .query_mut::<(&mut Velocity,)>()
        .unwrap()
        .for_each_chunk(|(v,)| v.iter_mut().for_each(|v| v.y += 1.0));
    parallel
        .query_mut::<(&mut Position, &Velocity)>()
        .unwrap()
        .batch_size(48)
        .par_for_each(|(p, v)| p.x += v.x);
    parallel
        .query_mut::<(&mut Velocity,)>()
        .unwrap()
        .batch_size(48)
        .par_for_each_chunk(|(v,)| v.iter_mut().for_each(|v| v.y += 1.0));
    // Handles differ between contexts: compare creation indices.
    let collected = |game: &mut Context, id| {
        let entities = game.collector(id).unwrap().entities().to_vec();
        entities
            .iter()
            .map(|&e| game.creation_index(e).unwrap())
            .collect::<Vec<_>>()
    };
    let (moved, slowed) = batches[0];
    let (expected_moved, expected_slowed) = (collected(&mut sequential, moved), collected(&mut sequential, slowed));
    let (moved, slowed) = batches[1];
    assert_eq!(collected(&mut parallel, moved), expected_moved);
    assert_eq!(collected(&mut parallel, slowed), expected_slowed);
    let movers = parallel.query::<(&Position, &Velocity)>().count();
    assert_eq!(expected_moved.len(), movers, "each mover once");
    let unique: std::collections::BTreeSet<_> = expected_slowed.iter().collect();
    assert_eq!(unique.len(), expected_slowed.len(), "once each");
    check(&parallel);
}

#[cfg(feature = "parallel")]
#[test]
fn par_for_each_visits_every_row_once_whatever_the_batch_size() {
    // Rows in several archetypes and chunks: batches split big chunks and
    // group small ones; each row must be visited exactly once either way.
    let mut game = Context::new();
    let n = scale(5_000);
    game.create_entities_with((0..n).map(|i| (pos(i as f32), vel(1.0))))
        .unwrap();
    game.create_entities_with((0..n / 3).map(|i| (pos(i as f32), vel(1.0), Frozen)))
        .unwrap();
    game.create_entities_with((0..7).map(|i| (pos(i as f32), Name(i.to_string()))))
        .unwrap();
    let total = n + n / 3 + 7;
    for batch in [1, 7, 64, 1_000, total, 10 * total] {
        let visits = AtomicUsize::new(0);
        game.query_mut::<&mut Position>()
            .unwrap()
            .batch_size(batch)
            .par_for_each(|p| {
                p.y += 1.0;
                visits.fetch_add(1, Ordering::Relaxed);
            });
        assert_eq!(visits.into_inner(), total, "batch {batch}");
        let rows = AtomicUsize::new(0);
        game.query::<&Position>().batch_size(batch).par_for_each_chunk(|chunk| {
            assert!(chunk.len() <= batch, "a piece is at most a batch");
            rows.fetch_add(chunk.len(), Ordering::Relaxed);
        });
        assert_eq!(rows.into_inner(), total, "batch {batch}");
    }
    assert!(game.query::<&Position>().iter().all(|p| p.y == 6.0));
}

#[cfg(feature = "parallel")]
#[test]
fn par_fold_gives_the_batches_states_in_row_order() {
    // Whatever the batch size and however the threads interleave, the
    // states come back in row order: their concatenation is the
    // sequential walk, item for item.
    let (mut game, _) = mixed(scale(6_000));
    let sequential: Vec<Entity> = game.query::<(Entity, &Position)>().iter().map(|(e, _)| e).collect();
    for batch in [1, 5, 64, 1_000, 100_000] {
        for _ in 0..if cfg!(miri) { 1 } else { 8 } {
            let states = game
                .query::<(Entity, &Position)>()
                .batch_size(batch)
                .par_fold(Vec::new, |seen: &mut Vec<Entity>, (e, _)| seen.push(e));
            assert!(states.iter().all(|s| !s.is_empty()), "one state per batch of rows");
            assert_eq!(states.concat(), sequential, "batch size {batch}");
            let written = game
                .query_mut::<(Entity, &mut Position)>()
                .unwrap()
                .batch_size(batch)
                .par_fold(Vec::new, |seen: &mut Vec<Entity>, (e, p)| {
                    p.y += 1.0;
                    seen.push(e);
                });
            assert_eq!(written.concat(), sequential, "batch size {batch}, writing");
        }
    }
    check(&game);
}

#[cfg(feature = "parallel")]
#[test]
fn par_fold_command_buffers_play_back_as_the_sequential_loop_records() {
    // Per-batch command buffers, appended in the order `par_fold` gives
    // them, hold the commands one loop would have recorded, in its order:
    // the contexts end equal, and their collectors hold the same entities
    // in the same order.
    let n = scale(8_000);
    let record = |buffer: &mut CommandBuffer, (e, p): (Entity, &mut Position)| {
        p.x += 0.5;
        match (p.x as i64).rem_euclid(5) {
            0 => {
                buffer.destroy_entity(e);
            }
            1 => {
                buffer.add(e, Name(format!("n{}", p.x)));
            }
            2 => {
                buffer.create_entity_with((Name(format!("child of {}", p.x)),));
            }
            _ => {}
        }
    };
    let names = |game: &mut Context, id| {
        let entities = game.collector(id).unwrap().entities().to_vec();
        entities
            .iter()
            .map(|&e| game.creation_index(e).unwrap())
            .collect::<Vec<_>>()
    };
    let (mut sequential, _) = mixed(n);
    let seq_names = sequential.add_collector(Matcher::all_of::<Name>().added());
    let mut one = CommandBuffer::new();
    sequential
        .query_mut::<(Entity, &mut Position)>()
        .unwrap()
        .for_each(|item| record(&mut one, item));
    let recorded = one.len();
    assert!(recorded > n / 3, "the loop recorded commands of each kind");
    one.playback(&mut sequential).unwrap();
    let expected_names = names(&mut sequential, seq_names);
    for batch in [3, 97, 100_000] {
        let (mut parallel, _) = mixed(n);
        let par_names = parallel.add_collector(Matcher::all_of::<Name>().added());
        let buffers = parallel
            .query_mut::<(Entity, &mut Position)>()
            .unwrap()
            .batch_size(batch)
            .par_fold(CommandBuffer::new, |buffer, item| record(buffer, item));
        let mut all = CommandBuffer::new();
        for mut buffer in buffers {
            all.append(&mut buffer);
        }
        assert_eq!(all.len(), recorded, "batch size {batch}");
        all.playback(&mut parallel).unwrap();
        let diff = sequential.diff::<(Position, Velocity, Name)>(&parallel);
        assert!(diff.is_empty(), "batch size {batch}: {diff}");
        assert_eq!(names(&mut parallel, par_names), expected_names, "batch size {batch}");
        check(&parallel);
    }
}

#[cfg(feature = "parallel")]
#[test]
fn par_for_each_init_gives_each_task_its_state() {
    // Scratch state per task: every row is visited once, through it.
    let (mut game, _) = mixed(scale(6_000));
    let rows = game.query::<&Position>().count();
    let (made, visited) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let init = || {
        made.fetch_add(1, Ordering::Relaxed);
        Vec::<f32>::with_capacity(8)
    };
    game.query_mut::<&mut Position>()
        .unwrap()
        .batch_size(100)
        .par_for_each_init(init, |scratch, p| {
            scratch.clear();
            scratch.push(p.x);
            p.y = scratch[0] * 2.0;
            visited.fetch_add(1, Ordering::Relaxed);
        });
    assert_eq!(visited.load(Ordering::Relaxed), rows);
    // rayon makes a state per piece of work it splits off (not per row).
    assert!(made.load(Ordering::Relaxed) >= 1);
    let read = AtomicUsize::new(0);
    game.query::<&Position>().par_for_each_init(
        || 0usize,
        |count, p| {
            *count += 1;
            assert_eq!(p.y, p.x * 2.0);
            read.fetch_add(1, Ordering::Relaxed);
        },
    );
    assert_eq!(read.load(Ordering::Relaxed), rows);
    check(&game);
}
