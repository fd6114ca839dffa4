//! Systems: order of phases through `Systems`, `Feature` and boxes, default
//! names, feature timings (recorded, windowed, switched off, printed in the
//! unit that fits), systems gathered from `feature_system!` registrations,
//! and fallible systems (the failure reaches the caller with the system's
//! name, phase and features; the frame stops; the context stays
//! consistent).
//!
//! Timing assertions use lower bounds only (a child that sleeps takes at least
//! that long); nothing here depends on how fast the machine is.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use reactecs::prelude::*;
use reactecs::system::Phase;

/// Lines written by spy systems, in call order.
type Log = Arc<Mutex<Vec<String>>>;

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// Writes `"<phase> <label>"` to the log for every method it is called with.
struct Spy {
    label: &'static str,
    log: Log,
}

impl Spy {
    fn new(label: &'static str, log: &Log) -> Self {
        Spy {
            label,
            log: log.clone(),
        }
    }

    fn note(&self, phase: &str) {
        self.log.lock().unwrap().push(format!("{phase} {}", self.label));
    }
}

impl<W> System<W> for Spy {
    fn name(&self) -> &str {
        self.label
    }
    fn initialize(&mut self, _world: &mut W) {
        self.note("initialize");
    }
    fn execute(&mut self, _world: &mut W) {
        self.note("execute");
    }
    fn cleanup(&mut self, _world: &mut W) {
        self.note("cleanup");
    }
    fn teardown(&mut self, _world: &mut W) {
        self.note("teardown");
    }
    fn activate_reactive_systems(&mut self, _world: &mut W) {
        self.note("activate");
    }
    fn deactivate_reactive_systems(&mut self, _world: &mut W) {
        self.note("deactivate");
    }
    fn clear_reactive_systems(&mut self, _world: &mut W) {
        self.note("clear");
    }
}

/// Sleeps in `execute` for the next of its durations (the last one repeats),
/// and for `cleanup` in `cleanup`.
struct Sleeper {
    name: &'static str,
    execute: Vec<Duration>,
    frame: usize,
    cleanup: Duration,
}

impl Sleeper {
    fn new(name: &'static str, execute: &[Duration]) -> Self {
        Sleeper {
            name,
            execute: execute.to_vec(),
            frame: 0,
            cleanup: Duration::ZERO,
        }
    }

    fn with_cleanup(mut self, cleanup: Duration) -> Self {
        self.cleanup = cleanup;
        self
    }
}

