//! Command buffers: recorded order, placeholders, the events of the direct
//! calls, failures that do not stop the rest, reuse without allocating,
//! values dropped once, buffers from several threads; and deferred systems,
//! whose buffers a feature plays back after them. (That a warm buffer
//! allocates nothing is in `command_buffer_alloc.rs`.)

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use reactecs::CommandFailure;
use reactecs::prelude::*;

#[derive(Default, Debug)]
struct Burning;
#[derive(Debug, PartialEq)]
struct Gold(u32);
reactecs::component!(flag Burning, unique Gold);

/// A context whose every event (context and group) goes to one log, with a
/// group and an added-collector on `Position` and a group on `Burning`.
fn observed() -> (Context, Arc<Mutex<Vec<String>>>, CollectorId) {
    let mut game = Context::with_name("Game");
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    game.subscribe(move |event: &ContextEvent<'_>| sink.lock().unwrap().push(describe(event)));
    let collector = game.add_collector(Matcher::all_of::<Position>().added());
    for group in [
        game.add_group(Matcher::all_of::<Position>().none_of::<Velocity>()),
        game.add_group(Matcher::all_of::<Burning>()),
    ] {
        let sink = log.clone();
        game.subscribe_group(group, move |event: &GroupEvent<'_>| {
            sink.lock()
                .unwrap()
                .push(without_context_ids(format!("group {event:?}")));
        })
        .unwrap();
    }
    log.lock().unwrap().clear();
    (game, log, collector)
}

/// `text` with the context ids of `GroupId { context: 3, index: 1 }` taken
/// out, so the events of twin contexts compare equal.
fn without_context_ids(text: String) -> String {
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("context: ") {
        out.push_str(&rest[..at]);
        rest = rest[at..]
            .trim_start_matches("context: ")
            .trim_start_matches(|c: char| c.is_ascii_digit());
        rest = rest.trim_start_matches(", ");
    }
    out.push_str(rest);
    out
}

fn at(x: f32) -> Position {
    Position { x, y: 0.0 }
}

fn vel(x: f32) -> Velocity {
    Velocity { x, y: 0.0 }
}

fn taken(log: &Mutex<Vec<String>>) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// As [`taken`], with each entity handle (`3v2097153`) written as its slot
/// (`3`): twin contexts give their entities the same slots, but never the
/// same tags (a handle names an entity of one context only).
fn taken_by_slot(log: &Mutex<Vec<String>>) -> Vec<String> {
    taken(log).into_iter().map(|line| by_slot(&line)).collect()
}

fn by_slot(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_number = false;
    while let Some(c) = chars.next() {
        if c == 'v' && in_number && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            in_number = false;
            continue;
        }
        in_number = c.is_ascii_digit() && (in_number || !out.ends_with(|p: char| p.is_alphanumeric()));
        out.push(c);
    }
    out
}

/// The slots of `entities`.
fn slots(entities: &[Entity]) -> Vec<u32> {
    entities.iter().map(|e| e.index()).collect()
}

/// The `CommandsFailed` failures of a playback result.
fn failures(result: Result<(), Error>) -> Vec<CommandFailure> {
    match result {
        Err(Error::CommandsFailed { context, failures }) => {
            assert_eq!(context, "Game");
            failures
        }
        other => panic!("expected CommandsFailed, got {other:?}"),
    }
}

