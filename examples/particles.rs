//! Particles: a small fountain simulation that tours the crate.
//!
//! Particles are entities of the `Game` context with `Position`, `Velocity`,
//! `Lifetime` and `Colour`. A frame is a `Feature`: a named list of systems,
//! run in order and timed. Each frame:
//! - `Spawn` creates new particles;
//! - `Move` runs a query over the flying ones (silent writes through `&mut`)
//!   and collects those that touched the ground; after the loop, they lose
//!   `Velocity`;
//! - `Land` gives the stopped ones `Landed`, a zero-sized tag kept in the
//!   archetypes (moving them between archetypes, and between groups);
//! - `Age` counts lifetimes down with `modify_each`, which fires
//!   `ComponentReplaced`;
//! - `Expire` destroys the particles whose time is up;
//! - two reactive systems run only for what changed since their last run:
//!   `CountLandings` for the particles that gained `Landed`, and `Obituary`
//!   for those that lost their `Colour` (destroyed), reading the colour its
//!   collector kept for them;
//! - `Tick`, registered from afar with `feature_system!`, advances the frame
//!   counter, a unique component.
//!
//! A context subscriber keeps statistics from events alone; the program
//! checks them against the reactive systems' counts, the context and its
//! groups at the end, and prints how long each system took.
//!
//! Run it with `cargo run --release --example particles`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use reactecs::prelude::*;
use reactecs::system::{Reactive, ReactiveSystem};

// The context, declared: `Context::of::<Game>()` builds it, and it accepts
// only the components declared for it (`Contexts::new()` would build every
// declared context at once, each reached with `contexts.context_mut::<Game>()`).
reactecs::context!(Game);

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

reactecs::component!(Game: Position, Velocity, Lifetime, Landed, Colour, unique Clock);

/// What the program learns while it runs, shared (the subscriber must be
/// `Send + Sync`) between the event subscriber and the reactive systems.
#[derive(Debug, Default)]
struct Stats {
    // From context events:
    created: u64,
    destroyed: u64,
    landed: u64,
    lifetime_ticks: u64,
    other_replaced: u64,
    // From the reactive systems:
    landings: u64,
    obituaries: BTreeMap<String, u64>,
}

type Shared = Arc<Mutex<Stats>>;

fn lock(stats: &Shared) -> std::sync::MutexGuard<'_, Stats> {
    stats.lock().expect("no thread panicked holding the stats")
}

const FRAMES: u32 = 240;
const SPAWN_PER_FRAME: u32 = 50;
const GRAVITY: f32 = -9.8;
const DT: f32 = 1.0 / 60.0;
const COLOURS: [&str; 3] = ["red", "amber", "teal"];

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

// Systems. Each implements only the phases it needs; they return nothing, so
// a failure is a bug and `expect` says which assumption broke.

/// Creates `SPAWN_PER_FRAME` particles at the fountain's mouth.
struct Spawn {
    rng: Rng,
}

impl System for Spawn {
    fn execute(&mut self, game: &mut Context) {
        let frame = game.unique::<Clock>().expect("Tick sets the clock up").frame;
        for i in 0..SPAWN_PER_FRAME {
            let rng = &mut self.rng;
            game.create_entity_with((
                Position { x: 0.0, y: 0.0 },
                Velocity {
                    x: rng.next() * 4.0 - 2.0,
                    y: 5.0 + rng.next() * 5.0,
                },
                Lifetime(60 + (rng.next() * 120.0) as u32),
                Colour(COLOURS[(frame + i) as usize % COLOURS.len()].to_owned()),
            ))
            .expect("particle components belong to Game");
        }
    }
}

/// Moves the flying particles; those that touch the ground stop.
struct Move {
    flying: GroupId,
    /// Reused every frame: structural changes wait until the query is done.
    touched: Vec<Entity>,
}

impl System for Move {
    fn execute(&mut self, game: &mut Context) {
        // Silent writes, chunk by chunk under the hood.
        let query = game
            .query_mut::<(Entity, &mut Position, &mut Velocity)>()
            .expect("each component is borrowed once");
        for (particle, position, velocity) in query.in_group(self.flying).expect("a group of Game").iter() {
            velocity.y += GRAVITY * DT;
            position.x += velocity.x * DT;
            position.y += velocity.y * DT;
            if position.y < 0.0 {
                position.y = 0.0;
                self.touched.push(particle);
            }
        }
        for particle in self.touched.drain(..) {
            game.remove::<Velocity>(particle)
                .expect("a flying particle has a velocity");
        }
    }
}

