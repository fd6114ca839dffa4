//! Component declaration: ids, infos, unique marking, contexts, debug.

mod common;

use common::*;
use reactecs::{Component, ComponentId, ComponentInfo, Error};

mod nested {
    #[derive(Debug)]
    pub struct Cell<T>(pub T);
    reactecs::component!(Cell<u8>, Cell<u16>);
}

struct InTwo;
reactecs::component!(Game, Ui: InTwo);

#[test]
fn every_declared_type_has_a_distinct_stable_id() {
    let ids = [
        Position::component_id(),
        Velocity::component_id(),
        Name::component_id(),
        Frozen::component_id(),
        Opaque::component_id(),
        Score::component_id(),
        nested::Cell::<u8>::component_id(),
        nested::Cell::<u16>::component_id(),
    ];
    let mut distinct = ids.to_vec();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), ids.len());
    assert_eq!(Position::component_id(), ids[0], "cached");
}

#[test]
fn the_registry_lists_every_declared_type_indexed_by_id() {
    let all = ComponentInfo::all();
    for (index, info) in all.iter().enumerate() {
        assert_eq!(info.id().index(), index);
    }
    assert!(all.iter().any(|info| info.name() == "Position"));
    // Ids follow the full type names, so they do not depend on first use.
    let names: Vec<_> = all.iter().map(ComponentInfo::type_name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[test]
fn infos_describe_the_type() {
    let info = Position::component_info();
    assert_eq!(info.name(), "Position");
    assert!(info.type_name().ends_with("Position"));
    assert_eq!(info.layout(), std::alloc::Layout::new::<Position>());
    assert!(!info.is_unique());
    assert!(Score::component_info().is_unique());
    assert_eq!(Score::component_info().contexts(), ["Game"]);
    assert_eq!(InTwo::component_info().contexts(), ["Game", "Ui"]);
    assert!(Position::component_info().contexts().is_empty());
    assert_eq!(nested::Cell::<u8>::component_info().name(), "Cell<u8>");
}

#[test]
fn component_ids_display_their_names() {
    assert_eq!(Velocity::component_id().to_string(), "Velocity");
    assert_eq!(
        ComponentId::from_index(Velocity::component_id().index()),
        Ok(Velocity::component_id())
    );
}

/// Only declared components have ids: an index past them is an error, not a
/// panic, and not an id whose matcher would allocate a bitset up to it.
#[test]
fn component_id_from_an_undeclared_index_is_an_error() {
    let declared = ComponentInfo::all().len();
    for index in [declared, 1_000_000, u32::MAX as usize, usize::MAX] {
        assert_eq!(
            ComponentId::from_index(index),
            Err(Error::UnknownComponent { index, declared })
        );
    }
    let message = ComponentId::from_index(declared).unwrap_err().to_string();
    assert!(message.contains("ComponentInfo::all()"), "{message}");
}

/// Implemented by hand with a registration of its own that was never submitted
/// to `inventory`: the (typed) registration cannot borrow another type's id.
struct Manual;
static MANUAL: reactecs::__private::ComponentRegistration<Manual> = reactecs::__private::ComponentRegistration::new(
    "Manual",
    false,
    reactecs::StorageKind::Archetype,
    &[],
    || None,
    None,
);
impl Component for Manual {
    type Fetch = reactecs::__private::InColumns;
    fn registration() -> &'static reactecs::__private::ComponentRegistration<Self> {
        &MANUAL
    }
}

#[test]
#[should_panic(expected = "was not collected by `inventory`")]
fn a_component_implemented_by_hand_without_registering_gets_no_id() {
    Manual::component_id();
}