#[test]
fn playback_fires_the_events_of_the_direct_calls_in_recorded_order() {
    let (mut direct, direct_log, direct_collector) = observed();
    let (mut played, played_log, played_collector) = observed();
    let mut kept = Vec::new();
    for game in [&mut direct, &mut played] {
        let a = game.create_entity_with((at(1.0),)).unwrap();
        let b = game.create_entity_with((at(2.0), vel(1.0))).unwrap();
        kept.push((a, b));
    }
    assert_eq!(
        slots(&[kept[0].0, kept[0].1]),
        slots(&[kept[1].0, kept[1].1]),
        "the twins use the same slots"
    );
    let (a, b) = kept[0];
    taken(&direct_log);
    taken(&played_log);

    // The direct calls.
    let c = direct.create_entity_with((at(3.0), vel(2.0))).unwrap();
    direct.add(c, Name("c".into())).unwrap();
    direct.replace(a, at(10.0)).unwrap();
    direct.remove::<Velocity>(c).unwrap();
    direct.set_flag::<Burning>(a, true).unwrap();
    direct.set_unique(Gold(5)).unwrap();
    direct.destroy_entity(b).unwrap();
    let d = direct.create_entity();
    direct.add(d, at(4.0)).unwrap();
    direct.set_unique(Gold(6)).unwrap();
    direct.set_flag::<Burning>(a, false).unwrap();
    let _ = direct.take_unique::<Gold>().unwrap();
    direct.destroy_entity(c).unwrap();

    // The same, recorded (with the played context's handles).
    let (a, b) = kept[1];
    let mut commands = CommandBuffer::new();
    let pc = commands.create_entity_with((at(3.0), vel(2.0)));
    commands.add(pc, Name("c".into()));
    commands.replace(a, at(10.0));
    commands.remove::<Velocity>(pc);
    commands.set_flag::<Burning>(a, true);
    commands.set_unique(Gold(5));
    commands.destroy_entity(b);
    let pd = commands.create_entity();
    commands.add(pd, at(4.0)).set_unique(Gold(6));
    commands.set_flag::<Burning>(a, false);
    commands.remove_unique::<Gold>();
    commands.destroy_entity(pc);
    assert_eq!(commands.len(), 13);
    assert!(taken(&played_log).is_empty(), "recording fires nothing");
    commands.playback(&mut played).unwrap();

    let expected = taken_by_slot(&direct_log);
    assert!(expected.len() > 25, "the sequence fires plenty: {expected:#?}");
    assert_eq!(taken_by_slot(&played_log), expected);
    let (pc, pd) = (commands.resolve(pc).unwrap(), commands.resolve(pd).unwrap());
    assert_eq!(slots(&[pc, pd]), slots(&[c, d]));
    assert!(
        played.is_alive(pd) && !played.is_alive(pc),
        "resolved to the played context's entities"
    );
    assert_eq!(
        slots(played.collector(played_collector).unwrap().entities()),
        slots(direct.collector(direct_collector).unwrap().entities())
    );
    let everyone = |game: &Context| {
        let mut all: Vec<_> = game
            .entities()
            .map(|e| (e.index(), game.entity(e).unwrap().component_names().collect::<Vec<_>>()))
            .collect();
        all.sort();
        all
    };
    assert_eq!(everyone(&played), everyone(&direct));
    check(&played);
}

#[test]
fn commands_apply_in_recorded_order_each_seeing_the_ones_before() {
    let (mut game, log, _) = observed();
    let e = game.create_entity_with((at(0.0),)).unwrap();
    taken(&log);
    let mut commands = CommandBuffer::new();
    commands
        .replace(e, at(1.0))
        .add(e, vel(1.0))
        .replace(e, at(2.0))
        .remove::<Velocity>(e)
        .replace(e, at(3.0));
    commands.playback(&mut game).unwrap();
    let changes: Vec<String> = taken(&log)
        .into_iter()
        .filter(|line| !line.starts_with("group"))
        .collect();
    assert_eq!(
        changes,
        [
            format!("replaced {e} Position {{ x: 0.0, y: 0.0 }} -> Position {{ x: 1.0, y: 0.0 }}"),
            format!("added {e} Velocity {{ x: 1.0, y: 0.0 }}"),
            format!("replaced {e} Position {{ x: 1.0, y: 0.0 }} -> Position {{ x: 2.0, y: 0.0 }}"),
            format!("removed {e} Velocity {{ x: 1.0, y: 0.0 }}"),
            format!("replaced {e} Position {{ x: 2.0, y: 0.0 }} -> Position {{ x: 3.0, y: 0.0 }}"),
        ]
    );
    assert_eq!(game.get::<Position>(e).unwrap(), &at(3.0));
}

