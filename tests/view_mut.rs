//! `ViewMut`: prepared random access by handle. Against `get` / `get_mut` on
//! random programs (same values, same errors, writes collected the same),
//! and its refusals (aliasing, keyed components).

mod common;

use common::*;
use proptest::prelude::*;
use reactecs::prelude::*;

/// Kept out of archetypes: a sparse value and a flag.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Heat(u32);
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Lit;
reactecs::component!(sparse Heat, flag Lit);

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

/// One context and its entities, each made from a byte: which of Position,
/// Velocity, Heat and Lit it has; then some destroyed, one retained.
fn world(shapes: &[u8]) -> (Context, Vec<Entity>, CollectorId) {
    let mut game = Context::new();
    let moved = game.add_collector(Matcher::all_of::<(Position, Heat)>().updated());
    let owner = Owner::new();
    let mut es = Vec::new();
    for (i, &shape) in shapes.iter().enumerate() {
        let e = game.create_entity();
        if shape & 1 != 0 {
            game.add(e, pos(i as f32)).unwrap();
        }
        if shape & 2 != 0 {
            game.add(
                e,
                Velocity {
                    x: 1.0,
                    y: f32::from(shape),
                },
            )
            .unwrap();
        }
        if shape & 4 != 0 {
            game.add(e, Heat(u32::from(shape))).unwrap();
        }
        if shape & 8 != 0 {
            game.add(e, Lit).unwrap();
        }
        if shape & 16 != 0 {
            game.retain(e, owner).unwrap();
        }
        if shape & 32 != 0 {
            game.destroy_entity(e).unwrap();
        }
        es.push(e);
    }
    (game, es, moved)
}

