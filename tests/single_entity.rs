//! Single-entity access: the entity view (`entity_mut`: several components
//! with one lookup, silent writes) and observed single-entity writes
//! (`modify`, `modify_with`: told like `replace`, the old value cloned only
//! when someone is to see it).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::*;
use reactecs::prelude::*;

/// A component that counts its clones, to see when `modify` clones.
#[derive(Debug, PartialEq)]
struct Hp(u32);

static HP_CLONES: AtomicUsize = AtomicUsize::new(0);

impl Clone for Hp {
    fn clone(&self) -> Self {
        HP_CLONES.fetch_add(1, Ordering::SeqCst);
        Hp(self.0)
    }
}

/// A plain `Clone` component, for the tests that do not count clones (they
/// run at the same time as the one that does).
#[derive(Clone, Debug, PartialEq)]
struct Level(u32);

reactecs::component!(Hp, Level);

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

fn vel(x: f32) -> Velocity {
    Velocity { x, y: 0.0 }
}

#[test]
fn an_entity_view_reads_and_writes_several_components_with_one_lookup() {
    let mut game = Context::with_name("Game");
    let e = game.create_entity_with((pos(1.0), vel(2.0), Name("a".into()))).unwrap();
    let other = game.create_entity_with(pos(100.0)).unwrap();
    let mut view = game.entity_mut(e).unwrap();
    assert_eq!(view.entity(), e);
    assert!(view.has::<Position>() && view.has::<Velocity>() && !view.has::<Frozen>());
    assert_eq!(view.get::<Name>().unwrap(), &Name("a".into()));
    {
        let (p, v, name, frozen, me) = view
            .query::<(&mut Position, &Velocity, &Name, Option<&Frozen>, Entity)>()
            .unwrap();
        p.x += v.x;
        assert_eq!((name.0.as_str(), frozen, me), ("a", None, e));
    }
    view.get_mut::<Velocity>().unwrap().x = 0.5;
    let (p, v) = view.query::<(Option<&mut Position>, Option<&Velocity>)>().unwrap();
    assert_eq!((p.map(|p| p.x), v.map(|v| v.x)), (Some(3.0), Some(0.5)));
    let read = view.as_readonly();
    assert_eq!(read.get::<Position>().unwrap(), &pos(3.0));
    assert_eq!(game.get::<Position>(e).unwrap(), &pos(3.0));
    assert_eq!(game.get::<Velocity>(e).unwrap(), &vel(0.5));
    assert_eq!(
        game.get::<Position>(other).unwrap(),
        &pos(100.0),
        "another entity is untouched"
    );
    check(&game);
}

