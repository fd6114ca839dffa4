//! AERC (automatic entity reference counting): retain / release with owners,
//! destroyed-but-retained entities (disabled, in no group, slot kept), the
//! released event, slot reuse, the safe and fast modes, and `reset` refusing
//! while anything is retained.

mod common;

use common::*;
use reactecs::AercMode;
use reactecs::prelude::*;

fn game() -> Context {
    Context::with_name("Game")
}

fn fast_game() -> Context {
    Context::builder().name("Game").aerc(AercMode::Fast).build()
}

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

fn disabled(entity: Entity) -> Error {
    Error::EntityDisabled {
        context: "Game",
        entity,
        component: None,
    }
}

/// [`Error::EntityDisabled`] for a call about `component`.
fn disabled_for(entity: Entity, component: &'static str) -> Error {
    Error::EntityDisabled {
        context: "Game",
        entity,
        component: Some(component),
    }
}

fn stale(entity: Entity) -> Error {
    Error::StaleEntity {
        context: "Game",
        entity,
        component: None,
    }
}

/// [`Error::StaleEntity`] for a call about `component`.
fn stale_for(entity: Entity, component: &'static str) -> Error {
    Error::StaleEntity {
        context: "Game",
        entity,
        component: Some(component),
    }
}

#[test]
fn each_new_owner_is_distinct() {
    let a = Owner::new();
    let b = Owner::new();
    assert_ne!(a, b);
    assert_ne!(a.to_string(), b.to_string());
    assert!(a.to_string().starts_with("owner #"), "{a}");
}

#[test]
fn contexts_are_safe_by_default_and_fast_when_built_so() {
    assert_eq!(Context::new().aerc().mode(), AercMode::Safe);
    assert_eq!(Context::with_name("Game").aerc().mode(), AercMode::Safe);
    assert_eq!(Context::builder().build().aerc().mode(), AercMode::Safe);
    let fast = fast_game();
    assert_eq!(fast.aerc().mode(), AercMode::Fast);
    assert_eq!(fast.name(), "Game");
}

#[test]
fn a_new_entity_is_enabled_and_not_retained() {
    let mut game = game();
    let e = game.create_entity();
    assert_eq!(game.aerc().is_enabled(e), Ok(true));
    assert_eq!(game.aerc().retain_count(e), Ok(0));
    assert_eq!(game.aerc().owners(e), Ok(Some(&[][..])));
    assert_eq!(game.aerc().retained_destroyed().count(), 0);
}

#[test]
fn retain_and_release_count_each_owner() {
    let mut game = game();
    let spy = Spy::attach(&mut game);
    let e = game.create_entity_with(pos(1.0)).unwrap();
    let (a, b) = (Owner::new(), Owner::new());

    game.retain(e, a).unwrap();
    game.retain(e, b).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(2));
    assert_eq!(game.aerc().owners(e), Ok(Some(&[a, b][..])));

    game.release(e, a).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(1));
    assert_eq!(game.aerc().owners(e), Ok(Some(&[b][..])));

    game.release(e, b).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(0));
    assert_eq!(game.aerc().owners(e), Ok(Some(&[][..])));
    // Releasing an alive entity frees nothing: it is still alive and whole.
    assert!(game.is_alive(e));
    assert_eq!(game.get::<Position>(e), Ok(&pos(1.0)));
    assert_eq!(spy.take_starting_with("released"), Vec::<String>::new());
    check(&game);
}

#[test]
fn releasing_moves_the_newest_owner_into_the_released_ones_place() {
    let mut game = game();
    let e = game.create_entity();
    let (a, b, c) = (Owner::new(), Owner::new(), Owner::new());
    for owner in [a, b, c] {
        game.retain(e, owner).unwrap();
    }
    assert_eq!(game.aerc().owners(e), Ok(Some(&[a, b, c][..])));
    game.release(e, a).unwrap();
    assert_eq!(game.aerc().owners(e), Ok(Some(&[c, b][..])));
}

