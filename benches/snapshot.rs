//! snapshot (ecs_bench_suite's serialize workloads): 10,000 entities with a
//! 4x4 matrix, Position, Rotation and Velocity, written with postcard
//! (`serialize`: `Context::snapshot` into a byte vector; `serialize_typed`:
//! `Context::snapshot_of` the four types) and read back into a new context
//! (`deserialize`: `Context::restore`; `deserialize_typed`:
//! `Context::restore_of` the four types). Baselines: plain serde of a `Vec`
//! of structs holding the same data, in the same format.
//! Needs the `serde` feature: `cargo bench --features serde --bench snapshot`.

mod common;

use std::hint::black_box;

use common::report_ratios;
use criterion::Criterion;
use reactecs::Context;
use serde::{Deserialize, Serialize};

const N: usize = 10_000;

// Bench-local copies of the suite's components, which opt in to snapshots
// (the shared ones in `common` do not implement the serde traits).

/// A 4x4 f32 matrix (ecs_bench_suite's `Transform`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Transform([[f32; 4]; 4]);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Position([f32; 3]);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Rotation([f32; 3]);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Velocity([f32; 3]);

reactecs::component!(Transform, Position, Rotation, Velocity);
reactecs::snapshot!(Transform, Position, Rotation, Velocity);

/// The types the typed variants write and read.
type Suite = (Transform, Position, Rotation, Velocity);

/// One entity as a plain struct: the baseline's row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Row {
    transform: Transform,
    position: Position,
    rotation: Rotation,
    velocity: Velocity,
}

/// Entity `i`'s data (varied, so nothing compresses to a constant).
fn row(i: usize) -> Row {
    let f = i as f32;
    Row {
        transform: Transform([
            [f, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]),
        position: Position([f, 1.0, 0.0]),
        rotation: Rotation([1.0, f, 0.0]),
        velocity: Velocity([1.0, 0.0, f]),
    }
}

fn rows() -> Vec<Row> {
    (0..N).map(row).collect()
}

fn world() -> Context {
    let mut game = Context::new();
    game.create_entities_with(
        rows()
            .into_iter()
            .map(|r| (r.transform, r.position, r.rotation, r.velocity)),
    )
    .expect("no duplicate components");
    game
}

fn restore(bytes: &[u8]) -> Context {
    let mut game = Context::new();
    game.restore(
        &mut postcard::Deserializer::from_bytes(bytes),
        reactecs::RestoreLimits::default(),
    )
    .expect("a snapshot just written");
    game
}

fn snapshot_typed(game: &Context) -> Vec<u8> {
    postcard::to_stdvec(&game.snapshot_of::<Suite>().expect("listed types")).unwrap()
}

fn restore_typed(bytes: &[u8]) -> Context {
    let mut game = Context::new();
    game.restore_of::<Suite>(
        &mut postcard::Deserializer::from_bytes(bytes),
        reactecs::RestoreLimits::default(),
    )
    .expect("a snapshot just written");
    game
}

/// The restored world's data, in creation order, as rows.
fn rows_of(game: &Context) -> Vec<Row> {
    let mut all: Vec<_> = game.entities().collect();
    all.sort_by_key(|&e| game.creation_index(e).unwrap());
    all.into_iter()
        .map(|e| Row {
            transform: *game.get::<Transform>(e).unwrap(),
            position: *game.get::<Position>(e).unwrap(),
            rotation: *game.get::<Rotation>(e).unwrap(),
            velocity: *game.get::<Velocity>(e).unwrap(),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    // Check the work once outside the timed loops: both round trips give
    // back the data they started from.
    let data = rows();
    let plain = postcard::to_stdvec(&data).unwrap();
    assert_eq!(postcard::from_bytes::<Vec<Row>>(&plain).unwrap(), data);
    let game = world();
    let bytes = postcard::to_stdvec(&game.snapshot()).unwrap();
    let restored = restore(&bytes);
    restored.check_invariants().unwrap();
    assert_eq!(rows_of(&restored), data);
    // The typed path writes the same bytes, and reads them back the same.
    assert_eq!(snapshot_typed(&game), bytes);
    let restored = restore_typed(&bytes);
    restored.check_invariants().unwrap();
    assert_eq!(rows_of(&restored), data);
    println!(
        "snapshot: {} bytes for {N} entities (plain Vec of structs: {} bytes)",
        bytes.len(),
        plain.len()
    );

    let mut group = c.benchmark_group("snapshot");
    group.bench_function("baseline_serialize_vec", |b| {
        b.iter(|| postcard::to_stdvec(black_box(&data)).unwrap())
    });
    group.bench_function("serialize", |b| {
        b.iter(|| postcard::to_stdvec(&black_box(&game).snapshot()).unwrap())
    });
    group.bench_function("serialize_typed", |b| b.iter(|| snapshot_typed(black_box(&game))));
    group.bench_function("baseline_deserialize_vec", |b| {
        b.iter(|| {
            let rows: Vec<Row> = postcard::from_bytes(black_box(&plain)).unwrap();
            assert_eq!(rows.len(), N);
            rows
        })
    });
    group.bench_function("deserialize", |b| {
        b.iter(|| {
            let game = restore(black_box(&bytes));
            assert_eq!(game.len(), N);
            game
        })
    });
    group.bench_function("deserialize_typed", |b| {
        b.iter(|| {
            let game = restore_typed(black_box(&bytes));
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
    report_ratios("snapshot", "baseline_serialize_vec", &["serialize", "serialize_typed"]);
    report_ratios(
        "snapshot",
        "baseline_deserialize_vec",
        &["deserialize", "deserialize_typed"],
    );
}
