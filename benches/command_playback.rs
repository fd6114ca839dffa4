//! command_playback: spawning 10,000 entities (Position, Velocity) through a
//! command buffer (recorded, then played back) against the direct
//! `create_entities_with` of the same bundles, each into a fresh context.
//! The buffer is reused across iterations, as a game would keep it.
//!
//! API measured: `CommandBuffer::create_entity_with` per entity, then
//! `CommandBuffer::playback`; against `Context::create_entities_with`.

mod common;

use std::hint::black_box;

use common::{Position, Velocity, report_ratios};
use criterion::{BatchSize, Criterion};
use reactecs::prelude::*;

const N: usize = 10_000;

fn bundle(i: usize) -> (Position, Velocity) {
    (Position([i as f32, 0.0, 0.0]), Velocity([1.0, 0.0, 0.0]))
}

fn direct(mut game: Context) -> Context {
    let made = game.create_entities_with((0..N).map(bundle)).expect("no duplicates");
    assert_eq!(made.len(), N);
    game
}

fn buffered(mut game: Context, commands: &mut CommandBuffer) -> Context {
    for i in 0..N {
        commands.create_entity_with(bundle(black_box(i)));
    }
    commands.playback(&mut game).expect("valid commands");
    assert_eq!(game.len(), N);
    game
}

fn bench(c: &mut Criterion) {
    let mut commands = CommandBuffer::new();
    // The same entities, in the same order, either way.
    let (a, b) = (direct(Context::new()), buffered(Context::new(), &mut commands));
    let values = |game: &Context| game.query::<&Position>().iter().map(|p| p.0[0]).collect::<Vec<_>>();
    assert_eq!(values(&a), values(&b));
    let slots = |game: &Context| game.entities().map(|e| e.index()).collect::<Vec<_>>();
    assert_eq!(slots(&a), slots(&b));

    let mut group = c.benchmark_group("command_playback");
    group.sample_size(20);
    group.bench_function("direct_create_entities_with", |bencher| {
        bencher.iter_batched(Context::new, direct, BatchSize::LargeInput)
    });
    group.bench_function("command_buffer", |bencher| {
        bencher.iter_batched(
            Context::new,
            |game| buffered(game, &mut commands),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios("command_playback", "direct_create_entities_with", &["command_buffer"]);
}
