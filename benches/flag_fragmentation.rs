//! flag_fragmentation: 10,000 entities with Position and Velocity, each
//! holding a random subset of 8 independent tags; a query
//! `(&mut Position, &Velocity)` adds velocity to position for every entity.
//! API measured: `Context::query_mut` then `QueryMut::for_each`.
//!
//! Baselines: plain `Vec`s of Position and Velocity walked in lock-step
//! (`baseline_vecs`), and the same query over the same 10,000 entities
//! without any tag (`reactecs_no_tags`, one archetype). `reactecs_flags`
//! declares the tags `flag`: they stay out of archetypes, so the entities
//! still share one archetype and the query should cost what it costs
//! without tags. `reactecs_tags` keeps the same tags
//! in archetypes, which splits the entities over up to 2^8 = 256 archetypes
//! (shown for contrast: that is what flags avoid).

mod common;

use common::{Position, Velocity, report_ratios};
use criterion::Criterion;
use reactecs::prelude::*;

const N: usize = 10_000;

macro_rules! unit_structs {
    ($($name:ident),+) => {
        $(#[derive(Clone, Copy, Debug, Default)] struct $name;)+
    };
}
unit_structs!(F0, F1, F2, F3, F4, F5, F6, F7, T0, T1, T2, T3, T4, T5, T6, T7);
reactecs::component!(flag F0, flag F1, flag F2, flag F3, flag F4, flag F5, flag F6, flag F7);
reactecs::component!(T0, T1, T2, T3, T4, T5, T6, T7);

/// A deterministic xorshift, so every run builds the same world.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Sets the tags whose bits are set in `bits` on `e`: flags, or tags kept
/// in archetypes.
fn tag(game: &mut Context, e: Entity, bits: u64, flags: bool) {
    macro_rules! set {
        ($($i:literal => $flag:ident, $tag:ident);+) => {
            $(if bits >> $i & 1 == 1 {
                if flags {
                    game.set_flag::<$flag>(e, true).unwrap();
                } else {
                    game.set_flag::<$tag>(e, true).unwrap();
                }
            })+
        };
    }
    set!(0 => F0, T0; 1 => F1, T1; 2 => F2, T2; 3 => F3, T3; 4 => F4, T4; 5 => F5, T5; 6 => F6, T6; 7 => F7, T7);
}

/// N entities with Position and Velocity, and (unless `tags` is `None`)
/// random tags, as flags (`Some(true)`) or archetype tags.
fn world(tags: Option<bool>) -> Context {
    let mut game = Context::new();
    let entities = game
        .create_entities_with((0..N).map(|i| (Position([0.0; 3]), Velocity([i as f32, 1.0, 0.0]))))
        .unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    if let Some(flags) = tags {
        for &e in &entities {
            tag(&mut game, e, rng.next() & 0xFF, flags);
        }
    }
    game
}

fn step(game: &mut Context) {
    game.query_mut::<(&mut Position, &Velocity)>()
        .expect("no aliasing")
        .for_each(|(p, v)| {
            p.0[0] += v.0[0];
            p.0[1] += v.0[1];
            p.0[2] += v.0[2];
        });
}

/// The sum of every Position's y: the number of steps taken, times N.
fn total_y(game: &Context) -> f32 {
    game.query::<&Position>().iter().map(|p| p.0[1]).sum()
}

fn bench(c: &mut Criterion) {
    let mut plain = world(None);
    let mut flagged = world(Some(true));
    let mut tagged = world(Some(false));
    // The flags leave one archetype; the archetype tags make many.
    assert_eq!(flagged.storage_stats().archetypes, plain.storage_stats().archetypes);
    assert!(tagged.storage_stats().archetypes > 200);
    assert!(flagged.storage_stats().sparse_values > N * 3);
    for game in [&mut plain, &mut flagged, &mut tagged] {
        step(game);
        assert_eq!(total_y(game), N as f32);
        game.check_invariants().unwrap();
    }

    let mut positions = vec![Position([0.0; 3]); N];
    let velocities: Vec<Velocity> = (0..N).map(|i| Velocity([i as f32, 1.0, 0.0])).collect();
    let vec_step = |positions: &mut [Position]| {
        for (p, v) in positions.iter_mut().zip(&velocities) {
            p.0[0] += v.0[0];
            p.0[1] += v.0[1];
            p.0[2] += v.0[2];
        }
    };
    vec_step(&mut positions);
    assert_eq!(positions.iter().map(|p| p.0[1]).sum::<f32>(), N as f32);

    let mut group = c.benchmark_group("flag_fragmentation");
    group.bench_function("baseline_vecs", |b| b.iter(|| vec_step(&mut positions)));
    assert!(positions[N - 1].0[1] > 1.0, "the steps were taken");
    for (name, game) in [
        ("reactecs_no_tags", &mut plain),
        ("reactecs_flags", &mut flagged),
        ("reactecs_tags", &mut tagged),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                step(game);
            })
        });
        assert!(total_y(game) > N as f32, "the steps were taken");
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios(
        "flag_fragmentation",
        "baseline_vecs",
        &["reactecs_no_tags", "reactecs_flags", "reactecs_tags"],
    );
    report_ratios(
        "flag_fragmentation",
        "reactecs_no_tags",
        &["reactecs_flags", "reactecs_tags"],
    );
}
