//! Change tracking in storage: writes through `&mut` (stamped) reach
//! collectors when they are read, exactly once per batch, in the documented
//! order, and survive the entity moving, leaving its group or dying before
//! the collector is read.

mod common;

use common::*;
use reactecs::prelude::*;

/// A flag, kept out of archetypes (membership of a group that checks
/// entities one by one).
#[derive(Debug, Default)]
struct Lit;
reactecs::component!(flag Lit);

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
fn explicit_entries_come_first_in_their_order_then_stamped_rows_in_storage_order() {
    let mut game = Context::new();
    let es = game.create_entities_with((0..6).map(|i| pos(i as f32))).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().added());
    // Stamped, written in reverse storage order.
    for &e in es.iter().rev().take(3) {
        game.get_mut::<Position>(e).unwrap().x += 1.0;
    }
    // Pushed: joins, in the order they happen.
    let late = game.create_entity_with(pos(9.0)).unwrap();
    let later = game.create_entity_with(pos(8.0)).unwrap();
    // Written again and joined: still once.
    game.get_mut::<Position>(late).unwrap().x += 1.0;
    assert_eq!(collected(&mut game, id), [late, later, es[3], es[4], es[5]]);
    assert_eq!(game.aerc().retain_count(es[3]), Ok(1), "gathered entities are retained");
    check(&game);
}

#[test]
fn an_entity_stamped_then_moved_destroyed_or_leaving_is_still_collected_and_retained() {
    let mut game = Context::new();
    let moved = game.create_entity_with(pos(0.0)).unwrap();
    let destroyed = game.create_entity_with(pos(0.0)).unwrap();
    let left = game.create_entity_with((pos(0.0), vel(0.0))).unwrap();
    let unlit = game.create_entity_with(pos(0.0)).unwrap();
    game.add(unlit, Lit).unwrap();
    let updated = game.add_collector(Matcher::all_of::<Position>().updated());
    let movers = game.add_collector(Matcher::all_of::<(Position, Velocity)>().updated());
    let lit = game.add_collector(Matcher::all_of::<Position>().any_of::<Lit>().updated());
    for e in [moved, destroyed, left, unlit] {
        game.get_mut::<Position>(e).unwrap().x = 5.0;
    }
    game.add(moved, Name("moved".into())).unwrap(); // another archetype, same groups
    game.destroy_entity(destroyed).unwrap();
    game.remove::<Velocity>(left).unwrap(); // leaves the movers
    game.remove::<Lit>(unlit).unwrap(); // leaves the lit group
    assert_eq!(game.aerc().is_enabled(destroyed), Ok(false), "kept for the collector");
    let mut all = collected(&mut game, updated);
    all.sort();
    let mut expected = vec![moved, destroyed, left, unlit];
    expected.sort();
    assert_eq!(all, expected);
    assert_eq!(collected(&mut game, movers), [left]);
    assert_eq!(collected(&mut game, lit), [unlit]);
    assert_eq!(game.aerc().retain_count(destroyed), Ok(1));
    game.collector_mut(updated).unwrap().clear();
    assert!(!game.is_alive(destroyed), "released with the last retain");
    check(&game);
}

#[test]
fn a_write_before_joining_a_group_is_not_an_update_in_it() {
    let mut game = Context::new();
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let lit = game.add_collector(Matcher::all_of::<Position>().any_of::<Lit>().updated());
    let other = game.add_collector(Matcher::all_of::<Position>().updated());
    game.get_mut::<Position>(e).unwrap().x = 1.0;
    game.add(e, Lit).unwrap(); // joins the lit group after the write
    assert!(game.collector(lit).unwrap().is_empty());
    assert_eq!(collected(&mut game, other), [e], "the group it was in saw it");
    game.get_mut::<Position>(e).unwrap().x = 2.0;
    assert_eq!(collected(&mut game, lit), [e], "a member now");
    check(&game);
}

#[test]
fn a_collector_made_after_a_write_does_not_see_it() {
    let mut game = Context::new();
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let early = game.add_collector(Matcher::all_of::<Position>().updated());
    game.get_mut::<Position>(e).unwrap().x = 1.0;
    let late = game.add_collector(Matcher::all_of::<Position>().updated());
    assert_eq!(collected(&mut game, early), [e]);
    assert!(game.collector(late).unwrap().is_empty());
    game.query_mut::<&mut Position>().unwrap().for_each(|p| p.x += 1.0);
    assert_eq!(collected(&mut game, late), [e]);
    check(&game);
}

