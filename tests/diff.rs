//! Comparing contexts (`Context::diff`, `Context::diff_by_key`): entities
//! matched by creation order or by a key, values and presence of each
//! compared type (flags and sparse components too), entities on one side
//! only, duplicate keys, and the printed list.

mod common;

use common::*;
use reactecs::diff::{Difference, Side};
use reactecs::{Context, ContextDiff, Entity};

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Lit;
#[derive(Clone, Copy, Debug, PartialEq)]
struct Poison(u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct NetId(u32);
reactecs::component!(flag Lit, sparse Poison, NetId);

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

type Compared = (Position, Name, Lit, Poison);

#[test]
fn equal_contents_give_an_empty_diff_whatever_the_slots() {
    let mut left = Context::new();
    let mut right = Context::new();
    // Left reuses a slot; right does not: creation order matches them.
    let gone = left.create_entity();
    left.destroy_entity(gone).unwrap();
    for game in [&mut left, &mut right] {
        let a = game.create_entity_with((pos(1.0), Name("a".into()))).unwrap();
        game.add(a, Lit).unwrap();
        let b = game.create_entity_with((pos(2.0), Poison(3))).unwrap();
        game.create_entity_with(Opaque(1)).unwrap();
        let _ = b;
    }
    let diff = left.diff::<Compared>(&right);
    assert!(diff.is_empty(), "{diff}");
    assert_eq!(diff.len(), 0);
    assert_eq!(diff.to_string(), "");
    assert_eq!(diff, ContextDiff::default());
    assert!(left.diff::<()>(&right).is_empty(), "no type compared: nothing differs");
}

#[test]
fn values_presence_flags_sparse_and_extra_entities_are_listed_in_order() {
    let mut left = Context::new();
    let mut right = Context::new();
    let l: Vec<Entity> = (0..4)
        .map(|i| left.create_entity_with(pos(i as f32)).unwrap())
        .collect();
    let r: Vec<Entity> = (0..3)
        .map(|i| right.create_entity_with(pos(i as f32)).unwrap())
        .collect();
    right.replace(r[0], Position { x: 0.0, y: 2.5 }).unwrap();
    left.add(l[1], Lit).unwrap();
    right.add(r[2], Poison(1)).unwrap();
    left.add(l[2], Poison(2)).unwrap();
    right.add(r[1], Name("b".into())).unwrap();
    let diff = left.diff::<Compared>(&right);
    assert_eq!(
        diff.to_string(),
        "entity #0: Position { x: 0.0, y: 0.0 } != Position { x: 0.0, y: 2.5 }\n\
         entity #1: (no Name) != Name(\"b\")\n\
         entity #1: Lit != (no Lit)\n\
         entity #2: Poison(2) != Poison(1)\n\
         entity #3 only in left\n"
    );
    assert_eq!(diff.len(), 5);
    assert_eq!(
        diff.differences()[1],
        Difference::Component {
            entity: "#1".into(),
            component: "Name",
            left: None,
            right: Some("Name(\"b\")".into()),
        }
    );
    assert_eq!(
        diff.iter().last(),
        Some(&Difference::Unmatched {
            entity: "#3".into(),
            side: Side::Left
        })
    );
    // The other way round: left and right swap.
    let back = right.diff::<Compared>(&left);
    assert_eq!(back.len(), 5);
    assert!(back.to_string().ends_with("entity #3 only in right\n"), "{back}");
    // Only the types named are compared.
    assert!(
        left.diff::<Velocity>(&right)
            .differences()
            .iter()
            .all(|d| matches!(d, Difference::Unmatched { .. }))
    );
}

#[test]
fn creation_order_is_not_slot_order() {
    let mut left = Context::new();
    let first = left.create_entity_with(pos(9.0)).unwrap();
    let second = left.create_entity_with(pos(1.0)).unwrap();
    left.destroy_entity(first).unwrap();
    // Reuses `first`'s slot: earlier slot, later creation.
    left.create_entity_with(pos(2.0)).unwrap();
    let _ = second;
    let mut right = Context::new();
    right.create_entities_with([pos(1.0), pos(2.0)]).unwrap();
    assert!(
        left.diff::<Position>(&right).is_empty(),
        "{}",
        left.diff::<Position>(&right)
    );
}

#[test]
fn diff_by_key_matches_entities_by_key_not_by_creation() {
    let mut server = Context::new();
    server
        .create_entities_with([(NetId(1), pos(0.0)), (NetId(2), pos(5.0)), (NetId(3), pos(6.0))])
        .unwrap();
    server.create_entity_with(pos(100.0)).unwrap(); // no key: not compared
    let mut client = Context::new();
    client
        .create_entities_with([(NetId(4), pos(1.0)), (NetId(2), pos(5.0)), (NetId(1), pos(0.5))])
        .unwrap();
    let diff = server.diff_by_key::<NetId, Position>(&client);
    assert_eq!(
        diff.to_string(),
        "entity NetId(1): Position { x: 0.0, y: 0.0 } != Position { x: 0.5, y: 0.0 }\n\
         entity NetId(3) only in left\n\
         entity NetId(4) only in right\n"
    );
    // Created in another order, same keys and values: no difference.
    let mut shuffled = Context::new();
    shuffled
        .create_entities_with([(NetId(3), pos(6.0)), (NetId(1), pos(0.0)), (NetId(2), pos(5.0))])
        .unwrap();
    assert!(server.diff_by_key::<NetId, Position>(&shuffled).is_empty());
    assert!(
        !server.diff::<Position>(&shuffled).is_empty(),
        "by creation order they differ"
    );
}

#[test]
fn a_key_held_twice_is_listed_and_not_compared() {
    let mut left = Context::new();
    left.create_entities_with([(NetId(1), pos(0.0)), (NetId(1), pos(1.0)), (NetId(2), pos(2.0))])
        .unwrap();
    let mut right = Context::new();
    right
        .create_entities_with([
            (NetId(1), pos(7.0)),
            (NetId(2), pos(2.0)),
            (NetId(5), pos(0.0)),
            (NetId(5), pos(0.0)),
        ])
        .unwrap();
    let diff = left.diff_by_key::<NetId, Position>(&right);
    assert_eq!(
        diff.to_string(),
        "key NetId(1) held by 2 entities in left\n\
         key NetId(5) held by 2 entities in right\n\
         entity NetId(5) only in right\n"
    );
    assert_eq!(
        diff.differences()[0],
        Difference::DuplicateKey {
            key: "NetId(1)".into(),
            side: Side::Left,
            holders: 2
        }
    );
}

#[test]
fn diffs_compare_equal_when_they_list_the_same_differences() {
    let mut a = Context::new();
    a.create_entity_with(pos(1.0)).unwrap();
    let b = Context::new();
    let one = a.diff::<Position>(&b);
    let two = a.diff::<(Position, Name)>(&b);
    assert_eq!(one, two);
    assert_ne!(one, b.diff::<Position>(&a));
    let copy: ContextDiff = one.clone();
    assert_eq!((&copy).into_iter().count(), 1);
}
