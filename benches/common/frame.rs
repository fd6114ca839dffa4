//! One steady frame of a game that uses every reactive piece at once: the
//! workload of issue 13's allocation test (`tests/steady_state.rs`, which
//! includes this file) and of the `steady_frame` bench.
//!
//! Each frame:
//! - replaces `Pos` with `pos + vel` on 10,000 movers (one
//!   `Context::modify_with` each, the README's way); a reactive system
//!   (collector: `AllOf(Pos).added()`) sums the x of those that moved, and an
//!   entity index keyed on the grid cell of `Pos` follows them;
//! - toggles the `Selected` flag on 1,000 of them;
//! - churns 100 of them: each one's pooled `Trail` (a `Vec`) is removed
//!   and a fresh one, from the pool, is added;
//! - iterating the sparks with a query, records into a command buffer the
//!   destruction of each and the creation of 10 new ones, then plays it back.
//!
//! [`Baseline`] does the same work by hand: the components in `Vec`s, a dirty
//! flag and list, a foldhash `HashMap` from cell to entity ids kept current
//! on each move, a `bool` per mover, a free list of trail buffers, and a
//! `Vec` of sparks.
#![allow(dead_code)]

use std::collections::HashMap;

use reactecs::prelude::*;
use reactecs::system::Reactive;

/// 2 x f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pos(pub [f32; 2]);
/// 2 x f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vel(pub [f32; 2]);
/// A tag toggled every frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Selected;
/// Where a mover has been: heap memory that churns, so it is pooled.
#[derive(Debug, Default, PartialEq)]
pub struct Trail(pub Vec<[f32; 2]>);
impl Recycle for Trail {
    const POOL_CAPACITY: usize = CHURNED;

    fn recycle(&mut self) {
        self.0.clear();
    }
}
/// A short-lived entity, made and destroyed through a command buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spark(pub u32);
reactecs::component!(Pos, Vel, flag Selected, pooled Trail, Spark);

pub const MOVERS: usize = 10_000;
pub const TAGGED: usize = 1_000;
pub const CHURNED: usize = 100;
pub const SPARKS: usize = 10;
const TRAIL_POINTS: usize = 4;

/// The grid cell of a position (cells of 16 x 16).
pub fn cell(p: &Pos) -> (i32, i32) {
    ((p.0[0] as i32) >> 4, (p.0[1] as i32) >> 4)
}

/// The world's width: movers leaving on the right come back on the left.
const WIDTH: f32 = 400.0;

/// Mover `i`: rows of 100, 4 apart, each row at its own speed. A row fills
/// its ring exactly, so every cell holds as many movers in every frame (the
/// index's lists keep their sizes, as in a game at steady state).
fn start(i: usize) -> (Pos, Vel) {
    let row = i / 100;
    (
        Pos([(i % 100) as f32 * 4.0, row as f32 * 3.0]),
        Vel([1.0 + (row % 3) as f32, 0.0]),
    )
}

/// Where `p` moves with `v`.
pub fn step(p: [f32; 2], v: [f32; 2]) -> Pos {
    let x = p[0] + v[0];
    Pos([if x >= WIDTH { x - WIDTH } else { x }, p[1] + v[1]])
}

/// Sums the x of each moved position; counts the entities it saw.
#[derive(Default)]
struct SumMoved {
    sum: f64,
    seen: usize,
}

impl ReactiveSystem for SumMoved {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Pos>().added())
    }

    fn execute(&mut self, game: &mut Context, moved: &[Entity]) {
        for &e in moved {
            self.sum += f64::from(game.get::<Pos>(e).expect("collected: alive with Pos").0[0]);
        }
        self.seen += moved.len();
    }
}

/// The frame with reactecs.
pub struct Game {
    pub context: Context,
    movers: Vec<Entity>,
    system: Reactive<SumMoved>,
    pub by_cell: IndexId<EntityIndex<(i32, i32)>>,
    commands: CommandBuffer,
    frame: u32,
}

impl Game {
    pub fn new() -> Self {
        let mut context = Context::new();
        let by_cell = context
            .add_index(EntityIndex::new("cell", cell))
            .expect("a new index name");
        let movers = context
            .create_entities_with((0..MOVERS).map(start))
            .expect("no duplicate components");
        for &e in &movers[..CHURNED] {
            context.add(e, Trail(vec![[0.0; 2]; TRAIL_POINTS])).expect("alive");
        }
        let mut system = Reactive::new(SumMoved::default());
        system.initialize(&mut context);
        Game {
            context,
            movers,
            system,
            by_cell,
            commands: CommandBuffer::new(),
            frame: 0,
        }
    }

