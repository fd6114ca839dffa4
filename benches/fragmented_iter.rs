//! fragmented_iter (ecs_bench_suite): 26 component types A..Z, 20 entities
//! of each, every entity also holding `Data`; each iteration doubles every
//! `Data`. The 520 `Data` values live in 26 archetypes of 20 rows each, so
//! the query hops over 26 small chunks: this measures per-archetype and
//! per-chunk overhead, not the arithmetic.
//!
//! - `reactecs_for_each`: `QueryMut::for_each` over `&mut Data`;
//! - `reactecs_chunks`: `QueryMut::for_each_chunk`, a slice loop per chunk.
//!
//! Baseline (`baseline_vec`): what one writes by hand for "each entity has a
//! `Data` and one of 26 other components": one `Vec` of 520 structs holding
//! the `Data` and an enum of the 26 components, and one loop over it. That is
//! the fair plain-Rust equivalent of the same data; it is *not* fragmented,
//! which is the point of the comparison (the ECS splits entities by
//! component set, plain code needn't). For reference, `baseline_26_vecs`
//! mirrors the fragmentation by hand (26 `Vec`s of 20 rows, looped one after
//! the other), so the gap between it and reactecs is the query machinery
//! alone.

mod common;

use common::report_ratios;
use criterion::Criterion;
use reactecs::{Context, Entity};

/// Entities per component type.
const PER_TYPE: usize = 20;
const TYPES: usize = 26;
const ENTITIES: usize = PER_TYPE * TYPES;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Data(f32);
reactecs::component!(Data);

/// Declares the 26 one-`f32` component types, the enum that holds any one of
/// them (for the baseline), and a function spawning `PER_TYPE` entities of
/// each type, with `Data(1.0)`, into a context.
macro_rules! fragments {
    ($($name:ident),+) => {
        $(
            #[derive(Clone, Copy, Debug, PartialEq)]
            struct $name(f32);
        )+
        reactecs::component!($($name),+);

        /// One of the 26 components, as plain code would store it.
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[allow(dead_code, reason = "the payloads are there for realism, never read")]
        enum Kind {
            $($name($name)),+
        }

        /// Every `(kind, Data(1.0))`, `PER_TYPE` per kind, grouped by kind.
        fn baseline_kinds() -> Vec<Kind> {
            let mut kinds = Vec::with_capacity(ENTITIES);
            $(kinds.extend((0..PER_TYPE).map(|_| Kind::$name($name(0.0))));)+
            kinds
        }

        /// Spawns `PER_TYPE` entities of each type, with `Data(1.0)`; returns
        /// them in creation order.
        fn spawn(game: &mut Context) -> Vec<Entity> {
            let mut entities = Vec::with_capacity(ENTITIES);
            $(
                entities.extend(
                    game.create_entities_with((0..PER_TYPE).map(|_| ($name(0.0), Data(1.0))))
                        .expect("no duplicate components"),
                );
            )+
            entities
        }

        /// Whether every entity still has its own-type component at 0.0.
        fn kinds_untouched(game: &Context) -> bool {
            $(game.query::<&$name>().iter().all(|c| *c == $name(0.0))
                && game.query::<&$name>().count() == PER_TYPE &&)+ true
        }
    };
}

fragments!(
    A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z
);

/// data *= 2: the work of one entity, shared by every variant.
#[inline]
fn double(data: &mut Data) {
    data.0 *= 2.0;
}

/// The baseline row: the entity's data and its other component.
struct Row {
    data: Data,
    #[allow(dead_code, reason = "carried as plain code would, never read by the loop")]
    kind: Kind,
}

fn baseline_rows() -> Vec<Row> {
    baseline_kinds()
        .into_iter()
        .map(|kind| Row { data: Data(1.0), kind })
        .collect()
}

fn baseline_step(rows: &mut [Row]) {
    for row in rows {
        double(&mut row.data);
    }
}