#[test]
fn placeholders_are_used_by_later_commands() {
    let mut game = Context::with_name("Game");
    let mut commands = CommandBuffer::new();
    let kept = commands.create_entity();
    let gone = commands.create_entity_with((at(1.0),));
    let third = commands.create_entity_with((at(2.0), vel(0.0)));
    assert_eq!([kept, gone, third].map(|p| p.to_string()), ["p0", "p1", "p2"]);
    commands.add(kept, at(5.0)).set_flag::<Burning>(kept, true);
    commands.replace(kept, at(6.0));
    commands.add(gone, vel(1.0)).destroy_entity(gone);
    commands.remove::<Velocity>(third);
    assert!(!game.is_alive(kept), "a placeholder names no entity");
    assert!(matches!(game.add(kept, at(0.0)), Err(Error::StaleEntity { .. })));
    commands.playback(&mut game).unwrap();

    let kept = commands.resolve(kept).unwrap();
    assert_eq!(game.get::<Position>(kept).unwrap(), &at(6.0));
    assert!(game.has::<Burning>(kept));
    let gone = commands.resolve(gone).unwrap();
    assert!(!game.is_alive(gone), "the placeholder's entity was destroyed");
    let third = commands.resolve(third).unwrap();
    assert!(game.has::<Position>(third) && !game.has::<Velocity>(third));
    assert_eq!(game.len(), 2);
    check(&game);
}

#[test]
fn runs_of_creates_nobody_hears_of_end_as_the_direct_calls_would() {
    let counter = Counter::default();
    let record = |commands: &mut CommandBuffer| {
        let mut made = Vec::new();
        for i in 0..40 {
            made.push(commands.create_entity_with((at(i as f32), counter.make("c"))));
        }
        commands.add(made[3], vel(3.0)).destroy_entity(made[5]);
        made.push(commands.create_entity_with((at(40.0), counter.make("c"))));
        made.push(commands.create_entity_with((at(41.0), vel(1.0))));
        made.push(commands.create_entity_with((at(42.0), vel(2.0))));
        // Runs whose bundle is refused: each create fails on its own.
        made.push(commands.create_entity_with((at(0.0), at(1.0))));
        made.push(commands.create_entity_with((at(0.0), at(1.0))));
        made.push(commands.create_entity_with(Gold(7)));
        made.push(commands.create_entity_with(Gold(8)));
        commands.add(made[44], vel(0.0));
        made
    };
    // Nobody listens to `quiet`: its runs of creates go in at once.
    let mut quiet = Context::with_name("Game");
    let mut commands = CommandBuffer::new();
    let placeholders = record(&mut commands);
    let quiet_failures = failures(commands.playback(&mut quiet));
    let made: Vec<Option<Entity>> = placeholders.iter().map(|&p| commands.resolve(p)).collect();
    // A subscriber makes `heard` play every command on its own.
    let mut heard = Context::with_name("Game");
    let _spy = Spy::attach(&mut heard);
    let mut one_by_one = CommandBuffer::new();
    let placeholders = record(&mut one_by_one);
    let heard_failures = failures(one_by_one.playback(&mut heard));
    let expected: Vec<Option<Entity>> = placeholders.iter().map(|&p| one_by_one.resolve(p)).collect();

    let described = |failures: &[CommandFailure]| {
        failures
            .iter()
            .map(|f| (f.index, f.command.clone(), by_slot(&f.error.to_string())))
            .collect::<Vec<_>>()
    };
    assert_eq!(described(&quiet_failures), described(&heard_failures));
    assert_eq!(
        quiet_failures.iter().map(|f| f.index).collect::<Vec<_>>(),
        [45, 46, 48, 49],
        "the duplicate bundles, the second unique, and the add to a failed create"
    );
    assert_eq!(
        made.iter().map(|e| e.map(|e| e.index())).collect::<Vec<_>>(),
        expected.iter().map(|e| e.map(|e| e.index())).collect::<Vec<_>>()
    );
    assert_eq!(quiet.len(), heard.len());
    for (q, h) in made.iter().zip(&expected) {
        let (Some(q), Some(h)) = (*q, *h) else { continue };
        assert_eq!(quiet.is_alive(q), heard.is_alive(h));
        if quiet.is_alive(q) {
            assert_eq!(quiet.creation_index(q), heard.creation_index(h));
            assert_eq!(quiet.get::<Position>(q).ok(), heard.get::<Position>(h).ok());
            assert_eq!(quiet.get::<Velocity>(q).ok(), heard.get::<Velocity>(h).ok());
            assert_eq!(quiet.has::<Counted>(q), heard.has::<Counted>(h));
        }
    }
    assert_eq!(quiet.get::<Velocity>(made[3].unwrap()), Ok(&vel(3.0)));
    assert!(!quiet.is_alive(made[5].unwrap()));
    assert_eq!(quiet.unique::<Gold>(), Some(&Gold(7)));
    check(&quiet);
    drop((quiet, heard, commands, one_by_one));
    assert_eq!(counter.live(), 0, "each value dropped once");
}

