//! The plain-Rust column: what a careful program without an ECS would write.
//! Rows in `Vec`s of structs, a `Vec<Option<B>>` for a component that comes
//! and goes, hand-kept dirty flags and lists for what changed, a foldhash
//! `HashMap` from key to row.

use rayon::prelude::*;

use crate::by_hand::ByHand;
use crate::cell::{Cell, Column, Held};
use crate::data::{Position, Rotation, Transform, Velocity};
use crate::params::Params;
use crate::work::{self, BoidsModel, Doubling, KeyMap, Keys, Seen, SparsePlan};

/// The baseline's columns.
pub fn columns() -> Vec<Column> {
    vec![
        Column::timed("simple_insert", "baseline", "collect into a Vec of structs", |p| {
            Box::new(Insert {
                p: p.clone(),
                rows: Vec::new(),
            })
        }),
        Column::timed("simple_iter", "baseline", "for loop over a Vec of structs", |p| {
            Box::new(Iter::new(p))
        }),
        Column::timed(
            "fragmented_iter",
            "baseline",
            "one Vec of (data, kind, kind value) rows",
            |p| Box::new(Fragmented::new(p)),
        ),
        Column::timed(
            "heavy_compute",
            "baseline",
            "rayon par_iter_mut over a Vec of structs",
            |p| Box::new(Heavy::new(p)),
        ),
        Column::timed(
            "add_remove",
            "baseline",
            "a Vec<Option<B>> beside a Vec of A, set then take per entity",
            |p| Box::new(AddRemove::new(p)),
        ),
        Column::timed(
            "reactive_replace",
            "baseline",
            "Vecs of components, a dirty flag per entity and a dirty list",
            |p| Box::new(Replace::new(p)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "baseline",
            "Vecs of components, a dirty flag per entity and a dirty list",
            |p| Box::new(Sparse::new(p)),
        ),
        Column::timed(
            "reactive_add_remove",
            "baseline",
            "a bool per entity and two dirty lists with flags",
            |p| Box::new(Tags::new(p)),
        ),
        Column::timed(
            "index_lookup",
            "baseline",
            "foldhash HashMap<u64, usize> into a Vec of records",
            |p| Box::new(Lookup::new(p)),
        ),
        Column::timed(
            "boids",
            "baseline",
            "the example's by_hand.rs: flat arrays indexed by boid, a flat grid rebuilt every frame (a counting sort by cell), steering boid by boid and integration with rayon par_iter_mut, births in place",
            |p| Box::new(Boids::new(p)),
        ),
        Column::memory("baseline", "a Vec of (Position, Velocity)", memory),
    ]
}

/// ecs_bench_suite's four components, side by side.
#[derive(Clone, Copy)]
struct Row {
    transform: Transform,
    position: Position,
    #[allow(dead_code, reason = "the row holds what an entity holds")]
    rotation: Rotation,
    velocity: Velocity,
}

impl Row {
    fn of((transform, position, rotation, velocity): (Transform, Position, Rotation, Velocity)) -> Self {
        Row {
            transform,
            position,
            rotation,
            velocity,
        }
    }
}

struct Insert {
    p: Params,
    rows: Vec<Row>,
}

impl Cell for Insert {
    fn prepare(&mut self) {
        self.rows = Vec::new();
    }

    fn run(&mut self) {
        self.rows = (0..self.p.insert_entities)
            .map(|i| Row::of(work::insert_bundle(i)))
            .collect();
    }

    fn verify(&mut self) -> Result<(), String> {
        let sum = self.rows.iter().map(|r| f64::from(r.position.0[0])).sum();
        work::check_insert(&self.p, self.rows.len(), sum)
    }
}

struct Iter {
    p: Params,
    rows: Vec<Row>,
    runs: usize,
}

impl Iter {
    fn new(p: &Params) -> Self {
        Iter {
            p: p.clone(),
            rows: (0..p.iter_entities).map(|_| Row::of(work::iter_bundle())).collect(),
            runs: 0,
        }
    }
}

impl Cell for Iter {
    fn run(&mut self) {
        for row in &mut self.rows {
            work::advance(&mut row.position.0, &row.velocity.0);
        }
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        work::check_iter(&self.p, self.runs, self.rows.iter().map(|r| &r.position.0))
    }
}

struct Fragmented {
    p: Params,
    rows: Vec<(f32, u8, f32)>,
    doubling: Doubling,
}

impl Fragmented {
    fn new(p: &Params) -> Self {
        Fragmented {
            p: p.clone(),
            rows: (0..26u8)
                .flat_map(|kind| (0..p.fragment_per_kind).map(move |_| (1.0, kind, 0.0)))
                .collect(),
            doubling: Doubling::default(),
        }
    }
}

impl Cell for Fragmented {
    fn prepare(&mut self) {
        if self.doubling.before_run(&self.p) {
            for row in &mut self.rows {
                row.0 = 1.0;
            }
        }
    }

    fn run(&mut self) {
        for row in &mut self.rows {
            work::double(&mut row.0);
        }
    }

    fn verify(&mut self) -> Result<(), String> {
        self.doubling.check(&self.p, self.rows.iter().map(|r| r.0))
    }
}

struct Heavy {
    p: Params,
    rows: Vec<Row>,
    runs: usize,
}

impl Heavy {
    fn new(p: &Params) -> Self {
        Heavy {
            p: p.clone(),
            rows: (0..p.heavy_entities).map(|_| Row::of(work::heavy_bundle())).collect(),
            runs: 0,
        }
    }
}

impl Cell for Heavy {
    fn run(&mut self) {
        let inversions = self.p.heavy_inversions;
        self.rows
            .par_iter_mut()
            .for_each(|row| work::heavy(&mut row.transform.0, &mut row.position.0, inversions));
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let rows = self.rows.iter().map(|r| (&r.transform.0, &r.position.0));
        work::check_heavy(&self.p, self.runs, rows)
    }
}

struct AddRemove {
    p: Params,
    a: Vec<f32>,
    b: Vec<Option<f32>>,
    taken: f64,
    runs: usize,
}

impl AddRemove {
    fn new(p: &Params) -> Self {
        AddRemove {
            p: p.clone(),
            a: (0..p.add_remove_entities).map(|i| i as f32).collect(),
            b: vec![None; p.add_remove_entities],
            taken: 0.0,
            runs: 0,
        }
    }
}

impl Cell for AddRemove {
    fn run(&mut self) {
        for i in 0..self.b.len() {
            let slot = &mut self.b[std::hint::black_box(i)];
            assert!(slot.is_none());
            *slot = Some(work::add_remove_b(i));
        }
        for i in 0..self.b.len() {
            let b = self.b[std::hint::black_box(i)].take().expect("added");
            self.taken += f64::from(b);
        }
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let left = self.b.iter().filter(|b| b.is_some()).count();
        work::check_add_remove(&self.p, self.runs, self.taken, self.a.iter().copied(), left)
    }
}

/// A hand-kept dirty list: a flag per row and the rows flagged, in order.
struct Dirty {
    flags: Vec<bool>,
    list: Vec<usize>,
}

impl Dirty {
    fn new(n: usize) -> Self {
        Dirty {
            flags: vec![false; n],
            list: Vec::with_capacity(n),
        }
    }

    #[inline(always)]
    fn mark(&mut self, i: usize) {
        if !self.flags[i] {
            self.flags[i] = true;
            self.list.push(i);
        }
    }

    /// Visits each flagged row once, then forgets them.
    #[inline(always)]
    fn drain(&mut self, mut visit: impl FnMut(usize)) {
        for &i in &self.list {
            visit(i);
            self.flags[i] = false;
        }
        self.list.clear();
    }
}

struct Replace {
    p: Params,
    positions: Vec<[f32; 3]>,
    velocities: Vec<[f32; 3]>,
    dirty: Dirty,
    seen: Seen,
    frames: usize,
}

impl Replace {
    fn new(p: &Params) -> Self {
        let n = p.replace_entities;
        Replace {
            p: p.clone(),
            positions: (0..n).map(work::start_position).collect(),
            velocities: vec![work::VELOCITY; n],
            dirty: Dirty::new(n),
            seen: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Replace {
    fn run(&mut self) {
        for i in 0..self.positions.len() {
            self.positions[i] = work::moved(&self.positions[i], &self.velocities[i]);
            self.dirty.mark(i);
        }
        let (positions, seen) = (&self.positions, &mut self.seen);
        self.dirty.drain(|i| seen.visit(f64::from(positions[i][0])));
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let sum = self.positions.iter().map(|p| f64::from(p[0])).sum();
        work::check_replace(&self.p, self.frames, self.seen, sum)
    }
}

struct Sparse {
    p: Params,
    plan: SparsePlan,
    positions: Vec<[f32; 3]>,
    velocities: Vec<[f32; 3]>,
    dirty: Dirty,
    seen: Seen,
    frames: usize,
}

impl Sparse {
    fn new(p: &Params) -> Self {
        let n = p.sparse_entities;
        Sparse {
            p: p.clone(),
            plan: SparsePlan::new(p),
            positions: (0..n).map(work::start_position).collect(),
            velocities: vec![work::VELOCITY; n],
            dirty: Dirty::new(n),
            seen: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Sparse {
    fn run(&mut self) {
        for &i in self.plan.frame(self.frames) {
            let i = i as usize;
            self.positions[i] = work::moved(&self.positions[i], &self.velocities[i]);
            self.dirty.mark(i);
        }
        let (positions, seen) = (&self.positions, &mut self.seen);
        self.dirty.drain(|i| seen.visit(f64::from(positions[i][0])));
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let sum = self.positions.iter().map(|p| f64::from(p[0])).sum();
        self.plan.check(&self.p, self.frames, self.seen, sum)
    }
}

struct Tags {
    p: Params,
    held: Vec<u64>,
    tagged: Vec<bool>,
    joined: Dirty,
    left: Dirty,
    seen_joined: Seen,
    seen_left: Seen,
    frames: usize,
}

impl Tags {
    fn new(p: &Params) -> Self {
        let n = p.tag_entities;
        Tags {
            p: p.clone(),
            held: (0..n as u64).collect(),
            tagged: vec![false; n],
            joined: Dirty::new(n),
            left: Dirty::new(n),
            seen_joined: Seen::default(),
            seen_left: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Tags {
    fn run(&mut self) {
        let n = self.held.len();
        for i in (0..n).step_by(2) {
            assert!(!self.tagged[i]);
            self.tagged[i] = true;
            self.joined.mark(i);
        }
        let (held, seen) = (&self.held, &mut self.seen_joined);
        self.joined.drain(|i| seen.visit(held[i] as f64));
        for i in (0..n).step_by(2) {
            assert!(self.tagged[i]);
            self.tagged[i] = false;
            self.left.mark(i);
        }
        let (held, seen) = (&self.held, &mut self.seen_left);
        self.left.drain(|i| seen.visit(held[i] as f64));
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let still = self.tagged.iter().filter(|&&t| t).count();
        work::check_tags(&self.p, self.frames, self.seen_joined, self.seen_left, still)
    }
}

/// What an entity holds in index_lookup.
struct Record {
    #[allow(dead_code, reason = "the record holds what an entity holds; only the value is read")]
    id: u64,
    value: f32,
}

struct Lookup {
    keys: Keys,
    by_key: KeyMap<usize>,
    records: Vec<Record>,
    total: f64,
    runs: usize,
}

impl Lookup {
    fn new(p: &Params) -> Self {
        let keys = Keys::new(p);
        Lookup {
            by_key: keys.keys.iter().enumerate().map(|(i, &k)| (k, i)).collect(),
            records: keys
                .keys
                .iter()
                .enumerate()
                .map(|(i, &id)| Record {
                    id,
                    value: work::index_value(i),
                })
                .collect(),
            keys,
            total: 0.0,
            runs: 0,
        }
    }
}

impl Cell for Lookup {
    fn run(&mut self) {
        let mut sum = 0.0;
        for key in &self.keys.lookups {
            sum += f64::from(self.records[self.by_key[key]].value);
        }
        self.total += sum;
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        self.keys.check(self.runs, self.total)
    }
}

/// boids: the example's hand-written flock, one frame per run.
struct Boids {
    flock: ByHand,
    model: BoidsModel,
    frames: usize,
}

impl Boids {
    fn new(p: &Params) -> Self {
        Boids {
            flock: ByHand::new(p.boids),
            model: BoidsModel::new(p),
            frames: 0,
        }
    }
}

impl Cell for Boids {
    fn prepare(&mut self) {
        if self.frames == work::BOID_FRAMES {
            self.flock = ByHand::new(self.flock.pos.len());
            self.frames = 0;
            self.run();
        }
    }

    fn run(&mut self) {
        self.flock.frame();
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        self.model.check(self.frames, &self.flock.state())
    }
}

fn memory(p: &Params) -> (Held, Result<(), String>) {
    let rows: Vec<(Position, Velocity)> = (0..p.memory_entities).map(work::memory_bundle).collect();
    let sum = rows.iter().map(|(pos, _)| f64::from(pos.0[0])).sum();
    let check = work::check_memory(p, rows.len(), sum);
    (Box::new(rows), check)
}
