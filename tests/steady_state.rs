//! Hot paths do not allocate in steady state: once archetypes, edges and
//! chunks exist, add / remove / replace / destroy / create churn reuses them.
//! (allocation-counter counts per thread, so other tests do not interfere.)

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use reactecs::{Context, ContextEvent, Entity};

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
