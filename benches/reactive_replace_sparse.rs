//! reactive_replace_sparse: 100,000 entities with Position and Velocity; each
//! frame replaces the Position of 1% of them (1,000 consecutive entities, a
//! different slice each frame) with `position + velocity`, then one reactive
//! system (collector: `AllOf(Position).added()`) sums the positions of the
//! entities that changed. What is measured is the cost of a reactive frame
//! when little changes: it must not depend on the 99,000 that did not.
//!
//! API measured (`reactecs_modify`, the ratios' subject): one
//! `Context::modify_with::<Position, &Velocity>` per changed entity, picked
//! by random access from a kept entity list (one lookup reads Velocity and
//! changes Position in place, telling observers as `replace` does: the way
//! the README recommends), then `Reactive::execute`. For contrast,
//! `reactecs_replace` writes the older way: two `Context::get`s and a
//! `Context::replace` per entity.
//!
//! Baseline (`baseline_dirty_list`, in the same run): plain Rust, the
//! entities' components in a `Vec`, a dirty flag per entity and a dirty list
//! of indices, pushed on first change and drained by the "system".

mod common;

use std::hint::black_box;

use common::{Position, Velocity, report_ratios};
use criterion::Criterion;
use reactecs::prelude::*;
use reactecs::system::{Reactive, ReactiveSystem};

const N: usize = 100_000;
const CHANGED: usize = N / 100;

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
    frame: usize,
}

impl Baseline {
    fn new() -> Self {
        Baseline {
            positions: (0..N).map(start).collect(),
            velocities: vec![Velocity([1.0, 0.5, 0.0]); N],
            dirty: vec![false; N],
            dirty_list: Vec::with_capacity(CHANGED),
            sum: 0.0,
            seen: 0,
            frame: 0,
        }
    }

    fn frame(&mut self) {
        for i in slice(self.frame) {
            let i = black_box(i);
            let (p, v) = (self.positions[i].0, self.velocities[i].0);
            self.positions[i] = Position([p[0] + v[0], p[1] + v[1], p[2] + v[2]]);
            if !self.dirty[i] {
                self.dirty[i] = true;
                self.dirty_list.push(i);
            }
        }
        for &i in &self.dirty_list {
            self.sum += f64::from(self.positions[i].0[0]);
            self.dirty[i] = false;
        }
        self.seen += self.dirty_list.len();
        self.dirty_list.clear();
        self.frame += 1;
    }
}

/// The entities changed in frame `frame`.
fn slice(frame: usize) -> std::ops::Range<usize> {
    let first = (frame * CHANGED) % N;
    first..first + CHANGED
}

fn start(i: usize) -> Position {
    Position([(i % 100) as f32, 0.0, 0.0])
}

struct World {
    game: Context,
    entities: Vec<Entity>,
    system: Reactive<SumMoved>,
    frame: usize,
}

impl World {
    fn new() -> Self {
        let mut game = Context::new();
        let entities = game
            .create_entities_with((0..N).map(|i| (start(i), Velocity([1.0, 0.5, 0.0]))))
            .expect("no duplicate components");
        let mut system = Reactive::new(SumMoved::default());
        system.initialize(&mut game);
        World {
            game,
            entities,
            system,
            frame: 0,
        }
    }

    /// One frame the recommended way: `modify_with` per changed entity.
    fn frame(&mut self) {
        for i in slice(self.frame) {
            let e = self.entities[black_box(i)];
            self.game
                .modify_with::<Position, &Velocity, _>(e, |p, v| {
                    for (p, v) in p.0.iter_mut().zip(v.0) {
                        *p += v;
                    }
                })
                .expect("alive with Position and Velocity");
        }
        self.system.execute(&mut self.game);
        self.frame += 1;
    }

    /// One frame the older way: two `get`s and a `replace` per entity.
    fn frame_replace(&mut self) {
        for i in slice(self.frame) {
            let e = self.entities[black_box(i)];
            let (p, v) = (
                self.game.get::<Position>(e).expect("alive").0,
                self.game.get::<Velocity>(e).expect("alive").0,
            );
            self.game
                .replace(e, Position([p[0] + v[0], p[1] + v[1], p[2] + v[2]]))
                .expect("alive");
        }
        self.system.execute(&mut self.game);
        self.frame += 1;
    }
}

fn bench(c: &mut Criterion) {
    // Check the work once, outside the timed loops: after the same frames,
    // both saw CHANGED entities per frame and summed the same positions.
    let mut baseline = Baseline::new();
    let mut world = World::new();
    let mut by_replace = World::new();
    for _ in 0..3 {
        baseline.frame();
        world.frame();
        by_replace.frame_replace();
    }
    assert_eq!(baseline.seen, 3 * CHANGED);
    for world in [&world, &by_replace] {
        assert_eq!(world.system.system().seen, 3 * CHANGED);
        assert_eq!(world.system.system().sum, baseline.sum);
        for i in [0, CHANGED + 3, 3 * CHANGED - 1, 3 * CHANGED] {
            assert_eq!(
                world.game.get::<Position>(world.entities[i]).unwrap(),
                &baseline.positions[i]
            );
        }
        world.game.check_invariants().unwrap();
    }

    let mut group = c.benchmark_group("reactive_replace_sparse");
    group.bench_function("baseline_dirty_list", |b| {
        b.iter(|| {
            let seen = baseline.seen;
            baseline.frame();
            assert_eq!(baseline.seen, seen + CHANGED);
        })
    });
    group.bench_function("reactecs_modify", |b| {
        b.iter(|| {
            let seen = world.system.system().seen;
            world.frame();
            assert_eq!(world.system.system().seen, seen + CHANGED);
        })
    });
    group.bench_function("reactecs_replace", |b| {
        b.iter(|| {
            let seen = by_replace.system.system().seen;
            by_replace.frame_replace();
            assert_eq!(by_replace.system.system().seen, seen + CHANGED);
        })
    });
    group.finish();
    world.game.check_invariants().unwrap();
    by_replace.game.check_invariants().unwrap();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios(
        "reactive_replace_sparse",
        "baseline_dirty_list",
        &["reactecs_modify", "reactecs_replace"],
    );
}
