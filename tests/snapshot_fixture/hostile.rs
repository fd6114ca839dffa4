//! Restoring input from strangers, shared by `tests/snapshot_hostile.rs`
//! and the `restore` fuzz target: a valid snapshot to start from, the four
//! ways to restore one, and the check every restore must pass.

use reactecs::prelude::*;
use reactecs::{RestoreLimits, SnapshotTuple};

use super::*;

/// The types a typed restore names.
type Typed = (Position, Velocity, Frozen, Poison, Score, Name, Target, Squad, NetId);

/// A game of 60 entities with every kind of listed component (values, a
/// flag, a sparse one, a unique one, strings, references), one without
/// listed components, and one destroyed.
pub fn game() -> Context {
    let mut game = Context::with_name("Game");
    let mut made = Vec::new();
    for i in 0..60u32 {
        let f = i as f32;
        let e = match i % 6 {
            0 => game.create_entity_with((Position { x: f, y: -f }, Velocity(f, 1.0))),
            1 => game.create_entity_with((Position { x: f, y: 0.5 }, Name(format!("orc {i}")))),
            2 => game.create_entity_with(Velocity(0.0, f)),
            3 => game.create_entity_with((Position { x: 0.0, y: f }, NetId(u64::from(i)))),
            4 => game.create_entity_with(Target(made[i as usize - 1])),
            _ => game.create_entity_with(Squad {
                members: made[i as usize - 3..].to_vec(),
                leader: made.last().copied(),
            }),
        }
        .unwrap();
        if i % 7 == 0 {
            game.add(e, Frozen).unwrap();
        }
        if i % 5 == 0 {
            game.add(e, Poison(i)).unwrap();
        }
        made.push(e);
    }
    game.add(made[10], Score(99)).unwrap();
    game.create_entity_with(Secret(1)).unwrap();
    game.destroy_entity(made[20]).unwrap();
    game
}

/// How a test restores: the format and the path.
#[derive(Clone, Copy, Debug)]
pub enum Way {
    Json,
    JsonTyped,
    Postcard,
    PostcardTyped,
}

pub const WAYS: [Way; 4] = [Way::Json, Way::JsonTyped, Way::Postcard, Way::PostcardTyped];

impl Way {
    pub fn is_json(self) -> bool {
        matches!(self, Way::Json | Way::JsonTyped)
    }

    /// A valid snapshot of `game` in this way's format (typed or not as
    /// this way reads).
    pub fn snapshot(self, game: &Context) -> Vec<u8> {
        match self {
            Way::Json => serde_json::to_vec(&game.snapshot()).unwrap(),
            Way::JsonTyped => serde_json::to_vec(&game.snapshot_of::<Typed>().unwrap()).unwrap(),
            Way::Postcard => postcard::to_stdvec(&game.snapshot()).unwrap(),
            Way::PostcardTyped => postcard::to_stdvec(&game.snapshot_of::<Typed>().unwrap()).unwrap(),
        }
    }

    pub fn restore(self, target: &mut Context, input: &[u8], limits: RestoreLimits) -> Result<(), Error> {
        match self {
            Way::Json => target.restore(&mut serde_json::Deserializer::from_slice(input), limits),
            Way::JsonTyped => restore_typed::<Typed>(target, &mut serde_json::Deserializer::from_slice(input), limits),
            Way::Postcard => target.restore(&mut postcard::Deserializer::from_bytes(input), limits),
            Way::PostcardTyped => {
                restore_typed::<Typed>(target, &mut postcard::Deserializer::from_bytes(input), limits)
            }
        }
    }
}

fn restore_typed<'de, C: SnapshotTuple>(
    target: &mut Context,
    input: impl serde::Deserializer<'de>,
    limits: RestoreLimits,
) -> Result<(), Error> {
    target.restore_of::<C>(input, limits)
}

/// A target for a restore: a context with a group and a collector.
pub fn target() -> Context {
    let mut target = Context::with_name("Game");
    target.add_group(Matcher::all_of::<Position>());
    target.add_collector(Matcher::all_of::<Position>().added());
    target
}

/// Checks a restore's outcome: either an `InvalidSnapshot` that left the
/// target empty and usable, or a whole restore whose invariants hold.
/// Panics otherwise.
pub fn check_outcome(way: Way, target: &mut Context, result: &Result<(), Error>) {
    match result {
        Ok(()) => target.check_invariants().unwrap(),
        Err(Error::InvalidSnapshot { .. }) => assert_empty_and_usable(target),
        Err(other) => panic!("{way:?}: expected InvalidSnapshot, got {other:?}"),
    }
}

/// Restores `input` the given way into a new [`target`] and checks the
/// outcome.
pub fn restore_checked(way: Way, input: &[u8], limits: RestoreLimits) -> Result<(), Error> {
    let mut target = target();
    let result = way.restore(&mut target, input, limits);
    check_outcome(way, &mut target, &result);
    result
}

/// The fuzz target's input: its first byte picks the way, the rest is the
/// snapshot; restored with the default limits and checked.
pub fn restore_fuzzed(data: &[u8]) {
    if let Some((&pick, input)) = data.split_first() {
        let _ = restore_checked(WAYS[usize::from(pick) % WAYS.len()], input, RestoreLimits::default());
    }
}