/// Flags the particles that stopped (no `Velocity`, not yet `Landed`).
struct Land {
    stopped: GroupId,
}

impl System for Land {
    fn execute(&mut self, game: &mut Context) {
        // A list that does not borrow the context, so the loop may change the
        // group (adding `Landed` takes each particle out of it).
        let stopped = game.group(self.stopped).expect("a group of Game").entities();
        for &particle in &stopped {
            game.add(particle, Landed)
                .expect("a stopped particle has not landed yet");
        }
    }
}

/// Counts lifetimes down: `modify_each` writes through `&mut` and fires
/// replaced events (old and new value) for observers.
struct Age {
    ageing: GroupId,
}

impl System for Age {
    fn execute(&mut self, game: &mut Context) {
        game.modify_each::<Lifetime, ()>(self.ageing, |left, ()| left.0 = left.0.saturating_sub(1))
            .expect("a group of Game; no query aliasing");
    }
}

/// Destroys the particles whose lifetime ran out.
#[derive(Default)]
struct Expire {
    expired: Vec<Entity>,
}

impl System for Expire {
    fn execute(&mut self, game: &mut Context) {
        let query = game.query::<(Entity, &Lifetime)>();
        self.expired.extend(
            query
                .iter()
                .filter(|(_, left)| left.0 == 0)
                .map(|(particle, _)| particle),
        );
        for particle in self.expired.drain(..) {
            game.destroy_entity(particle).expect("an expired particle is alive");
        }
    }
}

/// Keeps the frame counter, a unique component.
struct Tick;

impl System for Tick {
    fn initialize(&mut self, game: &mut Context) {
        game.set_unique(Clock { frame: 0 }).expect("Clock is unique in Game");
    }

    fn execute(&mut self, game: &mut Context) {
        game.get_mut::<Clock>(game.unique_entity::<Clock>().expect("set up at initialize"))
            .expect("set up at initialize")
            .frame += 1;
    }
}

// `Tick` is not named where the frame is built: this registers it, from
// anywhere in the program, with the feature called "Game" (priority 50 orders
// it among registered systems; `with_registered` appends them).
reactecs::feature_system!("Game", 50, Tick);

// Reactive systems: `Reactive` drains a collector each frame and runs the
// system for what it collected, if anything.

/// Counts the particles that gained `Landed` since its last run.
struct CountLandings {
    stats: Shared,
}

impl ReactiveSystem for CountLandings {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Landed>().added())
    }

    fn execute(&mut self, _game: &mut Context, landed: &[Entity]) {
        lock(&self.stats).landings += landed.len() as u64;
    }
}

/// Counts the expired particles by colour. They are destroyed when it runs
/// (retained, disabled, until it has run): a `removed()` trigger hands them
/// over; its collector kept each one's `Colour` as it was when it left the
/// group.
struct Obituary {
    stats: Shared,
    collector: Option<CollectorId>,
}

impl ReactiveSystem for Obituary {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        let spec = Matcher::all_of::<Colour>().removed().keep_removed::<Colour>();
        *self.collector.insert(game.add_collector(spec))
    }

    fn execute(&mut self, game: &mut Context, dead: &[Entity]) {
        let id = self.collector.expect("trigger runs before execute");
        let collector = game.collector(id).expect("Reactive keeps it until teardown");
        let colours = collector.removed::<Colour>();
        let mut stats = lock(&self.stats);
        for &particle in dead {
            let Colour(name) = colours.get(particle).expect("the collector kept its colour");
            *stats.obituaries.entry(name.clone()).or_default() += 1;
        }
    }
}

