//! hecs' columns, written as its documentation recommends for speed:
//! `spawn_batch`, `query_mut` (no borrow checks at run time), rayon's
//! `par_bridge` over `into_iter_batched` for parallel work (hecs has no
//! parallel iterator of its own), `query_one_mut` for random access, and
//! for reactive work hand-kept lists of changed entities with a flag per
//! entity slot, as hecs leaves change tracking to the user.

use hecs::{Entity, World};
use rayon::prelude::*;

use crate::cell::{Cell, Column, Held as Kept};
use crate::data::{
    A, AddA, AddB, B, C, D, Data, E, F, G, H, Held, I, Id, J, K, L, M, N, O, P, Pos, Position, Q, R, S, T, Tag,
    Transform, U, V, Value, Vel, Velocity, W, X, Y, Z,
};
use crate::params::Params;
use crate::work::{self, Doubling, KeyMap, Keys, Seen, SparsePlan};

/// hecs' columns.
pub fn columns() -> Vec<Column> {
    vec![
        Column::timed(
            "simple_insert",
            "hecs",
            "World::new, then spawn_batch of 4-tuples",
            |p| {
                Box::new(Insert {
                    p: p.clone(),
                    world: None,
                })
            },
        ),
        Column::timed(
            "simple_iter",
            "hecs",
            "query_mut::<(&mut Position, &Velocity)>(), a for loop",
            |p| Box::new(Iter::new(p)),
        ),
        Column::timed("fragmented_iter", "hecs", "query_mut::<&mut Data>(), a for loop", |p| {
            Box::new(Fragmented::new(p))
        }),
        Column::timed(
            "heavy_compute",
            "hecs",
            "query_mut().into_iter_batched(64) with rayon's par_bridge",
            |p| Box::new(Heavy::new(p)),
        ),
        Column::timed(
            "add_remove",
            "hecs",
            "insert_one(e, B) then remove_one::<B>(e) per entity",
            |p| Box::new(AddRemove::new(p)),
        ),
        Column::timed(
            "reactive_replace",
            "hecs",
            "query_mut::<(Entity, &mut Pos, &Vel)>() pushing each changed entity on a hand-kept list (flag per slot); consumer reads through a view",
            |p| Box::new(Replace::new(p, false)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "hecs",
            "view_mut::<(&mut Pos, &Vel)>() borrowed once per frame, get_mut per changed entity (hecs' fastest random access), pushed on a hand-kept list (flag per slot); consumer reads through a view",
            |p| Box::new(Replace::new(p, true)),
        ),
        Column::timed(
            "reactive_add_remove",
            "hecs",
            "insert_one / remove_one per entity, each pushed on a hand-kept list (joined, left; flags per slot); consumers read Held through a view",
            |p| Box::new(Tags::new(p)),
        ),
        Column::timed(
            "index_lookup",
            "hecs",
            "a foldhash HashMap<u64, Entity> beside the world, then a view::<&Value>() get",
            |p| Box::new(Lookup::new(p)),
        ),
        Column::memory("hecs", "spawn_batch of 1M (Position, Velocity)", memory),
    ]
}

struct Insert {
    p: Params,
    world: Option<World>,
}

impl Cell for Insert {
    fn prepare(&mut self) {
        self.world = None;
    }

    fn run(&mut self) {
        let mut world = World::new();
        world.spawn_batch((0..self.p.insert_entities).map(work::insert_bundle));
        self.world = Some(world);
    }

    fn verify(&mut self) -> Result<(), String> {
        let world = self.world.as_mut().ok_or("no run yet")?;
        let sum = world
            .query_mut::<&Position>()
            .into_iter()
            .map(|p| f64::from(p.0[0]))
            .sum();
        work::check_insert(&self.p, world.len() as usize, sum)
    }
}

struct Iter {
    p: Params,
    world: World,
    runs: usize,
}

impl Iter {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        world.spawn_batch((0..p.iter_entities).map(|_| work::iter_bundle()));
        Iter {
            p: p.clone(),
            world,
            runs: 0,
        }
    }
}

impl Cell for Iter {
    fn run(&mut self) {
        for (p, v) in self.world.query_mut::<(&mut Position, &Velocity)>() {
            work::advance(&mut p.0, &v.0);
        }
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let positions = self.world.query_mut::<&Position>();
        work::check_iter(&self.p, self.runs, positions.into_iter().map(|p| &p.0))
    }
}

