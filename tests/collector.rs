//! Collectors: the triggers (Added, Removed, AddedOrRemoved, Updated), order
//! and uniqueness, retaining what they collect, destroyed entities, several
//! groups, activation, clearing, removal, kept removed values, `modify_each`,
//! and `Display`.

mod common;

use common::*;
use reactecs::prelude::*;

fn game() -> Context {
    Context::with_name("Game")
}

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

fn vel(x: f32) -> Velocity {
    Velocity { x, y: 0.0 }
}

fn collected(game: &mut Context, id: CollectorId) -> Vec<Entity> {
    game.collector(id).unwrap().entities().to_vec()
}

#[test]
fn a_new_collector_is_active_and_empty_even_over_a_populated_group() {
    let mut game = game();
    game.create_entity_with(pos(0.0)).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let collector = game.collector(id).unwrap();
    assert!(collector.is_active());
    assert!(collector.is_empty());
    assert_eq!(collector.len(), 0);
    assert_eq!(collector.id(), id);
    assert_eq!(id.context(), game.id());
}

#[test]
fn added_trigger_collects_entities_that_join_in_insertion_order() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let a = game.create_entity();
    let b = game.create_entity_with(pos(0.0)).unwrap();
    let c = game.create_entity();
    game.add(c, pos(1.0)).unwrap();
    game.add(a, pos(2.0)).unwrap();
    game.create_entity_with(vel(1.0)).unwrap(); // never joins

    let collector = game.collector(id).unwrap();
    assert_eq!(collector.entities(), [b, c, a]);
    assert_eq!(collector.iter().collect::<Vec<_>>(), [b, c, a]);
    assert_eq!(collector.into_iter().collect::<Vec<_>>(), [b, c, a]);
    assert_eq!(collector.len(), 3);
    assert!(collector.contains(a) && collector.contains(b) && collector.contains(c));
    check(&game);
}

#[test]
fn added_trigger_collects_a_replace_on_a_member() {
    let mut game = game();
    let a = game.create_entity_with(pos(0.0)).unwrap();
    let b = game.create_entity_with(pos(0.0)).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    game.replace(b, pos(1.0)).unwrap();
    game.replace(a, pos(1.0)).unwrap();
    // Replacements are gathered from change stamps: in storage order.
    assert_eq!(collected(&mut game, id), [a, b]);
}

#[test]
fn added_trigger_ignores_a_replace_of_a_component_its_matcher_does_not_name() {
    let mut game = game();
    let e = game.create_entity_with((pos(0.0), vel(0.0))).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    game.replace(e, vel(1.0)).unwrap();
    assert!(game.collector(id).unwrap().is_empty());
}

