//! group_entities: `Group::entities()` called once per operation (Entitas'
//! `GetEntities` habit) against once per frame, on a group of 100,000
//! entities. A frame is 1,000 operations; one operation destroys a member
//! picked from the group's list and creates a new member, so the group
//! keeps its size and changes at every operation.
//!
//! API measured: `Context::group(id).entities()`, `Context::destroy_entity`,
//! `Context::create_entity_with`.
//!
//! - `per_op`: `entities()` before every operation, the list dropped before
//!   the operation;
//! - `per_op_held`: the same, the list held across the operation (a `for`
//!   loop over the list that changes entities as it goes);
//! - `per_frame`: one `entities()` per frame, the 1,000 victims taken from
//!   that list.
//!
//! Baseline: what one writes by hand: entity slots with their Position and
//! liveness, a member list kept current by swap-remove with a position per
//! slot. `baseline_per_op` reads that list directly (a borrow: free);
//! `baseline_per_frame` copies it once per frame, as one would to change
//! entities while going through it.
//!
//! Each timed frame checks its result: every victim was a live member (a
//! stale list would hand out a destroyed entity, and `destroy_entity` would
//! refuse it), and the group has 100,000 members at its end. Outside the
//! timed loops, each list is compared with the group's `iter()`.

mod common;

use std::collections::BTreeSet;
use std::hint::black_box;

use common::{Position, report_ratios};
use criterion::{Criterion, SamplingMode};
use reactecs::prelude::*;

const N: usize = 100_000;
const OPS: usize = 1_000;
/// A prime that does not divide `N`: `k * STRIDE % N` is distinct for the
/// first `N` values of `k`.
const STRIDE: usize = 7_919;

/// The victim of operation `k` in a list of `len` entities.
#[inline]
fn pick(k: usize, len: usize) -> usize {
    (k * STRIDE) % len
}

/// The hand-written equivalent: slots with their Position and liveness, and
/// the member list kept current by swap-remove.
struct Plain {
    positions: Vec<Position>,
    alive: Vec<bool>,
    /// The members, by slot.
    members: Vec<u32>,
    /// Per slot, its place in `members` (`u32::MAX`: not a member).
    at: Vec<u32>,
    /// Free slots, reused last in first out.
    free: Vec<u32>,
}

impl Plain {
    fn new() -> Self {
        Plain {
            positions: (0..N).map(|i| Position([i as f32, 0.0, 0.0])).collect(),
            alive: vec![true; N],
            members: (0..N as u32).collect(),
            at: (0..N as u32).collect(),
            free: Vec::new(),
        }
    }

    fn destroy(&mut self, slot: u32) -> Result<(), ()> {
        if !std::mem::replace(&mut self.alive[slot as usize], false) {
            return Err(());
        }
        let place = std::mem::replace(&mut self.at[slot as usize], u32::MAX) as usize;
        self.members.swap_remove(place);
        if let Some(&moved) = self.members.get(place) {
            self.at[moved as usize] = place as u32;
        }
        self.free.push(slot);
        Ok(())
    }

    fn create(&mut self, position: Position) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.positions[slot as usize] = position;
                slot
            }
            None => {
                self.positions.push(position);
                self.alive.push(false);
                self.at.push(u32::MAX);
                (self.positions.len() - 1) as u32
            }
        };
        self.alive[slot as usize] = true;
        self.at[slot as usize] = self.members.len() as u32;
        self.members.push(slot);
        slot
    }
}

fn baseline_per_op(plain: &mut Plain) {
    for k in 0..OPS {
        let list = &plain.members;
        let victim = list[pick(k, list.len())];
        plain.destroy(black_box(victim)).expect("a live member");
        plain.create(Position([k as f32, 0.0, 0.0]));
    }
    assert_eq!(plain.members.len(), N);
}

fn baseline_per_frame(plain: &mut Plain) {
    let list = plain.members.clone();
    for k in 0..OPS {
        let victim = list[pick(k, list.len())];
        plain.destroy(black_box(victim)).expect("a live member");
        plain.create(Position([k as f32, 0.0, 0.0]));
    }
    assert_eq!(plain.members.len(), N);
}

