//! Flags: a forest fire, spreading from tree to tree.
//!
//! Every tree of the `Forest` context has a `Tree` (its cell). Whether it is
//! on fire or burnt out are flags, `Burning` and `Burnt`; the heat it has
//! soaked up from burning neighbours, and the fuel a burning tree has left,
//! are sparse components, `Heat` and `Fuel`: all of them come and go every
//! turn, so they are declared `flag` and `sparse`, kept out of the
//! archetypes. Adding or removing one moves nothing: the
//! forest stays in one archetype however the fire goes, which the program
//! checks every turn.
//!
//! Each turn:
//! - `Spread` (a system) queries the burning trees (`&Burning` as a query
//!   parameter) and gives each unburnt neighbour one more `Heat`, found
//!   through a `PrimaryEntityIndex` by cell;
//! - `BurnOut` (a system) burns one `Fuel` of each burning tree (a query
//!   writing `&mut Fuel`), and turns those with none left to ash: `Burning`
//!   off, `Burnt` on;
//! - `Ignite` (a reactive system on `Heat` added or replaced) sets `Burning`
//!   on the trees that reached `IGNITION` heat, with `set_flag`, the
//!   Entitas-style call, and gives them `Fuel`;
//! - `Report` (a reactive system on `Burning` added) says how many trees
//!   caught fire.
//!
//! Every twelve turns, and at the end, the program draws the map.
//!
//! Run it with `cargo run --example flags`.

use reactecs::prelude::*;

/// A tree's cell.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tree {
    x: i32,
    y: i32,
}

/// On fire.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Burning;

/// Burnt out: ash.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Burnt;

/// Heat soaked up from burning neighbours.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Heat(u8);

/// The turns a burning tree has left.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fuel(u8);

reactecs::context!(Forest);
reactecs::component!(Forest: Tree, flag Burning, flag Burnt, sparse Heat, sparse Fuel);

/// The heat at which a tree catches fire.
const IGNITION: u8 = 2;
/// The turns a tree burns.
const FUEL: u8 = 2;
const WIDTH: i32 = 24;
const HEIGHT: i32 = 8;

type Cells = IndexId<PrimaryEntityIndex<(i32, i32)>>;

/// Burning trees heat their unburnt neighbours.
struct Spread {
    cells: Cells,
    /// Kept between turns: no allocation in steady state.
    heated: Vec<Entity>,
}

impl System for Spread {
    fn execute(&mut self, forest: &mut Context) {
        let cells = forest.index(self.cells).expect("added at start");
        for (tree, _) in forest.query::<(&Tree, &Burning)>().iter() {
            for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                if let Some(neighbour) = cells.get(&(tree.x + dx, tree.y + dy)) {
                    self.heated.push(neighbour);
                }
            }
        }
        for neighbour in self.heated.drain(..) {
            if forest.has::<Burning>(neighbour) || forest.has::<Burnt>(neighbour) {
                continue;
            }
            let heat = forest.get::<Heat>(neighbour).map_or(0, |heat| heat.0);
            forest.replace(neighbour, Heat(heat + 1)).expect("alive");
        }
    }
}

/// Trees that soaked up enough heat catch fire.
struct Ignite;

impl ReactiveSystem for Ignite {
    fn trigger(&mut self, forest: &mut Context) -> CollectorId {
        forest.add_collector(Matcher::all_of::<Heat>().added())
    }

    fn filter(&self, forest: &Context, tree: Entity) -> bool {
        forest.get::<Heat>(tree).is_ok_and(|heat| heat.0 >= IGNITION)
    }

    fn execute(&mut self, forest: &mut Context, trees: &[Entity]) {
        for &tree in trees {
            forest.remove::<Heat>(tree).expect("filtered: has heat");
            light(forest, tree).expect("alive");
        }
    }
}

/// Sets `tree` on fire.
fn light(forest: &mut Context, tree: Entity) -> Result<(), Error> {
    forest.set_flag::<Burning>(tree, true)?;
    forest.add(tree, Fuel(FUEL))
}

