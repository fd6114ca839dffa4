//! Groups: caching, live membership through every context operation, group
//! events (what fires, with which data, in which order), `single_entity`,
//! foreign ids, deterministic order, the shared entity list (kept current
//! through every kind of change, in its documented order), `modify_each`.

use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use reactecs::SubscriptionId;
use reactecs::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(f32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(f32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Frozen;

reactecs::component!(Position, Velocity, Health, Frozen);

/// A flag (a bit per entity: nothing moves).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Burning;

/// A sparse component (kept out of archetypes).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Heat(u32);

reactecs::component!(flag Burning, sparse Heat);

/// Event lines shared by every handler of a test, in delivery order.
type Log = Arc<Mutex<Vec<String>>>;

fn new_log() -> Log {
    Log::default()
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn describe_group(label: &str, event: &GroupEvent<'_>) -> String {
    match event {
        GroupEvent::Added { entity, .. } => format!("{label} added {}", entity.entity()),
        GroupEvent::Removed { entity, removed, .. } => format!("{label} removed {} {removed:?}", entity.entity()),
        GroupEvent::Updated { entity, old, new, .. } => format!("{label} updated {entity} {old:?} -> {new:?}"),
        other => format!("{label} other {other:?}"),
    }
}

fn describe_context(event: &ContextEvent<'_>) -> String {
    match event {
        ContextEvent::EntityCreated { entity } => format!("ctx created {entity}"),
        ContextEvent::EntityWillBeDestroyed { entity } => format!("ctx will destroy {}", entity.entity()),
        ContextEvent::EntityDestroyed { entity } => format!("ctx destroyed {entity}"),
        ContextEvent::EntityReleased { entity } => format!("ctx released {entity}"),
        ContextEvent::ComponentAdded { entity, component } => format!("ctx added {entity} {component:?}"),
        ContextEvent::ComponentRemoved { entity, component } => format!("ctx removed {entity} {component:?}"),
        ContextEvent::ComponentReplaced { entity, old, new } => format!("ctx replaced {entity} {old:?} -> {new:?}"),
        ContextEvent::GroupCreated { group, matcher } => format!("ctx group created {group} {matcher}"),
        other => format!("ctx other {other:?}"),
    }
}

/// Logs group `id`'s events as `label ...` lines.
fn watch_group(game: &mut Context, id: GroupId, label: &'static str, log: &Log) -> SubscriptionId {
    let sink = log.clone();
    game.subscribe_group(id, move |event: &GroupEvent<'_>| {
        assert_eq!(event.group(), id, "an event of another group");
        sink.lock().unwrap().push(describe_group(label, event));
    })
    .unwrap()
}

/// Logs the context's events as `ctx ...` lines.
fn watch_context(game: &mut Context, log: &Log) -> SubscriptionId {
    let sink = log.clone();
    game.subscribe(move |event: &ContextEvent<'_>| sink.lock().unwrap().push(describe_context(event)))
}

fn check(game: &Context) {
    if let Err(broken) = game.check_invariants() {
        panic!("invariant broken: {broken}");
    }
}

fn members(game: &Context, id: GroupId) -> Vec<Entity> {
    game.group(id).unwrap().iter().collect()
}

#[test]
fn equal_matchers_share_one_group_and_group_created_fires_once() {
    let mut game = Context::new();
    let log = new_log();
    watch_context(&mut game, &log);
    let a = game.add_group(Matcher::all_of::<(Position, Velocity)>().none_of::<Frozen>());
    let b = game.add_group(Matcher::none_of::<Frozen>().all_of::<(Velocity, Position)>());
    let c = game.add_group(Matcher::all_of::<Velocity>().all_of::<Position>().none_of::<Frozen>());
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(game.groups().count(), 1);
    assert_eq!(
        take(&log),
        [format!(
            "ctx group created {a} AllOf(Position, Velocity).NoneOf(Frozen)"
        )]
    );

    let other = game.add_group(Matcher::all_of::<Position>());
    assert_ne!(other, a);
    assert_eq!(take(&log), [format!("ctx group created {other} AllOf(Position)")]);
    assert_eq!(game.groups().map(|g| g.id()).collect::<Vec<_>>(), [a, other]);
    check(&game);
}

#[test]
fn group_reports_its_matcher_and_displays_its_count() {
    let mut game = Context::new();
    game.create_entities_with([Position(1.0), Position(2.0)]).unwrap();
    game.create_entity_with(Velocity(1.0)).unwrap();
    let id = game.add_group(Matcher::all_of::<Position>());
    let group = game.group(id).unwrap();
    assert_eq!(group.matcher(), &Matcher::all_of::<Position>());
    assert_eq!(group.to_string(), "Group(AllOf(Position)): 2 entities");
    assert_eq!(group.id(), id);
}

#[test]
fn a_group_created_after_entities_exist_contains_them() {
    let mut game = Context::new();
    let a = game.create_entity_with((Position(1.0), Velocity(1.0))).unwrap();
    let b = game
        .create_entity_with((Position(2.0), Velocity(2.0), Health(2)))
        .unwrap();
    let still = game.create_entity_with(Position(3.0)).unwrap();
    let bare = game.create_entity();
    let id = game.add_group(Matcher::all_of::<(Position, Velocity)>());
    let group = game.group(id).unwrap();
    assert_eq!(group.len(), 2);
    assert!(!group.is_empty());
    assert!(group.contains(a) && group.contains(b));
    assert!(!group.contains(still) && !group.contains(bare));
    let mut listed: Vec<Entity> = group.iter().collect();
    listed.sort();
    let mut expected = vec![a, b];
    expected.sort();
    assert_eq!(listed, expected);
    check(&game);
}

#[test]
fn a_group_created_before_sees_entities_arrive() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Position>());
    assert!(game.group(id).unwrap().is_empty());
    let log = new_log();
    watch_group(&mut game, id, "pos", &log);

    let a = game.create_entity_with(Position(1.0)).unwrap();
    let b = game.create_entity_with((Velocity(0.0), Position(2.0))).unwrap();
    let other = game.create_entity_with(Velocity(0.0)).unwrap();
    let group = game.group(id).unwrap();
    assert_eq!(group.len(), 2);
    assert!(group.contains(a) && group.contains(b) && !group.contains(other));
    assert_eq!(take(&log), [format!("pos added {a}"), format!("pos added {b}")]);
    check(&game);
}

#[test]
fn add_makes_an_entity_join_a_group() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<(Position, Velocity)>());
    let log = new_log();
    watch_group(&mut game, id, "movers", &log);
    let e = game.create_entity_with(Position(0.0)).unwrap();
    assert!(!game.group(id).unwrap().contains(e));
    assert!(take(&log).is_empty());

    game.add(e, Velocity(1.0)).unwrap();
    let group = game.group(id).unwrap();
    assert!(group.contains(e));
    assert_eq!(group.len(), 1);
    assert_eq!(take(&log), [format!("movers added {e}")]);

    // Adding an unrelated component keeps it a member, with no event.
    game.add(e, Health(1)).unwrap();
    assert!(game.group(id).unwrap().contains(e));
    assert!(take(&log).is_empty());
    check(&game);
}