/// What `get_mut` gives for the same write: the new x, or the error.
fn by_get(game: &mut Context, e: Entity) -> Result<(f32, u32, bool), Error> {
    let v = game.get::<Velocity>(e)?.x;
    let heat = game.get::<Heat>(e).map(|h| h.0);
    let lit = game.has::<Lit>(e);
    let mut p = game.get_mut::<Position>(e)?;
    p.x += v;
    let x = p.x;
    drop(p);
    let heat = heat?;
    game.get_mut::<Heat>(e)?.0 += 1;
    Ok((x, heat + 1, lit))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 128 },
        // Miri isolates the file system, where failures are kept.
        failure_persistence: if cfg!(miri) { None } else { ProptestConfig::default().failure_persistence },
        ..ProptestConfig::default()
    })]

    #[test]
    fn view_mut_matches_get_and_get_mut(shapes in prop::collection::vec(0u8..64, 1..40), picks in prop::collection::vec(0usize..64, 0..80)) {
        let (mut a, es, moved_a) = world(&shapes);
        let (mut b, es_b, moved_b) = world(&shapes);
        prop_assert_eq!(es.len(), es_b.len());
        let foreign = Context::new().create_entity();
        // Every collector starts empty: only the writes count.
        a.collector_mut(moved_a).unwrap().clear();
        b.collector_mut(moved_b).unwrap().clear();
        for &pick in &picks {
            let (e, eb) = match (es.get(pick), es_b.get(pick)) {
                (Some(&e), Some(&eb)) => (e, eb),
                _ => (foreign, foreign),
            };
            // Position and Velocity in archetypes, Heat sparse, Lit a flag.
            let want = by_get(&mut a, e);
            let mut view = b.view_mut::<(&mut Position, &Velocity, &mut Heat, Option<&Lit>)>().unwrap();
            let got = view.get_mut(eb).map(|(p, v, h, lit)| {
                p.x += v.x;
                h.0 += 1;
                (p.x, h.0, lit.is_some())
            });
            // get_mut reports the first missing component of its own
            // order; the view, the first its tuple names: compare kinds.
            match (&want, &got) {
                (Ok(w), Ok(g)) => prop_assert_eq!(w, g),
                (Err(Error::ComponentAbsent { .. }), Err(Error::ComponentAbsent { .. })) => {
                    // get_mut may have written Position before finding Heat
                    // missing: do the same to b, so both stay equal.
                    if a.get::<Position>(e).ok() != b.get::<Position>(eb).ok() {
                        let v = b.get::<Velocity>(eb).unwrap().x;
                        b.get_mut::<Position>(eb).unwrap().x += v;
                    }
                }
                (Err(w), Err(g)) => prop_assert_eq!(std::mem::discriminant(w), std::mem::discriminant(g), "{:?} / {:?}", w, g),
                (w, g) => prop_assert!(false, "{:?} / {:?}", w, g),
            }
        }
        for (&e, &eb) in es.iter().zip(&es_b) {
            prop_assert_eq!(a.get::<Position>(e).ok(), b.get::<Position>(eb).ok());
            prop_assert_eq!(a.get::<Heat>(e).ok(), b.get::<Heat>(eb).ok());
        }
        let slots = |game: &mut Context, id| -> Vec<u32> {
            game.collector(id).unwrap().entities().iter().map(|e| e.index()).collect()
        };
        let want = slots(&mut a, moved_a);
        let got = slots(&mut b, moved_b);
        prop_assert_eq!(want, got, "the view's writes are collected as get_mut's");
        a.check_invariants().unwrap();
        b.check_invariants().unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 64 },
        failure_persistence: if cfg!(miri) { None } else { ProptestConfig::default().failure_persistence },
        ..ProptestConfig::default()
    })]

    /// `Context::view` reads through the context's plan when a query keeps
    /// one current, and through a plan it places itself otherwise: both
    /// read what `get` reads, and refuse alike.
    #[test]
    fn a_view_reads_the_same_with_the_context_s_plan_or_its_own(shapes in prop::collection::vec(0u8..64, 1..40), picks in prop::collection::vec(0usize..64, 0..80)) {
        type R<'q> = (&'q Position, Option<&'q Velocity>, &'q Heat, Option<&'q Lit>);
        let (own, es, _) = world(&shapes);
        let (mut kept, es_kept, _) = world(&shapes);
        // A query of `R` leaves its plan in `kept`, current for its view.
        kept.query_mut::<R<'static>>().unwrap().for_each(|_| ());
        let foreign = Context::new().create_entity();
        let (by_own, by_kept) = (own.view::<R<'static>>(), kept.view::<R<'static>>());
        let read = |item: Result<R<'_>, Error>| {
            item.map(|(p, v, h, lit)| (p.x, v.map(|v| v.y), h.0, lit.is_some()))
        };
        for &pick in &picks {
            let (e, ek) = match (es.get(pick), es_kept.get(pick)) {
                (Some(&e), Some(&ek)) => (e, ek),
                _ => (foreign, foreign),
            };
            let (got, kept_got) = (read(by_own.get(e)), read(by_kept.get(ek)));
            let by_get = own.get::<Position>(e).and_then(|p| {
                let heat = own.get::<Heat>(e)?;
                Ok((p.x, own.get::<Velocity>(e).ok().map(|v| v.y), heat.0, own.has::<Lit>(e)))
            });
            match (&got, &kept_got, &by_get) {
                (Ok(a), Ok(b), Ok(c)) => {
                    prop_assert_eq!(a, b);
                    prop_assert_eq!(a, c);
                }
                (Err(a), Err(b), Err(c)) => {
                    // The two contexts' handles differ: compare what is
                    // wrong, and the component named.
                    let absent = |e: &Error| match e {
                        Error::ComponentAbsent { component, .. } => Some(*component),
                        _ => None,
                    };
                    prop_assert_eq!(std::mem::discriminant(a), std::mem::discriminant(b), "{:?} / {:?}", a, b);
                    prop_assert_eq!(absent(a), absent(b));
                    prop_assert_eq!(std::mem::discriminant(a), std::mem::discriminant(c), "{:?} / {:?}", a, c);
                }
                (a, b, c) => prop_assert!(false, "{:?} / {:?} / {:?}", a, b, c),
            }
        }
    }
}