#[test]
fn destroying_an_unretained_entity_releases_it_right_after_destroyed() {
    let mut game = game();
    let e = game.create_entity_with(pos(1.0)).unwrap();
    let spy = Spy::attach(&mut game);
    game.destroy_entity(e).unwrap();
    let events = spy.take();
    assert_eq!(
        events[events.len() - 2..],
        [format!("destroyed {e}"), format!("released {e}")]
    );
    assert_eq!(events.iter().filter(|line| line.starts_with("released")).count(), 1);
    assert_eq!(game.aerc().is_enabled(e), Err(stale(e)));
    assert_eq!(game.aerc().retained_destroyed().count(), 0);
    check(&game);
}

#[test]
fn a_destroyed_retained_entity_is_disabled_until_its_last_release() {
    let mut game = game();
    let e = game.create_entity_with(pos(1.0)).unwrap();
    let other = game.create_entity();
    let (a, b) = (Owner::new(), Owner::new());
    game.retain(e, a).unwrap();
    game.retain(e, b).unwrap();
    let spy = Spy::attach(&mut game);

    game.destroy_entity(e).unwrap();
    let events = spy.take();
    assert_eq!(
        events.last(),
        Some(&format!("destroyed {e}")),
        "not released while retained"
    );
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
    assert!(!game.is_alive(e));
    assert_eq!(game.len(), 1, "a disabled entity is not counted");
    assert_eq!(game.entities().collect::<Vec<_>>(), [other]);
    assert_eq!(game.aerc().retained_destroyed().collect::<Vec<_>>(), [e]);
    assert_eq!(game.aerc().retain_count(e), Ok(2));
    check(&game);

    game.release(e, a).unwrap();
    assert_eq!(spy.take(), Vec::<String>::new());
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
    assert_eq!(game.aerc().owners(e), Ok(Some(&[b][..])));

    game.release(e, b).unwrap();
    assert_eq!(spy.take(), [format!("released {e}")]);
    assert_eq!(game.aerc().is_enabled(e), Err(stale(e)));
    assert_eq!(game.aerc().retained_destroyed().count(), 0);
    assert_eq!(game.len(), 1);
    check(&game);
}

#[test]
fn a_destroyed_retained_entity_is_in_no_group() {
    let mut game = game();
    let with_position = game.add_group(Matcher::all_of::<Position>());
    let not_frozen = game.add_group(Matcher::none_of::<Frozen>());
    let e = game.create_entity_with(pos(1.0)).unwrap();
    assert!(game.group(with_position).unwrap().contains(e));
    assert!(game.group(not_frozen).unwrap().contains(e));

    game.retain(e, Owner::new()).unwrap();
    game.destroy_entity(e).unwrap();
    for id in [with_position, not_frozen] {
        let group = game.group(id).unwrap();
        assert!(!group.contains(e));
        assert_eq!(group.len(), 0);
        assert_eq!(group.iter().count(), 0);
    }
    // New entities join; the disabled one still does not.
    let f = game.create_entity();
    let group = game.group(not_frozen).unwrap();
    assert_eq!(group.iter().collect::<Vec<_>>(), [f]);
    check(&game);
}

#[test]
fn using_a_destroyed_retained_entity_is_an_entity_disabled_error() {
    let mut game = game();
    let e = game.create_entity_with((pos(1.0), Frozen)).unwrap();
    game.retain(e, Owner::new()).unwrap();
    game.destroy_entity(e).unwrap();
    let spy = Spy::attach(&mut game);

    assert_eq!(game.get::<Position>(e), Err(disabled_for(e, "Position")));
    assert_eq!(game.get_mut::<Position>(e).err(), Some(disabled_for(e, "Position")));
    assert_eq!(
        game.add(e, Velocity { x: 1.0, y: 0.0 }),
        Err(disabled_for(e, "Velocity"))
    );
    assert_eq!(game.replace(e, pos(2.0)), Err(disabled_for(e, "Position")));
    assert_eq!(
        game.replace(e, Velocity { x: 1.0, y: 0.0 }),
        Err(disabled_for(e, "Velocity"))
    );
    assert_eq!(game.remove::<Frozen>(e), Err(disabled_for(e, "Frozen")));
    assert_eq!(game.take::<Position>(e), Err(disabled_for(e, "Position")));
    assert_eq!(game.destroy_entity(e), Err(disabled(e)));
    assert_eq!(game.entity(e).err(), Some(disabled(e)));
    assert_eq!(game.creation_index(e), Err(disabled(e)));
    assert!(!game.has::<Position>(e));

    let message = disabled(e).to_string();
    assert!(message.contains(&e.to_string()), "{message}");
    assert!(message.contains("`Game`"), "{message}");
    assert!(message.contains("is_enabled"), "{message}");

    assert_eq!(spy.take(), Vec::<String>::new(), "failed calls fire nothing");
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
    assert_eq!(game.aerc().retain_count(e), Ok(1));
    check(&game);
}

