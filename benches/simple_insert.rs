//! simple_insert (ecs_bench_suite): create 10,000 entities with a 4x4 matrix,
//! Position, Rotation and Velocity, into a fresh context each iteration.
//! `reactecs` creates them one by one (`create_entity_with`), `reactecs_batch`
//! in one call (`create_entities_with`, as ecs_bench_suite's `spawn_batch`).
//! Baseline: pushing the same data as structs into a fresh `Vec`.

mod common;

use std::hint::black_box;

use common::*;
use criterion::Criterion;
use reactecs::Context;

const N: usize = 10_000;

struct Row {
    transform: Transform,
    position: Position,
    rotation: Rotation,
    velocity: Velocity,
}

fn baseline() -> Vec<Row> {
    let mut rows = Vec::new();
    for _ in 0..N {
        rows.push(Row {
            transform: black_box(IDENTITY),
            position: Position([1.0, 0.0, 0.0]),
            rotation: Rotation([1.0, 0.0, 0.0]),
            velocity: Velocity([1.0, 0.0, 0.0]),
        });
    }
    rows
}

fn reactecs_insert() -> Context {
    let mut game = Context::new();
    for _ in 0..N {
        game.create_entity_with((
            black_box(IDENTITY),
            Position([1.0, 0.0, 0.0]),
            Rotation([1.0, 0.0, 0.0]),
            Velocity([1.0, 0.0, 0.0]),
        ))
        .expect("no duplicate components");
    }
    game
}

fn reactecs_insert_batch() -> Context {
    let mut game = Context::new();
    let bundles = (0..N).map(|_| {
        (
            black_box(IDENTITY),
            Position([1.0, 0.0, 0.0]),
            Rotation([1.0, 0.0, 0.0]),
            Velocity([1.0, 0.0, 0.0]),
        )
    });
    let created = game.create_entities_with(bundles).expect("no duplicate components");
    assert_eq!(created.len(), N);
    game
}

fn bench(c: &mut Criterion) {
    // Check the work once outside the timed loop.
    let game = reactecs_insert();
    assert_eq!(game.len(), N);
    let first = game.entities().next().unwrap();
    assert_eq!(game.get::<Transform>(first), Ok(&IDENTITY));
    game.check_invariants().unwrap();
    let batch = reactecs_insert_batch();
    assert_eq!(batch.len(), N);
    batch.check_invariants().unwrap();
    let rows = baseline();
    assert_eq!(rows.len(), N);
    assert_eq!(
        rows[N - 1].transform.0[0][0] + rows[0].position.0[0] + rows[0].rotation.0[0] + rows[0].velocity.0[0],
        4.0
    );

    let mut group = c.benchmark_group("simple_insert");
    group.bench_function("baseline_vec_push", |b| {
        b.iter(|| {
            let rows = baseline();
            assert_eq!(rows.len(), N);
            rows
        })
    });
    group.bench_function("reactecs", |b| {
        b.iter(|| {
            let game = reactecs_insert();
            assert_eq!(game.len(), N);
            game
        })
    });
    group.bench_function("reactecs_batch", |b| {
        b.iter(|| {
            let game = reactecs_insert_batch();
            assert_eq!(game.len(), N);
            game
        })
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios("simple_insert", "baseline_vec_push", &["reactecs", "reactecs_batch"]);
}
