//! `Parallel`: deferred systems run side by side, their buffers played back
//! in declaration order. The result equals running the members one after
//! another against the same context and playing the buffers back in order
//! (same entities and values, same collector batches), frame after frame,
//! whatever the threads did; members are found by type through it; its
//! timings list each member.

use reactecs::prelude::*;
use reactecs::system::Parallel;

#[derive(Clone, Debug, PartialEq)]
struct Health(i32);
#[derive(Clone, Debug, PartialEq)]
struct Hungry(u32);
#[derive(Clone, Debug, PartialEq)]
struct Child(i32);
reactecs::component!(Health, Hungry, Child);

/// Destroys the dead.
struct Reap;
impl DeferredSystem for Reap {
    fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
        for (e, h) in game.query::<(Entity, &Health)>().iter() {
            if h.0 <= 0 {
                commands.destroy_entity(e);
            }
        }
    }
}

/// Makes the weak hungry, and the hungry hungrier.
struct Starve;
impl DeferredSystem for Starve {
    fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
        for (e, h, hungry) in game.query::<(Entity, &Health, Option<&Hungry>)>().iter() {
            match hungry {
                Some(level) => {
                    commands.replace(e, Hungry(level.0 + 1));
                }
                None if h.0 < 5 => {
                    commands.add(e, Hungry(0));
                }
                None => {}
            }
        }
    }
}

/// The strong have children, and lose health for it.
struct Breed;
impl DeferredSystem for Breed {
    fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
        for (e, h) in game.query::<(Entity, &Health)>().iter() {
            if h.0 > 30 {
                commands.create_entity_with((Health(h.0 / 3), Child(h.0)));
                commands.replace(e, Health(h.0 - 7));
            }
        }
    }

    fn cleanup(&mut self, game: &Context, commands: &mut CommandBuffer) {
        for (e, _) in game.query::<(Entity, &Child)>().iter() {
            commands.remove::<Child>(e);
        }
    }
}

fn world() -> (Context, CollectorId) {
    let mut game = Context::new();
    let hungry = game.add_collector(Matcher::all_of::<Hungry>().added());
    let n = if cfg!(miri) { 60 } else { 600 };
    game.create_entities_with((0..n).map(|i| (Health(i % 50 - 10),)))
        .unwrap();
    (game, hungry)
}

/// What the collector holds, by creation index (handles differ between
/// contexts), then cleared.
fn batch(game: &mut Context, id: CollectorId) -> Vec<u64> {
    let entities = game.collector(id).unwrap().entities().to_vec();
    game.collector_mut(id).unwrap().clear();
    entities.iter().map(|&e| game.creation_index(e).unwrap()).collect()
}

/// The members run one after another against the same context, then their
/// buffers played back in order: what `Parallel` must equal.
fn by_hand(game: &mut Context, cleanup: bool) {
    let mut buffers = [CommandBuffer::new(), CommandBuffer::new(), CommandBuffer::new()];
    if cleanup {
        Breed.cleanup(game, &mut buffers[2]);
    } else {
        Reap.execute(game, &mut buffers[0]);
        Starve.execute(game, &mut buffers[1]);
        Breed.execute(game, &mut buffers[2]);
    }
    for buffer in &mut buffers {
        // A destroyed entity's later commands fail, as they do in `Parallel`.
        let _ = buffer.playback(game);
    }
}

#[test]
fn a_parallel_group_equals_its_members_run_one_after_another() {
    for round in 0..if cfg!(miri) { 1 } else { 20 } {
        let (mut expected, expected_hungry) = world();
        let (mut game, hungry) = world();
        let mut frame = Feature::new("Frame").with(Parallel::new("Life").with(Reap).with(Starve).with(Breed));
        frame.initialize(&mut game);
        for f in 0..6 {
            by_hand(&mut expected, false);
            by_hand(&mut expected, true);
            frame.execute(&mut game);
            frame.cleanup(&mut game);
            let diff = expected.diff::<(Health, Hungry, Child)>(&game);
            assert!(diff.is_empty(), "round {round}, frame {f}: {diff}");
            assert_eq!(
                batch(&mut game, hungry),
                batch(&mut expected, expected_hungry),
                "frame {f}"
            );
        }
        assert!(game.len() > if cfg!(miri) { 30 } else { 300 }, "children were born");
        game.check_invariants().unwrap();
    }
}

#[test]
fn members_are_found_by_type_and_timed_one_by_one() {
    let (mut game, _) = world();
    let mut frame = Feature::new("Frame").with(Parallel::new("Life").with(Reap).with(Breed));
    frame.initialize(&mut game);
    frame.execute(&mut game);
    frame.cleanup(&mut game);
    assert!(frame.system::<Breed>().is_some(), "found inside the group");
    assert!(frame.system::<Starve>().is_none());
    let timings = frame.timings();
    let life = timings
        .get("Life")
        .expect("the group is one child")
        .feature()
        .expect("with its members");
    let names: Vec<&str> = life.iter().map(|member| member.name()).collect();
    assert_eq!(names, ["Reap", "Breed"]);
    assert!(
        life.iter()
            .all(|member| member.execute().runs() == 1 && member.cleanup().runs() == 1)
    );
    assert!(format!("{timings}").contains("Breed"));
    let group = Parallel::new("Life").with(Reap).with(Breed);
    assert_eq!(format!("{group:?}"), r#"Parallel("Life")["Reap", "Breed"]"#);
    assert_eq!(group.len(), 2);
}
