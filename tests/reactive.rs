//! Reactive systems: `Reactive` runs a `ReactiveSystem` for what its
//! collector gathered since the last run (in order, filtered, retained while
//! executing, released after), destroyed entities with and without
//! `include_destroyed`, kept removed values, the activate / deactivate /
//! clear switches through lists and features, teardown, order and timings in
//! a feature, panics in `execute`, `reset`, the multi-context forms
//! (`MultiReactive`, `InContext`, `with_in`), when collection starts (at
//! construction with the context, or before any system of a feature is
//! initialized), and reactive systems that fail.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use reactecs::prelude::*;
use reactecs::system::{ContextEntity, InContext, MultiReactive, Reactive};
use reactecs::{CollectorSpec, ContextId};

/// A component of both declared contexts.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sprite(u32);

reactecs::component!(Game, Ui: Sprite);

fn game() -> Context {
    Context::with_name("Game")
}

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

fn vel(x: f32) -> Velocity {
    Velocity { x, y: 0.0 }
}

fn stale(entity: Entity) -> Error {
    Error::StaleEntity {
        context: "Game",
        entity,
        component: None,
    }
}

/// What a [`Probe`] saw, shared with the test.
#[derive(Clone, Default)]
struct Record(Arc<Mutex<Seen>>);

#[derive(Default)]
struct Seen {
    /// The entities of each `execute`, one list per call.
    runs: Vec<Vec<Entity>>,
    /// Every entity `filter` was asked about, in call order.
    filtered: Vec<Entity>,
    /// The collector `trigger` made last.
    collector: Option<CollectorId>,
}

impl Record {
    /// The runs since the last call.
    fn runs(&self) -> Vec<Vec<Entity>> {
        std::mem::take(&mut self.0.lock().unwrap().runs)
    }

    /// The entities filtered since the last call.
    fn filtered(&self) -> Vec<Entity> {
        std::mem::take(&mut self.0.lock().unwrap().filtered)
    }

    fn collector(&self) -> CollectorId {
        self.0.lock().unwrap().collector.expect("trigger has run")
    }
}

/// Work done during `execute`, with the entities and the collector id.
type Hook = Box<dyn FnMut(&mut Context, &[Entity], CollectorId) + Send>;

/// A configurable reactive system that records what it is given.
struct Probe {
    spec: fn() -> CollectorSpec,
    filter: fn(&Context, Entity) -> bool,
    include_destroyed: bool,
    hook: Hook,
    record: Record,
}

impl Probe {
    /// Reacts to `Position` added (or replaced).
    fn added() -> Self {
        Probe::on(|| Matcher::all_of::<Position>().added().into())
    }

    fn on(spec: fn() -> CollectorSpec) -> Self {
        Probe {
            spec,
            filter: |_, _| true,
            include_destroyed: false,
            hook: Box::new(|_, _, _| {}),
            record: Record::default(),
        }
    }

    fn filter(mut self, filter: fn(&Context, Entity) -> bool) -> Self {
        self.filter = filter;
        self
    }

    fn including_destroyed(mut self) -> Self {
        self.include_destroyed = true;
        self
    }

    fn on_execute(mut self, hook: impl FnMut(&mut Context, &[Entity], CollectorId) + Send + 'static) -> Self {
        self.hook = Box::new(hook);
        self
    }

    fn record(&self) -> Record {
        self.record.clone()
    }
}

impl ReactiveSystem for Probe {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        let id = game.add_collector((self.spec)());
        self.record.0.lock().unwrap().collector = Some(id);
        id
    }

    fn filter(&self, game: &Context, entity: Entity) -> bool {
        self.record.0.lock().unwrap().filtered.push(entity);
        (self.filter)(game, entity)
    }

    fn include_destroyed(&self) -> bool {
        self.include_destroyed
    }

    fn execute(&mut self, game: &mut Context, entities: &[Entity]) {
        self.record.0.lock().unwrap().runs.push(entities.to_vec());
        let id = self.record.collector();
        (self.hook)(game, entities, id);
    }
}

/// Lines written by logging systems, in call order.
type Log = Arc<Mutex<Vec<String>>>;

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn note(log: &Log, line: String) {
    log.lock().unwrap().push(line);
}

/// A plain system that logs its phases; its `execute` creates an entity with
/// a `Position` when `spawns`.
struct Step {
    label: &'static str,
    spawns: bool,
    log: Log,
}

impl System for Step {
    fn name(&self) -> &str {
        self.label
    }
    fn initialize(&mut self, _game: &mut Context) {
        note(&self.log, format!("initialize {}", self.label));
    }
    fn execute(&mut self, game: &mut Context) {
        if self.spawns {
            game.create_entity_with(pos(0.0)).unwrap();
        }
        note(&self.log, format!("execute {}", self.label));
    }
    fn cleanup(&mut self, _game: &mut Context) {
        note(&self.log, format!("cleanup {}", self.label));
    }
    fn teardown(&mut self, _game: &mut Context) {
        note(&self.log, format!("teardown {}", self.label));
    }
}

/// A reactive system that logs its phases and how many entities it ran for.
struct Logged {
    log: Log,
}

impl ReactiveSystem for Logged {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Position>().added())
    }
    fn execute(&mut self, _game: &mut Context, entities: &[Entity]) {
        note(&self.log, format!("execute reactive {}", entities.len()));
    }
    fn initialize(&mut self, _game: &mut Context) {
        note(&self.log, "initialize reactive".to_owned());
    }
    fn cleanup(&mut self, _game: &mut Context) {
        note(&self.log, "cleanup reactive".to_owned());
    }
    fn teardown(&mut self, _game: &mut Context) {
        note(&self.log, "teardown reactive".to_owned());
    }
}

#[test]
fn a_reactive_system_runs_only_for_entities_collected_since_its_last_run_in_collection_order() {
    let mut game = game();
    let before = game.create_entity_with(pos(0.0)).unwrap();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let a = game.create_entity();
    let b = game.create_entity();
    let c = game.create_entity();
    game.add(c, pos(1.0)).unwrap();
    game.add(a, pos(2.0)).unwrap();
    game.add(b, pos(3.0)).unwrap();
    game.replace(c, pos(4.0)).unwrap(); // already collected: once, in its first place

    reactive.execute(&mut game);
    assert_eq!(
        record.runs(),
        [vec![c, a, b]],
        "not `before`: made before the collector"
    );

    game.replace(b, pos(5.0)).unwrap();
    game.replace(before, pos(6.0)).unwrap();
    reactive.execute(&mut game);
    // Replacements are gathered from change stamps, in storage order.
    assert_eq!(record.runs(), [vec![before, b]]);
    check(&game);
}

#[test]
fn a_reactive_system_does_not_execute_when_nothing_changed() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    reactive.execute(&mut game);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());

    game.create_entity_with(pos(0.0)).unwrap();
    reactive.execute(&mut game);
    assert_eq!(record.runs().len(), 1);
    reactive.execute(&mut game);
    reactive.execute(&mut game);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());
    assert_eq!(record.filtered().len(), 1, "the filter saw the one entity, once");
    check(&game);
}

