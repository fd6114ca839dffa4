//! Split borrows: `query_mut_and_view` writes some components row by row
//! while a `View` reads others of any entity; `view` reads by handle on a
//! shared context. Aliasing is refused with nothing changed; the writes
//! are seen by collectors as any query's; sequential and parallel runs give
//! the same values.

mod common;

use common::*;
use reactecs::prelude::*;

/// What a boid steers by (written while positions and velocities are read).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Accel(f32, f32);
/// The boid a boid follows.
#[derive(Debug, Clone, Copy)]
struct Follows(Entity);
/// A sparse component, kept out of archetypes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Charge(f32);
/// A flag.
#[derive(Debug, Default)]
struct Lit;
reactecs::component!(Accel, Follows, sparse Charge, flag Lit);

/// `n` boids in a ring, each following the next one, some with a `Charge`,
/// a `Velocity` and a `Lit` flag; their handles.
fn flock(n: usize) -> (Context, Vec<Entity>) {
    let mut game = Context::new();
    let es: Vec<Entity> = (0..n)
        .map(|i| {
            let e = game
                .create_entity_with((
                    Position {
                        x: i as f32,
                        y: (i * i % 7) as f32,
                    },
                    Accel::default(),
                ))
                .unwrap();
            if i % 3 == 0 {
                game.add(e, Velocity { x: 1.0, y: i as f32 }).unwrap();
            }
            if i % 4 == 0 {
                game.add(e, Charge(i as f32 * 0.5)).unwrap();
            }
            if i % 5 == 0 {
                game.add(e, Lit).unwrap();
            }
            e
        })
        .collect();
    for (i, &e) in es.iter().enumerate() {
        game.add(e, Follows(es[(i + 1) % n])).unwrap();
    }
    (game, es)
}

/// The steering rule, on a leader's position, velocity and charge.
fn steer(at: &Position, leader: (&Position, Option<&Velocity>, Option<&Charge>)) -> Accel {
    let (p, v, c) = leader;
    let vx = v.map_or(0.0, |v| v.x);
    let charge = c.map_or(1.0, |c| c.0);
    Accel((p.x - at.x) * charge + vx, (p.y - at.y) * charge)
}

/// The same rule computed from copies, without any split borrow.
fn expected(game: &Context, es: &[Entity]) -> Vec<Accel> {
    es.iter()
        .map(|&e| {
            let leader = game.get::<Follows>(e).unwrap().0;
            let at = game.get::<Position>(e).unwrap();
            let p = game.get::<Position>(leader).unwrap();
            let v = game.get::<Velocity>(leader).ok();
            let c = game.get::<Charge>(leader).ok();
            steer(at, (p, v, c))
        })
        .collect()
}

fn accels(game: &Context, es: &[Entity]) -> Vec<Accel> {
    es.iter().map(|&e| *game.get::<Accel>(e).unwrap()).collect()
}

