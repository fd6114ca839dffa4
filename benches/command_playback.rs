//! command_playback: spawning 10,000 entities (Position, Velocity) through a
//! command buffer (recorded, then played back) against the direct
//! `create_entities_with` of the same bundles, each into a fresh context.
//! The buffer is reused across iterations, as a game would keep it.
//!
//! API measured: `CommandBuffer::create_entity_with` per entity, then
//! `CommandBuffer::playback`; against `Context::create_entities_with`.
//!
//! With the `parallel` feature, also `command_playback_parallel`: 10,000
//! commands (an `add` to each of 10,000 entities) recorded by a parallel
//! loop (`QueryMut::par_fold`, a buffer per batch, appended in row order)
//! and played back, against the same recorded by one sequential loop
//! (`for_each` into one buffer) and played back: what is timed is the
//! append and the playback (issue 29's aim: within 1.2x).

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

/// A context of `N` entities with a `Position`, and the commands adding a
/// `Velocity` to each, recorded by one loop, or by a parallel loop (one
/// buffer per batch, in row order).
#[cfg(feature = "parallel")]
fn recorded(parallel: bool) -> (Context, Vec<CommandBuffer>) {
    let mut game = Context::new();
    game.create_entities_with((0..N).map(|i| (Position([i as f32, 0.0, 0.0]),)))
        .expect("no duplicates");
    let record = |commands: &mut CommandBuffer, (e, p): (Entity, &mut Position)| {
        commands.add(e, Velocity([p.0[0], 0.0, 0.0]));
    };
    let mut query = game.query_mut::<(Entity, &mut Position)>().expect("no aliasing");
    let buffers = if parallel {
        query.par_fold(CommandBuffer::new, record)
    } else {
        let mut one = CommandBuffer::new();
        query.for_each(|item| record(&mut one, item));
        vec![one]
    };
    drop(query);
    (game, buffers)
}

/// Appends the buffers in order and plays them back; checks every entity
/// got its `Velocity`, from its own `Position`.
#[cfg(feature = "parallel")]
fn play((mut game, buffers): (Context, Vec<CommandBuffer>)) -> Context {
    let mut all = CommandBuffer::new();
    for mut buffer in buffers {
        all.append(&mut buffer);
    }
    assert_eq!(all.len(), N);
    all.playback(&mut game).expect("valid commands");
    assert!(
        game.query::<(&Position, &Velocity)>()
            .iter()
            .all(|(p, v)| p.0[0] == v.0[0])
            && game.query::<&Velocity>().iter().count() == N
    );
    game
}

#[cfg(feature = "parallel")]
fn bench_parallel(c: &mut Criterion) {
    let mut group = c.benchmark_group("command_playback_parallel");
    group.sample_size(20);
    group.bench_function("recorded_sequentially", |bencher| {
        bencher.iter_batched(|| recorded(false), play, BatchSize::LargeInput)
    });
    group.bench_function("recorded_in_parallel", |bencher| {
        bencher.iter_batched(|| recorded(true), play, BatchSize::LargeInput)
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    #[cfg(feature = "parallel")]
    bench_parallel(&mut criterion);
    criterion.final_summary();
    report_ratios("command_playback", "direct_create_entities_with", &["command_buffer"]);
    #[cfg(feature = "parallel")]
    report_ratios(
        "command_playback_parallel",
        "recorded_sequentially",
        &["recorded_in_parallel"],
    );
}
