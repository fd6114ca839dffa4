//! simple_iter (ecs_bench_suite): 10,000 entities with a 4x4 matrix,
//! Position, Rotation and Velocity; each iteration adds every entity's
//! Velocity to its Position.
//!
//! - `reactecs_for_each`: `QueryMut::for_each`, entity by entity (one internal
//!   fold per chunk);
//! - `reactecs_iter`: a `for` loop over `QueryMut::iter` (the `next()` path);
//! - `reactecs_chunks`: `QueryMut::for_each_chunk`, a slice loop per chunk.
//!
//! Baseline (`baseline_vec`): a `Vec` of structs holding the same four fields,
//! same loop. The structs interleave the 64-byte matrix with the vectors, so
//! it streams 100 bytes per entity where the chunk columns stream 24: this is
//! the layout ecs_bench_suite compares against, and a reason an ECS can win.
//! For reference, `baseline_soa` loops over two plain `Vec`s (positions,
//! velocities): the chunk layout without the ECS, so the gap between it and
//! `reactecs_chunks` is the query machinery alone.

mod common;

use common::*;
use criterion::Criterion;
use reactecs::{Context, Entity};

const N: usize = 10_000;

/// pos += vel: the work of one entity, shared by every variant.
#[inline]
fn advance(position: &mut Position, velocity: &Velocity) {
    position.0[0] += velocity.0[0];
    position.0[1] += velocity.0[1];
    position.0[2] += velocity.0[2];
}

fn baseline_rows() -> Vec<SuiteRow> {
    (0..N).map(|_| SuiteRow::new(IDENTITY)).collect()
}

/// The context, and its last-created entity (last row of the last chunk).
fn spawn() -> (Context, Entity) {
    let mut game = Context::new();
    let entities = game
        .create_entities_with((0..N).map(|_| SuiteRow::new(IDENTITY).bundle()))
        .expect("no duplicate components");
    (game, entities[N - 1])
}

fn baseline_step(rows: &mut [SuiteRow]) {
    for row in rows {
        advance(&mut row.position, &row.velocity);
    }
}

/// The same data as columns: positions and velocities.
struct Columns {
    positions: Vec<Position>,
    velocities: Vec<Velocity>,
}

fn baseline_columns() -> Columns {
    Columns {
        positions: vec![Position(UNIT_X); N],
        velocities: vec![Velocity(UNIT_X); N],
    }
}

fn baseline_soa_step(columns: &mut Columns) {
    for (p, v) in columns.positions.iter_mut().zip(&columns.velocities) {
        advance(p, v);
    }
}

/// One reactecs variant's step over the whole context.
type Step = fn(&mut Context);

fn reactecs_for_each(game: &mut Context) {
    game.query_mut::<(&mut Position, &Velocity)>()
        .expect("no aliasing")
        .for_each(|(p, v)| advance(p, v));
}

fn reactecs_iter(game: &mut Context) {
    for (p, v) in game
        .query_mut::<(&mut Position, &Velocity)>()
        .expect("no aliasing")
        .iter()
    {
        advance(p, v);
    }
}

fn reactecs_chunks(game: &mut Context) {
    game.query_mut::<(&mut Position, &Velocity)>()
        .expect("no aliasing")
        .for_each_chunk(|(pos, vel)| {
            for (p, v) in pos.iter_mut().zip(vel) {
                advance(p, v);
            }
        });
}

/// Every entity of `game` is at `x` on the X axis, with its other data as spawned.
fn check_all_at(game: &Context, x: f32) {
    let rows: Vec<_> = game
        .query::<(&Transform, &Position, &Rotation, &Velocity)>()
        .iter()
        .collect();
    assert_eq!(rows.len(), N);
    for (t, p, r, v) in rows {
        assert_eq!(
            (t, p, r, v),
            (
                &IDENTITY,
                &Position([x, 0.0, 0.0]),
                &Rotation(UNIT_X),
                &Velocity(UNIT_X)
            )
        );
    }
}

fn bench(c: &mut Criterion) {
    // Check the work once outside the timed loop: each variant adds the
    // velocity exactly once to every entity, and touches nothing else.
    let (mut game, last) = spawn();
    game.check_invariants().unwrap();
    check_all_at(&game, 1.0);
    reactecs_for_each(&mut game);
    check_all_at(&game, 2.0);
    reactecs_iter(&mut game);
    check_all_at(&game, 3.0);
    reactecs_chunks(&mut game);
    check_all_at(&game, 4.0);
    let mut rows = baseline_rows();
    baseline_step(&mut rows);
    assert!(rows.iter().all(|r| *r
        == SuiteRow {
            position: Position([2.0, 0.0, 0.0]),
            ..SuiteRow::new(IDENTITY)
        }));
    let mut columns = baseline_columns();
    baseline_soa_step(&mut columns);
    assert!(columns.positions.iter().all(|p| *p == Position([2.0, 0.0, 0.0])));
    assert!(columns.velocities.iter().all(|v| *v == Velocity(UNIT_X)));

    // In the timed loops, the last entity's X must have grown by exactly 1.0
    // per iteration (the same f32 additions on a tracked copy: exact).
    let mut group = c.benchmark_group("simple_iter");
    group.bench_function("baseline_vec", |b| {
        let mut expected = rows[N - 1].position.0[0];
        b.iter(|| {
            baseline_step(&mut rows);
            expected += 1.0;
            assert_eq!(rows[N - 1].position.0[0], expected);
        })
    });
    group.bench_function("baseline_soa", |b| {
        let mut expected = columns.positions[N - 1].0[0];
        b.iter(|| {
            baseline_soa_step(&mut columns);
            expected += 1.0;
            assert_eq!(columns.positions[N - 1].0[0], expected);
        })
    });
    let variants: [(&str, Step); 3] = [
        ("reactecs_for_each", reactecs_for_each),
        ("reactecs_iter", reactecs_iter),
        ("reactecs_chunks", reactecs_chunks),
    ];
    for (name, step) in variants {
        group.bench_function(name, |b| {
            let mut expected = game.get::<Position>(last).unwrap().0[0];
            b.iter(|| {
                step(&mut game);
                expected += 1.0;
                assert_eq!(game.get::<Position>(last).unwrap().0[0], expected);
            })
        });
    }
    group.finish();

    // Every entity was advanced as often as the last one.
    let x = game.get::<Position>(last).unwrap().0[0];
    check_all_at(&game, x);
    let x = rows[N - 1].position.0[0];
    assert!(rows.iter().all(|r| r.position == Position([x, 0.0, 0.0])));
    let x = columns.positions[N - 1].0[0];
    assert!(columns.positions.iter().all(|p| *p == Position([x, 0.0, 0.0])));
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios(
        "simple_iter",
        "baseline_vec",
        &["baseline_soa", "reactecs_for_each", "reactecs_iter", "reactecs_chunks"],
    );
}