#[test]
fn every_mutable_access_is_seen_by_collectors_once_and_fires_no_event() {
    let mut game = game();
    let e = game.create_entity_with((pos(0.0), vel(0.0))).unwrap();
    let other = game.create_entity_with((pos(0.0), vel(0.0))).unwrap();
    let holder = game.set_unique(Score(0)).unwrap();
    // Collectors of every trigger that takes updates on each component
    // written below, and one that takes only removals.
    let mut seeing = Vec::new();
    let mut blind = Vec::new();
    for matcher in [
        Matcher::all_of::<Position>(),
        Matcher::all_of::<Velocity>(),
        Matcher::all_of::<Score>(),
    ] {
        seeing.push(game.add_collector(matcher.clone().added_or_removed()));
        seeing.push(game.add_collector(matcher.clone().updated()));
        blind.push(game.add_collector(matcher.removed()));
    }
    let spy = Spy::attach(&mut game);
    // After each way of writing in place: the write landed, each collector
    // that takes updates holds the written entities once, the others hold
    // nothing, and no event fired (events with old and new values come from
    // `replace` and `modify*` only).
    let mut writes = 0.0;
    let mut seen = |game: &mut Context, path: &str, both: bool| {
        writes += 1.0;
        assert_eq!(game.get::<Position>(e).unwrap().x, writes, "{path} wrote");
        assert_eq!(game.get::<Velocity>(e).unwrap().x, writes, "{path} wrote");
        assert_eq!(game.unique::<Score>().unwrap().0 as f32, writes, "{path} wrote");
        for (i, &id) in seeing.iter().enumerate() {
            let mut expected = if i < 4 { vec![e] } else { vec![holder] };
            if both && i < 4 {
                expected.push(other);
            }
            assert_eq!(collected(game, id), expected, "{path}: collector {id}");
            game.collector_mut(id).unwrap().clear();
        }
        for &id in &blind {
            assert!(game.collector(id).unwrap().is_empty(), "{path} fed collector {id}");
        }
        assert_eq!(spy.take(), Vec::<String>::new(), "{path} fired events");
    };

    *game.get_mut::<Position>(e).unwrap() = pos(1.0);
    game.get_mut::<Velocity>(e).unwrap().x += 1.0;
    game.get_mut::<Score>(holder).unwrap().0 += 1;
    seen(&mut game, "Context::get_mut", false);

    let mut view = game.entity_mut(e).unwrap();
    view.get_mut::<Position>().unwrap().x += 1.0;
    view.get_mut::<Velocity>().unwrap().x += 1.0;
    game.get_mut::<Score>(game.unique_entity::<Score>().unwrap()).unwrap().0 += 1;
    seen(&mut game, "EntityMut::get_mut and get_mut of the unique holder", false);

    let mut view = game.entity_mut(e).unwrap();
    let (p, v) = view.query::<(&mut Position, &mut Velocity)>().unwrap();
    (p.x, v.x) = (p.x + 1.0, v.x + 1.0);
    let mut view = game.entity_mut(holder).unwrap();
    view.query::<(&mut Score,)>().unwrap().0.0 += 1;
    seen(&mut game, "EntityMut::query", false);

    for (p, v) in game.query_mut::<(&mut Position, &mut Velocity)>().unwrap().iter() {
        (p.x, v.x) = (p.x + 1.0, v.x + 1.0);
    }
    game.query_mut::<&mut Score>().unwrap().for_each(|s| s.0 += 1);
    game.get_mut::<Position>(other).unwrap().x -= 1.0;
    game.get_mut::<Velocity>(other).unwrap().x -= 1.0;
    seen(&mut game, "QueryMut::iter and for_each", true);

    game.query_mut::<(&mut Position, &mut Velocity)>()
        .unwrap()
        .for_each_chunk(|(p, v)| {
            p.iter_mut().for_each(|p| p.x += 1.0);
            v.iter_mut().for_each(|v| v.x += 1.0);
        });
    game.query_mut::<(&mut Score,)>()
        .unwrap()
        .for_each_chunk(|(s,)| s.iter_mut().for_each(|s| s.0 += 1));
    game.get_mut::<Position>(other).unwrap().x -= 1.0;
    seen(&mut game, "QueryMut::for_each_chunk", true);

    #[cfg(feature = "parallel")]
    {
        game.query_mut::<(&mut Position, &mut Velocity)>()
            .unwrap()
            .par_for_each(|(p, v)| (p.x, v.x) = (p.x + 1.0, v.x + 1.0));
        game.query_mut::<&mut Score>().unwrap().par_for_each(|s| s.0 += 1);
        seen(&mut game, "QueryMut::par_for_each", true);

        game.query_mut::<(&mut Position, &mut Velocity)>()
            .unwrap()
            .par_for_each_chunk(|(p, v)| {
                p.iter_mut().for_each(|p| p.x += 1.0);
                v.iter_mut().for_each(|v| v.x += 1.0);
            });
        game.query_mut::<(&mut Score,)>()
            .unwrap()
            .par_for_each_chunk(|(s,)| s.iter_mut().for_each(|s| s.0 += 1));
        seen(&mut game, "QueryMut::par_for_each_chunk", true);
    }

    game.modify(e, |p: &mut Position| p.x += 1.0).unwrap();
    game.modify_with::<Velocity, &Position, _>(e, |v, _| v.x += 1.0)
        .unwrap();
    game.get_mut::<Score>(game.unique_entity::<Score>().unwrap()).unwrap().0 += 1;
    spy.take();
    seen(&mut game, "modify and modify_with", false);
    check(&game);
}

#[test]
fn untracked_writes_and_equal_values_set_if_neq_are_not_seen() {
    let mut game = game();
    let e = game.create_entity_with((pos(0.0), vel(0.0))).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().updated());
    game.entity_mut(e).unwrap().get_mut_untracked::<Position>().unwrap().x = 4.0;
    game.entity_mut(e).unwrap().get_mut_untracked::<Position>().unwrap().x += 1.0;
    assert!(!game.set_if_neq(e, pos(5.0)).unwrap());
    assert!(game.collector(id).unwrap().is_empty());
    assert_eq!(game.get::<Position>(e).unwrap().x, 5.0);
    assert!(game.set_if_neq(e, pos(6.0)).unwrap());
    assert_eq!(collected(&mut game, id), [e]);
    check(&game);
}