impl System for Sleeper {
    fn name(&self) -> &str {
        self.name
    }
    fn execute(&mut self, _world: &mut Context) {
        let pause = self.execute[self.frame.min(self.execute.len() - 1)];
        self.frame += 1;
        if !pause.is_zero() {
            thread::sleep(pause);
        }
    }
    fn cleanup(&mut self, _world: &mut Context) {
        if !self.cleanup.is_zero() {
            thread::sleep(self.cleanup);
        }
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn frames(system: &mut impl System, world: &mut Context, count: usize) {
    for _ in 0..count {
        system.execute(world);
        system.cleanup(world);
    }
}

/// Every method of the trait, in declaration order, with its log name.
fn every_phase<W>(system: &mut dyn System<W>, world: &mut W) {
    system.initialize(world);
    system.execute(world);
    system.cleanup(world);
    system.teardown(world);
    system.activate_reactive_systems(world);
    system.deactivate_reactive_systems(world);
    system.clear_reactive_systems(world);
}

const PHASES: [&str; 7] = [
    "initialize",
    "execute",
    "cleanup",
    "teardown",
    "activate",
    "deactivate",
    "clear",
];

fn names<'a, W: 'static>(systems: impl IntoIterator<Item = &'a dyn System<W>>) -> Vec<String> {
    systems.into_iter().map(|s| s.name().to_owned()).collect()
}

// ---------------------------------------------------------------- Systems

#[test]
fn systems_run_children_in_insertion_order() {
    let log = Log::default();
    let mut world = Context::new();
    let mut systems = Systems::new().with(Spy::new("a", &log)).with(Spy::new("b", &log));
    systems.add(Spy::new("c", &log));
    assert_eq!((systems.len(), systems.is_empty()), (3, false));
    assert_eq!(names(&systems), ["a", "b", "c"]);

    systems.execute(&mut world);
    systems.execute(&mut world);
    assert_eq!(
        take(&log),
        [
            "execute a",
            "execute b",
            "execute c",
            "execute a",
            "execute b",
            "execute c"
        ]
    );
    systems.teardown(&mut world);
    assert_eq!(
        take(&log),
        ["teardown a", "teardown b", "teardown c"],
        "teardown is not reversed"
    );
}

#[test]
fn nested_systems_run_depth_first_in_order() {
    let log = Log::default();
    let mut world = Context::new();
    let inner = Systems::new().with(Spy::new("b1", &log)).with(Spy::new("b2", &log));
    let mut outer = Systems::new()
        .with(Spy::new("a", &log))
        .with(inner)
        .with(Spy::new("c", &log));
    assert_eq!(outer.len(), 3);
    assert_eq!(names(&outer), ["a", "Systems", "c"]);

    outer.execute(&mut world);
    assert_eq!(take(&log), ["execute a", "execute b1", "execute b2", "execute c"]);
}

#[test]
fn every_phase_reaches_nested_children() {
    let log = Log::default();
    let mut world = Context::new();
    let mut outer = Systems::new().with(Systems::new().with(Systems::new().with(Spy::new("deep", &log))));
    every_phase(&mut outer, &mut world);
    let expected: Vec<String> = PHASES.iter().map(|phase| format!("{phase} deep")).collect();
    assert_eq!(take(&log), expected);

    // The same through features, nested in a list and boxed.
    let boxed: Box<dyn System + Send> = Box::new(Feature::new("Inner").with(Spy::new("deep", &log)));
    let mut feature = Feature::new("Outer").with(Systems::new().with(boxed));
    every_phase(&mut feature, &mut world);
    assert_eq!(take(&log), expected);
}

#[test]
fn an_empty_list_runs_every_phase_without_children() {
    let mut world = Context::new();
    let mut systems = Systems::<Context>::default();
    assert!(systems.is_empty());
    every_phase(&mut systems, &mut world);
    let mut feature = Feature::<Context>::new("Empty");
    assert!(feature.is_empty() && feature.timings().is_empty());
    every_phase(&mut feature, &mut world);
}

#[test]
fn systems_work_on_any_world_type() {
    struct Counter(u32);
    struct Increment;
    impl System<Counter> for Increment {
        fn execute(&mut self, world: &mut Counter) {
            world.0 += 1;
        }
    }
    let mut world = Counter(0);
    let mut frame = Feature::new("Count").with(Systems::new().with(Increment).with(Increment));
    frame.execute(&mut world);
    assert_eq!(world.0, 2);
    assert_eq!(frame.timings().get("Systems").unwrap().execute().runs(), 1);
}

#[test]
fn systems_change_the_context_they_are_given() {
    #[derive(Debug, PartialEq)]
    struct Position(i32);
    struct Velocity(i32);
    reactecs::component!(Position, Velocity);

    struct Spawn;
    impl System for Spawn {
        fn initialize(&mut self, game: &mut Context) {
            game.create_entity_with((Position(0), Velocity(2))).unwrap();
        }
    }
    struct Move;
    impl System for Move {
        fn execute(&mut self, game: &mut Context) {
            for (pos, vel) in game.query_mut::<(&mut Position, &Velocity)>().unwrap().iter() {
                pos.0 += vel.0;
            }
        }
    }
    struct DestroyAll;
    impl System for DestroyAll {
        fn teardown(&mut self, game: &mut Context) {
            game.destroy_all_entities();
        }
    }

    let mut game = Context::new();
    let mut frame = Feature::new("Game").with(Spawn).with(Move).with(DestroyAll);
    frame.initialize(&mut game);
    frames(&mut frame, &mut game, 3);
    let positions: Vec<&Position> = game.query::<&Position>().iter().collect();
    assert_eq!(positions, [&Position(6)]);
    frame.teardown(&mut game);
    assert!(game.is_empty());
}

// ---------------------------------------------------------------- names and boxes

mod game {
    use super::*;

    pub struct Move;
    impl System for Move {}

    pub struct Wrapper<S>(pub S);
    impl<S: 'static> System for Wrapper<S> {}
}

#[test]
fn system_name_defaults_to_the_type_name_without_module_path() {
    assert_eq!(System::<Context>::name(&game::Move), "Move");
    let wrapped = game::Wrapper(game::Move);
    let name = System::<Context>::name(&wrapped);
    assert!(name.starts_with("Wrapper<"), "{name}");
    assert!(
        name.ends_with("::game::Move>"),
        "generic arguments keep their path: {name}"
    );
}

#[test]
fn containers_are_named_and_boxes_keep_the_inner_name() {
    assert_eq!(System::<Context>::name(&Systems::<Context>::new()), "Systems");
    assert_eq!(System::<Context>::name(&Feature::<Context>::new("Physics")), "Physics");
    let boxed: Box<dyn System> = Box::new(game::Move);
    assert_eq!(boxed.name(), "Move");
    let twice: Box<Box<dyn System>> = Box::new(boxed);
    assert_eq!(twice.name(), "Move");
}

#[test]
fn boxed_systems_forward_every_method() {
    let log = Log::default();
    let mut world = Context::new();
    let mut boxed: Box<Box<dyn System>> = Box::new(Box::new(Spy::new("boxed", &log)));
    every_phase(&mut boxed, &mut world);
    let expected: Vec<String> = PHASES.iter().map(|phase| format!("{phase} boxed")).collect();
    assert_eq!(take(&log), expected);

    let feature: Box<dyn System> = Box::new(Feature::new("Inner").with(game::Move));
    assert_eq!(feature.timings().map(|t| t.name()), Some("Inner"));
    assert!(Box::new(game::Move).timings().is_none());
}

#[test]
fn debug_output_lists_the_children() {
    let systems = Systems::<Context>::new().with(game::Move);
    assert_eq!(format!("{systems:?}"), r#"Systems["Move"]"#);
    let feature = Feature::<Context>::new("Game").with(game::Move).with(systems);
    assert_eq!(format!("{feature:?}"), r#"Feature("Game")["Move", "Systems"]"#);
}

// ---------------------------------------------------------------- Feature timings

#[test]
fn feature_runs_children_in_insertion_order() {
    let log = Log::default();
    let mut world = Context::new();
    let mut feature = Feature::new("Game").with(Spy::new("a", &log));
    feature.add(Feature::new("Nested").with(Spy::new("b", &log)));
    feature.add(Spy::new("c", &log));
    assert_eq!(names(feature.iter()), ["a", "Nested", "c"]);
    frames(&mut feature, &mut world, 1);
    assert_eq!(
        take(&log),
        [
            "execute a",
            "execute b",
            "execute c",
            "cleanup a",
            "cleanup b",
            "cleanup c"
        ]
    );
}

#[test]
fn feature_records_execute_timings_for_each_child() {
    let mut world = Context::new();
    let mut feature = Feature::new("Game")
        .with(Sleeper::new("Slow", &[ms(2)]).with_cleanup(ms(1)))
        .with(Sleeper::new("Quick", &[Duration::ZERO]));
    assert!(feature.is_timing());
    assert_eq!(feature.timing_window(), 60);
    frames(&mut feature, &mut world, 3);
    feature.execute(&mut world);

    let timings = feature.timings();
    assert_eq!(timings.name(), "Game");
    assert_eq!(timings.len(), 2);
    let slow = timings.get("Slow").unwrap();
    let execute = slow.execute();
    assert_eq!(execute.runs(), 4);
    assert!(execute.last() >= ms(2), "{execute:?}");
    assert!(execute.min() >= ms(2), "{execute:?}");
    assert!(
        execute.min() <= execute.average() && execute.average() <= execute.max(),
        "{execute:?}"
    );
    assert_eq!(execute.samples().count(), 4);
    let cleanup = slow.cleanup();
    assert_eq!(cleanup.runs(), 3);
    assert!(cleanup.min() >= ms(1), "{cleanup:?}");

    let quick = timings.get("Quick").unwrap();
    assert_eq!((quick.execute().runs(), quick.cleanup().runs()), (4, 3));
    assert!(quick.feature().is_none());
    assert!(timings.get("Missing").is_none());
}

#[test]
fn untimed_phases_record_nothing() {
    let mut world = Context::new();
    let mut feature = Feature::new("Game").with(game::Move);
    feature.initialize(&mut world);
    feature.activate_reactive_systems(&mut world);
    feature.deactivate_reactive_systems(&mut world);
    feature.clear_reactive_systems(&mut world);
    feature.teardown(&mut world);
    let stats = feature.timings().get("Move").unwrap();
    assert_eq!((stats.execute().runs(), stats.cleanup().runs()), (0, 0));
}

#[test]
fn nested_feature_timings_form_a_tree() {
    let mut world = Context::new();
    let physics = Feature::new("Physics").with(Sleeper::new("Collide", &[ms(1)]));
    let mut feature = Feature::new("Game").with(game::Move).with(physics);
    frames(&mut feature, &mut world, 2);

    let timings = feature.timings();
    let names: Vec<&str> = timings.iter().map(|child| child.name()).collect();
    assert_eq!(names, ["Move", "Physics"]);
    let physics = timings.get("Physics").unwrap();
    // The parent times the nested feature as a whole, and the nested feature times its children.
    assert!(physics.execute().min() >= ms(1));
    let nested = physics.feature().unwrap();
    assert_eq!(nested.name(), "Physics");
    let collide = nested.get("Collide").unwrap();
    assert_eq!(collide.execute().runs(), 2);
    assert!(collide.execute().min() >= ms(1));
}

#[test]
fn timed_frames_allocate_nothing() {
    let mut world = Context::new();
    let physics = Feature::new("Physics")
        .with(game::Move)
        .with(Systems::new().with(game::Move));
    let mut feature = Feature::new("Game")
        .with(game::Move)
        .with(physics)
        .with(Box::new(game::Move) as Box<dyn System + Send>);
    let info = allocation_counter::measure(|| {
        // More frames than the window holds, so every ring buffer wraps.
        frames(&mut feature, &mut world, 150);
        let timings = feature.timings();
        let nested = timings.get("Physics").and_then(|physics| physics.feature()).unwrap();
        assert!(nested.get("Move").unwrap().execute().average() <= nested.get("Move").unwrap().execute().max());
    });
    assert_eq!(info.count_total, 0, "timed frames allocated: {info:?}");
    assert_eq!(feature.timings().get("Physics").unwrap().execute().runs(), 150);
}

#[test]
fn timing_window_drops_old_samples() {
    let mut world = Context::new();
    // Runs take: about nothing, then at least 3 ms, then at least 3 ms.
    let mut feature = Feature::new("Game")
        .with(Sleeper::new("Warming", &[Duration::ZERO, ms(3)]))
        .with_timing_window(2);
    assert_eq!(feature.timing_window(), 2);
    frames(&mut feature, &mut world, 3);

    let stats = feature.timings().get("Warming").unwrap().execute();
    assert_eq!((stats.runs(), stats.window(), stats.samples().count()), (3, 2, 2));
    // The window holds the last two runs only: the quick first run is gone,
    // so even the fastest run in it slept.
    assert!(stats.min() >= ms(3), "{stats:?}");
    assert!(stats.average() >= ms(3), "{stats:?}");
    assert_eq!(stats.samples().last(), Some(stats.last()));
}

#[test]
fn timing_window_is_at_least_one_run() {
    let mut world = Context::new();
    let mut feature = Feature::new("Game").with(game::Move).with_timing_window(0);
    assert_eq!(feature.timing_window(), 1);
    frames(&mut feature, &mut world, 3);
    let stats = feature.timings().get("Move").unwrap().execute();
    assert_eq!((stats.runs(), stats.samples().count()), (3, 1));
    assert_eq!(
        (stats.min(), stats.max(), stats.average()),
        (stats.last(), stats.last(), stats.last())
    );
}

#[test]
fn changing_the_window_keeps_runs_and_forgets_samples() {
    let mut world = Context::new();
    let mut feature = Feature::new("Game").with(game::Move);
    frames(&mut feature, &mut world, 2);
    feature.set_timing_window(5);
    let stats = feature.timings().get("Move").unwrap().execute();
    assert_eq!((stats.runs(), stats.window(), stats.samples().count()), (2, 5, 0));
    assert_eq!(feature.timings().window(), 5);
}

#[test]
fn timing_off_records_nothing() {
    let log = Log::default();
    let mut world = Context::new();
    let mut feature = Feature::new("Game").with(Spy::new("spy", &log));
    feature.set_timing(false);
    assert!(!feature.is_timing() && !feature.timings().is_timing());
    frames(&mut feature, &mut world, 2);
    assert_eq!(take(&log), ["execute spy", "cleanup spy", "execute spy", "cleanup spy"]);

    let stats = feature.timings().get("spy").unwrap();
    for phase in [stats.execute(), stats.cleanup()] {
        assert_eq!(phase.runs(), 0);
        assert_eq!(phase.samples().count(), 0);
        assert_eq!(
            [phase.last(), phase.average(), phase.min(), phase.max()],
            [Duration::ZERO; 4]
        );
    }

    // Switched back on, it records again.
    feature.set_timing(true);
    frames(&mut feature, &mut world, 1);
    assert_eq!(feature.timings().get("spy").unwrap().execute().runs(), 1);
}

#[test]
fn reset_timings_forgets_every_figure() {
    let mut world = Context::new();
    let mut feature = Feature::new("Game").with(Sleeper::new("Slow", &[ms(1)]));
    frames(&mut feature, &mut world, 2);
    feature.reset_timings();
    let stats = feature.timings().get("Slow").unwrap();
    assert_eq!((stats.execute().runs(), stats.cleanup().runs()), (0, 0));
    assert_eq!(
        (stats.execute().last(), stats.execute().max()),
        (Duration::ZERO, Duration::ZERO)
    );
}

#[test]
fn timings_display_is_an_indented_tree() {
    let mut world = Context::new();
    let physics = Feature::new("Physics")
        .with(Sleeper::new("Collide", &[Duration::ZERO]))
        .with(Feature::new("Solver").with(game::Move));
    let mut feature = Feature::new("Game")
        .with(Sleeper::new("Input", &[Duration::ZERO]))
        .with(physics)
        .with(Sleeper::new("Render", &[Duration::ZERO]));
    feature.execute(&mut world);

    let table = feature.timings().to_string();
    let lines: Vec<&str> = table.lines().collect();
    let labels: Vec<&str> = lines
        .iter()
        .map(|line| line.split("  ").find(|cell| !cell.is_empty()).unwrap_or(""))
        .collect();
    assert_eq!(
        labels,
        ["Game", "Input", "Physics", "Collide", "Solver", "Move", "Render"],
        "{table}"
    );
    let indents: Vec<usize> = lines.iter().map(|line| line.len() - line.trim_start().len()).collect();
    assert_eq!(indents, [0, 2, 2, 4, 4, 6, 2], "{table}");

    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["Game", "last", "avg", "min", "max"],
        "no cleanup ran: no cleanup column\n{table}"
    );
    for line in &lines[1..] {
        assert_eq!(figures(line), 4, "{table}");
    }
    // Columns are aligned: the figures are right-aligned, so every line ends at the same column.
    assert!(lines.iter().all(|line| line.len() == lines[0].len()), "{table}");

    // Once cleanup has been timed, a cleanup column appears.
    feature.cleanup(&mut world);
    let table = feature.timings().to_string();
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["Game", "last", "avg", "min", "max", "cleanup"], "{table}");
    assert!(table.lines().skip(1).all(|line| figures(line) == 5), "{table}");
}

/// How many durations a line of a timings table shows: a number followed by
/// a unit (`ns`, `us`, `ms` or `s`).
fn figures(line: &str) -> usize {
    let cells: Vec<&str> = line.split_whitespace().collect();
    cells
        .windows(2)
        .filter(|pair| pair[0].parse::<f64>().is_ok() && ["ns", "us", "ms", "s"].contains(&pair[1]))
        .count()
}

#[test]
fn timings_print_each_figure_in_the_unit_that_fits() {
    let mut world = Context::new();
    let mut feature = Feature::new("Game")
        .with(Sleeper::new("Quick", &[Duration::ZERO]))
        .with(Sleeper::new("Slow", &[ms(3)]));
    feature.execute(&mut world);
    let table = feature.timings().to_string();
    let slow = table
        .lines()
        .find(|line| line.trim_start().starts_with("Slow"))
        .unwrap();
    // At least 3 ms (the sleep), and well under a second: milliseconds, three digits.
    let cells: Vec<&str> = slow.split_whitespace().collect();
    assert_eq!(cells[2], "ms", "{table}");
    let value: f64 = cells[1].parse().unwrap();
    assert!((3.0..1000.0).contains(&value), "{table}");
    assert!(cells[1].len() <= 4, "three significant digits: {table}");
    // Nothing prints as zero milliseconds any more: a fast system shows ns or us.
    assert!(!table.contains("0.000"), "{table}");
    assert!(lines_have_equal_width(&table), "{table}");
}

fn lines_have_equal_width(table: &str) -> bool {
    let widths: Vec<usize> = table.lines().map(|line| line.chars().count()).collect();
    widths.windows(2).all(|pair| pair[0] == pair[1])
}

#[test]
fn timings_display_marks_systems_that_have_not_run_and_timing_off() {
    let mut feature = Feature::<Context>::new("Idle").with(game::Move);
    feature.set_timing(false);
    let table = feature.timings().to_string();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2, "{table}");
    assert!(lines[0].starts_with("Idle (timing off)"), "{table}");
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["Move", "-", "-", "-", "-"]
    );
}

