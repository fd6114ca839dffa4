//! Hot paths do not allocate in steady state: once archetypes, edges and
//! chunks exist, add / remove / replace / destroy / create churn reuses them,
//! and so does a frame of systems with reactive ones (collectors, their
//! retains, system buffers, feature timings), and a frame with every
//! reactive piece at once: entity indices, flags, pooled components and a
//! command buffer (the `steady_frame` bench's frame).
//! (allocation-counter counts per thread, so other tests do not interfere.)

mod common;
#[path = "../benches/common/frame.rs"]
mod frame;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use reactecs::prelude::*;
use reactecs::system::Reactive;

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
    let list = game.group(movers).unwrap().entities();
    visited + list.len()
}

#[test]
fn groups_queries_and_modify_each_allocate_nothing_once_warm() {
    let mut game = Context::new();
    let events = Arc::new(AtomicUsize::new(0));
    let movers = game.add_group(Matcher::all_of::<Position>().none_of::<Frozen>());
    for matcher in [
        Matcher::all_of::<(Position, Velocity)>(),
        Matcher::any_of::<(Velocity, Frozen)>(),
        Matcher::all_of::<Position>().none_of::<Frozen>(),
    ] {
        let id = game.add_group(matcher);
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

/// Writes every position through a query and a third through `modify_each`
/// (churn in between), then drains two collectors in place: one of
/// updates only (read from the stamps) and one of joins too (gathered,
/// each looked up). Gives how many entities were visited.
fn drain_frame(
    game: &mut Context,
    entities: &mut [Entity],
    (updated, added, movers): (CollectorId, CollectorId, GroupId),
    f: usize,
) -> usize {
    frame(game, entities, f);
    game.query_mut::<&mut Position>().unwrap().for_each(|p| p.y += 1.0);
    game.modify_each::<Position, ()>(movers, |p, ()| p.x += 1.0).unwrap();
    let mut visited = 0;
    for id in [updated, added] {
        visited += game
            .collector_mut(id)
            .unwrap()
            .drain::<(Entity, &Position)>(|(_, p)| assert!(p.y >= 1.0))
            .unwrap();
    }
    visited
}

#[test]
fn drain_collected_allocates_nothing_once_warm() {
    let mut game = Context::new();
    let updated = game.add_collector(Matcher::all_of::<Position>().updated());
    let added = game.add_collector(Matcher::all_of::<Position>().added());
    let movers = game.add_group(Matcher::all_of::<Position>().none_of::<Frozen>());
    let mut entities: Vec<Entity> = (0..scale(3_000))
        .map(|i| game.create_entity_with((Position { x: i as f32, y: 0.0 },)).unwrap())
        .collect();
    let ids = (updated, added, movers);
    for f in 0..4 {
        drain_frame(&mut game, &mut entities, ids, f);
    }
    let mut visited = 0;
    let info = allocation_counter::measure(|| {
        for f in 0..4 {
            visited += drain_frame(&mut game, &mut entities, ids, f);
        }
    });
    assert_eq!(info.count_total, 0, "steady-state draining allocated: {info:?}");
    assert!(
        visited >= 4 * 2 * entities.len(),
        "both collectors saw every entity every frame"
    );
    check(&game);
}

/// Moves every mover through `modify_each`: each write is a replace, which
/// `added()` collectors on `Position` collect.
struct Move {
    movers: Option<GroupId>,
}

impl System for Move {
    fn initialize(&mut self, game: &mut Context) {
        self.movers = Some(game.add_group(Matcher::all_of::<(Position, Velocity)>()));
    }
    fn execute(&mut self, game: &mut Context) {
        let movers = self.movers.expect("initialized");
        game.modify_each::<Position, &Velocity>(movers, |p, v| p.x += v.x)
            .unwrap();
    }
}

/// Freezes `BLINK` entities in `execute` and thaws them in `cleanup`, the
/// next `BLINK` each frame: archetype moves both ways, every frame.
struct Blink {
    entities: Vec<Entity>,
    frame: usize,
}

/// How many entities `Blink` freezes per frame: 100 of 2,000.
fn blink(entities: usize) -> usize {
    entities / 20
}

impl Blink {
    fn window(&self) -> impl Iterator<Item = Entity> + '_ {
        let count = blink(self.entities.len());
        let start = (self.frame * count) % self.entities.len();
        self.entities.iter().copied().cycle().skip(start).take(count)
    }
}

impl System for Blink {
    fn execute(&mut self, game: &mut Context) {
        for e in self.window() {
            game.add(e, Frozen).unwrap();
        }
    }
    fn cleanup(&mut self, game: &mut Context) {
        for e in self.window() {
            game.remove::<Frozen>(e).unwrap();
        }
        self.frame += 1;
    }
}

/// Sums the positions of the entities whose `Position` was added or replaced.
struct SumPositions {
    seen: Arc<AtomicUsize>,
    total: f32,
}

impl ReactiveSystem for SumPositions {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Position>().added())
    }
    fn execute(&mut self, game: &mut Context, entities: &[Entity]) {
        for &e in entities {
            self.total += game.get::<Position>(e).unwrap().x;
        }
        self.seen.fetch_add(entities.len(), Ordering::Relaxed);
    }
}