#[test]
fn removed_trigger_collects_entities_that_leave_by_removal_or_destroy() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().removed());
    let a = game.create_entity_with(pos(0.0)).unwrap();
    let b = game.create_entity_with((pos(0.0), vel(0.0))).unwrap();
    assert!(game.collector(id).unwrap().is_empty(), "joining is not leaving");

    game.destroy_entity(b).unwrap();
    game.remove::<Position>(a).unwrap();
    assert_eq!(collected(&mut game, id), [b, a]);
    check(&game);
}

#[test]
fn removed_trigger_ignores_a_replace_unlike_entitas() {
    let mut game = game();
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let removed = game.add_collector(Matcher::all_of::<Position>().removed());
    let added = game.add_collector(Matcher::all_of::<Position>().added());
    game.replace(e, pos(1.0)).unwrap();
    assert!(
        game.collector(removed).unwrap().is_empty(),
        "a replace is not a removal"
    );
    assert_eq!(collected(&mut game, added), [e], "while Added sees it");
}

#[test]
fn added_or_removed_trigger_collects_joining_leaving_and_replacing() {
    let mut game = game();
    let stays = game.create_entity_with(pos(0.0)).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().added_or_removed());
    let joins = game.create_entity_with(pos(0.0)).unwrap();
    let leaves = game.create_entity_with(pos(0.0)).unwrap();
    game.collector_mut(id).unwrap().clear();

    game.remove::<Position>(leaves).unwrap();
    game.replace(stays, pos(1.0)).unwrap();
    let late = game.create_entity();
    game.add(late, pos(0.0)).unwrap();
    // Joins and leaves in the order they happened, then the replacement.
    assert_eq!(collected(&mut game, id), [leaves, late, stays]);
    assert!(!game.collector(id).unwrap().contains(joins));
}

#[test]
fn updated_trigger_collects_replacing_but_ignores_joining_and_leaving() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().updated());
    let a = game.create_entity_with(pos(0.0)).unwrap();
    let b = game.create_entity();
    game.add(b, pos(0.0)).unwrap();
    game.replace(b, Velocity { x: 1.0, y: 0.0 }).unwrap(); // replace-as-add, not watched
    let c = game.create_entity_with(pos(0.0)).unwrap();
    game.remove::<Position>(c).unwrap();
    assert!(
        game.collector(id).unwrap().is_empty(),
        "joining and leaving are not updates"
    );

    let d = game.create_entity();
    game.replace(d, pos(0.0)).unwrap(); // a replace of an absent component is an add
    assert!(game.collector(id).unwrap().is_empty());

    game.replace(b, pos(1.0)).unwrap();
    game.replace(a, pos(1.0)).unwrap();
    game.replace(b, pos(2.0)).unwrap();
    assert_eq!(collected(&mut game, id), [a, b], "once each, in storage order");
}

#[test]
fn trigger_on_names_the_same_triggers_as_the_shorthands() {
    let m = || Matcher::all_of::<Position>();
    assert_eq!(m().on(Trigger::Added), m().added());
    assert_eq!(m().on(Trigger::Removed), m().removed());
    assert_eq!(m().on(Trigger::AddedOrRemoved), m().added_or_removed());
    assert_eq!(m().on(Trigger::Updated), m().updated());
    assert_eq!(m().updated().trigger, Trigger::Updated);
    assert_eq!(m().updated().matcher, m());

    let mut game = game();
    let id = game.add_collector(m().on(Trigger::Updated));
    let e = game.create_entity_with(pos(0.0)).unwrap();
    assert!(game.collector(id).unwrap().is_empty());
    game.replace(e, pos(1.0)).unwrap();
    assert_eq!(collected(&mut game, id), [e]);
}

#[test]
fn a_collector_holds_each_entity_once() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added_or_removed());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    for x in 1..5 {
        game.replace(e, pos(x as f32)).unwrap();
    }
    let collector = game.collector(id).unwrap();
    assert_eq!(collector.entities(), [e]);
    assert_eq!(game.aerc().retain_count(e), Ok(1));
}

