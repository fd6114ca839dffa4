//! shipyard's columns, written as its documentation recommends for speed:
//! `bulk_add_entity`, views borrowed with `World::run`, tuple iteration of
//! views (`(&mut a, &b).iter()`), `par_iter` on rayon's global pool, and for
//! reactive work its per-type tracking (`#[track(Modification)]`,
//! `#[track(Insertion, Removal)]`) read with `modified()` / `inserted()` /
//! `removed()` and reset with `clear_all_*` (outside workloads).

use rayon::iter::ParallelIterator;
use shipyard::{AddComponent, EntityId, Get, IntoIter, Remove, View, ViewMut, World};

use crate::cell::{Cell, Column, Held as Kept};
use crate::data::{
    A, AddA, AddB, B, C, D, Data, E, F, G, H, Held, I, Id, J, K, L, M, N, O, P, Pos, Position, Q, R, S, T, Tag,
    Transform, U, V, Value, Vel, Velocity, W, X, Y, Z,
};
use crate::params::Params;
use crate::work::{self, Doubling, KeyMap, Keys, Seen, SparsePlan};

/// shipyard's columns.
pub fn columns() -> Vec<Column> {
    vec![
        Column::timed(
            "simple_insert",
            "shipyard",
            "World::new, then bulk_add_entity of 4-tuples",
            |p| {
                Box::new(Insert {
                    p: p.clone(),
                    world: None,
                })
            },
        ),
        Column::timed(
            "simple_iter",
            "shipyard",
            "World::run with (&mut ViewMut<Position>, &View<Velocity>).iter()",
            |p| Box::new(Iter::new(p)),
        ),
        Column::timed(
            "fragmented_iter",
            "shipyard",
            "World::run with (&mut ViewMut<Data>).iter()",
            |p| Box::new(Fragmented::new(p)),
        ),
        Column::timed(
            "heavy_compute",
            "shipyard",
            "World::run with (&mut .., &mut ..).par_iter()",
            |p| Box::new(Heavy::new(p)),
        ),
        Column::timed(
            "add_remove",
            "shipyard",
            "ViewMut<B>::add_component_unchecked then remove per entity (every type is a sparse set)",
            |p| Box::new(AddRemove::new(p)),
        ),
        Column::timed(
            "reactive_replace",
            "shipyard",
            "Pos #[track(Modification)]; writer (&mut pos, &vel).iter(); consumer pos.modified().iter(), then clear_all_modified",
            |p| Box::new(Replace::new(p, false)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "shipyard",
            "Pos #[track(Modification)]; writer (&mut pos).get(e) per changed entity; consumer pos.modified().iter(), then clear_all_modified",
            |p| Box::new(Replace::new(p, true)),
        ),
        Column::timed(
            "reactive_add_remove",
            "shipyard",
            "the tag #[track(Insertion, Removal)]; add_component_unchecked / remove per entity; consumers (tags.inserted(), &held).iter() and tags.removed(), then clear_all_*",
            |p| Box::new(Tags::new(p)),
        ),
        Column::timed(
            "index_lookup",
            "shipyard",
            "a foldhash HashMap<u64, EntityId> beside the world, then View<Value>::get",
            |p| Box::new(Lookup::new(p)),
        ),
        Column::memory("shipyard", "bulk_add_entity of 1M (Position, Velocity)", memory),
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
        world.bulk_add_entity((0..self.p.insert_entities).map(work::insert_bundle));
        self.world = Some(world);
    }

    fn verify(&mut self) -> Result<(), String> {
        let world = self.world.as_ref().ok_or("no run yet")?;
        let (count, sum) = world.run(|positions: View<Position>| {
            positions
                .iter()
                .fold((0, 0.0), |(n, s), p| (n + 1, s + f64::from(p.0[0])))
        });
        work::check_insert(&self.p, count, sum)
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
        world.bulk_add_entity((0..p.iter_entities).map(|_| work::iter_bundle()));
        Iter {
            p: p.clone(),
            world,
            runs: 0,
        }
    }
}

impl Cell for Iter {
    fn run(&mut self) {
        self.world
            .run(|mut positions: ViewMut<Position>, velocities: View<Velocity>| {
                for (p, v) in (&mut positions, &velocities).iter() {
                    work::advance(&mut p.0, &v.0);
                }
            });
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let (p, runs) = (&self.p, self.runs);
        self.world
            .run(|positions: View<Position>| work::check_iter(p, runs, positions.iter().map(|p| &p.0)))
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
                world.bulk_add_entity((0..n).map(|_| ($kind(0.0), Data(1.0))));
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
            self.world.run(|mut data: ViewMut<Data>| {
                for d in (&mut data).iter() {
                    d.0 = 1.0;
                }
            });
        }
    }

    fn run(&mut self) {
        self.world.run(|mut data: ViewMut<Data>| {
            for d in (&mut data).iter() {
                work::double(&mut d.0);
            }
        });
    }

    fn verify(&mut self) -> Result<(), String> {
        let (p, doubling) = (&self.p, &self.doubling);
        self.world
            .run(|data: View<Data>| doubling.check(p, data.iter().map(|d| d.0)))
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
        world.bulk_add_entity((0..p.heavy_entities).map(|_| work::heavy_bundle()));
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
            .run(|mut positions: ViewMut<Position>, mut transforms: ViewMut<Transform>| {
                (&mut positions, &mut transforms)
                    .par_iter()
                    .for_each(|(p, t)| work::heavy(&mut t.0, &mut p.0, inversions));
            });
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let (p, runs) = (&self.p, self.runs);
        self.world
            .run(|positions: View<Position>, transforms: View<Transform>| {
                work::check_heavy(p, runs, (&transforms, &positions).iter().map(|(t, p)| (&t.0, &p.0)))
            })
    }
}

