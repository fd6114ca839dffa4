//! Particles: a small fountain simulation that tours the crate.
//!
//! Particles are entities with `Position`, `Velocity`, `Lifetime` and
//! `Colour`. Each frame:
//! - a query moves the flying ones (silent writes through `&mut`), and
//!   collects those that touched the ground;
//! - after the loop, those lose `Velocity` and gain the `Landed` flag (moving
//!   them between archetypes, and between groups);
//! - `modify_each` counts lifetimes down, which fires `ComponentReplaced`;
//! - expired particles are destroyed;
//! - the frame counter is a unique component.
//!
//! A context subscriber and a group subscriber keep statistics from events
//! alone; the program checks them against the context and its groups at the
//! end.
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

/// The frame counter: a singleton.
#[derive(Debug, PartialEq)]
struct Clock {
    frame: u32,
}

reactecs::component!(Position, Velocity, Lifetime, Landed, Colour);
reactecs::component!(unique Clock);

/// What the event subscriber learns.
#[derive(Debug, Default)]
struct Stats {
    created: u64,
    destroyed: u64,
    landed: u64,
    lifetime_ticks: u64,
    /// From the `Landed` group's events.
    landings: u64,
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

    // Groups are live: they follow every change from now on.
    let flying = game.group(Matcher::all_of::<(Position, Velocity)>());
    let grounded = game.group(Matcher::all_of::<Landed>());
    let ageing = game.group(Matcher::all_of::<Lifetime>());
    let sink = stats.clone();
    game.subscribe_group(grounded, move |event: &GroupEvent<'_>| {
        if let GroupEvent::Added { .. } = event {
            sink.lock().unwrap().landings += 1;
        }
    })?;
    game.set_unique(Clock { frame: 0 })?;

    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let colours = ["red", "amber", "teal"];
    // Reused every frame: structural changes wait until the query is done.
    let mut touched: Vec<Entity> = Vec::new();
    let mut expired: Vec<Entity> = Vec::new();
    for frame in 0..FRAMES {
        for i in 0..SPAWN_PER_FRAME {
            game.create_entity_with((
                Position { x: 0.0, y: 0.0 },
                Velocity {
                    x: rng.next() * 4.0 - 2.0,
                    y: 5.0 + rng.next() * 5.0,
                },
                Lifetime(60 + (rng.next() * 120.0) as u32),
                Colour(colours[(frame + i) as usize % colours.len()].to_owned()),
            ))?;
        }
        // Move: silent writes, chunk by chunk under the hood.
        for (particle, position, velocity) in game
            .query_mut::<(Entity, &mut Position, &mut Velocity)>()?
            .in_group(flying)?
            .iter()
        {
            velocity.y += GRAVITY * DT;
            position.x += velocity.x * DT;
            position.y += velocity.y * DT;
            if position.y < 0.0 {
                position.y = 0.0;
                touched.push(particle);
            }
        }
        for particle in touched.drain(..) {
            game.remove::<Velocity>(particle)?;
            game.add(particle, Landed)?;
        }
        // Age: `modify_each` writes through `&mut` and fires replaced events.
        game.modify_each::<Lifetime, ()>(ageing, |left, ()| left.0 = left.0.saturating_sub(1))?;
        expired.extend(
            game.query::<(Entity, &Lifetime)>()
                .iter()
                .filter(|(_, left)| left.0 == 0)
                .map(|(particle, _)| particle),
        );
        for particle in expired.drain(..) {
            game.destroy_entity(particle)?;
        }
        game.set_unique(Clock { frame: frame + 1 })?;
    }

    let stats = stats.lock().unwrap();
    let (flying_now, landed_now) = (game.get_group(flying)?.len(), game.get_group(grounded)?.len());
    println!(
        "after {} frames:",
        game.unique::<Clock>().map_or(0, |clock| clock.frame)
    );
    println!(
        "  events: {} created, {} destroyed, {} landed ({} by the group), {} lifetime ticks",
        stats.created, stats.destroyed, stats.landed, stats.landings, stats.lifetime_ticks
    );
    println!(
        "  alive: {} particles ({flying_now} flying, {landed_now} landed)",
        game.get_group(ageing)?.len()
    );
    println!(
        "  groups: {}",
        game.groups().map(|g| g.to_string()).collect::<Vec<_>>().join("; ")
    );
    println!("  storage: {:?}", game.storage_stats());
    if let Some(first) = game.get_group(ageing)?.iter().next() {
        println!("  a live particle: {:?}", game.entity(first)?);
    }
    assert_eq!(
        stats.created - stats.destroyed,
        game.len() as u64,
        "events agree with the context"
    );
    assert_eq!(stats.landed, stats.landings, "group events agree with component events");
    assert_eq!(
        flying_now + landed_now + 1,
        game.len(),
        "every particle flies or has landed; one clock"
    );
    assert_eq!(game.unique::<Clock>(), Some(&Clock { frame: FRAMES }));
    game.check_invariants().expect("storage and groups are consistent");
    Ok(())
}