#[test]
fn remove_makes_an_entity_leave_a_group_and_removed_carries_the_value() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let e = game.create_entity_with((Health(7), Position(0.0))).unwrap();
    /// Per Removed event: the removed value, `component()`, whether the view has a Health.
    type Seen = Vec<(Option<u32>, Option<u32>, bool)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let sink = seen.clone();
    game.subscribe_group(id, move |event: &GroupEvent<'_>| {
        if let GroupEvent::Removed { entity, removed, .. } = event {
            sink.lock().unwrap().push((
                removed.and_then(|r| r.get::<Health>()).map(|h| h.0),
                event.component::<Health>().map(|h| h.0),
                entity.has::<Health>(),
            ));
        }
    })
    .unwrap();

    game.remove::<Health>(e).unwrap();
    assert!(!game.group(id).unwrap().contains(e));
    assert!(game.group(id).unwrap().is_empty());
    // The removed value is carried; the entity view no longer has it.
    assert_eq!(*seen.lock().unwrap(), [(Some(7), Some(7), false)]);
    check(&game);
}

#[test]
fn take_makes_an_entity_leave_a_group_and_returns_the_value() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::any_of::<(Health, Velocity)>());
    let log = new_log();
    watch_group(&mut game, id, "g", &log);
    let e = game.create_entity_with((Health(3), Velocity(1.0))).unwrap();
    take(&log);

    // Still has Velocity: stays a member, no event.
    assert_eq!(game.take::<Health>(e).unwrap(), Health(3));
    assert!(game.group(id).unwrap().contains(e));
    assert!(take(&log).is_empty());

    assert_eq!(game.take::<Velocity>(e).unwrap(), Velocity(1.0));
    assert!(!game.group(id).unwrap().contains(e));
    assert_eq!(take(&log), [format!("g removed {e} Some(Velocity(1.0))")]);
    check(&game);
}

#[test]
fn replace_of_a_present_component_keeps_membership_and_fires_updated_with_old_and_new() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let e = game.create_entity_with(Health(10)).unwrap();
    let log = new_log();
    watch_group(&mut game, id, "living", &log);
    let typed: Arc<Mutex<Vec<u32>>> = Arc::default();
    let sink = typed.clone();
    game.subscribe_group(id, move |event: &GroupEvent<'_>| {
        if let Some(h) = event.component::<Health>() {
            sink.lock().unwrap().push(h.0);
        }
        assert!(event.component::<Position>().is_none());
    })
    .unwrap();

    game.replace(e, Health(4)).unwrap();
    let group = game.group(id).unwrap();
    assert!(group.contains(e));
    assert_eq!(group.len(), 1);
    assert_eq!(take(&log), [format!("living updated {e} Health(10) -> Health(4)")]);
    assert_eq!(*typed.lock().unwrap(), [4], "component() of Updated is the new value");
    assert_eq!(game.get::<Health>(e).unwrap(), &Health(4));
    check(&game);
}

#[test]
fn replace_of_an_absent_component_is_an_add() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let log = new_log();
    watch_group(&mut game, id, "living", &log);
    let e = game.create_entity_with(Position(0.0)).unwrap();
    watch_context(&mut game, &log);

    game.replace(e, Health(5)).unwrap();
    assert!(game.group(id).unwrap().contains(e));
    assert_eq!(
        take(&log),
        [format!("living added {e}"), format!("ctx added {e} Health(5)")]
    );
    check(&game);
}

#[test]
fn destroy_fires_removed_with_the_components_still_readable() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let e = game.create_entity_with((Health(9), Position(3.0))).unwrap();
    let keep = game.create_entity_with(Health(1)).unwrap();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    game.subscribe_group(id, move |event: &GroupEvent<'_>| {
        if let GroupEvent::Removed { entity, removed, .. } = event {
            sink.lock().unwrap().push(format!(
                "{} {:?} {:?} {}",
                entity.entity(),
                entity.get::<Health>(),
                entity.get::<Position>(),
                removed.is_none()
            ));
        }
    })
    .unwrap();

    game.destroy_entity(e).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [format!("{e} Some(Health(9)) Some(Position(3.0)) true")]
    );
    let group = game.group(id).unwrap();
    assert_eq!(group.len(), 1);
    assert!(!group.contains(e));
    assert!(group.contains(keep));
    check(&game);
}

#[test]
fn destroy_fires_will_be_destroyed_then_group_removed_then_component_removed_then_destroyed() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let e = game.create_entity_with(Health(2)).unwrap();
    let log = new_log();
    watch_group(&mut game, id, "living", &log);
    watch_context(&mut game, &log);
    game.destroy_entity(e).unwrap();
    assert_eq!(
        take(&log),
        [
            format!("ctx will destroy {e}"),
            format!("living removed {e} None"),
            format!("ctx removed {e} Health(2)"),
            format!("ctx destroyed {e}"),
            format!("ctx released {e}"),
        ]
    );
}