#[test]
fn a_command_on_a_stale_entity_fails_and_the_rest_is_applied() {
    let (mut game, log, collector) = observed();
    let alive = game.create_entity_with((at(0.0),)).unwrap();
    let stale = game.create_entity_with((at(1.0),)).unwrap();
    let mut commands = CommandBuffer::new();
    commands.replace(alive, at(2.0));
    commands.add(stale, vel(1.0)); // #1
    commands.destroy_entity(stale); // #2: destroyed before playback
    let made = commands.create_entity_with((at(3.0),));
    commands.add(alive, at(9.0)); // #4: already has one
    commands.add(made, vel(2.0));
    commands.remove::<Velocity>(alive); // #6: has none
    game.destroy_entity(stale).unwrap();
    game.collector_mut(collector).unwrap().clear(); // its last retain: `stale` is stale, not disabled
    taken(&log);

    let failures = failures(commands.playback(&mut game));
    let summary: Vec<(usize, &str, Option<Entity>)> = failures
        .iter()
        .map(|f| (f.index, f.command.as_str(), f.entity))
        .collect();
    let (add_stale, destroy_stale) = (format!("add `Velocity` to {stale}"), format!("destroy entity {stale}"));
    let (add_again, remove_absent) = (
        format!("add `Position` to {alive}"),
        format!("remove `Velocity` from {alive}"),
    );
    assert_eq!(
        summary,
        [
            (1, add_stale.as_str(), Some(stale)),
            (2, destroy_stale.as_str(), Some(stale)),
            (4, add_again.as_str(), Some(alive)),
            (6, remove_absent.as_str(), Some(alive)),
        ]
    );
    assert!(matches!(*failures[0].error, Error::StaleEntity { entity, .. } if entity == stale));
    assert!(matches!(*failures[1].error, Error::StaleEntity { .. }));
    assert!(matches!(*failures[2].error, Error::ComponentAlreadyPresent { .. }));
    assert!(matches!(*failures[3].error, Error::ComponentAbsent { .. }));

    // Everything else was applied, and nothing half-applied.
    assert_eq!(game.get::<Position>(alive).unwrap(), &at(2.0));
    let made = commands.resolve(made).unwrap();
    assert_eq!(game.get::<Velocity>(made).unwrap(), &vel(2.0));
    let events = taken(&log);
    assert!(
        events.iter().all(|line| !line.contains(&stale.to_string())),
        "{events:#?}"
    );
    assert!(commands.is_empty());
    check(&game);
}

#[test]
fn a_command_on_a_placeholder_whose_create_failed_fails_too() {
    let mut game = Context::with_name("Game");
    let holder = game.set_unique(Gold(1)).unwrap();
    let mut commands = CommandBuffer::new();
    let ok = commands.create_entity();
    let refused = commands.create_entity_with((at(0.0), Gold(2))); // #1: Gold is held
    commands.add(refused, vel(1.0)); // #2
    commands.add(ok, vel(1.0));
    let foreign = CommandBuffer::new().create_entity_with((at(0.0),)); // p0 of another buffer...
    let mut other = CommandBuffer::new();
    for _ in 0..5 {
        other.create_entity();
    }
    let out_of_range = other.create_entity(); // ...and p5, more than this buffer creates
    commands.destroy_entity(out_of_range); // #4
    assert_eq!(
        foreign, ok,
        "a placeholder from another buffer may name one of this buffer's"
    );

    let failures = failures(commands.playback(&mut game));
    let indices: Vec<usize> = failures.iter().map(|f| f.index).collect();
    assert_eq!(indices, [1, 2, 4]);
    assert_eq!(
        failures[0].command,
        format!("create entity {refused} with `(Position, Gold)`")
    );
    assert!(matches!(*failures[0].error, Error::UniqueAlreadyHeld { holder: h, .. } if h == holder));
    assert_eq!(
        *failures[1].error,
        Error::UnresolvedPlaceholder {
            context: "Game",
            placeholder: refused,
            creator: Some(1),
        }
    );
    assert_eq!(
        *failures[2].error,
        Error::UnresolvedPlaceholder {
            context: "Game",
            placeholder: out_of_range,
            creator: None,
        }
    );
    assert!(
        failures[1]
            .error
            .to_string()
            .contains("the command that was to create it (#1) failed")
    );
    assert!(failures[2].error.to_string().contains("no command before it"));
    assert_eq!(commands.resolve(refused), None);
    assert!(game.has::<Velocity>(commands.resolve(ok).unwrap()));
    assert_eq!(game.len(), 2);
    check(&game);
}

