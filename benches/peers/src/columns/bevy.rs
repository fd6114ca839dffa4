//! bevy_ecs' columns, written as its documentation recommends for speed: a
//! `World` driven directly with cached `QueryState`s (no schedule), batch
//! spawning, `par_iter_mut` on the compute task pool, `SparseSet` storage
//! for components added and removed often, and for reactive work the
//! `Changed` / `Added` filters and `RemovedComponents` (pull), or an
//! observer on `Insert` (push). boids, a whole frame of five systems, is a
//! `Schedule` of system functions: a twin of the example's `flock.rs`, step
//! for step.

use std::collections::HashMap;

use bevy_ecs::prelude::{
    Added, Changed, Commands, Entity, Insert, IntoScheduleConfigs, Local, On, Query, Res, ResMut, Resource, Schedule,
    World,
};
use bevy_ecs::query::QueryState;
use bevy_ecs::schedule::SingleThreadedExecutor;
use bevy_ecs::utils::Parallel;
use bevy_tasks::ComputeTaskPool;

use crate::cell::{Cell, Column, Held as Kept};
use crate::data::boid;
use crate::data::{
    A, AddA, AddB, B, C, D, Data, E, F, G, H, Held, I, Id, J, K, L, M, N, O, P, Pos, Position, Q, R, S, T, Tag,
    Transform, U, V, Value, Vel, Velocity, W, X, Y, Z,
};
use crate::flock::{self, Flocking, Vec2};
use crate::params::Params;
use crate::work::{self, BoidsModel, Doubling, KeyMap, Keys, Seen, SparsePlan};

/// bevy_ecs' columns.
pub fn columns() -> Vec<Column> {
    vec![
        Column::timed(
            "simple_insert",
            "bevy",
            "World::new, then spawn_batch of 4-tuples",
            |p| {
                Box::new(Insert_ {
                    p: p.clone(),
                    world: None,
                })
            },
        ),
        Column::timed(
            "simple_iter",
            "bevy",
            "a cached QueryState<(&mut Position, &Velocity)>, iter_mut().for_each",
            |p| Box::new(Iter::new(p)),
        ),
        Column::timed(
            "fragmented_iter",
            "bevy",
            "a cached QueryState<&mut Data>, iter_mut().for_each over 26 tables",
            |p| Box::new(Fragmented::new(p)),
        ),
        Column::timed(
            "heavy_compute",
            "bevy",
            "a cached QueryState, par_iter_mut().for_each on the compute task pool",
            |p| Box::new(Heavy::new(p)),
        ),
        Column::timed(
            "add_remove",
            "bevy",
            "B with SparseSet storage: entity_mut(e).insert(B) then take::<B>() per entity",
            |p| Box::new(AddRemove::new(p)),
        ),
        Column::timed(
            "reactive_replace",
            "bevy",
            "writer: cached QueryState<(&mut Pos, &Vel)>; consumer: cached QueryState<&Pos, Changed<Pos>>; clear_trackers per frame",
            |p| Box::new(Replace::new(p, false)),
        ),
        Column::timed(
            "reactive_replace",
            "bevy:get_mut",
            "writer: QueryState<(&mut Pos, &Vel)>::query_mut once per frame, Query::get_mut per entity from a kept entity list (by handle); the same Changed<Pos> consumer",
            |p| Box::new(Replace::new(p, true)),
        ),
        Column::timed(
            "reactive_replace",
            "bevy:observer",
            "entity_mut(e), read Pos and Vel, insert(Pos) per entity; an observer On<Insert<Pos>> reads each through a Query",
            |p| Box::new(Observed::new(p, false)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "bevy",
            "writer: QueryState<(&mut Pos, &Vel)>::query_mut once per frame, Query::get_mut per changed entity (bevy's fastest random access); consumer: QueryState<&Pos, Changed<Pos>>",
            |p| Box::new(Sparse::new(p)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "bevy:observer",
            "entity_mut(e), read Pos and Vel, insert(Pos) per changed entity; an observer On<Insert<Pos>>",
            |p| Box::new(Observed::new(p, true)),
        ),
        Column::timed(
            "reactive_add_remove",
            "bevy",
            "the tag with SparseSet storage, insert / remove per entity; consumers: QueryState<&Held, Added<Tag>> and world.removed::<Tag>()",
            |p| Box::new(Tags::new(p)),
        ),
        Column::timed(
            "index_lookup",
            "bevy",
            "a foldhash HashMap<u64, Entity> beside the world, then QueryState<&Value>::query once per run and Query::get per key (bevy's fastest random access)",
            |p| Box::new(Lookup::new(p)),
        ),
        Column::timed(
            "boids",
            "bevy",
            "a twin of the example's flock.rs on bevy: a Schedule (single-threaded executor) of chained systems; Tick on a Clock resource; Steer cell by cell in parallel (ComputeTaskPool::scope), neighbours found through a Grid resource (foldhash HashMap<Cell, Vec<Entity>>) and read once per cell with Query::get, Accel written afterwards with Query::get_mut; Integrate with par_iter_mut, a moved boid's GridCell set in place and the move re-filed in the grid from a Parallel<Vec> queue; Lifecycle (par_iter finds the ended lives; Commands despawn and spawn, the grid re-filed) and Counting (par_iter into Parallel sums)",
            |p| Box::new(Boids::new(p)),
        ),
        Column::memory("bevy", "spawn_batch of 1M (Position, Velocity)", memory),
    ]
}

#[allow(non_camel_case_types, reason = "`Insert` is bevy's event")]
struct Insert_ {
    p: Params,
    world: Option<World>,
}

impl Cell for Insert_ {
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
        let mut query = world.query::<&Position>();
        let (count, sum) = query
            .iter(world)
            .fold((0, 0.0), |(n, s), p| (n + 1, s + f64::from(p.0[0])));
        work::check_insert(&self.p, count, sum)
    }
}

struct Iter {
    p: Params,
    world: World,
    query: QueryState<(&'static mut Position, &'static Velocity)>,
    runs: usize,
}

impl Iter {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        world.spawn_batch((0..p.iter_entities).map(|_| work::iter_bundle()));
        let query = world.query();
        Iter {
            p: p.clone(),
            world,
            query,
            runs: 0,
        }
    }
}