#[test]
fn create_entity_with_fires_created_then_group_added_then_component_added() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let log = new_log();
    watch_group(&mut game, id, "living", &log);
    watch_context(&mut game, &log);
    let e = game.create_entity_with((Health(1), Position(0.0))).unwrap();
    assert_eq!(
        take(&log),
        [
            format!("ctx created {e}"),
            format!("living added {e}"),
            format!("ctx added {e} Health(1)"),
            format!("ctx added {e} Position(0.0)"),
        ]
    );
}

#[test]
fn create_entity_joins_none_of_only_groups() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::none_of::<Frozen>());
    let log = new_log();
    watch_context(&mut game, &log);
    watch_group(&mut game, id, "free", &log);
    let e = game.create_entity();
    assert!(game.group(id).unwrap().contains(e));
    assert_eq!(take(&log), [format!("ctx created {e}"), format!("free added {e}")]);
    check(&game);
}

#[test]
fn destroy_all_entities_empties_every_group_with_removed_per_member() {
    let mut game = Context::new();
    let pos = game.add_group(Matcher::all_of::<Position>());
    let free = game.add_group(Matcher::none_of::<Frozen>());
    let a = game.create_entity_with(Position(1.0)).unwrap();
    let b = game.create_entity_with((Position(2.0), Frozen)).unwrap();
    let c = game.create_entity();
    let log = new_log();
    watch_group(&mut game, pos, "pos", &log);
    watch_group(&mut game, free, "free", &log);

    game.destroy_all_entities();
    assert!(game.group(pos).unwrap().is_empty());
    assert!(game.group(free).unwrap().is_empty());
    assert_eq!(game.group(pos).unwrap().iter().count(), 0);
    // Entities in `entities()` order, groups in creation order.
    assert_eq!(
        take(&log),
        [
            format!("pos removed {a} None"),
            format!("free removed {a} None"),
            format!("pos removed {b} None"),
            format!("free removed {c} None"),
        ]
    );
    check(&game);
}

#[test]
fn reset_keeps_groups_which_are_empty_and_still_live() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Position>());
    game.create_entities_with((0..10).map(|i| Position(i as f32))).unwrap();
    let log = new_log();
    watch_group(&mut game, id, "pos", &log);
    assert_eq!(game.group(id).unwrap().len(), 10);

    game.reset().unwrap();
    assert_eq!(take(&log).len(), 10, "one Removed per member");
    assert_eq!(game.groups().count(), 1, "the group is kept");
    let group = game.group(id).unwrap();
    assert!(group.is_empty());
    assert_eq!(group.iter().count(), 0);
    assert!(group.entities().is_empty());
    assert_eq!(game.add_group(Matcher::all_of::<Position>()), id);
    check(&game);

    // Still live, with its subscription kept.
    let e = game.create_entity_with(Position(1.0)).unwrap();
    assert_eq!(game.creation_index(e).unwrap(), 0);
    let group = game.group(id).unwrap();
    assert_eq!(group.len(), 1);
    assert_eq!(group.single_entity().unwrap(), Some(e));
    assert_eq!(&*group.entities(), [e]);
    assert_eq!(take(&log), [format!("pos added {e}")]);
    check(&game);
}

#[test]
fn adding_the_excluded_component_of_a_none_of_group_fires_removed_without_a_value() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Position>().none_of::<Frozen>());
    let e = game.create_entity_with(Position(0.0)).unwrap();
    let log = new_log();
    watch_group(&mut game, id, "movable", &log);
    let saw_frozen: Arc<Mutex<Vec<bool>>> = Arc::default();
    let sink = saw_frozen.clone();
    game.subscribe_group(id, move |event: &GroupEvent<'_>| {
        if let GroupEvent::Removed { entity, .. } = event {
            sink.lock().unwrap().push(entity.has::<Frozen>());
        }
    })
    .unwrap();

    game.add(e, Frozen).unwrap();
    assert!(!game.group(id).unwrap().contains(e));
    assert_eq!(take(&log), [format!("movable removed {e} None")]);
    assert_eq!(
        *saw_frozen.lock().unwrap(),
        [true],
        "the view shows the entity as it is now"
    );
    check(&game);
}

#[test]
fn removing_the_excluded_component_of_a_none_of_group_fires_added() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Position>().none_of::<Frozen>());
    let e = game.create_entity_with((Position(0.0), Frozen)).unwrap();
    assert!(!game.group(id).unwrap().contains(e));
    let log = new_log();
    watch_group(&mut game, id, "movable", &log);

    game.remove::<Frozen>(e).unwrap();
    assert!(game.group(id).unwrap().contains(e));
    assert_eq!(take(&log), [format!("movable added {e}")]);
    check(&game);
}

#[test]
fn replace_updates_watching_groups_in_creation_order_before_component_replaced() {
    let mut game = Context::new();
    let first = game.add_group(Matcher::all_of::<(Health, Position)>());
    let second = game.add_group(Matcher::all_of::<Health>());
    let e = game.create_entity_with((Health(1), Position(0.0))).unwrap();
    let log = new_log();
    // Subscribe the context first and the later group before the earlier one:
    // delivery must follow group creation order, not subscription order.
    watch_context(&mut game, &log);
    watch_group(&mut game, second, "second", &log);
    watch_group(&mut game, first, "first", &log);

    game.replace(e, Health(2)).unwrap();
    assert_eq!(
        take(&log),
        [
            format!("first updated {e} Health(1) -> Health(2)"),
            format!("second updated {e} Health(1) -> Health(2)"),
            format!("ctx replaced {e} Health(1) -> Health(2)"),
        ]
    );
}