#[test]
fn collectors_read_at_different_times_each_see_every_write_once() {
    let mut game = Context::new();
    let es = game.create_entities_with((0..4).map(|i| pos(i as f32))).unwrap();
    let a = game.add_collector(Matcher::all_of::<Position>().updated());
    let b = game.add_collector(Matcher::all_of::<Position>().updated());
    game.get_mut::<Position>(es[0]).unwrap().x = 1.0;
    assert_eq!(collected(&mut game, a), [es[0]]);
    game.collector_mut(a).unwrap().clear();
    game.get_mut::<Position>(es[2]).unwrap().x = 1.0;
    game.get_mut::<Position>(es[0]).unwrap().x = 2.0;
    assert_eq!(collected(&mut game, a), [es[0], es[2]]);
    assert_eq!(collected(&mut game, b), [es[0], es[2]]);
    game.collector_mut(a).unwrap().clear();
    game.collector_mut(b).unwrap().clear();
    game.get_mut::<Position>(es[1]).unwrap().x = 1.0;
    assert_eq!(collected(&mut game, b), [es[1]]);
    assert_eq!(collected(&mut game, a), [es[1]]);
    check(&game);
}

#[test]
fn a_cleared_or_reactivated_collector_does_not_replay_writes() {
    let mut game = Context::new();
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().updated());
    game.get_mut::<Position>(e).unwrap().x = 1.0;
    game.collector_mut(id).unwrap().clear();
    assert!(game.collector(id).unwrap().is_empty(), "cleared with what was written");
    game.collector_mut(id).unwrap().deactivate();
    game.get_mut::<Position>(e).unwrap().x = 2.0;
    game.collector_mut(id).unwrap().activate();
    assert!(
        game.collector(id).unwrap().is_empty(),
        "writes while off are not replayed"
    );
    assert_eq!(game.aerc().retain_count(e), Ok(0));
    check(&game);
}

#[test]
fn reactive_systems_see_query_writes_once_per_run() {
    struct Count(Vec<usize>);
    impl ReactiveSystem for Count {
        fn trigger(&mut self, game: &mut Context) -> CollectorId {
            game.add_collector(Matcher::all_of::<(Position, Velocity)>().added())
        }
        fn execute(&mut self, _: &mut Context, entities: &[Entity]) {
            self.0.push(entities.len());
        }
    }
    let mut game = Context::new();
    game.create_entities_with((0..100).map(|i| (pos(i as f32), vel(1.0))))
        .unwrap();
    game.create_entities_with((0..50).map(|i| pos(i as f32))).unwrap();
    let mut system = Reactive::new(Count(Vec::new()));
    system.initialize(&mut game);
    for _ in 0..3 {
        // Both components written: each mover still once.
        game.query_mut::<(&mut Position, &mut Velocity)>()
            .unwrap()
            .for_each(|(p, v)| {
                p.x += v.x;
                v.y += 1.0;
            });
        system.execute(&mut game);
    }
    system.execute(&mut game);
    assert_eq!(system.system().0, [100, 100, 100]);
    check(&game);
}

#[test]
fn untracked_writes_stay_unseen_even_when_moved_later() {
    let mut game = Context::new();
    let e = game.create_entity_with(pos(0.0)).unwrap();
    let id = game.add_collector(Matcher::all_of::<Position>().updated());
    game.entity_mut(e).unwrap().get_mut_untracked::<Position>().unwrap().x = 1.0;
    game.add(e, vel(0.0)).unwrap();
    game.destroy_entity(e).unwrap();
    assert!(game.collector(id).unwrap().is_empty());
    assert!(!game.is_alive(e), "nothing retains it");
    check(&game);
}