type Writes = (&'static mut Accel, &'static Follows, &'static Position);
type Reads = (&'static Position, Option<&'static Velocity>, Option<&'static Charge>);

#[test]
fn a_query_writes_its_rows_while_a_view_reads_any_entity() {
    let (mut game, es) = flock(if cfg!(miri) { 40 } else { 300 });
    let want = expected(&game, &es);
    let (mut query, view) = game
        .query_mut_and_view::<(&mut Accel, &Follows, &Position), Reads>()
        .unwrap();
    query.for_each(|(accel, follows, at)| *accel = steer(at, view.get(follows.0).unwrap()));
    assert_eq!(accels(&game, &es), want);
    check(&game);
    // The named aliases work the same.
    let _: Result<(QueryMut<'_, Writes>, View<'_, Reads>), Error> = game.query_mut_and_view::<Writes, Reads>();
}

#[test]
fn the_view_may_read_what_the_query_reads_and_its_own_rows() {
    let (mut game, es) = flock(12);
    let (mut query, view) = game
        .query_mut_and_view::<(Entity, &mut Accel, &Position), &Position>()
        .unwrap();
    query.for_each(|(e, accel, at)| {
        let mine = view.get(e).unwrap();
        assert_eq!(mine.x, at.x, "the view sees the row the query is on");
        accel.0 = mine.x;
    });
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(game.get::<Accel>(e).unwrap().0, i as f32);
    }
}

#[test]
fn a_view_that_reads_what_the_query_writes_is_refused_and_nothing_changes() {
    let (mut game, es) = flock(10);
    let seen = game.add_collector(Matcher::all_of::<Accel>().updated());
    let before = accels(&game, &es);
    for result in [
        game.query_mut_and_view::<&mut Accel, &Accel>().map(drop),
        game.query_mut_and_view::<(&mut Accel, &Position), (&Position, Option<&Accel>)>()
            .map(drop),
        game.query_mut_and_view::<(Option<&mut Accel>, &Follows), (Entity, &Accel)>()
            .map(drop),
    ] {
        match result {
            Err(Error::QueryAliasing { context, component }) => {
                assert_eq!((context, component), (game.name(), "Accel"));
            }
            other => panic!("expected QueryAliasing, got {other:?}"),
        }
    }
    // A sparse component written and read is refused the same way.
    assert!(matches!(
        game.query_mut_and_view::<&mut Charge, (&Position, &Charge)>().map(drop),
        Err(Error::QueryAliasing {
            component: "Charge",
            ..
        })
    ));
    // A query that aliases on its own is refused as by `query_mut`.
    assert!(matches!(
        game.query_mut_and_view::<(&mut Accel, &Accel), &Position>().map(drop),
        Err(Error::QueryAliasing { component: "Accel", .. })
    ));
    assert_eq!(accels(&game, &es), before);
    assert!(
        game.collector(seen).unwrap().entities().is_empty(),
        "a refused split stamps nothing"
    );
    check(&game);
}

#[test]
fn writes_through_the_split_query_are_seen_by_collectors() {
    let (mut game, es) = flock(20);
    let seen = game.add_collector(Matcher::all_of::<Accel>().updated());
    let untouched = game.add_collector(Matcher::all_of::<Position>().updated());
    let (mut query, view) = game.query_mut_and_view::<(&mut Accel, &Follows), &Position>().unwrap();
    query.for_each(|(accel, follows)| accel.0 = view.get(follows.0).unwrap().x);
    let mut got = game.collector(seen).unwrap().entities().to_vec();
    got.sort();
    let mut want = es.clone();
    want.sort();
    assert_eq!(got, want);
    assert!(
        game.collector(untouched).unwrap().entities().is_empty(),
        "what the view reads is not a change"
    );
}

#[test]
fn the_query_side_writes_sparse_components_and_the_view_reads_flags() {
    let (mut game, es) = flock(24);
    let (mut query, view) = game
        .query_mut_and_view::<(&mut Charge, &Follows), (Option<&Lit>, &Position)>()
        .unwrap();
    query.for_each(|(charge, follows)| {
        let (lit, at) = view.get(follows.0).unwrap();
        charge.0 = if lit.is_some() { -at.x } else { at.x };
    });
    for (i, &e) in es.iter().enumerate() {
        let leader = (i + 1) % es.len();
        let want = if leader % 5 == 0 {
            -(leader as f32)
        } else {
            leader as f32
        };
        assert_eq!(game.get::<Charge>(e).ok().map(|c| c.0), (i % 4 == 0).then_some(want));
    }
    check(&game);
}

#[test]
fn a_view_reports_stale_disabled_and_absent_as_typed_errors() {
    let (mut game, es) = flock(6);
    let stale = es[1];
    let disabled = es[2];
    let owner = Owner::new();
    game.retain(disabled, owner).unwrap();
    game.destroy_entity(stale).unwrap();
    game.destroy_entity(disabled).unwrap();
    let bare = game.create_entity_with(Position { x: 0.0, y: 0.0 }).unwrap();
    let view = game.view::<(&Position, &Velocity)>();
    assert!(matches!(view.get(stale), Err(Error::StaleEntity { .. })));
    assert!(matches!(view.get(disabled), Err(Error::EntityDisabled { .. })));
    assert!(matches!(
        view.get(bare),
        Err(Error::ComponentAbsent { component: "Velocity", entity, .. }) if entity == bare
    ));
    let sparse = game.view::<(&Position, &Charge)>();
    assert!(matches!(
        sparse.get(es[1 + 4]),
        Err(Error::ComponentAbsent {
            component: "Charge",
            ..
        })
    ));
    assert!(sparse.contains(es[4]));
    assert!(!sparse.contains(bare));
    let (p, v) = view.get(es[3]).unwrap();
    assert_eq!((p.x, v.y), (3.0, 3.0));
    assert!(format!("{view:?}").starts_with("View { params: "));
}

#[test]
fn a_split_refuses_to_write_keys_an_index_keeps() {
    let (mut game, _) = flock(8);
    game.add_index(EntityIndex::new("ByAccel", |a: &Accel| a.0.to_bits()))
        .unwrap();
    assert!(matches!(
        game.query_mut_and_view::<&mut Accel, &Position>().map(drop),
        Err(Error::KeyedWrite { component: "Accel", .. })
    ));
}

#[cfg(feature = "parallel")]
#[test]
fn par_split_writes_equal_the_sequential_ones() {
    let n = if cfg!(miri) { 70 } else { 2000 };
    for round in 0..if cfg!(miri) { 2 } else { 10 } {
        let (mut game, es) = flock(n);
        let want = expected(&game, &es);
        let seen = game.add_collector(Matcher::all_of::<Accel>().updated());
        let (query, view) = game
            .query_mut_and_view::<(&mut Accel, &Follows, &Position), Reads>()
            .unwrap();
        query
            .batch_size(1 + round * 7)
            .par_for_each(|(accel, follows, at)| *accel = steer(at, view.get(follows.0).unwrap()));
        assert_eq!(accels(&game, &es), want, "round {round}");
        assert_eq!(game.collector(seen).unwrap().len(), n);
        // Per-batch states, in row order, as the sequential loop's.
        let (mut query, view) = game.query_mut_and_view::<(Entity, &mut Accel), &Follows>().unwrap();
        let leaders: Vec<Entity> = query
            .par_fold(Vec::new, |list, (e, accel)| {
                accel.1 = 0.0;
                list.push((e, view.get(e).unwrap().0));
            })
            .into_iter()
            .flatten()
            .map(|(_, leader)| leader)
            .collect();
        let by_hand: Vec<Entity> = game.query::<&Follows>().iter().map(|f| f.0).collect();
        assert_eq!(leaders, by_hand);
        check(&game);
    }
}

#[test]
fn the_view_reads_the_context_s_indices_while_the_query_writes() {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    struct Cell(i32);
    reactecs::component!(Cell);
    let mut game = Context::new();
    let grid = game.add_index(EntityIndex::new("Grid", |c: &Cell| *c)).unwrap();
    let es: Vec<Entity> = (0..30)
        .map(|i| game.create_entity_with((Cell(i % 5), Position { x: i as f32, y: 0.0 }, Accel::default())))
        .collect::<Result<_, _>>()
        .unwrap();
    let other = Context::new();
    let (mut query, view) = game.query_mut_and_view::<(&mut Accel, &Cell), &Position>().unwrap();
    let cells = view.index(grid).unwrap();
    query.for_each(|(accel, cell)| {
        // The sum of the x of every entity in the same cell.
        accel.0 = cells.get(cell).iter().map(|&e| view.get(e).unwrap().x).sum();
    });
    for (i, &e) in es.iter().enumerate() {
        let want: f32 = (0..30).filter(|j| j % 5 == i as i32 % 5).map(|j| j as f32).sum();
        assert_eq!(game.get::<Accel>(e).unwrap().0, want);
    }
    // An index id of another context is refused, as by `Context::index`.
    let mut elsewhere = other;
    let foreign = elsewhere.add_index(EntityIndex::new("Grid", |c: &Cell| *c)).unwrap();
    let view = game.view::<&Position>();
    assert!(matches!(view.index(foreign), Err(Error::UnknownIndex { .. })));
}