#[test]
fn writes_through_an_entity_view_fire_no_event_and_are_collected() {
    let mut game = Context::new();
    let moved = game.add_collector(Matcher::all_of::<Position>().updated());
    let group = game.add_group(Matcher::all_of::<Position>());
    let updates = Arc::new(AtomicUsize::new(0));
    let seen = updates.clone();
    game.subscribe_group(group, move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    let e = game.create_entity_with((pos(1.0), vel(1.0))).unwrap();
    let spy = Spy::attach(&mut game);
    let before = updates.load(Ordering::SeqCst);
    let mut view = game.entity_mut(e).unwrap();
    view.get_mut::<Position>().unwrap().x = 9.0;
    view.query::<&mut Position>().unwrap().y = 9.0;
    assert_eq!(game.get::<Position>(e).unwrap(), &Position { x: 9.0, y: 9.0 });
    assert_eq!(spy.take(), Vec::<String>::new());
    assert_eq!(updates.load(Ordering::SeqCst), before);
    assert_eq!(game.collector(moved).unwrap().entities(), [e]);
}

#[test]
fn an_entity_view_answers_none_for_absent_components_and_refuses_dead_entities_and_aliasing() {
    let mut game = Context::with_name("Game");
    let e = game.create_entity_with((pos(1.0), vel(1.0))).unwrap();
    let mut view = game.entity_mut(e).unwrap();
    // Asked about one component, a view answers `None` for an absent one
    // (its entity is alive: absence is the only other answer).
    assert_eq!(view.get::<Frozen>(), None);
    assert_eq!(view.get_mut::<Frozen>(), None);
    // The first required component of the query the entity lacks is named.
    match view.query::<(&Position, &mut Name, &Frozen)>() {
        Err(Error::ComponentAbsent { component, .. }) => assert_eq!(component, "Name"),
        other => panic!("expected ComponentAbsent, got {:?}", other.err()),
    }
    for aliasing in [
        view.query::<(&mut Position, &Position)>().err(),
        view.query::<(&Velocity, Option<&mut Velocity>)>().err(),
    ] {
        assert!(
            matches!(aliasing, Some(Error::QueryAliasing { context: "Game", .. })),
            "{aliasing:?}"
        );
    }
    // Retained and destroyed: disabled; then released: stale.
    let owner = Owner::new();
    game.retain(e, owner).unwrap();
    game.destroy_entity(e).unwrap();
    assert!(matches!(game.entity_mut(e), Err(Error::EntityDisabled { .. })));
    game.release(e, owner).unwrap();
    assert!(matches!(game.entity_mut(e), Err(Error::StaleEntity { .. })));
    check(&game);
}

/// Runs `change` on a world with a spy, a group handler logging `Updated`
/// events and an `updated()` collector; returns what was logged (the
/// entity written `e`: each world's handle is its own) and how many entities
/// the collector holds, for the test to compare between worlds.
fn observed(change: impl Fn(&mut Context, Entity)) -> (Vec<String>, Vec<String>, usize) {
    let mut game = Context::new();
    let e = game.create_entity_with((Level(1), pos(0.0))).unwrap();
    let group = game.add_group(Matcher::all_of::<Level>());
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    game.subscribe_group(group, move |event| {
        if let GroupEvent::Updated { entity, old, new, .. } = event {
            sink.lock()
                .unwrap()
                .push(format!("updated {entity} {old:?} -> {new:?}"));
        }
    })
    .unwrap();
    let collector = game.add_collector(Matcher::all_of::<Level>().updated());
    let spy = Spy::attach(&mut game);
    change(&mut game, e);
    let collected = game.collector(collector).unwrap().entities();
    assert!(collected.iter().all(|&c| c == e));
    let collected = collected.len();
    check(&game);
    let named = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .map(|line| line.replace(&e.to_string(), "e"))
            .collect()
    };
    let group_log = named(std::mem::take(&mut *log.lock().unwrap()));
    (named(spy.take()), group_log, collected)
}

#[test]
fn modify_is_told_exactly_as_replace_is() {
    let by_replace = observed(|game, e| {
        let next = Level(game.get::<Level>(e).unwrap().0 + 1);
        game.replace(e, next).unwrap();
    });
    let by_modify = observed(|game, e| {
        let got = game.modify(e, |level: &mut Level| {
            level.0 += 1;
            level.0
        });
        assert_eq!(got, Ok(2), "modify returns what the closure returns");
    });
    let by_modify_with = observed(|game, e| {
        game.modify_with::<Level, (&Position, Entity), _>(e, |level, (p, me)| {
            assert_eq!((p.x, me), (0.0, e));
            level.0 += 1;
        })
        .unwrap();
    });
    assert_eq!(by_replace.0, ["replaced e Level(1) -> Level(2)"]);
    assert_eq!(by_replace.1, ["updated e Level(1) -> Level(2)"]);
    assert_eq!(by_replace.2, 1);
    assert_eq!(by_modify, by_replace);
    assert_eq!(by_modify_with, by_replace);
}

#[test]
fn modify_clones_the_old_value_only_for_those_who_see_it() {
    let clones = || HP_CLONES.load(Ordering::SeqCst);
    let mut game = Context::new();
    let e = game.create_entity_with(Hp(10)).unwrap();
    let before = clones();
    // Nobody listens: no clone.
    game.modify(e, |hp: &mut Hp| hp.0 -= 1).unwrap();
    // A collector wants the entity, not the old value: no clone.
    let hurt = game.add_collector(Matcher::all_of::<Hp>().updated());
    game.modify(e, |hp: &mut Hp| hp.0 -= 1).unwrap();
    assert_eq!(clones(), before);
    assert_eq!(game.collector(hurt).unwrap().entities(), [e]);
    // A subscriber sees the old value: one clone per change.
    let spy = Spy::attach(&mut game);
    game.modify(e, |hp: &mut Hp| hp.0 -= 1).unwrap();
    assert_eq!(clones(), before + 1);
    assert_eq!(spy.take(), [format!("replaced {e} Hp(8) -> Hp(7)")]);
    assert_eq!(game.get::<Hp>(e).unwrap(), &Hp(7));
}