    pub fn frame(&mut self) {
        let game = &mut self.context;
        for &e in &self.movers {
            game.modify_with::<Pos, &Vel, _>(e, |p, v| *p = step(p.0, v.0))
                .expect("alive with Pos and Vel");
        }
        self.system.execute(game);

        for &e in &self.movers[..TAGGED] {
            let on = game.has::<Selected>(e);
            game.set_flag::<Selected>(e, !on).expect("alive");
        }

        for &e in &self.movers[..CHURNED] {
            game.remove::<Trail>(e).expect("has a trail");
            let mut trail = game.pool::<Trail>().take();
            let p = game.get::<Pos>(e).expect("alive").0;
            trail.0.extend((0..TRAIL_POINTS).map(|k| [p[0] - k as f32, p[1]]));
            game.add(e, trail).expect("the trail was removed");
        }

        for (e, _) in game.query::<(Entity, &Spark)>().iter() {
            self.commands.destroy_entity(e);
        }
        for k in 0..SPARKS as u32 {
            self.commands.create_entity_with(Spark(self.frame * 100 + k));
        }
        self.commands.playback(game).expect("live sparks, valid commands");
        self.frame += 1;
    }

    /// Moved entities the system saw, and the sum of their x.
    pub fn seen(&self) -> (usize, f64) {
        (self.system.system().seen, self.system.system().sum)
    }

    pub fn movers(&self) -> &[Entity] {
        &self.movers
    }
}

impl Default for Game {
    fn default() -> Self {
        Self::new()
    }
}

type FoldMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// The same frame by hand.
pub struct Baseline {
    positions: Vec<Pos>,
    velocities: Vec<Vel>,
    dirty: Vec<bool>,
    dirty_list: Vec<u32>,
    cells: Vec<(i32, i32)>,
    pub by_cell: FoldMap<(i32, i32), Vec<u32>>,
    selected: Vec<bool>,
    trails: Vec<Option<Vec<[f32; 2]>>>,
    spare_trails: Vec<Vec<[f32; 2]>>,
    sparks: Vec<Spark>,
    sum: f64,
    seen: usize,
    frame: u32,
}

impl Baseline {
    pub fn new() -> Self {
        let (positions, velocities): (Vec<Pos>, Vec<Vel>) = (0..MOVERS).map(start).unzip();
        let cells: Vec<(i32, i32)> = positions.iter().map(cell).collect();
        let mut by_cell = FoldMap::default();
        for (i, &c) in cells.iter().enumerate() {
            by_cell.entry(c).or_insert_with(Vec::new).push(i as u32);
        }
        let mut trails = vec![None; MOVERS];
        for trail in &mut trails[..CHURNED] {
            *trail = Some(vec![[0.0; 2]; TRAIL_POINTS]);
        }
        Baseline {
            positions,
            velocities,
            dirty: vec![false; MOVERS],
            dirty_list: Vec::with_capacity(MOVERS),
            cells,
            by_cell,
            selected: vec![false; MOVERS],
            trails,
            spare_trails: Vec::with_capacity(CHURNED),
            sparks: Vec::with_capacity(SPARKS),
            sum: 0.0,
            seen: 0,
            frame: 0,
        }
    }

    fn drop_trail(&mut self, i: usize) {
        if let Some(mut trail) = self.trails[i].take()
            && self.spare_trails.len() < CHURNED
        {
            trail.clear();
            self.spare_trails.push(trail);
        }
    }

    pub fn frame(&mut self) {
        for i in 0..MOVERS {
            let (p, v) = (self.positions[i].0, self.velocities[i].0);
            let moved = step(p, v);
            let (old, new) = (self.cells[i], cell(&moved));
            if old != new {
                let ids = self.by_cell.get_mut(&old).expect("filed under its cell");
                let at = ids.iter().position(|&id| id == i as u32).expect("in its cell");
                ids.swap_remove(at);
                self.by_cell.entry(new).or_default().push(i as u32);
                self.cells[i] = new;
            }
            self.positions[i] = moved;
            if !self.dirty[i] {
                self.dirty[i] = true;
                self.dirty_list.push(i as u32);
            }
        }
        for &i in &self.dirty_list {
            self.sum += f64::from(self.positions[std::hint::black_box(i) as usize].0[0]);
            self.dirty[i as usize] = false;
        }
        self.seen += self.dirty_list.len();
        self.dirty_list.clear();

        for on in &mut self.selected[..TAGGED] {
            *on = !*on;
        }

        for i in 0..CHURNED {
            self.drop_trail(i);
            let mut trail = self.spare_trails.pop().unwrap_or_default();
            let p = self.positions[i].0;
            trail.extend((0..TRAIL_POINTS).map(|k| [p[0] - k as f32, p[1]]));
            self.trails[i] = Some(trail);
        }

        self.sparks.clear();
        self.sparks
            .extend((0..SPARKS as u32).map(|k| Spark(self.frame * 100 + k)));
        self.frame += 1;
    }

    /// Moved entities seen, and the sum of their x.
    pub fn seen(&self) -> (usize, f64) {
        (self.seen, self.sum)
    }

    /// The trail of mover `i`.
    pub fn trail(&self, i: usize) -> Option<&[[f32; 2]]> {
        self.trails[i].as_deref()
    }

    /// The sparks alive.
    pub fn sparks(&self) -> &[Spark] {
        &self.sparks
    }
}

impl Default for Baseline {
    fn default() -> Self {
        Self::new()
    }
}