impl Cell for Iter {
    fn run(&mut self) {
        self.query
            .iter_mut(&mut self.world)
            .for_each(|(mut p, v)| work::advance(&mut p.0, &v.0));
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let positions: Vec<[f32; 3]> = self.query.iter(&self.world).map(|(p, _)| p.0).collect();
        work::check_iter(&self.p, self.runs, positions.iter())
    }
}

struct Fragmented {
    p: Params,
    world: World,
    query: QueryState<&'static mut Data>,
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
        let query = world.query();
        Fragmented {
            p: p.clone(),
            world,
            query,
            doubling: Doubling::default(),
        }
    }
}

impl Cell for Fragmented {
    fn prepare(&mut self) {
        if self.doubling.before_run(&self.p) {
            self.query.iter_mut(&mut self.world).for_each(|mut d| d.0 = 1.0);
        }
    }

    fn run(&mut self) {
        self.query
            .iter_mut(&mut self.world)
            .for_each(|mut d| work::double(&mut d.0));
    }

    fn verify(&mut self) -> Result<(), String> {
        let values: Vec<f32> = self.query.iter(&self.world).map(|d| d.0).collect();
        self.doubling.check(&self.p, values.into_iter())
    }
}

struct Heavy {
    p: Params,
    world: World,
    query: QueryState<(&'static mut Position, &'static mut Transform)>,
    runs: usize,
}

impl Heavy {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        world.spawn_batch((0..p.heavy_entities).map(|_| work::heavy_bundle()));
        let query = world.query();
        Heavy {
            p: p.clone(),
            world,
            query,
            runs: 0,
        }
    }
}

