//! A warm command buffer allocates nothing: once a record + playback cycle
//! has run, the same mix of commands (creates with placeholders, adds,
//! replaces, removes, destroys, flags, unique components) records and plays
//! back without allocating, events and groups included.
//! (allocation-counter counts per thread, so other tests do not interfere.)

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use reactecs::prelude::*;

#[derive(Default, Debug)]
struct Burning;
#[derive(Debug, PartialEq)]
struct Gold(u32);
reactecs::component!(flag Burning, unique Gold);

fn at(x: f32) -> Position {
    Position { x, y: 0.0 }
}

fn vel(x: f32) -> Velocity {
    Velocity { x, y: 0.0 }
}

#[test]
fn record_and_playback_allocate_nothing_once_warm() {
    let mut game = Context::with_name("Game");
    let log = Arc::new(AtomicUsize::new(0));
    let sink = log.clone();
    game.subscribe(move |_: &ContextEvent<'_>| {
        sink.fetch_add(1, Ordering::Relaxed);
    });
    game.add_group(Matcher::all_of::<Position>().none_of::<Burning>());
    let mut entities: Vec<Entity> = (0..scale(500))
        .map(|i| game.create_entity_with((at(i as f32),)).unwrap())
        .collect();
    let mut commands = CommandBuffer::new();
    let mut placeholders = Vec::with_capacity(entities.len());
    let mut cycle = |game: &mut Context, entities: &mut Vec<Entity>, round: usize| {
        placeholders.clear();
        for (i, &e) in entities.iter().enumerate() {
            commands.replace(e, at(i as f32 + round as f32));
            commands.add(e, vel(1.0)).set_flag::<Burning>(e, true);
            commands.remove::<Velocity>(e).set_flag::<Burning>(e, false);
            if (i + round).is_multiple_of(4) {
                commands.destroy_entity(e);
                let p = commands.create_entity_with((at(0.0), vel(0.0)));
                commands.remove::<Velocity>(p);
                placeholders.push((i, p));
            }
        }
        commands.set_unique(Gold(round as u32)).remove_unique::<Gold>();
        commands.playback(game).unwrap();
        for &(i, p) in &placeholders {
            entities[i] = commands.resolve(p).unwrap();
        }
    };
    for round in 0..4 {
        cycle(&mut game, &mut entities, round);
    }
    let before = log.load(Ordering::Relaxed);
    let info = allocation_counter::measure(|| {
        for round in 4..8 {
            cycle(&mut game, &mut entities, round);
        }
    });
    assert_eq!(info.count_total, 0, "a warm record + playback allocated: {info:?}");
    assert!(log.load(Ordering::Relaxed) > before);
    assert_eq!(game.len(), entities.len());
    check(&game);
}