#[test]
fn initialize_makes_the_collector_so_changes_before_the_first_execute_count() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    assert_eq!(reactive.collector(), None);
    reactive.initialize(&mut game);
    assert_eq!(reactive.collector(), Some(record.collector()));
    let e = game.create_entity_with(pos(0.0)).unwrap();
    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![e]]);
    check(&game);
}

#[test]
fn without_initialize_the_first_execute_makes_the_collector_and_collects_from_then_on() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    game.create_entity_with(pos(0.0)).unwrap();
    reactive.execute(&mut game);
    assert_eq!(reactive.collector(), Some(record.collector()));
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());
    let e = game.create_entity_with(pos(1.0)).unwrap();
    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![e]]);
    check(&game);
}

#[test]
fn changes_made_during_execute_are_collected_for_the_next_run() {
    let mut game = game();
    let probe = Probe::added().on_execute(|game, entities, _| {
        for &e in entities {
            let p = *game.get::<Position>(e).unwrap();
            game.replace(e, pos(p.x + 1.0)).unwrap();
        }
    });
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let a = game.create_entity_with(pos(0.0)).unwrap();
    let b = game.create_entity_with(pos(0.0)).unwrap();

    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![a, b]], "one run, not a loop");
    assert_eq!(game.collector(record.collector()).unwrap().entities(), [a, b]);
    assert_eq!(game.aerc().retain_count(a), Ok(1), "held by the collector only");

    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![a, b]]);
    assert_eq!(game.get::<Position>(a).unwrap().x, 2.0);
    check(&game);
}

#[test]
fn the_filter_drops_entities_and_releases_them() {
    let mut game = game();
    let probe = Probe::added().filter(|game, e| game.has::<Velocity>(e));
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let walker = game.create_entity_with((pos(0.0), vel(1.0))).unwrap();
    let statue = game.create_entity_with(pos(0.0)).unwrap();
    let runner = game.create_entity_with((pos(0.0), vel(2.0))).unwrap();
    assert_eq!(game.aerc().retain_count(statue), Ok(1));

    reactive.execute(&mut game);
    assert_eq!(record.filtered(), [walker, statue, runner]);
    assert_eq!(record.runs(), [vec![walker, runner]]);
    for e in [walker, statue, runner] {
        assert_eq!(game.aerc().retain_count(e), Ok(0));
        assert_eq!(game.aerc().owners(e), Ok(Some(&[][..])));
    }
    assert!(game.collector(record.collector()).unwrap().is_empty());

    reactive.execute(&mut game);
    assert_eq!(
        record.runs(),
        Vec::<Vec<Entity>>::new(),
        "a dropped entity is not kept for later"
    );
    check(&game);
}

#[test]
fn an_entity_destroyed_before_execute_is_not_executed_and_its_slot_is_freed() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let doomed = game.create_entity_with(pos(0.0)).unwrap();
    let kept = game.create_entity_with(pos(1.0)).unwrap();
    let spy = Spy::attach(&mut game);
    game.destroy_entity(doomed).unwrap();
    assert_eq!(game.aerc().is_enabled(doomed), Ok(false), "the collector holds it");
    assert_eq!(spy.take_starting_with("released"), Vec::<String>::new());

    reactive.execute(&mut game);
    assert_eq!(
        record.filtered(),
        [kept],
        "a destroyed entity does not reach the filter"
    );
    assert_eq!(record.runs(), [vec![kept]]);
    assert_eq!(spy.take_starting_with("released"), [format!("released {doomed}")]);
    assert_eq!(game.aerc().is_enabled(doomed), Err(stale(doomed)));
    assert_eq!(game.aerc().retained_destroyed().count(), 0);
    check(&game);
}

#[test]
fn include_destroyed_passes_a_disabled_entity_to_filter_and_execute_and_releases_it_after() {
    let mut game = game();
    let inside = Arc::new(Mutex::new(Vec::new()));
    let seen = inside.clone();
    let probe = Probe::added()
        .including_destroyed()
        .on_execute(move |game, entities, _| {
            for &e in entities {
                seen.lock()
                    .unwrap()
                    .push((e, game.aerc().is_enabled(e), game.aerc().retain_count(e)));
            }
        });
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let doomed = game.create_entity_with(pos(0.0)).unwrap();
    let kept = game.create_entity_with(pos(1.0)).unwrap();
    let spy = Spy::attach(&mut game);
    game.destroy_entity(doomed).unwrap();
    spy.take();

    reactive.execute(&mut game);
    assert_eq!(record.filtered(), [doomed, kept]);
    assert_eq!(record.runs(), [vec![doomed, kept]]);
    let inside = inside.lock().unwrap().clone();
    assert_eq!(inside[0].0, doomed);
    assert_eq!(inside[0].1, Ok(false), "disabled during execute");
    assert!(*inside[0].2.as_ref().unwrap() >= 1, "retained during execute");
    assert_eq!(inside[1], (kept, Ok(true), Ok(1)));
    assert_eq!(spy.take(), [format!("released {doomed}")]);
    assert_eq!(game.aerc().is_enabled(doomed), Err(stale(doomed)));
    check(&game);
}

#[test]
fn a_destroyed_entity_dropped_by_the_filter_is_released() {
    let mut game = game();
    let probe = Probe::added().including_destroyed().filter(|game, e| game.is_alive(e));
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let doomed = game.create_entity_with(pos(0.0)).unwrap();
    let spy = Spy::attach(&mut game);
    game.destroy_entity(doomed).unwrap();
    spy.take();

    reactive.execute(&mut game);
    assert_eq!(record.filtered(), [doomed]);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());
    assert_eq!(spy.take(), [format!("released {doomed}")]);
    check(&game);
}

/// The removed `Health` values a watcher read during `execute`.
type HealthRead = Arc<Mutex<Vec<(Entity, Option<Health>)>>>;

/// Reacts to `Health` removed, keeping the removed values, and reads them
/// during `execute`.
fn health_watcher(include_destroyed: bool, read: HealthRead) -> Probe {
    let probe = Probe::on(|| Matcher::all_of::<Health>().removed().keep_removed::<Health>()).on_execute(
        move |game, entities, id| {
            let collector = game.collector(id).unwrap();
            for &e in entities {
                read.lock()
                    .unwrap()
                    .push((e, collector.removed::<Health>().get(e).copied()));
            }
        },
    );
    if include_destroyed {
        probe.including_destroyed()
    } else {
        probe
    }
}

#[test]
fn a_removed_trigger_reads_the_removed_value_during_execute() {
    let mut game = game();
    let read = Arc::new(Mutex::new(Vec::new()));
    let probe = health_watcher(false, read.clone());
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let a = game.create_entity_with(Health(3)).unwrap();
    let b = game.create_entity_with((Health(5), pos(0.0))).unwrap();
    game.remove::<Health>(b).unwrap();
    game.remove::<Health>(a).unwrap();

    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![b, a]]);
    assert_eq!(*read.lock().unwrap(), [(b, Some(Health(5))), (a, Some(Health(3)))]);
    let collector = game.collector(record.collector()).unwrap();
    assert_eq!(collector.removed::<Health>().get(a), None, "forgotten after the run");
    check(&game);
}