#[test]
fn modify_re_keys_indices_and_a_refused_key_puts_the_old_value_back() {
    let mut game = Context::with_name("Game");
    let by_level = game
        .add_index(PrimaryEntityIndex::new("Level", |level: &Level| level.0))
        .unwrap();
    let a = game.create_entity_with(Level(1)).unwrap();
    let b = game.create_entity_with(Level(2)).unwrap();
    game.modify(a, |level: &mut Level| level.0 = 3).unwrap();
    assert_eq!(game.index(by_level).map(|index| index.get(&3)), Ok(Some(a)));
    assert_eq!(game.index(by_level).map(|index| index.get(&1)), Ok(None));
    // Level 2 is b's: the change is refused, a keeps 3, nothing is told.
    let collector = game.add_collector(Matcher::all_of::<Level>().updated());
    let spy = Spy::attach(&mut game);
    match game.modify_with::<Level, (), _>(a, |level, ()| level.0 = 2) {
        Err(Error::DuplicatePrimaryKey {
            context,
            index,
            key,
            holder,
            entity,
        }) => {
            assert_eq!(
                (context, index, key.as_str(), holder, entity),
                ("Game", "Level", "2", b, Some(a))
            );
        }
        other => panic!("expected DuplicatePrimaryKey, got {other:?}"),
    }
    assert_eq!(game.get::<Level>(a).unwrap(), &Level(3));
    assert_eq!(game.index(by_level).map(|index| index.get(&3)), Ok(Some(a)));
    assert_eq!(game.index(by_level).map(|index| index.get(&2)), Ok(Some(b)));
    assert_eq!(spy.take(), Vec::<String>::new());
    assert!(game.collector(collector).unwrap().is_empty());
    check(&game);
}

#[test]
fn modify_refuses_dead_entities_absent_components_and_aliasing() {
    let mut game = Context::with_name("Game");
    let e = game.create_entity_with((Level(1), pos(0.0))).unwrap();
    let absent = game.modify(e, |h: &mut Health| h.0 += 1);
    assert!(
        matches!(
            absent,
            Err(Error::ComponentAbsent {
                component: "Health",
                ..
            })
        ),
        "{absent:?}"
    );
    // The first component of `Q` the entity lacks is named.
    let absent = game.modify_with::<Level, (&Position, &Velocity, &Name), _>(e, |_, _| ());
    assert!(
        matches!(
            absent,
            Err(Error::ComponentAbsent {
                component: "Velocity",
                ..
            })
        ),
        "{absent:?}"
    );
    let aliasing = game.modify_with::<Level, &Level, _>(e, |_, _| ());
    assert!(
        matches!(aliasing, Err(Error::QueryAliasing { component: "Level", .. })),
        "{aliasing:?}"
    );
    assert_eq!(
        game.get::<Level>(e).unwrap(),
        &Level(1),
        "a refused call changes nothing"
    );
    let owner = Owner::new();
    game.retain(e, owner).unwrap();
    game.destroy_entity(e).unwrap();
    assert!(matches!(
        game.modify(e, |l: &mut Level| l.0 += 1),
        Err(Error::EntityDisabled { .. })
    ));
    game.release(e, owner).unwrap();
    assert!(matches!(
        game.modify(e, |l: &mut Level| l.0 += 1),
        Err(Error::StaleEntity { .. })
    ));
    check(&game);
}

#[test]
fn a_panicking_modify_keeps_what_was_written_and_tells_nobody() {
    let mut game = Context::new();
    let e = game.create_entity_with(Level(1)).unwrap();
    let collector = game.add_collector(Matcher::all_of::<Level>().updated());
    let group = game.add_group(Matcher::all_of::<Level>());
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = heard.clone();
    game.subscribe_group(group, move |event: &GroupEvent<'_>| {
        sink.lock().unwrap().push(format!("{event:?}"))
    })
    .unwrap();
    let spy = Spy::attach(&mut game);
    assert_panics("halfway", || {
        game.modify(e, |level: &mut Level| {
            level.0 = 5;
            panic!("halfway");
        })
    });
    assert_eq!(game.get::<Level>(e).unwrap(), &Level(5));
    assert_eq!(spy.take(), Vec::<String>::new(), "no context event");
    assert_eq!(*heard.lock().unwrap(), Vec::<String>::new(), "no group event");
    assert!(game.collector(collector).unwrap().is_empty());
    check(&game);
}