#[test]
fn once_released_a_destroyed_entitys_handle_is_stale() {
    let mut game = game();
    let e = game.create_entity_with(pos(1.0)).unwrap();
    let me = Owner::new();
    game.retain(e, me).unwrap();
    game.destroy_entity(e).unwrap();
    game.release(e, me).unwrap();

    assert_eq!(game.aerc().is_enabled(e), Err(stale(e)));
    assert_eq!(game.get::<Position>(e), Err(stale_for(e, "Position")));
    assert_eq!(game.destroy_entity(e), Err(stale(e)));
    assert_eq!(game.retain(e, me), Err(stale(e)));
    assert_eq!(game.release(e, me), Err(stale(e)));
    assert_eq!(game.aerc().retain_count(e), Err(stale(e)));
    assert_eq!(game.aerc().owners(e), Err(stale(e)));
    check(&game);
}

#[test]
fn a_retained_destroyed_entitys_slot_is_not_reused_until_its_last_release() {
    let mut game = game();
    let spy = Spy::attach(&mut game);

    // Control: an unretained entity's slot is reused by the next entity.
    let unretained = game.create_entity();
    game.destroy_entity(unretained).unwrap();
    let reuser = game.create_entity();
    assert_eq!(reuser.index(), unretained.index(), "slotmap reuses the last freed slot");

    let kept = game.create_entity_with(pos(1.0)).unwrap();
    let me = Owner::new();
    game.retain(kept, me).unwrap();
    game.destroy_entity(kept).unwrap();
    let newcomers: Vec<Entity> = (0..3).map(|_| game.create_entity()).collect();
    for newcomer in &newcomers {
        assert_ne!(newcomer.index(), kept.index(), "slot of a retained entity reused");
    }
    assert_eq!(game.aerc().is_enabled(kept), Ok(false));
    spy.take();

    game.release(kept, me).unwrap();
    assert_eq!(spy.take(), [format!("released {kept}")]);
    let next = game.create_entity();
    assert_eq!(next.index(), kept.index(), "the released slot is reused");
    assert_ne!(next.tag(), kept.tag());
    assert_ne!(next, kept);
    assert!(game.is_alive(next));
    assert_eq!(game.aerc().is_enabled(kept), Err(stale(kept)));
    assert_eq!(game.get::<Position>(kept), Err(stale_for(kept, "Position")));
    check(&game);
}

#[test]
fn retaining_a_destroyed_retained_entity_is_allowed() {
    let mut game = game();
    let spy = Spy::attach(&mut game);
    let e = game.create_entity();
    let (a, b) = (Owner::new(), Owner::new());
    game.retain(e, a).unwrap();
    game.destroy_entity(e).unwrap();

    game.retain(e, b).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(2));
    game.release(e, a).unwrap();
    assert_eq!(game.aerc().is_enabled(e), Ok(false), "b still holds it");
    assert_eq!(spy.take_starting_with("released"), Vec::<String>::new());
    game.release(e, b).unwrap();
    assert_eq!(spy.take_starting_with("released"), [format!("released {e}")]);
    check(&game);
}

#[test]
fn retained_destroyed_entities_lists_them_in_slot_order() {
    let mut game = game();
    let [e1, e2, e3, e4] = [(); 4].map(|_| game.create_entity());
    assert!(e1.index() < e3.index());
    game.retain(e3, Owner::new()).unwrap();
    game.retain(e1, Owner::new()).unwrap();
    game.retain(e4, Owner::new()).unwrap();
    game.destroy_entity(e3).unwrap();
    game.destroy_entity(e2).unwrap();
    game.destroy_entity(e1).unwrap();
    // e2 was not retained (freed); e4 is retained but alive.
    assert_eq!(game.aerc().retained_destroyed().collect::<Vec<_>>(), [e1, e3]);
    assert_eq!(game.len(), 1);
    check(&game);
}