#[test]
fn a_removed_trigger_including_destroyed_reads_a_destroyed_entitys_removed_value() {
    let mut game = game();
    let read = Arc::new(Mutex::new(Vec::new()));
    let probe = health_watcher(true, read.clone());
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let survivor = game.create_entity_with(Health(3)).unwrap();
    let doomed = game.create_entity_with((Health(7), pos(0.0))).unwrap();
    game.destroy_entity(doomed).unwrap();
    game.remove::<Health>(survivor).unwrap();
    let spy = Spy::attach(&mut game);

    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![doomed, survivor]]);
    assert_eq!(
        *read.lock().unwrap(),
        [(doomed, Some(Health(7))), (survivor, Some(Health(3)))]
    );
    assert_eq!(spy.take(), [format!("released {doomed}")]);
    check(&game);
}

#[test]
fn a_removed_trigger_hands_a_destroyed_entity_to_its_filter_as_entitas_does() {
    let mut game = game();
    let read = Arc::new(Mutex::new(Vec::new()));
    let probe = health_watcher(false, read.clone());
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let doomed = game.create_entity_with(Health(7)).unwrap();
    game.destroy_entity(doomed).unwrap();

    reactive.execute(&mut game);
    assert_eq!(record.filtered(), [doomed], "the filter decides");
    assert_eq!(record.runs(), [vec![doomed]], "the default filter keeps it");
    assert_eq!(*read.lock().unwrap(), [(doomed, Some(Health(7)))], "its removed value");
    assert_eq!(
        game.aerc().is_enabled(doomed),
        Err(stale(doomed)),
        "released after the run"
    );
    check(&game);
}

#[test]
fn a_removed_trigger_whose_filter_wants_enabled_entities_skips_a_destroyed_one() {
    let mut game = game();
    let read = Arc::new(Mutex::new(Vec::new()));
    let probe = health_watcher(false, read.clone()).filter(|game, e| game.aerc().is_enabled(e) == Ok(true));
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let doomed = game.create_entity_with(Health(7)).unwrap();
    let survivor = game.create_entity_with(Health(3)).unwrap();
    game.destroy_entity(doomed).unwrap();
    game.remove::<Health>(survivor).unwrap();

    reactive.execute(&mut game);
    assert_eq!(record.filtered(), [doomed, survivor]);
    assert_eq!(record.runs(), [vec![survivor]]);
    assert_eq!(game.aerc().is_enabled(doomed), Err(stale(doomed)));
    check(&game);
}

#[test]
fn entities_are_retained_by_the_system_during_execute_and_released_after() {
    let mut game = game();
    let inside = Arc::new(Mutex::new(Vec::new()));
    let seen = inside.clone();
    let probe = Probe::added().on_execute(move |game, entities, id| {
        for &e in entities {
            let owners = game.aerc().owners(e).unwrap().unwrap().to_vec();
            let collected = game.collector(id).unwrap().contains(e);
            seen.lock()
                .unwrap()
                .push((game.aerc().retain_count(e).unwrap(), owners, collected));
        }
    });
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let other = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let me = Owner::new();
    game.retain(e, me).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(3), "both collectors and `me`");

    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![e]]);
    let inside = inside.lock().unwrap().clone();
    // The collector's retain went to the system: still three, the
    // collector empty. Internal owners are counted, not listed.
    assert_eq!(inside, [(3, vec![me], false)]);

    assert_eq!(game.aerc().retain_count(e), Ok(2), "the system released its retain");
    game.collector_mut(other).unwrap().clear();
    game.release(e, me).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(0));
    check(&game);
}

#[test]
fn a_reactive_systems_owner_is_internal_and_refused_to_user_code() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let owner = reactive.owner();
    assert!(owner.is_internal());
    assert_ne!(owner, game.collector(record.collector()).unwrap().owner());
    let e = game.create_entity();
    assert_eq!(
        game.retain(e, owner),
        Err(Error::InternalOwner { context: "Game", owner })
    );
    assert_eq!(game.aerc().retain_count(e), Ok(0));
    check(&game);
}

#[test]
fn deactivating_a_reactive_system_releases_what_it_collected_and_collects_nothing() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let a = game.create_entity_with(pos(0.0)).unwrap();
    let doomed = game.create_entity_with(pos(0.0)).unwrap();
    game.destroy_entity(doomed).unwrap();
    let spy = Spy::attach(&mut game);

    reactive.deactivate_reactive_systems(&mut game);
    assert_eq!(game.aerc().retain_count(a), Ok(0));
    assert_eq!(spy.take(), [format!("released {doomed}")]);
    let collector = game.collector(record.collector()).unwrap();
    assert!(!collector.is_active());
    assert!(collector.is_empty());

    game.create_entity_with(pos(1.0)).unwrap();
    game.replace(a, pos(2.0)).unwrap();
    reactive.execute(&mut game);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());
    check(&game);
}

#[test]
fn activating_a_reactive_system_resumes_collecting_without_replaying() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    reactive.deactivate_reactive_systems(&mut game);
    game.create_entity_with(pos(0.0)).unwrap();

    reactive.activate_reactive_systems(&mut game);
    assert!(game.collector(record.collector()).unwrap().is_active());
    let e = game.create_entity_with(pos(1.0)).unwrap();
    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![e]]);
    check(&game);
}

#[test]
fn clearing_a_reactive_system_empties_its_collector_and_keeps_it_collecting() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let a = game.create_entity_with(pos(0.0)).unwrap();

    reactive.clear_reactive_systems(&mut game);
    assert_eq!(game.aerc().retain_count(a), Ok(0));
    let collector = game.collector(record.collector()).unwrap();
    assert!(collector.is_active());
    assert!(collector.is_empty());
    reactive.execute(&mut game);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());

    let b = game.create_entity_with(pos(1.0)).unwrap();
    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![b]]);
    check(&game);
}

#[test]
fn the_switches_reach_a_reactive_system_nested_in_features_and_lists() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut frame = Feature::new("Outer").with(Systems::new().with(Feature::new("Inner").with(Reactive::new(probe))));
    frame.initialize(&mut game);
    let id = record.collector();
    let a = game.create_entity_with(pos(0.0)).unwrap();

    frame.deactivate_reactive_systems(&mut game);
    assert!(!game.collector(id).unwrap().is_active());
    assert_eq!(game.aerc().retain_count(a), Ok(0));
    game.replace(a, pos(1.0)).unwrap();
    frame.execute(&mut game);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());

    frame.activate_reactive_systems(&mut game);
    assert!(game.collector(id).unwrap().is_active());
    game.replace(a, pos(2.0)).unwrap();
    frame.execute(&mut game);
    assert_eq!(record.runs(), [vec![a]]);

    game.replace(a, pos(3.0)).unwrap();
    assert_eq!(game.collector(id).unwrap().entities(), [a], "reading gathers");
    assert_eq!(game.aerc().retain_count(a), Ok(1));
    frame.clear_reactive_systems(&mut game);
    assert_eq!(game.aerc().retain_count(a), Ok(0));
    assert!(game.collector(id).unwrap().is_active());
    frame.execute(&mut game);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());
    check(&game);
}