#[test]
fn collector_keeps_entity_removed_then_re_added_once() {
    let mut game = game();
    let added = game.add_collector(Matcher::all_of::<Position>().added());
    let both = game.add_collector(Matcher::all_of::<Position>().added_or_removed());
    let first = game.create_entity_with(pos(0.0)).unwrap();
    let e = game.create_entity_with(pos(0.0)).unwrap();
    game.remove::<Position>(e).unwrap();
    game.add(e, pos(1.0)).unwrap();
    game.remove::<Position>(e).unwrap();
    game.add(e, pos(2.0)).unwrap();

    for id in [added, both] {
        let collector = game.collector(id).unwrap();
        assert_eq!(collector.entities(), [first, e], "once, in first-collected order");
    }
    assert_eq!(game.aerc().retain_count(e), Ok(2), "one retain per collector");
    check(&game);
}

#[test]
fn a_collector_retains_each_collected_entity() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let untouched = game.create_entity();

    let owner = game.collector(id).unwrap().owner();
    assert_eq!(game.aerc().retain_count(e), Ok(1));
    assert!(owner.is_internal());
    assert_eq!(
        game.aerc().owners(e),
        Ok(Some(&[][..])),
        "a collector's retain is counted, not listed among user owners"
    );
    assert_eq!(game.aerc().retain_count(untouched), Ok(0));
    // The collector's owner is its own: user code's owners are distinct.
    assert_ne!(owner, Owner::new());
}

#[test]
fn two_collectors_on_one_trigger_collect_apart() {
    let mut game = game();
    let first = game.add_collector(Matcher::all_of::<Position>().added());
    let second = game.add_collector(Matcher::all_of::<Position>().added());
    assert_ne!(first, second);
    let e = game.create_entity_with(pos(0.0)).unwrap();

    let owners = [first, second].map(|id| game.collector(id).unwrap().owner());
    assert_ne!(owners[0], owners[1]);
    assert_eq!(game.aerc().retain_count(e), Ok(2));

    game.collector_mut(first).unwrap().clear();
    assert!(game.collector(first).unwrap().is_empty());
    assert_eq!(collected(&mut game, second), [e]);
    assert_eq!(
        game.aerc().retain_count(e),
        Ok(1),
        "the second collector still holds it"
    );
}

#[test]
fn a_collected_entity_destroyed_stays_collected_and_disabled_until_cleared() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let spy = Spy::attach(&mut game);

    game.destroy_entity(e).unwrap();
    assert_eq!(spy.take_starting_with("released"), Vec::<String>::new());
    assert_eq!(collected(&mut game, id), [e]);
    assert!(game.collector(id).unwrap().contains(e));
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
    assert!(!game.is_alive(e));
    assert_eq!(game.aerc().retained_destroyed().collect::<Vec<_>>(), [e]);
    let newcomer = game.create_entity();
    assert_ne!(newcomer.index(), e.index(), "the slot is kept while collected");
    check(&game);
    spy.take();

    game.collector_mut(id).unwrap().clear();
    assert_eq!(spy.take(), [format!("released {e}")]);
    assert_eq!(
        game.aerc().is_enabled(e),
        Err(Error::StaleEntity {
            context: "Game",
            entity: e,
            component: None,
        })
    );
    assert!(game.collector(id).unwrap().is_empty());
    check(&game);
}

#[test]
fn a_destroyed_entity_is_collected_once_by_added_or_removed() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added_or_removed());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    game.destroy_entity(e).unwrap();
    assert_eq!(collected(&mut game, id), [e]);
    assert_eq!(game.aerc().retain_count(e), Ok(1));
    check(&game);
}