// ---------------------------------------------------------------- registrations

struct Late;
impl System for Late {}

struct Early;
impl System for Early {}

struct Elsewhere;
impl System for Elsewhere {}

reactecs::feature_system!("Registered", 20, Late);
reactecs::feature_system!("Registered", 10, Early);
reactecs::feature_system!("Somewhere else", 0, Elsewhere);

#[test]
fn registered_system_is_picked_up_by_its_feature() {
    let feature = Feature::<Context>::new("Registered").with_registered();
    assert_eq!(names(feature.iter()), ["Early", "Late"]);
    let other = Feature::<Context>::new("Somewhere else").with_registered();
    assert_eq!(names(other.iter()), ["Elsewhere"]);
    assert!(
        Feature::<Context>::new("Nothing registered")
            .with_registered()
            .is_empty()
    );
}

#[test]
fn registered_systems_follow_systems_added_before_and_are_timed() {
    let mut world = Context::new();
    let mut feature = Feature::new("Registered").with(game::Move).with_registered();
    feature.add(Elsewhere);
    assert_eq!(names(feature.iter()), ["Move", "Early", "Late", "Elsewhere"]);
    frames(&mut feature, &mut world, 1);
    assert!(feature.timings().iter().all(|child| child.execute().runs() == 1));
}

