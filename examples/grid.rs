//! Grid: units on a map, found by the cells they cover and by their name.
//!
//! Every unit of the `World` context has a `Name` and a `Footprint` (a
//! rectangle of cells: one cell for a knight, four for a tower). Two entity
//! indices follow them:
//! - `Occupancy`, an `EntityIndex` with several keys per unit: every cell
//!   its footprint covers, so "who is at (3, 2)?" is one lookup;
//! - `Name`, a `PrimaryEntityIndex`: each name belongs to one unit, so a
//!   second "Knight" is refused with an error, and nothing changes.
//!
//! Each turn, `March` moves the marching units one cell east with `replace`
//! (the indices move them from their old cells to the new ones), and the
//! reactive system `Bump` runs for the units that moved: it looks up the
//! cells each one now covers and reports whom it shares them with.
//!
//! Run it with `cargo run --example grid`.

use std::sync::{Arc, Mutex};

use reactecs::prelude::*;

#[derive(Clone, Debug, PartialEq)]
struct Name(String);

/// The cells `x..x + w` by `y..y + h`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Footprint {
    x: i32,
    y: i32,
    w: i32,
    h: i32,
}

impl Footprint {
    fn cells(&self) -> impl Iterator<Item = (i32, i32)> + use<> {
        let Footprint { x, y, w, h } = *self;
        (x..x + w).flat_map(move |cx| (y..y + h).map(move |cy| (cx, cy)))
    }
}

/// Moves one cell east per turn.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Marching;

reactecs::context!(World);
reactecs::component!(World: Name, Footprint, Marching);

type Occupancy = IndexId<EntityIndex<(i32, i32)>>;
type Names = IndexId<PrimaryEntityIndex<String>>;

/// Moves every marching unit one cell east.
struct March;

impl System for March {
    fn execute(&mut self, world: &mut Context) {
        let marching = world.add_group(Matcher::all_of::<(Footprint, Marching)>());
        let units = world.group(marching).expect("this context's group").entities();
        for &unit in units.iter() {
            let mut footprint = *world.get::<Footprint>(unit).expect("a marching unit has a footprint");
            footprint.x += 1;
            world.replace(unit, footprint).expect("alive");
        }
    }
}

/// For each unit that moved (or arrived), who it now shares a cell with.
struct Bump {
    occupancy: Occupancy,
    log: Arc<Mutex<Vec<String>>>,
}

impl ReactiveSystem for Bump {
    fn trigger(&mut self, world: &mut Context) -> CollectorId {
        world.add_collector(Matcher::all_of::<Footprint>().added())
    }

    fn execute(&mut self, world: &mut Context, moved: &[Entity]) {
        let occupancy = world.index(self.occupancy).expect("added at start");
        for &unit in moved {
            let footprint = world.get::<Footprint>(unit).expect("filtered: alive");
            for cell in footprint.cells() {
                for &other in occupancy.get(&cell) {
                    if other != unit {
                        let (a, b) = (name_of(world, unit), name_of(world, other));
                        let line = format!("{a} bumps into {b} at {cell:?}");
                        println!("{line}");
                        self.log.lock().expect("not poisoned").push(line);
                    }
                }
            }
        }
    }
}

fn name_of(world: &Context, unit: Entity) -> &str {
    world.get::<Name>(unit).map_or("?", |name| name.0.as_str())
}

fn unit(world: &mut Context, name: &str, x: i32, y: i32, size: i32) -> Result<Entity, Error> {
    let footprint = Footprint { x, y, w: size, h: size };
    world.create_entity_with((Name(name.to_owned()), footprint))
}

fn main() -> Result<(), Error> {
    let mut world = Context::of::<World>();
    let occupancy: Occupancy = world.add_index(EntityIndex::multi("Occupancy", |f: &Footprint| f.cells()))?;
    let names: Names = world.add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))?;

    let tower = unit(&mut world, "Tower", 4, 0, 2)?; // covers (4..6, 0..2)
    let knight = unit(&mut world, "Knight", 0, 1, 1)?;
    let squire = unit(&mut world, "Squire", 1, 1, 1)?;
    world.add(knight, Marching)?;

    // A second "Knight" is refused, and the world is as it was.
    let before = world.len();
    match unit(&mut world, "Knight", 9, 9, 1) {
        Err(error @ Error::DuplicatePrimaryKey { .. }) => println!("refused: {error}"),
        other => panic!("expected a duplicate-name error, got {other:?}"),
    }
    assert_eq!(world.len(), before);

    println!("who is at (5, 1)? {:?}", cells_at(&world, occupancy, (5, 1)));
    println!("{}", world.index(occupancy)?);
    println!("{}", world.index(names)?);

    let log = Arc::new(Mutex::new(Vec::new()));
    let bump = Bump {
        occupancy,
        log: log.clone(),
    };
    let mut turn = Feature::new("Turn").with(March).with(Reactive::new(bump));
    turn.initialize(&mut world);
    for _ in 0..4 {
        turn.execute(&mut world);
        turn.cleanup(&mut world);
    }

    let knight_at = world.get::<Footprint>(knight)?;
    println!("after 4 turns the Knight is at ({}, {})", knight_at.x, knight_at.y);
    assert_eq!(
        *log.lock().expect("not poisoned"),
        [
            "Knight bumps into Squire at (1, 1)",
            "Knight bumps into Tower at (4, 1)"
        ]
    );
    assert_eq!(world.index(names)?.get("Knight"), Some(knight));
    assert_eq!(world.index(occupancy)?.get(&(4, 1)), [tower, knight]);
    assert!(
        world.index(occupancy)?.get(&(0, 1)).is_empty(),
        "the Knight left its first cell"
    );
    assert_eq!(world.index(occupancy)?.get(&(1, 1)), [squire]);

    // The Squire is knighted: a new name, found under it, and no longer under the old one.
    world.replace(squire, Name("Sir Squire".to_owned()))?;
    assert_eq!(world.index(names)?.get("Sir Squire"), Some(squire));
    assert_eq!(world.index(names)?.get("Squire"), None);

    // The tower falls: every cell it covered is free again.
    world.destroy_entity(tower)?;
    assert_eq!(world.index(occupancy)?.get(&(5, 0)), &[] as &[Entity]);
    assert_eq!(world.index(occupancy)?.get(&(4, 1)), [knight]);
    world.check_invariants().expect("consistent");

    turn.teardown(&mut world);
    println!("{}", world.index(occupancy)?);
    Ok(())
}

fn cells_at(world: &Context, occupancy: Occupancy, cell: (i32, i32)) -> Vec<&str> {
    let units = world
        .index(occupancy)
        .map(|index| index.get(&cell))
        .expect("added at start");
    units.iter().map(|&unit| name_of(world, unit)).collect()
}