#[test]
fn collector_over_two_groups_collects_from_either() {
    let mut game = game();
    let spec = Matcher::all_of::<Position>()
        .added()
        .and(Matcher::all_of::<Velocity>().removed());
    assert_eq!(spec.triggers().len(), 2);
    let id = game.add_collector(spec);

    let joins_first = game.create_entity_with(pos(0.0)).unwrap();
    let leaves_second = game.create_entity_with(vel(0.0)).unwrap();
    let joins_second = game.create_entity_with(vel(0.0)).unwrap(); // Velocity added: not watched
    let leaves_first = game.create_entity();
    game.collector_mut(id).unwrap().clear();
    game.add(leaves_first, pos(0.0)).unwrap();
    game.collector_mut(id).unwrap().clear();

    game.remove::<Velocity>(leaves_second).unwrap();
    game.remove::<Position>(leaves_first).unwrap(); // Position removed: not watched
    game.replace(joins_first, pos(1.0)).unwrap();
    let both = game.create_entity_with((pos(0.0), vel(0.0))).unwrap();
    game.remove::<Velocity>(both).unwrap();

    let collector = game.collector(id).unwrap();
    assert_eq!(collector.entities(), [leaves_second, both, joins_first]);
    assert!(!collector.contains(joins_second) && !collector.contains(leaves_first));
    assert_eq!(game.aerc().retain_count(both), Ok(1), "collected once across groups");

    let groups = [
        game.add_group(Matcher::all_of::<Position>()),
        game.add_group(Matcher::all_of::<Velocity>()),
    ];
    let triggers: Vec<_> = game.collector(id).unwrap().triggers().collect();
    assert_eq!(triggers, [(groups[0], Trigger::Added), (groups[1], Trigger::Removed)]);
    check(&game);
}

#[test]
fn collector_over_two_groups_collects_an_entity_joining_both_once() {
    let mut game = game();
    let id = game.add_collector([
        Matcher::all_of::<Position>().added(),
        Matcher::all_of::<Velocity>().added(),
    ]);
    let e = game.create_entity_with((pos(0.0), vel(0.0))).unwrap();
    assert_eq!(collected(&mut game, id), [e]);
    assert_eq!(game.aerc().retain_count(e), Ok(1));
}

#[test]
fn a_deactivated_collector_collects_nothing_and_activating_does_not_replay() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added_or_removed());
    let held = game.create_entity_with(pos(0.0)).unwrap();
    assert_eq!(game.aerc().retain_count(held), Ok(1));

    game.collector_mut(id).unwrap().deactivate();
    let collector = game.collector(id).unwrap();
    assert!(!collector.is_active());
    assert!(collector.is_empty(), "deactivating clears");
    assert_eq!(game.aerc().retain_count(held), Ok(0), "and releases");

    let missed = game.create_entity_with(pos(0.0)).unwrap();
    game.replace(held, pos(1.0)).unwrap();
    game.remove::<Position>(missed).unwrap();
    assert!(game.collector(id).unwrap().is_empty(), "inactive: collects nothing");
    assert_eq!(game.aerc().retain_count(missed), Ok(0));

    game.collector_mut(id).unwrap().activate();
    let collector = game.collector(id).unwrap();
    assert!(collector.is_active());
    assert!(collector.is_empty(), "activating does not replay");

    let later = game.create_entity_with(pos(0.0)).unwrap();
    assert_eq!(collected(&mut game, id), [later]);
    check(&game);
}

#[test]
fn deactivating_releases_a_destroyed_entity_it_held_last() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    game.destroy_entity(e).unwrap();
    let spy = Spy::attach(&mut game);
    game.collector_mut(id).unwrap().deactivate();
    assert_eq!(spy.take(), [format!("released {e}")]);
    assert!(matches!(game.aerc().is_enabled(e), Err(Error::StaleEntity { .. })));
    check(&game);
}

#[test]
fn activating_an_active_collector_keeps_what_it_holds() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    game.collector_mut(id).unwrap().activate();
    assert_eq!(collected(&mut game, id), [e]);
    assert_eq!(game.aerc().retain_count(e), Ok(1));
}

#[test]
fn clearing_a_collector_releases_each_entity_and_it_collects_again() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let a = game.create_entity_with(pos(0.0)).unwrap();
    let b = game.create_entity_with(pos(0.0)).unwrap();
    game.collector_mut(id).unwrap().clear();
    let collector = game.collector(id).unwrap();
    assert!(collector.is_empty());
    assert!(!collector.contains(a));
    assert!(collector.is_active());
    assert_eq!(game.aerc().retain_count(a), Ok(0));
    assert_eq!(game.aerc().retain_count(b), Ok(0));

    game.replace(b, pos(1.0)).unwrap();
    game.replace(a, pos(1.0)).unwrap();
    assert_eq!(collected(&mut game, id), [a, b]);
    check(&game);
}

