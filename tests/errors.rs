//! Errors: every misuse is a typed error with a helpful message, and leaves the
//! context exactly as it was.

mod common;

use common::*;
use reactecs::{Context, Entity, Error};

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
        component: None,
    };
    // A call about a component names it.
    let about_frozen = Error::StaleEntity {
        context: "Game",
        entity: e,
        component: Some("Frozen"),
    };
    assert_eq!(game.destroy_entity(e), Err(stale.clone()));
    assert_eq!(game.add(e, Frozen), Err(about_frozen.clone()));
    assert_eq!(game.remove::<Frozen>(e), Err(about_frozen.clone()));
    assert_eq!(game.take::<Frozen>(e), Err(about_frozen.clone()));
    assert_eq!(game.replace(e, Frozen), Err(about_frozen.clone()));
    assert_eq!(game.get::<Frozen>(e), Err(about_frozen.clone()));
    assert_eq!(game.get_mut::<Frozen>(e).map(|_| ()), Err(about_frozen.clone()));
    assert_eq!(
        about_frozen.to_string(),
        format!(
            "entity {e} is not alive in context `Game` (asked for `Frozen`): it was destroyed (check `is_alive` \
             before using a kept handle)"
        )
    );
    assert_eq!(game.creation_index(e), Err(stale.clone()));
    assert_eq!(game.entity(e).map(|_| ()).unwrap_err(), stale);
    assert_eq!(game.entity(e).map(|_| ()), Err(stale.clone()));
    assert_eq!(game.entity(e).map(|_| ()), Err(stale.clone()));
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
    let spy = Spy::attach(&mut game);
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
    assert_eq!(
        spy.take(),
        Vec::<String>::new(),
        "nothing was created, even for a moment"
    );
    assert_eq!(counter.live(), 0, "the rejected values were dropped once");
    let e = game.create_entity();
    assert_eq!(game.creation_index(e), Ok(0), "no creation index was used up");
    assert_eq!(e.index(), 0, "no slot was used up");
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
fn a_refused_operation_changes_nothing_but_may_leave_the_empty_archetype_it_looked_up() {
    use reactecs::{Matcher, PrimaryEntityIndex};
    let mut game = Context::with_name("Game");
    let names = game
        .add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))
        .unwrap();
    let named = game.add_group(Matcher::all_of::<Name>());
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
    assert_eq!(game.group(named).unwrap().len(), 1);
    assert_eq!(game.index(names).unwrap().get("hero"), Some(hero));
    assert_eq!(game.aerc().retain_count(other).unwrap(), 0);
    let after = game.storage_stats();
    assert_eq!(
        after.archetypes,
        stats.archetypes + 1,
        "the refused creation left no archetype; the refused add's target archetype is remembered"
    );
    assert_eq!(
        (after.chunks, after.spare_chunks, after.bytes),
        (stats.chunks, stats.spare_chunks, stats.bytes)
    );
    check(&game);

    // The archetype left behind is the one a legal change then uses; the
    // creation's is made when a creation is accepted.
    game.add(other, Name("villain".into())).unwrap();
    assert_eq!(game.storage_stats().archetypes, after.archetypes);
    game.remove::<Score>(holder).unwrap();
    game.create_entity_with((Score(2), Position { x: 1.0, y: 1.0 }))
        .unwrap();
    assert_eq!(game.storage_stats().archetypes, after.archetypes + 1);
    check(&game);
}

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

/// A flag, to check `set_flag` with foreign handles too.
#[derive(Debug, Default)]
struct Marked;
reactecs::component!(flag Marked);