#[test]
fn destroy_all_entities_destroys_retained_entities_too() {
    let mut game = game();
    let [a, b, c] = [(); 3].map(|_| game.create_entity_with(pos(0.0)).unwrap());
    let me = Owner::new();
    game.retain(b, me).unwrap();
    let spy = Spy::attach(&mut game);

    game.destroy_all_entities();
    assert_eq!(game.len(), 0);
    assert!(game.is_empty());
    assert!(!game.is_alive(a) && !game.is_alive(b) && !game.is_alive(c));
    assert_eq!(game.aerc().is_enabled(a), Err(stale(a)));
    assert_eq!(
        game.aerc().is_enabled(b),
        Ok(false),
        "b waits, disabled, for its release"
    );
    assert_eq!(game.aerc().is_enabled(c), Err(stale(c)));
    assert_eq!(game.aerc().retained_destroyed().collect::<Vec<_>>(), [b]);
    let events = spy.take();
    assert!(events.contains(&format!("destroyed {b}")));
    assert_eq!(
        events
            .iter()
            .filter(|line| line.starts_with("released"))
            .cloned()
            .collect::<Vec<_>>(),
        [format!("released {a}"), format!("released {c}")]
    );
    check(&game);

    game.release(b, me).unwrap();
    assert_eq!(spy.take(), [format!("released {b}")]);
    assert_eq!(game.aerc().retained_destroyed().count(), 0);
    check(&game);
}

#[test]
fn safe_mode_refuses_a_second_retain_by_the_same_owner() {
    let mut game = game();
    let e = game.create_entity();
    let me = Owner::new();
    game.retain(e, me).unwrap();

    let error = game.retain(e, me).unwrap_err();
    assert_eq!(
        error,
        Error::AlreadyRetained {
            context: "Game",
            entity: e,
            owner: me
        }
    );
    let message = error.to_string();
    assert!(message.contains(&me.to_string()), "{message}");
    assert!(message.contains(&e.to_string()), "{message}");
    assert_eq!(game.aerc().retain_count(e), Ok(1), "unchanged");
    assert_eq!(game.aerc().owners(e), Ok(Some(&[me][..])));

    // Also on a destroyed, retained entity.
    game.destroy_entity(e).unwrap();
    assert!(matches!(game.retain(e, me), Err(Error::AlreadyRetained { .. })));
    assert_eq!(game.aerc().retain_count(e), Ok(1));
    check(&game);
}

#[test]
fn safe_mode_refuses_a_release_by_an_owner_without_a_retain() {
    let mut game = game();
    let e = game.create_entity();
    let (me, stranger) = (Owner::new(), Owner::new());

    // Never retained at all.
    assert_eq!(
        game.release(e, me),
        Err(Error::NotRetained {
            context: "Game",
            entity: e,
            owner: me
        })
    );
    assert_eq!(game.aerc().retain_count(e), Ok(0));

    game.retain(e, me).unwrap();
    assert_eq!(
        game.release(e, stranger),
        Err(Error::NotRetained {
            context: "Game",
            entity: e,
            owner: stranger
        })
    );
    assert_eq!(game.aerc().retain_count(e), Ok(1), "unchanged");
    assert_eq!(game.aerc().owners(e), Ok(Some(&[me][..])));

    game.release(e, me).unwrap();
    assert!(
        matches!(game.release(e, me), Err(Error::NotRetained { .. })),
        "released twice"
    );
    assert_eq!(game.aerc().retain_count(e), Ok(0));
    assert!(game.is_alive(e));
    check(&game);
}