/// Systems of equal priority, registered in reverse name order.
struct Named(&'static str);
impl System for Named {
    fn name(&self) -> &str {
        self.0
    }
}

reactecs::feature_system!("Ties", 5, Named("Zeta"));
reactecs::feature_system!("Ties", 5, Named("Alpha"));
reactecs::feature_system!("Ties", 1, Named("Omega"));
reactecs::feature_system!("Ties", 5, Named("Mu"),);

#[test]
fn registered_systems_of_equal_priority_are_ordered_by_name() {
    let feature = Feature::<Context>::new("Ties").with_registered();
    assert_eq!(names(feature.iter()), ["Omega", "Alpha", "Mu", "Zeta"]);
}

/// A world of its own: a list of notes.
#[derive(Default)]
struct Notebook {
    notes: Vec<&'static str>,
}

struct Note(&'static str);
impl System<Notebook> for Note {
    fn execute(&mut self, world: &mut Notebook) {
        world.notes.push(self.0);
    }
}

const REGISTERED: &str = "Registered";

reactecs::feature_system!(Notebook => REGISTERED, 1, Note("from the notebook"));

#[test]
fn registered_systems_for_another_world_are_not_included() {
    let on_context = Feature::<Context>::new("Registered").with_registered();
    assert_eq!(names(on_context.iter()), ["Early", "Late"]);

    let mut on_notebook = Feature::<Notebook>::new("Registered").with_registered();
    assert_eq!(on_notebook.len(), 1);
    let mut notebook = Notebook::default();
    on_notebook.execute(&mut notebook);
    assert_eq!(notebook.notes, ["from the notebook"]);
}

/// A world of its own for `each_gathering_builds_fresh_systems`: what each
/// run of `Counting` saw.
#[derive(Default)]
struct Tally {
    seen: Vec<u32>,
}

/// A system with state: counts its own runs and writes the count down.
struct Counting {
    runs: u32,
}
impl System<Tally> for Counting {
    fn execute(&mut self, world: &mut Tally) {
        self.runs += 1;
        world.seen.push(self.runs);
    }
}

reactecs::feature_system!(Tally => "Counted", 1, Counting { runs: 0 });

#[test]
fn each_gathering_builds_fresh_systems() {
    let mut tally = Tally::default();
    let mut first = Feature::<Tally>::new("Counted").with_registered();
    first.execute(&mut tally);
    first.execute(&mut tally);
    let mut second = Feature::<Tally>::new("Counted").with_registered();
    second.execute(&mut tally);
    first.execute(&mut tally);
    // Each feature has its own `Counting`: the second's starts from nothing
    // and the first's count goes on undisturbed.
    assert_eq!(tally.seen, [1, 2, 1, 3]);
}

// ---------------------------------------------------------------- fallible systems

/// Logs `"<phase> <label>"` like `Spy`, through the `try_` phases, and fails
/// in `fails_in` with the error `"<label> broke"`.
struct Faulty {
    label: &'static str,
    fails_in: &'static str,
    log: Log,
}

impl Faulty {
    fn new(label: &'static str, fails_in: &'static str, log: &Log) -> Self {
        Faulty {
            label,
            fails_in,
            log: log.clone(),
        }
    }

    fn run(&self, phase: &str) -> SystemResult {
        self.log.lock().unwrap().push(format!("{phase} {}", self.label));
        if phase == self.fails_in {
            return Err(format!("{} broke", self.label).into());
        }
        Ok(())
    }
}

impl<W> System<W> for Faulty {
    fn name(&self) -> &str {
        self.label
    }
    fn try_initialize(&mut self, _world: &mut W) -> SystemResult {
        self.run("initialize")
    }
    fn try_execute(&mut self, _world: &mut W) -> SystemResult {
        self.run("execute")
    }
    fn try_cleanup(&mut self, _world: &mut W) -> SystemResult {
        self.run("cleanup")
    }
    fn try_teardown(&mut self, _world: &mut W) -> SystemResult {
        self.run("teardown")
    }
}

#[test]
fn a_failing_systems_error_reaches_the_caller_with_its_name_phase_and_features() {
    let log = Log::default();
    let mut world = Context::new();
    let mut frame = Feature::new("Game")
        .with(Spy::new("Input", &log))
        .with(Feature::new("Physics").with(Faulty::new("Collide", "execute", &log)))
        .with(Spy::new("Render", &log));
    frame.try_initialize(&mut world).unwrap();
    take(&log);

    let failure = frame.try_execute(&mut world).unwrap_err();
    assert_eq!(failure.system(), "Collide");
    assert_eq!(failure.phase(), Phase::Execute);
    assert_eq!(failure.features(), ["Game", "Physics"]);
    assert_eq!(failure.error().to_string(), "Collide broke");
    assert_eq!(
        failure.to_string(),
        "system `Collide` failed in `execute` (feature `Game` > `Physics`): Collide broke"
    );
    assert_eq!(
        std::error::Error::source(&failure).map(ToString::to_string),
        Some("Collide broke".to_owned())
    );
    // The frame stops at the failure: Render did not run.
    assert_eq!(take(&log), ["execute Input", "execute Collide"]);
    // The failed run is timed like any other.
    let physics = frame.timings().get("Physics").unwrap();
    assert_eq!(physics.execute().runs(), 1);
    assert_eq!(frame.timings().get("Render").unwrap().execute().runs(), 0);

    // Cleanup and the next frame run as the caller decides.
    frame.try_cleanup(&mut world).unwrap();
    assert_eq!(take(&log), ["cleanup Input", "cleanup Collide", "cleanup Render"]);
}

#[test]
fn a_failing_initialize_stops_the_initialization_of_later_systems() {
    let log = Log::default();
    let mut world = Context::new();
    let mut frame = Systems::new()
        .with(Spy::new("Board", &log))
        .with(Faulty::new("Fill", "initialize", &log))
        .with(Spy::new("Render", &log));
    let failure = frame.try_initialize(&mut world).unwrap_err();
    assert_eq!((failure.system(), failure.phase()), ("Fill", Phase::Initialize));
    assert!(failure.features().is_empty(), "a plain list adds no name");
    assert_eq!(take(&log), ["initialize Board", "initialize Fill"]);
    assert_eq!(failure.to_string(), "system `Fill` failed in `initialize`: Fill broke");
}

#[test]
fn teardown_runs_every_system_and_reports_the_first_failure() {
    let log = Log::default();
    let mut world = Context::new();
    let mut frame = Feature::new("Game")
        .with(Faulty::new("Audio", "teardown", &log))
        .with(Spy::new("Board", &log))
        .with(Faulty::new("Network", "teardown", &log));
    let failure = frame.try_teardown(&mut world).unwrap_err();
    assert_eq!((failure.system(), failure.phase()), ("Audio", Phase::Teardown));
    assert_eq!(take(&log), ["teardown Audio", "teardown Board", "teardown Network"]);
}

#[test]
#[should_panic(expected = "system `Collide` failed in `cleanup` (feature `Game`): Collide broke")]
fn the_plain_phase_of_a_feature_panics_with_the_failure() {
    let log = Log::default();
    let mut frame = Feature::new("Game").with(Faulty::new("Collide", "cleanup", &log));
    frame.cleanup(&mut Context::new());
}

#[test]
fn infallible_systems_run_through_the_try_phases() {
    let log = Log::default();
    let mut world = Context::new();
    let mut frame = Feature::new("Game")
        .with(Spy::new("Move", &log))
        .with(Box::new(Spy::new("Boxed", &log)) as Box<dyn System + Send>);
    frame.try_initialize(&mut world).unwrap();
    frame.try_execute(&mut world).unwrap();
    frame.try_cleanup(&mut world).unwrap();
    frame.try_teardown(&mut world).unwrap();
    assert_eq!(
        take(&log),
        [
            "initialize Move",
            "initialize Boxed",
            "execute Move",
            "execute Boxed",
            "cleanup Move",
            "cleanup Boxed",
            "teardown Move",
            "teardown Boxed"
        ]
    );
}

#[test]
fn a_boxed_fallible_system_keeps_its_error() {
    let log = Log::default();
    let mut boxed: Box<dyn System> = Box::new(Faulty::new("Fill", "execute", &log));
    let error = boxed.try_execute(&mut Context::new()).unwrap_err();
    assert_eq!(error.to_string(), "Fill broke");
}

#[derive(Debug, PartialEq)]
struct Cell(i32);
#[derive(Debug, PartialEq)]
struct Heading(i32);
reactecs::component!(Cell, Heading);

/// Creates a `Cell`, gives it a `Heading`, then a second one: fails half-way
/// through the frame.
struct HalfWay;
impl System for HalfWay {
    fn try_execute(&mut self, world: &mut Context) -> SystemResult {
        let e = world.create_entity_with(Cell(1))?;
        world.add(e, Heading(1))?;
        world.add(e, Heading(2))?;
        world.create_entity_with(Cell(9))?;
        Ok(())
    }
}

#[test]
fn a_system_that_fails_half_way_leaves_the_context_consistent() {
    let mut world = Context::new();
    let movers = world.add_group(Matcher::all_of::<(Cell, Heading)>());
    let mut frame = Feature::new("Game").with(HalfWay);
    let failure = frame.try_execute(&mut world).unwrap_err();
    assert_eq!(failure.system(), "HalfWay");
    assert!(matches!(
        failure.error().downcast_ref::<Error>(),
        Some(Error::ComponentAlreadyPresent {
            component: "Heading",
            ..
        })
    ));
    world.check_invariants().unwrap();
    // What ran before the failing call took effect; the failing call and
    // what came after it did not.
    assert_eq!(world.len(), 1);
    let e = world.entities().next().unwrap();
    assert_eq!(world.get::<Heading>(e), Ok(&Heading(1)));
    assert_eq!(world.group(movers).unwrap().len(), 1);
}

#[test]
fn systems_on_several_contexts_fail_with_their_name() {
    reactecs::context!(Left, Right);
    struct Mirror;
    impl System<Contexts> for Mirror {
        fn try_execute(&mut self, contexts: &mut Contexts) -> SystemResult {
            let (left, right) = contexts.get_many_mut::<(Left, Right)>()?;
            right.create_entity();
            left.create_entity();
            contexts.get_many_mut::<(Left, Left)>()?;
            Ok(())
        }
    }
    let mut contexts = Contexts::new();
    let mut frame = Feature::<Contexts>::new("Frame").with(Mirror);
    let failure = frame.try_execute(&mut contexts).unwrap_err();
    assert_eq!(failure.system(), "Mirror");
    assert!(matches!(
        failure.error().downcast_ref::<Error>(),
        Some(Error::ContextRequestedTwice { context: "Left", .. })
    ));
    assert_eq!(
        (contexts.context::<Left>().len(), contexts.context::<Right>().len()),
        (1, 1)
    );
}

/// A counter system of its own type, to be found again by type.
#[derive(Default)]
struct Counter {
    label: &'static str,
    runs: u32,
}
impl System for Counter {
    fn execute(&mut self, _: &mut Context) {
        self.runs += 1;
    }
}

/// Collected by `Collected`.
struct Spot;
reactecs::component!(Spot);

/// A reactive system, found through its `Reactive` wrapper.
#[derive(Default)]
struct Collected(u32);
impl ReactiveSystem for Collected {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Spot>().added())
    }
    fn execute(&mut self, _: &mut Context, entities: &[Entity]) {
        self.0 += entities.len() as u32;
    }
}

