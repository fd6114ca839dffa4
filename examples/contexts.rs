//! Several contexts: keyboard input steering a player.
//!
//! The program declares two contexts, as Entitas programs do: `Input` holds
//! one entity per key press of the frame, `Game` holds the player. They are
//! built together by `Contexts::new()`. Each frame:
//! - `Press` (a system on `Input` alone, added with `with_in`) turns the
//!   frame's scripted keys into `Key` entities;
//! - `Steer` (a system over both contexts) borrows both at once with
//!   `get_many_mut::<(Game, Input)>()`, moves the player by each key, and
//!   destroys the key entities;
//! - `Trace` (a reactive system on `Game` alone, added with `with_in`)
//!   prints where the player is, after each frame that replaced its
//!   `Position` (two moves in one frame collect the player once), and the
//!   program checks the trail it printed.
//!
//! Handles belong to their context: the program also shows that a key's
//! entity used on `Game` is refused (`Error::ForeignEntity`), never taken
//! for the `Game` entity in the same slot.
//!
//! Run it with `cargo run --example contexts`.

use std::sync::{Arc, Mutex};

use reactecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Key(char);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Position(i32, i32);

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Player;

reactecs::context!(Game, Input);
reactecs::component!(Input: Key);
reactecs::component!(Game: Position, Player);

/// The keys pressed in each frame.
const SCRIPT: [&str; 4] = ["dd", "s", "", "aw"];

/// Creates the frame's key presses in `Input`.
#[derive(Default)]
struct Press {
    frame: usize,
}

impl System for Press {
    fn try_execute(&mut self, input: &mut Context) -> SystemResult {
        for key in SCRIPT.get(self.frame).copied().unwrap_or_default().chars() {
            input.create_entity_with(Key(key))?;
        }
        self.frame += 1;
        Ok(())
    }
}

/// Moves the player by the keys, reading `Input` and writing `Game`.
struct Steer;

impl System<Contexts> for Steer {
    fn try_execute(&mut self, contexts: &mut Contexts) -> SystemResult {
        let (game, input) = contexts.get_many_mut::<(Game, Input)>()?;
        let player = game
            .query::<(Entity, &Player)>()
            .iter()
            .map(|(e, _)| e)
            .next()
            .ok_or("no player")?;
        let keys: Vec<(Entity, Key)> = input.query::<(Entity, &Key)>().iter().map(|(e, k)| (e, *k)).collect();
        for (pressed, Key(key)) in keys {
            let Position(x, y) = *game.get::<Position>(player)?;
            let to = match key {
                'w' => Position(x, y - 1),
                's' => Position(x, y + 1),
                'a' => Position(x - 1, y),
                'd' => Position(x + 1, y),
                other => return Err(format!("no move for key {other:?}").into()),
            };
            game.replace(player, to)?;
            input.destroy_entity(pressed)?;
        }
        Ok(())
    }
}

/// Prints the player's position after each frame that moved it, and keeps
/// the trail.
struct Trace(Arc<Mutex<Vec<Position>>>);

impl ReactiveSystem for Trace {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<(Player, Position)>().added())
    }

    fn try_execute(&mut self, game: &mut Context, moved: &[Entity]) -> SystemResult {
        for &e in moved {
            let &Position(x, y) = game.get::<Position>(e)?;
            println!("  the player is at ({x}, {y})");
            self.0.lock().map_err(|_| "the trail is poisoned")?.push(Position(x, y));
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut contexts = Contexts::new();
    let player = contexts
        .context_mut::<Game>()
        .create_entity_with((Player, Position(0, 0)))?;
    let trail = Arc::new(Mutex::new(Vec::new()));
    let mut frame = Feature::new("Frame")
        .with_in(Input, Press::default())
        .with(Steer)
        .with_in(Game, Reactive::new(Trace(trail.clone())));
    frame.try_initialize(&mut contexts)?;
    for (n, keys) in SCRIPT.iter().enumerate() {
        println!("frame {n}: keys {keys:?}");
        frame.try_execute(&mut contexts)?;
        frame.try_cleanup(&mut contexts)?;
    }
    assert_eq!(contexts.context::<Game>().get::<Position>(player)?, &Position(1, 0));
    assert!(contexts.context::<Input>().is_empty(), "every key was consumed");
    // "dd" and "aw" each moved the player twice in one frame, traced once;
    // the frame without keys traced nothing.
    let trail = trail.lock().map_err(|_| "the trail is poisoned")?.clone();
    assert_eq!(trail, [Position(2, 0), Position(2, 1), Position(1, 0)]);

    // A handle of `Input` names nothing in `Game`, even in a slot `Game` uses.
    let key = contexts.context_mut::<Input>().create_entity_with(Key('w'))?;
    assert_eq!(key.index(), player.index());
    match contexts.context::<Game>().get::<Position>(key) {
        Err(error @ Error::ForeignEntity { .. }) => println!("refused: {error}"),
        other => return Err(format!("expected a foreign-entity error, got {other:?}").into()),
    }
    println!("{}", frame.timings());
    Ok(())
}