#[test]
fn clearing_keeps_a_destroyed_entity_that_another_owner_retains() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().removed());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let me = Owner::new();
    game.retain(e, me).unwrap();
    game.destroy_entity(e).unwrap();
    assert_eq!(game.aerc().retain_count(e), Ok(2));
    let spy = Spy::attach(&mut game);

    game.collector_mut(id).unwrap().clear();
    assert_eq!(spy.take(), Vec::<String>::new());
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
    game.release(e, me).unwrap();
    assert_eq!(spy.take(), [format!("released {e}")]);
    check(&game);
}

#[test]
fn a_removed_collector_releases_its_entities_and_its_id_is_unknown() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let keep = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let gone = game.create_entity_with(pos(0.0)).unwrap();
    game.destroy_entity(gone).unwrap();
    game.collector_mut(keep).unwrap().clear();
    let spy = Spy::attach(&mut game);

    game.collector_mut(id).unwrap().remove();
    assert_eq!(spy.take(), [format!("released {gone}")]);
    assert_eq!(game.aerc().retain_count(e), Ok(0));
    let unknown = Error::UnknownCollector {
        context: "Game",
        collector: id,
    };
    assert_eq!(game.collector(id).err(), Some(unknown.clone()));
    assert_eq!(game.collector_mut(id).err(), Some(unknown.clone()));
    assert!(unknown.to_string().contains("`Game`"), "{unknown}");
    assert_eq!(game.collectors().map(|c| c.id()).collect::<Vec<_>>(), [keep]);

    // The group no longer feeds it; the other collector still collects.
    game.replace(e, pos(1.0)).unwrap();
    assert_eq!(collected(&mut game, keep), [e]);
    assert_eq!(game.aerc().retain_count(e), Ok(1));
    check(&game);
}

#[test]
fn a_collector_id_from_another_context_is_unknown() {
    let mut game = game();
    let mut ui = Context::with_name("Ui");
    let theirs = ui.add_collector(Matcher::all_of::<Position>().added());
    let ours = game.add_collector(Matcher::all_of::<Position>().added());
    assert_ne!(theirs.context(), ours.context());

    let unknown = Error::UnknownCollector {
        context: "Ui",
        collector: ours,
    };
    assert_eq!(ui.collector(ours).err(), Some(unknown.clone()));
    assert_eq!(ui.collector_mut(ours).err(), Some(unknown));
    assert!(
        ui.collector(theirs).unwrap().is_active(),
        "its own collector is untouched"
    );
    assert!(game.collector(ours).unwrap().is_active());
}

#[test]
fn collectors_lists_every_collector() {
    let mut game = game();
    let a = game.add_collector(Matcher::all_of::<Position>().added());
    let b = game.add_collector(Matcher::all_of::<Velocity>().removed());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let mut listed: Vec<(CollectorId, Vec<Entity>)> = game
        .collectors()
        .map(|collector| (collector.id(), collector.entities().to_vec()))
        .collect();
    listed.sort_by_key(|(id, _)| *id == b);
    assert_eq!(listed, [(a, vec![e]), (b, vec![])]);
}

#[test]
fn reset_is_refused_while_a_collector_holds_entities() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    let e = game.create_entity_with(pos(0.0)).unwrap();
    assert_eq!(
        game.reset(),
        Err(Error::EntitiesRetained {
            context: "Game",
            count: 1
        })
    );
    assert!(game.is_alive(e));
    assert_eq!(collected(&mut game, id), [e]);

    game.collector_mut(id).unwrap().clear();
    game.reset().unwrap();
    assert!(game.is_empty());
    // The collector is kept, and collects after the reset.
    assert!(game.collector(id).unwrap().is_empty());
    let f = game.create_entity_with(pos(0.0)).unwrap();
    assert_eq!(collected(&mut game, id), [f]);
    check(&game);
}

#[test]
fn keep_removed_keeps_the_removed_value_when_its_removal_caused_the_leave() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Health>().removed().keep_removed::<Health>());
    let e = game.create_entity_with(Health(3)).unwrap();
    let only_added = game.create_entity_with(Health(9)).unwrap();
    game.remove::<Health>(e).unwrap();

    let collector = game.collector(id).unwrap();
    assert_eq!(collector.removed::<Health>().get(e), Some(&Health(3)));
    assert_eq!(collector.removed::<Health>().get(only_added), None, "never left");
    assert_eq!(collector.removed::<Position>().get(e), None, "not the kept type");
}

