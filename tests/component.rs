//! Component declaration: ids, infos, unique marking, contexts, debug.

mod common;

use common::*;
use reactecs::{Component, ComponentId, ComponentInfo, Context, Error};

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

/// Declared for the reassignment test only (no other test names them).
#[derive(Clone, Debug, PartialEq)]
struct Holder(u32);
#[derive(Clone, Debug, PartialEq)]
struct Impostor(u64);
#[derive(Clone, Debug, PartialEq)]
struct SparseHolder(u32);
#[derive(Clone, Debug, PartialEq)]
struct SparseImpostor(u64);
#[derive(Clone, Debug, PartialEq)]
struct UniqueHolder(u32);
#[derive(Clone, Debug, PartialEq)]
struct UniqueImpostor(u64);
reactecs::component!(
    Holder,
    Impostor,
    sparse SparseHolder,
    sparse SparseImpostor,
    unique UniqueHolder,
    unique UniqueImpostor
);

/// The hidden registration path (`RegisteredComponent`'s `assign_id`, which
/// the registry calls) cannot give a type another type's id, nor take its
/// id away: it ignores another type's info and one without an id. So `get`,
/// `get_mut` and every accessor of the would-be impostor see a component of
/// its own, absent where it is absent (`ComponentAbsent`, as `get` says),
/// never a column of another type, and nothing panics.
#[test]
fn a_component_id_cannot_be_reassigned_through_the_hidden_registration() {
    use reactecs::__private::RegisteredComponent;
    use reactecs::prelude::*;

    let ids = [
        Impostor::component_id(),
        SparseImpostor::component_id(),
        UniqueImpostor::component_id(),
    ];
    RegisteredComponent(Impostor::registration())
        .0
        .assign_id(Holder::component_info());
    RegisteredComponent(SparseImpostor::registration())
        .0
        .assign_id(SparseHolder::component_info());
    RegisteredComponent(Impostor::registration())
        .0
        .assign_id(SparseHolder::component_info());
    RegisteredComponent(SparseImpostor::registration())
        .0
        .assign_id(Holder::component_info());
    RegisteredComponent(UniqueImpostor::registration())
        .0
        .assign_id(UniqueHolder::component_info());
    // The info `describe` gives has no id yet: it cannot unassign one.
    let described = RegisteredComponent(Impostor::registration()).0.describe();
    RegisteredComponent(Impostor::registration()).0.assign_id(&described);
    assert_eq!(
        [
            Impostor::component_id(),
            SparseImpostor::component_id(),
            UniqueImpostor::component_id()
        ],
        ids
    );
    assert_ne!(Impostor::component_id(), Holder::component_id());

    let mut game = Context::new();
    let e = game.create_entity_with((Holder(1), SparseHolder(2))).unwrap();
    game.set_unique(UniqueHolder(3)).unwrap();
    let absent = |component| Error::ComponentAbsent {
        context: "Context",
        entity: e,
        component,
    };
    assert_eq!(game.get::<Impostor>(e).unwrap_err(), absent("Impostor"));
    assert_eq!(game.get_mut::<Impostor>(e).unwrap_err(), absent("Impostor"));
    assert_eq!(game.get_mut::<SparseImpostor>(e).unwrap_err(), absent("SparseImpostor"));
    assert!(!game.has::<Impostor>(e));
    assert_eq!(game.entity(e).unwrap().get::<Impostor>(), None);
    {
        let mut view = game.entity_mut(e).unwrap();
        assert_eq!(view.get_mut::<Impostor>(), None);
        assert_eq!(view.query::<&mut Impostor>().unwrap_err(), absent("Impostor"));
        assert_eq!(
            view.query::<&mut SparseImpostor>().unwrap_err(),
            absent("SparseImpostor")
        );
        assert!(view.query::<Option<&mut Impostor>>().unwrap().is_none());
    }
    assert_eq!(game.query::<&Impostor>().iter().count(), 0);
    assert_eq!(game.query_mut::<&mut SparseImpostor>().unwrap().iter().count(), 0);
    assert_eq!(game.modify(e, |v: &mut Impostor| v.0).unwrap_err(), absent("Impostor"));
    assert_eq!(
        game.modify_with::<Holder, &SparseImpostor, _>(e, |_, _| ())
            .unwrap_err(),
        absent("SparseImpostor")
    );
    assert_eq!(game.remove::<Impostor>(e).unwrap_err(), absent("Impostor"));
    assert_eq!(game.unique::<UniqueImpostor>(), None);

    // Writes make a component of the impostor's own, beside the holder's.
    game.replace(e, Impostor(5)).unwrap();
    game.add(e, SparseImpostor(6)).unwrap();
    game.set_unique(UniqueImpostor(7)).unwrap();
    game.create_entity_with((Impostor(8), SparseImpostor(9))).unwrap();
    assert_eq!(*game.get_mut::<Impostor>(e).unwrap(), Impostor(5));
    assert_eq!(game.get::<Holder>(e).unwrap(), &Holder(1));
    assert_eq!(game.get::<SparseHolder>(e).unwrap(), &SparseHolder(2));
    assert_eq!(game.unique::<UniqueHolder>(), Some(&UniqueHolder(3)));
    assert_eq!(game.unique::<UniqueImpostor>(), Some(&UniqueImpostor(7)));
    assert_eq!(game.query::<(&Impostor, &SparseImpostor)>().iter().count(), 2);
}

/// Implemented by hand and registered, but claiming another type's id
/// through an overridden `component_id`: typed access trusts only the id
/// the registry gave this type's own registration, so the claim cannot make
/// `get` or `get_mut` read a `Wide` as a `Liar` (or the other way round).
#[derive(Debug, PartialEq)]
struct Liar(u8);
#[derive(Debug, PartialEq)]
struct Wide(u64);
reactecs::component!(Wide);
static LIAR: reactecs::__private::ComponentRegistration<Liar> = reactecs::__private::ComponentRegistration::new(
    "Liar",
    false,
    reactecs::StorageKind::Archetype,
    &[],
    || None,
    None,
);
impl Component for Liar {
    type Fetch = reactecs::__private::InColumns;
    fn registration() -> &'static reactecs::__private::ComponentRegistration<Self> {
        &LIAR
    }
    fn component_id() -> ComponentId {
        Wide::component_id()
    }
}
reactecs::__private::inventory::submit! {
    reactecs::__private::RegisteredComponent(&LIAR)
}

#[test]
fn an_overridden_component_id_does_not_change_what_typed_access_reads() {
    let mut game = Context::new();
    let wide = game.create_entity_with(Wide(u64::MAX)).unwrap();
    assert!(matches!(game.get::<Liar>(wide), Err(Error::ComponentAbsent { .. })));
    assert!(matches!(game.get_mut::<Liar>(wide), Err(Error::ComponentAbsent { .. })));
    assert_eq!(game.entity(wide).unwrap().get::<Liar>(), None);
    assert_eq!(game.get::<Wide>(wide), Ok(&Wide(u64::MAX)));
}
