//! boids: one frame of the 100,000-boid simulation of `examples/boids`, on
//! reactecs (`reactecs_*`: steering cell by cell through a `View` and a
//! grid `EntityIndex` kept current by command buffers, parallel systems;
//! `reactecs_by_boid_*`: steering boid by boid through a split borrow) and
//! written by hand (`by_hand_*`:
//! flat arrays, a flat grid rebuilt every frame), in one run; each on a
//! rayon pool of one thread and on rayon's global pool (all threads). The
//! two share the simulation's rules (`examples/boids/flock.rs`), and are
//! checked to compute the same first frame before anything is timed.

mod common;

#[allow(dead_code, reason = "the example's modules, of which the bench uses a part")]
#[path = "../examples/boids/by_hand.rs"]
mod by_hand;
#[allow(dead_code, reason = "the example's modules, of which the bench uses a part")]
#[path = "../examples/boids/flock.rs"]
mod flock;

use by_hand::ByHand;
use common::report_ratios;
use criterion::Criterion;
use flock::{Flock, Serial, Steering};
use reactecs::Index;

/// Runs `f` on `pool`, or on rayon's global pool.
fn on(pool: Option<&rayon::ThreadPool>, f: impl FnOnce() + Send) {
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

fn bench(c: &mut Criterion) {
    // Criterion's test mode (`cargo test --benches`) builds without
    // optimisations: a smaller flock there.
    let boids = if cfg!(debug_assertions) { 3_000 } else { 100_000 };
    let (mut by_cell, mut by_boid, mut hand) = (
        Flock::new(boids, Steering::ByCell),
        Flock::new(boids, Steering::ByBoid),
        ByHand::new(boids),
    );
    by_cell.frame();
    by_boid.frame();
    hand.frame();
    assert_eq!(by_cell.state(), hand.state(), "the same first frame");
    assert_eq!(by_boid.state(), hand.state(), "the same first frame");

    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread");
    let mut group = c.benchmark_group("boids");
    group.sample_size(10);
    for (label, pool) in [("1_thread", Some(&one)), ("all_threads", None)] {
        let mut hand = ByHand::new(boids);
        group.bench_function(format!("by_hand_{label}"), |b| b.iter(|| on(pool, || hand.frame())));
        assert_eq!(hand.pos.len(), boids);
        for (name, by) in [("reactecs", Steering::ByCell), ("reactecs_by_boid", Steering::ByBoid)] {
            let mut ecs = Flock::new(boids, by);
            group.bench_function(format!("{name}_{label}"), |b| b.iter(|| on(pool, || ecs.frame())));
            // Every death was a rebirth, and the grid files every boid.
            assert_eq!(ecs.game.query::<&Serial>().count(), boids);
            assert_eq!(ecs.game.index(ecs.grid).expect("the grid").entity_count(), boids);
        }
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    println!("\nrayon's global pool: {} threads", rayon::current_num_threads());
    report_ratios(
        "boids",
        "by_hand_1_thread",
        &["reactecs_1_thread", "reactecs_by_boid_1_thread"],
    );
    report_ratios(
        "boids",
        "by_hand_all_threads",
        &["reactecs_all_threads", "reactecs_by_boid_all_threads"],
    );
}