#[test]
fn one_add_that_joins_one_group_and_leaves_another_delivers_both_and_counts_are_current() {
    let mut game = Context::new();
    let active = game.add_group(Matcher::all_of::<Position>().none_of::<Frozen>());
    let frozen = game.add_group(Matcher::all_of::<(Position, Frozen)>());
    let e = game.create_entity_with(Position(0.0)).unwrap();
    let _other = game.create_entity_with(Position(1.0)).unwrap();
    let log = new_log();
    watch_group(&mut game, frozen, "frozen", &log);
    watch_group(&mut game, active, "active", &log);
    assert_eq!(game.group(active).unwrap().len(), 2);
    assert_eq!(game.group(frozen).unwrap().len(), 0);

    game.add(e, Frozen).unwrap();
    assert_eq!(
        take(&log),
        [format!("active removed {e} None"), format!("frozen added {e}")],
        "both events, in group creation order"
    );
    assert_eq!(game.group(active).unwrap().len(), 1);
    assert_eq!(game.group(frozen).unwrap().len(), 1);
    assert_eq!(members(&game, frozen), [e]);
    assert!(!game.group(active).unwrap().contains(e));
    check(&game);

    // And back.
    game.remove::<Frozen>(e).unwrap();
    assert_eq!(
        take(&log),
        [format!("active added {e}"), format!("frozen removed {e} Some(Frozen)")]
    );
    assert_eq!(game.group(active).unwrap().len(), 2);
    assert_eq!(game.group(frozen).unwrap().len(), 0);
    check(&game);
}

#[test]
fn a_group_created_after_a_transition_was_used_sees_that_transition() {
    let mut game = Context::new();
    let a = game.create_entity_with(Position(0.0)).unwrap();
    let b = game.create_entity_with(Position(1.0)).unwrap();
    // Use the {Position} -> {Position, Frozen} transition (and back) before
    // the group exists.
    game.add(a, Frozen).unwrap();
    game.remove::<Frozen>(a).unwrap();

    let id = game.add_group(Matcher::all_of::<Frozen>());
    let log = new_log();
    watch_group(&mut game, id, "frozen", &log);
    game.add(b, Frozen).unwrap();
    assert_eq!(take(&log), [format!("frozen added {b}")]);
    assert_eq!(members(&game, id), [b]);
    check(&game);
    game.remove::<Frozen>(b).unwrap();
    assert_eq!(take(&log), [format!("frozen removed {b} Some(Frozen)")]);
    assert!(game.group(id).unwrap().is_empty());
    check(&game);
}

#[test]
fn replace_of_a_component_the_matcher_does_not_watch_fires_no_updated() {
    let mut game = Context::new();
    let pos = game.add_group(Matcher::all_of::<Position>());
    let not_frozen = game.add_group(Matcher::none_of::<Frozen>());
    let with_health = game.add_group(Matcher::any_of::<(Health, Velocity)>());
    let e = game.create_entity_with((Position(0.0), Health(1))).unwrap();
    let log = new_log();
    watch_group(&mut game, pos, "pos", &log);
    watch_group(&mut game, not_frozen, "free", &log);
    watch_group(&mut game, with_health, "any", &log);

    game.replace(e, Health(2)).unwrap();
    assert_eq!(
        take(&log),
        [format!("any updated {e} Health(1) -> Health(2)")],
        "only the group whose AllOf/AnyOf names Health hears of it"
    );
    game.replace(e, Position(1.0)).unwrap();
    assert_eq!(take(&log), [format!("pos updated {e} Position(0.0) -> Position(1.0)")]);
}

#[test]
fn single_entity_is_none_for_zero_the_entity_for_one_and_an_error_for_two() {
    let mut game = Context::with_name("Game");
    let id = game.add_group(Matcher::all_of::<Health>());
    assert_eq!(game.group(id).unwrap().single_entity(), Ok(None));

    let a = game.create_entity_with(Health(1)).unwrap();
    assert_eq!(game.group(id).unwrap().single_entity(), Ok(Some(a)));

    game.create_entity_with(Health(2)).unwrap();
    match game.group(id).unwrap().single_entity() {
        Err(Error::NotSingleEntity { context, group, count }) => {
            assert_eq!(context, "Game");
            assert_eq!(group, "AllOf(Health)");
            assert_eq!(count, 2);
        }
        other => panic!("expected NotSingleEntity, got {other:?}"),
    }
}