#[test]
fn teardown_removes_the_collector_and_releases_what_it_held() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let id = record.collector();
    let a = game.create_entity_with(pos(0.0)).unwrap();
    let doomed = game.create_entity_with(pos(0.0)).unwrap();
    game.destroy_entity(doomed).unwrap();
    let spy = Spy::attach(&mut game);

    reactive.teardown(&mut game);
    assert_eq!(
        game.collector(id).unwrap_err(),
        Error::UnknownCollector {
            context: "Game",
            collector: id
        }
    );
    assert_eq!(reactive.collector(), None);
    assert_eq!(game.collectors().count(), 0);
    assert_eq!(game.aerc().retain_count(a), Ok(0));
    assert_eq!(spy.take(), [format!("released {doomed}")]);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());
    check(&game);
}

#[test]
fn a_run_after_teardown_makes_a_new_collector() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let old = record.collector();
    reactive.teardown(&mut game);
    game.create_entity_with(pos(0.0)).unwrap(); // nothing collects this

    reactive.execute(&mut game);
    let new = record.collector();
    assert_ne!(new, old);
    assert_eq!(reactive.collector(), Some(new));
    assert!(game.collector(new).unwrap().is_active());
    assert_eq!(game.collectors().count(), 1);
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());

    let e = game.create_entity_with(pos(1.0)).unwrap();
    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![e]]);
    check(&game);
}

#[test]
fn a_reactive_system_among_plain_systems_runs_in_order_in_nested_features() {
    let mut game = game();
    let log = Log::default();
    let step = |label, spawns| Step {
        label,
        spawns,
        log: log.clone(),
    };
    let mut frame = Feature::new("Frame")
        .with(step("spawn", true))
        .with(Reactive::new(Logged { log: log.clone() }))
        .with(Feature::new("Late").with(step("late", true)))
        .with(step("last", false));

    frame.initialize(&mut game);
    assert_eq!(
        take(&log),
        [
            "initialize spawn",
            "initialize reactive",
            "initialize late",
            "initialize last"
        ]
    );
    for _ in 0..2 {
        frame.execute(&mut game);
        frame.cleanup(&mut game);
    }
    // The reactive system sees `spawn`'s entity of this frame, and `late`'s
    // of the frame before.
    let frame_lines = |reactive: &str| {
        [
            "execute spawn".to_owned(),
            reactive.to_owned(),
            "execute late".to_owned(),
            "execute last".to_owned(),
            "cleanup spawn".to_owned(),
            "cleanup reactive".to_owned(),
            "cleanup late".to_owned(),
            "cleanup last".to_owned(),
        ]
    };
    let mut expected = frame_lines("execute reactive 1").to_vec();
    expected.extend(frame_lines("execute reactive 2"));
    assert_eq!(take(&log), expected);

    frame.teardown(&mut game);
    assert_eq!(
        take(&log),
        ["teardown spawn", "teardown reactive", "teardown late", "teardown last"]
    );
    assert_eq!(game.collectors().count(), 0, "teardown removed the collector");
    check(&game);
}

/// A reactive system with the default name.
struct MyReactive;

impl ReactiveSystem for MyReactive {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Position>().added())
    }
    fn execute(&mut self, _game: &mut Context, _entities: &[Entity]) {}
}

/// A reactive system that names itself.
struct Renamed;

impl ReactiveSystem for Renamed {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Position>().added())
    }
    fn execute(&mut self, _game: &mut Context, _entities: &[Entity]) {}
    fn name(&self) -> &str {
        "Render"
    }
}

#[test]
fn a_feature_times_a_reactive_system_under_the_reactive_systems_name() {
    let mut game = game();
    let mut frame = Feature::new("Frame")
        .with(Reactive::new(MyReactive))
        .with(Reactive::new(Renamed));
    assert_eq!(Reactive::new(MyReactive).name(), "MyReactive");
    let names: Vec<&str> = frame.iter().map(|system| system.name()).collect();
    assert_eq!(names, ["MyReactive", "Render"]);
    frame.initialize(&mut game);
    for i in 0..3 {
        if i == 1 {
            game.create_entity_with(pos(0.0)).unwrap();
        }
        frame.execute(&mut game);
        frame.cleanup(&mut game);
    }
    let timings = frame.timings();
    for name in ["MyReactive", "Render"] {
        let system = timings.get(name).unwrap();
        assert_eq!(system.execute().runs(), 3, "{name}: every frame, run or not");
        assert_eq!(system.cleanup().runs(), 3, "{name}");
        assert!(system.feature().is_none());
    }
    assert!(timings.to_string().contains("MyReactive"));
    check(&game);
}

#[test]
fn reset_is_refused_while_a_reactive_systems_collector_holds_entities_and_succeeds_after_clearing() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut frame = Feature::new("Frame").with(Reactive::new(probe));
    frame.initialize(&mut game);
    game.create_entity_with(pos(0.0)).unwrap();
    game.create_entity_with(pos(1.0)).unwrap();

    assert_eq!(
        game.reset(),
        Err(Error::EntitiesRetained {
            context: "Game",
            count: 2
        })
    );
    assert_eq!(game.len(), 2, "a refused reset changes nothing");
    check(&game);

    frame.clear_reactive_systems(&mut game);
    game.reset().unwrap();
    assert_eq!(game.len(), 0);
    assert!(game.collector(record.collector()).unwrap().is_empty());

    let e = game.create_entity_with(pos(2.0)).unwrap();
    frame.execute(&mut game);
    assert_eq!(record.runs(), [vec![e]], "the reactive system works on after the reset");
    check(&game);
}

#[test]
fn a_panicking_execute_leaves_its_entities_retained_until_the_next_run_releases_them() {
    let mut game = game();
    let mut panics = true;
    let probe = Probe::added().on_execute(move |_, _, _| {
        if std::mem::take(&mut panics) {
            panic!("execute failed");
        }
    });
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let a = game.create_entity_with(pos(0.0)).unwrap();
    let doomed = game.create_entity_with(pos(1.0)).unwrap();

    assert_panics("execute failed", || reactive.execute(&mut game));
    assert_eq!(record.runs(), [vec![a, doomed]]);
    for e in [a, doomed] {
        assert_eq!(
            game.aerc().retain_count(e),
            Ok(1),
            "the system's retain (the collector is empty)"
        );
    }
    assert!(game.collector(record.collector()).unwrap().is_empty());
    check(&game);

    game.destroy_entity(doomed).unwrap();
    assert_eq!(game.aerc().is_enabled(doomed), Ok(false), "still held by the system");
    let spy = Spy::attach(&mut game);
    let b = game.create_entity_with(pos(2.0)).unwrap();
    spy.take();

    reactive.execute(&mut game);
    assert_eq!(record.runs(), [vec![b]]);
    assert_eq!(spy.take(), [format!("released {doomed}")]);
    assert_eq!(game.aerc().retain_count(a), Ok(0));
    assert_eq!(game.aerc().retain_count(b), Ok(0));
    assert_eq!(game.aerc().is_enabled(doomed), Err(stale(doomed)));
    check(&game);
}