struct AddRemove {
    p: Params,
    world: World,
    entities: Vec<EntityId>,
    taken: f64,
    runs: usize,
}

impl AddRemove {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        let entities = world
            .bulk_add_entity((0..p.add_remove_entities).map(|i| (AddA(i as f32),)))
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
        let (entities, taken) = (&self.entities, &mut self.taken);
        self.world.run(|mut bs: ViewMut<AddB>| {
            for (i, &e) in entities.iter().enumerate() {
                bs.add_component_unchecked(e, AddB(work::add_remove_b(i)));
            }
            for &e in entities {
                *taken += f64::from(bs.remove(e).expect("has B").0);
            }
        });
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let (p, runs, taken, entities) = (&self.p, self.runs, self.taken, &self.entities);
        self.world.run(|a: View<AddA>, bs: View<AddB>| {
            let values = entities.iter().map(|&e| (&a).get(e).map_or(f32::NAN, |a| a.0));
            work::check_add_remove(p, runs, taken, values, bs.len())
        })
    }
}

struct Replace {
    p: Params,
    plan: Option<SparsePlan>,
    world: World,
    entities: Vec<EntityId>,
    seen: Seen,
    frames: usize,
}

impl Replace {
    fn new(p: &Params, sparse: bool) -> Self {
        let n = if sparse { p.sparse_entities } else { p.replace_entities };
        let mut world = World::new();
        let entities = world
            .bulk_add_entity((0..n).map(|i| (Pos(work::start_position(i)), Vel(work::VELOCITY))))
            .collect();
        // Spawning is an insertion, not a modification; start clean anyway.
        world.run(|positions: ViewMut<Pos>| positions.clear_all_modified());
        Replace {
            p: p.clone(),
            plan: sparse.then(|| SparsePlan::new(p)),
            world,
            entities,
            seen: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Replace {
    fn run(&mut self) {
        let (plan, entities, frame) = (&self.plan, &self.entities, self.frames);
        self.world
            .run(|mut positions: ViewMut<Pos>, velocities: View<Vel>| match plan {
                Some(plan) => {
                    for &i in plan.frame(frame) {
                        let e = entities[i as usize];
                        let v = (&velocities).get(e).expect("has Vel");
                        let mut p = (&mut positions).get(e).expect("has Pos");
                        p.0 = work::moved(&p.0, &v.0);
                    }
                }
                None => {
                    for (mut p, v) in (&mut positions, &velocities).iter() {
                        p.0 = work::moved(&p.0, &v.0);
                    }
                }
            });
        let seen = &mut self.seen;
        self.world.run(|positions: ViewMut<Pos>| {
            for p in positions.modified().iter() {
                seen.visit(f64::from(p.0[0]));
            }
            positions.clear_all_modified();
        });
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let sum = self
            .world
            .run(|positions: View<Pos>| positions.iter().map(|p| f64::from(p.0[0])).sum());
        match &self.plan {
            Some(plan) => plan.check(&self.p, self.frames, self.seen, sum),
            None => work::check_replace(&self.p, self.frames, self.seen, sum),
        }
    }
}

struct Tags {
    p: Params,
    world: World,
    entities: Vec<EntityId>,
    joined: Seen,
    left: Seen,
    frames: usize,
}

impl Tags {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        let entities = world
            .bulk_add_entity((0..p.tag_entities as u64).map(|i| (Held(i),)))
            .collect();
        Tags {
            p: p.clone(),
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
        let entities = &self.entities;
        self.world.run(|mut tags: ViewMut<Tag>| {
            for &e in entities.iter().step_by(2) {
                tags.add_component_unchecked(e, Tag);
            }
        });
        let joined = &mut self.joined;
        self.world.run(|tags: ViewMut<Tag>, held: View<Held>| {
            for (_, h) in (tags.inserted(), &held).iter() {
                joined.visit(h.0 as f64);
            }
            tags.clear_all_inserted();
        });
        self.world.run(|mut tags: ViewMut<Tag>| {
            for &e in entities.iter().step_by(2) {
                tags.remove(e).expect("has the tag");
            }
        });
        let left = &mut self.left;
        self.world.run(|mut tags: ViewMut<Tag>, held: View<Held>| {
            for e in tags.removed() {
                left.visit((&held).get(e).expect("alive with Held").0 as f64);
            }
            tags.clear_all_removed();
        });
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let still = self.world.run(|tags: View<Tag>| tags.len());
        work::check_tags(&self.p, self.frames, self.joined, self.left, still)
    }
}

struct Lookup {
    keys: Keys,
    world: World,
    by_key: KeyMap<EntityId>,
    total: f64,
    runs: usize,
}

impl Lookup {
    fn new(p: &Params) -> Self {
        let keys = Keys::new(p);
        let mut world = World::new();
        let entities: Vec<EntityId> = world
            .bulk_add_entity(
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
        let (keys, by_key) = (&self.keys, &self.by_key);
        let sum = self.world.run(|values: View<Value>| {
            let mut sum = 0.0;
            for key in &keys.lookups {
                sum += f64::from((&values).get(by_key[key]).expect("alive with a Value").0);
            }
            sum
        });
        self.total += sum;
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        self.keys.check(self.runs, self.total)
    }
}

fn memory(p: &Params) -> (Kept, Result<(), String>) {
    let mut world = World::new();
    world.bulk_add_entity((0..p.memory_entities).map(work::memory_bundle));
    let (count, sum) = world.run(|positions: View<Position>| {
        positions
            .iter()
            .fold((0, 0.0), |(n, s), p| (n + 1, s + f64::from(p.0[0])))
    });
    let check = work::check_memory(p, count, sum);
    (Box::new(world), check)
}
