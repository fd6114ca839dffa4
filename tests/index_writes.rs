//! Entity indices and writes through `&mut`: `get_mut` (and
//! `EntityMut::get_mut_untracked`, `EntityMut::get_mut`) re-key the
//! entity when the `Mut` drops; a primary key another entity holds is
//! reported by the next read of the index, naming both, and the index stays
//! usable; `query_mut` and `EntityMut::query` refuse to lend a key
//! component mutably, changing nothing; flag and sparse key components and
//! gated groups behave the same.

use reactecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Cell(i32, i32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct NetId(u64);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Tag(u32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Hidden;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Score(u32);

reactecs::component!(Cell, NetId, sparse Tag, Hidden, unique Score);

fn game() -> Context {
    Context::with_name("Game")
}

fn cells(game: &mut Context) -> IndexId<EntityIndex<Cell>> {
    game.add_index(EntityIndex::new("Cell", |c: &Cell| *c)).unwrap()
}

fn net_ids(game: &mut Context) -> IndexId<PrimaryEntityIndex<u64>> {
    game.add_index(PrimaryEntityIndex::new("NetId", |id: &NetId| id.0))
        .unwrap()
}

fn at(game: &Context, id: IndexId<EntityIndex<Cell>>, cell: Cell) -> Vec<Entity> {
    game.index(id).unwrap().get(&cell).to_vec()
}

#[test]
fn every_get_mut_path_re_keys_the_entity() {
    let mut game = game();
    let index = cells(&mut game);
    let e = game.create_entity_with(Cell(0, 0)).unwrap();

    game.get_mut::<Cell>(e).unwrap().0 = 1;
    assert_eq!(at(&game, index, Cell(1, 0)), [e], "Context::get_mut");

    game.entity_mut(e).unwrap().get_mut_untracked::<Cell>().unwrap().0 = 2;
    assert_eq!(
        at(&game, index, Cell(2, 0)),
        [e],
        "EntityMut::get_mut_untracked, from a fresh view"
    );

    game.entity_mut(e).unwrap().get_mut::<Cell>().unwrap().0 = 3;
    assert_eq!(at(&game, index, Cell(3, 0)), [e], "EntityMut::get_mut");

    game.entity_mut(e).unwrap().get_mut_untracked::<Cell>().unwrap().0 = 4;
    assert_eq!(at(&game, index, Cell(4, 0)), [e], "EntityMut::get_mut_untracked");

    // Several writes through one `Mut`: re-keyed once, for the last value.
    {
        let mut cell = game.get_mut::<Cell>(e).unwrap();
        cell.0 = 50;
        cell.1 = 6;
        assert_eq!(*cell, Cell(50, 6), "it reads what was written");
    }
    assert_eq!(at(&game, index, Cell(50, 6)), [e]);
    assert_eq!(game.index(index).unwrap().entity_count(), 1);
    assert_eq!(
        game.aerc().retain_count(e).unwrap(),
        1,
        "one retain, whatever the moves"
    );
    game.check_invariants().unwrap();
}

#[test]
fn get_mut_of_the_unique_holder_re_keys_it() {
    let mut game = game();
    let scores = game
        .add_index(PrimaryEntityIndex::new("Score", |s: &Score| s.0))
        .unwrap();
    game.set_unique(Score(1)).unwrap();
    let holder = game.unique_entity::<Score>().unwrap();
    game.get_mut::<Score>(game.unique_entity::<Score>().unwrap()).unwrap().0 = 7;
    assert_eq!(game.index(scores).unwrap().get(&7), Some(holder));
    assert_eq!(game.index(scores).unwrap().get(&1), None);
    game.check_invariants().unwrap();
}

#[test]
fn collectors_still_see_a_keyed_write() {
    let mut game = game();
    let index = cells(&mut game);
    let moved = game.add_collector(Matcher::all_of::<Cell>().updated());
    let e = game.create_entity_with(Cell(0, 0)).unwrap();
    game.collector_mut(moved).unwrap().clear();
    game.get_mut::<Cell>(e).unwrap().1 = 1;
    assert_eq!(game.collector(moved).unwrap().entities(), [e]);
    assert_eq!(at(&game, index, Cell(0, 1)), [e]);
    game.collector_mut(moved).unwrap().clear();
    game.entity_mut(e).unwrap().get_mut_untracked::<Cell>().unwrap().1 = 2;
    assert!(game.collector(moved).unwrap().is_empty(), "untracked: not a change");
    assert_eq!(at(&game, index, Cell(0, 2)), [e], "but the index follows");
}

#[test]
fn a_conflicting_primary_key_is_reported_once_naming_both_and_the_index_stays_usable() {
    let mut game = game();
    let ids = net_ids(&mut game);
    let holder = game.create_entity_with(NetId(1)).unwrap();
    let e = game.create_entity_with(NetId(2)).unwrap();
    assert_eq!(game.aerc().retain_count(e).unwrap(), 1);

    game.get_mut::<NetId>(e).unwrap().0 = 1; // the key `holder` has
    assert_eq!(game.get::<NetId>(e).unwrap(), &NetId(1), "the write stands");
    match game.index(ids).map(|index| index.get(&1)) {
        Err(Error::PrimaryKeyConflict {
            context,
            index,
            key,
            holder: h,
            entity,
        }) => {
            assert_eq!((context, index, key.as_str()), ("Game", "NetId", "1"));
            assert_eq!((h, entity), (holder, e));
        }
        other => panic!("expected the conflict, got {other:?}"),
    }
    // Reported once; the index answers again, the holder keeping the key.
    assert_eq!(game.index(ids).unwrap().get(&1), Some(holder));
    assert_eq!(game.index(ids).unwrap().get(&2), None, "its old key is gone");
    assert!(!game.index(ids).unwrap().keys_of(e).any(|_| true), "e is out");
    assert_eq!(game.aerc().retain_count(e).unwrap(), 0, "the index let it go");
    game.check_invariants().unwrap();

    // A later write with a free key files it again.
    game.get_mut::<NetId>(e).unwrap().0 = 3;
    assert_eq!(game.index(ids).unwrap().get(&3), Some(e));
    assert_eq!(game.aerc().retain_count(e).unwrap(), 1);
    game.check_invariants().unwrap();
}

#[test]
fn conflicts_are_reported_in_order_by_any_read_of_the_index() {
    let mut game = game();
    let ids = net_ids(&mut game);
    let holder = game.create_entity_with(NetId(1)).unwrap();
    let a = game.create_entity_with(NetId(2)).unwrap();
    let b = game.create_entity_with(NetId(3)).unwrap();
    game.get_mut::<NetId>(a).unwrap().0 = 1;
    game.get_mut::<NetId>(b).unwrap().0 = 1;
    let first = game.index(ids).map(|_| ()).unwrap_err();
    assert!(
        matches!(first, Error::PrimaryKeyConflict { entity, holder: h, .. } if entity == a && h == holder),
        "{first}"
    );
    let by_name = game.index_id::<PrimaryEntityIndex<u64>>("NetId").unwrap();
    let second = game.index(by_name).map(|_| ()).unwrap_err();
    assert!(
        matches!(second, Error::PrimaryKeyConflict { entity, .. } if entity == b),
        "{second}"
    );
    assert!(second.to_string().contains("`NetId`"), "{second}");
    assert_eq!(game.index(ids).unwrap().get(&1), Some(holder));
}

#[test]
fn deactivating_an_index_drops_its_unreported_conflicts() {
    let mut game = game();
    let ids = net_ids(&mut game);
    game.create_entity_with(NetId(1)).unwrap();
    let e = game.create_entity_with(NetId(2)).unwrap();
    game.get_mut::<NetId>(e).unwrap().0 = 1;
    game.index_mut(ids).unwrap().deactivate();
    game.get_mut::<NetId>(e).unwrap().0 = 2;
    game.index_mut(ids).unwrap().activate().unwrap();
    assert_eq!(game.index(ids).unwrap().get(&2), Some(e));
}

#[test]
fn query_mut_refuses_to_lend_a_key_component_and_changes_nothing() {
    let mut game = game();
    let index = cells(&mut game);
    let moved = game.add_collector(Matcher::all_of::<Cell>().updated());
    let e = game.create_entity_with((Cell(0, 0), NetId(4))).unwrap();
    game.collector_mut(moved).unwrap().clear();

    match game.query_mut::<(&mut Cell, &NetId)>() {
        Err(Error::KeyedWrite {
            context,
            component,
            index: name,
        }) => {
            assert_eq!(context, "Game");
            assert!(component.ends_with("Cell"), "{component}");
            assert_eq!(name, "Cell");
        }
        other => panic!("expected KeyedWrite, got {:?}", other.map(|_| ())),
    }
    assert!(game.query_mut::<Option<&mut Cell>>().is_err());
    assert!(game.collector(moved).unwrap().is_empty(), "nothing was stamped");
    assert_eq!(at(&game, index, Cell(0, 0)), [e]);

    // Reading the key, and writing anything else, is fine.
    game.query_mut::<(&Cell, &mut NetId)>()
        .unwrap()
        .for_each(|(c, id)| id.0 += c.0 as u64);
    assert_eq!(game.query::<&Cell>().iter().count(), 1);

    // With the index gone, the component may be lent again.
    game.index_mut(index).unwrap().remove();
    game.query_mut::<&mut Cell>().unwrap().for_each(|c| c.0 = 1);
    assert_eq!(game.get::<Cell>(e).unwrap(), &Cell(1, 0));
    game.check_invariants().unwrap();
}

#[test]
fn entity_views_refuse_to_lend_a_key_component_through_query() {
    let mut game = game();
    let index = cells(&mut game);
    let e = game.create_entity_with((Cell(0, 0), NetId(4))).unwrap();
    let mut view = game.entity_mut(e).unwrap();
    assert!(matches!(
        view.query::<(&mut Cell,)>(),
        Err(Error::KeyedWrite { index: "Cell", .. })
    ));
    view.query::<(&Cell, &mut NetId)>().unwrap().1.0 = 5;
    view.get_mut::<Cell>().unwrap().0 = 8;
    assert_eq!(at(&game, index, Cell(8, 0)), [e]);
    assert_eq!(game.get::<NetId>(e).unwrap(), &NetId(5));
}

#[test]
fn a_sparse_key_component_is_re_keyed_too() {
    let mut game = game();
    let tags = game.add_index(EntityIndex::new("Tag", |t: &Tag| t.0)).unwrap();
    let e = game.create_entity_with((Cell(0, 0), Tag(1))).unwrap();
    game.get_mut::<Tag>(e).unwrap().0 = 2;
    assert!(game.index(tags).unwrap().get(&1).is_empty());
    assert_eq!(game.index(tags).unwrap().get(&2), [e]);
    assert!(matches!(
        game.query_mut::<&mut Tag>(),
        Err(Error::KeyedWrite { index: "Tag", .. })
    ));
    game.check_invariants().unwrap();
}

#[test]
fn a_write_to_an_entity_outside_the_index_group_files_nothing() {
    let mut game = game();
    let index = game
        .add_index(EntityIndex::new("Visible", |c: &Cell| *c).matching(Matcher::all_of::<Cell>().none_of::<Hidden>()))
        .unwrap();
    let seen = game.create_entity_with(Cell(0, 0)).unwrap();
    let hidden = game.create_entity_with((Cell(0, 0), Hidden)).unwrap();
    game.get_mut::<Cell>(hidden).unwrap().0 = 1;
    game.get_mut::<Cell>(seen).unwrap().0 = 1;
    assert_eq!(game.index(index).unwrap().get(&Cell(1, 0)), [seen]);
    assert_eq!(game.aerc().retain_count(hidden).unwrap(), 0);
    game.remove::<Hidden>(hidden).unwrap();
    assert_eq!(game.index(index).unwrap().get(&Cell(1, 0)), [seen, hidden]);
    game.check_invariants().unwrap();
}

#[test]
fn a_forgotten_mut_leaves_the_index_behind_until_the_next_write() {
    let mut game = game();
    let index = cells(&mut game);
    let e = game.create_entity_with(Cell(0, 0)).unwrap();
    let mut cell = game.get_mut::<Cell>(e).unwrap();
    cell.0 = 1;
    std::mem::forget(cell);
    assert_eq!(at(&game, index, Cell(0, 0)), [e], "behind, as documented");
    game.get_mut::<Cell>(e).unwrap().1 = 1;
    assert_eq!(at(&game, index, Cell(1, 1)), [e]);
    assert!(at(&game, index, Cell(0, 0)).is_empty());
    game.check_invariants().unwrap();
}

#[test]
fn a_mut_of_a_component_nobody_keys_on_is_a_plain_reference() {
    let mut game = game();
    cells(&mut game);
    let e = game.create_entity_with((Cell(0, 0), NetId(1))).unwrap();
    let mut id = game.get_mut::<NetId>(e).unwrap();
    let plain: &mut NetId = &mut id;
    plain.0 = 9;
    assert_eq!(format!("{id:?}"), "NetId(9)");
    drop(id);
    assert_eq!(game.get::<NetId>(e).unwrap(), &NetId(9));
    game.check_invariants().unwrap();
}