#[test]
fn view_mut_errors_name_what_is_wrong() {
    let mut game = Context::new();
    let full = game
        .create_entity_with((pos(0.0), Velocity { x: 1.0, y: 0.0 }))
        .unwrap();
    let bare = game.create_entity_with(pos(0.0)).unwrap();
    let dead = game.create_entity_with(pos(0.0)).unwrap();
    let disabled = game.create_entity_with(pos(0.0)).unwrap();
    game.destroy_entity(dead).unwrap();
    game.retain(disabled, Owner::new()).unwrap();
    game.destroy_entity(disabled).unwrap();
    let foreign = Context::new().create_entity();
    let mut view = game.view_mut::<(&mut Position, &Velocity)>().unwrap();
    assert!(view.get_mut(full).is_ok());
    assert!(view.contains(full));
    match view.get_mut(bare) {
        Err(Error::ComponentAbsent { component, .. }) => assert!(component.ends_with("Velocity"), "{component}"),
        other => panic!("expected ComponentAbsent, got {:?}", other.map(|_| ())),
    }
    assert!(!view.contains(bare));
    assert!(matches!(view.get_mut(dead), Err(Error::StaleEntity { .. })));
    assert!(matches!(view.get_mut(disabled), Err(Error::EntityDisabled { .. })));
    assert!(matches!(view.get_mut(foreign), Err(Error::ForeignEntity { .. })));
    // The same errors as `get_mut`.
    assert!(matches!(
        game.get_mut::<Velocity>(bare),
        Err(Error::ComponentAbsent { .. })
    ));
    assert!(matches!(game.get_mut::<Position>(dead), Err(Error::StaleEntity { .. })));
    assert!(matches!(
        game.get_mut::<Position>(disabled),
        Err(Error::EntityDisabled { .. })
    ));
    assert!(matches!(
        game.get_mut::<Position>(foreign),
        Err(Error::ForeignEntity { .. })
    ));
}

#[test]
fn view_mut_refuses_aliasing_and_keyed_components() {
    let mut game = Context::new();
    let e = game.create_entity_with((pos(0.0), Name("a".into()))).unwrap();
    assert!(matches!(
        game.view_mut::<(&mut Position, &Position)>(),
        Err(Error::QueryAliasing { .. })
    ));
    let names = game
        .add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))
        .unwrap();
    assert!(matches!(game.view_mut::<&mut Name>(), Err(Error::KeyedWrite { .. })));
    // Reading the key is fine, and so is writing anything else.
    let mut view = game.view_mut::<(&Name, &mut Position)>().unwrap();
    let (name, p) = view.get_mut(e).unwrap();
    p.x = name.0.len() as f32;
    assert_eq!(game.index(names).unwrap().get("a"), Some(e));
    assert_eq!(game.get::<Position>(e).unwrap().x, 1.0);
}

#[test]
fn view_mut_sees_archetypes_made_since_its_plan_was_last_used() {
    let mut game = Context::new();
    let a = game.create_entity_with(pos(1.0)).unwrap();
    game.view_mut::<&mut Position>().unwrap().get_mut(a).unwrap().x = 2.0;
    // A new archetype holding Position, after the plan was placed.
    let b = game
        .create_entity_with((pos(1.0), Velocity { x: 0.0, y: 0.0 }))
        .unwrap();
    let mut view = game.view_mut::<&mut Position>().unwrap();
    view.get_mut(b).unwrap().x = 3.0;
    view.get_mut(a).unwrap().x += 1.0;
    assert_eq!(game.get::<Position>(a).unwrap().x, 3.0);
    assert_eq!(game.get::<Position>(b).unwrap().x, 3.0);
}