fn per_op(game: &mut Context, group: GroupId) {
    for k in 0..OPS {
        let list = game.group(group).expect("the context's group").entities();
        let victim = list[pick(k, list.len())];
        drop(list);
        game.destroy_entity(black_box(victim)).expect("a live member");
        game.create_entity_with(Position([k as f32, 0.0, 0.0]))
            .expect("one component");
    }
    assert_eq!(game.group(group).expect("the context's group").len(), N);
}

fn per_op_held(game: &mut Context, group: GroupId) {
    for k in 0..OPS {
        let list = game.group(group).expect("the context's group").entities();
        let victim = list[pick(k, list.len())];
        game.destroy_entity(black_box(victim)).expect("a live member");
        game.create_entity_with(Position([k as f32, 0.0, 0.0]))
            .expect("one component");
        black_box(&list);
    }
    assert_eq!(game.group(group).expect("the context's group").len(), N);
}

fn per_frame(game: &mut Context, group: GroupId) {
    let list = game.group(group).expect("the context's group").entities();
    for k in 0..OPS {
        let victim = list[pick(k, list.len())];
        game.destroy_entity(black_box(victim)).expect("a live member");
        game.create_entity_with(Position([k as f32, 0.0, 0.0]))
            .expect("one component");
    }
    assert_eq!(game.group(group).expect("the context's group").len(), N);
}

/// A context of `N` entities with Position and the group `AllOf(Position)`.
fn world() -> (Context, GroupId) {
    let mut game = Context::new();
    game.create_entities_with((0..N).map(|i| Position([i as f32, 0.0, 0.0])))
        .expect("one component");
    let group = game.add_group(Matcher::all_of::<Position>());
    (game, group)
}

/// The group's list is its members, each once.
fn check(game: &Context, group: GroupId) {
    let group = game.group(group).expect("the context's group");
    let list = group.entities();
    let listed: BTreeSet<Entity> = list.iter().copied().collect();
    assert_eq!(listed.len(), list.len(), "no entity twice");
    assert_eq!(listed, group.iter().collect::<BTreeSet<_>>());
    assert_eq!(list.len(), N);
}

fn bench(c: &mut Criterion) {
    let mut plain = Plain::new();
    let mut worlds: Vec<(Context, GroupId)> = (0..3).map(|_| world()).collect();

    // One checked frame of each, outside the timed loops.
    baseline_per_op(&mut plain);
    baseline_per_frame(&mut plain);
    assert_eq!(plain.members.iter().filter(|&&s| plain.alive[s as usize]).count(), N);
    for ((game, group), frame) in worlds.iter_mut().zip([per_op, per_op_held, per_frame]) {
        frame(game, *group);
        check(game, *group);
        game.check_invariants().expect("consistent");
    }

    let mut bench_group = c.benchmark_group("group_entities");
    // A `per_op` frame took about a second before lists were kept current:
    // flat sampling, few samples.
    bench_group.sample_size(10);
    bench_group.sampling_mode(SamplingMode::Flat);
    bench_group.bench_function("baseline_per_op", |b| b.iter(|| baseline_per_op(&mut plain)));
    bench_group.bench_function("baseline_per_frame", |b| b.iter(|| baseline_per_frame(&mut plain)));
    let [(game_op, group_op), (game_held, group_held), (game_frame, group_frame)] = &mut worlds[..] else {
        unreachable!("three worlds")
    };
    bench_group.bench_function("per_op", |b| b.iter(|| per_op(game_op, *group_op)));
    bench_group.bench_function("per_op_held", |b| b.iter(|| per_op_held(game_held, *group_held)));
    bench_group.bench_function("per_frame", |b| b.iter(|| per_frame(game_frame, *group_frame)));
    bench_group.finish();
    for (game, group) in &worlds {
        check(game, *group);
        game.check_invariants().expect("consistent");
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios(
        "group_entities",
        "baseline_per_frame",
        &["baseline_per_op", "per_op", "per_op_held", "per_frame"],
    );
}