#[test]
fn the_failure_message_counts_the_failures_and_lists_the_first_few() {
    let mut game = Context::with_name("Game");
    let e = game.create_entity();
    game.destroy_entity(e).unwrap();
    let mut commands = CommandBuffer::new();
    for _ in 0..5 {
        commands.destroy_entity(e);
    }
    let message = commands.playback(&mut game).unwrap_err().to_string();
    assert!(
        message.starts_with("5 of the commands played back on context `Game` failed and changed nothing"),
        "{message}"
    );
    assert!(
        message.contains(&format!("#0 destroy entity {e}: entity {e} is not alive")),
        "{message}"
    );
    assert!(message.contains("#2 destroy"), "{message}");
    assert!(!message.contains("#3 destroy"), "{message}");
    assert!(message.contains("and 2 more"), "{message}");
}

#[test]
fn unique_components_are_set_and_removed_through_a_buffer() {
    let (mut direct, direct_log, _) = observed();
    let (mut played, played_log, _) = observed();
    direct.set_unique(Gold(1)).unwrap();
    direct.set_unique(Gold(2)).unwrap();
    let _ = direct.take_unique::<Gold>().unwrap();
    let second = direct.take_unique::<Gold>().unwrap_err();
    direct.set_unique(Gold(3)).unwrap();

    let mut commands = CommandBuffer::new();
    commands
        .set_unique(Gold(1))
        .set_unique(Gold(2))
        .remove_unique::<Gold>()
        .remove_unique::<Gold>()
        .set_unique(Gold(3));
    let failures = failures(commands.playback(&mut played));
    assert_eq!(failures.len(), 1);
    assert_eq!((failures[0].index, failures[0].entity), (3, None));
    assert_eq!(failures[0].command, "remove unique `Gold`");
    assert_eq!(*failures[0].error, second);
    assert_eq!(taken_by_slot(&played_log), taken_by_slot(&direct_log));
    assert_eq!(played.unique::<Gold>(), Some(&Gold(3)));
    let holder = |game: &Context| game.unique_entity::<Gold>().map(Entity::index);
    assert_eq!(holder(&played), holder(&direct));
    check(&played);
}

#[test]
fn flags_are_set_and_cleared_through_a_buffer() {
    let (mut direct, direct_log, _) = observed();
    let (mut played, played_log, _) = observed();
    let burning_direct = direct.add_collector(Matcher::all_of::<Burning>().added_or_removed());
    let burning_played = played.add_collector(Matcher::all_of::<Burning>().added_or_removed());
    let (e_direct, e_played) = (direct.create_entity(), played.create_entity());
    assert_eq!(e_direct.index(), e_played.index());
    for (direct_calls, game, e) in [(true, &mut direct, e_direct), (false, &mut played, e_played)] {
        if direct_calls {
            game.set_flag::<Burning>(e, true).unwrap();
            game.set_flag::<Burning>(e, true).unwrap();
            game.set_flag::<Burning>(e, false).unwrap();
            game.set_flag::<Burning>(e, false).unwrap();
            game.set_flag::<Burning>(e, true).unwrap();
        } else {
            let mut commands = CommandBuffer::new();
            commands
                .set_flag::<Burning>(e, true)
                .set_flag::<Burning>(e, true)
                .set_flag::<Burning>(e, false)
                .set_flag::<Burning>(e, false)
                .set_flag::<Burning>(e, true);
            assert_eq!(format!("{commands:?}").matches("clear flag `Burning`").count(), 2);
            commands.playback(game).unwrap();
        }
    }
    let expected = taken_by_slot(&direct_log);
    assert_eq!(expected.iter().filter(|l| l.starts_with("added")).count(), 2);
    assert_eq!(taken_by_slot(&played_log), expected);
    assert!(played.has::<Burning>(e_played));
    assert_eq!(played.collector(burning_played).unwrap().entities(), [e_played]);
    assert_eq!(direct.collector(burning_direct).unwrap().entities(), [e_direct]);
    check(&played);
}