fn main() -> Result<(), Error> {
    let mut game = Context::of::<Game>();
    let stats = Shared::default();
    let sink = stats.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        let mut stats = lock(&sink);
        match event {
            ContextEvent::EntityCreated { .. } => stats.created += 1,
            ContextEvent::EntityDestroyed { .. } => stats.destroyed += 1,
            ContextEvent::ComponentAdded { component, .. } if component.get::<Landed>().is_some() => stats.landed += 1,
            ContextEvent::ComponentReplaced { old, new, .. } => match (old.get::<Lifetime>(), new.get::<Lifetime>()) {
                (Some(old), Some(new)) => stats.lifetime_ticks += u64::from(old.0 - new.0),
                _ => stats.other_replaced += 1,
            },
            _ => {}
        }
    });

    // Groups are live: they follow every change from now on.
    let flying = game.add_group(Matcher::all_of::<(Position, Velocity)>());
    let stopped = game.add_group(Matcher::all_of::<Position>().none_of::<(Velocity, Landed)>());
    let grounded = game.add_group(Matcher::all_of::<Landed>());
    let ageing = game.add_group(Matcher::all_of::<Lifetime>());

    // The frame, in running order; reactive systems run after the systems
    // whose changes they react to, so they see them in the same frame.
    let mut frame = Feature::new("Game")
        .with(Spawn {
            rng: Rng(0x2545_f491_4f6c_dd1d),
        })
        .with(Move {
            flying,
            touched: Vec::new(),
        })
        .with(Land { stopped })
        // Right after `Land`: a particle that lands and expires in one frame
        // would be destroyed by the time a later reactive system runs, and
        // dropped from its batch (it does not `include_destroyed`).
        .with(Reactive::new(CountLandings { stats: stats.clone() }))
        .with(Age { ageing })
        .with(Expire::default())
        .with(Reactive::new(Obituary {
            stats: stats.clone(),
            collector: None,
        }))
        .with_registered();
    println!("{frame:?}");

    frame.initialize(&mut game); // makes the collectors, sets the clock
    for _ in 0..FRAMES {
        frame.execute(&mut game);
        frame.cleanup(&mut game);
    }

    {
        let stats = lock(&stats);
        let (flying_now, landed_now) = (game.group(flying)?.len(), game.group(grounded)?.len());
        let clock = game.unique::<Clock>().expect("Tick set the clock up");
        println!("after {} frames:", clock.frame);
        println!(
            "  events: {} created, {} destroyed, {} landed, {} lifetime ticks",
            stats.created, stats.destroyed, stats.landed, stats.lifetime_ticks
        );
        println!(
            "  reactive: {} landings; obituaries {:?}",
            stats.landings, stats.obituaries
        );
        println!(
            "  alive: {} particles ({flying_now} flying, {landed_now} landed)",
            game.group(ageing)?.len()
        );
        println!(
            "  groups: {}",
            game.groups().map(|g| g.to_string()).collect::<Vec<_>>().join("; ")
        );
        println!("  storage: {:?}", game.storage_stats());
        if let Some(first) = game.group(ageing)?.iter().next() {
            println!("  a live particle: {:?}", game.entity(first)?);
        }
        println!("{}", frame.timings());

        // Counts learnt from events agree with one another and with the context.
        assert_eq!(stats.created - stats.destroyed, game.len() as u64);
        assert_eq!(stats.landings, stats.landed); // reactive system vs. component events
        assert!(stats.lifetime_ticks > 0); // `Age`'s `modify_each` fired `ComponentReplaced`
        assert_eq!(stats.other_replaced, 0); // `Move`'s query and `Tick`'s `get_mut` were silent
        assert_eq!(stats.obituaries.values().sum::<u64>(), stats.destroyed);
        assert_eq!(flying_now + landed_now + 1, game.len()); // every particle, and the clock
        assert!(game.group(stopped)?.is_empty()); // `Land` flagged every stopped particle
        assert_eq!(clock, &Clock { frame: FRAMES });
        game.check_invariants().expect("storage and groups are consistent");
    } // The stats lock is released here: the subscriber takes it during `reset`.

    // Teardown removes the reactive systems' collectors, so nothing is
    // retained any more and the context can start over.
    frame.teardown(&mut game);
    assert_eq!(game.collectors().count(), 0);
    game.reset()?;
    assert!(game.is_empty());
    let stats = lock(&stats);
    assert_eq!(stats.created, stats.destroyed, "reset destroyed the rest, with events");
    println!("after teardown and reset: {} entities", game.len());
    Ok(())
}