#[test]
fn a_group_id_from_another_context_is_an_unknown_group() {
    let mut game = Context::with_name("Game");
    let mut other = Context::with_name("Other");
    // Both contexts have a group at the same position.
    let mine = game.add_group(Matcher::all_of::<Health>());
    let foreign = other.add_group(Matcher::all_of::<Health>());
    assert_ne!(mine, foreign);

    let expected = Error::UnknownGroup {
        context: "Game",
        group: foreign,
    };
    assert_eq!(game.group(foreign).unwrap_err(), expected);
    assert_eq!(
        game.subscribe_group(foreign, |_: &GroupEvent<'_>| {}).unwrap_err(),
        expected
    );
    assert_eq!(
        game.modify_each::<Health, &Position>(foreign, |_, _| {}).unwrap_err(),
        expected
    );
    assert!(game.group(mine).is_ok());
    assert!(other.group(foreign).is_ok());
}

/// A fixed sequence of creations, changes, destroys and re-creations; returns
/// the group's order and the context's entity order as creation indices.
fn run_scripted_sequence() -> (Vec<u64>, Vec<u64>, Vec<u32>) {
    let mut game = Context::new();
    let id = game.add_group(Matcher::any_of::<(Position, Health)>());
    let mut alive = Vec::new();
    for i in 0..60u32 {
        let e = match i % 4 {
            0 => game.create_entity_with(Position(i as f32)).unwrap(),
            1 => game.create_entity_with((Health(i), Velocity(0.0))).unwrap(),
            2 => game.create_entity_with((Position(i as f32), Health(i))).unwrap(),
            _ => game.create_entity_with(Velocity(i as f32)).unwrap(),
        };
        alive.push(e);
    }
    for (n, &e) in alive.iter().enumerate() {
        match n % 5 {
            0 => game.destroy_entity(e).unwrap(),
            1 => game.replace(e, Health(n as u32)).unwrap(),
            2 if game.has::<Position>(e) => game.remove::<Position>(e).unwrap(),
            3 => game.add(e, Frozen).unwrap(),
            _ => {}
        }
    }
    for i in 0..15u32 {
        let e = game.create_entity_with((Health(i), Position(0.0))).unwrap();
        if i % 3 == 0 {
            game.destroy_entity(e).unwrap();
        }
    }
    check(&game);
    let group = game.group(id).unwrap();
    let order = group.iter().map(|e| game.creation_index(e).unwrap()).collect();
    let entities: Vec<Entity> = game.entities().collect();
    let context_order = entities.iter().map(|&e| game.creation_index(e).unwrap()).collect();
    // Slots, not handles: two contexts never share a handle's tag.
    let slots = group.entities().iter().map(|e| e.index()).collect();
    (order, context_order, slots)
}

#[test]
fn group_iteration_order_is_deterministic_for_the_same_operations() {
    // The order, stated: archetypes in creation order, rows in chunk order
    // (a removal moves the archetype's last row into the hole).
    let mut game = Context::new();
    let id = game.add_group(Matcher::any_of::<(Position, Health)>());
    let a = game.create_entity_with(Position(0.0)).unwrap(); // archetype 1: P
    let b = game.create_entity_with((Health(1), Velocity(0.0))).unwrap(); // 2: HV
    let c = game.create_entity_with((Position(2.0), Health(2))).unwrap(); // 3: PH
    let d = game.create_entity_with(Position(3.0)).unwrap(); // P, row 1
    let e = game.create_entity_with(Position(4.0)).unwrap(); // P, row 2
    game.destroy_entity(a).unwrap(); // P: e takes row 0, then d
    game.remove::<Position>(c).unwrap(); // 4: H
    game.add(d, Velocity(3.0)).unwrap(); // 5: PV; P is left with e
    let f = game.create_entity_with((Position(5.0), Health(5))).unwrap(); // PH again
    let order: Vec<Entity> = game.group(id).unwrap().iter().collect();
    assert_eq!(order, [e, b, f, c, d]);
    assert_eq!(&*game.group(id).unwrap().entities(), order);
    check(&game);

    // A longer script, run twice, gives the same order both times.
    let (group_a, context_a, list_a) = run_scripted_sequence();
    let (group_b, context_b, list_b) = run_scripted_sequence();
    assert!(!group_a.is_empty());
    assert_eq!(group_a, group_b);
    assert_eq!(context_a, context_b);
    assert_eq!(list_a, list_b);
}

#[test]
fn entities_list_is_handed_out_again_while_nothing_changed() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Position>());
    game.create_entities_with((0..5).map(|i| Position(i as f32))).unwrap();
    let group = game.group(id).unwrap();
    let first = group.entities();
    let second = group.entities();
    assert_eq!(first.len(), 5);
    assert!(std::ptr::eq(first.as_ptr(), second.as_ptr()), "the same shared list");
    assert_eq!(first, second);
    assert_eq!(&*first, group.iter().collect::<Vec<_>>());
    // A fresh Group view of the same id shares it too.
    let third = game.group(id).unwrap().entities();
    assert!(std::ptr::eq(first.as_ptr(), third.as_ptr()));
}

#[test]
fn entities_list_is_rebuilt_after_the_group_changes() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Position>());
    let a = game.create_entity_with(Position(0.0)).unwrap();
    let b = game.create_entity_with(Position(1.0)).unwrap();
    let before = game.group(id).unwrap().entities();
    assert_eq!(&*before, [a, b]);

    let c = game.create_entity_with(Position(2.0)).unwrap();
    let after = game.group(id).unwrap().entities();
    assert_eq!(&*after, [a, b, c]);
    assert!(!std::ptr::eq(before.as_ptr(), after.as_ptr()));
    assert_eq!(&*before, [a, b], "a held list is a snapshot");

    drop(before);
    drop(after);
    game.remove::<Position>(a).unwrap();
    let list = game.group(id).unwrap().entities();
    let mut sorted = list.to_vec();
    sorted.sort();
    let mut expected = vec![b, c];
    expected.sort();
    assert_eq!(sorted, expected);
    assert_eq!(&*list, members(&game, id));
    check(&game);
}

#[test]
fn entities_list_lets_entities_be_destroyed_while_iterating_it() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let all = game.create_entities_with((0..20).map(Health)).unwrap();
    let list = game.group(id).unwrap().entities();
    for &e in &list {
        if game.get::<Health>(e).unwrap().0.is_multiple_of(2) {
            game.destroy_entity(e).unwrap();
        } else {
            game.replace(e, Health(100)).unwrap();
        }
    }
    assert_eq!(list.len(), 20, "the list is unchanged by the destroys");
    let group = game.group(id).unwrap();
    assert_eq!(group.len(), 10);
    for (i, &e) in all.iter().enumerate() {
        assert_eq!(group.contains(e), i % 2 == 1);
    }
    assert!(group.iter().all(|e| game.get::<Health>(e).unwrap().0 == 100));
    check(&game);
}

#[test]
fn unsubscribing_a_group_subscription_stops_its_events() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let log = new_log();
    let first = watch_group(&mut game, id, "first", &log);
    watch_group(&mut game, id, "second", &log);
    let a = game.create_entity_with(Health(1)).unwrap();
    assert_eq!(take(&log), [format!("first added {a}"), format!("second added {a}")]);

    game.unsubscribe(first).unwrap();
    let b = game.create_entity_with(Health(2)).unwrap();
    game.replace(b, Health(3)).unwrap();
    game.destroy_entity(a).unwrap();
    assert_eq!(
        take(&log),
        [
            format!("second added {b}"),
            format!("second updated {b} Health(2) -> Health(3)"),
            format!("second removed {a} None"),
        ]
    );
    assert!(matches!(
        game.unsubscribe(first),
        Err(Error::UnknownSubscription { .. })
    ));
}

