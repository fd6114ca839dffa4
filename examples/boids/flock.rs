//! The boids simulation on reactecs, and the rules it shares with the
//! hand-written twin (`by_hand.rs`): the same flocking, integration and
//! lifecycle, step for step, so the two compute the same frames.

use rayon::prelude::*;
use reactecs::prelude::*;
use reactecs::system::Parallel;

/// Perception radius, and the side of a grid cell.
pub const RADIUS: f32 = 1.0;
/// Closer than this, boids push each other away.
pub const PERSONAL_SPACE: f32 = 0.35;
/// Fastest a boid flies.
pub const MAX_SPEED: f32 = 2.0;
/// Time per frame.
pub const DT: f32 = 0.1;
/// The frame the simulation starts at (so that the staggered births of the
/// first boids are frame numbers too).
pub const FIRST_FRAME: u32 = 1_000;

/// A 2D vector.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec2 {
    pub x: f32,
    pub y: f32,
}

impl Vec2 {
    pub fn new(x: f32, y: f32) -> Self {
        Vec2 { x, y }
    }
    fn add(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }
    fn sub(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }
    fn scale(self, k: f32) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }
    fn len2(self) -> f32 {
        self.x * self.x + self.y * self.y
    }
}

/// The square world, wrapping at its edges, cut into `side` x `side` cells.
#[derive(Clone, Copy, Debug)]
pub struct World {
    pub side: i32,
}

impl World {
    /// A world for `boids` boids, about four per cell.
    pub fn for_boids(boids: usize) -> Self {
        World {
            side: ((boids as f64 / 4.0).sqrt().ceil() as i32).max(3),
        }
    }

    fn size(self) -> f32 {
        self.side as f32 * RADIUS
    }

    /// The cell `p` is in.
    pub fn cell_of(self, p: Vec2) -> Cell {
        let c = |v: f32| ((v / RADIUS) as i32).clamp(0, self.side - 1);
        Cell(c(p.x), c(p.y))
    }

    /// The cell's index in a flat grid.
    pub fn flat(self, cell: Cell) -> usize {
        (cell.1 * self.side + cell.0) as usize
    }

    /// The cell with index `flat` in a flat grid.
    pub fn cell_at(self, flat: usize) -> Cell {
        Cell(flat as i32 % self.side, flat as i32 / self.side)
    }

    /// How many cells the world has.
    pub fn cells(self) -> usize {
        (self.side * self.side) as usize
    }

    /// The nine cells around `cell` (itself included), wrapping.
    pub fn around(self, cell: Cell) -> impl Iterator<Item = Cell> {
        let side = self.side;
        (-1..=1).flat_map(move |dy| {
            (-1..=1).map(move |dx| Cell((cell.0 + dx).rem_euclid(side), (cell.1 + dy).rem_euclid(side)))
        })
    }

    /// `d` as the shortest offset on the wrapping world.
    fn shortest(self, d: Vec2) -> Vec2 {
        let size = self.size();
        let w = |v: f32| {
            if v > size / 2.0 {
                v - size
            } else if v < -size / 2.0 {
                v + size
            } else {
                v
            }
        };
        Vec2::new(w(d.x), w(d.y))
    }

    fn wrap(self, p: Vec2) -> Vec2 {
        let size = self.size();
        Vec2::new(p.x.rem_euclid(size), p.y.rem_euclid(size))
    }

    /// Moves a boid one frame on by its steering.
    pub fn integrate(self, pos: &mut Vec2, vel: &mut Vec2, accel: Vec2) {
        let mut v = vel.add(accel);
        let speed2 = v.len2();
        if speed2 > MAX_SPEED * MAX_SPEED {
            v = v.scale(MAX_SPEED / speed2.sqrt());
        }
        *vel = v;
        *pos = self.wrap(pos.add(v.scale(DT)));
    }

    /// Where and how fast boid `serial` starts when born at `frame`.
    pub fn spawn(self, serial: u32, frame: u32) -> (Vec2, Vec2) {
        let h = mix(u64::from(serial) << 32 | u64::from(frame));
        let unit = |bits: u64| (bits & 0xFFFF) as f32 / 65536.0;
        let size = self.size();
        let pos = Vec2::new(unit(h) * size, unit(h >> 16) * size);
        let vel = Vec2::new(unit(h >> 32) * 2.0 - 1.0, unit(h >> 48) * 2.0 - 1.0);
        (pos, vel)
    }
}

/// SplitMix64's finaliser: a well-mixed hash of `x`.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How many frames boid `serial` lives (each life as long as the last).
pub fn lifespan(serial: u32) -> u32 {
    300 + (mix(u64::from(serial)) % 300) as u32
}

/// The frame the first life of boid `serial` began: staggered, so that
/// boids die a few at a time from the first frame on.
pub fn first_birth(serial: u32) -> u32 {
    FIRST_FRAME - (mix(u64::from(serial) ^ 0xB1D) % u64::from(lifespan(serial))) as u32
}