#[test]
fn storage_stats_count_stamps_only_while_a_collector_watches() {
    let n = if cfg!(miri) { 640 } else { 10_000 };
    let mut game = Context::new();
    let es = game
        .create_entities_with((0..n).map(|i| (pos(i as f32), vel(0.0))))
        .unwrap();
    assert_eq!(game.storage_stats().stamp_bytes, 0);
    let id = game.add_collector(Matcher::all_of::<Position>().updated());
    let summaries = game.storage_stats().stamp_bytes;
    assert!(
        summaries > 0 && summaries <= n / 64 * 16 + 1024,
        "a summary per block of 64 rows: {summaries}"
    );
    // Whole-column writes keep to the summaries.
    game.query_mut::<&mut Position>().unwrap().for_each(|p| p.x += 1.0);
    assert_eq!(collected(&mut game, id).len(), n);
    game.collector_mut(id).unwrap().clear();
    assert_eq!(game.storage_stats().stamp_bytes, summaries);
    // A row written at a later tick than the rest of its block, which every
    // collector has looked at since: the others' stamps are old news, no
    // row needs an entry of its own.
    game.get_mut::<Position>(es[1]).unwrap().x = 5.0;
    assert_eq!(game.storage_stats().stamp_bytes, summaries);
    assert_eq!(collected(&mut game, id), [es[1]]);
    // With a collector that has not looked since the whole-column write,
    // the rest of the block keeps that write's tick: every row gets an
    // entry of its own.
    let lagging = game.add_collector(Matcher::all_of::<Position>().updated());
    game.query_mut::<&mut Position>().unwrap().for_each(|p| p.x += 1.0);
    game.collector_mut(id).unwrap().clear();
    game.get_mut::<Position>(es[1]).unwrap().x = 6.0;
    let stamped = game.storage_stats().stamp_bytes;
    assert!(stamped >= 4 * n, "{stamped}");
    assert!(
        stamped <= 5 * n.next_multiple_of(1024) + 1024,
        "4 bytes per row (of the chunks' capacity) and a little per block: {stamped}"
    );
    assert_eq!(collected(&mut game, id), [es[1]]);
    assert_eq!(
        collected(&mut game, lagging).len(),
        n,
        "the lagging one sees both writes"
    );
    game.collector_mut(id).unwrap().remove();
    game.collector_mut(lagging).unwrap().remove();
    assert_eq!(game.storage_stats().stamp_bytes, 0, "dropped with the last watcher");
}

#[test]
fn a_lagging_collector_sees_the_writes_an_eager_one_already_took() {
    // Scattered writes, a few rows of the same blocks each round: the eager
    // collector takes each round's, the lagging one reads once at the end and
    // must see every row written in any round, once (the rows its partner
    // took keep their stamps for it).
    let mut game = Context::new();
    let es = game.create_entities_with((0..200).map(|i| pos(i as f32))).unwrap();
    let eager = game.add_collector(Matcher::all_of::<Position>().updated());
    let lagging = game.add_collector(Matcher::all_of::<Position>().updated());
    let mut all = Vec::new();
    for round in 0..6 {
        let mut written: Vec<Entity> = (0..5).map(|k| es[(round * 7 + k * 37) % 200]).collect();
        for &e in &written {
            game.get_mut::<Position>(e).unwrap().x += 1.0;
        }
        let mut seen = collected(&mut game, eager);
        seen.sort();
        written.sort();
        assert_eq!(seen, written, "round {round}");
        game.collector_mut(eager).unwrap().clear();
        all.extend(written);
    }
    all.sort();
    all.dedup();
    let mut seen = collected(&mut game, lagging);
    seen.sort();
    assert_eq!(seen, all);
    check(&game);
}

/// A value kept out of archetypes.
#[derive(Clone, Debug, Default, PartialEq)]
struct Heat(u32);
reactecs::component!(sparse Heat);