/// A deferred system, found through its `Deferred` wrapper.
struct Recorder(u32);
impl DeferredSystem for Recorder {
    fn execute(&mut self, _: &Context, _: &mut CommandBuffer) {
        self.0 += 1;
    }
}

#[test]
fn a_system_is_found_by_type_in_nested_features_through_wrappers() {
    let mut world = Context::new();
    let boxed: Box<dyn System + Send> = Box::new(Systems::new().with(Reactive::new(Collected::default())));
    let mut frame = Feature::new("Game")
        .with(Feature::new("Input").with(Counter {
            label: "input",
            ..Counter::default()
        }))
        .with(Counter {
            label: "top",
            ..Counter::default()
        })
        .with(Systems::new().with(Feature::new("Deep").with(boxed)))
        .with_deferred(Recorder(0));
    frame.initialize(&mut world);
    world.create_entity_with(Spot).unwrap();
    frame.execute(&mut world);
    // Depth first, in order: the counter inside "Input" comes before the one
    // after it.
    let counter = frame.system::<Counter>().unwrap();
    assert_eq!((counter.label, counter.runs), ("input", 1));
    // Through `Reactive`, a box, a `Systems` and a nested feature.
    assert_eq!(frame.system::<Collected>().map(|c| c.0), Some(1));
    assert!(frame.system::<Reactive<Collected>>().is_some(), "the wrapper itself");
    assert_eq!(frame.system::<Recorder>().map(|r| r.0), Some(1));
    assert!(frame.system::<Feature>().is_some_and(|f| f.name() == "Input"));
    assert!(frame.system::<Systems>().is_some());
    assert!(frame.system::<String>().is_none(), "absence is `None`");
    // Mutably: the change is seen by the next run.
    frame.system_mut::<Collected>().unwrap().0 = 10;
    frame.system_mut::<Counter>().unwrap().runs = 100;
    frame.execute(&mut world);
    assert_eq!(frame.system::<Collected>().map(|c| c.0), Some(10), "nothing collected");
    assert_eq!(frame.system::<Counter>().map(|c| c.runs), Some(101));
    // The same on a plain `Systems`, and on a feature searched whole.
    let mut list = Systems::new().with(frame);
    assert_eq!(list.system::<Counter>().map(|c| c.label), Some("input"));
    assert_eq!(list.system_mut::<Recorder>().map(|r| r.0), Some(2));
    assert!(list.system::<Feature>().is_some_and(|f| f.name() == "Game"));
}