#[test]
fn a_panicking_execute_is_released_by_the_next_run_even_when_nothing_changed() {
    let mut game = game();
    let probe = Probe::added().on_execute(|_, _, _| panic!("execute failed"));
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let a = game.create_entity_with(pos(0.0)).unwrap();
    assert_panics("execute failed", || reactive.execute(&mut game));
    assert_eq!(game.aerc().retain_count(a), Ok(1));

    reactive.execute(&mut game); // nothing collected: execute is not called
    assert_eq!(game.aerc().retain_count(a), Ok(0));
    game.reset().unwrap();
    check(&game);
}

#[test]
fn a_panicking_filter_leaves_nothing_retained_after_the_next_run() {
    let mut game = game();
    let probe = Probe::added().filter(|game, e| {
        assert!(!game.has::<Frozen>(e), "filter failed");
        true
    });
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut game);
    let before = game.create_entity_with(pos(0.0)).unwrap();
    let failing = game.create_entity_with((pos(1.0), Frozen)).unwrap();
    let after = game.create_entity_with(pos(2.0)).unwrap();
    assert_panics("filter failed", || reactive.execute(&mut game));
    assert_eq!(record.runs(), Vec::<Vec<Entity>>::new());
    game.remove::<Frozen>(failing).unwrap();

    reactive.execute(&mut game);
    reactive.clear_reactive_systems(&mut game);
    for e in [before, failing, after] {
        assert_eq!(game.aerc().retain_count(e), Ok(0), "{e} is still retained");
    }
    game.reset().unwrap();
    check(&game);
}

/// Draws sprites of both contexts: Ui's collector first, then Game's.
struct Draw {
    runs: DrawRuns,
    counts: Arc<Mutex<Vec<usize>>>,
}

/// The entities of each `Draw` run.
type DrawRuns = Arc<Mutex<Vec<Vec<ContextEntity>>>>;

impl ReactiveSystem<Contexts> for Draw {
    fn trigger(&mut self, contexts: &mut Contexts) -> Vec<CollectorId> {
        let added = || Matcher::all_of::<Sprite>().added();
        vec![
            contexts.context_mut::<Ui>().add_collector(added()),
            contexts.context_mut::<Game>().add_collector(added()),
        ]
    }

    fn filter(&self, context: &Context, entity: Entity) -> bool {
        context.get::<Sprite>(entity).is_ok_and(|sprite| sprite.0 != 0)
    }

    fn execute(&mut self, contexts: &mut Contexts, entities: &[ContextEntity]) {
        self.runs.lock().unwrap().push(entities.to_vec());
        for held in entities {
            let context = contexts.by_id(held.context).unwrap();
            self.counts
                .lock()
                .unwrap()
                .push(context.aerc().retain_count(held.entity).unwrap());
        }
    }
}

/// A `Draw`, what it runs for, and the retain counts it sees.
fn draw() -> (Draw, DrawRuns, Arc<Mutex<Vec<usize>>>) {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let counts = Arc::new(Mutex::new(Vec::new()));
    let draw = Draw {
        runs: runs.clone(),
        counts: counts.clone(),
    };
    (draw, runs, counts)
}

fn check_all(contexts: &Contexts) {
    for context in contexts.iter() {
        check(context);
    }
}

#[test]
fn a_multi_reactive_system_executes_entities_of_both_contexts_in_trigger_order_and_releases_them() {
    let mut contexts = Contexts::new();
    let (draw, runs, counts) = draw();
    let mut multi = MultiReactive::new(draw);
    multi.initialize(&mut contexts);
    let game_id = contexts.context::<Game>().id();
    let ui_id = contexts.context::<Ui>().id();
    let contexts_of: Vec<ContextId> = multi.collectors().iter().map(CollectorId::context).collect();
    assert_eq!(contexts_of, [ui_id, game_id]);

    let g1 = contexts.context_mut::<Game>().create_entity_with(Sprite(1)).unwrap();
    let hidden = contexts.context_mut::<Game>().create_entity_with(Sprite(0)).unwrap();
    let u1 = contexts.context_mut::<Ui>().create_entity_with(Sprite(2)).unwrap();
    let doomed = contexts.context_mut::<Game>().create_entity_with(Sprite(3)).unwrap();
    contexts.context_mut::<Game>().destroy_entity(doomed).unwrap();
    let u2 = contexts.context_mut::<Ui>().create_entity_with(Sprite(4)).unwrap();
    let g2 = contexts.context_mut::<Game>().create_entity_with(Sprite(5)).unwrap();

    multi.execute(&mut contexts);
    let at = |context, entity| ContextEntity { context, entity };
    assert_eq!(
        std::mem::take(&mut *runs.lock().unwrap()),
        [vec![at(ui_id, u1), at(ui_id, u2), at(game_id, g1), at(game_id, g2)]]
    );
    assert_eq!(*counts.lock().unwrap(), [1, 1, 1, 1], "retained during execute");
    for e in [g1, hidden, g2] {
        assert_eq!(contexts.context::<Game>().aerc().retain_count(e), Ok(0));
    }
    for e in [u1, u2] {
        assert_eq!(contexts.context::<Ui>().aerc().retain_count(e), Ok(0));
    }
    assert!(
        matches!(
            contexts.context::<Game>().aerc().is_enabled(doomed),
            Err(Error::StaleEntity { .. })
        ),
        "released"
    );

    multi.execute(&mut contexts);
    assert!(runs.lock().unwrap().is_empty(), "nothing changed: no run");
    contexts.reset().unwrap();
    check_all(&contexts);
}