#[test]
fn safe_mode_keeps_a_destroyed_entity_when_a_stranger_releases_it() {
    let mut game = game();
    let e = game.create_entity();
    let me = Owner::new();
    game.retain(e, me).unwrap();
    game.destroy_entity(e).unwrap();
    let spy = Spy::attach(&mut game);

    assert!(matches!(game.release(e, Owner::new()), Err(Error::NotRetained { .. })));
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
    assert_eq!(game.aerc().retain_count(e), Ok(1));
    assert_eq!(spy.take(), Vec::<String>::new());
    check(&game);
}

#[test]
fn fast_mode_counts_retains_without_recording_owners() {
    let mut game = fast_game();
    let e = game.create_entity();
    let (me, stranger) = (Owner::new(), Owner::new());

    game.retain(e, me).unwrap();
    game.retain(e, me).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(2), "one owner may retain twice");
    assert_eq!(game.aerc().owners(e), Ok(None));

    game.release(e, stranger).unwrap();
    assert_eq!(
        game.aerc().retain_count(e),
        Ok(1),
        "any owner may release: only the count is kept"
    );
    game.release(e, me).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(0));
    assert!(game.is_alive(e));
    check(&game);
}

#[test]
fn fast_mode_refuses_releasing_more_than_was_retained() {
    let mut game = fast_game();
    let e = game.create_entity();
    let me = Owner::new();
    assert_eq!(
        game.release(e, me),
        Err(Error::NotRetained {
            context: "Game",
            entity: e,
            owner: me
        })
    );
    assert_eq!(game.aerc().retain_count(e), Ok(0));

    game.retain(e, me).unwrap();
    game.release(e, me).unwrap();
    assert!(matches!(game.release(e, me), Err(Error::NotRetained { .. })));
    assert_eq!(game.aerc().retain_count(e), Ok(0), "unchanged by the refused release");
    assert!(game.is_alive(e));
    check(&game);
}

#[test]
fn fast_mode_keeps_a_destroyed_entity_until_its_count_reaches_zero() {
    let mut game = fast_game();
    let spy = Spy::attach(&mut game);
    let e = game.create_entity();
    let me = Owner::new();
    game.retain(e, me).unwrap();
    game.retain(e, me).unwrap();
    game.destroy_entity(e).unwrap();
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
    let f = game.create_entity();
    assert_ne!(f.index(), e.index());

    game.release(e, me).unwrap();
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
    assert_eq!(spy.take_starting_with("released"), Vec::<String>::new());
    game.release(e, me).unwrap();
    assert_eq!(spy.take_starting_with("released"), [format!("released {e}")]);
    assert_eq!(game.aerc().is_enabled(e), Err(stale(e)));
    check(&game);
}

#[test]
fn reset_is_refused_while_an_entity_is_retained_and_changes_nothing() {
    let mut game = game();
    let a = game.create_entity_with((pos(1.0), Name("a".into()))).unwrap();
    let b = game.create_entity_with(pos(2.0)).unwrap();
    let group = game.add_group(Matcher::all_of::<Position>());
    let collector = game.add_collector(Matcher::all_of::<Position>().added());
    game.replace(a, pos(1.0)).unwrap();
    let me = Owner::new();
    game.retain(b, me).unwrap();
    let spy = Spy::attach(&mut game);
    let before = whole_state(&mut game);

    // `b` by me, `a` by the collector that holds it.
    let error = game.reset().unwrap_err();
    assert_eq!(
        error,
        Error::EntitiesRetained {
            context: "Game",
            count: 2
        }
    );
    assert!(error.to_string().contains("`Game`"), "{error}");
    assert_eq!(spy.take(), Vec::<String>::new(), "no event");
    assert_eq!(game.len(), 2);
    assert!(game.is_alive(a) && game.is_alive(b));
    assert_eq!(game.get::<Position>(a), Ok(&pos(1.0)));
    assert_eq!(game.get::<Name>(a), Ok(&Name("a".into())));
    assert_eq!(game.get::<Position>(b), Ok(&pos(2.0)));
    assert_eq!(game.creation_index(b), Ok(1));
    assert_eq!(game.group(group).unwrap().len(), 2);
    assert_eq!(game.collector(collector).unwrap().entities(), [a]);
    assert_eq!(game.aerc().retain_count(b), Ok(1));
    assert_eq!(whole_state(&mut game), before);
    check(&game);

    game.release(b, me).unwrap();
    assert!(matches!(game.reset(), Err(Error::EntitiesRetained { count: 1, .. })));
    game.collector_mut(collector).unwrap().clear();
    game.reset().unwrap();
    assert!(game.is_empty());
    let c = game.create_entity();
    assert_eq!(game.creation_index(c), Ok(0), "creation indices restart");
    check(&game);
}

