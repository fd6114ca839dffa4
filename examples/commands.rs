//! Command buffers and pools: fireworks.
//!
//! A `Rocket` flies up for a few frames, then bursts into `Spark`s. Sparks
//! fade and die. Creating and destroying entities while iterating a query
//! is what a command buffer is for: the systems here are `DeferredSystem`s,
//! which read the context (`&Context`) and record their changes into a
//! `CommandBuffer`; `Deferred` (added with `Feature::with_deferred`) plays
//! the buffer back right after each one, so the next system sees the
//! changes, with their events.
//!
//! Each spark leaves a `Trail`, a `Vec` of the points it passed. Trails
//! come and go with the sparks, so `Trail` is declared `pooled`: a dead
//! spark's trail goes back to the context's pool, emptied but with its
//! memory, and `pool().take()` hands it to a new spark. Once the pool
//! is warm, bursts allocate no trail memory; the program prints the pool's
//! size each frame.
//!
//! Run it with `cargo run --example commands`.

use reactecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Rocket {
    height: u32,
    burst_at: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Spark {
    life: u32,
}

/// Which way a spark flies.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Heading(i32);

/// The points a spark passed.
#[derive(Debug, Default)]
struct Trail(Vec<(i32, i32)>);

impl Recycle for Trail {
    fn recycle(&mut self) {
        self.0.clear();
    }
}

reactecs::component!(Rocket, Spark, Heading, pooled Trail);

const SPARKS_PER_BURST: u32 = 6;
const SPARK_LIFE: u32 = 3;

/// Rockets climb; at their height they burst: destroyed, with sparks made
/// in their place (recorded while iterating the rockets).
struct Launch;

impl DeferredSystem for Launch {
    fn execute(&mut self, sky: &Context, commands: &mut CommandBuffer) {
        for (rocket, state) in sky.query::<(Entity, &Rocket)>().iter() {
            if state.height < state.burst_at {
                commands.replace(
                    rocket,
                    Rocket {
                        height: state.height + 1,
                        ..*state
                    },
                );
                continue;
            }
            commands.destroy_entity(rocket);
            for n in 0..SPARKS_PER_BURST {
                // `create_entity` returns a placeholder the buffer's later
                // commands can use; it becomes an entity at playback.
                let spark = commands.create_entity();
                commands.add(spark, Spark { life: SPARK_LIFE });
                commands.add(spark, Heading(n as i32 - SPARKS_PER_BURST as i32 / 2));
            }
        }
    }
}

/// Sparks fade: a spark with no trail gets one (from the pool), each frame
/// adds a point, and a spark out of life is destroyed, its trail pooled.
struct Fade;

impl System for Fade {
    fn try_execute(&mut self, sky: &mut Context) -> SystemResult {
        let sparks: Vec<(Entity, Spark, Heading)> = sky
            .query::<(Entity, &Spark, &Heading)>()
            .iter()
            .map(|(e, s, h)| (e, *s, *h))
            .collect();
        for (spark, state, Heading(dx)) in sparks {
            if state.life == 0 {
                sky.destroy_entity(spark)?;
                continue;
            }
            if !sky.has::<Trail>(spark) {
                let trail = sky.pool::<Trail>().take();
                sky.add(spark, trail)?;
            }
            let age = (SPARK_LIFE - state.life) as i32;
            let point = (dx * age, -age);
            sky.get_mut::<Trail>(spark)?.0.push(point);
            sky.replace(spark, Spark { life: state.life - 1 })?;
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sky = Context::with_name("Sky");
    for burst_at in [1, 3, 5, 9] {
        sky.create_entity_with(Rocket { height: 0, burst_at })?;
    }
    let mut frame = Feature::new("Fireworks").with_deferred(Launch).with(Fade);
    frame.try_initialize(&mut sky)?;
    let mut most_sparks = 0;
    for n in 0..14 {
        frame.try_execute(&mut sky)?;
        frame.try_cleanup(&mut sky)?;
        let rockets = sky.query::<&Rocket>().iter().count();
        let sparks = sky.query::<&Spark>().iter().count();
        most_sparks = most_sparks.max(sparks);
        println!(
            "frame {n:2}: {rockets} rockets, {sparks:2} sparks, {} trails pooled",
            sky.pool::<Trail>().len()
        );
    }
    assert!(sky.is_empty(), "every rocket burst and every spark died");
    // Every trail ever made is back in the pool (it holds up to 128), and
    // there are only as many as were in use at once: the 24 sparks of four
    // bursts flew with 12 trails, later bursts reusing those of earlier ones.
    assert_eq!(
        sky.pool::<Trail>().len(),
        most_sparks,
        "the trails were reused, and wait for the next show"
    );
    println!("{}", frame.timings());
    Ok(())
}