#[test]
fn a_buffer_is_reusable_after_playback() {
    let mut game = Context::with_name("Game");
    let mut commands = CommandBuffer::new();
    let first = commands.create_entity_with((at(1.0),));
    commands.playback(&mut game).unwrap();
    let e = commands.resolve(first).unwrap();
    assert_eq!(commands.resolve(first), Some(e), "resolve holds until the next record");

    let second = commands.create_entity_with((at(2.0),));
    assert_eq!(second, first, "placeholder numbers start over");
    assert_eq!(
        commands.resolve(first),
        None,
        "recording forgets the last playback's placeholders"
    );
    commands.replace(e, at(3.0));
    commands.playback(&mut game).unwrap();
    let f = commands.resolve(second).unwrap();
    assert_ne!(e, f);
    assert_eq!(game.get::<Position>(e).unwrap(), &at(3.0));
    assert_eq!(game.get::<Position>(f).unwrap(), &at(2.0));

    // A failed playback leaves it empty and reusable too.
    let short_lived = commands.create_entity();
    commands.destroy_entity(short_lived);
    commands.playback(&mut game).unwrap();
    commands.add(e, at(0.0));
    assert_eq!(failures(commands.playback(&mut game)).len(), 1, "Position is present");
    assert!(commands.is_empty());
    commands.add(e, vel(1.0));
    commands.playback(&mut game).unwrap();
    assert!(game.has::<Velocity>(e));
    check(&game);
}

#[test]
fn clear_drops_the_recorded_commands() {
    let counter = Counter::default();
    let mut game = Context::with_name("Game");
    let mut commands = CommandBuffer::new();
    let p = commands.create_entity_with((counter.make("a"),));
    commands.add(p, CountedToo(counter.make("b")));
    assert_eq!(counter.live(), 2);
    commands.clear();
    assert_eq!(counter.live(), 0);
    assert!(commands.is_empty());
    commands.playback(&mut game).unwrap();
    assert!(game.is_empty());
    assert_eq!(commands.resolve(p), None);
}

#[test]
fn a_buffer_dropped_without_playback_drops_each_value_once() {
    let counter = Counter::default();
    let mut game = Context::with_name("Game");
    let target = game.create_entity();
    {
        let mut commands = CommandBuffer::new();
        for i in 0..10 {
            let p = commands.create_entity_with((counter.make(&format!("new {i}")),));
            commands.add(p, CountedToo(counter.make("too")));
            commands.replace(target, counter.make("replaced"));
        }
        commands.set_unique(Gold(1));
        assert_eq!(counter.live(), 30);
    }
    assert_eq!(counter.live(), 0);
    assert!(!game.has::<Counted>(target));
    game.destroy_entity(target).unwrap();
}

#[test]
fn played_back_values_are_dropped_once_whatever_the_outcome() {
    let counter = Counter::default();
    let mut game = Context::with_name("Game");
    let stale = game.create_entity();
    let kept = game.create_entity();
    game.destroy_entity(stale).unwrap();
    let mut commands = CommandBuffer::new();
    commands.add(stale, counter.make("refused: stale"));
    commands.add(kept, counter.make("kept"));
    commands.add(kept, counter.make("refused: present"));
    commands.replace(kept, counter.make("replaces kept"));
    let p = commands.create_entity_with((counter.make("new"), CountedToo(counter.make("new too"))));
    commands.destroy_entity(p);
    assert_eq!(counter.live(), 6);
    assert_eq!(failures(commands.playback(&mut game)).len(), 2);
    assert_eq!(counter.live(), 1, "only the value `kept` holds is alive");
    assert_eq!(game.get::<Counted>(kept).unwrap().label, "replaces kept");
    drop(game);
    assert_eq!(counter.live(), 0);
}

#[test]
fn a_panicking_handler_leaves_the_buffer_empty_and_drops_the_rest_once() {
    let counter = Counter::default();
    let mut game = Context::with_name("Game");
    let e = game.create_entity();
    game.subscribe(|event: &ContextEvent<'_>| {
        if let ContextEvent::ComponentAdded { component, .. } = event {
            assert_ne!(component.name(), "Velocity", "a handler refuses velocities");
        }
    });
    let mut commands = CommandBuffer::new();
    commands.add(e, counter.make("before"));
    commands.add(e, vel(1.0));
    commands.add(e, CountedToo(counter.make("after")));
    commands.create_entity_with((counter.make("after too"),));
    assert_panics("a handler refuses velocities", || commands.playback(&mut game));
    assert!(commands.is_empty());
    assert_eq!(counter.live(), 1, "the values after the panic were dropped");
    assert!(game.has::<Counted>(e) && game.has::<Velocity>(e) && !game.has::<CountedToo>(e));
    commands.add(e, CountedToo(counter.make("later")));
    commands.playback(&mut game).unwrap();
    assert_eq!(counter.live(), 2);
    check(&game);
}

