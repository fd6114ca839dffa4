//! reactive_add_remove: 10,000 entities with A. Each frame adds tag B to
//! every other entity; a reactive system on `AllOf(A, B).added()` visits
//! those 5,000; then B is removed from them again, and a second reactive
//! system on `AllOf(A, B).removed()` visits the 5,000 that lost it.
//! API measured: `Context::add` and `Context::remove` per entity, from a kept
//! entity list, and two `Reactive::execute` (collectors fed as the changes
//! happen).
//!
//! Baseline: the entities' A in a `Vec`, a `has_b` flag per entity, and two
//! hand-kept dirty lists (joined, left) with dirty flags, drained by the two
//! "systems". Flipping a flag moves no data, so the ratio is the whole price
//! of tag churn through archetype moves, groups, collectors and AERC.
//!
//! `reactecs` churns a tag kept in archetypes (each change moves the row);
//! `reactecs_flag` churns the same tag declared `flag` (nothing moves).

mod common;

use std::hint::black_box;

use common::report_ratios;
use criterion::Criterion;
use reactecs::prelude::*;
use reactecs::system::{Reactive, ReactiveSystem};

const N: usize = 10_000;

/// The component every entity has.
#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u64);
/// The tag that comes and goes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct B;
/// The same tag declared `flag`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct FlagB;
reactecs::component!(A, B, flag FlagB);

/// Sums A over the entities its collector gathered (those that gained or
/// lost tag `T`).
struct Visit<T> {
    removed: bool,
    sum: u64,
    seen: usize,
    _tag: std::marker::PhantomData<fn() -> T>,
}

impl<T: Component> ReactiveSystem for Visit<T> {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        let matcher = Matcher::all_of::<(A, T)>();
        game.add_collector(if self.removed {
            matcher.removed()
        } else {
            matcher.added()
        })
    }

    fn execute(&mut self, game: &mut Context, entities: &[Entity]) {
        for &e in entities {
            self.sum += game.get::<A>(e).expect("alive with A").0;
        }
        self.seen += entities.len();
    }
}

/// The hand-written equivalent.
struct Baseline {
    a: Vec<A>,
    has_b: Vec<bool>,
    joined: (Vec<bool>, Vec<usize>),
    left: (Vec<bool>, Vec<usize>),
    sum_joined: u64,
    sum_left: u64,
    seen: usize,
}

fn mark((flags, list): &mut (Vec<bool>, Vec<usize>), i: usize) {
    if !flags[i] {
        flags[i] = true;
        list.push(i);
    }
}

fn drain((flags, list): &mut (Vec<bool>, Vec<usize>), a: &[A]) -> (u64, usize) {
    let mut sum = 0;
    for &i in list.iter() {
        sum += a[i].0;
        flags[i] = false;
    }
    let seen = list.len();
    list.clear();
    (sum, seen)
}

impl Baseline {
    fn new() -> Self {
        let dirty = || (vec![false; N], Vec::with_capacity(N));
        Baseline {
            a: (0..N as u64).map(A).collect(),
            has_b: vec![false; N],
            joined: dirty(),
            left: dirty(),
            sum_joined: 0,
            sum_left: 0,
            seen: 0,
        }
    }

    fn frame(&mut self) {
        for i in (0..N).step_by(2) {
            let i = black_box(i);
            assert!(!self.has_b[i]);
            self.has_b[i] = true;
            mark(&mut self.joined, i);
        }
        let (sum, seen) = drain(&mut self.joined, &self.a);
        self.sum_joined += sum;
        self.seen += seen;
        for i in (0..N).step_by(2) {
            let i = black_box(i);
            assert!(self.has_b[i]);
            self.has_b[i] = false;
            mark(&mut self.left, i);
        }
        let (sum, seen) = drain(&mut self.left, &self.a);
        self.sum_left += sum;
        self.seen += seen;
    }
}

struct World<T: Component> {
    game: Context,
    entities: Vec<Entity>,
    joined: Reactive<Visit<T>>,
    left: Reactive<Visit<T>>,
}

impl<T: Component + Default> World<T> {
    fn new() -> Self {
        let mut game = Context::new();
        let entities = game
            .create_entities_with((0..N as u64).map(|i| (A(i),)))
            .expect("no duplicate components");
        let visit = |removed| {
            Reactive::new(Visit {
                removed,
                sum: 0,
                seen: 0,
                _tag: std::marker::PhantomData,
            })
        };
        let (mut joined, mut left) = (visit(false), visit(true));
        joined.initialize(&mut game);
        left.initialize(&mut game);
        World {
            game,
            entities,
            joined,
            left,
        }
    }

    fn frame(&mut self) {
        for &e in self.entities.iter().step_by(2) {
            self.game.add(black_box(e), T::default()).expect("no tag yet");
        }
        self.joined.execute(&mut self.game);
        for &e in self.entities.iter().step_by(2) {
            self.game.remove::<T>(black_box(e)).expect("has the tag");
        }
        self.left.execute(&mut self.game);
    }

    fn seen(&self) -> usize {
        self.joined.system().seen + self.left.system().seen
    }

    /// The sums of A over those that gained and those that lost the tag.
    fn sums(&self) -> (u64, u64) {
        (self.joined.system().sum, self.left.system().sum)
    }
}

fn bench(c: &mut Criterion) {
    // Check the work once, outside the timed loops: both sides visit the
    // same 5,000 entities twice per frame and sum the same values.
    let mut baseline = Baseline::new();
    let mut world = World::<B>::new();
    let mut flagged = World::<FlagB>::new();
    for _ in 0..2 {
        baseline.frame();
        world.frame();
        flagged.frame();
    }
    assert_eq!(baseline.seen, 2 * N);
    for (seen, sums, tagged) in [
        (world.seen(), world.sums(), world.game.has::<B>(world.entities[0])),
        (
            flagged.seen(),
            flagged.sums(),
            flagged.game.has::<FlagB>(flagged.entities[0]),
        ),
    ] {
        assert_eq!(seen, 2 * N);
        assert_eq!(sums, (baseline.sum_joined, baseline.sum_left));
        assert!(!tagged);
    }
    world.game.check_invariants().unwrap();
    flagged.game.check_invariants().unwrap();

    let mut group = c.benchmark_group("reactive_add_remove");
    group.sample_size(20);
    group.bench_function("baseline_dirty_lists", |b| {
        b.iter(|| {
            let seen = baseline.seen;
            baseline.frame();
            assert_eq!(baseline.seen, seen + N);
        })
    });
    group.bench_function("reactecs", |b| {
        b.iter(|| {
            let seen = world.seen();
            world.frame();
            assert_eq!(world.seen(), seen + N);
        })
    });
    group.bench_function("reactecs_flag", |b| {
        b.iter(|| {
            let seen = flagged.seen();
            flagged.frame();
            assert_eq!(flagged.seen(), seen + N);
        })
    });
    group.finish();
    world.game.check_invariants().unwrap();
    flagged.game.check_invariants().unwrap();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios(
        "reactive_add_remove",
        "baseline_dirty_lists",
        &["reactecs", "reactecs_flag"],
    );
}