#[test]
fn keep_removed_keeps_the_current_value_when_another_component_caused_the_leave() {
    let mut game = game();
    let spec = Matcher::all_of::<(Health, Frozen)>().removed().keep_removed::<Health>();
    let id = game.add_collector(spec);
    let e = game.create_entity_with((Health(4), Frozen)).unwrap();
    game.replace(e, Health(5)).unwrap();
    game.remove::<Frozen>(e).unwrap();
    assert_eq!(game.collector(id).unwrap().removed::<Health>().get(e), Some(&Health(5)));
}

#[test]
fn keep_removed_keeps_the_value_an_entity_had_when_destroyed() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Health>().removed().keep_removed::<Health>());
    let e = game.create_entity_with(Health(1)).unwrap();
    game.replace(e, Health(7)).unwrap();
    game.destroy_entity(e).unwrap();
    let collector = game.collector(id).unwrap();
    assert_eq!(collector.entities(), [e]);
    assert_eq!(collector.removed::<Health>().get(e), Some(&Health(7)));
    assert_eq!(game.aerc().is_enabled(e), Ok(false));
}

#[test]
fn keep_removed_keeps_the_latest_removal() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Health>().added_or_removed().keep_removed::<Health>());
    let e = game.create_entity_with(Health(1)).unwrap();
    assert_eq!(game.collector(id).unwrap().removed::<Health>().get(e), None);
    game.remove::<Health>(e).unwrap();
    game.add(e, Health(2)).unwrap();
    game.remove::<Health>(e).unwrap();
    game.add(e, Health(3)).unwrap();

    let collector = game.collector(id).unwrap();
    assert_eq!(collector.entities(), [e]);
    assert_eq!(collector.removed::<Health>().get(e), Some(&Health(2)));
}

#[test]
fn clearing_forgets_kept_removed_values() {
    let mut game = game();
    let id = game.add_collector(Matcher::all_of::<Health>().removed().keep_removed::<Health>());
    let e = game.create_entity_with(Health(1)).unwrap();
    game.remove::<Health>(e).unwrap();
    game.collector_mut(id).unwrap().clear();
    assert_eq!(game.collector(id).unwrap().removed::<Health>().get(e), None);
}

#[test]
fn modify_each_triggers_added_and_updated_collectors() {
    let mut game = game();
    let a = game.create_entity_with((pos(0.0), vel(1.0))).unwrap();
    let b = game.create_entity_with(pos(5.0)).unwrap();
    let c = game.create_entity_with(vel(1.0)).unwrap();
    let positions = game.add_group(Matcher::all_of::<Position>());
    let added = game.add_collector(Matcher::all_of::<Position>().added());
    let updated = game.add_collector(Matcher::all_of::<Position>().updated());
    let removed = game.add_collector(Matcher::all_of::<Position>().removed());
    let velocities = game.add_collector(Matcher::all_of::<Velocity>().added());

    let visited = game.modify_each::<Position, ()>(positions, |p, ()| p.x += 1.0).unwrap();
    assert_eq!(visited, 2);
    assert_eq!(game.get::<Position>(b), Ok(&pos(6.0)));

    for id in [added, updated] {
        let mut got = collected(&mut game, id);
        got.sort();
        let mut want = vec![a, b];
        want.sort();
        assert_eq!(got, want);
    }
    assert!(game.collector(removed).unwrap().is_empty());
    assert!(
        game.collector(velocities).unwrap().is_empty(),
        "Velocity was not written"
    );
    assert!(!game.collector(added).unwrap().contains(c));
    assert_eq!(game.aerc().retain_count(a), Ok(2));
    check(&game);
}