#[test]
fn buffers_filled_on_two_threads_append_into_one() {
    #[derive(Debug, PartialEq)]
    struct Spark(usize, usize);
    #[derive(Debug, PartialEq)]
    struct Label(usize, usize);
    reactecs::component!(Spark, Label);

    let mut game = Context::with_name("Game");
    let old: Vec<Entity> = (0..20)
        .map(|i| game.create_entity_with((at(i as f32),)).unwrap())
        .collect();
    let mut buffers = vec![CommandBuffer::new(), CommandBuffer::new()];
    std::thread::scope(|scope| {
        for (thread, commands) in buffers.iter_mut().enumerate() {
            let game = &game;
            scope.spawn(move || {
                // Each thread destroys its half of the old entities, reading
                // the context while it records.
                for (e, p) in game.query::<(Entity, &Position)>().iter() {
                    if p.x as usize % 2 == thread {
                        commands.destroy_entity(e);
                    }
                }
                for k in 0..50 {
                    let p = commands.create_entity_with((Label(thread, k),));
                    commands.add(p, Spark(thread, k));
                }
            });
        }
    });
    let [mut all, mut second]: [CommandBuffer; 2] = buffers.try_into().unwrap();
    assert_eq!(second.len(), 10 + 100);
    all.append(&mut second);
    assert!(second.is_empty());
    assert_eq!(all.len(), 20 + 2 * 100);
    all.playback(&mut game).unwrap();

    assert!(old.iter().all(|&e| !game.is_alive(e)));
    assert_eq!(game.len(), 100);
    let mut sparks = 0;
    for (label, spark) in game.query::<(&Label, &Spark)>().iter() {
        assert_eq!(
            (label.0, label.1),
            (spark.0, spark.1),
            "each value went to its own placeholder's entity"
        );
        sparks += 1;
    }
    assert_eq!(sparks, 100);

    // The emptied buffer is reusable.
    let p = second.create_entity_with((Label(9, 9),));
    second.add(p, Spark(9, 9));
    second.playback(&mut game).unwrap();
    let e = second.resolve(p).unwrap();
    assert_eq!(game.get::<Spark>(e).unwrap(), &Spark(9, 9));
    check(&game);
}

#[test]
fn appended_placeholders_follow_the_buffers_own() {
    let mut game = Context::with_name("Game");
    let mut first = CommandBuffer::new();
    let a = first.create_entity();
    first.add(a, at(1.0));
    let mut second = CommandBuffer::new();
    let b = second.create_entity();
    second.add(b, at(2.0)).add(b, vel(2.0));
    assert_eq!(a, b);
    first.append(&mut second);
    first.playback(&mut game).unwrap();
    let a = first.resolve(a).unwrap();
    let b = first.resolve(b).unwrap();
    assert_eq!(game.get::<Position>(a).unwrap(), &at(1.0));
    assert_eq!(game.len(), 2);
    let other = game.entities().find(|&e| e != a).unwrap();
    assert_eq!(game.get::<Position>(other).unwrap(), &at(2.0));
    assert!(game.has::<Velocity>(other));
    assert_eq!(b, a, "`b` is p0, which is now the first buffer's");
}

mod deferred {
    use super::*;
    use reactecs::system::Deferred;

