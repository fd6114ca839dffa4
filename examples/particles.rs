//! Particles: a small fountain simulation that shows the crate foundation.
//!
//! Particles are entities with `Position`, `Velocity` and `Lifetime`. Each frame
//! moves them (a silent `get_mut` write), counts down their lifetime with
//! `replace` (which fires `ComponentReplaced`), lands them by removing
//! `Velocity` and adding the `Landed` flag (moving them between archetypes), and
//! destroys the expired ones. A subscriber keeps statistics from the events
//! alone, and the program checks them against the context at the end.
//!
//! Run it with `cargo run --release --example particles`.

use std::sync::{Arc, Mutex};

use reactecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Velocity {
    x: f32,
    y: f32,
}

/// Frames left to live.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Lifetime(u32);

/// A flag: the particle touched the ground.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Landed;

/// The particle's colour, owned heap data to show that values are dropped.
#[derive(Clone, Debug, PartialEq)]
struct Colour(String);

reactecs::component!(Position, Velocity, Lifetime, Landed, Colour);

/// What the event subscriber learns.
#[derive(Debug, Default)]
struct Stats {
    created: u64,
    destroyed: u64,
    landed: u64,
    lifetime_ticks: u64,
}

const FRAMES: u32 = 240;
const SPAWN_PER_FRAME: u32 = 50;
const GRAVITY: f32 = -9.8;
const DT: f32 = 1.0 / 60.0;

/// A tiny deterministic random number generator (xorshift), so runs repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn main() -> Result<(), Error> {
    let mut game = Context::with_name("Game");
    let stats = Arc::new(Mutex::new(Stats::default()));
    let sink = stats.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        let mut stats = sink.lock().unwrap();
        match event {
            ContextEvent::EntityCreated { .. } => stats.created += 1,
            ContextEvent::EntityDestroyed { .. } => stats.destroyed += 1,
            ContextEvent::ComponentAdded { component, .. } if component.get::<Landed>().is_some() => stats.landed += 1,
            ContextEvent::ComponentReplaced { old, new, .. } => {
                if let (Some(old), Some(new)) = (old.get::<Lifetime>(), new.get::<Lifetime>()) {
                    stats.lifetime_ticks += u64::from(old.0 - new.0);
                }
            }
            _ => {}
        }
    });

    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let colours = ["red", "amber", "teal"];
    let mut alive: Vec<Entity> = Vec::new();
    for frame in 0..FRAMES {
        for i in 0..SPAWN_PER_FRAME {
            let particle = game.create_entity_with((
                Position { x: 0.0, y: 0.0 },
                Velocity {
                    x: rng.next() * 4.0 - 2.0,
                    y: 5.0 + rng.next() * 5.0,
                },
                Lifetime(60 + (rng.next() * 120.0) as u32),
                Colour(colours[(frame + i) as usize % colours.len()].to_owned()),
            ))?;
            alive.push(particle);
        }
        let mut expired = Vec::new();
        for &particle in &alive {
            if let Ok(velocity) = game.get_mut::<Velocity>(particle) {
                velocity.y += GRAVITY * DT;
                let step = *velocity;
                let position = game.get_mut::<Position>(particle)?;
                position.x += step.x * DT;
                position.y += step.y * DT;
                if position.y < 0.0 {
                    position.y = 0.0;
                    game.remove::<Velocity>(particle)?;
                    game.add(particle, Landed)?;
                }
            }
            let left = game.get::<Lifetime>(particle)?.0;
            if left == 0 {
                expired.push(particle);
            } else {
                game.replace(particle, Lifetime(left - 1))?;
            }
        }
        for particle in expired {
            game.destroy_entity(particle)?;
        }
        alive.retain(|&p| game.is_alive(p));
    }

    let stats = stats.lock().unwrap();
    let landed_now = game.entities().filter(|&e| game.has::<Landed>(e)).count();
    let flying_now = game
        .entities()
        .filter(|&e| game.has_all::<(Velocity, Position)>(e))
        .count();
    println!("after {FRAMES} frames:");
    println!(
        "  events: {} created, {} destroyed, {} landed, {} lifetime ticks",
        stats.created, stats.destroyed, stats.landed, stats.lifetime_ticks
    );
    println!(
        "  alive: {} particles ({flying_now} flying, {landed_now} landed)",
        game.len()
    );
    println!("  storage: {:?}", game.storage_stats());
    if let Some(first) = game.entities().next() {
        println!("  oldest live particle: {:?}", game.entity(first)?);
    }
    assert_eq!(
        stats.created - stats.destroyed,
        game.len() as u64,
        "events agree with the context"
    );
    assert_eq!(flying_now + landed_now, game.len());
    game.check_invariants().expect("storage is consistent");
    Ok(())
}
