//! Hot paths do not allocate in steady state: once archetypes, edges and
//! chunks exist, add / remove / replace / destroy / create churn reuses them.
//! (allocation-counter counts per thread, so other tests do not interfere.)

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use reactecs::prelude::*;

/// One frame of churn over every entity.
fn frame(game: &mut Context, entities: &mut [Entity], frame: usize) {
    for (i, e) in entities.iter_mut().enumerate() {
        game.add(*e, Velocity { x: 1.0, y: 0.0 }).unwrap();
        let p = *game.get::<Position>(*e).unwrap();
        game.replace(*e, Position { x: p.x + 1.0, y: p.y }).unwrap();
        game.add(*e, Frozen).unwrap();
        game.remove::<Velocity>(*e).unwrap();
        let _ = game.take::<Frozen>(*e).unwrap();
        if (i + frame).is_multiple_of(4) {
            game.destroy_entity(*e).unwrap();
            *e = game.create_entity_with((Position { x: 0.0, y: i as f32 },)).unwrap();
        }
    }
}

#[test]
fn churn_allocates_nothing_once_warm() {
    let mut game = Context::new();
    let events = Arc::new(AtomicUsize::new(0));
    let counter = events.clone();
    game.subscribe(move |_: &ContextEvent<'_>| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    let mut entities: Vec<Entity> = (0..scale(3_000))
        .map(|i| game.create_entity_with((Position { x: i as f32, y: 0.0 },)).unwrap())
        .collect();
    // Warm-up: every archetype, edge, bundle plan and chunk the churn needs.
    for f in 0..4 {
        frame(&mut game, &mut entities, f);
    }
    let before = events.load(Ordering::Relaxed);
    let info = allocation_counter::measure(|| {
        for f in 0..4 {
            frame(&mut game, &mut entities, f);
        }
    });
    assert_eq!(info.count_total, 0, "steady-state churn allocated: {info:?}");
    assert!(
        events.load(Ordering::Relaxed) > before,
        "events fired during the measured frames"
    );
    check(&game);
}

/// A frame that uses groups, queries and `modify_each` on top of churn.
fn group_frame(game: &mut Context, entities: &mut [Entity], movers: GroupId, frame_index: usize) -> usize {
    frame(game, entities, frame_index);
    let mut visited = 0;
    for (p, v) in game.query_mut::<(&mut Position, Option<&Velocity>)>().unwrap().iter() {
        p.y += v.map_or(0.0, |v| v.y);
        visited += 1;
    }
    game.query_mut::<(&mut Position,)>()
        .unwrap()
        .for_each_chunk(|(p,)| p.iter_mut().for_each(|p| p.x *= 0.5));
    visited += game.modify_each::<Position, Entity>(movers, |p, _| p.x += 1.0).unwrap();
    let list = game.get_group(movers).unwrap().entities();
    visited + list.len()
}

#[test]
fn groups_queries_and_modify_each_allocate_nothing_once_warm() {
    let mut game = Context::new();
    let events = Arc::new(AtomicUsize::new(0));
    let movers = game.group(Matcher::all_of::<Position>().none_of::<Frozen>());
    for matcher in [
        Matcher::all_of::<(Position, Velocity)>(),
        Matcher::any_of::<(Velocity, Frozen)>(),
        Matcher::all_of::<Position>().none_of::<Frozen>(),
    ] {
        let id = game.group(matcher);
        let counter = events.clone();
        game.subscribe_group(id, move |_: &GroupEvent<'_>| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    }
    let counter = events.clone();
    game.subscribe(move |_: &ContextEvent<'_>| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    let mut entities: Vec<Entity> = (0..scale(3_000))
        .map(|i| game.create_entity_with((Position { x: i as f32, y: 0.0 },)).unwrap())
        .collect();
    for f in 0..4 {
        group_frame(&mut game, &mut entities, movers, f);
    }
    let before = events.load(Ordering::Relaxed);
    let mut visited = 0;
    let info = allocation_counter::measure(|| {
        for f in 0..4 {
            visited += group_frame(&mut game, &mut entities, movers, f);
        }
    });
    assert_eq!(info.count_total, 0, "steady-state group work allocated: {info:?}");
    assert!(
        events.load(Ordering::Relaxed) > before,
        "group and context events fired"
    );
    assert!(visited >= 4 * 3 * entities.len(), "every frame visited every entity");
    check(&game);
}
