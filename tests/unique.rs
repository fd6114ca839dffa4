//! Unique components: one holder at most, found without a scan.

mod common;

use common::*;
use reactecs::prelude::*;

#[test]
fn set_unique_creates_the_holder_then_replaces_its_value() {
    let mut game = Context::new();
    let spy = Spy::attach(&mut game);
    let holder = game.set_unique(Score(1)).unwrap();
    assert_eq!(
        spy.take(),
        [format!("created {holder}"), format!("added {holder} Score(1)")]
    );
    assert_eq!(game.set_unique(Score(2)).unwrap(), holder);
    assert_eq!(spy.take(), [format!("replaced {holder} Score(1) -> Score(2)")]);
    assert_eq!(game.unique::<Score>(), Some(&Score(2)));
    assert_eq!(game.unique_entity::<Score>(), Some(holder));
    assert_eq!(game.len(), 1);
    check(&game);
}

#[test]
fn get_mut_of_the_unique_holder_writes_silently() {
    let mut game = Context::new();
    game.set_unique(Score(1)).unwrap();
    let spy = Spy::attach(&mut game);
    game.get_mut::<Score>(game.unique_entity::<Score>().unwrap()).unwrap().0 = 5;
    assert_eq!(game.unique::<Score>(), Some(&Score(5)));
    assert!(spy.take().is_empty());
}

#[test]
fn a_second_holder_is_an_error_and_changes_nothing() {
    let mut game = Context::with_name("Game");
    let holder = game
        .create_entity_with((Score(1), Position { x: 0.0, y: 0.0 }))
        .unwrap();
    assert_eq!(game.unique_entity::<Score>(), Some(holder));
    let other = game.create_entity();
    let spy = Spy::attach(&mut game);
    let state = whole_state(&mut game);
    let err = game.add(other, Score(2)).unwrap_err();
    assert_eq!(
        err,
        Error::UniqueAlreadyHeld {
            context: "Game",
            component: "Score",
            holder,
            entity: Some(other)
        }
    );
    assert!(err.to_string().contains("set_unique"), "{err}");
    // `replace` of an absent component is an add: refused the same way.
    assert!(matches!(
        game.replace(other, Score(3)),
        Err(Error::UniqueAlreadyHeld { .. })
    ));
    // Creating an entity with it is refused too, and creates nothing.
    let before = game.len();
    assert!(matches!(
        game.create_entity_with(Score(4)),
        Err(Error::UniqueAlreadyHeld { entity: None, .. })
    ));
    assert_eq!(game.len(), before);
    assert!(spy.take().is_empty(), "a refused change fires nothing");
    assert!(!game.has::<Score>(other));
    assert_eq!(game.unique::<Score>(), Some(&Score(1)));
    assert_eq!(whole_state(&mut game), state);
    // The holder may still replace its own value.
    game.replace(holder, Score(7)).unwrap();
    assert_eq!(game.unique::<Score>(), Some(&Score(7)));
    check(&game);
}

#[test]
fn a_batch_stops_at_the_second_unique_and_keeps_the_first() {
    let mut game = Context::new();
    let mut produced = 0;
    let scores = (1..=3).map(|i| {
        produced += 1;
        Score(i)
    });
    let err = game.create_entities_with(scores).unwrap_err();
    assert!(matches!(err, Error::UniqueAlreadyHeld { entity: None, .. }));
    assert_eq!(produced, 2, "the third bundle is never taken from the iterator");
    assert_eq!(game.len(), 1);
    assert_eq!(game.unique::<Score>(), Some(&Score(1)));
    check(&game);
}

#[test]
fn take_unique_gives_the_value_back_and_destroys_an_emptied_holder() {
    let mut game = Context::with_name("Game");
    let holder = game.set_unique(Score(3)).unwrap();
    let spy = Spy::attach(&mut game);
    assert_eq!(game.take_unique::<Score>().unwrap(), Score(3));
    let events = spy.take();
    assert_eq!(events[0], format!("removed {holder} Score(3)"));
    assert_eq!(
        events[events.len() - 2..],
        [format!("destroyed {holder}"), format!("released {holder}")]
    );
    assert!(!game.is_alive(holder));
    assert_eq!(game.unique::<Score>(), None);
    assert_eq!(game.unique_entity::<Score>(), None);
    assert_eq!(
        game.take_unique::<Score>(),
        Err(Error::UniqueAbsent {
            context: "Game",
            component: "Score"
        })
    );
    check(&game);
}

#[test]
fn take_unique_keeps_a_holder_that_has_other_components() {
    let mut game = Context::new();
    let holder = game.create_entity_with((Score(3), Name("hud".into()))).unwrap();
    let _ = game.take_unique::<Score>().unwrap();
    assert!(game.is_alive(holder));
    assert_eq!(game.get::<Name>(holder).unwrap().0, "hud");
    // Another entity may now take it.
    let other = game.create_entity();
    game.add(other, Score(4)).unwrap();
    assert_eq!(game.unique_entity::<Score>(), Some(other));
    check(&game);
}

#[test]
fn losing_the_holder_frees_the_unique_component() {
    let mut game = Context::new();
    let first = game.set_unique(Score(1)).unwrap();
    game.destroy_entity(first).unwrap();
    assert_eq!(game.unique::<Score>(), None);
    let second = game.set_unique(Score(2)).unwrap();
    assert_ne!(second, first);
    let _ = game.take::<Score>(second).unwrap();
    assert_eq!(game.unique_entity::<Score>(), None);
    game.set_unique(Score(3)).unwrap();
    game.reset().unwrap();
    assert_eq!(game.unique::<Score>(), None);
    check(&game);
}

#[test]
fn unique_operations_on_a_component_not_declared_unique_are_errors() {
    let mut game = Context::with_name("Game");
    assert_eq!(
        game.set_unique(Position { x: 0.0, y: 0.0 }),
        Err(Error::NotUnique {
            context: "Game",
            component: "Position"
        })
    );
    assert!(game.is_empty());
    game.create_entity_with(Position { x: 0.0, y: 0.0 }).unwrap();
    game.create_entity_with(Position { x: 1.0, y: 0.0 }).unwrap();
    assert!(matches!(game.take_unique::<Position>(), Err(Error::NotUnique { .. })));
    assert_eq!(game.unique::<Position>(), None);
    assert_eq!(game.unique_entity::<Position>(), None);
}
