//! Boids: 100,000 birds flocking in a wrapping square world, the whole
//! frame inside the ECS and every step that can be parallel parallel.
//!
//! Each frame (`flock.rs`, a `Feature` of five systems):
//! - `Tick` advances the `Clock` (a unique component);
//! - `Steer` computes each boid's `Accel` from the neighbours it sees,
//!   found through `Grid`, an `EntityIndex` on each boid's `Cell`, and read
//!   through a `View`: cell by cell in parallel, each boid of the nine cells
//!   around read once, the accelerations written afterwards through a
//!   `ViewMut` (one prepared view for 100,000 writes by handle)
//!   (or, with `--by-boid`, boid by boid: each boid's `Accel` written by a
//!   parallel query while the `View` beside it reads every neighbour,
//!   `query_mut_and_view`: simpler, and about twice as slow, since every
//!   boid is read once per neighbour);
//! - `Integrate` moves every boid in parallel; a boid that crossed into
//!   another cell gets its new `Cell` through a per-batch command buffer
//!   (`par_fold`), played back in order, and the index re-files it: the grid
//!   is kept current by the context, not rebuilt;
//! - `Lifecycle` and `Counting`, two read-only systems, run side by side
//!   (`system::Parallel`): one records the deaths and rebirths of the boids
//!   whose time is up into its command buffer, the other the `Census`.
//!
//! `--by-hand` runs the same simulation written by hand instead (`by_hand.rs`:
//! flat arrays, a flat grid rebuilt every frame), for comparison; the bench
//! `boids` times both in one run. `--check` runs both from the same start
//! and checks that they compute the same frames.
//!
//! Run it with `cargo run --release --features parallel --example boids`
//! (options: `--boids N`, `--frames N`, `--by-boid`, `--by-hand`, `--check`).

mod by_hand;
mod flock;

use std::time::Instant;

use flock::{Census, Flock, Serial, Steering};
use reactecs::Index;

fn main() {
    let mut boids = 100_000;
    let mut frames = 30;
    let mut by_hand = false;
    let mut check = false;
    let mut steering = Steering::ByCell;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> usize {
            args.next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{name} takes a number"))
        };
        match arg.as_str() {
            "--boids" => boids = number("--boids"),
            "--frames" => frames = number("--frames"),
            "--by-hand" => by_hand = true,
            "--check" => check = true,
            "--by-boid" => steering = Steering::ByBoid,
            other => panic!("unknown option {other}: try --boids N, --frames N, --by-boid, --by-hand, --check"),
        }
    }
    if check {
        same_frames(boids, frames);
        return;
    }
    let threads = rayon::current_num_threads();
    let start = Instant::now();
    if by_hand {
        let mut flock = by_hand::ByHand::new(boids);
        for _ in 0..frames {
            flock.frame();
        }
        let per_frame = start.elapsed() / frames.max(1) as u32;
        println!("by hand: {boids} boids, {frames} frames on {threads} threads, {per_frame:?} per frame");
        return;
    }
    let mut flock = Flock::new(boids, steering);
    let side = flock.world.side;
    println!("{boids} boids on a grid of {side} x {side} cells");
    flock.systems.set_timing(true);
    for frame in 1..=frames {
        flock.frame();
        if frame % 10 == 0 || frame == frames {
            let census = *flock.game.unique::<Census>().expect("counted every frame");
            println!(
                "frame {frame:>4}: {} boids, mean speed {:.3}, {} born last frame",
                census.boids, census.mean_speed, census.births
            );
        }
    }
    let per_frame = start.elapsed() / frames.max(1) as u32;
    assert_eq!(flock.game.query::<&Serial>().count(), boids, "every death is a rebirth");
    let grid = flock.game.index(flock.grid).expect("the flock's grid");
    assert_eq!(grid.entity_count(), boids, "the grid files every boid");
    println!("reactecs: {boids} boids, {frames} frames on {threads} threads, {per_frame:?} per frame");
    println!("{}", flock.systems.timings());
}

/// Runs the flock on reactecs and by hand from the same start, and checks
/// that every boid is where the other run has it: exactly after the first
/// frame (both visit neighbours in the same order then), and within a small
/// tolerance after each later one (the grid index lists a cell's boids in
/// the order they entered it, the hand-built grid by boid number, so sums
/// over neighbours are added up in another order).
fn same_frames(boids: usize, frames: usize) {
    let mut by_cell = Flock::new(boids, Steering::ByCell);
    let mut by_boid = Flock::new(boids, Steering::ByBoid);
    let mut hand = by_hand::ByHand::new(boids);
    assert_eq!(by_cell.state(), hand.state(), "the same start");
    for frame in 1..=frames.min(5) {
        by_cell.frame();
        by_boid.frame();
        hand.frame();
        assert_eq!(
            by_cell.state(),
            by_boid.state(),
            "both ways of steering compute the same frames"
        );
        let (a, b) = (by_cell.state(), hand.state());
        assert_eq!(a.len(), b.len());
        if frame == 1 {
            assert_eq!(a, b, "frame 1 is computed identically");
        }
        let worst = a
            .iter()
            .zip(&b)
            .map(|((s, p, v), (t, q, w))| {
                assert_eq!(s, t);
                [p.x - q.x, p.y - q.y, v.x - w.x, v.y - w.y]
                    .iter()
                    .fold(0.0f32, |m, d| m.max(d.abs()))
            })
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-3, "frame {frame}: the runs differ by {worst}");
        println!(
            "frame {frame}: {} boids, the runs agree (largest difference {worst:e})",
            a.len()
        );
    }
}