#[test]
fn the_switches_and_teardown_reach_a_multi_reactive_system_in_a_feature_of_contexts() {
    let mut contexts = Contexts::new();
    let (draw, runs, _) = draw();
    let mut frame = Feature::<Contexts>::new("Frame").with(MultiReactive::new(draw));
    frame.initialize(&mut contexts);
    let ui = contexts.context_mut::<Ui>().collectors().next().unwrap().id();
    let game = contexts.context_mut::<Game>().collectors().next().unwrap().id();
    let collectors = [ui, game];
    let u = contexts.context_mut::<Ui>().create_entity_with(Sprite(1)).unwrap();

    frame.deactivate_reactive_systems(&mut contexts);
    assert_eq!(contexts.context::<Ui>().aerc().retain_count(u), Ok(0));
    assert!(
        !contexts
            .context_mut::<Ui>()
            .collector(collectors[0])
            .unwrap()
            .is_active()
    );
    assert!(
        !contexts
            .context_mut::<Game>()
            .collector(collectors[1])
            .unwrap()
            .is_active()
    );
    contexts.context_mut::<Game>().create_entity_with(Sprite(2)).unwrap();
    frame.execute(&mut contexts);
    assert!(runs.lock().unwrap().is_empty());

    frame.activate_reactive_systems(&mut contexts);
    let g = contexts.context_mut::<Game>().create_entity_with(Sprite(3)).unwrap();
    contexts.context_mut::<Ui>().replace(u, Sprite(4)).unwrap();
    frame.clear_reactive_systems(&mut contexts);
    assert_eq!(contexts.context::<Game>().aerc().retain_count(g), Ok(0));
    contexts.context_mut::<Ui>().replace(u, Sprite(5)).unwrap();
    frame.execute(&mut contexts);
    let ui_id = contexts.context::<Ui>().id();
    assert_eq!(
        std::mem::take(&mut *runs.lock().unwrap()),
        [vec![ContextEntity {
            context: ui_id,
            entity: u
        }]]
    );

    contexts.context_mut::<Ui>().replace(u, Sprite(6)).unwrap();
    frame.teardown(&mut contexts);
    assert_eq!(contexts.context_mut::<Ui>().collectors().count(), 0);
    assert_eq!(contexts.context_mut::<Game>().collectors().count(), 0);
    assert_eq!(contexts.context::<Ui>().aerc().retain_count(u), Ok(0));
    check_all(&contexts);
}

#[test]
fn in_context_runs_a_reactive_system_on_its_context_inside_a_feature_of_contexts() {
    let mut contexts = Contexts::new();
    let probe = Probe::added();
    let record = probe.record();
    let mut frame = Feature::<Contexts>::new("Frame").with(InContext::new(Game, Reactive::new(probe)));
    frame.initialize(&mut contexts);
    assert_eq!(record.collector().context(), contexts.context::<Game>().id());
    let names: Vec<&str> = frame.iter().map(|system| system.name()).collect();
    assert_eq!(names, ["Probe"]);

    contexts.context_mut::<Ui>().create_entity_with(pos(0.0)).unwrap();
    let e = contexts.context_mut::<Game>().create_entity_with(pos(1.0)).unwrap();
    assert_eq!(
        contexts.reset().unwrap_err(),
        Error::EntitiesRetained {
            context: "Game",
            count: 1
        }
    );
    frame.execute(&mut contexts);
    frame.cleanup(&mut contexts);
    assert_eq!(record.runs(), [vec![e]]);
    assert_eq!(frame.timings().get("Probe").unwrap().execute().runs(), 1);

    contexts.context_mut::<Game>().replace(e, pos(2.0)).unwrap();
    frame.deactivate_reactive_systems(&mut contexts);
    assert_eq!(contexts.context::<Game>().aerc().retain_count(e), Ok(0));
    contexts.reset().unwrap();
    frame.teardown(&mut contexts);
    assert_eq!(contexts.context_mut::<Game>().collectors().count(), 0);
    check_all(&contexts);
}

// Regressions from the review of the first version.

#[test]
fn a_panicking_released_handler_during_a_clear_leaves_no_retain_behind() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let (a, b) = (
        game.create_entity_with(pos(0.0)).unwrap(),
        game.create_entity_with(pos(1.0)).unwrap(),
    );
    game.destroy_entity(a).unwrap();
    game.destroy_entity(b).unwrap();
    let panics = Arc::new(Mutex::new(1));
    let left = panics.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        if let ContextEvent::EntityReleased { .. } = event {
            let mut left = left.lock().unwrap();
            if *left > 0 {
                *left -= 1;
                panic!("handler fails once");
            }
        }
    });
    assert_panics("handler fails once", || game.collector_mut(id).map(|mut c| c.clear()));
    for e in [a, b] {
        assert!(
            matches!(game.aerc().is_enabled(e), Err(Error::StaleEntity { .. })),
            "{e}'s slot is free although the handler panicked"
        );
    }
    assert_eq!(game.aerc().retained_destroyed().count(), 0);
    game.reset().unwrap();
    check(&game);
}

#[test]
fn a_panicking_released_handler_after_execute_leaves_no_retain_behind() {
    let mut game = game();
    let mut reactive = Reactive::new(Probe::added().on_execute(|game, entities, _| {
        for &e in entities {
            game.destroy_entity(e).unwrap();
        }
    }));
    reactive.initialize(&mut game);
    let (a, b) = (
        game.create_entity_with(pos(0.0)).unwrap(),
        game.create_entity_with(pos(1.0)).unwrap(),
    );
    let armed = Arc::new(Mutex::new(false));
    let trigger = armed.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        if matches!(event, ContextEvent::EntityReleased { .. }) && std::mem::take(&mut *trigger.lock().unwrap()) {
            panic!("handler fails once");
        }
    });
    *armed.lock().unwrap() = true;
    assert_panics("handler fails once", || reactive.execute(&mut game));
    for e in [a, b] {
        assert!(
            matches!(game.aerc().is_enabled(e), Err(Error::StaleEntity { .. })),
            "{e} was released although a handler panicked"
        );
    }
    reactive.execute(&mut game);
    game.reset().unwrap();
    check(&game);
}

#[test]
fn teardown_and_switches_release_what_a_panicking_execute_left() {
    for switch in 0..4 {
        let mut game = game();
        let mut reactive = Reactive::new(Probe::added().on_execute(|_, _, _| panic!("execute fails")));
        reactive.initialize(&mut game);
        let e = game.create_entity_with(pos(0.0)).unwrap();
        assert_panics("execute fails", || reactive.execute(&mut game));
        assert_eq!(game.aerc().retain_count(e), Ok(1), "held by the system after the panic");
        match switch {
            0 => reactive.teardown(&mut game),
            1 => reactive.deactivate_reactive_systems(&mut game),
            2 => reactive.clear_reactive_systems(&mut game),
            _ => reactive.activate_reactive_systems(&mut game),
        }
        assert_eq!(game.aerc().retain_count(e), Ok(0), "switch {switch} released it");
        check(&game);
    }
}

#[test]
fn a_reactive_system_run_on_another_context_does_nothing_there_and_keeps_its_collector() {
    let (mut first, mut second) = (game(), game());
    let probe = Probe::added();
    let record = probe.record();
    let mut reactive = Reactive::new(probe);
    reactive.initialize(&mut first);
    let e = first.create_entity_with(pos(0.0)).unwrap();
    second.create_entity_with(pos(0.0)).unwrap();
    reactive.execute(&mut second);
    assert!(record.runs().is_empty());
    assert_eq!(
        second.collectors().count(),
        0,
        "no collector was made in the other context"
    );
    reactive.execute(&mut first);
    assert_eq!(record.runs(), [vec![e]]);
    reactive.teardown(&mut first);
    assert_eq!(first.collectors().count(), 0);
    first.reset().unwrap();
    check(&first);
}

/// Collects `Sprite` added in Game twice (two collectors) and in Ui; its
/// filter panics on a sprite of 0 in Ui.
struct Twice(Arc<Mutex<Vec<Vec<ContextEntity>>>>);