#[test]
fn modify_each_fires_updated_per_visited_entity_and_returns_the_count() {
    let mut game = Context::new();
    let movers = game.add_group(Matcher::all_of::<(Position, Velocity)>());
    let placed = game.add_group(Matcher::all_of::<Position>());
    let moving = game.add_group(Matcher::all_of::<Velocity>());
    let a = game.create_entity_with((Position(0.0), Velocity(1.0))).unwrap();
    let b = game
        .create_entity_with((Position(10.0), Velocity(2.0), Health(1)))
        .unwrap();
    let still = game.create_entity_with(Position(5.0)).unwrap();
    let log = new_log();
    watch_group(&mut game, movers, "movers", &log);
    watch_group(&mut game, placed, "placed", &log);
    watch_group(&mut game, moving, "moving", &log);
    watch_context(&mut game, &log);

    let visited = game
        .modify_each::<Position, &Velocity>(movers, |p, v| p.0 += v.0)
        .unwrap();
    assert_eq!(visited, 2);
    assert_eq!(game.get::<Position>(a).unwrap(), &Position(1.0));
    assert_eq!(game.get::<Position>(b).unwrap(), &Position(12.0));
    assert_eq!(game.get::<Position>(still).unwrap(), &Position(5.0));
    // Per entity, as `replace`: every group watching Position (not `moving`),
    // in creation order, then ComponentReplaced. Archetypes in creation order.
    assert_eq!(
        take(&log),
        [
            format!("movers updated {a} Position(0.0) -> Position(1.0)"),
            format!("placed updated {a} Position(0.0) -> Position(1.0)"),
            format!("ctx replaced {a} Position(0.0) -> Position(1.0)"),
            format!("movers updated {b} Position(10.0) -> Position(12.0)"),
            format!("placed updated {b} Position(10.0) -> Position(12.0)"),
            format!("ctx replaced {b} Position(10.0) -> Position(12.0)"),
        ]
    );
    check(&game);
}

#[test]
fn modify_each_visits_only_members_with_the_queried_components_and_fires_without_context_subscribers() {
    let mut game = Context::new();
    let placed = game.add_group(Matcher::all_of::<Position>());
    let a = game.create_entity_with((Position(0.0), Velocity(3.0))).unwrap();
    let _still = game.create_entity_with(Position(5.0)).unwrap();
    let _lone = game.create_entity_with(Velocity(1.0)).unwrap();
    let log = new_log();
    watch_group(&mut game, placed, "placed", &log);

    let visited = game
        .modify_each::<Position, &Velocity>(placed, |p, v| p.0 += v.0)
        .unwrap();
    assert_eq!(visited, 1, "only the member that also has a Velocity");
    assert_eq!(
        take(&log),
        [format!("placed updated {a} Position(0.0) -> Position(3.0)")]
    );
    assert_eq!(game.group(placed).unwrap().len(), 2, "membership is unchanged");
    check(&game);
}

#[test]
fn a_group_over_many_chunks_counts_and_iterates_every_member_after_removing_every_third() {
    const N: usize = 5_000;
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<(Position, Velocity)>());
    let all = game
        .create_entities_with((0..N).map(|i| (Position(i as f32), Velocity(1.0))))
        .unwrap();
    assert!(game.storage_stats().chunks > 2, "the premise: several chunks");
    assert_eq!(game.group(id).unwrap().len(), N);
    assert_eq!(game.group(id).unwrap().iter().count(), N);

    for &e in all.iter().step_by(3) {
        game.remove::<Velocity>(e).unwrap();
    }
    let removed = N.div_ceil(3);
    check(&game);
    let group = game.group(id).unwrap();
    assert_eq!(group.len(), N - removed);
    assert_eq!(group.iter().count(), N - removed);
    assert_eq!(group.entities().len(), N - removed);
    for (i, &e) in all.iter().enumerate() {
        assert_eq!(group.contains(e), i % 3 != 0, "entity #{i}");
    }
    let mut listed: Vec<Entity> = group.iter().collect();
    listed.sort();
    listed.dedup();
    assert_eq!(listed.len(), N - removed, "no entity listed twice");
}

#[test]
fn a_group_iterates_with_for_over_archetypes_and_chunks() {
    let mut game = Context::new();
    // 3,000 rows of (Entity, Position) span three 16 KiB chunks.
    let n = if cfg!(miri) { 60 } else { 9_000 };
    let (mut only_position, mut with_velocity) = (Vec::new(), Vec::new());
    for i in 0..n {
        match i % 3 {
            0 => only_position.push(game.create_entity_with(Position(i as f32)).unwrap()),
            1 => with_velocity.push(game.create_entity_with((Position(i as f32), Velocity(1.0))).unwrap()),
            _ => drop(game.create_entity_with(Velocity(1.0)).unwrap()),
        };
    }
    if !cfg!(miri) {
        assert!(game.storage_stats().chunks >= 7, "{:?}", game.storage_stats());
    }
    let id = game.add_group(Matcher::all_of::<Position>());
    let group = game.group(id).unwrap();
    let mut seen = Vec::new();
    for e in &group {
        seen.push(e);
    }
    // The documented order: archetypes in creation order, rows in chunk order
    // (here, creation order, as nothing was removed).
    let expected: Vec<Entity> = only_position.iter().chain(&with_velocity).copied().collect();
    assert_eq!(seen, expected);
    assert_eq!(group.into_iter().collect::<Vec<_>>(), expected);
    let empty = game.add_group(Matcher::all_of::<Health>());
    assert_eq!(game.group(empty).unwrap().iter().count(), 0);
}