#[test]
fn view_mut_hands_out_entities_and_optional_components() {
    let mut game = Context::new();
    let hot = game.create_entity_with((pos(0.0), Heat(1))).unwrap();
    let cold = game.create_entity_with(pos(0.0)).unwrap();
    let heated = game.add_collector(Matcher::all_of::<Heat>().updated());
    let mut view = game
        .view_mut::<(Entity, Option<&mut Heat>, Option<&Velocity>)>()
        .unwrap();
    for e in [hot, cold] {
        let (me, heat, velocity) = view.get_mut(e).unwrap();
        assert_eq!(me, e);
        assert!(velocity.is_none());
        if let Some(heat) = heat {
            heat.0 += 1;
        }
    }
    assert_eq!(game.get::<Heat>(hot).unwrap(), &Heat(2));
    assert_eq!(
        game.collector(heated).unwrap().entities(),
        [hot],
        "the sparse write is collected"
    );
    game.check_invariants().unwrap();
}

/// Six archetype components, so that a view can name more than the first
/// few (whose change stamps the view finds once per archetype) and write
/// any of them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct C0(u32);
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct C1(u32);
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct C2(u32);
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct C3(u32);
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct C4(u32);
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct C5(u32);
reactecs::component!(C0, C1, C2, C3, C4, C5);

#[test]
fn view_mut_writes_are_collected_for_exactly_the_components_written_wherever_the_query_names_them() {
    let mut game = Context::new();
    let updated = [
        game.add_collector(Matcher::all_of::<C0>().updated()),
        game.add_collector(Matcher::all_of::<C1>().updated()),
        game.add_collector(Matcher::all_of::<C2>().updated()),
        game.add_collector(Matcher::all_of::<C3>().updated()),
        game.add_collector(Matcher::all_of::<C4>().updated()),
        game.add_collector(Matcher::all_of::<C5>().updated()),
    ];
    let all = (C0(0), C1(1), C2(2), C3(3), C4(4), C5(5));
    // Two archetypes, so the view moves between them.
    let a = game.create_entity_with(all).unwrap();
    let b = game.create_entity_with(all).unwrap();
    game.add(b, Position { x: 0.0, y: 0.0 }).unwrap();
    let written_by = |game: &mut Context| -> Vec<usize> {
        let seen: Vec<usize> = (0..6)
            .filter(|&i| game.collector(updated[i]).unwrap().entities() == [a, b])
            .collect();
        for &c in &updated {
            game.collector_mut(c).unwrap().clear();
        }
        seen
    };
    written_by(&mut game);
    // A read before the write: the written one is collected, not the read.
    let mut view = game.view_mut::<(&C0, &mut C1)>().unwrap();
    for e in [a, b] {
        let (c0, c1) = view.get_mut(e).unwrap();
        c1.0 += c0.0;
    }
    assert_eq!(written_by(&mut game), [1]);
    // Writes among reads, past the first four components named.
    let mut view = game.view_mut::<(&C0, &mut C1, &C2, &C3, &mut C4, &mut C5)>().unwrap();
    for e in [a, b] {
        let (_, c1, _, c3, c4, c5) = view.get_mut(e).unwrap();
        c1.0 += 1;
        c4.0 += c3.0;
        c5.0 += 1;
    }
    assert_eq!(written_by(&mut game), [1, 4, 5]);
    // The entity first (it takes no column), then a write at the end.
    let mut view = game.view_mut::<(Entity, &C5, &C4, &C3, &C2, &mut C0)>().unwrap();
    for e in [a, b] {
        let (entity, ..) = view.get_mut(e).unwrap();
        assert_eq!(entity, e);
    }
    assert_eq!(written_by(&mut game), [0]);
    // Through `EntityMut::query` (one row, its stamps looked up).
    for e in [a, b] {
        let mut entity = game.entity_mut(e).unwrap();
        let (_, c2) = entity.query::<(&C1, &mut C2)>().unwrap();
        c2.0 += 1;
    }
    assert_eq!(written_by(&mut game), [2]);
}