/// The fragmentation, by hand: one `Vec` of rows per kind.
fn baseline_tables() -> Vec<Vec<Row>> {
    let mut rows = baseline_rows().into_iter();
    (0..TYPES).map(|_| rows.by_ref().take(PER_TYPE).collect()).collect()
}

fn baseline_tables_step(tables: &mut [Vec<Row>]) {
    for table in tables {
        baseline_step(table);
    }
}

/// One reactecs variant's step over the whole context.
type Step = fn(&mut Context);

fn reactecs_for_each(game: &mut Context) {
    game.query_mut::<&mut Data>().expect("no aliasing").for_each(double);
}

fn reactecs_chunks(game: &mut Context) {
    game.query_mut::<&mut Data>()
        .expect("no aliasing")
        .for_each_chunk(|data| {
            for d in data {
                double(d);
            }
        });
}

/// Every `Data` of `game` equals `value`, and nothing else changed.
fn check_all_at(game: &Context, value: f32) {
    assert_eq!(game.query::<&Data>().count(), ENTITIES);
    assert!(game.query::<&Data>().iter().all(|d| *d == Data(value)));
    assert!(kinds_untouched(game));
}

fn bench(c: &mut Criterion) {
    // Check the work once outside the timed loop: 26 archetypes of 20, and
    // each variant doubles every Data exactly once.
    let mut game = Context::new();
    let entities = spawn(&mut game);
    assert_eq!(entities.len(), ENTITIES);
    // 26 archetypes in use (plus the empty one), one 20-row chunk each.
    assert_eq!(game.storage_stats().chunks, TYPES);
    game.check_invariants().unwrap();
    check_all_at(&game, 1.0);
    reactecs_for_each(&mut game);
    check_all_at(&game, 2.0);
    reactecs_chunks(&mut game);
    check_all_at(&game, 4.0);
    let mut rows = baseline_rows();
    baseline_step(&mut rows);
    assert!(rows.iter().all(|r| r.data == Data(2.0)));
    assert_eq!(rows.len(), ENTITIES);
    let mut tables = baseline_tables();
    baseline_tables_step(&mut tables);
    assert!(tables.iter().flatten().all(|r| r.data == Data(2.0)));
    assert_eq!(tables.iter().map(Vec::len).sum::<usize>(), ENTITIES);

    // Doubling reaches f32::INFINITY after ~128 iterations and stays there, as
    // in ecs_bench_suite (infinity costs nothing extra; no denormals occur).
    // In the timed loops the last entity's value must follow a tracked copy
    // doubled the same number of times.
    let last = entities[ENTITIES - 1];
    let mut group = c.benchmark_group("fragmented_iter");
    group.bench_function("baseline_vec", |b| {
        let mut expected = rows[ENTITIES - 1].data;
        b.iter(|| {
            baseline_step(&mut rows);
            double(&mut expected);
            assert_eq!(rows[ENTITIES - 1].data, expected);
        })
    });
    group.bench_function("baseline_26_vecs", |b| {
        let mut expected = tables[TYPES - 1][PER_TYPE - 1].data;
        b.iter(|| {
            baseline_tables_step(&mut tables);
            double(&mut expected);
            assert_eq!(tables[TYPES - 1][PER_TYPE - 1].data, expected);
        })
    });
    let variants: [(&str, Step); 2] = [
        ("reactecs_for_each", reactecs_for_each),
        ("reactecs_chunks", reactecs_chunks),
    ];
    for (name, step) in variants {
        group.bench_function(name, |b| {
            let mut expected = *game.get::<Data>(last).unwrap();
            b.iter(|| {
                step(&mut game);
                double(&mut expected);
                assert_eq!(*game.get::<Data>(last).unwrap(), expected);
            })
        });
    }
    group.finish();

    // Every entity was doubled as often as the last one.
    let value = game.get::<Data>(last).unwrap().0;
    check_all_at(&game, value);
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios(
        "fragmented_iter",
        "baseline_vec",
        &["baseline_26_vecs", "reactecs_for_each", "reactecs_chunks"],
    );
}