/// Counts the entities that were frozen or thawed.
struct WatchFrozen {
    seen: Arc<AtomicUsize>,
}

impl ReactiveSystem for WatchFrozen {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Frozen>().added_or_removed())
    }
    fn execute(&mut self, _game: &mut Context, entities: &[Entity]) {
        self.seen.fetch_add(entities.len(), Ordering::Relaxed);
    }
}

#[test]
fn a_reactive_frame_allocates_nothing_once_warm() {
    let mut game = Context::new();
    let entities: Vec<Entity> = (0..scale(2_000))
        .map(|i| {
            game.create_entity_with((Position { x: i as f32, y: 0.0 }, Velocity { x: 1.0, y: 0.0 }))
                .unwrap()
        })
        .collect();
    let summed = Arc::new(AtomicUsize::new(0));
    let watched = Arc::new(AtomicUsize::new(0));
    let mut frame = Feature::new("Frame")
        .with(Blink {
            entities: entities.clone(),
            frame: 0,
        })
        .with(Move { movers: None })
        .with(Reactive::new(SumPositions {
            seen: summed.clone(),
            total: 0.0,
        }))
        .with(Reactive::new(WatchFrozen { seen: watched.clone() }));
    assert!(frame.is_timing());
    frame.initialize(&mut game);
    // Warm-up: archetypes, edges, chunks, collector and system buffers, and
    // one full cycle of `Blink`, so its collector has seen every entity
    // index (its per-index table grows as higher indices first show up).
    let warm_up = entities.len() / blink(entities.len()) + 1;
    for _ in 0..warm_up {
        frame.execute(&mut game);
        frame.cleanup(&mut game);
    }
    let (summed_before, watched_before) = (summed.load(Ordering::Relaxed), watched.load(Ordering::Relaxed));
    let frames = 4;
    let info = allocation_counter::measure(|| {
        for _ in 0..frames {
            frame.execute(&mut game);
            frame.cleanup(&mut game);
        }
    });
    assert_eq!(info.count_total, 0, "a steady reactive frame allocated: {info:?}");
    assert_eq!(
        summed.load(Ordering::Relaxed) - summed_before,
        frames * entities.len(),
        "every moved entity was summed, every frame"
    );
    // Those frozen this frame, and those thawed at the end of the last one.
    assert_eq!(
        watched.load(Ordering::Relaxed) - watched_before,
        frames * 2 * blink(entities.len())
    );
    let runs = frame.timings().get("SumPositions").unwrap().execute().runs();
    assert_eq!(runs, (warm_up + frames) as u64, "timed every frame");
    check(&game);
}

#[test]
fn a_frame_with_indices_flags_pools_and_commands_allocates_nothing_once_warm() {
    let mut game = frame::Game::new();
    // Movers cross cells in a cycle of 16 frames: warm up over all of it.
    for _ in 0..20 {
        game.frame();
    }
    let (seen, _) = game.seen();
    let info = allocation_counter::measure(|| game.frame());
    assert_eq!(info.count_total, 0, "a steady frame allocated: {info:?}");
    assert_eq!(
        game.seen().0,
        seen + frame::MOVERS,
        "the reactive system saw every mover"
    );
    let context = &game.context;
    assert_eq!(context.len(), frame::MOVERS + frame::SPARKS);
    assert_eq!(context.query::<&frame::Trail>().iter().count(), frame::CHURNED);
    let first = *context.get::<frame::Pos>(game.movers()[0]).unwrap();
    let here = context.index(game.by_cell).unwrap().get(&frame::cell(&first));
    assert!(here.contains(&game.movers()[0]), "the index followed the mover");
    check(context);
}

/// `create_entities_with_count` allocates no list of handles: once the
/// context has the slots and chunks (batches made and destroyed: room for
/// entity slots is reserved past the free ones), a batch of the same size
/// allocates nothing, heard or not, where `create_entities_with` allocates
/// its `Vec<Entity>`.
#[test]
fn create_entities_with_count_allocates_no_handles() {
    let n = scale(2_000);
    let bundles = || (0..n).map(|i| (Position { x: i as f32, y: 0.0 },));
    for heard in [false, true] {
        let mut game = Context::new();
        let events = Arc::new(AtomicUsize::new(0));
        if heard {
            let counter = events.clone();
            game.subscribe(move |_: &ContextEvent<'_>| {
                counter.fetch_add(1, Ordering::Relaxed);
            });
            game.add_group(Matcher::all_of::<Position>());
        }
        for _ in 0..2 {
            game.create_entities_with_count(bundles()).unwrap();
            game.destroy_all_entities();
        }
        let mut made = 0;
        let info = allocation_counter::measure(|| {
            made = game.create_entities_with_count(bundles()).unwrap();
        });
        assert_eq!(made, n);
        assert_eq!(game.len(), n);
        assert_eq!(info.count_total, 0, "heard: {heard}: {info:?}");
        assert_eq!(events.load(Ordering::Relaxed) > 0, heard);
        game.destroy_all_entities();
        let info = allocation_counter::measure(|| {
            game.create_entities_with(bundles()).unwrap();
        });
        assert!(
            info.bytes_total >= (n * std::mem::size_of::<Entity>()) as u64,
            "the Vec form allocates its handles: {info:?}"
        );
        check(&game);
    }
}
