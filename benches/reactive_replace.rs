//! reactive_replace: 10,000 entities with Position and Velocity. Each frame
//! replaces every Position with `position + velocity`, so that observers hear
//! of it, then one reactive system (collector: `AllOf(Position).added()`,
//! which sees replacements) sums the positions of the entities that changed.
//!
//! Baseline: what one writes by hand for "run this for what changed": the
//! entities' components in a `Vec`, a dirty flag per entity and a dirty list
//! of indices, pushed on first change and drained by the "system".
//!
//! Three reactecs variants: `modify_each` (one call replaces and reports the
//! whole group), `replace` (one `replace` per entity from a kept entity
//! list, as Entitas code does it, reading Position and Velocity with `get`
//! first) and `modify` (one `modify_with` per entity from the same list: one
//! lookup reads Velocity and changes Position in place).

mod common;

use std::hint::black_box;

use common::{Position, Velocity, report_ratios};
use criterion::Criterion;
use reactecs::prelude::*;
use reactecs::system::{Reactive, ReactiveSystem};

const N: usize = 10_000;

/// Sums the x of each changed Position; counts the entities it saw.
#[derive(Default)]
struct SumMoved {
    sum: f64,
    seen: usize,
}

impl ReactiveSystem for SumMoved {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Position>().added())
    }

    fn execute(&mut self, game: &mut Context, moved: &[Entity]) {
        for &e in moved {
            self.sum += f64::from(game.get::<Position>(e).expect("filtered: alive with Position").0[0]);
        }
        self.seen += moved.len();
    }
}

/// The hand-written equivalent: components, dirty flags, dirty list.
struct Baseline {
    positions: Vec<Position>,
    velocities: Vec<Velocity>,
    dirty: Vec<bool>,
    dirty_list: Vec<usize>,
    sum: f64,
    seen: usize,
}

impl Baseline {
    fn new() -> Self {
        Baseline {
            positions: (0..N).map(start).collect(),
            velocities: vec![Velocity([1.0, 0.5, 0.0]); N],
            dirty: vec![false; N],
            dirty_list: Vec::with_capacity(N),
            sum: 0.0,
            seen: 0,
        }
    }

    fn frame(&mut self) {
        for i in 0..N {
            let (p, v) = (self.positions[i].0, self.velocities[i].0);
            self.positions[i] = Position([p[0] + v[0], p[1] + v[1], p[2] + v[2]]);
            if !self.dirty[i] {
                self.dirty[i] = true;
                self.dirty_list.push(i);
            }
        }
        for &i in &self.dirty_list {
            self.sum += f64::from(self.positions[black_box(i)].0[0]);
            self.dirty[i] = false;
        }
        self.seen += self.dirty_list.len();
        self.dirty_list.clear();
    }
}

fn start(i: usize) -> Position {
    Position([(i % 100) as f32, 0.0, 0.0])
}

fn world() -> (Context, GroupId, Vec<Entity>, Reactive<SumMoved>) {
    let mut game = Context::new();
    let entities = game
        .create_entities_with((0..N).map(|i| (start(i), Velocity([1.0, 0.5, 0.0]))))
        .expect("no duplicate components");
    let movers = game.add_group(Matcher::all_of::<(Position, Velocity)>());
    let mut system = Reactive::new(SumMoved::default());
    system.initialize(&mut game);
    (game, movers, entities, system)
}

fn frame_modify_each(game: &mut Context, movers: GroupId, system: &mut Reactive<SumMoved>) {
    let changed = game
        .modify_each::<Position, &Velocity>(movers, |p, v| {
            *p = Position([p.0[0] + v.0[0], p.0[1] + v.0[1], p.0[2] + v.0[2]]);
        })
        .expect("the context's group");
    assert_eq!(changed, N);
    system.execute(game);
}

fn frame_replace(game: &mut Context, entities: &[Entity], system: &mut Reactive<SumMoved>) {
    for &e in entities {
        let (p, v) = (game.get::<Position>(e).unwrap().0, game.get::<Velocity>(e).unwrap().0);
        game.replace(black_box(e), Position([p[0] + v[0], p[1] + v[1], p[2] + v[2]]))
            .expect("alive");
    }
    system.execute(game);
}

fn frame_modify(game: &mut Context, entities: &[Entity], system: &mut Reactive<SumMoved>) {
    for &e in entities {
        game.modify_with::<Position, &Velocity, _>(black_box(e), |p, v| {
            *p = Position([p.0[0] + v.0[0], p.0[1] + v.0[1], p.0[2] + v.0[2]]);
        })
        .expect("alive, with Position and Velocity");
    }
    system.execute(game);
}

fn bench(c: &mut Criterion) {
    // Check the work once, outside the timed loops: after the same frames,
    // every side saw N entities per frame and summed the same positions.
    let mut baseline = Baseline::new();
    let (mut game, movers, entities, mut by_modify) = world();
    let (mut game2, _, entities2, mut by_replace) = world();
    let (mut game3, _, entities3, mut by_modify_one) = world();
    for _ in 0..3 {
        baseline.frame();
        frame_modify_each(&mut game, movers, &mut by_modify);
        frame_replace(&mut game2, &entities2, &mut by_replace);
        frame_modify(&mut game3, &entities3, &mut by_modify_one);
    }
    assert_eq!(baseline.seen, 3 * N);
    for system in [&by_modify, &by_replace, &by_modify_one] {
        assert_eq!(system.system().seen, 3 * N);
        assert_eq!(system.system().sum, baseline.sum);
    }
    assert_eq!(game.get::<Position>(entities[7]).unwrap(), &baseline.positions[7]);
    assert_eq!(game3.get::<Position>(entities3[7]).unwrap(), &baseline.positions[7]);
    assert!(game.collector(by_modify.collector().unwrap()).unwrap().is_empty());
    for game in [&game, &game2, &game3] {
        game.check_invariants().unwrap();
    }

    let mut group = c.benchmark_group("reactive_replace");
    group.sample_size(20);
    group.bench_function("baseline_dirty_list", |b| {
        b.iter(|| {
            let seen = baseline.seen;
            baseline.frame();
            assert_eq!(baseline.seen, seen + N);
        })
    });
    group.bench_function("reactecs_modify_each", |b| {
        b.iter(|| {
            let seen = by_modify.system().seen;
            frame_modify_each(&mut game, movers, &mut by_modify);
            assert_eq!(by_modify.system().seen, seen + N);
        })
    });
    group.bench_function("reactecs_replace", |b| {
        b.iter(|| {
            let seen = by_replace.system().seen;
            frame_replace(&mut game2, &entities2, &mut by_replace);
            assert_eq!(by_replace.system().seen, seen + N);
        })
    });
    group.bench_function("reactecs_modify", |b| {
        b.iter(|| {
            let seen = by_modify_one.system().seen;
            frame_modify(&mut game3, &entities3, &mut by_modify_one);
            assert_eq!(by_modify_one.system().seen, seen + N);
        })
    });
    group.finish();
    game.check_invariants().unwrap();
    game3.check_invariants().unwrap();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios(
        "reactive_replace",
        "baseline_dirty_list",
        &["reactecs_modify_each", "reactecs_replace", "reactecs_modify"],
    );
}