impl ReactiveSystem<Contexts> for Twice {
    fn trigger(&mut self, contexts: &mut Contexts) -> Vec<CollectorId> {
        let added = || Matcher::all_of::<Sprite>().added();
        vec![
            contexts.context_mut::<Game>().add_collector(added()),
            contexts.context_mut::<Ui>().add_collector(added()),
            contexts.context_mut::<Game>().add_collector(added()),
        ]
    }

    fn filter(&self, context: &Context, entity: Entity) -> bool {
        assert!(context.get::<Sprite>(entity).is_ok_and(|s| s.0 != 0), "filter fails");
        true
    }

    fn execute(&mut self, _contexts: &mut Contexts, entities: &[ContextEntity]) {
        self.0.lock().unwrap().push(entities.to_vec());
    }
}

#[test]
fn a_multi_reactive_system_executes_an_entity_two_collectors_gathered_once() {
    let mut contexts = Contexts::new();
    let runs = Arc::new(Mutex::new(Vec::new()));
    let mut multi = MultiReactive::new(Twice(runs.clone()));
    multi.initialize(&mut contexts);
    let e = contexts.context_mut::<Game>().create_entity_with(Sprite(1)).unwrap();
    multi.execute(&mut contexts);
    let game_id = contexts.context::<Game>().id();
    assert_eq!(
        *runs.lock().unwrap(),
        [vec![ContextEntity {
            context: game_id,
            entity: e
        }]]
    );
    assert_eq!(contexts.context::<Game>().aerc().retain_count(e), Ok(0));
    check_all(&contexts);
}

#[test]
fn a_multi_reactive_filter_panic_releases_in_the_right_context() {
    let mut contexts = Contexts::new();
    let runs = Arc::new(Mutex::new(Vec::new()));
    let mut multi = MultiReactive::new(Twice(runs.clone()));
    multi.initialize(&mut contexts);
    let me = Owner::new();
    let g = contexts.context_mut::<Game>().create_entity_with(Sprite(1)).unwrap();
    contexts.context_mut::<Game>().retain(g, me).unwrap();
    let u = contexts.context_mut::<Ui>().create_entity_with(Sprite(0)).unwrap();
    assert_eq!(g.index(), u.index(), "the same slot in both contexts");
    assert_panics("filter fails", || multi.execute(&mut contexts));
    contexts.context_mut::<Ui>().replace(u, Sprite(2)).unwrap();
    multi.execute(&mut contexts);
    multi.execute(&mut contexts);
    assert_eq!(
        contexts.context::<Game>().aerc().retain_count(g),
        Ok(1),
        "only my retain is left in Game"
    );
    assert_eq!(contexts.context::<Game>().aerc().owners(g), Ok(Some(&[me][..])));
    assert_eq!(contexts.context::<Ui>().aerc().retain_count(u), Ok(0));
    multi.teardown(&mut contexts);
    contexts.context_mut::<Game>().release(g, me).unwrap();
    contexts.reset().unwrap();
    check_all(&contexts);
}

// ---------------------------------------------------------------- when collection starts

/// Creates an entity with a `Position` per value in `initialize`, and
/// notes them.
struct Fill {
    xs: Vec<f32>,
    made: Arc<Mutex<Vec<Entity>>>,
}

impl Fill {
    fn new(xs: &[f32]) -> (Self, Arc<Mutex<Vec<Entity>>>) {
        let made = Arc::new(Mutex::new(Vec::new()));
        (
            Fill {
                xs: xs.to_vec(),
                made: made.clone(),
            },
            made,
        )
    }
}

impl System for Fill {
    fn try_initialize(&mut self, game: &mut Context) -> SystemResult {
        for &x in &self.xs {
            let e = game.create_entity_with(pos(x))?;
            self.made.lock().unwrap().push(e);
        }
        Ok(())
    }
}

#[test]
fn a_reactive_system_sees_what_a_system_initialized_before_it_created() {
    let mut game = game();
    let (fill, made) = Fill::new(&[1.0, 2.0]);
    let probe = Probe::added();
    let record = probe.record();
    // Entitas order: the board is filled first, the renderer comes after.
    let mut frame = Feature::new("Game").with(fill).with(Reactive::new(probe));
    frame.initialize(&mut game);
    frame.execute(&mut game);
    let made = made.lock().unwrap().clone();
    assert_eq!(made.len(), 2);
    assert_eq!(record.runs(), [made]);
    check(&game);
}

#[test]
fn collectors_of_nested_features_exist_before_any_system_is_initialized() {
    let mut game = game();
    let (fill, made) = Fill::new(&[1.0]);
    let (early, late) = (Probe::added(), Probe::added());
    let (early_record, late_record) = (early.record(), late.record());
    let mut frame = Systems::new()
        .with(Feature::new("Render").with(Reactive::new(early)))
        .with(Feature::new("Board").with(fill))
        .with(Systems::new().with(Reactive::new(late)));
    frame.initialize(&mut game);
    frame.execute(&mut game);
    let made = made.lock().unwrap().clone();
    assert_eq!(early_record.runs(), std::slice::from_ref(&made));
    assert_eq!(late_record.runs(), [made]);
    check(&game);
}

#[test]
fn create_collectors_makes_the_collector_once() {
    let mut game = game();
    let mut render = Reactive::new(Probe::added());
    assert_eq!(render.collector(), None);
    render.create_collectors(&mut game);
    let id = render.collector().expect("made");
    render.create_collectors(&mut game);
    render.initialize(&mut game);
    assert_eq!(render.collector(), Some(id));
    assert_eq!(game.collectors().count(), 1);
}

#[test]
fn a_reactive_system_made_in_its_context_collects_from_construction() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let render = Reactive::in_context(&mut game, probe);
    // Made before the system is in a feature, or initialized.
    let e = game.create_entity_with(pos(1.0)).unwrap();
    let mut frame = Feature::new("Game").with(render);
    frame.initialize(&mut game);
    frame.execute(&mut game);
    assert_eq!(record.runs(), [vec![e]]);
    assert_eq!(game.collectors().count(), 1);
    check(&game);
}

#[test]
fn a_bare_reactive_system_still_makes_its_collector_at_initialize() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut render = Reactive::new(probe);
    game.create_entity_with(pos(0.0)).unwrap(); // before the collector: not collected
    render.initialize(&mut game);
    let e = game.create_entity_with(pos(1.0)).unwrap();
    render.execute(&mut game);
    assert_eq!(record.runs(), [vec![e]]);
}

#[test]
fn with_in_runs_one_context_systems_in_a_feature_of_contexts_collecting_from_initialize() {
    let mut contexts = Contexts::new();
    let (fill, made) = Fill::new(&[3.0]);
    let probe = Probe::added();
    let record = probe.record();
    let mut frame = Feature::new("Frame")
        .with_in(Game, fill)
        .with_in(Game, Reactive::new(probe));
    let mut nested = Systems::<Contexts>::new();
    nested.add_in(Ui, Fill::new(&[4.0]).0);
    frame.add(nested);
    frame.try_initialize(&mut contexts).unwrap();
    assert_eq!(contexts.context::<Ui>().len(), 1);
    frame.try_execute(&mut contexts).unwrap();
    assert_eq!(record.runs(), [made.lock().unwrap().clone()]);
    assert_eq!(record.collector().context(), contexts.context::<Game>().id());
    assert_eq!(
        frame.iter().map(|system| system.name()).collect::<Vec<_>>(),
        ["Fill", "Probe", "Systems"]
    );
    check_all(&contexts);
}

