//! Every component value is dropped exactly once, whatever happens to it.

mod common;

use common::*;
use reactecs::{Context, Entity};

#[test]
fn a_mix_of_every_operation_drops_each_value_exactly_once() {
    let counter = Counter::default();
    {
        let mut game = Context::new();
        let mut entities: Vec<Entity> = Vec::new();
        for i in 0..scale(600) {
            let e = match i % 3 {
                0 => game
                    .create_entity_with((counter.make("bundle"), Name(i.to_string())))
                    .unwrap(),
                1 => {
                    let e = game.create_entity();
                    game.add(e, counter.make("added")).unwrap();
                    e
                }
                _ => game
                    .create_entity_with((CountedToo(counter.make("too")), counter.make("both")))
                    .unwrap(),
            };
            entities.push(e);
        }
        for (i, &e) in entities.iter().enumerate() {
            match i % 6 {
                0 => game.replace(e, counter.make("replaced")).unwrap(),
                1 => game.remove::<common::Counted>(e).unwrap(),
                2 => drop(game.take::<common::Counted>(e).unwrap()),
                3 => game.destroy_entity(e).unwrap(),
                4 => {
                    // Refused operations drop the offered value and keep the stored one.
                    assert!(matches!(
                        game.add(e, counter.make("refused")),
                        Err(reactecs::Error::ComponentAlreadyPresent { .. })
                    ));
                    game.add(e, CountedToo(counter.make("late"))).unwrap();
                }
                _ => {
                    assert!(matches!(
                        game.create_entity_with((counter.make("x"), counter.make("y"))),
                        Err(reactecs::Error::DuplicateComponent { .. })
                    ));
                }
            }
        }
        check(&game);
        let kept = counter.live();
        assert!(kept > 0);
        game.reset().unwrap();
        assert_eq!(counter.live(), 0, "reset drops everything");
        for _ in 0..100 {
            game.create_entity_with((counter.make("after reset"), CountedToo(counter.make("too"))))
                .unwrap();
        }
        assert_eq!(counter.live(), 200);
        // ...and dropping the context drops the rest.
    }
    assert_eq!(counter.live(), 0);
}

#[test]
fn replaced_values_are_dropped_after_the_event() {
    use std::sync::{Arc, Mutex};
    let counter = Counter::default();
    let mut game = Context::new();
    let e = game.create_entity_with((counter.make("old"),)).unwrap();
    let live_during_event = Arc::new(Mutex::new(None));
    let (sink, probe) = (live_during_event.clone(), counter.clone());
    game.subscribe(move |_: &reactecs::ContextEvent<'_>| *sink.lock().unwrap() = Some(probe.live()));
    game.replace(e, counter.make("new")).unwrap();
    assert_eq!(
        *live_during_event.lock().unwrap(),
        Some(2),
        "old and new both alive during the event"
    );
    assert_eq!(counter.live(), 1);
    drop(game);
    assert_eq!(counter.live(), 0);
}

#[test]
fn a_panicking_handler_leaves_the_context_consistent_and_leaks_nothing() {
    let counter = Counter::default();
    let mut game = Context::new();
    let keep = game.create_entity_with((counter.make("keep"),)).unwrap();
    let e = game.create_entity_with((counter.make("e"), Frozen)).unwrap();
    game.subscribe(|event: &reactecs::ContextEvent<'_>| {
        if matches!(event, reactecs::ContextEvent::ComponentRemoved { .. }) {
            panic!("handler failed");
        }
    });
    // The removal is complete before the handler runs; the taken value unwinds away.
    assert_panics("handler failed", || game.remove::<common::Counted>(e));
    assert!(!game.has::<common::Counted>(e));
    assert_eq!(counter.live(), 1);
    check(&game);
    // A handler panicking during destroy cannot leave it half done: the entity
    // is destroyed (its values dropped) before the panic goes on.
    assert_panics("handler failed", || game.destroy_entity(keep));
    assert!(!game.is_alive(keep));
    assert_eq!(counter.live(), 0);
    check(&game);
    drop(game);
    assert_eq!(counter.live(), 0);
}

#[test]
fn a_panicking_group_handler_during_destroy_leaves_groups_consistent() {
    use reactecs::prelude::*;
    let counter = Counter::default();
    let mut game = Context::new();
    let all = game.add_group(Matcher::all_of::<common::Counted>());
    let a = game.create_entity_with(counter.make("a")).unwrap();
    let b = game.create_entity_with(counter.make("b")).unwrap();
    game.subscribe_group(all, |event: &GroupEvent<'_>| {
        if matches!(event, GroupEvent::Removed { .. }) {
            panic!("handler failed");
        }
    })
    .unwrap();
    assert_panics("handler failed", || game.destroy_entity(a));
    assert!(!game.is_alive(a));
    assert_eq!(game.group(all).unwrap().len(), 1);
    check(&game);
    assert_panics("handler failed", || game.destroy_entity(b));
    assert!(game.group(all).unwrap().is_empty());
    assert_eq!(counter.live(), 0);
    check(&game);
}

/// Holds a counted value; panics when dropped if `armed` (after which its
/// field is still dropped, as Rust drops fields during unwinding).
struct Bomb {
    _payload: Counted,
    armed: bool,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed {
            panic!("a component's Drop panicked");
        }
    }
}

reactecs::component!(Bomb);

#[test]
fn every_value_is_dropped_exactly_once_when_a_drop_panics_as_the_context_is_dropped() {
    let counter = Counter::default();
    let bomb = |armed| Bomb {
        _payload: counter.make("bomb"),
        armed,
    };
    let mut game = Context::new();
    // Two archetypes, each with an armed bomb among other values, in the
    // first column and first chunk of its archetype, so everything else comes
    // after it.
    for i in 0..scale(2_000) {
        game.create_entity_with((bomb(i == 0), counter.make("beside"))).unwrap();
        game.create_entity_with((bomb(i == 1), CountedToo(counter.make("too")), Name(i.to_string())))
            .unwrap();
    }
    game.create_entity_with((counter.make("alone"),)).unwrap();
    assert_eq!(counter.live(), scale(2_000) as isize * 4 + 1);
    // The panic goes on, and it is the component's.
    assert_panics("a component's Drop panicked", || drop(game));
    assert_eq!(counter.live(), 0, "every value was dropped, none twice");
}
