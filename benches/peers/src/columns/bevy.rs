//! bevy_ecs' columns, written as its documentation recommends for speed: a
//! `World` driven directly with cached `QueryState`s (no schedule), batch
//! spawning, `par_iter_mut` on the compute task pool, `SparseSet` storage
//! for components added and removed often, and for reactive work the
//! `Changed` / `Added` filters and `RemovedComponents` (pull), or an
//! observer on `Insert` (push).

use bevy_ecs::prelude::{Added, Changed, Entity, Insert, On, Query, ResMut, Resource, World};
use bevy_ecs::query::QueryState;

use crate::cell::{Cell, Column, Held as Kept};
use crate::data::{
    A, AddA, AddB, B, C, D, Data, E, F, G, H, Held, I, Id, J, K, L, M, N, O, P, Pos, Position, Q, R, S, T, Tag,
    Transform, U, V, Value, Vel, Velocity, W, X, Y, Z,
};
use crate::params::Params;
use crate::work::{self, Doubling, KeyMap, Keys, Seen, SparsePlan};

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
