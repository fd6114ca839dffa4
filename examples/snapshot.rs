//! Saving and loading a game. A small dungeon (a hero holding the unique
//! `Turn`, two goblins, one of them asleep, one poisoned, a goblin archer
//! aiming at the hero, and a party listing its members) is saved as JSON
//! with `Context::snapshot`, then loaded into a new context with
//! `Context::restore`. The loaded context has new entity handles, yet the
//! archer still aims at the hero and the party still names its members:
//! components holding handles implement `MapEntities`, and the restore maps
//! each saved handle to the restored entity. A collector on the new
//! context sees the loaded entities as created ones. Last, the
//! same save through the typed path (`Context::snapshot_of` and
//! `Context::restore_of` with the types named): the same JSON, read back
//! the same, without the registry's erased dispatch.
//!
//! Run with `cargo run --example snapshot --features serde`.

use reactecs::MapEntities;
use reactecs::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Position {
    x: i32,
    y: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Name(String);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Health(u32);

/// Asleep: a flag, set and cleared without moving the entity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Asleep;

/// Poison damage per turn: a sparse component, it comes and goes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Poisoned(u32);

/// Whose turn it is, and which: a singleton.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Turn(u32);

/// The entity this one aims at.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct AimsAt(Entity);

impl MapEntities for AimsAt {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        self.0 = map(self.0);
    }
}

/// A party's members.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Party(Vec<Entity>);

impl MapEntities for Party {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        self.0.map_entities(map);
    }
}

reactecs::component!(Position, Name, Health, flag Asleep, sparse Poisoned, unique Turn, AimsAt, Party);
reactecs::snapshot!(Position, Name, Health, Asleep, Poisoned, Turn, AimsAt, Party);

/// Every type a save holds, for the typed path.
type Saved = (Position, Name, Health, Asleep, Poisoned, Turn, AimsAt, Party);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The game as it is when the player saves.
    let mut game = Context::with_name("Game");
    let hero = game.create_entity_with((Name("hero".into()), Position { x: 1, y: 1 }, Health(30)))?;
    game.add(hero, Turn(7))?;
    let grub = game.create_entity_with((Name("grub".into()), Position { x: 4, y: 2 }, Health(8)))?;
    game.set_flag::<Asleep>(grub, true)?;
    let snag = game.create_entity_with((Name("snag".into()), Position { x: 5, y: 5 }, Health(6)))?;
    game.add(snag, Poisoned(2))?;
    game.create_entity_with((Name("archer".into()), Position { x: 9, y: 1 }, AimsAt(hero)))?;
    game.create_entity_with(Party(vec![grub, snag]))?;

    let saved = serde_json::to_string_pretty(&game.snapshot())?;
    println!("saved {} entities, {} bytes of JSON", game.len(), saved.len());

    // Loading: a new context, with a collector watching positions.
    let mut loaded = Context::with_name("Game");
    let placed = loaded.add_collector(Matcher::all_of::<Position>().added());
    loaded.restore(
        &mut serde_json::Deserializer::from_str(&saved),
        RestoreLimits::default(),
    )?;
    loaded.check_invariants()?;
    println!(
        "loaded {} entities; the collector saw {} placed",
        loaded.len(),
        loaded.collector(placed)?.len()
    );
    assert_eq!(
        loaded.collector(placed)?.len(),
        4,
        "the four with a position, as created"
    );

    let names = loaded.add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))?;
    let find = |name: &str| loaded.index(names).ok().and_then(|index| index.get(name));
    let (new_hero, new_grub, new_snag) = (find("hero").unwrap(), find("grub").unwrap(), find("snag").unwrap());
    let archer = find("archer").unwrap();
    assert_ne!(new_hero, hero, "handles are the new context's");

    // References survived: they name the loaded entities.
    let aimed = loaded.get::<AimsAt>(archer)?.0;
    println!(
        "the archer aims at {} (at {:?})",
        loaded.get::<Name>(aimed)?.0,
        loaded.get::<Position>(aimed)?
    );
    assert_eq!(aimed, new_hero);
    let party = loaded
        .query::<&Party>()
        .iter()
        .next()
        .map(|party| party.0.clone())
        .unwrap();
    assert_eq!(party, [new_grub, new_snag]);
    println!(
        "the party: {}",
        party
            .iter()
            .map(|&member| loaded.get::<Name>(member).map(|n| n.0.as_str()))
            .collect::<Result<Vec<_>, _>>()?
            .join(", ")
    );

    // Flags, sparse and unique components came along.
    assert!(loaded.has::<Asleep>(new_grub));
    assert_eq!(loaded.get::<Poisoned>(new_snag)?, &Poisoned(2));
    assert_eq!(loaded.unique::<Turn>(), Some(&Turn(7)));
    assert_eq!(loaded.unique_entity::<Turn>(), Some(new_hero));
    println!(
        "turn {} goes on; grub sleeps, snag is poisoned",
        loaded.unique::<Turn>().unwrap().0
    );

    // The typed path: the types named, the same format, each value written
    // and read by its own serde code compiled for JSON.
    let typed = serde_json::to_string_pretty(&game.snapshot_of::<Saved>()?)?;
    assert_eq!(typed, saved, "the typed path writes what `snapshot` writes");
    let mut again = Context::with_name("Game");
    again.restore_of::<Saved>(
        &mut serde_json::Deserializer::from_str(&typed),
        RestoreLimits::default(),
    )?;
    again.check_invariants()?;
    let resaved = serde_json::to_string_pretty(&again.snapshot_of::<Saved>()?)?;
    assert_eq!(resaved, saved, "read back the same");
    let archer = again.entities().nth(3).unwrap();
    let aimed = again.get::<AimsAt>(archer)?.0;
    assert_eq!(again.get::<Name>(aimed)?, &Name("hero".into()));
    println!(
        "typed: the same {} bytes, loaded again: {} entities, the archer still aims at {}",
        typed.len(),
        again.len(),
        again.get::<Name>(aimed)?.0
    );
    Ok(())
}
