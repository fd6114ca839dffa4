//! add_remove (ecs_bench_suite): 10,000 entities with A; add B to all, then
//! remove B from all, by entity handle.
//! API measured: `Context::add` and `Context::remove` per entity, from a kept
//! entity list (B kept in archetypes, so each call moves the row).
//! Baseline: two hand-written Vec-of-struct tables (A) and (A, B) with an
//! entity -> row map, moving each row with `swap_remove` + `push`.
//!
//! `reactecs_flag` adds and removes a zero-sized tag declared `flag`
//! instead of B; its honest baseline is `baseline_flags`, a `bool` per
//! entity beside its A, checked and flipped (what a careful hand-written
//! program keeps for a tag).

mod common;

use std::hint::black_box;

use common::report_ratios;
use criterion::Criterion;
use reactecs::{Context, Entity};

const N: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(f32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(f32);
/// A zero-sized tag declared `flag`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Tag;
reactecs::component!(A, B, flag Tag);

/// Two tables addressed by entity id, as one would write by hand.
struct Tables {
    a: Vec<A>,
    a_ids: Vec<u32>,
    ab: Vec<(A, B)>,
    ab_ids: Vec<u32>,
    /// entity id -> (in `ab`?, row)
    rows: Vec<(bool, u32)>,
}

impl Tables {
    fn new() -> Self {
        Tables {
            a: (0..N).map(|i| A(i as f32)).collect(),
            a_ids: (0..N as u32).collect(),
            ab: Vec::new(),
            ab_ids: Vec::new(),
            rows: (0..N as u32).map(|i| (false, i)).collect(),
        }
    }

    fn add_b(&mut self, id: u32) {
        let (in_ab, row) = self.rows[id as usize];
        assert!(!in_ab);
        let row = row as usize;
        let a = self.a.swap_remove(row);
        self.a_ids.swap_remove(row);
        if let Some(&moved) = self.a_ids.get(row) {
            self.rows[moved as usize] = (false, row as u32);
        }
        self.rows[id as usize] = (true, self.ab.len() as u32);
        self.ab.push((a, B(0.0)));
        self.ab_ids.push(id);
    }

    fn remove_b(&mut self, id: u32) {
        let (in_ab, row) = self.rows[id as usize];
        assert!(in_ab);
        let row = row as usize;
        let (a, _b) = self.ab.swap_remove(row);
        self.ab_ids.swap_remove(row);
        if let Some(&moved) = self.ab_ids.get(row) {
            self.rows[moved as usize] = (true, row as u32);
        }
        self.rows[id as usize] = (false, self.a.len() as u32);
        self.a.push(a);
        self.a_ids.push(id);
    }
}

/// The hand-written tag: a flag per entity, beside its A.
struct Flags {
    a: Vec<A>,
    tagged: Vec<bool>,
}

fn flags_round(flags: &mut Flags) {
    for id in 0..N {
        let tagged = &mut flags.tagged[black_box(id)];
        assert!(!*tagged);
        *tagged = true;
    }
    for id in 0..N {
        let tagged = &mut flags.tagged[black_box(id)];
        assert!(*tagged);
        *tagged = false;
    }
}

fn flag_round(game: &mut Context, entities: &[Entity]) {
    for &e in entities {
        game.add(black_box(e), Tag).expect("no Tag yet");
    }
    for &e in entities {
        game.remove::<Tag>(black_box(e)).expect("has Tag");
    }
}

fn baseline_round(tables: &mut Tables) {
    for id in 0..N as u32 {
        tables.add_b(black_box(id));
    }
    for id in 0..N as u32 {
        tables.remove_b(black_box(id));
    }
}

fn reactecs_round(game: &mut Context, entities: &[Entity]) {
    for &e in entities {
        game.add(black_box(e), B(0.0)).expect("no B yet");
    }
    for &e in entities {
        game.remove::<B>(black_box(e)).expect("has B");
    }
}

fn bench(c: &mut Criterion) {
    let mut game = Context::new();
    let entities: Vec<Entity> = (0..N)
        .map(|i| game.create_entity_with((A(i as f32),)).unwrap())
        .collect();
    let mut tables = Tables::new();

    // Check the work once outside the timed loop: every entity gains and loses B
    // and keeps its own A.
    for &e in &entities {
        game.add(e, B(1.0)).unwrap();
    }
    assert!(entities.iter().all(|&e| game.has::<B>(e)));
    for &e in &entities {
        game.remove::<B>(e).unwrap();
    }
    game.check_invariants().unwrap();
    assert!(
        entities
            .iter()
            .enumerate()
            .all(|(i, &e)| game.get::<A>(e) == Ok(&A(i as f32)) && !game.has::<B>(e))
    );
    baseline_round(&mut tables);
    assert!((0..N).all(|i| {
        let (in_ab, row) = tables.rows[i];
        !in_ab && tables.a[row as usize] == A(i as f32)
    }));

    flag_round(&mut game, &entities);
    assert!(entities.iter().all(|&e| !game.has::<Tag>(e)));
    assert_eq!(game.storage_stats().sparse_values, 0);
    let mut flags = Flags {
        a: (0..N).map(|i| A(i as f32)).collect(),
        tagged: vec![false; N],
    };
    flags_round(&mut flags);
    assert!(!flags.tagged.iter().any(|&t| t) && flags.a[N - 1] == A((N - 1) as f32));

    let mut group = c.benchmark_group("add_remove");
    group.bench_function("baseline_tables", |b| {
        b.iter(|| {
            baseline_round(&mut tables);
            assert_eq!(tables.a.len(), N);
        })
    });
    group.bench_function("reactecs", |b| {
        b.iter(|| {
            reactecs_round(&mut game, &entities);
            assert_eq!(game.len(), N);
        })
    });
    group.bench_function("baseline_flags", |b| {
        b.iter(|| {
            flags_round(&mut flags);
            assert!(!flags.tagged[N / 2]);
        })
    });
    group.bench_function("reactecs_flag", |b| {
        b.iter(|| {
            flag_round(&mut game, &entities);
            assert_eq!(game.len(), N);
        })
    });
    group.finish();
    assert!(!game.has::<B>(entities[N / 2]));
    assert!(!game.has::<Tag>(entities[N / 2]));
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios("add_remove", "baseline_tables", &["reactecs", "reactecs_flag"]);
    report_ratios("add_remove", "baseline_flags", &["reactecs_flag"]);
}