#[test]
fn entities_keeps_its_order_joiners_at_the_end_leavers_replaced_by_the_last() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Position>());
    let [a, b, c, d] = [0.0, 1.0, 2.0, 3.0].map(|x| game.create_entity_with(Position(x)).unwrap());
    // The first call: `iter()`'s order.
    assert_eq!(&*game.group(id).unwrap().entities(), [a, b, c, d]);
    game.destroy_entity(b).unwrap(); // d takes b's place
    assert_eq!(&*game.group(id).unwrap().entities(), [a, d, c]);
    let e = game.create_entity_with(Position(4.0)).unwrap(); // at the end
    assert_eq!(&*game.group(id).unwrap().entities(), [a, d, c, e]);
    // Moving between archetypes of the group keeps the place, though
    // `iter()` now meets `a` last (its new archetype comes later).
    game.add(a, Velocity(1.0)).unwrap();
    assert_eq!(&*game.group(id).unwrap().entities(), [a, d, c, e]);
    assert_eq!(members(&game, id), [e, d, c, a]);
    game.remove::<Position>(c).unwrap(); // e takes c's place
    game.add(c, Position(2.0)).unwrap(); // c joins again, at the end
    assert_eq!(&*game.group(id).unwrap().entities(), [a, d, e, c]);
    check(&game);
}

#[test]
fn entities_follows_flag_and_sparse_toggles_and_driven_groups() {
    let mut game = Context::new();
    let burning = game.add_group(Matcher::all_of::<Burning>());
    let cold = game.add_group(Matcher::all_of::<Position>().none_of::<Burning>());
    let hot = game.add_group(Matcher::any_of::<(Velocity, Heat)>());
    let [a, b, c] = [0.0, 1.0, 2.0].map(|x| game.create_entity_with(Position(x)).unwrap());
    for id in [burning, cold, hot] {
        game.group(id).unwrap().entities();
    }
    game.add(b, Burning).unwrap();
    game.add(a, Burning).unwrap();
    game.add(c, Heat(3)).unwrap();
    assert_eq!(&*game.group(burning).unwrap().entities(), [b, a]);
    assert_eq!(&*game.group(cold).unwrap().entities(), [c]);
    assert_eq!(&*game.group(hot).unwrap().entities(), [c]);
    game.remove::<Burning>(b).unwrap();
    game.add(c, Velocity(1.0)).unwrap(); // already hot: no change
    game.remove::<Heat>(c).unwrap(); // still hot through Velocity
    assert_eq!(&*game.group(burning).unwrap().entities(), [a]);
    assert_eq!(&*game.group(cold).unwrap().entities(), [c, b]);
    assert_eq!(&*game.group(hot).unwrap().entities(), [c]);
    game.remove::<Velocity>(c).unwrap();
    assert!(game.group(hot).unwrap().entities().is_empty());
    check(&game);
}

#[test]
fn entities_after_reset_and_destroy_all_is_empty_then_follows_new_entities() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Position>());
    game.create_entities_with((0..10).map(|i| Position(i as f32))).unwrap();
    assert_eq!(game.group(id).unwrap().entities().len(), 10);
    game.destroy_all_entities();
    assert!(game.group(id).unwrap().entities().is_empty());
    let kept = game.create_entities_with((0..3).map(|i| Position(i as f32))).unwrap();
    assert_eq!(&*game.group(id).unwrap().entities(), kept);
    game.reset().unwrap();
    assert!(game.group(id).unwrap().entities().is_empty());
    let e = game.create_entity_with(Position(1.0)).unwrap();
    assert_eq!(&*game.group(id).unwrap().entities(), [e]);
    check(&game);
}

#[test]
fn entities_is_kept_even_when_a_group_handler_panics() {
    let mut game = Context::new();
    // The panicking group comes first: its handler runs before the listed
    // group's turn.
    let loud = game.add_group(Matcher::all_of::<Health>());
    let listed = game.add_group(Matcher::all_of::<(Health, Position)>());
    game.subscribe_group(loud, |event: &GroupEvent<'_>| {
        if matches!(event, GroupEvent::Removed { .. }) {
            panic!("a handler panics");
        }
    })
    .unwrap();
    let [a, b] = [1, 2].map(|h| game.create_entity_with((Health(h), Position(0.0))).unwrap());
    assert_eq!(&*game.group(listed).unwrap().entities(), [a, b]);
    let destroyed = panic::catch_unwind(AssertUnwindSafe(|| game.destroy_entity(a)));
    assert!(destroyed.is_err(), "the handler's panic goes on");
    assert!(!game.is_alive(a));
    assert_eq!(&*game.group(listed).unwrap().entities(), [b]);
    check(&game);
}

#[test]
fn held_entity_lists_stay_as_they_were_while_the_group_changes() {
    let mut game = Context::new();
    let id = game.add_group(Matcher::all_of::<Health>());
    let all = game.create_entities_with((0..6).map(Health)).unwrap();
    let first = game.group(id).unwrap().entities();
    game.destroy_entity(all[0]).unwrap();
    // Asked again while `first` is alive: a new list; `first` unchanged.
    let second = game.group(id).unwrap().entities();
    assert_eq!(&*first, all);
    assert_eq!(&*second, [all[5], all[1], all[2], all[3], all[4]]);
    drop(first);
    let e = game.create_entity_with(Health(9)).unwrap();
    game.remove::<Health>(all[2]).unwrap();
    let third = game.group(id).unwrap().entities();
    assert_eq!(&*second, [all[5], all[1], all[2], all[3], all[4]]);
    assert_eq!(&*third, [all[5], all[1], e, all[3], all[4]]);
    drop(second);
    // Nothing changed: the same list again.
    let fourth = game.group(id).unwrap().entities();
    assert!(std::ptr::eq(third.as_ptr(), fourth.as_ptr()));
    check(&game);
}

