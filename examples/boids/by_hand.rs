//! The same flock written by hand: flat arrays indexed by boid, and a flat
//! grid rebuilt every frame (a counting sort of the boids by cell). It
//! shares the rules of `flock.rs` (flocking, integration, births), so from
//! the same start both compute the same frames.

use rayon::prelude::*;

use crate::flock::{Cell, FIRST_FRAME, Flocking, Vec2, World, first_birth, lifespan};

pub struct ByHand {
    pub world: World,
    pub frame: u32,
    pub pos: Vec<Vec2>,
    pub vel: Vec<Vec2>,
    accel: Vec<Vec2>,
    born: Vec<u32>,
    cell: Vec<Cell>,
    /// Per flat cell, where its boids start in `in_cells` (one more entry
    /// than cells).
    cell_start: Vec<u32>,
    /// Boid indices, cell by cell, in increasing order within a cell.
    in_cells: Vec<u32>,
}

impl ByHand {
    /// `boids` boids, boid `i` with serial `i`, as `Flock::new` makes them.
    pub fn new(boids: usize) -> Self {
        let world = World::for_boids(boids);
        let (mut pos, mut vel, mut born, mut cell) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for s in 0..boids as u32 {
            let b = first_birth(s);
            let (p, v) = world.spawn(s, b);
            pos.push(p);
            vel.push(v);
            born.push(b);
            cell.push(world.cell_of(p));
        }
        let cells = (world.side * world.side) as usize;
        ByHand {
            world,
            frame: FIRST_FRAME,
            pos,
            vel,
            accel: vec![Vec2::default(); boids],
            born,
            cell,
            cell_start: vec![0; cells + 1],
            in_cells: vec![0; boids],
        }
    }

    /// Files every boid under its cell: a counting sort.
    fn build_grid(&mut self) {
        let world = self.world;
        self.cell_start.fill(0);
        for &c in &self.cell {
            self.cell_start[world.flat(c) + 1] += 1;
        }
        for i in 1..self.cell_start.len() {
            self.cell_start[i] += self.cell_start[i - 1];
        }
        let mut next = self.cell_start.clone();
        for (i, &c) in self.cell.iter().enumerate() {
            let at = &mut next[world.flat(c)];
            self.in_cells[*at as usize] = i as u32;
            *at += 1;
        }
    }

    /// Runs one frame: the same steps as `Flock::frame`.
    pub fn frame(&mut self) {
        self.frame += 1;
        let world = self.world;
        self.build_grid();
        let (pos, vel, cell) = (&self.pos, &self.vel, &self.cell);
        let (cell_start, in_cells) = (&self.cell_start, &self.in_cells);
        self.accel.par_iter_mut().enumerate().for_each(|(me, accel)| {
            let mut flocking = Flocking::default();
            for near in world.around(cell[me]) {
                let flat = world.flat(near);
                for &other in &in_cells[cell_start[flat] as usize..cell_start[flat + 1] as usize] {
                    let other = other as usize;
                    if other != me {
                        flocking.see(world, pos[me], pos[other], vel[other]);
                    }
                }
            }
            *accel = flocking.steering(vel[me]);
        });
        (&mut self.pos, &mut self.vel, &self.accel, &mut self.cell)
            .into_par_iter()
            .for_each(|(p, v, a, c)| {
                world.integrate(p, v, *a);
                *c = world.cell_of(*p);
            });
        for i in 0..self.pos.len() {
            let serial = i as u32;
            if self.frame - self.born[i] >= lifespan(serial) {
                let (p, v) = world.spawn(serial, self.frame);
                self.pos[i] = p;
                self.vel[i] = v;
                self.born[i] = self.frame;
                self.cell[i] = world.cell_of(p);
            }
        }
    }

    /// Every boid as `(serial, position, velocity)`, by serial.
    pub fn state(&self) -> Vec<(u32, Vec2, Vec2)> {
        (0..self.pos.len())
            .map(|i| (i as u32, self.pos[i], self.vel[i]))
            .collect()
    }
}