impl Cell for Heavy {
    fn run(&mut self) {
        let inversions = self.p.heavy_inversions;
        self.query
            .par_iter_mut(&mut self.world)
            .for_each(|(mut p, mut t)| work::heavy(&mut t.0, &mut p.0, inversions));
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let rows: Vec<([[f32; 4]; 4], [f32; 3])> = self.query.iter(&self.world).map(|(p, t)| (t.0, p.0)).collect();
        work::check_heavy(&self.p, self.runs, rows.iter().map(|(t, p)| (t, p)))
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
            .spawn_batch((0..p.add_remove_entities).map(|i| AddA(i as f32)))
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
            self.world.entity_mut(e).insert(AddB(work::add_remove_b(i)));
        }
        for &e in &self.entities {
            let b = self.world.entity_mut(e).take::<AddB>().expect("has B");
            self.taken += f64::from(b.0);
        }
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let world = &self.world;
        let a = self
            .entities
            .iter()
            .map(|&e| world.get::<AddA>(e).map_or(f32::NAN, |a| a.0));
        let left = self
            .entities
            .iter()
            .filter(|&&e| world.get::<AddB>(e).is_some())
            .count();
        work::check_add_remove(&self.p, self.runs, self.taken, a, left)
    }
}

/// A world of movers, trackers cleared so that spawning is not a change.
fn movers(n: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let entities = world
        .spawn_batch((0..n).map(|i| (Pos(work::start_position(i)), Vel(work::VELOCITY))))
        .collect();
    world.clear_trackers();
    (world, entities)
}

fn sum_x(world: &mut World) -> f64 {
    let mut query = world.query::<&Pos>();
    query.iter(world).map(|p| f64::from(p.0[0])).sum()
}

/// The pull consumer: visits the entities whose Pos changed since the last
/// `clear_trackers`, then clears them.
fn consume_changed(world: &mut World, changed: &mut QueryState<&'static Pos, Changed<Pos>>, seen: &mut Seen) {
    for p in changed.iter(world) {
        seen.visit(f64::from(p.0[0]));
    }
    world.clear_trackers();
}

struct Replace {
    p: Params,
    world: World,
    /// Written by handle, one `get_mut` each, if kept; else by iteration.
    by_handle: Option<Vec<Entity>>,
    write: QueryState<(&'static mut Pos, &'static Vel)>,
    changed: QueryState<&'static Pos, Changed<Pos>>,
    seen: Seen,
    frames: usize,
}