#[test]
fn a_collector_displays_its_triggers_size_and_state() {
    let mut game = game();
    let id = game.add_collector(
        Matcher::all_of::<Position>()
            .added()
            .and(Matcher::all_of::<Velocity>().none_of::<Frozen>().removed()),
    );
    assert_eq!(
        game.collector(id).unwrap().to_string(),
        "Collector(AllOf(Position).added(), AllOf(Velocity).NoneOf(Frozen).removed()) with 0 entities"
    );
    game.create_entity_with(pos(0.0)).unwrap();
    game.create_entity_with(pos(0.0)).unwrap();
    assert_eq!(
        game.collector(id).unwrap().to_string(),
        "Collector(AllOf(Position).added(), AllOf(Velocity).NoneOf(Frozen).removed()) with 2 entities"
    );
    game.collector_mut(id).unwrap().deactivate();
    assert_eq!(
        game.collector(id).unwrap().to_string(),
        "Collector(AllOf(Position).added(), AllOf(Velocity).NoneOf(Frozen).removed()) with 0 entities, inactive"
    );

    let kept = game.add_collector(Matcher::all_of::<Health>().updated().keep_removed::<Health>());
    assert_eq!(
        game.collector(kept).unwrap().to_string(),
        "Collector(AllOf(Health).updated()) keeping removed Health with 0 entities"
    );
    assert_eq!(
        Matcher::all_of::<Health>().added_or_removed().to_string(),
        "AllOf(Health).added_or_removed()"
    );
}

#[test]
fn reset_leaves_every_collector_empty_even_one_watching_removals() {
    let mut game = game();
    let removed = game.add_collector(Matcher::all_of::<Position>().removed());
    let both = game.add_collector(Matcher::all_of::<Position>().added_or_removed());
    game.collector_mut(both).unwrap().clear();
    let e = game.create_entity_with(pos(0.0)).unwrap();
    game.collector_mut(both).unwrap().clear();

    game.reset().unwrap();
    for id in [removed, both] {
        assert!(
            game.collector(id).unwrap().is_empty(),
            "reset keeps collectors, now empty"
        );
    }
    assert_eq!(game.aerc().retained_destroyed().count(), 0);
    assert!(
        matches!(game.aerc().is_enabled(e), Err(Error::StaleEntity { .. })),
        "nothing keeps the slot"
    );
    assert_eq!(game.reset(), Ok(()), "a second reset is not refused");
    check(&game);
}

#[test]
fn a_panicking_modify_each_has_collected_the_entities_it_wrote_before() {
    // Lean route (a collector, nobody shown values): the chunk is written,
    // then collected; a panic part way must still collect what was written,
    // as `replace` one by one would have.
    let mut game = game();
    let entities: Vec<Entity> = (0..5)
        .map(|i| game.create_entity_with(pos(i as f32)).unwrap())
        .collect();
    let positions = game.add_group(Matcher::all_of::<Position>());
    let updated = game.add_collector(Matcher::all_of::<Position>().updated());
    assert_panics("at the fourth", || {
        game.modify_each::<Position, ()>(positions, |p, ()| {
            if p.x == 3.0 {
                panic!("at the fourth");
            }
            p.x += 10.0;
        })
    });
    let xs: Vec<f32> = entities.iter().map(|&e| game.get::<Position>(e).unwrap().x).collect();
    assert_eq!(xs, [10.0, 11.0, 12.0, 3.0, 4.0]);
    assert_eq!(collected(&mut game, updated), entities[..3]);
    assert_eq!(game.aerc().retain_count(entities[2]), Ok(1));
    assert_eq!(game.aerc().retain_count(entities[3]), Ok(0));
    check(&game);
}

#[test]
fn reset_is_heard_by_subscribers_not_collectors_and_destroy_all_first_lets_collectors_hear() {
    let mut game = game();
    let removed = game.add_collector(Matcher::all_of::<Position>().removed());
    let spy = Spy::attach(&mut game);
    let e = game.create_entity_with(pos(0.0)).unwrap();
    spy.take();
    game.reset().unwrap();
    assert_eq!(
        spy.take(),
        [
            format!("will destroy {e} {{Position {{ x: 0.0, y: 0.0 }}}}"),
            format!("removed {e} Position {{ x: 0.0, y: 0.0 }}"),
            format!("destroyed {e}"),
            format!("released {e}"),
        ],
        "subscribers hear each destruction"
    );
    assert!(game.collector(removed).unwrap().is_empty(), "collectors are emptied");

    // The recipe the docs give: destroy everything, let the collectors be
    // read, then reset.
    let f = game.create_entity_with(pos(1.0)).unwrap();
    game.destroy_all_entities();
    assert_eq!(
        game.collector(removed).unwrap().entities(),
        [f],
        "the removal is collected"
    );
    game.collector_mut(removed).unwrap().clear();
    game.reset().unwrap();
    assert_ne!(e, f);
    check(&game);
}