#[test]
fn writes_to_sparse_components_are_seen_through_every_path() {
    let mut game = Context::new();
    let es = game.create_entities_with((0..8).map(|i| pos(i as f32))).unwrap();
    for &e in &es[..6] {
        game.add(e, Heat(0)).unwrap();
    }
    let hot = game.add_collector(Matcher::all_of::<Heat>().updated());
    let sorted = |mut v: Vec<Entity>| {
        v.sort();
        v
    };
    game.get_mut::<Heat>(es[1]).unwrap().0 += 1;
    game.entity_mut(es[2]).unwrap().query::<&mut Heat>().unwrap().0 += 1;
    game.modify(es[3], |h: &mut Heat| h.0 += 1).unwrap();
    game.entity_mut(es[4]).unwrap().get_mut_untracked::<Heat>().unwrap().0 += 1;
    assert_eq!(sorted(collected(&mut game, hot)), sorted(vec![es[1], es[2], es[3]]));
    game.collector_mut(hot).unwrap().clear();

    game.query_mut::<&mut Heat>().unwrap().for_each(|h| h.0 += 1);
    assert_eq!(collected(&mut game, hot).len(), 6, "every holder, once");
    game.collector_mut(hot).unwrap().clear();
    game.query_mut::<(&Position, Option<&mut Heat>)>()
        .unwrap()
        .for_each_chunk(|_| {});
    assert_eq!(collected(&mut game, hot).len(), 6, "handed out mutably: holders only");
    game.collector_mut(hot).unwrap().clear();
    #[cfg(feature = "parallel")]
    {
        game.query_mut::<&mut Heat>()
            .unwrap()
            .batch_size(2)
            .par_for_each(|h| h.0 += 1);
        assert_eq!(collected(&mut game, hot).len(), 6);
        game.collector_mut(hot).unwrap().clear();
    }

    // Stamped, then removed or destroyed: handed over first, and retained.
    game.get_mut::<Heat>(es[0]).unwrap().0 = 9;
    game.get_mut::<Heat>(es[5]).unwrap().0 = 9;
    game.remove::<Heat>(es[0]).unwrap();
    game.destroy_entity(es[5]).unwrap();
    assert_eq!(collected(&mut game, hot), [es[0], es[5]]);
    assert_eq!(game.aerc().is_enabled(es[5]), Ok(false));
    // A slot given a new value starts unchanged.
    game.add(es[0], Heat(1)).unwrap();
    game.collector_mut(hot).unwrap().clear();
    assert!(game.collector(hot).unwrap().is_empty());
    check(&game);
}

/// A zero-sized tag, kept in archetypes.
#[derive(Clone, Debug, Default)]
struct Marked;
reactecs::component!(Marked);

#[test]
fn tags_are_never_updated_and_carry_no_stamps() {
    let mut game = Context::new();
    let es = game
        .create_entities_with((0..4).map(|i| (pos(i as f32), Marked)))
        .unwrap();
    let lit_updates = game.add_collector(Matcher::all_of::<Lit>().updated());
    let marked_updates = game.add_collector(Matcher::all_of::<Marked>().updated());
    let lit_added = game.add_collector(Matcher::all_of::<Lit>().added());
    // Only `Position`-free watching: nothing here can be updated, so no
    // column or slot carries stamps.
    assert_eq!(game.storage_stats().stamp_bytes, 0, "tags carry no change stamps");
    for &e in &es {
        game.add(e, Lit).unwrap();
    }
    assert_eq!(collected(&mut game, lit_added), es, "joins are collected");
    game.collector_mut(lit_added).unwrap().clear();
    for &e in &es {
        // Written through every door: none of it is an update.
        game.replace(e, Lit).unwrap();
        game.replace(e, Marked).unwrap();
        game.modify(e, |_: &mut Marked| ()).unwrap();
        let _ = game.get_mut::<Lit>(e).unwrap();
        let _ = game.get_mut::<Marked>(e).unwrap();
        game.remove::<Lit>(e).unwrap();
        game.add(e, Lit).unwrap();
    }
    game.query_mut::<&mut Marked>().unwrap().for_each(|_| ());
    assert!(
        collected(&mut game, lit_updates).is_empty(),
        "a tag toggled or set again is never an update"
    );
    assert!(collected(&mut game, marked_updates).is_empty());
    assert_eq!(collected(&mut game, lit_added), es, "toggled off and on: joined again");
    assert_eq!(game.storage_stats().stamp_bytes, 0);
    check(&game);
}

#[test]
fn replacing_a_tag_the_entity_has_fires_nothing_and_adds_one_it_lacks() {
    let mut game = Context::new();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = heard.clone();
    game.subscribe(move |event: &ContextEvent<'_>| log.lock().unwrap().push(format!("{event:?}")));
    let e = game.create_entity_with(pos(0.0)).unwrap();
    heard.lock().unwrap().clear();
    game.replace(e, Marked).unwrap();
    assert_eq!(heard.lock().unwrap().len(), 1, "absent: an add");
    assert!(game.has::<Marked>(e));
    game.replace(e, Marked).unwrap();
    game.replace(e, Lit).unwrap();
    game.replace(e, Lit).unwrap();
    assert_eq!(
        heard.lock().unwrap().len(),
        2,
        "present: nothing fires: {:?}",
        heard.lock().unwrap()
    );
    assert!(game.has::<Lit>(e));
    check(&game);
}