/// Runs every call that takes an entity with `foreign` (a handle of another
/// context) on `game`, and checks each refuses it as a foreign entity,
/// naming the component where the call is about one, and changes nothing.
fn refuses_everywhere(game: &mut Context, foreign: Entity) {
    let before = snapshot(game);
    let name = game.name();
    let foreign_error = |component: Option<&'static str>| Error::ForeignEntity {
        context: name,
        entity: foreign,
        component,
    };
    let about = |component| Err(foreign_error(Some(component)));
    let owner = reactecs::Owner::new();
    assert_eq!(game.get::<Position>(foreign).map(|_| ()), about("Position"));
    assert_eq!(game.get_mut::<Position>(foreign).map(|_| ()), about("Position"));
    assert_eq!(game.add(foreign, Frozen), about("Frozen"));
    assert_eq!(game.remove::<Position>(foreign), about("Position"));
    assert_eq!(game.take::<Position>(foreign).map(|_| ()), about("Position"));
    assert_eq!(game.replace(foreign, pos(9.0)), about("Position"));
    assert_eq!(game.modify(foreign, |p: &mut Position| p.x = 9.0), about("Position"));
    assert_eq!(
        game.modify_with::<Position, &Velocity, _>(foreign, |p, v| p.x += v.x),
        about("Position")
    );
    assert_eq!(game.set_flag::<Marked>(foreign, true), about("Marked"));
    let unnamed = Err(foreign_error(None));
    assert_eq!(game.destroy_entity(foreign), unnamed);
    assert_eq!(game.entity(foreign).map(|_| ()), unnamed);
    assert_eq!(game.entity_mut(foreign).map(|_| ()), unnamed);
    assert_eq!(game.creation_index(foreign).map(|_| ()), unnamed);
    assert_eq!(game.aerc().is_enabled(foreign).map(|_| ()), unnamed);
    assert_eq!(game.retain(foreign, owner), unnamed);
    assert_eq!(game.release(foreign, owner), unnamed);
    assert_eq!(game.aerc().retain_count(foreign).map(|_| ()), unnamed);
    assert_eq!(game.entity(foreign).map(|_| ()), unnamed);
    assert_eq!(game.entity(foreign).map(|_| ()), unnamed);
    assert!(!game.is_alive(foreign) && !game.has::<Position>(foreign) && !game.has::<Marked>(foreign));
    assert_eq!(snapshot(game), before, "nothing changed");
    let message = foreign_error(Some("Position")).to_string();
    assert!(
        message.contains("does not belong to context") && message.contains("(asked for `Position`)"),
        "{message}"
    );
    check(game);
}

#[test]
fn a_handle_from_another_context_is_refused_by_every_operation() {
    // Two declared contexts, and two undeclared ones, each with an entity in
    // every slot the other's handles name.
    let mut game = Context::of::<Game>();
    let mut ui = Context::of::<Ui>();
    let mut plain = Context::with_name("Plain");
    let mut other = Context::with_name("Other");
    for context in [&mut game, &mut ui, &mut plain, &mut other] {
        for i in 0..3 {
            context
                .create_entity_with((pos(i as f32), Velocity { x: 1.0, y: 0.0 }))
                .unwrap();
        }
    }
    let handles = |context: &Context| context.entities().collect::<Vec<_>>();
    let (of_game, of_ui, of_plain, of_other) = (handles(&game), handles(&ui), handles(&plain), handles(&other));
    for (context, foreign) in [
        (&mut game, &of_ui),
        (&mut ui, &of_game),
        (&mut plain, &of_other),
        (&mut other, &of_plain),
    ] {
        for &e in foreign {
            refuses_everywhere(context, e);
        }
    }
    for &e in &of_plain {
        refuses_everywhere(&mut game, e);
    }
    // A dropped context's handles too.
    let gone = {
        let mut dropped = Context::with_name("Dropped");
        dropped.create_entity_with((pos(0.0),)).unwrap()
    };
    refuses_everywhere(&mut game, gone);
}

