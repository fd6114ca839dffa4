//! specs' columns, written as its documentation recommends for speed:
//! `VecStorage` for components most entities have, storages fetched from the
//! `World` and joined (`(&mut a, &b).join()`, `par_join` on rayon's global
//! pool), and for reactive work `FlaggedStorage` with one `ReaderId` per
//! consumer, whose events fill a `BitSet` that the consumer joins with.

use specs::prelude::{BitSet, Builder, ComponentEvent, Entity, Join, ParJoin, ReaderId, World, WorldExt, WriteStorage};
use specs::rayon::iter::ParallelIterator;

use crate::cell::{Cell, Column, Held as Kept};
use crate::data::{
    A, AddA, AddB, B, C, D, Data, E, F, G, H, Held, I, Id, J, K, L, M, N, O, P, Pos, Position, Q, R, Rotation, S, T,
    Tag, Transform, U, V, Value, Vel, Velocity, W, X, Y, Z,
};
use crate::params::Params;
use crate::work::{self, Doubling, KeyMap, Keys, Seen, SparsePlan};

/// specs' columns.
pub fn columns() -> Vec<Column> {
    vec![
        Column::timed(
            "simple_insert",
            "specs",
            "World::new and register, then create_entity().with(..)x4.build() per entity (VecStorage)",
            |p| {
                Box::new(Insert {
                    p: p.clone(),
                    world: None,
                })
            },
        ),
        Column::timed("simple_iter", "specs", "(&mut positions, &velocities).join()", |p| {
            Box::new(Iter::new(p))
        }),
        Column::timed("fragmented_iter", "specs", "(&mut data).join()", |p| {
            Box::new(Fragmented::new(p))
        }),
        Column::timed(
            "heavy_compute",
            "specs",
            "(&mut positions, &mut transforms).par_join()",
            |p| Box::new(Heavy::new(p)),
        ),
        Column::timed(
            "add_remove",
            "specs",
            "WriteStorage<B> (VecStorage): insert then remove per entity",
            |p| Box::new(AddRemove::new(p)),
        ),
        Column::timed(
            "reactive_replace",
            "specs",
            "Pos in FlaggedStorage<VecStorage>; writer (&mut pos, &vel).join(); consumer: its ReaderId's Modified events into a BitSet, joined with &pos",
            |p| Box::new(Replace::new(p, false)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "specs",
            "Pos in FlaggedStorage<VecStorage>; writer get_mut per changed entity; consumer: ReaderId events into a BitSet, joined with &pos",
            |p| Box::new(Replace::new(p, true)),
        ),
        Column::timed(
            "reactive_add_remove",
            "specs",
            "the tag in FlaggedStorage<NullStorage>; insert / remove per entity; two consumers, each with its ReaderId and BitSet, joined with &held",
            |p| Box::new(Tags::new(p)),
        ),
        Column::timed(
            "index_lookup",
            "specs",
            "a foldhash HashMap<u64, Entity> beside the world, then ReadStorage<Value>::get",
            |p| Box::new(Lookup::new(p)),
        ),
        Column::memory(
            "specs",
            "create_entity().with(..)x2.build() per entity (VecStorage)",
            memory,
        ),
    ]
}

/// A world with every type registered.
fn world() -> World {
    let mut world = World::new();
    world.register::<Transform>();
    world.register::<Position>();
    world.register::<Rotation>();
    world.register::<Velocity>();
    world
}

fn insert(world: &mut World, (t, p, r, v): (Transform, Position, Rotation, Velocity)) -> Entity {
    world.create_entity().with(t).with(p).with(r).with(v).build()
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
        let mut world = world();
        for i in 0..self.p.insert_entities {
            insert(&mut world, work::insert_bundle(i));
        }
        self.world = Some(world);
    }

    fn verify(&mut self) -> Result<(), String> {
        let world = self.world.as_ref().ok_or("no run yet")?;
        let positions = world.read_storage::<Position>();
        let (count, sum) = (&positions)
            .join()
            .fold((0, 0.0), |(n, s), p| (n + 1, s + f64::from(p.0[0])));
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
        let mut world = world();
        for _ in 0..p.iter_entities {
            insert(&mut world, work::iter_bundle());
        }
        Iter {
            p: p.clone(),
            world,
            runs: 0,
        }
    }
}