impl Replace {
    fn new(p: &Params, by_handle: bool) -> Self {
        let (mut world, entities) = movers(p.replace_entities);
        Replace {
            p: p.clone(),
            write: world.query(),
            changed: world.query_filtered(),
            world,
            by_handle: by_handle.then_some(entities),
            seen: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Replace {
    fn run(&mut self) {
        match &self.by_handle {
            Some(entities) => {
                let mut query = self.write.query_mut(&mut self.world);
                for &e in entities {
                    let (mut p, v) = query.get_mut(e).expect("alive with Pos and Vel");
                    p.0 = work::moved(&p.0, &v.0);
                }
            }
            None => self
                .write
                .iter_mut(&mut self.world)
                .for_each(|(mut p, v)| p.0 = work::moved(&p.0, &v.0)),
        }
        consume_changed(&mut self.world, &mut self.changed, &mut self.seen);
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let sum = sum_x(&mut self.world);
        work::check_replace(&self.p, self.frames, self.seen, sum)
    }
}

struct Sparse {
    p: Params,
    plan: SparsePlan,
    world: World,
    entities: Vec<Entity>,
    write: QueryState<(&'static mut Pos, &'static Vel)>,
    changed: QueryState<&'static Pos, Changed<Pos>>,
    seen: Seen,
    frames: usize,
}

impl Sparse {
    fn new(p: &Params) -> Self {
        let (mut world, entities) = movers(p.sparse_entities);
        Sparse {
            p: p.clone(),
            plan: SparsePlan::new(p),
            write: world.query(),
            changed: world.query_filtered(),
            world,
            entities,
            seen: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Sparse {
    fn run(&mut self) {
        let mut query = self.write.query_mut(&mut self.world);
        for &i in self.plan.frame(self.frames) {
            let (mut p, v) = query
                .get_mut(self.entities[i as usize])
                .expect("alive with Pos and Vel");
            p.0 = work::moved(&p.0, &v.0);
        }
        consume_changed(&mut self.world, &mut self.changed, &mut self.seen);
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let sum = sum_x(&mut self.world);
        self.plan.check(&self.p, self.frames, self.seen, sum)
    }
}

/// What the observer has seen.
#[derive(Resource, Default)]
struct Tally(Seen);

/// Push style: every insert of Pos runs the observer, which reads the new Pos.
struct Observed {
    p: Params,
    plan: Option<SparsePlan>,
    world: World,
    entities: Vec<Entity>,
    frames: usize,
}

impl Observed {
    fn new(p: &Params, sparse: bool) -> Self {
        let n = if sparse { p.sparse_entities } else { p.replace_entities };
        let (mut world, entities) = movers(n);
        world.init_resource::<Tally>();
        world.add_observer(
            |inserted: On<Insert<Pos>>, positions: Query<&Pos>, mut tally: ResMut<Tally>| {
                let p = positions.get(inserted.event().entity).expect("just inserted");
                tally.0.visit(f64::from(p.0[0]));
            },
        );
        Observed {
            p: p.clone(),
            plan: sparse.then(|| SparsePlan::new(p)),
            world,
            entities,
            frames: 0,
        }
    }

    fn write(world: &mut World, e: Entity) {
        let mut entity = world.entity_mut(e);
        let p = entity.get::<Pos>().expect("has Pos").0;
        let v = entity.get::<Vel>().expect("has Vel").0;
        entity.insert(Pos(work::moved(&p, &v)));
    }
}

impl Cell for Observed {
    fn run(&mut self) {
        match &self.plan {
            Some(plan) => {
                for &i in plan.frame(self.frames) {
                    Self::write(&mut self.world, self.entities[i as usize]);
                }
            }
            None => {
                for &e in &self.entities {
                    Self::write(&mut self.world, e);
                }
            }
        }
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let seen = self.world.resource::<Tally>().0;
        let sum = sum_x(&mut self.world);
        match &self.plan {
            Some(plan) => plan.check(&self.p, self.frames, seen, sum),
            None => work::check_replace(&self.p, self.frames, seen, sum),
        }
    }
}

struct Tags {
    p: Params,
    world: World,
    entities: Vec<Entity>,
    added: QueryState<&'static Held, Added<Tag>>,
    held: QueryState<&'static Held>,
    joined: Seen,
    left: Seen,
    frames: usize,
}

impl Tags {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        let entities = world.spawn_batch((0..p.tag_entities as u64).map(Held)).collect();
        world.register_component::<Tag>();
        world.clear_trackers();
        Tags {
            p: p.clone(),
            added: world.query_filtered(),
            held: world.query(),
            world,
            entities,
            joined: Seen::default(),
            left: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Tags {
    fn run(&mut self) {
        for &e in self.entities.iter().step_by(2) {
            self.world.entity_mut(e).insert(Tag);
        }
        for held in self.added.iter(&self.world) {
            self.joined.visit(held.0 as f64);
        }
        for &e in self.entities.iter().step_by(2) {
            self.world.entity_mut(e).remove::<Tag>();
        }
        for e in self.world.removed::<Tag>() {
            let held = self.held.get(&self.world, e).expect("alive with Held");
            self.left.visit(held.0 as f64);
        }
        self.world.clear_trackers();
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let still = self
            .entities
            .iter()
            .filter(|&&e| self.world.get::<Tag>(e).is_some())
            .count();
        work::check_tags(&self.p, self.frames, self.joined, self.left, still)
    }
}

struct Lookup {
    keys: Keys,
    world: World,
    by_key: KeyMap<Entity>,
    values: QueryState<&'static Value>,
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
            values: world.query(),
            world,
            by_key,
            total: 0.0,
            runs: 0,
        }
    }
}

impl Cell for Lookup {
    fn run(&mut self) {
        let mut sum = 0.0;
        let values = self.values.query(&self.world);
        for key in &self.keys.lookups {
            let e = self.by_key[key];
            sum += f64::from(values.get(e).expect("alive with a Value").0);
        }
        self.total += sum;
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        self.keys.check(self.runs, self.total)
    }
}

// ---------------------------------------------------------------- boids

/// boids' grid: the boids filed under each cell, kept current as boids move,
/// die and are born (never rebuilt). A cell's boids are in the order they
/// were filed, except that taking one out moves the last into its place, as
/// in the example's `EntityIndex`.
#[derive(Resource)]
struct Grid {
    world: flock::World,
    cells: HashMap<flock::Cell, Vec<Entity>, foldhash::fast::RandomState>,
}

impl Grid {
    /// The boids filed under `cell`.
    fn of(&self, cell: flock::Cell) -> &[Entity] {
        self.cells.get(&cell).map_or(&[], Vec::as_slice)
    }

    fn file(&mut self, boid: Entity, cell: flock::Cell) {
        self.cells.entry(cell).or_default().push(boid);
    }

    fn unfile(&mut self, boid: Entity, cell: flock::Cell) {
        let list = self.cells.get_mut(&cell).expect("a filed boid's cell has a list");
        let at = list.iter().position(|&e| e == boid).expect("filed under its cell");
        list.swap_remove(at);
    }
}

/// Steer's parallel tasks per thread of the compute task pool: the cells
/// are cut into this many runs per thread (at least 64 cells each), so that
/// dense and sparse parts of the flock even out.
const STEER_TASKS_PER_THREAD: usize = 8;

/// A boid born at `frame` (the example's `boid`).
fn boid_born(
    world: flock::World,
    serial: u32,
    born: u32,
) -> (
    boid::Pos,
    boid::Vel,
    boid::Accel,
    boid::GridCell,
    boid::Born,
    boid::Serial,
) {
    let (p, v) = world.spawn(serial, born);
    (
        boid::Pos(p),
        boid::Vel(v),
        boid::Accel::default(),
        boid::GridCell(world.cell_of(p)),
        boid::Born(born),
        boid::Serial(serial),
    )
}

/// Tick: advances the clock.
fn tick(mut clock: ResMut<boid::Clock>) {
    clock.0 += 1;
}

/// Steers the boids of the cells `cells` (flat indices) cell by cell: the
/// boids of the nine cells around a cell, found through the grid, are read
/// once with `Query::get`, then every boid of the cell steers by them.
fn steer_cells(
    cells: std::ops::Range<usize>,
    grid: &Grid,
    boids: &Query<(&boid::Pos, &boid::Vel)>,
) -> Vec<(Entity, Vec2)> {
    let world = grid.world;
    let mut steered = Vec::new();
    let mut near = Vec::new();
    for flat in cells {
        let cell = world.cell_at(flat);
        let members = grid.of(cell);
        if members.is_empty() {
            continue;
        }
        // The boids around, the cell's own among them (from `mine` on, in
        // the grid's order).
        near.clear();
        let mut mine = 0;
        for around in world.around(cell) {
            if around == cell {
                mine = near.len();
            }
            for &other in grid.of(around) {
                let (p, v) = boids.get(other).expect("the grid files live boids");
                near.push((other, p.0, v.0));
            }
        }
        for &(me, pos, vel) in &near[mine..mine + members.len()] {
            let mut flocking = Flocking::default();
            for &(other, p, v) in &near {
                if other != me {
                    flocking.see(world, pos, p, v);
                }
            }
            steered.push((me, flocking.steering(vel)));
        }
    }
    steered
}

/// Steer, cell by cell in parallel (the example's `Steering::ByCell`): runs
/// of cells are tasks of the compute task pool (on one thread, when the pool
/// has one, as bevy's `par_iter` does: a scope's own thread would run tasks
/// too); the accelerations are written afterwards with `Query::get_mut`.
fn steer(grid: Res<Grid>, boids: Query<(&boid::Pos, &boid::Vel)>, mut accels: Query<&mut boid::Accel>) {
    let cells = grid.world.cells();
    let pool = ComputeTaskPool::get();
    let steered: Vec<Vec<(Entity, Vec2)>> = if pool.thread_num() <= 1 {
        vec![steer_cells(0..cells, &grid, &boids)]
    } else {
        let per_task = cells.div_ceil(pool.thread_num() * STEER_TASKS_PER_THREAD).max(64);
        let (grid, boids) = (&*grid, &boids);
        pool.scope(|scope| {
            for start in (0..cells).step_by(per_task) {
                scope.spawn(async move { steer_cells(start..(start + per_task).min(cells), grid, boids) });
            }
        })
    };
    for (me, accel) in steered.into_iter().flatten() {
        accels.get_mut(me).expect("a filed boid").0 = accel;
    }
}

/// Integrate: moves every boid in parallel; a boid that crossed into another
/// cell gets its new `GridCell` in place and is queued, then re-filed in the
/// grid.
fn integrate(
    mut grid: ResMut<Grid>,
    mut boids: Query<(
        Entity,
        &mut boid::Pos,
        &mut boid::Vel,
        &boid::Accel,
        &mut boid::GridCell,
    )>,
    mut moves: Local<Parallel<Vec<(Entity, flock::Cell, flock::Cell)>>>,
) {
    let world = grid.world;
    boids.par_iter_mut().for_each_init(
        || moves.borrow_local_mut(),
        |moves, (e, mut pos, mut vel, accel, mut cell)| {
            world.integrate(&mut pos.0, &mut vel.0, accel.0);
            let now = world.cell_of(pos.0);
            if now != cell.0 {
                moves.push((e, cell.0, now));
                cell.0 = now;
            }
        },
    );
    for (e, from, to) in moves.drain() {
        grid.unfile(e, from);
        grid.file(e, to);
    }
}

/// Lifecycle: the boids whose time is up (found in parallel) are despawned
/// and spawned again with the same serial, through `Commands`; the grid
/// files the new ones.
fn lifecycle(
    clock: Res<boid::Clock>,
    mut grid: ResMut<Grid>,
    lives: Query<(Entity, &boid::Born, &boid::Serial, &boid::GridCell)>,
    mut ended: Local<Parallel<Vec<(Entity, u32, flock::Cell)>>>,
    mut commands: Commands,
) {
    let now = clock.0;
    lives.par_iter().for_each_init(
        || ended.borrow_local_mut(),
        |ended, (e, born, serial, cell)| {
            if now - born.0 >= flock::lifespan(serial.0) {
                ended.push((e, serial.0, cell.0));
            }
        },
    );
    let world = grid.world;
    for (e, serial, cell) in ended.drain() {
        grid.unfile(e, cell);
        commands.entity(e).despawn();
        let born = boid_born(world, serial, now);
        let at = born.3.0;
        let e = commands.spawn(born).id();
        grid.file(e, at);
    }
}

/// Counting: the census, summed in parallel.
fn counting(
    clock: Res<boid::Clock>,
    boids: Query<(&boid::Vel, &boid::Born)>,
    serials: Query<&boid::Serial>,
    mut census: ResMut<boid::Census>,
    mut sums: Local<Parallel<(f64, usize)>>,
) {
    let now = clock.0;
    boids.par_iter().for_each_init(
        || sums.borrow_local_mut(),
        |sums, (vel, born)| {
            let v = vel.0;
            sums.0 += f64::from((v.x * v.x + v.y * v.y).sqrt());
            sums.1 += usize::from(born.0 == now - 1);
        },
    );
    let (speed, births) = sums
        .iter_mut()
        .map(std::mem::take)
        .fold((0.0, 0), |(s, b), (s2, b2)| (s + s2, b + b2));
    let boids = serials.iter().len();
    *census = boid::Census {
        boids,
        mean_speed: (speed / boids.max(1) as f64) as f32,
        births,
    };
}

/// boids on bevy: the world and the schedule of one frame.
struct Boids {
    p: Params,
    world: World,
    frame: Schedule,
    model: BoidsModel,
    frames: usize,
}

/// A world of `p.boids` boids at the start (as the example's `Flock::new`
/// makes them), the grid filing them in serial order, and the schedule of
/// one frame.
fn flock(p: &Params) -> (World, Schedule) {
    let square = flock::World::for_boids(p.boids);
    let mut world = World::new();
    world.insert_resource(boid::Clock(flock::FIRST_FRAME));
    world.init_resource::<boid::Census>();
    let bundles: Vec<_> = (0..p.boids as u32)
        .map(|s| boid_born(square, s, flock::first_birth(s)))
        .collect();
    let cells: Vec<flock::Cell> = bundles.iter().map(|b| b.3.0).collect();
    let entities: Vec<Entity> = world.spawn_batch(bundles).collect();
    let mut grid = Grid {
        world: square,
        cells: HashMap::default(),
    };
    for (e, cell) in entities.into_iter().zip(cells) {
        grid.file(e, cell);
    }
    world.insert_resource(grid);
    let mut frame = Schedule::default();
    // The single-threaded executor: every system already spreads its work
    // over the compute task pool, and Lifecycle and Counting side by side
    // on the multi-threaded one took 2 to 4 ms longer per frame.
    frame
        .add_systems((tick, steer, integrate, (lifecycle, counting)).chain())
        .set_executor(SingleThreadedExecutor::new());
    (world, frame)
}

impl Boids {
    fn new(p: &Params) -> Self {
        let (world, frame) = flock(p);
        Boids {
            p: p.clone(),
            world,
            frame,
            model: BoidsModel::new(p),
            frames: 0,
        }
    }
}

impl Cell for Boids {
    fn prepare(&mut self) {
        if self.frames == work::BOID_FRAMES {
            (self.world, self.frame) = flock(&self.p);
            self.frames = 0;
            self.run();
        }
    }

    fn run(&mut self) {
        self.frame.run(&mut self.world);
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let mut query = self.world.query::<(&boid::Serial, &boid::Pos, &boid::Vel)>();
        let mut state: Vec<_> = query.iter(&self.world).map(|(s, p, v)| (s.0, p.0, v.0)).collect();
        state.sort_by_key(|&(s, _, _)| s);
        self.model.check(self.frames, &state)?;
        // The grid files every boid, each under the cell its position and
        // its GridCell say it is in.
        let grid = self.world.resource::<Grid>();
        let mut filed = 0;
        for (&cell, boids) in &grid.cells {
            for &e in boids {
                filed += 1;
                let at = self.world.get::<boid::Pos>(e).map(|p| grid.world.cell_of(p.0));
                let kept = self.world.get::<boid::GridCell>(e).map(|c| c.0);
                if at != Some(cell) || kept != Some(cell) {
                    return Err(format!(
                        "the grid files {e} under {cell:?}; it is in {at:?} and its GridCell says {kept:?}"
                    ));
                }
            }
        }
        let census = self.world.resource::<boid::Census>().boids;
        if filed != self.p.boids || (self.frames > 0 && census != self.p.boids) {
            return Err(format!(
                "the grid files {filed} boids and the census counted {census}, expected {}",
                self.p.boids
            ));
        }
        Ok(())
    }
}

fn memory(p: &Params) -> (Kept, Result<(), String>) {
    let mut world = World::new();
    world.spawn_batch((0..p.memory_entities).map(work::memory_bundle));
    let mut query = world.query::<&Position>();
    let (count, sum) = query
        .iter(&world)
        .fold((0, 0.0), |(n, s), p| (n + 1, s + f64::from(p.0[0])));
    let check = work::check_memory(p, count, sum);
    (Box::new(world), check)
}