    /// Destroys every entity with a zero `Health`, putting a corpse (a
    /// `Position`) in its place.
    struct Reap;
    impl DeferredSystem for Reap {
        fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
            for (e, health) in game.query::<(Entity, &Health)>().iter() {
                if health.0 == 0 {
                    commands.destroy_entity(e);
                    let corpse = commands.create_entity();
                    commands.add(corpse, at(e.index() as f32));
                }
            }
        }
    }

    /// Records what it sees when it runs.
    struct Look(Arc<Mutex<Vec<(usize, usize)>>>);
    impl System for Look {
        fn execute(&mut self, game: &mut Context) {
            let seen = (
                game.query::<&Health>().iter().count(),
                game.query::<&Position>().iter().count(),
            );
            self.0.lock().unwrap().push(seen);
        }
    }

    #[test]
    fn a_deferred_systems_commands_are_played_back_before_the_next_system_runs() {
        let mut game = Context::with_name("Game");
        for hp in [0, 3, 0] {
            game.create_entity_with(Health(hp)).unwrap();
        }
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut frame = Feature::new("Frame")
            .with(Look(seen.clone()))
            .with_deferred(Reap)
            .with(Look(seen.clone()));
        assert_eq!(
            frame.iter().map(|s| s.name()).collect::<Vec<_>>(),
            ["Look", "Reap", "Look"]
        );
        frame.execute(&mut game);
        frame.cleanup(&mut game);
        assert_eq!(*seen.lock().unwrap(), [(3, 0), (1, 2)]);
        assert_eq!(frame.timings().get("Reap").unwrap().execute().runs(), 1);
        check(&game);
    }

    /// Destroys `target` at execute, and again at cleanup.
    struct Twice(Entity);
    impl DeferredSystem for Twice {
        fn execute(&mut self, _: &Context, commands: &mut CommandBuffer) {
            commands.destroy_entity(self.0);
        }
        fn cleanup(&mut self, _: &Context, commands: &mut CommandBuffer) {
            commands.destroy_entity(self.0);
            commands.create_entity();
        }
    }

    #[test]
    fn a_deferred_system_keeps_playback_errors_and_does_not_stop() {
        let (mut game, log, _) = observed();
        let e = game.create_entity();
        taken(&log);
        let mut system = Deferred::new(Twice(e));
        system.execute(&mut game);
        assert_eq!(system.last_error(), None);
        assert!(!game.is_alive(e));
        system.cleanup(&mut game);
        let Some(Error::CommandsFailed { failures, .. }) = system.last_error() else {
            panic!("the second destroy fails: {:?}", system.last_error());
        };
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].index, 0);
        assert_eq!(game.len(), 1, "the cleanup's create was played back");
        system.execute(&mut game);
        assert!(
            matches!(system.last_error(), Some(Error::CommandsFailed { .. })),
            "execute fails again: the entity is gone"
        );
        assert!(system.commands().is_empty());
        assert_eq!(system.system().0, e);
        check(&game);
    }
}

/// `create_entities_with` records one create per bundle: consecutive
/// placeholders in order, resolved to entities with the bundles' values,
/// with the events one `create_entity_with` per bundle fires.
#[test]
fn batch_creation_records_one_create_per_bundle() {
    let (mut batched, mut single) = (CommandBuffer::new(), CommandBuffer::new());
    let first = batched.create_entity();
    let made: Vec<Entity> = batched
        .create_entities_with((0..4).map(|i| (Position { x: i as f32, y: 0.0 },)))
        .collect();
    assert_eq!(made.len(), 4);
    assert_eq!(batched.len(), 5);
    single.create_entity();
    for i in 0..4 {
        single.create_entity_with((Position { x: i as f32, y: 0.0 },));
    }
    let (mut a, mut b) = (Context::new(), Context::new());
    let (spy_a, spy_b) = (Spy::attach(&mut a), Spy::attach(&mut b));
    batched.playback(&mut a).unwrap();
    single.playback(&mut b).unwrap();
    let normalize = |lines: Vec<String>, context: &Context| -> Vec<String> {
        let mut all: Vec<Entity> = context.entities().collect();
        all.sort_by_key(|&e| context.creation_index(e).unwrap());
        lines
            .into_iter()
            .map(|line| {
                all.iter()
                    .enumerate()
                    .fold(line, |line, (i, e)| line.replace(&e.to_string(), &format!("#{i}")))
            })
            .collect()
    };
    assert_eq!(normalize(spy_a.take(), &a), normalize(spy_b.take(), &b));
    assert!(batched.resolve(first).is_some());
    for (i, placeholder) in made.into_iter().enumerate() {
        let entity = batched.resolve(placeholder).unwrap();
        assert_eq!(a.get::<Position>(entity).unwrap().x, i as f32);
        assert_eq!(a.creation_index(entity), Ok(i as u64 + 1));
    }
}
