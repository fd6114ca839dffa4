//! view_get: 100,000 entities with `Pos`, `Vel` and `Accel`; each follows
//! another drawn at random (fixed seed). What is measured is reading the
//! followed entity's `(Pos, Vel)` by handle.
//!
//! - Reads only, 100,000 lookups: `Context::get` twice per entity
//!   (`get_pair`) against one `View::get` of `(&Pos, &Vel)` from
//!   `Context::view()` (`view_get`) and from the view a split borrow
//!   (`query_mut_and_view`) hands out beside its query (`split_view_get`:
//!   the reads `examples/boids` makes boid by boid), and a plain-Rust
//!   baseline indexing two `Vec`s by position (`baseline_vecs`).
//! - The split loop: each entity's `Accel` written from its leader's
//!   `(Pos, Vel)`, through `query_mut_and_view` (`split_loop`), against the
//!   same loop over plain `Vec`s (`baseline_loop`), which is what a user
//!   wrote by hand before split borrows.

mod common;

use std::hint::black_box;

use common::report_ratios;
use criterion::Criterion;
use reactecs::prelude::*;

const N: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(f32, f32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(f32, f32);
#[derive(Clone, Copy, Debug, PartialEq, Default)]
struct Accel(f32, f32);
#[derive(Clone, Copy, Debug)]
struct Leader(Entity);
reactecs::component!(Pos, Vel, Accel, Leader);

/// A fixed stream of well-mixed values (SplitMix64).
fn leaders() -> Vec<usize> {
    let mut state = 0x5EEDu64;
    (0..N)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % N as u64) as usize
        })
        .collect()
}

fn pos(i: usize) -> Pos {
    Pos((i % 977) as f32, (i % 13) as f32)
}

fn vel(i: usize) -> Vel {
    Vel((i % 7) as f32 * 0.5, 1.0)
}

fn steer(at: Pos, p: Pos, v: Vel) -> Accel {
    Accel(p.0 - at.0 + v.0, p.1 - at.1 + v.1)
}

struct Baseline {
    pos: Vec<Pos>,
    vel: Vec<Vel>,
    accel: Vec<Accel>,
    leader: Vec<usize>,
}

impl Baseline {
    fn sum(&self) -> f64 {
        self.leader
            .iter()
            .map(|&i| {
                let i = black_box(i);
                f64::from(self.pos[i].0 + self.vel[i].1)
            })
            .sum()
    }

    fn steer_all(&mut self) -> f64 {
        for i in 0..N {
            let l = self.leader[i];
            self.accel[i] = steer(self.pos[i], self.pos[l], self.vel[l]);
        }
        self.accel.iter().map(|a| f64::from(a.0)).sum()
    }
}

struct World {
    game: Context,
    leaders: Vec<Entity>,
}

impl World {
    fn new(leader: &[usize]) -> Self {
        let mut game = Context::new();
        let es = game
            .create_entities_with((0..N).map(|i| (pos(i), vel(i), Accel::default())))
            .expect("plain bundles");
        for (i, &e) in es.iter().enumerate() {
            game.add(e, Leader(es[leader[i]])).expect("alive");
        }
        let leaders = leader.iter().map(|&i| es[i]).collect();
        // `view` uses the context's plan for `(&Pos, &Vel)` when current:
        // made here, as a system that splits every frame makes it.
        game.query_mut_and_view::<&mut Accel, (&Pos, &Vel)>()
            .expect("no aliasing");
        World { game, leaders }
    }

    fn sum_get_pair(&self) -> f64 {
        self.leaders
            .iter()
            .map(|&e| {
                let e = black_box(e);
                let p = self.game.get::<Pos>(e).expect("alive with a Pos");
                let v = self.game.get::<Vel>(e).expect("alive with a Vel");
                f64::from(p.0 + v.1)
            })
            .sum()
    }

    fn sum_view(&self) -> f64 {
        sum_through(&self.game.view::<(&Pos, &Vel)>(), &self.leaders)
    }

    fn sum_split_view(&mut self) -> f64 {
        let (_query, view) = self
            .game
            .query_mut_and_view::<&mut Accel, (&Pos, &Vel)>()
            .expect("no aliasing");
        sum_through(&view, &self.leaders)
    }

    fn steer_all(&mut self) -> f64 {
        let (mut query, view) = self
            .game
            .query_mut_and_view::<(&mut Accel, &Leader, &Pos), (&Pos, &Vel)>()
            .expect("no aliasing");
        query.for_each(|(accel, leader, &at)| {
            let (&p, &v) = view.get(leader.0).expect("alive with both");
            *accel = steer(at, p, v);
        });
        self.game.query::<&Accel>().iter().map(|a| f64::from(a.0)).sum()
    }
}

/// The leaders' `Pos.0 + Vel.1`, each pair read by handle through `view`.
fn sum_through(view: &View<'_, (&Pos, &Vel)>, leaders: &[Entity]) -> f64 {
    leaders
        .iter()
        .map(|&e| {
            let (p, v) = view.get(black_box(e)).expect("alive with both");
            f64::from(p.0 + v.1)
        })
        .sum()
}

fn bench(c: &mut Criterion) {
    let leader = leaders();
    let mut baseline = Baseline {
        pos: (0..N).map(pos).collect(),
        vel: (0..N).map(vel).collect(),
        accel: vec![Accel::default(); N],
        leader: leader.clone(),
    };
    let mut world = World::new(&leader);
    // Check the work once, outside the timed loops.
    let expected = baseline.sum();
    assert!(expected > 0.0);
    assert_eq!(world.sum_get_pair(), expected);
    assert_eq!(world.sum_view(), expected);
    assert_eq!(world.sum_split_view(), expected);
    let steered = baseline.steer_all();
    assert_eq!(world.steer_all(), steered);

    let mut group = c.benchmark_group("view_get");
    group.bench_function("baseline_vecs", |b| b.iter(|| assert_eq!(baseline.sum(), expected)));
    group.bench_function("get_pair", |b| b.iter(|| assert_eq!(world.sum_get_pair(), expected)));
    group.bench_function("view_get", |b| b.iter(|| assert_eq!(world.sum_view(), expected)));
    group.bench_function("split_view_get", |b| {
        b.iter(|| assert_eq!(world.sum_split_view(), expected))
    });
    group.bench_function("baseline_loop", |b| {
        b.iter(|| assert_eq!(baseline.steer_all(), steered))
    });
    group.bench_function("split_loop", |b| b.iter(|| assert_eq!(world.steer_all(), steered)));
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios("view_get", "get_pair", &["view_get"]);
    report_ratios("view_get", "view_get", &["split_view_get"]);
    report_ratios("view_get", "baseline_vecs", &["get_pair", "view_get"]);
    report_ratios("view_get", "baseline_loop", &["split_loop"]);
}
