//! Errors: every misuse is a typed error with a helpful message, and leaves the
//! context exactly as it was.

mod common;

use common::*;
use reactecs::{Context, Error};

/// Everything observable about an entity, to compare before and after.
fn snapshot(game: &Context) -> Vec<String> {
    game.entities()
        .map(|e| format!("{:?}", game.entity(e).unwrap()))
        .collect()
}

#[test]
fn stale_entity_is_an_error_for_every_operation() {
    let mut game = Context::with_name("Game");
    let e = game.create_entity();
    game.destroy_entity(e).unwrap();
    let stale = Error::StaleEntity {
        context: "Game",
        entity: e,
    };
    assert_eq!(game.destroy_entity(e), Err(stale.clone()));
    assert_eq!(game.add(e, Frozen), Err(stale.clone()));
    assert_eq!(game.remove::<Frozen>(e), Err(stale.clone()));
    assert_eq!(game.take::<Frozen>(e), Err(stale.clone()));
    assert_eq!(game.replace(e, Frozen), Err(stale.clone()));
    assert_eq!(game.get::<Frozen>(e), Err(stale.clone()));
    assert_eq!(game.get_mut::<Frozen>(e).map(|_| ()), Err(stale.clone()));
    assert_eq!(game.creation_index(e), Err(stale.clone()));
    assert_eq!(game.entity(e).map(|_| ()).unwrap_err(), stale);
    assert!(game.component_ids(e).is_err());
    assert!(game.component_names(e).is_err());
    assert!(!game.has::<Frozen>(e));
    check(&game);
}

#[test]
fn add_of_a_present_component_is_an_error_and_keeps_the_old_value() {
    let mut game = Context::with_name("Game");
    let e = game.create_entity_with((Name("old".into()), Frozen)).unwrap();
    let other = game.create_entity_with((Name("other".into()),)).unwrap();
    let before = snapshot(&game);
    let err = game.add(e, Name("new".into())).unwrap_err();
    assert_eq!(
        err,
        Error::ComponentAlreadyPresent {
            context: "Game",
            entity: e,
            component: "Name"
        }
    );
    assert_eq!(
        err.to_string(),
        format!("entity {e} in context `Game` already has component `Name`: use `replace` to overwrite it")
    );
    assert_eq!(snapshot(&game), before);
    assert_eq!(game.get::<Name>(other).unwrap().0, "other");
    check(&game);
}

#[test]
fn remove_take_get_of_an_absent_component_are_errors() {
    let mut game = Context::with_name("Game");
    let e = game.create_entity_with((Frozen,)).unwrap();
    let before = snapshot(&game);
    let absent = Error::ComponentAbsent {
        context: "Game",
        entity: e,
        component: "Name",
    };
    assert_eq!(game.remove::<Name>(e), Err(absent.clone()));
    assert_eq!(game.take::<Name>(e), Err(absent.clone()));
    assert_eq!(game.get::<Name>(e), Err(absent.clone()));
    assert_eq!(game.get_mut::<Name>(e).map(|_| ()), Err(absent.clone()));
    assert!(absent.to_string().contains("has no component `Name`"));
    assert_eq!(snapshot(&game), before);
    check(&game);
}

#[test]
fn a_bundle_with_a_type_twice_is_an_error_and_creates_nothing() {
    let counter = Counter::default();
    let mut game = Context::with_name("Game");
    let err = game
        .create_entity_with((counter.make("a"), Frozen, counter.make("b")))
        .unwrap_err();
    assert_eq!(
        err,
        Error::DuplicateComponent {
            context: "Game",
            component: "Counted"
        }
    );
    assert!(game.is_empty());
    assert_eq!(counter.live(), 0, "the rejected values were dropped once");
    let e = game.create_entity();
    assert_eq!(game.creation_index(e), Ok(0), "no creation index was used up");
    check(&game);
}

#[test]
fn stale_message_names_context_and_entity() {
    let mut game = Context::with_name("Ui");
    let e = game.create_entity();
    game.destroy_entity(e).unwrap();
    let message = game.destroy_entity(e).unwrap_err().to_string();
    assert!(message.contains(&format!("entity {e}")), "{message}");
    assert!(message.contains("`Ui`"), "{message}");
}

#[test]
fn errors_are_std_errors() {
    fn takes(_: &dyn std::error::Error) {}
    let mut game = Context::new();
    let e = game.create_entity();
    takes(&game.remove::<Frozen>(e).unwrap_err());
}

/// What "changed nothing" means for storage: a refused operation may leave
/// the archetype it would have moved the entity to (empty, with no chunk),
/// as a cache that any later operation would have made; nothing else. The
/// error docs say so.
#[test]
fn a_refused_operation_changes_nothing_but_may_leave_an_empty_archetype() {
    use reactecs::{Matcher, PrimaryEntityIndex};
    let mut game = Context::with_name("Game");
    let names = game
        .add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))
        .unwrap();
    let named = game.group(Matcher::all_of::<Name>());
    let holder = game.set_unique(Score(1)).unwrap();
    let hero = game.create_entity_with((Name("hero".into()),)).unwrap();
    let other = game.create_entity_with((Position { x: 0.0, y: 0.0 },)).unwrap();
    let spy = Spy::attach(&mut game);
    let (before, stats) = (snapshot(&game), game.storage_stats());

    // A second holder of a unique component, as a new entity.
    let second = game.create_entity_with((Score(2), Position { x: 1.0, y: 1.0 }));
    assert!(
        matches!(second, Err(Error::UniqueAlreadyHeld { holder: h, .. }) if h == holder),
        "{second:?}"
    );
    // A key the primary index has for another entity, by `add`.
    let clash = game.add(other, Name("hero".into()));
    assert!(
        matches!(clash, Err(Error::DuplicatePrimaryKey { holder: h, .. }) if h == hero),
        "{clash:?}"
    );

    assert_eq!(snapshot(&game), before, "no entity or component changed");
    assert!(spy.take().is_empty(), "no event fired");
    assert_eq!(game.get_group(named).unwrap().len(), 1);
    assert_eq!(game.entity_with(names, "hero").unwrap(), Some(hero));
    assert_eq!(game.retain_count(other).unwrap(), 0);
    let after = game.storage_stats();
    assert_eq!(
        after.archetypes,
        stats.archetypes + 2,
        "the two target archetypes are remembered"
    );
    assert_eq!(
        (after.chunks, after.spare_chunks, after.bytes),
        (stats.chunks, stats.spare_chunks, stats.bytes)
    );
    check(&game);

    // The archetypes left behind are the ones a legal change then uses.
    game.add(other, Name("villain".into())).unwrap();
    game.remove::<Score>(holder).unwrap();
    game.create_entity_with((Score(2), Position { x: 1.0, y: 1.0 }))
        .unwrap();
    assert_eq!(game.storage_stats().archetypes, after.archetypes);
    check(&game);
}