/// What one boid makes of the neighbours it sees: separation, alignment and
/// cohesion, summed neighbour by neighbour.
#[derive(Default)]
pub struct Flocking {
    push: Vec2,
    heading: Vec2,
    offset: Vec2,
    seen: u32,
}

impl Flocking {
    /// Sees a neighbour at `p` flying at `v`, from `me`.
    #[inline]
    pub fn see(&mut self, world: World, me: Vec2, p: Vec2, v: Vec2) {
        let d = world.shortest(p.sub(me));
        let d2 = d.len2();
        if d2 < RADIUS * RADIUS {
            self.seen += 1;
            self.heading = self.heading.add(v);
            self.offset = self.offset.add(d);
            if d2 < PERSONAL_SPACE * PERSONAL_SPACE && d2 > 0.0 {
                self.push = self.push.sub(d.scale(1.0 / d2));
            }
        }
    }

    /// The steering of a boid flying at `vel`.
    pub fn steering(&self, vel: Vec2) -> Vec2 {
        if self.seen == 0 {
            return Vec2::default();
        }
        let n = 1.0 / self.seen as f32;
        let align = self.heading.scale(n).sub(vel).scale(0.05);
        let cohere = self.offset.scale(n * 0.01);
        align.add(cohere).add(self.push.scale(0.002))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pos(pub Vec2);
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vel(pub Vec2);
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Accel(pub Vec2);
/// The grid cell a boid is in: the key of the `Grid` index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell(pub i32, pub i32);
/// The frame the boid was born.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Born(pub u32);
/// Which boid this is: kept through every rebirth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Serial(pub u32);
/// The frame being simulated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock(pub u32);
/// What `Census` counted on the last frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Census {
    pub boids: usize,
    pub mean_speed: f32,
    pub births: usize,
}
reactecs::component!(Pos, Vel, Accel, Cell, Born, Serial, unique Clock, unique Census);

/// The grid: boids by cell, kept current by the context as cells change.
pub type Grid = IndexId<EntityIndex<Cell>>;

/// A boid born at `frame`.
fn boid(world: World, serial: u32, born: u32) -> (Pos, Vel, Accel, Cell, Born, Serial) {
    let (p, v) = world.spawn(serial, born);
    (
        Pos(p),
        Vel(v),
        Accel::default(),
        world.cell_of(p),
        Born(born),
        Serial(serial),
    )
}

/// How `Steer` visits the flock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steering {
    /// Cell by cell, in parallel: the boids of the nine cells around a cell
    /// are read once (through a `View`, found through the grid), then every
    /// boid of the cell steers by them; the accelerations are written
    /// afterwards through a `ViewMut`. Each boid is read once per neighbouring
    /// cell, not once per neighbour.
    ByCell,
    /// Boid by boid, in parallel: each boid's `Accel` written by a query
    /// while a `View` beside it reads every neighbour the grid lists
    /// (`query_mut_and_view`): the most direct program, reading each boid
    /// once per neighbour.
    ByBoid,
}

/// Steers every boid by the neighbours it sees.
struct Steer {
    world: World,
    grid: Grid,
    by: Steering,
}

impl Steer {
    fn by_boid(&self, game: &mut Context) {
        let world = self.world;
        let (mut boids, view) = game
            .query_mut_and_view::<(Entity, &mut Accel, &Pos, &Vel, &Cell), (&Pos, &Vel)>()
            .expect("the boid query writes only `Accel`, which the view does not read");
        let grid = view.index(self.grid).expect("the flock's grid");
        boids.par_for_each(|(me, accel, pos, vel, &cell)| {
            let mut flocking = Flocking::default();
            for near in world.around(cell) {
                for &other in grid.get(&near) {
                    if other != me {
                        let (p, v) = view.get(other).expect("the grid files live boids");
                        flocking.see(world, pos.0, p.0, v.0);
                    }
                }
            }
            accel.0 = flocking.steering(vel.0);
        });
    }