struct Fragmented {
    p: Params,
    world: World,
    doubling: Doubling,
}

impl Fragmented {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        let n = p.fragment_per_kind;
        macro_rules! spawn {
            ($($kind:ident),+) => {$(
                world.spawn_batch((0..n).map(|_| ($kind(0.0), Data(1.0))));
            )+};
        }
        spawn!(
            A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z
        );
        Fragmented {
            p: p.clone(),
            world,
            doubling: Doubling::default(),
        }
    }
}

impl Cell for Fragmented {
    fn prepare(&mut self) {
        if self.doubling.before_run(&self.p) {
            for d in self.world.query_mut::<&mut Data>() {
                d.0 = 1.0;
            }
        }
    }

    fn run(&mut self) {
        for d in self.world.query_mut::<&mut Data>() {
            work::double(&mut d.0);
        }
    }

    fn verify(&mut self) -> Result<(), String> {
        let values = self.world.query_mut::<&Data>().into_iter().map(|d| d.0);
        self.doubling.check(&self.p, values)
    }
}

struct Heavy {
    p: Params,
    world: World,
    runs: usize,
}

impl Heavy {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        world.spawn_batch((0..p.heavy_entities).map(|_| work::heavy_bundle()));
        Heavy {
            p: p.clone(),
            world,
            runs: 0,
        }
    }
}

impl Cell for Heavy {
    fn run(&mut self) {
        let inversions = self.p.heavy_inversions;
        self.world
            .query_mut::<(&mut Position, &mut Transform)>()
            .into_iter_batched(64)
            .par_bridge()
            .for_each(|batch| {
                for (p, t) in batch {
                    work::heavy(&mut t.0, &mut p.0, inversions);
                }
            });
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let rows = self.world.query_mut::<(&Transform, &Position)>();
        work::check_heavy(&self.p, self.runs, rows.into_iter().map(|(t, p)| (&t.0, &p.0)))
    }
}

struct AddRemove {
    p: Params,
    world: World,
    entities: Vec<Entity>,
    taken: f64,
    runs: usize,
}

impl AddRemove {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        let entities = world
            .spawn_batch((0..p.add_remove_entities).map(|i| (AddA(i as f32),)))
            .collect();
        AddRemove {
            p: p.clone(),
            world,
            entities,
            taken: 0.0,
            runs: 0,
        }
    }
}

impl Cell for AddRemove {
    fn run(&mut self) {
        for (i, &e) in self.entities.iter().enumerate() {
            self.world.insert_one(e, AddB(work::add_remove_b(i))).expect("alive");
        }
        for &e in &self.entities {
            self.taken += f64::from(self.world.remove_one::<AddB>(e).expect("has B").0);
        }
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let world = &self.world;
        let a = self
            .entities
            .iter()
            .map(|&e| world.get::<&AddA>(e).map_or(f32::NAN, |a| a.0));
        let left = self.entities.iter().filter(|&&e| world.satisfies::<&AddB>(e)).count();
        work::check_add_remove(&self.p, self.runs, self.taken, a, left)
    }
}

/// A hand-kept list of entities, with a flag per entity slot so that each
/// is listed once.
struct Changed {
    flags: Vec<bool>,
    list: Vec<Entity>,
}

impl Changed {
    fn new(n: usize) -> Self {
        Changed {
            flags: vec![false; n],
            list: Vec::with_capacity(n),
        }
    }

    #[inline(always)]
    fn mark(&mut self, e: Entity) {
        let flag = &mut self.flags[e.id() as usize];
        if !*flag {
            *flag = true;
            self.list.push(e);
        }
    }

    /// Visits each listed entity's `C` through a view, then forgets them.
    #[inline(always)]
    fn drain<C: hecs::Component>(&mut self, world: &World, mut visit: impl FnMut(&C)) {
        let view = world.view::<&C>();
        for &e in &self.list {
            visit(view.get(e).expect("alive with the component"));
            self.flags[e.id() as usize] = false;
        }
        self.list.clear();
    }
}

struct Replace {
    p: Params,
    plan: Option<SparsePlan>,
    world: World,
    entities: Vec<Entity>,
    changed: Changed,
    seen: Seen,
    frames: usize,
}