#[test]
fn a_system_is_found_inside_in_context_and_multi_reactive() {
    reactecs::context!(Arena);
    struct Watch(u32);
    impl ReactiveSystem<Contexts> for Watch {
        fn trigger(&mut self, _: &mut Contexts) -> Vec<CollectorId> {
            Vec::new()
        }
    }
    let mut frame = Feature::<Contexts>::new("Frame")
        .with_in(
            Arena,
            Feature::new("Arena").with(Counter {
                label: "arena",
                ..Counter::default()
            }),
        )
        .with(MultiReactive::new(Watch(7)));
    assert_eq!(frame.system::<Counter>().map(|c| c.label), Some("arena"));
    assert!(frame.system::<Feature>().is_some_and(|f| f.name() == "Arena"));
    assert_eq!(frame.system::<Watch>().map(|w| w.0), Some(7));
    frame.system_mut::<Counter>().unwrap().runs = 5;
    let mut contexts = Contexts::new();
    frame.execute(&mut contexts);
    assert_eq!(frame.system::<Counter>().map(|c| c.runs), Some(6));
}

#[test]
fn a_registered_system_is_found_by_type() {
    let feature = Feature::<Context>::new("Registered").with_registered();
    assert!(feature.system::<Early>().is_some() && feature.system::<Late>().is_some());
    assert!(feature.system::<Elsewhere>().is_none());
}