    fn by_cell(&self, game: &mut Context) {
        let world = self.world;
        let steered: Vec<Vec<(Entity, Vec2)>> = {
            let view = game.view::<(&Pos, &Vel)>();
            let grid = view.index(self.grid).expect("the flock's grid");
            (0..world.cells())
                .into_par_iter()
                .with_min_len(64)
                .fold(
                    || (Vec::new(), Vec::new()),
                    |(mut steered, mut near), flat| {
                        let cell = world.cell_at(flat);
                        let members = grid.get(&cell);
                        if members.is_empty() {
                            return (steered, near);
                        }
                        // The boids around, the cell's own among them (from
                        // `mine` on, in the grid's order).
                        near.clear();
                        let mut mine = 0;
                        for around in world.around(cell) {
                            if around == cell {
                                mine = near.len();
                            }
                            for &other in grid.get(&around) {
                                let (p, v) = view.get(other).expect("the grid files live boids");
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
                        (steered, near)
                    },
                )
                .map(|(steered, _)| steered)
                .collect()
        };
        // Many entities written by handle: one prepared view for the loop.
        let mut accels = game.view_mut::<&mut Accel>().expect("`Accel` is no index's key");
        for (boid, accel) in steered.into_iter().flatten() {
            accels.get_mut(boid).expect("a filed boid").0 = accel;
        }
    }
}

impl System for Steer {
    fn execute(&mut self, game: &mut Context) {
        match self.by {
            Steering::ByCell => self.by_cell(game),
            Steering::ByBoid => self.by_boid(game),
        }
    }
}

/// Moves every boid in parallel; a boid that crossed into another cell is
/// given its new `Cell` through a command buffer (one per batch, played
/// back in order), so the grid index re-files it.
struct Integrate {
    world: World,
    moves: CommandBuffer,
}

impl System for Integrate {
    fn execute(&mut self, game: &mut Context) {
        let world = self.world;
        let buffers = game
            .query_mut::<(Entity, &mut Pos, &mut Vel, &Accel, &Cell)>()
            .expect("`Cell` is only read here")
            .par_fold(CommandBuffer::new, |moves, (e, pos, vel, accel, &cell)| {
                world.integrate(&mut pos.0, &mut vel.0, accel.0);
                let now = world.cell_of(pos.0);
                if now != cell {
                    moves.replace(e, now);
                }
            });
        for mut batch in buffers {
            self.moves.append(&mut batch);
        }
        self.moves.playback(game).expect("moved boids are alive");
    }
}

/// Ends the lives that are over: each such boid destroyed, and born again
/// (same serial, new place), through the buffer it records into.
struct Lifecycle {
    world: World,
}

impl DeferredSystem for Lifecycle {
    fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
        let (world, now) = (self.world, game.unique::<Clock>().expect("the clock is set").0);
        let buffers =
            game.query::<(Entity, &Born, &Serial)>()
                .par_fold(CommandBuffer::new, |lives, (e, born, serial)| {
                    if now - born.0 >= lifespan(serial.0) {
                        lives.destroy_entity(e);
                        lives.create_entity_with(boid(world, serial.0, now));
                    }
                });
        for mut batch in buffers {
            commands.append(&mut batch);
        }
    }
}

/// Counts the flock (reading the same context as `Lifecycle`, side by side).
struct Counting;

impl DeferredSystem for Counting {
    fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
        let now = game.unique::<Clock>().expect("the clock is set").0;
        let (speed, births) = game
            .query::<(&Vel, &Born)>()
            .par_fold(
                || (0.0f64, 0usize),
                |(speed, births), (vel, born)| {
                    *speed += f64::from(vel.0.len2().sqrt());
                    *births += usize::from(born.0 == now - 1);
                },
            )
            .into_iter()
            .fold((0.0, 0), |(s, b), (s2, b2)| (s + s2, b + b2));
        let boids = game.query::<&Serial>().count();
        commands.set_unique(Census {
            boids,
            mean_speed: (speed / boids.max(1) as f64) as f32,
            births,
        });
    }
}

/// Advances the clock.
struct Tick;

impl System for Tick {
    fn execute(&mut self, game: &mut Context) {
        let now = game.unique::<Clock>().expect("the clock is set").0;
        game.set_unique(Clock(now + 1)).expect("a unique component");
    }
}

/// The flock on reactecs: the context and the systems of one frame.
pub struct Flock {
    pub game: Context,
    pub world: World,
    pub grid: Grid,
    pub systems: Feature,
}

impl Flock {
    /// `boids` boids, with serials `0..boids`, their first lives staggered,
    /// steered as `by` says.
    pub fn new(boids: usize, by: Steering) -> Self {
        let world = World::for_boids(boids);
        let mut game = Context::new();
        let grid = game
            .add_index(EntityIndex::new("Grid", |c: &Cell| *c))
            .expect("a new index");
        game.set_unique(Clock(FIRST_FRAME)).expect("a unique component");
        game.create_entities_with((0..boids as u32).map(|s| boid(world, s, first_birth(s))))
            .expect("plain bundles");
        let systems = Feature::new("flock")
            .with(Tick)
            .with(Steer { world, grid, by })
            .with(Integrate {
                world,
                moves: CommandBuffer::new(),
            })
            .with(Parallel::new("lives").with(Lifecycle { world }).with(Counting));
        Flock {
            game,
            world,
            grid,
            systems,
        }
    }

    /// Runs one frame.
    pub fn frame(&mut self) {
        self.systems.execute(&mut self.game);
    }

    /// Every boid as `(serial, position, velocity)`, by serial.
    pub fn state(&self) -> Vec<(u32, Vec2, Vec2)> {
        let mut all: Vec<_> = self
            .game
            .query::<(&Serial, &Pos, &Vel)>()
            .iter()
            .map(|(s, p, v)| (s.0, p.0, v.0))
            .collect();
        all.sort_by_key(|&(s, _, _)| s);
        all
    }
}