#[test]
fn reset_is_refused_while_a_destroyed_entity_is_retained() {
    let mut game = game();
    let alive = game.create_entity_with(pos(1.0)).unwrap();
    let gone = game.create_entity();
    let me = Owner::new();
    game.retain(gone, me).unwrap();
    game.destroy_entity(gone).unwrap();

    assert_eq!(
        game.reset(),
        Err(Error::EntitiesRetained {
            context: "Game",
            count: 1
        })
    );
    assert!(game.is_alive(alive));
    assert_eq!(game.get::<Position>(alive), Ok(&pos(1.0)));
    assert_eq!(game.aerc().is_enabled(gone), Ok(false));

    game.release(gone, me).unwrap();
    assert_eq!(game.reset(), Ok(()));
    assert!(!game.is_alive(alive));
    check(&game);
}

#[test]
fn reset_counts_each_retained_entity_once() {
    let mut game = game();
    let [a, b, c, _free] = [(); 4].map(|_| game.create_entity());
    game.retain(a, Owner::new()).unwrap();
    game.retain(a, Owner::new()).unwrap();
    game.retain(b, Owner::new()).unwrap();
    game.retain(c, Owner::new()).unwrap();
    game.destroy_entity(c).unwrap();
    let error = game.reset().unwrap_err();
    assert_eq!(
        error,
        Error::EntitiesRetained {
            context: "Game",
            count: 3
        }
    );
    assert!(error.to_string().contains('3'), "{error}");
    assert_eq!(game.len(), 3);
}

#[test]
fn fast_mode_reset_is_refused_while_an_entity_is_retained() {
    let mut game = fast_game();
    let e = game.create_entity();
    let me = Owner::new();
    game.retain(e, me).unwrap();
    assert!(matches!(game.reset(), Err(Error::EntitiesRetained { count: 1, .. })));
    assert!(game.is_alive(e));
    game.release(e, me).unwrap();
    assert_eq!(game.reset(), Ok(()));
    assert!(game.is_empty());
}

#[test]
fn a_collectors_owner_cannot_be_used_to_retain_or_release() {
    let mut game = Context::new();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with((Position { x: 0.0, y: 0.0 },)).unwrap();
    let owner = game.collector(id).unwrap().owner();
    assert!(owner.is_internal() && !Owner::new().is_internal());
    let refused = Err(Error::InternalOwner {
        context: "Context",
        owner,
    });
    assert_eq!(game.retain(e, owner), refused);
    assert_eq!(game.release(e, owner), refused);
    assert_eq!(
        game.aerc().retain_count(e),
        Ok(1),
        "the collector's retain is untouched"
    );
    game.destroy_entity(e).unwrap();
    game.collector_mut(id).unwrap().clear();
    assert!(
        matches!(game.aerc().is_enabled(e), Err(Error::StaleEntity { .. })),
        "the collector released it"
    );
    game.check_invariants().unwrap();
}

#[test]
fn in_fast_mode_a_user_release_cannot_take_a_collectors_retain() {
    let mut game = Context::builder().aerc(AercMode::Fast).build();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with((Position { x: 0.0, y: 0.0 },)).unwrap();
    let stranger = Owner::new();
    assert_eq!(
        game.release(e, stranger),
        Err(Error::NotRetained {
            context: "Context",
            entity: e,
            owner: stranger
        })
    );
    game.destroy_entity(e).unwrap();
    assert_eq!(game.aerc().is_enabled(e), Ok(false), "the collector still holds it");
    let next = game.create_entity();
    assert_ne!(next.index(), e.index(), "its slot is not reused");
    game.collector_mut(id).unwrap().clear();
    assert!(
        matches!(game.aerc().is_enabled(e), Err(Error::StaleEntity { .. })),
        "released: its slot is free"
    );
    game.check_invariants().unwrap();
}