/// Burning trees burn a turn's fuel; those with none left turn to ash. Runs
/// after `Spread` and before `Ignite`, so a tree lit this turn starts
/// burning next turn.
struct BurnOut {
    done: Vec<Entity>,
}

impl System for BurnOut {
    fn execute(&mut self, forest: &mut Context) {
        let mut burning = forest.query_mut::<(Entity, &mut Fuel)>().expect("no aliasing");
        burning.for_each(|(tree, fuel)| {
            fuel.0 -= 1;
            if fuel.0 == 0 {
                self.done.push(tree);
            }
        });
        for tree in self.done.drain(..) {
            forest.remove::<Fuel>(tree).expect("has fuel");
            forest.set_flag::<Burning>(tree, false).expect("alive");
            forest.set_flag::<Burnt>(tree, true).expect("alive");
        }
    }
}

/// Reports how many trees caught fire.
struct Report;

impl ReactiveSystem for Report {
    fn trigger(&mut self, forest: &mut Context) -> CollectorId {
        forest.add_collector(Matcher::all_of::<(Tree, Burning)>().added())
    }

    fn execute(&mut self, _: &mut Context, caught: &[Entity]) {
        println!("  {} caught fire", caught.len());
    }
}

/// The forest as a map: `T` a tree, `+` a heated one, `*` on fire, `.` ash.
fn draw(forest: &Context) {
    let mut map = vec![vec![' '; WIDTH as usize]; HEIGHT as usize];
    let trees = forest.query::<(&Tree, Option<&Burning>, Option<&Burnt>, Option<&Heat>)>();
    for (tree, burning, burnt, heat) in trees.iter() {
        map[tree.y as usize][tree.x as usize] = match (burning, burnt, heat) {
            (Some(_), _, _) => '*',
            (_, Some(_), _) => '.',
            (_, _, Some(_)) => '+',
            _ => 'T',
        };
    }
    for row in map {
        println!("  {}", row.into_iter().collect::<String>());
    }
}

fn main() -> Result<(), Error> {
    let mut forest = Context::of::<Forest>();
    let cells: Cells = forest.add_index(PrimaryEntityIndex::new("Cell", |t: &Tree| (t.x, t.y)))?;
    // A forest with a clearing down the middle, and a gap in it.
    let trees = (0..HEIGHT)
        .flat_map(|y| (0..WIDTH).map(move |x| Tree { x, y }))
        .filter(|t| t.x != WIDTH / 2 || t.y == HEIGHT / 2);
    forest.create_entities_with(trees.map(|tree| (tree,)))?;
    let archetypes = forest.storage_stats().archetypes;

    let mut turn = Feature::new("Turn")
        .with(Spread {
            cells,
            heated: Vec::new(),
        })
        .with(BurnOut { done: Vec::new() })
        .with(Reactive::new(Ignite))
        .with(Reactive::new(Report));
    turn.initialize(&mut forest);
    // Light the north-west corner.
    let corner = forest.index(cells)?.get(&(0, 0)).expect("a tree at (0, 0)");
    light(&mut forest, corner)?;
    for n in 1.. {
        println!("turn {n}");
        turn.execute(&mut forest);
        turn.cleanup(&mut forest);
        assert_eq!(forest.storage_stats().archetypes, archetypes, "flags move nothing");
        if n % 12 == 0 {
            draw(&forest);
        }
        if forest.query::<&Burning>().count() == 0 {
            break;
        }
    }
    draw(&forest);

    // The fire crossed the clearing through the gap and took every tree.
    let burnt = forest.query::<(&Tree, &Burnt)>().count();
    println!("{burnt} of {} trees burnt", forest.len());
    assert_eq!(burnt, forest.len());
    assert_eq!(forest.query::<&Heat>().count(), 0, "no heat left on ash");
    assert_eq!(
        forest.storage_stats().sparse_values,
        burnt,
        "a `Burnt` flag each, nothing else"
    );
    forest.check_invariants().expect("consistent");
    println!("{}", turn.timings());
    Ok(())
}
