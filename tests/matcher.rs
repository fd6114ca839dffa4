//! `Matcher`: the AllOf / AnyOf / NoneOf rules, equality and hashing that
//! ignore order, typed and id-based construction, `Display`, and `watches`.

use std::collections::HashSet;

use reactecs::prelude::*;
use reactecs::{ComponentId, ComponentSet};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(f32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(f32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Frozen;

// Ids go by full type path, so within this file by name:
// Frozen < Health < Position < Velocity.
reactecs::component!(Position, Velocity, Health, Frozen);

fn id<T: Component>() -> ComponentId {
    T::component_id()
}

/// The component set of an entity holding the listed components.
fn set(ids: &[ComponentId]) -> ComponentSet {
    ids.iter().copied().collect()
}

#[test]
fn component_ids_follow_type_name_order() {
    // The Display tests below rely on this.
    assert!(id::<Frozen>() < id::<Health>());
    assert!(id::<Health>() < id::<Position>());
    assert!(id::<Position>() < id::<Velocity>());
}

#[test]
fn all_of_matches_only_sets_holding_every_component() {
    let m = Matcher::all_of::<(Position, Velocity)>();
    assert!(m.matches_components(&set(&[id::<Position>(), id::<Velocity>()])));
    assert!(m.matches_components(&set(&[id::<Position>(), id::<Velocity>(), id::<Frozen>()])));
    assert!(!m.matches_components(&set(&[id::<Position>()])));
    assert!(!m.matches_components(&set(&[id::<Velocity>(), id::<Health>()])));
    assert!(!m.matches_components(&ComponentSet::new()));

    let mut game = Context::new();
    let both = game.create_entity_with((Position(0.0), Velocity(1.0))).unwrap();
    let one = game.create_entity_with(Position(0.0)).unwrap();
    assert!(m.matches(&game, both));
    assert!(!m.matches(&game, one));
}

#[test]
fn any_of_matches_sets_holding_at_least_one_component() {
    let m = Matcher::any_of::<(Position, Velocity)>();
    assert!(m.matches_components(&set(&[id::<Position>()])));
    assert!(m.matches_components(&set(&[id::<Velocity>()])));
    assert!(m.matches_components(&set(&[id::<Position>(), id::<Velocity>()])));
    assert!(m.matches_components(&set(&[id::<Velocity>(), id::<Frozen>()])));
    assert!(!m.matches_components(&set(&[id::<Health>(), id::<Frozen>()])));
    assert!(!m.matches_components(&ComponentSet::new()));

    let mut game = Context::new();
    let moving = game.create_entity_with(Velocity(1.0)).unwrap();
    let healthy = game.create_entity_with(Health(1)).unwrap();
    assert!(m.matches(&game, moving));
    assert!(!m.matches(&game, healthy));
}

#[test]
fn none_of_rejects_sets_holding_any_excluded_component() {
    let m = Matcher::none_of::<(Frozen, Health)>();
    assert!(m.matches_components(&set(&[id::<Position>()])));
    assert!(m.matches_components(&set(&[id::<Position>(), id::<Velocity>()])));
    assert!(!m.matches_components(&set(&[id::<Frozen>()])));
    assert!(!m.matches_components(&set(&[id::<Position>(), id::<Health>()])));
    assert!(!m.matches_components(&set(&[id::<Frozen>(), id::<Health>()])));

    let mut game = Context::new();
    let free = game.create_entity_with(Position(0.0)).unwrap();
    let frozen = game.create_entity_with((Position(0.0), Frozen)).unwrap();
    assert!(m.matches(&game, free));
    assert!(!m.matches(&game, frozen));
}

#[test]
fn combined_matcher_requires_all_of_any_of_and_none_of_together() {
    let m = Matcher::all_of::<Position>()
        .any_of::<(Velocity, Health)>()
        .none_of::<Frozen>();
    // All three rules hold.
    assert!(m.matches_components(&set(&[id::<Position>(), id::<Velocity>()])));
    assert!(m.matches_components(&set(&[id::<Position>(), id::<Health>()])));
    assert!(m.matches_components(&set(&[id::<Position>(), id::<Velocity>(), id::<Health>()])));
    // AllOf fails.
    assert!(!m.matches_components(&set(&[id::<Velocity>(), id::<Health>()])));
    // AnyOf fails.
    assert!(!m.matches_components(&set(&[id::<Position>()])));
    // NoneOf fails.
    assert!(!m.matches_components(&set(&[id::<Position>(), id::<Velocity>(), id::<Frozen>()])));

    let mut game = Context::new();
    let e = game.create_entity_with((Position(0.0), Health(3))).unwrap();
    assert!(m.matches(&game, e));
    game.add(e, Frozen).unwrap();
    assert!(!m.matches(&game, e));
    game.remove::<Frozen>(e).unwrap();
    game.remove::<Health>(e).unwrap();
    assert!(!m.matches(&game, e));
    game.add(e, Velocity(1.0)).unwrap();
    assert!(m.matches(&game, e));
}

#[test]
fn chaining_in_any_order_gives_equal_matchers_with_equal_hashes() {
    let variants = [
        Matcher::all_of::<(Position, Velocity)>()
            .any_of::<Health>()
            .none_of::<Frozen>(),
        Matcher::all_of::<(Velocity, Position)>()
            .none_of::<Frozen>()
            .any_of::<Health>(),
        Matcher::none_of::<Frozen>()
            .any_of::<Health>()
            .all_of::<(Velocity, Position)>(),
        Matcher::any_of::<Health>()
            .all_of::<Velocity>()
            .none_of::<Frozen>()
            .all_of::<Position>(),
        // Repeating a type changes nothing.
        Matcher::all_of::<Position>()
            .all_of::<(Velocity, Position)>()
            .any_of::<Health>()
            .any_of::<Health>()
            .none_of::<(Frozen, Frozen)>(),
    ];
    for m in &variants[1..] {
        assert_eq!(m, &variants[0]);
    }
    let distinct: HashSet<Matcher> = variants.iter().cloned().collect();
    assert_eq!(distinct.len(), 1, "{distinct:?}");

    // Moving a type to another set gives a different matcher.
    let other = Matcher::all_of::<Position>()
        .any_of::<(Velocity, Health)>()
        .none_of::<Frozen>();
    assert_ne!(other, variants[0]);
    let mut with_other = distinct.clone();
    assert!(with_other.insert(other));
    assert_eq!(with_other.len(), 2);
}

#[test]
fn typed_and_id_constructors_are_equivalent() {
    let typed = Matcher::all_of::<(Position, Velocity)>()
        .any_of::<Health>()
        .none_of::<Frozen>();
    let by_ids = Matcher::all_of_ids([id::<Velocity>(), id::<Position>()])
        .any_of_ids([id::<Health>()])
        .none_of_ids([id::<Frozen>()]);
    assert_eq!(typed, by_ids);

    let mixed = Matcher::none_of_ids([id::<Frozen>()])
        .all_of::<Position>()
        .all_of_ids(vec![id::<Velocity>()])
        .any_of::<Health>();
    assert_eq!(typed, mixed);

    assert_eq!(
        Matcher::any_of::<(Velocity, Health)>(),
        Matcher::any_of_ids([id::<Health>(), id::<Velocity>()])
    );
    assert_eq!(Matcher::none_of::<Frozen>(), Matcher::none_of_ids([id::<Frozen>()]));

    let hashes: HashSet<Matcher> = [typed.clone(), by_ids, mixed].into_iter().collect();
    assert_eq!(hashes.len(), 1);

    // The accessors expose the same sets.
    assert_eq!(typed.all(), &set(&[id::<Position>(), id::<Velocity>()]));
    assert_eq!(typed.any(), &set(&[id::<Health>()]));
    assert_eq!(typed.none(), &set(&[id::<Frozen>()]));
}

#[test]
fn display_of_an_all_of_matcher_lists_names_in_id_order() {
    let m = Matcher::all_of::<(Velocity, Position)>();
    assert_eq!(m.to_string(), "AllOf(Position, Velocity)");
    assert_eq!(format!("{m:?}"), "AllOf(Position, Velocity)");
    assert_eq!(Matcher::all_of::<Health>().to_string(), "AllOf(Health)");
}

#[test]
fn display_joins_all_of_any_of_and_none_of_with_dots() {
    let m = Matcher::none_of::<Frozen>()
        .any_of::<(Velocity, Health)>()
        .all_of::<Position>();
    assert_eq!(m.to_string(), "AllOf(Position).AnyOf(Health, Velocity).NoneOf(Frozen)");
    assert_eq!(
        Matcher::all_of::<(Position, Velocity)>()
            .none_of::<Frozen>()
            .to_string(),
        "AllOf(Position, Velocity).NoneOf(Frozen)"
    );
    assert_eq!(
        Matcher::any_of::<(Velocity, Position)>().to_string(),
        "AnyOf(Position, Velocity)"
    );
}

#[test]
fn display_of_a_none_of_only_matcher_shows_only_none_of() {
    assert_eq!(
        Matcher::none_of::<(Health, Frozen)>().to_string(),
        "NoneOf(Frozen, Health)"
    );
}

#[test]
fn display_of_the_empty_matcher_is_empty_all_of() {
    assert_eq!(Matcher::default().to_string(), "AllOf()");
    assert_eq!(Matcher::all_of::<()>().to_string(), "AllOf()");
    assert_eq!(Matcher::all_of_ids([]).to_string(), "AllOf()");
}

#[test]
fn none_of_only_matcher_matches_an_entity_without_components_but_never_a_destroyed_one() {
    let m = Matcher::none_of::<Frozen>();
    assert!(m.matches_components(&ComponentSet::new()));

    let mut game = Context::new();
    let bare = game.create_entity();
    let frozen = game.create_entity_with(Frozen).unwrap();
    assert!(m.matches(&game, bare));
    assert!(!m.matches(&game, frozen));

    game.destroy_entity(bare).unwrap();
    assert!(!m.matches(&game, bare), "a destroyed entity never matches");
    // Not even the empty matcher matches it.
    assert!(!Matcher::default().matches(&game, bare));
}

#[test]
fn watches_all_of_and_any_of_components_but_not_none_of() {
    let m = Matcher::all_of::<Position>().any_of::<Velocity>().none_of::<Frozen>();
    assert!(m.watches(id::<Position>()));
    assert!(m.watches(id::<Velocity>()));
    assert!(!m.watches(id::<Frozen>()), "NoneOf components are not watched");
    assert!(!m.watches(id::<Health>()), "unrelated components are not watched");

    let none_only = Matcher::none_of::<(Position, Frozen)>();
    for c in [id::<Position>(), id::<Velocity>(), id::<Health>(), id::<Frozen>()] {
        assert!(!none_only.watches(c));
    }
}