/// `Entity::PLACEHOLDER` (`Entity::default()`) fills plain-data tables, and
/// every context refuses it as a foreign handle: a fresh one, one with
/// entities, one of a declared context, a reset one.
#[test]
fn the_placeholder_entity_is_refused_by_every_operation() {
    let mut fresh = Context::with_name("Fresh");
    let table = vec![Entity::default(); fresh.len() + 4];
    assert!(table.len() == 4 && table.iter().all(|&e| e == Entity::PLACEHOLDER));
    assert_eq!(Entity::PLACEHOLDER.to_string(), "placeholder");
    assert_eq!(format!("{:?}", Entity::PLACEHOLDER), "Entity(placeholder)");
    refuses_everywhere(&mut fresh, Entity::default());
    let mut game = Context::of::<Game>();
    let mut plain = Context::with_name("Plain");
    for context in [&mut game, &mut plain] {
        for i in 0..3 {
            context
                .create_entity_with((pos(i as f32), Velocity { x: 1.0, y: 0.0 }))
                .unwrap();
        }
        refuses_everywhere(context, table[0]);
        assert!(context.entities().all(|e| e != Entity::PLACEHOLDER));
    }
    game.destroy_all_entities();
    game.reset().unwrap();
    refuses_everywhere(&mut game, Entity::PLACEHOLDER);
    // A command recorded on it fails at playback, as a foreign handle.
    let mut buffer = reactecs::CommandBuffer::new();
    buffer.add(Entity::PLACEHOLDER, Frozen);
    let failure = buffer.playback(&mut plain).unwrap_err();
    assert_eq!(buffer.resolve(Entity::PLACEHOLDER), None, "it stands for no entity");
    assert!(format!("{failure:?}").contains("ForeignEntity"), "{failure:?}");
}

#[test]
fn a_reset_context_gives_out_slots_as_a_new_one() {
    let fresh = |game: &mut Context| {
        let made: Vec<Entity> = (0..5)
            .map(|i| game.create_entity_with((pos(i as f32),)).unwrap())
            .collect();
        let listed: Vec<Entity> = game.entities().collect();
        assert_eq!(listed, made, "iterated in creation order");
        made.iter().map(|e| e.index()).collect::<Vec<_>>()
    };
    let mut game = Context::with_name("Game");
    let first = fresh(&mut game);
    let before_reset = game.entities().next().unwrap();
    game.destroy_all_entities();
    game.reset().unwrap();
    assert_eq!(fresh(&mut game), first, "the same slots, in the same order");
    assert!(
        matches!(game.destroy_entity(before_reset), Err(Error::StaleEntity { .. })),
        "a handle from before the reset is this context's, stale"
    );
    check(&game);
}

/// 10,000 contexts of one entity each, made (and dropped) one after
/// another: every handle of an earlier context is refused by every later
/// one, as a foreign entity, and each context still reads its own. (With
/// creation numbers taken in blocks of 2^20 from one process-wide counter,
/// the 4,097th context's first entity had the first one's slot and tag.)
#[test]
fn handles_of_ten_thousand_earlier_contexts_are_refused_by_every_later_one() {
    let contexts = if cfg!(miri) { 40 } else { 10_000 };
    let mut handles: Vec<Entity> = Vec::with_capacity(contexts);
    for made in 0..contexts {
        let mut game = Context::with_name("Game");
        let own = game.create_entity_with((pos(made as f32),)).unwrap();
        assert!(
            handles.iter().all(|&old| !game.is_alive(old)),
            "context {made} took an earlier context's handle for its own"
        );
        // The error names the handle as foreign (a sample: the first, the
        // last few and every 97th).
        for &old in handles.iter().step_by(97).chain(handles.iter().rev().take(3)) {
            assert_eq!(
                game.get::<Position>(old).map(|_| ()),
                Err(Error::ForeignEntity {
                    context: "Game",
                    entity: old,
                    component: Some("Position"),
                })
            );
        }
        assert_eq!(game.get::<Position>(own).unwrap().x, made as f32);
        handles.push(own);
    }
}
