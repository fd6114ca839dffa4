//! index_lookup: 100,000 entities, each with a unique `Id(u64)` (scattered
//! 64-bit values, as network ids are) and a `Value(f32)`; 100,000 lookups of
//! ids drawn at random (fixed seed) through a `PrimaryEntityIndex`, each
//! reading the entity's `Value`. What is measured is the cost of "find the
//! entity with this key and read it".
//!
//! Baselines, as one writes them by hand, hashing with foldhash as the index
//! does (so the comparison is of the rest, not of hash functions): a
//! `HashMap<u64, usize>` from id to position in a `Vec` of the entities'
//! records (`Id` and `Value`, what each entity holds: `baseline_hashmap_vec`,
//! the ratios' reference); and the same map into a `Vec<f32>` of the values
//! alone (`baseline_hashmap_values`, the tightest layout possible).
//!
//! Two reactecs variants: the index fetched once and `get` per key, then
//! `Context::get::<Value>` (`index_get`); and `Context::index(id)` per
//! key, which finds the index by its id each time (`entity_with`).

mod common;

use std::collections::HashMap;
use std::hint::black_box;

use common::report_ratios;
use criterion::Criterion;
use reactecs::prelude::*;

const N: usize = 100_000;
const LOOKUPS: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Id(u64);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Value(f32);
reactecs::component!(Id, Value);

/// SplitMix64: a fixed, seedable stream of well-mixed 64-bit values.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The ids of the entities (distinct), and the ids to look up, in order.
fn keys() -> (Vec<u64>, Vec<u64>) {
    let mut rng = SplitMix(0x5EED);
    let ids: Vec<u64> = (0..N).map(|_| rng.next()).collect();
    let unique: std::collections::HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), N, "ids are distinct");
    let lookups = (0..LOOKUPS).map(|_| ids[(rng.next() % N as u64) as usize]).collect();
    (ids, lookups)
}

fn value(i: usize) -> Value {
    Value((i % 1000) as f32 * 0.5)
}

/// One entity's data, as a plain struct.
struct Record {
    #[allow(dead_code, reason = "the record holds what an entity holds; only the value is read")]
    id: Id,
    value: Value,
}

/// The index's hasher: foldhash, randomly seeded.
type KeyHasher = foldhash::fast::RandomState;

struct Baseline {
    by_id: HashMap<u64, usize, KeyHasher>,
    records: Vec<Record>,
    values: Vec<f32>,
}

impl Baseline {
    fn new(ids: &[u64]) -> Self {
        Baseline {
            by_id: ids.iter().enumerate().map(|(i, &id)| (id, i)).collect(),
            records: ids
                .iter()
                .enumerate()
                .map(|(i, &id)| Record {
                    id: Id(id),
                    value: value(i),
                })
                .collect(),
            values: (0..N).map(|i| value(i).0).collect(),
        }
    }

    fn sum_records(&self, lookups: &[u64]) -> f64 {
        lookups
            .iter()
            .map(|id| f64::from(self.records[self.by_id[black_box(id)]].value.0))
            .sum()
    }

    fn sum_values(&self, lookups: &[u64]) -> f64 {
        lookups
            .iter()
            .map(|id| f64::from(self.values[self.by_id[black_box(id)]]))
            .sum()
    }
}

struct World {
    game: Context,
    index: IndexId<PrimaryEntityIndex<u64>>,
}

impl World {
    fn new(ids: &[u64]) -> Self {
        let mut game = Context::new();
        let index = game
            .add_index(PrimaryEntityIndex::new("Id", |id: &Id| id.0))
            .expect("a new index");
        game.create_entities_with(ids.iter().enumerate().map(|(i, &id)| (Id(id), value(i))))
            .expect("distinct ids");
        World { game, index }
    }

    fn sum_index_get(&self, lookups: &[u64]) -> f64 {
        let index = self.game.index(self.index).expect("added");
        lookups
            .iter()
            .map(|id| {
                let e = index.get(black_box(id)).expect("every id is filed");
                f64::from(self.game.get::<Value>(e).expect("alive with a Value").0)
            })
            .sum()
    }

    fn sum_entity_with(&self, lookups: &[u64]) -> f64 {
        lookups
            .iter()
            .map(|id| {
                let e = self
                    .game
                    .index(self.index)
                    .map(|index| index.get(black_box(id)))
                    .expect("added");
                f64::from(self.game.get::<Value>(e.expect("every id is filed")).expect("alive").0)
            })
            .sum()
    }
}

fn bench(c: &mut Criterion) {
    let (ids, lookups) = keys();
    let baseline = Baseline::new(&ids);
    let world = World::new(&ids);
    // Check the work once, outside the timed loops: the same keys read the
    // same values, and the index holds every entity.
    let expected = baseline.sum_records(&lookups);
    assert!(expected > 0.0);
    assert_eq!(baseline.sum_values(&lookups), expected);
    assert_eq!(world.sum_index_get(&lookups), expected);
    assert_eq!(world.sum_entity_with(&lookups), expected);
    let index = world.game.index(world.index).expect("added");
    assert_eq!((index.key_count(), index.entity_count()), (N, N));
    world.game.check_invariants().expect("consistent");

    let mut group = c.benchmark_group("index_lookup");
    group.bench_function("baseline_hashmap_vec", |b| {
        b.iter(|| assert_eq!(baseline.sum_records(&lookups), expected))
    });
    group.bench_function("baseline_hashmap_values", |b| {
        b.iter(|| assert_eq!(baseline.sum_values(&lookups), expected))
    });
    group.bench_function("reactecs_index_get", |b| {
        b.iter(|| assert_eq!(world.sum_index_get(&lookups), expected))
    });
    group.bench_function("reactecs_entity_with", |b| {
        b.iter(|| assert_eq!(world.sum_entity_with(&lookups), expected))
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    let measured = ["reactecs_index_get", "reactecs_entity_with"];
    report_ratios("index_lookup", "baseline_hashmap_vec", &measured);
    report_ratios("index_lookup", "baseline_hashmap_values", &measured);
}
