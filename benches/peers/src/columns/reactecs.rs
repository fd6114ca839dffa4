//! reactecs' columns, one per way a user would write each workload: batch
//! and one-by-one creation, `query_mut().for_each` and `par_for_each`, a
//! component declared `sparse` or kept in archetypes, and for the reactive
//! workloads one observed write per entity (`modify_with`, or two `get`s and
//! a `replace`) or one `modify_each` over a group, each feeding a reactive
//! system whose collector gathers exactly the changed entities.

use std::marker::PhantomData;

use reactecs::prelude::*;
use reactecs::system::{Reactive, ReactiveSystem};

use crate::cell::{Cell, Column, Held as Kept};
use crate::data::*;
use crate::flock::{Census, Flock, Steering};
use crate::params::Params;
use crate::work::{self, BoidsModel, Doubling, Keys, Seen, SparsePlan};

/// reactecs' columns.
pub fn columns() -> Vec<Column> {
    vec![
        Column::timed(
            "simple_insert",
            "reactecs:create_entities_with",
            "Context::new, then create_entities_with over an iterator of 4-tuples",
            |p| {
                Box::new(Insert {
                    p: p.clone(),
                    game: None,
                    batched: true,
                })
            },
        ),
        Column::timed(
            "simple_insert",
            "reactecs:create_entity_with",
            "Context::new, then create_entity_with per entity",
            |p| {
                Box::new(Insert {
                    p: p.clone(),
                    game: None,
                    batched: false,
                })
            },
        ),
        Column::timed(
            "simple_iter",
            "reactecs:for_each",
            "query_mut::<(&mut Position, &Velocity)>().for_each",
            |p| Box::new(Iter::new(p, false)),
        ),
        Column::timed(
            "simple_iter",
            "reactecs:watched",
            "the same, with a collector watching Position (every row written is stamped)",
            |p| Box::new(Iter::new(p, true)),
        ),
        Column::timed(
            "fragmented_iter",
            "reactecs:for_each",
            "query_mut::<&mut Data>().for_each over 26 archetypes",
            |p| Box::new(Fragmented::new(p)),
        ),
        Column::timed(
            "heavy_compute",
            "reactecs:par_for_each",
            "query_mut::<(&mut Position, &mut Transform)>().par_for_each (rayon, chunks as work items)",
            |p| Box::new(Heavy::new(p)),
        ),
        Column::timed(
            "add_remove",
            "reactecs:sparse",
            "B declared `sparse`: add then take per entity by handle",
            |p| Box::new(AddRemove::<AddB>::new(p)),
        ),
        Column::timed(
            "add_remove",
            "reactecs:archetype",
            "B kept in archetypes (each add and take moves the row): add then take per entity",
            |p| Box::new(AddRemove::<ArchB>::new(p)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:modify_with",
            "modify_with::<Pos, &Vel> per entity from a kept entity list; a reactive system on AllOf(Pos).added() reads each with get",
            |p| Box::new(Replace::new(p, Write::ModifyWith, false)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:modify_each",
            "modify_each::<Pos, &Vel> over a group of (Pos, Vel); the same reactive system",
            |p| Box::new(Replace::new(p, Write::ModifyEach, false)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:query_mut",
            "query_mut::<(&mut Pos, &Vel)>().for_each (a stamped write); the same reactive system",
            |p| Box::new(Replace::new(p, Write::QueryMut, false)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:par_for_each",
            "query_mut::<(&mut Pos, &Vel)>().par_for_each (a stamped write, in parallel); the same reactive system",
            |p| Box::new(Replace::new(p, Write::ParForEach, false)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:get_mut",
            "get::<Vel> and get_mut::<Pos> per entity from a kept entity list (a stamped write); the same reactive system",
            |p| Box::new(Replace::new(p, Write::GetMut, false)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:replace",
            "two gets and a replace per entity (Entitas style); the same reactive system",
            |p| Box::new(Replace::new(p, Write::Replace, false)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:query_mut+drain",
            "query_mut::<(&mut Pos, &Vel)>().for_each (a stamped write); collector_mut(id).drain::<&Pos> on AllOf(Pos).added() reads the moved in place",
            |p| Box::new(Replace::new(p, Write::QueryMut, true)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:par_for_each+drain",
            "query_mut::<(&mut Pos, &Vel)>().par_for_each (a stamped write, in parallel); collector_mut(id).drain::<&Pos> reads the moved in place",
            |p| Box::new(Replace::new(p, Write::ParForEach, true)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:modify_each+drain",
            "modify_each::<Pos, &Vel> over a group of (Pos, Vel); collector_mut(id).drain::<&Pos> reads the moved in place",
            |p| Box::new(Replace::new(p, Write::ModifyEach, true)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:view_mut+drain",
            "view_mut::<(&mut Pos, &Vel)>() borrowed once per frame, get_mut per entity from a kept entity list; collector_mut(id).drain::<&Pos> reads the moved in place",
            |p| Box::new(Replace::new(p, Write::ViewMut, true)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:get_mut+drain",
            "get::<Vel> and get_mut::<Pos> per entity from a kept entity list; collector_mut(id).drain::<&Pos> reads the moved in place",
            |p| Box::new(Replace::new(p, Write::GetMut, true)),
        ),
        Column::timed(
            "reactive_replace",
            "reactecs:modify_with+drain",
            "modify_with::<Pos, &Vel> per entity from a kept entity list; collector_mut(id).drain::<&Pos> reads the moved in place",
            |p| Box::new(Replace::new(p, Write::ModifyWith, true)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "reactecs:get_mut+drain",
            "get::<Vel> and get_mut::<Pos> per changed entity; collector_mut(id).drain::<&Pos> reads the changed in place",
            |p| Box::new(Sparse::new(p, Write::GetMut, true)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "reactecs:view_mut+drain",
            "view_mut::<(&mut Pos, &Vel)>() borrowed once per frame, get_mut per changed entity; collector_mut(id).drain::<&Pos> reads the changed in place",
            |p| Box::new(Sparse::new(p, Write::ViewMut, true)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "reactecs:modify_with+drain",
            "modify_with::<Pos, &Vel> per changed entity; collector_mut(id).drain::<&Pos> reads the changed in place",
            |p| Box::new(Sparse::new(p, Write::ModifyWith, true)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "reactecs:modify_with",
            "modify_with::<Pos, &Vel> per changed entity; a reactive system on AllOf(Pos).added() reads each with get",
            |p| Box::new(Sparse::new(p, Write::ModifyWith, false)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "reactecs:get_mut",
            "get::<Vel> and get_mut::<Pos> per changed entity (a stamped write); the same reactive system",
            |p| Box::new(Sparse::new(p, Write::GetMut, false)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "reactecs:replace",
            "two gets and a replace per changed entity; the same reactive system",
            |p| Box::new(Sparse::new(p, Write::Replace, false)),
        ),
        Column::timed(
            "reactive_replace_sparse",
            "reactecs:by_hand",
            "no collector: get::<Vel> and get_mut::<Pos> per changed entity, a hand-kept list (as hecs' column), read back with get (the floor of the per-handle calls, nothing tracked)",
            |p| Box::new(ByHandSparse::new(p)),
        ),
        Column::timed(
            "reactive_add_remove",
            "reactecs:flag",
            "the tag declared `flag`; add / remove per entity; reactive systems on AllOf(Held, Tag).added() and .removed()",
            |p| Box::new(Tags::<FlagTag>::new(p)),
        ),
        Column::timed(
            "reactive_add_remove",
            "reactecs:flag_by_hand",
            "the tag declared `flag`; no collector: add / remove per entity, hand-kept lists of the joined and the left (as hecs' column), read with get (the floor of the toggles and visits, nothing tracked)",
            |p| Box::new(ByHandTags::new(p)),
        ),
        Column::timed(
            "reactive_add_remove",
            "reactecs:archetype",
            "the tag kept in archetypes (each change moves the row); the same two reactive systems",
            |p| Box::new(Tags::<Tag>::new(p)),
        ),
        Column::timed(
            "index_lookup",
            "reactecs:index",
            "a PrimaryEntityIndex on Id: index(id) once per run, then index.get(key) and Context::get::<Value> per key",
            |p| Box::new(Lookup::new(p, false)),
        ),
        Column::timed(
            "index_lookup",
            "reactecs:index_per_key",
            "the same index: Context::index(id) then get(key), then Context::get::<Value>, per key",
            |p| Box::new(Lookup::new(p, true)),
        ),
        Column::timed(
            "boids",
            "reactecs:by_cell",
            "the example's flock.rs, Steering::ByCell: a Feature of Tick; Steer cell by cell in parallel (rayon), neighbours found through an EntityIndex<Cell> and read once per cell through a View, Accel written afterwards with get_mut; Integrate with query_mut().par_fold into per-batch command buffers, a moved boid's Cell replaced on playback (the index re-files it); Lifecycle (destroy + create_entity_with in a command buffer) and Counting side by side (system::Parallel)",
            |p| Box::new(Boids::new(p)),
        ),
        Column::memory(
            "reactecs:create_entities_with",
            "create_entities_with over 1M (Position, Velocity)",
            memory,
        ),
        Column::memory(
            "reactecs:watched",
            "the same, with a collector watching Position (change stamps allocated)",
            memory_watched,
        ),
    ]
}

fn checked(game: &Context) -> Result<(), String> {
    game.check_invariants().map_err(|e| format!("invariants: {e}"))
}

struct Insert {
    p: Params,
    game: Option<Context>,
    batched: bool,
}

impl Cell for Insert {
    fn prepare(&mut self) {
        self.game = None;
    }

    fn run(&mut self) {
        let mut game = Context::new();
        if self.batched {
            game.create_entities_with((0..self.p.insert_entities).map(work::insert_bundle))
                .expect("no duplicate components");
        } else {
            for i in 0..self.p.insert_entities {
                game.create_entity_with(work::insert_bundle(i))
                    .expect("no duplicate components");
            }
        }
        self.game = Some(game);
    }

    fn verify(&mut self) -> Result<(), String> {
        let game = self.game.as_ref().ok_or("no run yet")?;
        let sum = game.query::<&Position>().iter().map(|p| f64::from(p.0[0])).sum();
        work::check_insert(&self.p, game.len(), sum)?;
        checked(game)
    }
}

struct Iter {
    p: Params,
    game: Context,
    runs: usize,
}

impl Iter {
    fn new(p: &Params, watched: bool) -> Self {
        let mut game = Context::new();
        game.create_entities_with((0..p.iter_entities).map(|_| work::iter_bundle()))
            .expect("no duplicate components");
        if watched {
            game.add_collector(Matcher::all_of::<Position>().updated());
        }
        Iter {
            p: p.clone(),
            game,
            runs: 0,
        }
    }
}

impl Cell for Iter {
    fn run(&mut self) {
        self.game
            .query_mut::<(&mut Position, &Velocity)>()
            .expect("no aliasing")
            .for_each(|(p, v)| work::advance(&mut p.0, &v.0));
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        work::check_iter(&self.p, self.runs, self.game.query::<&Position>().iter().map(|p| &p.0))
    }
}

struct Fragmented {
    p: Params,
    game: Context,
    doubling: Doubling,
}

impl Fragmented {
    fn new(p: &Params) -> Self {
        let mut game = Context::new();
        let n = p.fragment_per_kind;
        macro_rules! spawn {
            ($($kind:ident),+) => {$(
                game.create_entities_with((0..n).map(|_| ($kind(0.0), Data(1.0))))
                    .expect("no duplicate components");
            )+};
        }
        spawn!(
            A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z
        );
        Fragmented {
            p: p.clone(),
            game,
            doubling: Doubling::default(),
        }
    }
}

impl Cell for Fragmented {
    fn prepare(&mut self) {
        if self.doubling.before_run(&self.p) {
            self.game
                .query_mut::<&mut Data>()
                .expect("no aliasing")
                .for_each(|d| d.0 = 1.0);
        }
    }

    fn run(&mut self) {
        self.game
            .query_mut::<&mut Data>()
            .expect("no aliasing")
            .for_each(|d| work::double(&mut d.0));
    }

    fn verify(&mut self) -> Result<(), String> {
        self.doubling
            .check(&self.p, self.game.query::<&Data>().iter().map(|d| d.0))
    }
}

struct Heavy {
    p: Params,
    game: Context,
    runs: usize,
}

impl Heavy {
    fn new(p: &Params) -> Self {
        let mut game = Context::new();
        game.create_entities_with((0..p.heavy_entities).map(|_| work::heavy_bundle()))
            .expect("no duplicate components");
        Heavy {
            p: p.clone(),
            game,
            runs: 0,
        }
    }
}

impl Cell for Heavy {
    fn run(&mut self) {
        let inversions = self.p.heavy_inversions;
        self.game
            .query_mut::<(&mut Position, &mut Transform)>()
            .expect("no aliasing")
            .par_for_each(|(p, t)| work::heavy(&mut t.0, &mut p.0, inversions));
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let rows = self.game.query::<(&Transform, &Position)>();
        work::check_heavy(&self.p, self.runs, rows.iter().map(|(t, p)| (&t.0, &p.0)))
    }
}

/// `AddB` (declared sparse) or `ArchB` (in archetypes), built from an f32.
trait Comes: Component + Clone {
    fn of(value: f32) -> Self;
    fn value(&self) -> f32;
}

impl Comes for AddB {
    fn of(value: f32) -> Self {
        AddB(value)
    }
    fn value(&self) -> f32 {
        self.0
    }
}

impl Comes for ArchB {
    fn of(value: f32) -> Self {
        ArchB(value)
    }
    fn value(&self) -> f32 {
        self.0
    }
}

struct AddRemove<B> {
    p: Params,
    game: Context,
    entities: Vec<Entity>,
    taken: f64,
    runs: usize,
    _b: PhantomData<B>,
}

impl<B: Comes> AddRemove<B> {
    fn new(p: &Params) -> Self {
        let mut game = Context::new();
        let entities = game
            .create_entities_with((0..p.add_remove_entities).map(|i| (AddA(i as f32),)))
            .expect("no duplicate components");
        AddRemove {
            p: p.clone(),
            game,
            entities,
            taken: 0.0,
            runs: 0,
            _b: PhantomData,
        }
    }
}

impl<B: Comes> Cell for AddRemove<B> {
    fn run(&mut self) {
        for (i, &e) in self.entities.iter().enumerate() {
            self.game.add(e, B::of(work::add_remove_b(i))).expect("no B yet");
        }
        for &e in &self.entities {
            self.taken += f64::from(self.game.take::<B>(e).expect("has B").value());
        }
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let a = self
            .entities
            .iter()
            .map(|&e| self.game.get::<AddA>(e).map_or(f32::NAN, |a| a.0));
        let left = self.entities.iter().filter(|&&e| self.game.has::<B>(e)).count();
        work::check_add_remove(&self.p, self.runs, self.taken, a, left)?;
        checked(&self.game)
    }
}

/// The reactive system of both replace workloads: visits the entities whose
/// Pos changed, reading each one's x.
#[derive(Default)]
struct SumMoved {
    seen: Seen,
}

impl ReactiveSystem for SumMoved {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Pos>().added())
    }

    fn execute(&mut self, game: &mut Context, moved: &[Entity]) {
        for &e in moved {
            let p = game.get::<Pos>(e).expect("collected: alive with Pos");
            self.seen.visit(f64::from(p.0[0]));
        }
    }
}

/// How a reactive column's consumer visits the moved entities: a reactive
/// system reading each with `get` (Entitas' way), or `CollectorMut::drain`
/// reading the collector's batch in place.
enum Consumer {
    System(Reactive<SumMoved>),
    InPlace { collector: CollectorId, seen: Seen },
}

impl Consumer {
    fn new(game: &mut Context, in_place: bool) -> Self {
        if in_place {
            let collector = game.add_collector(Matcher::all_of::<Pos>().added());
            return Consumer::InPlace {
                collector,
                seen: Seen::default(),
            };
        }
        let mut system = Reactive::new(SumMoved::default());
        system.initialize(game);
        Consumer::System(system)
    }

    fn run(&mut self, game: &mut Context) {
        match self {
            Consumer::System(system) => system.execute(game),
            Consumer::InPlace { collector, seen } => {
                game.collector_mut(*collector).unwrap().drain::<&Pos>(|p| seen.visit(f64::from(p.0[0])))
                    .expect("the context's collector");
            }
        }
    }

    fn seen(&self) -> Seen {
        match self {
            Consumer::System(system) => system.system().seen,
            Consumer::InPlace { seen, .. } => *seen,
        }
    }
}

/// How a reactive column writes the new positions.
#[derive(Clone, Copy)]
enum Write {
    /// One `modify_with::<Pos, &Vel>` per entity.
    ModifyWith,
    /// Two `get`s and one `replace` per entity.
    Replace,
    /// One `modify_each` over the group of movers.
    ModifyEach,
    /// One `query_mut` over every mover.
    QueryMut,
    /// One parallel `query_mut` over every mover.
    ParForEach,
    /// One `view_mut::<(&mut Pos, &Vel)>()` per frame, `get_mut` per entity.
    ViewMut,
    /// A `get` and a `get_mut` per entity.
    GetMut,
}

fn write_one(game: &mut Context, e: Entity, write: Write) {
    match write {
        Write::ModifyWith => game
            .modify_with::<Pos, &Vel, _>(e, |p, v| p.0 = work::moved(&p.0, &v.0))
            .expect("alive with Pos and Vel"),
        Write::Replace => {
            let (p, v) = (
                game.get::<Pos>(e).expect("alive").0,
                game.get::<Vel>(e).expect("alive").0,
            );
            game.replace(e, Pos(work::moved(&p, &v))).expect("alive");
        }
        Write::GetMut => {
            let v = game.get::<Vel>(e).expect("alive").0;
            let mut p = game.get_mut::<Pos>(e).expect("alive");
            p.0 = work::moved(&p.0, &v);
        }
        Write::ModifyEach | Write::QueryMut | Write::ParForEach | Write::ViewMut => {
            unreachable!("modify_each, the queries and view_mut write in their own loops")
        }
    }
}

/// A context of movers with the consumer set up.
fn movers(n: usize, in_place: bool) -> (Context, Vec<Entity>, GroupId, Consumer) {
    let (mut game, entities) = movers_untracked(n);
    let group = game.add_group(Matcher::all_of::<(Pos, Vel)>());
    let consumer = Consumer::new(&mut game, in_place);
    (game, entities, group, consumer)
}

/// A context of movers and no consumer.
fn movers_untracked(n: usize) -> (Context, Vec<Entity>) {
    let mut game = Context::new();
    let entities = game
        .create_entities_with((0..n).map(|i| (Pos(work::start_position(i)), Vel(work::VELOCITY))))
        .expect("no duplicate components");
    (game, entities)
}

fn sum_x(game: &Context) -> f64 {
    game.query::<&Pos>().iter().map(|p| f64::from(p.0[0])).sum()
}

struct Replace {
    p: Params,
    game: Context,
    entities: Vec<Entity>,
    group: GroupId,
    system: Consumer,
    write: Write,
    frames: usize,
}

impl Replace {
    fn new(p: &Params, write: Write, in_place: bool) -> Self {
        let (game, entities, group, system) = movers(p.replace_entities, in_place);
        Replace {
            p: p.clone(),
            game,
            entities,
            group,
            system,
            write,
            frames: 0,
        }
    }
}

impl Cell for Replace {
    fn run(&mut self) {
        if let Write::ModifyEach = self.write {
            self.game
                .modify_each::<Pos, &Vel>(self.group, |p, v| p.0 = work::moved(&p.0, &v.0))
                .expect("the context's group");
        } else if let Write::QueryMut = self.write {
            self.game
                .query_mut::<(&mut Pos, &Vel)>()
                .expect("no aliasing")
                .for_each(|(p, v)| p.0 = work::moved(&p.0, &v.0));
        } else if let Write::ParForEach = self.write {
            self.game
                .query_mut::<(&mut Pos, &Vel)>()
                .expect("no aliasing")
                .par_for_each(|(p, v)| p.0 = work::moved(&p.0, &v.0));
        } else if let Write::ViewMut = self.write {
            let mut view = self.game.view_mut::<(&mut Pos, &Vel)>().expect("no aliasing");
            for &e in &self.entities {
                let (p, v) = view.get_mut(e).expect("alive with Pos and Vel");
                p.0 = work::moved(&p.0, &v.0);
            }
        } else {
            for &e in &self.entities {
                write_one(&mut self.game, e, self.write);
            }
        }
        self.system.run(&mut self.game);
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        work::check_replace(&self.p, self.frames, self.system.seen(), sum_x(&self.game))?;
        checked(&self.game)
    }
}

struct Sparse {
    p: Params,
    plan: SparsePlan,
    game: Context,
    entities: Vec<Entity>,
    system: Consumer,
    write: Write,
    frames: usize,
}

impl Sparse {
    fn new(p: &Params, write: Write, in_place: bool) -> Self {
        let (game, entities, _, system) = movers(p.sparse_entities, in_place);
        Sparse {
            p: p.clone(),
            plan: SparsePlan::new(p),
            game,
            entities,
            system,
            write,
            frames: 0,
        }
    }
}

impl Cell for Sparse {
    fn run(&mut self) {
        if let Write::ViewMut = self.write {
            let mut view = self.game.view_mut::<(&mut Pos, &Vel)>().expect("no aliasing");
            for &i in self.plan.frame(self.frames) {
                let (p, v) = view.get_mut(self.entities[i as usize]).expect("alive with Pos and Vel");
                p.0 = work::moved(&p.0, &v.0);
            }
        } else {
            for &i in self.plan.frame(self.frames) {
                write_one(&mut self.game, self.entities[i as usize], self.write);
            }
        }
        self.system.run(&mut self.game);
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let seen = self.system.seen();
        self.plan.check(&self.p, self.frames, seen, sum_x(&self.game))?;
        checked(&self.game)
    }
}

/// Entities marked since the last drain, kept by hand (a flag per entity
/// slot and a list): what hecs' column does, for the by-hand floors.
struct HandList {
    flags: Vec<bool>,
    list: Vec<Entity>,
}

impl HandList {
    fn new(n: usize) -> Self {
        HandList {
            flags: vec![false; n],
            list: Vec::with_capacity(n),
        }
    }

    #[inline(always)]
    fn mark(&mut self, e: Entity) {
        let flag = &mut self.flags[e.index() as usize];
        if !*flag {
            *flag = true;
            self.list.push(e);
        }
    }

    /// Visits each listed entity, then forgets them.
    #[inline(always)]
    fn drain(&mut self, mut visit: impl FnMut(Entity)) {
        for &e in &self.list {
            visit(e);
            self.flags[e.index() as usize] = false;
        }
        self.list.clear();
    }
}

/// reactive_replace_sparse with nothing tracked: the writes by handle and a
/// hand-kept list, read back by handle.
struct ByHandSparse {
    p: Params,
    plan: SparsePlan,
    game: Context,
    entities: Vec<Entity>,
    changed: HandList,
    seen: Seen,
    frames: usize,
}

impl ByHandSparse {
    fn new(p: &Params) -> Self {
        let (game, entities) = movers_untracked(p.sparse_entities);
        ByHandSparse {
            p: p.clone(),
            plan: SparsePlan::new(p),
            game,
            entities,
            changed: HandList::new(p.sparse_entities),
            seen: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for ByHandSparse {
    fn run(&mut self) {
        for &i in self.plan.frame(self.frames) {
            let e = self.entities[i as usize];
            write_one(&mut self.game, e, Write::GetMut);
            self.changed.mark(e);
        }
        let (game, seen) = (&self.game, &mut self.seen);
        self.changed
            .drain(|e| seen.visit(f64::from(game.get::<Pos>(e).expect("alive with Pos").0[0])));
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        self.plan.check(&self.p, self.frames, self.seen, sum_x(&self.game))?;
        checked(&self.game)
    }
}

/// reactive_add_remove with the tag declared `flag` and nothing tracked:
/// the toggles, hand-kept lists of who joined and who left, each read by
/// handle.
struct ByHandTags {
    p: Params,
    game: Context,
    entities: Vec<Entity>,
    joined: HandList,
    left: HandList,
    seen_joined: Seen,
    seen_left: Seen,
    frames: usize,
}

impl ByHandTags {
    fn new(p: &Params) -> Self {
        let mut game = Context::new();
        let entities = game
            .create_entities_with((0..p.tag_entities as u64).map(|i| (Held(i),)))
            .expect("no duplicate components");
        ByHandTags {
            p: p.clone(),
            game,
            entities,
            joined: HandList::new(p.tag_entities),
            left: HandList::new(p.tag_entities),
            seen_joined: Seen::default(),
            seen_left: Seen::default(),
            frames: 0,
        }
    }
}

impl Cell for ByHandTags {
    fn run(&mut self) {
        for &e in self.entities.iter().step_by(2) {
            self.game.add(e, FlagTag).expect("no tag yet");
            self.joined.mark(e);
        }
        let (game, seen) = (&self.game, &mut self.seen_joined);
        self.joined
            .drain(|e| seen.visit(game.get::<Held>(e).expect("alive with Held").0 as f64));
        for &e in self.entities.iter().step_by(2) {
            self.game.remove::<FlagTag>(e).expect("has the tag");
            self.left.mark(e);
        }
        let (game, seen) = (&self.game, &mut self.seen_left);
        self.left
            .drain(|e| seen.visit(game.get::<Held>(e).expect("alive with Held").0 as f64));
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let still = self.entities.iter().filter(|&&e| self.game.has::<FlagTag>(e)).count();
        work::check_tags(&self.p, self.frames, self.seen_joined, self.seen_left, still)?;
        checked(&self.game)
    }
}

/// Visits the entities that gained (or lost) tag `T`, summing what they hold.
struct Visit<T> {
    removed: bool,
    seen: Seen,
    _tag: PhantomData<fn() -> T>,
}

impl<T: Component> ReactiveSystem for Visit<T> {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        let matcher = Matcher::all_of::<(Held, T)>();
        game.add_collector(if self.removed {
            matcher.removed()
        } else {
            matcher.added()
        })
    }

    fn execute(&mut self, game: &mut Context, entities: &[Entity]) {
        for &e in entities {
            self.seen.visit(game.get::<Held>(e).expect("alive with Held").0 as f64);
        }
    }
}

struct Tags<T> {
    p: Params,
    game: Context,
    entities: Vec<Entity>,
    joined: Reactive<Visit<T>>,
    left: Reactive<Visit<T>>,
    frames: usize,
}

impl<T: Component + Default> Tags<T> {
    fn new(p: &Params) -> Self {
        let mut game = Context::new();
        let entities = game
            .create_entities_with((0..p.tag_entities as u64).map(|i| (Held(i),)))
            .expect("no duplicate components");
        let visit = |removed| {
            Reactive::new(Visit {
                removed,
                seen: Seen::default(),
                _tag: PhantomData,
            })
        };
        let (mut joined, mut left) = (visit(false), visit(true));
        joined.initialize(&mut game);
        left.initialize(&mut game);
        Tags {
            p: p.clone(),
            game,
            entities,
            joined,
            left,
            frames: 0,
        }
    }
}

impl<T: Component + Default> Cell for Tags<T> {
    fn run(&mut self) {
        for &e in self.entities.iter().step_by(2) {
            self.game.add(e, T::default()).expect("no tag yet");
        }
        self.joined.execute(&mut self.game);
        for &e in self.entities.iter().step_by(2) {
            self.game.remove::<T>(e).expect("has the tag");
        }
        self.left.execute(&mut self.game);
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        let still = self.entities.iter().filter(|&&e| self.game.has::<T>(e)).count();
        let (joined, left) = (self.joined.system().seen, self.left.system().seen);
        work::check_tags(&self.p, self.frames, joined, left, still)?;
        checked(&self.game)
    }
}

struct Lookup {
    keys: Keys,
    game: Context,
    index: IndexId<PrimaryEntityIndex<u64>>,
    per_key: bool,
    total: f64,
    runs: usize,
}

impl Lookup {
    fn new(p: &Params, per_key: bool) -> Self {
        let keys = Keys::new(p);
        let mut game = Context::new();
        let index = game
            .add_index(PrimaryEntityIndex::new("Id", |id: &Id| id.0))
            .expect("a new index");
        game.create_entities_with(
            keys.keys
                .iter()
                .enumerate()
                .map(|(i, &k)| (Id(k), Value(work::index_value(i)))),
        )
        .expect("distinct keys");
        Lookup {
            keys,
            game,
            index,
            per_key,
            total: 0.0,
            runs: 0,
        }
    }
}

impl Cell for Lookup {
    fn run(&mut self) {
        let mut sum = 0.0;
        if self.per_key {
            for key in &self.keys.lookups {
                let e = self
                    .game
                    .index(self.index).map(|index| index.get(key))
                    .expect("added")
                    .expect("every key is filed");
                sum += f64::from(self.game.get::<Value>(e).expect("alive with a Value").0);
            }
        } else {
            let index = self.game.index(self.index).expect("added");
            for key in &self.keys.lookups {
                let e = index.get(key).expect("every key is filed");
                sum += f64::from(self.game.get::<Value>(e).expect("alive with a Value").0);
            }
        }
        self.total += sum;
        self.runs += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        self.keys.check(self.runs, self.total)?;
        checked(&self.game)
    }
}

/// boids: the example's own flock, one frame per run.
struct Boids {
    p: Params,
    flock: Flock,
    model: BoidsModel,
    frames: usize,
}

impl Boids {
    fn new(p: &Params) -> Self {
        Boids {
            p: p.clone(),
            flock: Flock::new(p.boids, Steering::ByCell),
            model: BoidsModel::new(p),
            frames: 0,
        }
    }
}

impl Cell for Boids {
    fn prepare(&mut self) {
        if self.frames == work::BOID_FRAMES {
            self.flock = Flock::new(self.p.boids, Steering::ByCell);
            self.frames = 0;
            self.run();
        }
    }

    fn run(&mut self) {
        self.flock.frame();
        self.frames += 1;
    }

    fn verify(&mut self) -> Result<(), String> {
        self.model.check(self.frames, &self.flock.state())?;
        let game = &self.flock.game;
        let filed = game.index(self.flock.grid).map_err(|e| e.to_string())?.entity_count();
        let census = game.unique::<Census>().map_or(0, |c| c.boids);
        if filed != self.p.boids || (self.frames > 0 && census != self.p.boids) {
            return Err(format!(
                "the grid files {filed} boids and the census counted {census}, expected {}",
                self.p.boids
            ));
        }
        checked(game)
    }
}

fn memory_watched(p: &Params) -> (Kept, Result<(), String>) {
    let (game, check) = memory(p);
    let mut game = game.downcast::<Context>().expect("a context");
    game.add_collector(Matcher::all_of::<Position>().updated());
    (game, check)
}

fn memory(p: &Params) -> (Kept, Result<(), String>) {
    let mut game = Context::new();
    game.create_entities_with((0..p.memory_entities).map(work::memory_bundle))
        .expect("no duplicate components");
    let sum = game.query::<&Position>().iter().map(|p| f64::from(p.0[0])).sum();
    let check = work::check_memory(p, game.len(), sum);
    (Box::new(game), check)
}