/// A flag of this file's own, for `EntityMut::set_flag`.
#[derive(Debug, Default)]
struct Stunned;
reactecs::component!(flag Stunned);

/// The changes `EntityMut` makes are the `Context` calls' own: the same
/// events (context and group), the same collector contents, the same final
/// entity, the same errors for refused changes, which change nothing.
#[test]
fn changes_through_an_entity_view_are_the_context_calls() {
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let record = |outcomes: &Arc<Mutex<Vec<String>>>, what: String| outcomes.lock().unwrap().push(what);
    let (by_view, by_context) = (outcomes.clone(), Arc::new(Mutex::new(Vec::new())));
    let through_view = observed(move |game, e| {
        let say = |what: String| record(&by_view, what.replace(&e.to_string(), "e"));
        let mut view = game.entity_mut(e).unwrap();
        view.add(vel(1.0)).unwrap().replace(Level(2)).unwrap();
        let doubled = view.modify(|level: &mut Level| {
            level.0 *= 2;
            level.0
        });
        say(format!("{doubled:?}"));
        view.set_flag::<Stunned>(true)
            .unwrap()
            .set_flag::<Stunned>(true)
            .unwrap();
        say(format!("{:?}", view.take::<Velocity>()));
        view.remove::<Position>().unwrap();
        say(format!("{:?}", view.add(Level(9)).map(|_| ())));
        say(format!("{:?}", view.remove::<Velocity>().map(|_| ())));
        say(format!("{:?}", view.take::<Position>()));
        say(format!(
            "{:?} {}",
            view.get::<Level>().ok_or("absent"),
            view.has::<Stunned>()
        ));
    });
    let sink = by_context.clone();
    let through_context = observed(move |game, e| {
        let say = |what: String| record(&sink, what.replace(&e.to_string(), "e"));
        game.add(e, vel(1.0)).unwrap();
        game.replace(e, Level(2)).unwrap();
        let doubled = game.modify(e, |level: &mut Level| {
            level.0 *= 2;
            level.0
        });
        say(format!("{doubled:?}"));
        game.set_flag::<Stunned>(e, true).unwrap();
        game.set_flag::<Stunned>(e, true).unwrap();
        say(format!("{:?}", game.take::<Velocity>(e)));
        game.remove::<Position>(e).unwrap();
        say(format!("{:?}", game.add(e, Level(9))));
        say(format!("{:?}", game.remove::<Velocity>(e)));
        say(format!("{:?}", game.take::<Position>(e)));
        say(format!("{:?} {}", game.get::<Level>(e), game.has::<Stunned>(e)));
    });
    assert_eq!(through_view, through_context, "events, group log and collector agree");
    assert!(!through_view.0.is_empty() && through_view.2 == 1);
    let view_outcomes = outcomes.lock().unwrap().clone();
    let context_outcomes = by_context.lock().unwrap().clone();
    assert_eq!(view_outcomes, context_outcomes, "results and errors agree");
    assert_eq!(view_outcomes[0], "Ok(4)");
    assert!(
        view_outcomes[2].contains("ComponentAlreadyPresent"),
        "{}",
        view_outcomes[2]
    );
    assert!(view_outcomes[3].contains("ComponentAbsent"), "{}", view_outcomes[3]);
    assert!(
        view_outcomes[5].starts_with("Ok(Level(4)) true"),
        "{}",
        view_outcomes[5]
    );
}

/// `EntityRef::query` reads several components at once, `None` when a
/// required one is absent; `Option<&T>` and `Entity` work as in queries.
#[test]
fn an_entity_ref_queries_several_components() {
    let mut game = Context::new();
    let e = game.create_entity_with((pos(1.0), Level(3))).unwrap();
    game.set_flag::<Stunned>(e, true).unwrap();
    let view = game.entity(e).unwrap();
    assert_eq!(
        view.query::<(Entity, &Position, &Level, Option<&Velocity>)>(),
        Some((e, &pos(1.0), &Level(3), None))
    );
    assert!(view.query::<&Stunned>().is_some(), "a flag is read too");
    assert_eq!(view.query::<(&Position, &Velocity)>(), None);
}