/// A small deterministic generator (xorshift64*), so the long test below
/// runs the same operations every time.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % sides
    }
}

/// Calls `entities()` on every listed group after each of a few thousand
/// operations of every kind, and compares each list with a model of the
/// documented order (joiners at the end, a leaver's place to the last
/// entry) and with the group's `iter()`. Some lists are held across
/// operations and must not change.
#[test]
fn entities_after_every_operation_is_the_group_in_the_documented_order() {
    let mut game = Context::new();
    let matchers = [
        Matcher::all_of::<Position>(),
        Matcher::all_of::<(Position, Velocity)>().none_of::<Frozen>(),
        Matcher::any_of::<(Velocity, Heat)>(),
        Matcher::all_of::<Burning>(),
        Matcher::all_of::<Position>().none_of::<Burning>(),
        Matcher::all_of::<(Heat, Health)>(),
    ];
    let groups: Vec<GroupId> = matchers.into_iter().map(|m| game.add_group(m)).collect();
    // Never listed: still right, through `iter()`.
    let unlisted = game.add_group(Matcher::all_of::<(Health, Velocity)>());
    let mut models: Vec<Option<Vec<Entity>>> = vec![None; groups.len()];
    let mut held: Vec<Option<(reactecs::EntityList, Vec<Entity>)>> = vec![None; groups.len()];
    let mut alive: Vec<Entity> = Vec::new();
    let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
    const STEPS: usize = if cfg!(miri) { 200 } else { 4_000 };
    for step in 0..STEPS {
        let pick = |dice: &mut Dice, alive: &[Entity]| (!alive.is_empty()).then(|| alive[dice.roll(alive.len())]);
        let mut bulk = false;
        match dice.roll(40) {
            0..=5 => alive.push(game.create_entity_with(Position(step as f32)).unwrap()),
            6..=7 => alive.push(game.create_entity_with((Position(0.0), Velocity(1.0))).unwrap()),
            8 => alive.push(game.create_entity_with((Health(1), Heat(2))).unwrap()),
            9 => alive.push(game.create_entity()),
            10..=14 => {
                if let Some(e) = pick(&mut dice, &alive) {
                    game.destroy_entity(e).unwrap();
                    alive.retain(|&x| x != e);
                }
            }
            15..=18 => {
                if let Some(e) = pick(&mut dice, &alive) {
                    if game.has::<Velocity>(e) {
                        game.remove::<Velocity>(e).unwrap();
                    } else {
                        game.add(e, Velocity(0.5)).unwrap();
                    }
                }
            }
            19..=20 => {
                if let Some(e) = pick(&mut dice, &alive) {
                    if game.has::<Frozen>(e) {
                        game.remove::<Frozen>(e).unwrap();
                    } else {
                        game.add(e, Frozen).unwrap();
                    }
                }
            }
            21..=23 => {
                if let Some(e) = pick(&mut dice, &alive) {
                    if game.has::<Health>(e) {
                        game.remove::<Health>(e).unwrap();
                    } else {
                        game.add(e, Health(3)).unwrap();
                    }
                }
            }
            24..=28 => {
                if let Some(e) = pick(&mut dice, &alive) {
                    if game.has::<Burning>(e) {
                        game.remove::<Burning>(e).unwrap();
                    } else {
                        game.add(e, Burning).unwrap();
                    }
                }
            }
            29..=32 => {
                if let Some(e) = pick(&mut dice, &alive) {
                    if game.has::<Heat>(e) {
                        game.remove::<Heat>(e).unwrap();
                    } else {
                        game.add(e, Heat(1)).unwrap();
                    }
                }
            }
            33..=35 => {
                if let Some(e) = pick(&mut dice, &alive) {
                    if game.has::<Position>(e) {
                        game.remove::<Position>(e).unwrap();
                    } else {
                        game.add(e, Position(1.0)).unwrap();
                    }
                }
            }
            36..=38 => {
                // Replacements change no membership.
                if let Some(e) = pick(&mut dice, &alive) {
                    game.replace(e, Health(7)).unwrap();
                }
            }
            _ => {
                bulk = true;
                if dice.roll(8) == 0 {
                    game.reset().unwrap();
                } else if dice.roll(4) == 0 {
                    game.destroy_all_entities();
                } else {
                    let more = game
                        .create_entities_with((0..dice.roll(20)).map(|i| (Position(i as f32), Burning)))
                        .unwrap();
                    alive.extend(more);
                    bulk = false;
                    // Joiners of one call, in creation order: as one by one.
                }
                if bulk {
                    alive.clear();
                }
            }
        }
        for (g, &id) in groups.iter().enumerate() {
            let group = game.group(id).unwrap();
            let now: Vec<Entity> = group.iter().collect();
            let model = models[g].get_or_insert_with(|| now.clone());
            if bulk {
                assert!(now.is_empty(), "{group}");
                model.clear();
            }
            let present: BTreeSet<Entity> = now.iter().copied().collect();
            while let Some(place) = model.iter().position(|e| !present.contains(e)) {
                model.swap_remove(place);
            }
            let listed: BTreeSet<Entity> = model.iter().copied().collect();
            model.extend(now.iter().filter(|e| !listed.contains(e)));
            let list = group.entities();
            assert_eq!(&*list, model.as_slice(), "{group} after step {step}");
            assert_eq!(list.len(), group.len(), "{group}");
            if let Some((list, copy)) = &held[g] {
                assert_eq!(&**list, copy.as_slice(), "a held list of {group} changed");
            }
            match dice.roll(10) {
                0 => held[g] = Some((list.clone(), list.to_vec())),
                1 => held[g] = None,
                _ => {}
            }
        }
        if step % 97 == 0 {
            check(&game);
        }
    }
    check(&game);
    let unlisted = game.group(unlisted).unwrap();
    assert_eq!(unlisted.iter().count(), unlisted.len());
}