/// Adds a `Sprite` to one entity of each context in `initialize`.
struct Paint;
impl System<Contexts> for Paint {
    fn try_initialize(&mut self, contexts: &mut Contexts) -> SystemResult {
        let (game, ui) = contexts.get_many_mut::<(Game, Ui)>()?;
        game.create_entity_with(Sprite(1))?;
        ui.create_entity_with(Sprite(2))?;
        Ok(())
    }
}

#[test]
fn a_multi_reactive_system_sees_what_a_system_initialized_before_it_created() {
    let mut contexts = Contexts::new();
    let (draw, runs, _) = draw();
    let mut frame = Feature::<Contexts>::new("Frame")
        .with(Paint)
        .with(MultiReactive::new(draw));
    frame.try_initialize(&mut contexts).unwrap();
    frame.try_execute(&mut contexts).unwrap();
    let runs = runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].len(), 2, "{runs:?}");
    check_all(&contexts);
}

#[test]
fn a_multi_reactive_system_made_in_its_contexts_collects_from_construction() {
    let mut contexts = Contexts::new();
    let (draw, runs, _) = draw();
    let multi = MultiReactive::in_contexts(&mut contexts, draw);
    assert_eq!(multi.collectors().len(), 2);
    let e = contexts.context_mut::<Game>().create_entity_with(Sprite(5)).unwrap();
    let mut frame = Feature::<Contexts>::new("Frame").with(multi);
    frame.initialize(&mut contexts);
    frame.execute(&mut contexts);
    let game = contexts.context::<Game>().id();
    assert_eq!(
        *runs.lock().unwrap(),
        [vec![ContextEntity {
            context: game,
            entity: e
        }]]
    );
}

// ---------------------------------------------------------------- fallible reactive systems

/// Fails on its first run (after adding `Frozen` to the first entity), then
/// records what it runs for.
struct Freeze {
    runs: Arc<Mutex<Vec<Vec<Entity>>>>,
    failed: bool,
}

impl ReactiveSystem for Freeze {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Position>().added())
    }

    fn try_execute(&mut self, game: &mut Context, entities: &[Entity]) -> SystemResult {
        self.runs.lock().unwrap().push(entities.to_vec());
        if !self.failed {
            self.failed = true;
            game.add(entities[0], Frozen)?;
            game.add(entities[0], Frozen)?; // fails: already there
        }
        Ok(())
    }
}

#[test]
fn a_failing_reactive_system_reports_its_name_and_releases_what_it_held() {
    let mut game = game();
    let runs = Arc::new(Mutex::new(Vec::new()));
    let freeze = Freeze {
        runs: runs.clone(),
        failed: false,
    };
    let mut frame = Feature::new("Game").with(Reactive::new(freeze));
    frame.try_initialize(&mut game).unwrap();
    let a = game.create_entity_with(pos(1.0)).unwrap();
    let b = game.create_entity_with(pos(2.0)).unwrap();

    let failure = frame.try_execute(&mut game).unwrap_err();
    assert_eq!(failure.system(), "Freeze");
    assert_eq!(failure.phase(), reactecs::system::Phase::Execute);
    assert_eq!(failure.features(), ["Game"]);
    assert!(matches!(
        failure.error().downcast_ref::<Error>(),
        Some(Error::ComponentAlreadyPresent {
            component: "Frozen",
            ..
        })
    ));
    // The first add took effect, the second changed nothing; nothing is held.
    assert!(game.has::<Frozen>(a));
    assert_eq!(
        (game.aerc().retain_count(a), game.aerc().retain_count(b)),
        (Ok(0), Ok(0))
    );
    check(&game);

    // The failed run's entities are not collected again; new changes are.
    frame.try_execute(&mut game).unwrap();
    game.replace(b, pos(3.0)).unwrap();
    frame.try_execute(&mut game).unwrap();
    assert_eq!(*runs.lock().unwrap(), [vec![a, b], vec![b]]);
    check(&game);
}

#[test]
#[should_panic(expected = "system `Freeze` failed in `execute`")]
fn the_plain_execute_of_a_failing_reactive_system_panics_with_its_error() {
    let mut game = game();
    let mut freeze = Reactive::new(Freeze {
        runs: Arc::default(),
        failed: false,
    });
    freeze.initialize(&mut game);
    game.create_entity_with(pos(1.0)).unwrap();
    freeze.execute(&mut game);
}

#[test]
fn a_reactive_system_whose_collector_was_removed_fails_its_run_then_makes_a_new_one() {
    let mut game = game();
    let probe = Probe::added();
    let record = probe.record();
    let mut system = Reactive::new(probe);
    system.initialize(&mut game);
    let first = record.collector();
    let e = game.create_entity_with(pos(1.0)).unwrap();
    game.collector_mut(first).unwrap().remove();
    let failed = System::try_execute(&mut system, &mut game).expect_err("its collector is gone");
    assert_eq!(
        failed.downcast_ref::<Error>(),
        Some(&Error::UnknownCollector {
            context: "Game",
            collector: first,
        }),
        "{failed}"
    );
    assert!(record.runs().is_empty(), "nothing executed");
    // The next run makes a new collector, which sees what happens from then.
    System::try_execute(&mut system, &mut game).unwrap();
    assert_ne!(record.collector(), first);
    game.replace(e, pos(2.0)).unwrap();
    System::try_execute(&mut system, &mut game).unwrap();
    assert_eq!(record.runs(), [vec![e]]);
    check(&game);
}

#[test]
fn a_multi_reactive_system_with_a_removed_collector_runs_the_others_and_fails() {
    let mut contexts = Contexts::new();
    let (draw, runs, _) = draw();
    let mut multi = MultiReactive::new(draw);
    multi.initialize(&mut contexts);
    // `Draw` makes Ui's collector first, then Game's.
    let drawn_ui = multi.collectors()[0];
    let game_entity = contexts.context_mut::<Game>().create_entity_with(Sprite(1)).unwrap();
    contexts.context_mut::<Ui>().collector_mut(drawn_ui).unwrap().remove();
    let failed = System::try_execute(&mut multi, &mut contexts).expect_err("a collector is gone");
    assert!(
        matches!(failed.downcast_ref::<Error>(), Some(Error::UnknownCollector { .. })),
        "{failed}"
    );
    let game_id = contexts.context::<Game>().id();
    assert_eq!(
        *runs.lock().unwrap(),
        [vec![ContextEntity {
            context: game_id,
            entity: game_entity
        }]],
        "the other collector's entities were executed"
    );
    check_all(&contexts);
}