impl Cell for Iter {
    fn run(&mut self) {
        let mut positions = self.world.write_storage::<Position>();
        let velocities = self.world.read_storage::<Velocity>();
        for (p, v) in (&mut positions, &velocities).join() {
            work::advance(&mut p.0, &v.0);
        }
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let positions = self.world.read_storage::<Position>();
        work::check_iter(&self.p, self.runs, (&positions).join().map(|p| &p.0))
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
        world.register::<Data>();
        let n = p.fragment_per_kind;
        macro_rules! spawn {
            ($($kind:ident),+) => {$(
                world.register::<$kind>();
                for _ in 0..n {
                    world.create_entity().with($kind(0.0)).with(Data(1.0)).build();
                }
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
            for d in (&mut self.world.write_storage::<Data>()).join() {
                d.0 = 1.0;
            }
        }
    }

    fn run(&mut self) {
        let mut data = self.world.write_storage::<Data>();
        for d in (&mut data).join() {
            work::double(&mut d.0);
        }
    }

    fn verify(&mut self) -> Result<(), String> {
        let data = self.world.read_storage::<Data>();
        self.doubling.check(&self.p, (&data).join().map(|d| d.0))
    }
}

struct Heavy {
    p: Params,
    world: World,
    runs: usize,
}

impl Heavy {
    fn new(p: &Params) -> Self {
        let mut world = world();
        for _ in 0..p.heavy_entities {
            insert(&mut world, work::heavy_bundle());
        }
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
        let mut positions = self.world.write_storage::<Position>();
        let mut transforms = self.world.write_storage::<Transform>();
        (&mut positions, &mut transforms)
            .par_join()
            .for_each(|(p, t)| work::heavy(&mut t.0, &mut p.0, inversions));
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let positions = self.world.read_storage::<Position>();
        let transforms = self.world.read_storage::<Transform>();
        let rows = (&transforms, &positions).join().map(|(t, p)| (&t.0, &p.0));
        work::check_heavy(&self.p, self.runs, rows)
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
        world.register::<AddA>();
        world.register::<AddB>();
        let entities = (0..p.add_remove_entities)
            .map(|i| world.create_entity().with(AddA(i as f32)).build())
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
        let mut bs = self.world.write_storage::<AddB>();
        for (i, &e) in self.entities.iter().enumerate() {
            bs.insert(e, AddB(work::add_remove_b(i))).expect("alive");
        }
        for &e in &self.entities {
            self.taken += f64::from(bs.remove(e).expect("has B").0);
        }
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let a = self.world.read_storage::<AddA>();
        let bs = self.world.read_storage::<AddB>();
        let values = self.entities.iter().map(|&e| a.get(e).map_or(f32::NAN, |a| a.0));
        work::check_add_remove(&self.p, self.runs, self.taken, values, (&bs).join().count())
    }
}

/// A consumer's reader of a flagged storage's events, and the set it fills.
struct Reader {
    id: ReaderId<ComponentEvent>,
    set: BitSet,
}

impl Reader {
    fn new<C>(storage: &mut WriteStorage<'_, C>) -> Self
    where
        C: specs::Component,
        C::Storage: specs::storage::Tracked,
    {
        Reader {
            id: storage.register_reader(),
            set: BitSet::new(),
        }
    }

    /// Reads the events since the last read, keeping the indices of those
    /// `wanted` accepts.
    fn read<C>(&mut self, storage: &WriteStorage<'_, C>, wanted: impl Fn(&ComponentEvent) -> Option<u32>)
    where
        C: specs::Component,
        C::Storage: specs::storage::Tracked,
    {
        self.set.clear();
        for event in storage.channel().read(&mut self.id) {
            if let Some(id) = wanted(event) {
                self.set.add(id);
            }
        }
    }
}

struct Replace {
    p: Params,
    plan: Option<SparsePlan>,
    world: World,
    entities: Vec<Entity>,
    reader: Reader,
    seen: Seen,
    frames: usize,
}

impl Replace {
    fn new(p: &Params, sparse: bool) -> Self {
        let n = if sparse { p.sparse_entities } else { p.replace_entities };
        let mut world = World::new();
        world.register::<Pos>();
        world.register::<Vel>();
        let entities = (0..n)
            .map(|i| {
                world
                    .create_entity()
                    .with(Pos(work::start_position(i)))
                    .with(Vel(work::VELOCITY))
                    .build()
            })
            .collect();
        let reader = Reader::new(&mut world.write_storage::<Pos>());
        Replace {
            p: p.clone(),
            plan: sparse.then(|| SparsePlan::new(p)),
            world,
            entities,
            reader,
            seen: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Replace {
    fn run(&mut self) {
        let mut positions = self.world.write_storage::<Pos>();
        let velocities = self.world.read_storage::<Vel>();
        match &self.plan {
            Some(plan) => {
                for &i in plan.frame(self.frames) {
                    let e = self.entities[i as usize];
                    let v = velocities.get(e).expect("has Vel");
                    let p = positions.get_mut(e).expect("has Pos");
                    p.0 = work::moved(&p.0, &v.0);
                }
            }
            None => {
                for (p, v) in (&mut positions, &velocities).join() {
                    p.0 = work::moved(&p.0, &v.0);
                }
            }
        }
        self.reader.read(&positions, |event| match event {
            ComponentEvent::Modified(id) | ComponentEvent::Inserted(id) => Some(*id),
            ComponentEvent::Removed(_) => None,
        });
        for (p, _) in (&positions, &self.reader.set).join() {
            self.seen.visit(f64::from(p.0[0]));
        }
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let positions = self.world.read_storage::<Pos>();
        let sum = (&positions).join().map(|p| f64::from(p.0[0])).sum();
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
    joined: Reader,
    left: Reader,
    seen_joined: Seen,
    seen_left: Seen,
    frames: usize,
}

impl Tags {
    fn new(p: &Params) -> Self {
        let mut world = World::new();
        world.register::<Held>();
        world.register::<Tag>();
        let entities = (0..p.tag_entities as u64)
            .map(|i| world.create_entity().with(Held(i)).build())
            .collect();
        let mut tags = world.write_storage::<Tag>();
        let (joined, left) = (Reader::new(&mut tags), Reader::new(&mut tags));
        drop(tags);
        Tags {
            p: p.clone(),
            world,
            entities,
            joined,
            left,
            seen_joined: Seen::default(),
            seen_left: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for Tags {
    fn run(&mut self) {
        let mut tags = self.world.write_storage::<Tag>();
        let held = self.world.read_storage::<Held>();
        for &e in self.entities.iter().step_by(2) {
            tags.insert(e, Tag).expect("alive");
        }
        self.joined.read(&tags, |event| match event {
            ComponentEvent::Inserted(id) => Some(*id),
            _ => None,
        });
        for (h, _) in (&held, &self.joined.set).join() {
            self.seen_joined.visit(h.0 as f64);
        }
        for &e in self.entities.iter().step_by(2) {
            tags.remove(e).expect("has the tag");
        }
        self.left.read(&tags, |event| match event {
            ComponentEvent::Removed(id) => Some(*id),
            _ => None,
        });
        for (h, _) in (&held, &self.left.set).join() {
            self.seen_left.visit(h.0 as f64);
        }
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let still = (&self.world.read_storage::<Tag>()).join().count();
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
        world.register::<Id>();
        world.register::<Value>();
        let by_key = keys
            .keys
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                let e = world
                    .create_entity()
                    .with(Id(k))
                    .with(Value(work::index_value(i)))
                    .build();
                (k, e)
            })
            .collect();
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
        let values = self.world.read_storage::<Value>();
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
    world.register::<Position>();
    world.register::<Velocity>();
    for i in 0..p.memory_entities {
        let (position, velocity) = work::memory_bundle(i);
        world.create_entity().with(position).with(velocity).build();
    }
    let positions = world.read_storage::<Position>();
    let (count, sum) = (&positions)
        .join()
        .fold((0, 0.0), |(n, s), p| (n + 1, s + f64::from(p.0[0])));
    drop(positions);
    let check = work::check_memory(p, count, sum);
    (Box::new(world), check)
}