impl Replace {
    fn new(p: &Params, sparse: bool) -> Self {
        let n = if sparse { p.sparse_entities } else { p.replace_entities };
        let mut world = World::new();
        let entities = world
            .spawn_batch((0..n).map(|i| (Pos(work::start_position(i)), Vel(work::VELOCITY))))
            .collect();
        Replace {
            p: p.clone(),
            plan: sparse.then(|| SparsePlan::new(p)),
            world,
            entities,
            changed: Changed::new(n),
            seen: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Replace {
    fn run(&mut self) {
        match &self.plan {
            Some(plan) => {
                let mut view = self.world.view_mut::<(&mut Pos, &Vel)>();
                for &i in plan.frame(self.frames) {
                    let e = self.entities[i as usize];
                    let (p, v) = view.get_mut(e).expect("alive");
                    p.0 = work::moved(&p.0, &v.0);
                    self.changed.mark(e);
                }
            }
            None => {
                for (e, p, v) in self.world.query_mut::<(Entity, &mut Pos, &Vel)>() {
                    p.0 = work::moved(&p.0, &v.0);
                    self.changed.mark(e);
                }
            }
        }
        let seen = &mut self.seen;
        self.changed.drain(&self.world, |p: &Pos| seen.visit(f64::from(p.0[0])));
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let sum = self
            .world
            .query_mut::<&Pos>()
            .into_iter()
            .map(|p| f64::from(p.0[0]))
            .sum();
        match &self.plan {
            Some(plan) => plan.check(&self.p, self.frames, self.seen, sum),
            None => work::check_replace(&self.p, self.frames, self.seen, sum),
        }
    }
}

struct Tags {
    p: Params,
    world: World,
    entities: Vec<Entity>,
    joined: Changed,
    left: Changed,
    seen_joined: Seen,
    seen_left: Seen,
    frames: usize,
}

impl Tags {
    fn new(p: &Params) -> Self {
        let n = p.tag_entities;
        let mut world = World::new();
        let entities = world.spawn_batch((0..n as u64).map(|i| (Held(i),))).collect();
        Tags {
            p: p.clone(),
            world,
            entities,
            joined: Changed::new(n),
            left: Changed::new(n),
            seen_joined: Seen::default(),
            seen_left: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Tags {
    fn run(&mut self) {
        for &e in self.entities.iter().step_by(2) {
            self.world.insert_one(e, Tag).expect("alive");
            self.joined.mark(e);
        }
        let seen = &mut self.seen_joined;
        self.joined.drain(&self.world, |h: &Held| seen.visit(h.0 as f64));
        for &e in self.entities.iter().step_by(2) {
            self.world.remove_one::<Tag>(e).expect("has the tag");
            self.left.mark(e);
        }
        let seen = &mut self.seen_left;
        self.left.drain(&self.world, |h: &Held| seen.visit(h.0 as f64));
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let still = self.world.query_mut::<&Tag>().into_iter().count();
        work::check_tags(&self.p, self.frames, self.seen_joined, self.seen_left, still)
    }
}

struct Lookup {
    keys: Keys,
    world: World,
    by_key: KeyMap<Entity>,
    total: f64,
    runs: usize,
}

impl Lookup {
    fn new(p: &Params) -> Self {
        let keys = Keys::new(p);
        let mut world = World::new();
        let entities: Vec<Entity> = world
            .spawn_batch(
                keys.keys
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| (Id(k), Value(work::index_value(i)))),
            )
            .collect();
        let by_key = keys.keys.iter().copied().zip(entities).collect();
        Lookup {
            keys,
            world,
            by_key,
            total: 0.0,
            runs: 0,
        }
    }
}

impl Cell for Lookup {
    fn run(&mut self) {
        let values = self.world.view::<&Value>();
        let mut sum = 0.0;
        for key in &self.keys.lookups {
            sum += f64::from(values.get(self.by_key[key]).expect("alive with a Value").0);
        }
        self.total += sum;
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        self.keys.check(self.runs, self.total)
    }
}

fn memory(p: &Params) -> (Kept, Result<(), String>) {
    let mut world = World::new();
    world.spawn_batch((0..p.memory_entities).map(work::memory_bundle));
    let sum = world
        .query_mut::<&Position>()
        .into_iter()
        .map(|p| f64::from(p.0[0]))
        .sum();
    let check = work::check_memory(p, world.len() as usize, sum);
    (Box::new(world), check)
}
