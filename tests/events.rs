//! Context events: what fires, with which data, in which order (see the
//! `reactecs::event` module docs, which this file pins).

mod common;

use common::*;
use reactecs::{Component, Context, ContextEvent};

#[test]
fn create_entity_fires_entity_created() {
    let mut game = Context::new();
    let spy = Spy::attach(&mut game);
    let e = game.create_entity();
    assert_eq!(spy.take(), [format!("created {e}")]);
}

#[test]
fn create_entity_with_fires_created_then_added_in_bundle_order() {
    let mut game = Context::new();
    let spy = Spy::attach(&mut game);
    let e = game
        .create_entity_with((Velocity { x: 1.0, y: 2.0 }, Frozen, Position { x: 3.0, y: 4.0 }))
        .unwrap();
    assert_eq!(
        spy.take(),
        [
            format!("created {e}"),
            format!("added {e} Velocity {{ x: 1.0, y: 2.0 }}"),
            format!("added {e} Frozen"),
            format!("added {e} Position {{ x: 3.0, y: 4.0 }}"),
        ]
    );
}

#[test]
fn add_remove_and_take_fire_with_the_value() {
    let mut game = Context::new();
    let e = game.create_entity();
    let spy = Spy::attach(&mut game);
    game.add(e, Name("a".into())).unwrap();
    game.remove::<Name>(e).unwrap();
    game.add(e, Name("b".into())).unwrap();
    let _ = game.take::<Name>(e).unwrap();
    assert_eq!(
        spy.take(),
        [
            format!("added {e} Name(\"a\")"),
            format!("removed {e} Name(\"a\")"),
            format!("added {e} Name(\"b\")"),
            format!("removed {e} Name(\"b\")"),
        ]
    );
}

#[test]
fn replace_fires_one_replaced_with_old_and_new() {
    let mut game = Context::new();
    let e = game.create_entity_with((Position { x: 1.0, y: 1.0 },)).unwrap();
    let spy = Spy::attach(&mut game);
    game.replace(e, Position { x: 2.0, y: 2.0 }).unwrap();
    assert_eq!(
        spy.take(),
        [format!(
            "replaced {e} Position {{ x: 1.0, y: 1.0 }} -> Position {{ x: 2.0, y: 2.0 }}"
        )]
    );
}

#[test]
fn replace_of_an_absent_component_fires_added_not_replaced() {
    let mut game = Context::new();
    let e = game.create_entity();
    let spy = Spy::attach(&mut game);
    game.replace(e, Frozen).unwrap();
    assert_eq!(spy.take(), [format!("added {e} Frozen")]);
}

#[test]
fn get_mut_is_silent() {
    let mut game = Context::new();
    let e = game.create_entity_with((Position { x: 1.0, y: 1.0 },)).unwrap();
    let spy = Spy::attach(&mut game);
    game.get_mut::<Position>(e).unwrap().x = 9.0;
    assert!(spy.take().is_empty());
}

#[test]
fn destroy_fires_will_be_destroyed_then_removed_per_component_then_destroyed() {
    let mut game = Context::new();
    let e = game
        .create_entity_with((Name("n".into()), Frozen, Position { x: 0.0, y: 0.0 }))
        .unwrap();
    let spy = Spy::attach(&mut game);
    let mut ids = [Name::component_id(), Frozen::component_id(), Position::component_id()];
    ids.sort();
    game.destroy_entity(e).unwrap();
    let events = spy.take();
    assert_eq!(events.len(), 6, "{events:?}");
    assert!(events[0].starts_with(&format!("will destroy {e} {{")), "{events:?}");
    for (event, id) in events[1..4].iter().zip(ids) {
        assert!(
            event.starts_with(&format!("removed {e} {}", id.info().unwrap().name())),
            "{events:?}"
        );
    }
    assert_eq!(events[4], format!("destroyed {e}"));
    assert_eq!(
        events[5],
        format!("released {e}"),
        "nothing retains it, so its slot is freed at once"
    );
}

#[test]
fn components_are_readable_while_the_entity_will_be_destroyed() {
    let mut game = Context::new();
    let e = game.create_entity_with((Name("last words".into()),)).unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let sink = seen.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        if let ContextEvent::EntityWillBeDestroyed { entity } = event {
            *sink.lock().unwrap() = entity.get::<Name>().map(|n| n.0.clone());
        }
    });
    game.destroy_entity(e).unwrap();
    assert_eq!(seen.lock().unwrap().as_deref(), Some("last words"));
}

#[test]
fn destroy_all_fires_each_entitys_destroy_sequence() {
    let mut game = Context::new();
    let a = game.create_entity_with((Frozen,)).unwrap();
    let b = game.create_entity();
    let spy = Spy::attach(&mut game);
    game.destroy_all_entities();
    assert_eq!(
        spy.take(),
        [
            format!("will destroy {a} {{Frozen}}"),
            format!("removed {a} Frozen"),
            format!("destroyed {a}"),
            format!("released {a}"),
            format!("will destroy {b} {{}}"),
            format!("destroyed {b}"),
            format!("released {b}"),
        ]
    );
}

#[test]
fn handlers_run_in_subscription_order_and_unsubscribe_stops_one() {
    use std::sync::{Arc, Mutex};
    let mut game = Context::new();
    let order = Arc::new(Mutex::new(Vec::new()));
    let (first, second) = (order.clone(), order.clone());
    let one = game.subscribe(move |_: &ContextEvent<'_>| first.lock().unwrap().push(1));
    game.subscribe(move |_: &ContextEvent<'_>| second.lock().unwrap().push(2));
    game.create_entity();
    game.unsubscribe(one).unwrap();
    game.create_entity();
    assert_eq!(*order.lock().unwrap(), [1, 2, 2]);
    assert!(matches!(
        game.unsubscribe(one),
        Err(reactecs::Error::UnknownSubscription { .. })
    ));
}

#[test]
fn a_failed_operation_fires_nothing() {
    use reactecs::{Error, GroupEvent, Matcher};
    use std::sync::{Arc, Mutex};
    let mut game = Context::with_name("Game");
    game.set_unique(Score(1)).unwrap();
    let e = game.create_entity_with((Frozen, Position { x: 0.0, y: 0.0 })).unwrap();
    let gone = game.create_entity_with(Name("gone".into())).unwrap();
    game.destroy_entity(gone).unwrap();

    // Every kind of listener a change can reach: context handlers, group
    // handlers (joined, left, updated) and collectors of every trigger, on
    // each component the failed calls name.
    let spy = Spy::attach(&mut game);
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut groups = Vec::new();
    let mut collectors = Vec::new();
    for matcher in [
        Matcher::all_of::<Frozen>(),
        Matcher::all_of::<Name>(),
        Matcher::all_of::<Position>(),
        Matcher::all_of::<Score>(),
        Matcher::none_of::<Name>(),
    ] {
        let group = game.add_group(matcher.clone());
        let sink = heard.clone();
        game.subscribe_group(group, move |event: &GroupEvent<'_>| {
            sink.lock().unwrap().push(format!("{event:?}"));
        })
        .unwrap();
        groups.push((group, game.group(group).unwrap().len()));
        collectors.push(game.add_collector(matcher.clone().added_or_removed()));
        collectors.push(game.add_collector(matcher.updated()));
    }
    let entities = |game: &Context| -> Vec<String> {
        game.entities()
            .map(|e| format!("{:?}", game.entity(e).unwrap()))
            .collect()
    };
    let before = entities(&game);
    spy.take();

    assert!(matches!(
        game.add(e, Frozen),
        Err(Error::ComponentAlreadyPresent { .. })
    ));
    assert!(matches!(game.remove::<Name>(e), Err(Error::ComponentAbsent { .. })));
    assert!(matches!(game.take::<Name>(e), Err(Error::ComponentAbsent { .. })));
    assert!(matches!(
        game.create_entity_with((Frozen, Frozen)),
        Err(Error::DuplicateComponent { .. })
    ));
    assert!(matches!(
        game.create_entity_with((Score(2), Name("second".into()))),
        Err(Error::UniqueAlreadyHeld { .. })
    ));
    assert!(matches!(game.add(e, Score(3)), Err(Error::UniqueAlreadyHeld { .. })));
    assert!(matches!(game.destroy_entity(gone), Err(Error::StaleEntity { .. })));
    assert!(matches!(game.replace(gone, Frozen), Err(Error::StaleEntity { .. })));
    assert!(matches!(game.add(gone, Frozen), Err(Error::StaleEntity { .. })));

    assert_eq!(spy.take(), Vec::<String>::new(), "no context event");
    assert_eq!(*heard.lock().unwrap(), Vec::<String>::new(), "no group event");
    for (group, len) in groups {
        assert_eq!(game.group(group).unwrap().len(), len, "group {group}");
    }
    for collector in collectors {
        assert!(game.collector(collector).unwrap().is_empty(), "collector {collector}");
    }
    assert_eq!(entities(&game), before, "no entity or component changed");
    check(&game);
}

#[test]
fn event_entity_names_the_subject() {
    let mut game = Context::new();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    game.subscribe(move |event: &ContextEvent<'_>| sink.lock().unwrap().push(event.entity()));
    let e = game.create_entity_with((Frozen,)).unwrap();
    game.destroy_entity(e).unwrap();
    assert!(seen.lock().unwrap().iter().all(|&x| x == Some(e)));
    assert_eq!(seen.lock().unwrap().len(), 6);
}

/// A subscription id knows its context: another context refuses it with
/// `UnknownSubscription` naming it, and keeps every handler of its own
/// (context and group handlers alike), even when the numbers coincide.
#[test]
fn unsubscribe_refuses_another_contexts_subscription_and_removes_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (mut a, mut b) = (Context::with_name("A"), Context::with_name("B"));
    let heard = Arc::new(AtomicUsize::new(0));
    let (ours, in_group) = (heard.clone(), heard.clone());
    let of_a = a.subscribe(|_: &ContextEvent<'_>| {});
    let of_b = b.subscribe(move |_: &ContextEvent<'_>| {
        ours.fetch_add(1, Ordering::Relaxed);
    });
    let group = b.add_group(reactecs::Matcher::all_of::<Position>());
    let group_handler = b
        .subscribe_group(group, move |_: &reactecs::GroupEvent<'_>| {
            in_group.fetch_add(100, Ordering::Relaxed);
        })
        .unwrap();
    assert_ne!(of_a.context(), of_b.context());
    for foreign in [of_a, a.subscribe(|_: &ContextEvent<'_>| {})] {
        assert_eq!(
            b.unsubscribe(foreign),
            Err(reactecs::Error::UnknownSubscription {
                context: "B",
                id: foreign
            })
        );
    }
    b.create_entity_with((Position { x: 0.0, y: 0.0 },)).unwrap();
    // `GroupCreated` (before), `EntityCreated` and `ComponentAdded` reached
    // the context handler, the join the group handler.
    assert_eq!(heard.load(Ordering::Relaxed), 103, "every handler of b still heard");
    assert_eq!(b.unsubscribe(of_b), Ok(()));
    assert_eq!(b.unsubscribe(group_handler), Ok(()));
    assert_eq!(a.unsubscribe(of_a), Ok(()));
    let message = b.unsubscribe(of_b).unwrap_err().to_string();
    assert!(message.contains("has no subscription"), "{message}");
}
