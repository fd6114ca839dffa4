//! Storage unit tests. They build component infos by hand (no `inventory`), so
//! they also run under Miri: `cargo +nightly miri test --lib storage`.

use std::any::TypeId;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::component_info::{ComponentInfo, StorageKind, TypedId};
use super::*;
use crate::entity::Entity;
use crate::id::ComponentId;
use crate::slot_table::SlotTable;

#[repr(align(64))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Wide([u8; 64]);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Big([u64; 64]); // 512 bytes: about 30 rows per chunk

#[derive(Debug, PartialEq)]
struct Huge(Vec<u8>, [u8; 20_000]); // a row larger than a chunk

#[derive(Debug, PartialEq)]
struct Marker;

const U8: usize = 0;
const U64: usize = 1;
const BYTES3: usize = 2;
const WIDE: usize = 3;
const BIG: usize = 4;
const TRACKED: usize = 5;
const MARKER: usize = 6;
const HUGE: usize = 7;
const PANICKY: usize = 8;
/// `Tracked`, kept in a sparse set.
const SPARSE_TRACKED: usize = 9;
/// A flag (zero-sized, kept in a sparse set).
const FLAG: usize = 10;
/// `Panicky`, kept in a sparse set.
const SPARSE_PANICKY: usize = 11;
/// `Tracked`, declared pooled.
const POOLED_TRACKED: usize = 12;
/// `Tracked`, declared pooled, kept in a sparse set.
const SPARSE_POOLED: usize = 13;

/// A zero-sized flag.
#[derive(Debug, PartialEq)]
struct Lit;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Counts live instances (per test thread), so every test can assert that each
/// value was dropped exactly once.
#[derive(Debug, PartialEq)]
struct Tracked(String);

impl Tracked {
    fn new(s: &str) -> Self {
        LIVE.with(|live| live.set(live.get() + 1));
        Tracked(s.to_owned())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        LIVE.with(|live| live.set(live.get() - 1));
    }
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

thread_local! {
    static PANICKY_DROPS: Cell<usize> = const { Cell::new(0) };
}

/// Panics when dropped, once counted (per test thread).
struct Panicky;

impl Drop for Panicky {
    fn drop(&mut self) {
        PANICKY_DROPS.with(|drops| drops.set(drops.get() + 1));
        panic!("Panicky dropped");
    }
}

fn panicky_drops() -> usize {
    PANICKY_DROPS.with(Cell::get)
}

fn infos() -> &'static [ComponentInfo] {
    use crate::component::ViaDebug;
    static INFOS: std::sync::OnceLock<[ComponentInfo; 14]> = std::sync::OnceLock::new();
    INFOS.get_or_init(|| {
        [
            ComponentInfo::for_test::<u8>(U8, "u8", None),
            ComponentInfo::for_test::<u64>(U64, "u64", None),
            ComponentInfo::for_test::<[u8; 3]>(BYTES3, "[u8; 3]", None),
            ComponentInfo::for_test::<Wide>(WIDE, "Wide", None),
            ComponentInfo::for_test::<Big>(BIG, "Big", None),
            ComponentInfo::for_test::<Tracked>(
                TRACKED,
                "Tracked",
                (&&crate::component::DebugProbe::<Tracked>::new()).debug_fn(),
            ),
            ComponentInfo::for_test::<Marker>(MARKER, "Marker", None),
            ComponentInfo::for_test::<Huge>(HUGE, "Huge", None),
            ComponentInfo::for_test::<Panicky>(PANICKY, "Panicky", None),
            ComponentInfo::for_test_kind::<Tracked>(SPARSE_TRACKED, "SparseTracked", StorageKind::Sparse),
            ComponentInfo::for_test_kind::<Lit>(FLAG, "Lit", StorageKind::Flag),
            ComponentInfo::for_test_kind::<Panicky>(SPARSE_PANICKY, "SparsePanicky", StorageKind::Sparse),
            ComponentInfo::for_test_pooled::<Tracked>(POOLED_TRACKED, "PooledTracked", StorageKind::Archetype),
            ComponentInfo::for_test_pooled::<Tracked>(SPARSE_POOLED, "SparsePooled", StorageKind::Sparse),
        ]
    })
}

fn id(index: usize) -> ComponentId {
    ComponentId::at(index)
}

/// What a query plan takes for component `index`: its id, its value type,
/// and whether it is written.
fn take(index: usize, write: bool) -> (ComponentId, TypeId, bool) {
    (id(index), infos()[index].ty.type_id(), write)
}

fn set(ids: &[usize]) -> ComponentSet {
    ids.iter().map(|&i| id(i)).collect()
}

/// Storage and the entity records that say where each row is.
struct Fixture {
    keys: SlotTable,
    storage: Archetypes,
    sparse: SparseSets,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            keys: SlotTable::new(0),
            storage: Archetypes::new(infos()),
            sparse: SparseSets::default(),
        }
    }

    /// Where `entity` is.
    fn loc(&self, entity: Entity) -> Location {
        self.keys.location(entity).expect("a live entity")
    }

    /// Spawns an entity whose values `write` puts in the order of `ids`.
    fn spawn(&mut self, ids: &[usize], write: impl FnOnce(&mut RowWriter<'_>)) -> Entity {
        let ids: Vec<ComponentId> = ids.iter().map(|&i| id(i)).collect();
        let bundle = self.storage.register_bundle(None, &ids).unwrap();
        let keys = &mut self.keys;
        let slot = keys.next_slot();
        let (entity, _) = self
            .storage
            .spawn(bundle, &mut self.sparse, slot, |at| keys.alloc(at), write)
            .expect("all columns written");
        entity
    }

    /// Spawns one entity per item of `rows` in one batch, with the plan of
    /// `ids`; `Err` (nothing made) if the plan is not `B`'s columns.
    fn spawn_batch<B: RowValues>(&mut self, ids: &[usize], rows: Vec<B>) -> Result<Vec<Entity>, Vec<B>> {
        let ids: Vec<ComponentId> = ids.iter().map(|&i| id(i)).collect();
        let bundle = self.storage.register_bundle(None, &ids).unwrap();
        let keys = &mut self.keys;
        let mut made = Vec::new();
        self.storage
            .spawn_batch(bundle, rows.into_iter(), |at| keys.alloc(at), |e| made.push(e))
            .map_err(|rows| rows.collect::<Vec<B>>())?;
        Ok(made)
    }

    /// Spawns with `write` (which may stop early or panic): no row may be
    /// left, and no entity made.
    fn spawn_incomplete(&mut self, bundle: BundleId, write: impl FnOnce(&mut RowWriter<'_>)) {
        let mut made = None;
        let keys = &mut self.keys;
        let slot = keys.next_slot();
        let spawned = catch_unwind(AssertUnwindSafe(|| {
            self.storage
                .spawn(bundle, &mut self.sparse, slot, |at| *made.insert(keys.alloc(at)), write)
        }));
        assert!(
            !self.sparse.any_of(slot),
            "no sparse value is left for an incomplete row"
        );
        assert!(matches!(spawned, Ok(None) | Err(_)), "the row is incomplete");
        assert_eq!(made, None, "no entity is made for an incomplete row");
    }

    fn apply(&mut self, entity: Entity, moved: Moved) {
        let from = self.loc(entity);
        self.keys.relocate(entity, moved.to);
        if let Some(displaced) = moved.displaced {
            self.keys.relocate(displaced, from);
        }
    }

    fn despawn(&mut self, entity: Entity) {
        let loc = self.loc(entity);
        let displaced = self.storage.get(loc.archetype).displaced_by_removal(loc.row);
        self.keys.disable(entity, false);
        if let Some(d) = displaced {
            self.keys.relocate(d, loc);
        }
        assert_eq!(self.storage.despawn(loc), Some(displaced));
    }

    /// The entity's value of `component`, if its column holds `T`s (the
    /// check a `TypedId` made from the registry makes unneeded).
    fn get<T: 'static>(&self, entity: Entity, component: usize) -> Option<&T> {
        let loc = self.loc(entity);
        let archetype = self.storage.get(loc.archetype);
        let col = archetype.column_index(id(component))?;
        archetype.column_holds::<T>(col).then_some(())?;
        archetype.get(TypedId::for_test(component), loc.row)
    }

    fn check(&self) {
        self.storage.check().unwrap();
        self.keys.check().unwrap();
        for entity in self.keys.alive() {
            let loc = self.loc(entity);
            assert_eq!(self.storage.get(loc.archetype).entity_at(loc.row), Some(entity));
        }
        let rows: usize = self.storage.iter().map(Archetype::len).sum();
        assert_eq!(rows, self.keys.len());
    }
}

#[test]
fn odd_types_are_stored_aligned_and_read_back_intact() {
    let mut f = Fixture::new();
    let all = [U8, U64, BYTES3, WIDE];
    let mut entities = Vec::new();
    for i in 0..300u64 {
        entities.push(f.spawn(&all, |w| {
            w.put(i as u8).unwrap();
            w.put(i * 1_000_003).unwrap();
            w.put([i as u8, 1, 2]).unwrap();
            w.put(Wide([i as u8; 64])).unwrap();
        }));
    }
    f.check();
    let archetype = f.storage.get(f.loc(entities[0]).archetype);
    assert!(archetype.chunk_count() > 1, "the test must span chunks");
    for chunk in 0..archetype.chunk_count() {
        let wide = archetype.column_slice::<Wide>(id(WIDE), chunk).unwrap();
        assert_eq!(wide.as_ptr() as usize % 64, 0);
        let longs = archetype.column_slice::<u64>(id(U64), chunk).unwrap();
        assert_eq!(longs.as_ptr() as usize % align_of::<u64>(), 0);
    }
    for (i, &e) in entities.iter().enumerate() {
        let i = i as u64;
        assert_eq!(f.get::<u8>(e, U8), Some(&(i as u8)));
        assert_eq!(f.get::<u64>(e, U64), Some(&(i * 1_000_003)));
        assert_eq!(f.get::<[u8; 3]>(e, BYTES3), Some(&[i as u8, 1, 2]));
        assert_eq!(f.get::<Wide>(e, WIDE), Some(&Wide([i as u8; 64])));
    }
}

#[test]
fn typed_access_with_the_wrong_type_is_refused() {
    let mut f = Fixture::new();
    let e = f.spawn(&[U64], |w| {
        assert_eq!(w.put(5u32), Err(5u32), "the column holds u64");
        w.put(5u64).unwrap();
        assert_eq!(w.put(6u64), Err(6u64), "the bundle has one element");
    });
    assert_eq!(f.get::<u32>(e, U64), None);
    assert_eq!(f.get::<u64>(e, U64), Some(&5));
    let loc = f.loc(e);
    assert_eq!(f.storage.insert(loc, id(U64), 1u64), Err(1u64), "already present");
    assert_eq!(f.storage.insert(loc, id(U8), 1u64), Err(1u64), "wrong type");
    assert!(f.storage.take::<u8>(loc, id(U64)).is_none());
    assert_eq!(f.storage.replace(loc, id(U64), 7u8), Err(7u8));
    f.check();
}

#[test]
fn a_bundle_listing_a_component_twice_is_refused() {
    let mut f = Fixture::new();
    assert_eq!(f.storage.register_bundle(None, &[id(U8), id(U64), id(U8)]), Err(id(U8)));
}

#[test]
fn zero_sized_components_take_no_space_and_are_dropped() {
    let mut f = Fixture::new();
    let plain = f.spawn(&[U64], |w| w.put(1u64).unwrap());
    let rows_without = f.storage.get(f.loc(plain).archetype).rows_per_chunk();
    let e = f.spawn(&[MARKER, U64], |w| {
        w.put(Marker).unwrap();
        w.put(2u64).unwrap();
    });
    assert_eq!(f.storage.get(f.loc(e).archetype).rows_per_chunk(), rows_without);
    assert_eq!(f.get::<Marker>(e, MARKER), Some(&Marker));
    let moved = f.storage.take::<Marker>(f.loc(e), id(MARKER)).map(|(m, moved)| {
        assert_eq!(m, Marker);
        moved
    });
    f.apply(e, moved.unwrap());
    assert_eq!(f.get::<u64>(e, U64), Some(&2));
    f.check();
}

#[test]
fn a_row_larger_than_a_chunk_is_stored_in_a_bigger_chunk() {
    let mut f = Fixture::new();
    let a = f.spawn(&[HUGE, U8], |w| {
        w.put(Huge(vec![1, 2, 3], [7; 20_000])).unwrap();
        w.put(1u8).unwrap();
    });
    let b = f.spawn(&[HUGE, U8], |w| {
        w.put(Huge(vec![4], [8; 20_000])).unwrap();
        w.put(2u8).unwrap();
    });
    let archetype = f.storage.get(f.loc(a).archetype);
    assert_eq!(archetype.rows_per_chunk(), 1);
    assert_eq!(archetype.chunk_count(), 2);
    assert_eq!(
        f.get::<Huge>(b, HUGE).map(|h| (h.0.clone(), h.1[19_999])),
        Some((vec![4], 8))
    );
    f.despawn(a);
    assert_eq!(f.get::<Huge>(b, HUGE).map(|h| h.0.clone()), Some(vec![4]));
    assert_eq!(f.get::<u8>(b, U8), Some(&2));
    f.check();
}

#[test]
fn swap_remove_moves_the_last_row_of_the_last_chunk_into_the_hole() {
    let mut f = Fixture::new();
    let mut entities = Vec::new();
    for i in 0..70u64 {
        entities.push(f.spawn(&[BIG, TRACKED], |w| {
            w.put(Big([i; 64])).unwrap();
            w.put(Tracked::new(&format!("#{i}"))).unwrap();
        }));
    }
    let loc = f.loc(entities[3]);
    let rows = f.storage.get(loc.archetype).rows_per_chunk();
    assert!(70 > 2 * rows, "the test must span three chunks");
    // Remove a row of the first chunk: the last entity (third chunk) fills it.
    let (value, moved) = f.storage.take::<Tracked>(loc, id(TRACKED)).unwrap();
    assert_eq!(value, Tracked::new("#3"));
    drop(value);
    assert_eq!(moved.displaced, Some(entities[69]));
    f.apply(entities[3], moved);
    assert_eq!(f.loc(entities[69]), loc);
    assert_eq!(f.get::<Big>(entities[69], BIG), Some(&Big([69; 64])));
    assert_eq!(f.get::<Tracked>(entities[69], TRACKED), Some(&Tracked::new("#69")));
    assert_eq!(f.get::<Big>(entities[3], BIG), Some(&Big([3; 64])));
    f.check();
    // Empty the archetype from the front: everything stays readable and dense.
    for &e in entities.iter().filter(|&&e| e != entities[3]) {
        f.despawn(e);
        f.check();
    }
    assert_eq!(live(), 0, "every Tracked dropped exactly once");
}

#[test]
fn emptied_chunks_are_recycled_not_reallocated() {
    let mut f = Fixture::new();
    let first = f.spawn(&[BIG], |w| w.put(Big([0; 64])).unwrap());
    let archetype = f.loc(first).archetype;
    let rows = f.storage.get(archetype).rows_per_chunk();
    let mut entities = vec![first];
    for i in 1..rows as u64 {
        entities.push(f.spawn(&[BIG], |w| w.put(Big([i; 64])).unwrap()));
    }
    assert_eq!(f.storage.get(archetype).chunk_count(), 1);
    // Churn at the chunk boundary: each spawn opens a chunk, each despawn empties it.
    for round in 0..5u64 {
        let e = f.spawn(&[BIG], |w| w.put(Big([round; 64])).unwrap());
        assert_eq!(f.storage.get(archetype).chunk_count(), 2);
        assert_eq!(f.storage.get(archetype).spare_chunk_count(), 0);
        f.despawn(e);
        assert_eq!(f.storage.get(archetype).chunk_count(), 1);
        assert_eq!(f.storage.get(archetype).spare_chunk_count(), 1);
        f.check();
    }
    f.storage.shrink_to_fit();
    assert_eq!(f.storage.get(archetype).spare_chunk_count(), 0);
}

#[test]
fn insert_take_and_replace_move_values_and_drop_each_exactly_once() {
    {
        let mut f = Fixture::new();
        let mut entities = Vec::new();
        for i in 0..40 {
            entities.push(f.spawn(&[TRACKED], |w| w.put(Tracked::new(&i.to_string())).unwrap()));
        }
        for (i, &e) in entities.iter().enumerate() {
            let moved = f.storage.insert(f.loc(e), id(BIG), Big([i as u64; 64])).unwrap();
            f.apply(e, moved);
        }
        f.check();
        for (i, &e) in entities.iter().enumerate().step_by(2) {
            let old = f.storage.replace(f.loc(e), id(TRACKED), Tracked::new("new")).unwrap();
            assert_eq!(old, Tracked::new(&i.to_string()));
            let (big, moved) = f.storage.take::<Big>(f.loc(e), id(BIG)).unwrap();
            assert_eq!(big, Big([i as u64; 64]));
            f.apply(e, moved);
        }
        f.check();
        for (i, &e) in entities.iter().enumerate() {
            let expected = if i % 2 == 0 { "new".to_owned() } else { i.to_string() };
            assert_eq!(f.get::<Tracked>(e, TRACKED), Some(&Tracked::new(&expected)));
            assert_eq!(f.get::<Big>(e, BIG).is_some(), i % 2 == 1);
        }
        for &e in &entities[..10] {
            f.despawn(e);
        }
        f.check();
        // The rest is dropped with the storage.
    }
    assert_eq!(live(), 0);
}

#[test]
fn an_incomplete_row_is_removed_and_what_was_written_is_dropped() {
    let mut f = Fixture::new();
    let bundle = f.storage.register_bundle(None, &[id(TRACKED), id(U64)]).unwrap();
    let archetype = f.storage.bundle_archetype(bundle);
    f.spawn_incomplete(bundle, |w| {
        w.put(Tracked::new("half")).unwrap();
    });
    assert_eq!(f.storage.get(archetype).len(), 0);
    assert_eq!(live(), 0);
    // A panic while writing removes the row too.
    f.spawn_incomplete(bundle, |w| {
        w.put(Tracked::new("half")).unwrap();
        panic!("user code failed mid-row");
    });
    assert_eq!(f.storage.get(archetype).len(), 0);
    assert_eq!(live(), 0);
    f.check();
}

#[test]
fn a_panicking_drop_while_removing_an_incomplete_row_still_removes_the_row() {
    let mut f = Fixture::new();
    let keep = f.spawn(&[U64], |w| w.put(7u64).unwrap());
    let bundle = f.storage.register_bundle(None, &[id(PANICKY), id(U64)]).unwrap();
    let archetype = f.storage.bundle_archetype(bundle);
    // Only the first element is written; cleaning up drops it, and its drop panics.
    f.spawn_incomplete(bundle, |w| assert!(w.put(Panicky).is_ok()));
    assert_eq!(panicky_drops(), 1, "dropped exactly once");
    assert_eq!(f.storage.get(archetype).len(), 0, "the half-written row is gone");
    f.check();
    assert_eq!(f.get::<u64>(keep, U64), Some(&7));
}

#[test]
fn a_panicking_drop_during_despawn_still_removes_the_row_and_drops_the_rest() {
    let mut f = Fixture::new();
    let a = f.spawn(&[TRACKED, PANICKY], |w| {
        w.put(Tracked::new("a")).unwrap();
        assert!(w.put(Panicky).is_ok());
    });
    let b = f.spawn(&[TRACKED, U8], |w| {
        w.put(Tracked::new("b")).unwrap();
        w.put(1u8).unwrap();
    });
    let loc = f.loc(a);
    f.keys.disable(a, false);
    let result = catch_unwind(AssertUnwindSafe(|| f.storage.despawn(loc)));
    assert!(result.is_err());
    assert_eq!(panicky_drops(), 1);
    assert_eq!(f.storage.get(loc.archetype).len(), 0);
    assert_eq!(live(), 1, "only b's Tracked is left");
    f.check();
    f.despawn(b);
    assert_eq!(live(), 0);
}

#[test]
fn edges_are_cached_and_lead_to_the_right_archetype() {
    let mut f = Fixture::new();
    let e = f.spawn(&[U8], |w| w.put(1u8).unwrap());
    let from = f.loc(e).archetype;
    let count = f.storage.len();
    let add = f.storage.add_transition(from, id(U64)).unwrap();
    let to = f.storage.transition(add).to;
    assert_eq!(f.storage.len(), count + 1);
    assert_eq!(*f.storage.get(to).set(), set(&[U8, U64]));
    assert_eq!(f.storage.add_transition(from, id(U64)), Some(add), "cached");
    let back = f.storage.remove_transition(to, id(U64)).unwrap();
    assert_eq!(f.storage.transition(back).to, from);
    assert_eq!(f.storage.add_transition(from, id(U8)), None);
    assert_eq!(f.storage.remove_transition(from, id(U64)), None);
    assert_eq!(
        f.storage.len(),
        count + 1,
        "no archetype created by cached or refused edges"
    );
    f.check();
}

#[test]
fn component_refs_read_values_and_format_them() {
    let mut f = Fixture::new();
    let e = f.spawn(&[TRACKED, U8], |w| {
        w.put(Tracked::new("hi")).unwrap();
        w.put(9u8).unwrap();
    });
    let loc = f.loc(e);
    let archetype = f.storage.get(loc.archetype);
    let tracked = archetype.component_ref(id(TRACKED), loc.row).unwrap();
    assert_eq!(tracked.get::<Tracked>().map(|t| t.0.as_str()), Some("hi"));
    assert_eq!(tracked.get::<u8>(), None);
    assert_eq!(format!("{tracked:?}"), "Tracked(\"hi\")");
    let byte = archetype.component_ref(id(U8), loc.row).unwrap();
    assert_eq!(format!("{byte:?}"), "u8(..)");
    let names: Vec<_> = archetype.component_refs(loc.row).map(|c| c.name()).collect();
    assert_eq!(names, ["u8", "Tracked"]);
}

#[test]
fn column_access_refuses_aliasing_and_hands_out_every_chunk_once() {
    let mut f = Fixture::new();
    let ids = [U64, BIG, MARKER, TRACKED, WIDE];
    let n: usize = 70; // Big+Wide rows: a few rows per chunk -> several chunks
    for i in 0..n {
        f.spawn(&ids, |row| {
            row.put(i as u64).unwrap();
            row.put(Big([i as u64; 64])).unwrap();
            row.put(Marker).unwrap();
            row.put(Tracked::new(&format!("t{i}"))).unwrap();
            row.put(Wide([i as u8; 64])).unwrap();
        });
    }
    let entities: Vec<Entity> = f.keys.alive().collect();
    for e in entities.iter().step_by(5) {
        f.despawn(*e);
    }
    let arch = f.storage.find_or_create(&set(&ids));
    let a = f.storage.lend_mut(arch);
    let chunks = a.chunk_count();
    assert!(chunks > 2);
    // A plan writing a component and naming it again is refused.
    assert_eq!(
        ColumnPlan::new([take(U64, true), take(U64, false)]).err(),
        Some(id(U64))
    );
    assert_eq!(
        ColumnPlan::new([take(WIDE, false), take(WIDE, true)]).err(),
        Some(id(WIDE))
    );
    let plan = ColumnPlan::new([
        take(U64, true),
        take(BIG, true),
        take(MARKER, true),
        take(TRACKED, false),
        take(TRACKED, false),
        take(TRACKED, false),
        take(TRACKED, false),
        take(WIDE, true),
        take(HUGE, false),
    ])
    .unwrap();
    let mut access = ColumnAccess::exclusive(a, SparseLend::shared(&f.sparse), plan.columns());
    let lens: Vec<usize> = access.chunk_lens().collect();
    assert_eq!(lens.len(), chunks);
    let ents = access.entities();
    let mut u = access.write::<u64>().unwrap().unwrap();
    let mut big = access.write::<Big>().unwrap().unwrap();
    let mut mark = access.write::<Marker>().unwrap().unwrap();
    assert!(
        access.write::<Tracked>().is_none(),
        "a column planned for reading is not written"
    );
    assert!(access.read::<u8>().is_none(), "wrong type refused");
    let tracked = access.read::<Tracked>().unwrap().unwrap();
    let tracked2 = access.read::<Tracked>().unwrap().unwrap();
    let mut wide = access.write::<Wide>().unwrap().unwrap();
    assert!(access.read::<Huge>().unwrap().is_none(), "the archetype lacks it");
    assert!(access.read::<u64>().is_none(), "the plan is used up");
    // Every chunk slice of every column can be held at once: they are disjoint.
    let mut all = Vec::new();
    for ((((((len, e), u), b), m), t), (w, t2)) in lens
        .iter()
        .zip(ents)
        .zip(&mut u)
        .zip(&mut big)
        .zip(&mut mark)
        .zip(tracked)
        .zip((&mut wide).zip(tracked2))
    {
        assert_eq!(
            [e.len(), u.len(), b.len(), m.len(), t.len(), w.len(), t2.len()],
            [*len; 7]
        );
        all.push((e, u, b, m, t, w, t2));
    }
    assert!(u.next().is_none() && big.next().is_none());
    for (e, u, b, m, t, w, t2) in &mut all {
        for i in 0..u.len() {
            assert_eq!(b[i].0[0], u[i]);
            assert_eq!(w[i].0[0], u[i] as u8);
            assert_eq!(t[i].0, format!("t{}", u[i]));
            assert_eq!(t2[i].0, t[i].0);
            u[i] += 1000;
            b[i].0[1] = u[i];
            w[i].0[1] = 1;
            let _ = &mut m[i];
            let _ = e[i];
        }
    }
    drop(all);
    let shared = f.storage.iter().find(|a| a.id() == arch).unwrap();
    let write_plan = ColumnPlan::new([take(U64, true)]).unwrap();
    assert!(
        ColumnAccess::shared(shared, SparseLend::shared(&f.sparse), write_plan.columns())
            .write::<u64>()
            .is_none(),
        "a shared access never writes"
    );
    let read_plan = ColumnPlan::new([take(U64, false)]).unwrap();
    let mut ro = ColumnAccess::shared(shared, SparseLend::shared(&f.sparse), read_plan.columns());
    let total: usize = ro
        .read::<u64>()
        .unwrap()
        .unwrap()
        .map(|s| {
            assert!(s.iter().all(|&v| v >= 1000));
            s.len()
        })
        .sum();
    assert_eq!(total, n - n.div_ceil(5));
    drop(f);
    assert_eq!(live(), 0);
}

#[test]
fn single_row_access_reads_and_writes_the_row_asked_and_refuses_the_rest() {
    let mut f = Fixture::new();
    // Several chunks (Big rows), so rows sit at various places in them.
    let entities: Vec<Entity> = (0..70u64)
        .map(|i| {
            f.spawn(&[U64, BIG, TRACKED], |w| {
                w.put(i).unwrap();
                w.put(Big([i; 64])).unwrap();
                w.put(Tracked::new(&format!("t{i}"))).unwrap();
            })
        })
        .collect();
    for (i, &e) in entities.iter().enumerate().step_by(7) {
        let i = i as u64;
        let loc = f.loc(e);
        let u64_col = f.storage.get(loc.archetype).column_index(id(U64)).unwrap();
        // A typed slot for the whole borrow: the right type only.
        assert!(
            f.storage
                .lend_mut(loc.archetype)
                .into_mut_deferred::<u8>(u64_col, loc.row)
                .is_none()
        );
        *f.storage
            .lend_mut(loc.archetype)
            .into_mut(TypedId::<u64>::for_test(U64), loc.row)
            .unwrap() += 1000;
        // One column lent mutably, the rest of the row readable.
        let (value, rest) = RowAccess::split::<u64>(f.storage.lend_mut(loc.archetype), u64_col, loc.row).unwrap();
        assert_eq!(*value, i + 1000);
        assert!(rest.read::<u64>(id(U64)).is_none(), "the lent column is not readable");
        assert!(rest.read::<u8>(id(BIG)).is_none(), "wrong type refused");
        assert_eq!(rest.read::<Big>(id(BIG)).unwrap().0[63], i);
        assert_eq!(rest.read::<Tracked>(id(TRACKED)).unwrap().0, format!("t{i}"));
        assert_eq!(rest.entity(), e);
        *value -= 1000;
        // A row through a plan: its columns in order, once each.
        let plan = ColumnPlan::new([take(BIG, true), take(TRACKED, false), take(WIDE, false)]).unwrap();
        let mut access = ColumnAccess::exclusive(
            f.storage.lend_mut(loc.archetype),
            SparseLend::shared(&f.sparse),
            plan.columns(),
        );
        let big = access.write_row::<Big>(loc.row).unwrap().unwrap();
        let tracked = access.read_row::<Tracked>(loc.row).unwrap().unwrap();
        assert_eq!(access.read_row::<Wide>(loc.row), Some(None), "the archetype lacks it");
        assert_eq!(access.read_row::<u64>(loc.row), None, "the plan is used up");
        big.0[0] = tracked.0.len() as u64;
    }
    // A row that is not live is refused.
    let loc = f.loc(entities[0]);
    let len = f.storage.get(loc.archetype).len() as u32;
    let plan = ColumnPlan::new([take(U64, false)]).unwrap();
    let mut access = ColumnAccess::exclusive(
        f.storage.lend_mut(loc.archetype),
        SparseLend::shared(&f.sparse),
        plan.columns(),
    );
    assert_eq!(access.read_row::<u64>(len), None);
    for (i, &e) in entities.iter().enumerate() {
        assert_eq!(f.get::<u64>(e, U64), Some(&(i as u64)));
        let expected = if i % 7 == 0 {
            format!("t{i}").len() as u64
        } else {
            i as u64
        };
        assert_eq!(f.get::<Big>(e, BIG).unwrap().0[0], expected);
    }
    f.check();
    drop(f);
    assert_eq!(live(), 0);
}

#[test]
fn a_placed_plan_takes_each_archetypes_columns_where_they_sit() {
    let mut f = Fixture::new();
    // Entities with `U64` and `BIG`, with `U64` but not `BIG`, and without
    // `U64`; and an archetype with `U64` left empty.
    for i in 0..700u64 {
        f.spawn(&[U64, BIG], |w| {
            w.put(i).unwrap();
            w.put(Big([i; 64])).unwrap();
        });
        f.spawn(&[U8, U64], |w| {
            w.put(i as u8).unwrap();
            w.put(i + 10_000).unwrap();
        });
        f.spawn(&[U8], |w| w.put(i as u8).unwrap());
    }
    let empty = f.storage.find_or_create(&set(&[U64, BYTES3]));
    let mut plan = ColumnPlan::new([take(BIG, false), take(U64, true)]).unwrap();
    let mut no_columns = ColumnPlan::new([]).unwrap();
    let with_u64: Vec<ArchetypeId> = f
        .storage
        .iter()
        .filter(|a| a.set().contains(id(U64)))
        .map(Archetype::id)
        .collect();
    assert_eq!(with_u64.len(), 3);
    assert!(with_u64.contains(&empty));
    for &a in &with_u64 {
        plan.place(&f.storage, a);
        no_columns.place(&f.storage, a);
    }
    assert_eq!(plan.placed(), &with_u64[..]);

    // Writes through the placed walk land in the right column; a column the
    // archetype lacks is `Some(None)`; the empty archetype is skipped.
    let mut visited = 0;
    for mut access in f
        .storage
        .lend(plan.columns())
        .walk_placed(&plan, SparseLend::shared(&f.sparse), |_| true)
    {
        visited += 1;
        let wide = access.read::<Big>().unwrap();
        let values = access.write::<u64>().unwrap().unwrap();
        match wide {
            Some(wide) => {
                for (v, w) in values.zip(wide) {
                    for (v, w) in v.iter_mut().zip(w) {
                        assert_eq!(*v, w.0[0]);
                        *v += 1;
                    }
                }
            }
            None => values.flatten().for_each(|v| *v -= 10_000),
        }
    }
    assert_eq!(visited, 2);
    let rows = |f: &Fixture, keep: fn(&ComponentSet) -> bool| -> Vec<u64> {
        let mut out = Vec::new();
        for mut access in no_columns.walk_placed(&f.storage, SparseLend::shared(&f.sparse), keep) {
            assert!(access.read::<u64>().is_none(), "the plan takes nothing");
            out.extend(access.chunk_lens().map(|n| n as u64));
        }
        out
    };
    assert_eq!(rows(&f, |_| true).iter().sum::<u64>(), 1400);
    assert_eq!(rows(&f, |set| set.contains(id(BIG))).iter().sum::<u64>(), 700);
    let mut seen: Vec<u64> = plan
        .walk_placed(&f.storage, SparseLend::shared(&f.sparse), |_| true)
        .flat_map(|mut access| {
            access.read::<Big>().unwrap();
            access.read::<u64>().unwrap().unwrap().flatten().copied()
        })
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..700).flat_map(|i| [i, i + 1]).collect::<Vec<_>>());

    // A take of another type than planned is refused, placed or not.
    let a = with_u64[0];
    let mut placed = f
        .storage
        .lend(plan.columns())
        .walk_placed(&plan, SparseLend::shared(&f.sparse), |set| set.contains(id(BIG)));
    let mut access = placed.next().unwrap();
    assert!(access.read::<u64>().is_none(), "the plan's first column holds `Big`s");
    assert!(placed.next().is_none());
    let mut found = ColumnAccess::exclusive(f.storage.lend_mut(a), SparseLend::shared(&f.sparse), plan.columns());
    assert!(found.read::<u64>().is_none());

    // A plan is placed in one `Archetypes`, in creation order.
    let other = Archetypes::new(infos());
    let wrong_context = catch_unwind(AssertUnwindSafe(|| {
        plan.walk_placed(&other, SparseLend::shared(&f.sparse), |_| true)
            .count()
    }));
    assert!(wrong_context.is_err(), "walking another context's archetypes panics");
    let mut late = ColumnPlan::new([take(U64, false)]).unwrap();
    late.place(&f.storage, with_u64[1]);
    let out_of_order = catch_unwind(AssertUnwindSafe(|| late.place(&f.storage, with_u64[0])));
    assert!(out_of_order.is_err(), "placing out of creation order panics");
    f.check();
}

#[test]
fn sparse_values_come_and_go_by_slot_and_are_dropped_once() {
    let before = live();
    let info = &infos()[SPARSE_TRACKED];
    let mut sparse = SparseSets::default();
    for slot in [3, 0, 7] {
        sparse.insert(info, slot, Tracked::new(&slot.to_string())).unwrap();
    }
    assert_eq!(live(), before + 3);
    let twice = sparse.insert(info, 0, Tracked::new("again")).unwrap_err();
    assert_eq!(twice, Tracked::new("again"), "a second value is given back");
    drop(twice);
    assert_eq!(sparse.get::<Tracked>(id(SPARSE_TRACKED), 7), Some(&Tracked::new("7")));
    assert_eq!(sparse.get::<u8>(id(SPARSE_TRACKED), 7), None, "another type is refused");
    assert!(sparse.insert(info, 9, 5u8).is_err(), "another type is refused");
    // Taking the first entry moves the last into its place.
    let taken = sparse.take::<Tracked>(id(SPARSE_TRACKED), 3).unwrap();
    assert_eq!(taken.0, "3");
    drop(taken);
    assert_eq!(sparse.set(id(SPARSE_TRACKED)).unwrap().slots(), &[7, 0]);
    assert_eq!(
        sparse.get::<Tracked>(id(SPARSE_TRACKED), 0).map(|t| t.0.as_str()),
        Some("0")
    );
    sparse
        .get_mut::<Tracked>(id(SPARSE_TRACKED), 0, Tick::NEVER)
        .unwrap()
        .0
        .0
        .push('!');
    // The test info has no `Debug` function: the value prints by name.
    assert_eq!(
        sparse.component_refs(0).map(|c| format!("{c:?}")).collect::<Vec<_>>(),
        ["SparseTracked(..)"]
    );
    assert!(sparse.remove(id(SPARSE_TRACKED), 7));
    assert!(!sparse.remove(id(SPARSE_TRACKED), 7));
    assert_eq!(live(), before + 1);
    sparse.check(&|slot| slot == 0).unwrap();
    drop(sparse);
    assert_eq!(live(), before);
}

#[test]
fn a_flag_takes_no_value_memory_and_every_kind_leaves_with_its_slot() {
    let before = live();
    let mut sparse = SparseSets::default();
    sparse.insert(&infos()[FLAG], 2, Lit).unwrap();
    sparse.insert(&infos()[SPARSE_TRACKED], 2, Tracked::new("a")).unwrap();
    sparse.insert(&infos()[FLAG], 5, Lit).unwrap();
    assert!(sparse.contains(id(FLAG), 2) && sparse.contains(id(FLAG), 5));
    assert_eq!(sparse.ids_of(2).collect::<Vec<_>>(), [id(SPARSE_TRACKED), id(FLAG)]);
    assert_eq!(sparse.len(), 3);
    sparse.remove_all(2, None);
    assert!(!sparse.any_of(2));
    assert!(sparse.contains(id(FLAG), 5));
    assert_eq!(live(), before);
    sparse.check(&|slot| slot == 5).unwrap();
    assert!(sparse.check(&|_| false).is_err(), "slot 5 holds a value");
}

#[test]
fn a_panicking_drop_of_a_sparse_value_leaves_every_other_value_dropped_once() {
    let before = (live(), panicky_drops());
    let mut sparse = SparseSets::default();
    sparse.insert(&infos()[SPARSE_TRACKED], 1, Tracked::new("a")).unwrap();
    assert!(sparse.insert(&infos()[SPARSE_PANICKY], 1, Panicky).is_ok());
    sparse.insert(&infos()[SPARSE_TRACKED], 4, Tracked::new("b")).unwrap();
    let removed = catch_unwind(AssertUnwindSafe(|| sparse.remove_all(1, None)));
    assert!(removed.is_err(), "the panic goes on");
    assert_eq!(panicky_drops(), before.1 + 1);
    assert_eq!(live(), before.0 + 1);
    assert!(!sparse.any_of(1));
    sparse.check(&|slot| slot == 4).unwrap();
    drop(sparse);
    assert_eq!(live(), before.0);
}

#[test]
fn a_bundle_with_sparse_elements_files_them_under_the_new_slot_or_leaves_none() {
    let before = live();
    let mut f = Fixture::new();
    let e = f.spawn(&[U8, SPARSE_TRACKED, FLAG], |w| {
        w.put(1u8).unwrap();
        w.put(Tracked::new("s")).unwrap();
        w.put(Lit).unwrap();
    });
    assert_eq!(*f.storage.get(f.loc(e).archetype).set(), set(&[U8]));
    assert_eq!(f.sparse.get::<Tracked>(id(SPARSE_TRACKED), e.index()).unwrap().0, "s");
    assert!(f.sparse.contains(id(FLAG), e.index()));
    // Stopping after the sparse element leaves neither the row nor the value.
    let ids = [id(SPARSE_TRACKED), id(U8)];
    let bundle = f.storage.register_bundle(None, &ids).unwrap();
    f.spawn_incomplete(bundle, |w| {
        w.put(Tracked::new("t")).unwrap();
    });
    assert_eq!(live(), before + 1);
    f.sparse.remove_all(e.index(), None);
    assert_eq!(live(), before);
}

#[test]
fn a_query_reads_and_writes_sparse_values_row_by_row_each_entry_once() {
    let before = live();
    let mut f = Fixture::new();
    // Big rows: several chunks. All but every third entity has a sparse
    // `Tracked`; entries are added in reverse, so they are not in slot order.
    let entities: Vec<Entity> = (0..40u64)
        .map(|i| {
            f.spawn(&[U64, BIG], |w| {
                w.put(i).unwrap();
                w.put(Big([i; 64])).unwrap();
            })
        })
        .collect();
    let info = &infos()[SPARSE_TRACKED];
    for (i, e) in entities.iter().enumerate().rev().filter(|(i, _)| i % 3 != 1) {
        f.sparse.insert(info, e.index(), Tracked::new(&i.to_string())).unwrap();
    }
    let a = f.loc(entities[0]).archetype;
    let plan = ColumnPlan::new([take(U64, false), take(SPARSE_TRACKED, true), take(FLAG, false)]).unwrap();
    let mut access = ColumnAccess::exclusive(
        f.storage.lend_mut(a),
        SparseLend::exclusive(&mut f.sparse, plan.columns()),
        plan.columns(),
    );
    let lens: Vec<usize> = access.chunk_lens().collect();
    assert!(lens.len() > 2, "several chunks");
    let values = access.read::<u64>().unwrap().unwrap();
    let tracked = access.write_sparse::<Tracked>().unwrap();
    let lit = access
        .read_sparse::<Lit>()
        .expect("a flag with no set yet reads as absent");
    let mut rows = 0;
    for (((len, values), mut chunk), lit) in lens.into_iter().zip(values).zip(tracked).zip(lit) {
        assert_eq!((chunk.len(), values.len(), lit.len()), (len, len, len));
        assert!(lit.iter().all(|l| l.is_none()));
        for (v, t) in values.iter().zip(chunk.iter_mut()) {
            match t {
                Some(t) => {
                    assert_eq!(t.0, v.to_string());
                    t.0.push('!');
                }
                None => assert_eq!(v % 3, 1),
            }
        }
        // Split, each half written through its own rows.
        let (head, tail) = chunk.split_at(len / 2);
        assert_eq!(head.len() + tail.len(), len);
        for t in head.into_iter().chain(tail).flatten() {
            t.0.push('?');
        }
        rows += len;
    }
    assert_eq!(rows, entities.len());
    for (i, e) in entities.iter().enumerate() {
        let value = f.sparse.get::<Tracked>(id(SPARSE_TRACKED), e.index());
        assert_eq!(
            value.map(|t| t.0.as_str()),
            (i % 3 != 1).then(|| format!("{i}!?")).as_deref()
        );
    }
    // One row at a time, through a plan placed nowhere.
    let loc = f.loc(entities[3]);
    let row_plan = ColumnPlan::new([take(SPARSE_TRACKED, true), take(U64, false)]).unwrap();
    let mut access = ColumnAccess::exclusive(
        f.storage.lend_mut(loc.archetype),
        SparseLend::exclusive(&mut f.sparse, row_plan.columns()),
        row_plan.columns(),
    );
    let value = access.write_sparse_row::<Tracked>(loc.row).unwrap().unwrap();
    assert_eq!(access.read_row::<u64>(loc.row), Some(Some(&3)));
    value.0.clear();
    assert_eq!(
        f.sparse
            .get::<Tracked>(id(SPARSE_TRACKED), entities[3].index())
            .unwrap()
            .0,
        ""
    );
    // A shared lend never writes; another type than planned is refused.
    let shared = f.storage.get(a);
    let mut access = ColumnAccess::shared(shared, SparseLend::shared(&f.sparse), row_plan.columns());
    assert!(
        access.write_sparse::<Tracked>().is_none(),
        "a shared access never writes"
    );
    let mut access = ColumnAccess::shared(shared, SparseLend::shared(&f.sparse), plan.columns());
    assert!(access.read::<u64>().is_some());
    assert!(access.read_sparse::<u64>().is_none(), "the plan records `Tracked`");
    for e in &entities {
        f.sparse.remove_all(e.index(), None);
    }
    drop(f);
    assert_eq!(live(), before);
}

#[test]
fn rows_hold_distinct_slots_and_an_exclusive_lend_serves_one_plan() {
    let mut f = Fixture::new();
    let e = f.spawn(&[U64], |w| w.put(1u64).unwrap());
    // A second row for the same slot (here in another archetype) is refused.
    let bundle = f.storage.register_bundle(None, &[id(U8)]).unwrap();
    let sparse = &mut f.sparse;
    let again = catch_unwind(AssertUnwindSafe(|| {
        f.storage
            .spawn(bundle, sparse, e.index(), |_| e, |w| w.put(2u8).unwrap())
    }));
    assert!(again.is_err(), "a taken slot is refused");
    // The refused row stays, with no entity (a caller's bug), so no slot is
    // held twice.
    let refused = f.storage.iter().find(|a| *a.set() == set(&[U8])).unwrap();
    assert_eq!(refused.entities().collect::<Vec<_>>(), [Entity::PLACEHOLDER]);
    // Freed by despawn, the slot can hold a new row.
    f.despawn(e);
    let reused = f.spawn(&[U64], |w| w.put(3u64).unwrap());
    assert_eq!(reused.index(), e.index());
    // Sparse sets lent exclusively for one plan refuse accesses of another.
    let (write, read) = (
        ColumnPlan::new([take(SPARSE_TRACKED, true)]).unwrap(),
        ColumnPlan::new([take(SPARSE_TRACKED, false)]).unwrap(),
    );
    let a = f.loc(reused).archetype;
    let lend = SparseLend::exclusive(&mut f.sparse, write.columns());
    let mismatched = catch_unwind(AssertUnwindSafe(|| {
        ColumnAccess::exclusive(f.storage.lend_mut(a), lend, read.columns())
            .chunk_lens()
            .count()
    }));
    assert!(mismatched.is_err(), "a lend serves the plan it was made for");
    let served = ColumnAccess::exclusive(f.storage.lend_mut(a), lend, write.columns());
    assert_eq!(served.chunk_lens().count(), 1);
}

#[test]
fn a_split_lend_writes_one_plan_and_reads_another_that_names_nothing_it_writes() {
    let mut f = Fixture::new();
    let e = f.spawn(&[U64, U8], |w| {
        w.put(7u64).unwrap();
        w.put(2u8).unwrap();
    });
    let loc = f.loc(e);
    let writes = ColumnPlan::new([take(U64, true)]).unwrap();
    let mut reads = ColumnPlan::new([take(U8, false)]).unwrap();
    reads.place(&f.storage, loc.archetype);
    // A read side naming a written component, or writing, is refused.
    let aliased = ColumnPlan::new([take(U8, false), take(U64, false)]).unwrap();
    let writing = ColumnPlan::new([take(U8, true)]).unwrap();
    let refused = f.storage.split(&mut f.sparse, writes.columns(), &aliased).err();
    assert_eq!(refused, Some(id(U64)));
    let refused = f.storage.split(&mut f.sparse, writes.columns(), &writing).err();
    assert_eq!(refused, Some(id(U8)));

    let (write, write_sparse, read) = f.storage.split(&mut f.sparse, writes.columns(), &reads).unwrap();
    // The read side serves its own plan only.
    let other = catch_unwind(AssertUnwindSafe(|| {
        read.prepared(&writes);
    }));
    assert!(other.is_err(), "a split's read side reads by its plan");
    let mut row = read.prepared(&reads).row(loc.archetype.0, loc.row).unwrap();
    let small = row.read::<u8>().unwrap().unwrap();
    // It reads only what its plan takes.
    assert!(row.read::<u64>().is_none(), "the write side's column is not read");
    // Meanwhile the write side writes its column, and the read stays valid.
    for mut access in write.visit(Visit::All, write_sparse, writes.columns(), |a| !a.is_empty()) {
        for values in access.write::<u64>().unwrap().unwrap() {
            values.iter_mut().for_each(|v| *v += u64::from(*small));
        }
    }
    assert_eq!(*small, 2);
    assert_eq!(
        f.storage.get(loc.archetype).get(TypedId::<u64>::for_test(U64), loc.row),
        Some(&9)
    );
}

#[test]
fn a_lend_walks_only_the_plan_it_was_lent_for() {
    let mut f = Fixture::new();
    f.spawn(&[U64], |w| w.put(1u64).unwrap());
    let (lent, other) = (
        ColumnPlan::new([take(U64, true)]).unwrap(),
        ColumnPlan::new([take(U64, true)]).unwrap(),
    );
    let sparse = SparseLend::shared(&f.sparse);
    let mut lend = f.storage.lend(lent.columns());
    let walked = catch_unwind(AssertUnwindSafe(|| {
        lend.reborrow()
            .visit(Visit::All, sparse, other.columns(), |_| true)
            .count()
    }));
    assert!(walked.is_err(), "a lend writes by the plan it was lent for");
    assert_eq!(
        lend.visit(Visit::All, sparse, lent.columns(), |a| !a.is_empty())
            .count(),
        1
    );
}

/// A recycler that keeps the `Tracked` values handed to it, and checks
/// that only pooled components are handed over.
fn keeper(kept: &mut Vec<Tracked>) -> impl FnMut(ComponentId, &mut dyn std::any::Any) + '_ {
    |component, value| {
        assert!(component == id(POOLED_TRACKED) || component == id(SPARSE_POOLED));
        let value = value
            .downcast_mut::<Option<Tracked>>()
            .expect("an `Option` of the value's type");
        kept.push(value.take().expect("handed over once"));
    }
}

#[test]
fn a_destroyed_row_hands_its_pooled_values_over_and_drops_the_rest() {
    let before = live();
    let mut f = Fixture::new();
    let row = |name: &'static str| {
        move |w: &mut RowWriter<'_>| {
            w.put(1u8).unwrap();
            w.put(Tracked::new("dropped")).unwrap();
            w.put(Tracked::new(name)).unwrap();
            w.put(Tracked::new("sparse")).unwrap();
        }
    };
    let kinds = [U8, TRACKED, POOLED_TRACKED, SPARSE_POOLED];
    let a = f.spawn(&kinds, row("a"));
    let b = f.spawn(&kinds, row("b"));
    assert_eq!(live(), before + 6);
    let mut kept = Vec::new();
    let loc = f.loc(a);
    f.keys.disable(a, false);
    f.keys.relocate(b, loc);
    let displaced = f.storage.despawn_recycling(loc, Some(&mut keeper(&mut kept)));
    assert_eq!(displaced, Some(Some(b)));
    f.sparse.remove_all(a.index(), Some(&mut keeper(&mut kept)));
    let names: Vec<&str> = kept.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(
        names,
        ["a", "sparse"],
        "pooled values handed over, in column then set order"
    );
    assert_eq!(live(), before + 3 + 2, "b's three, and the two kept");
    assert_eq!(f.get::<Tracked>(b, POOLED_TRACKED).map(|t| t.0.as_str()), Some("b"));
    f.check();
    drop(kept);
    f.despawn(b);
    f.sparse.remove_all(b.index(), None);
    assert_eq!(live(), before);
}

#[test]
fn a_value_the_recycler_leaves_or_a_panicking_recycler_drops_it_once() {
    let before = live();
    let mut f = Fixture::new();
    let kinds = [TRACKED, POOLED_TRACKED, U8];
    let write = |w: &mut RowWriter<'_>| {
        w.put(Tracked::new("plain")).unwrap();
        w.put(Tracked::new("pooled")).unwrap();
        w.put(3u8).unwrap();
    };
    // A recycler that takes nothing: storage drops the value.
    let a = f.spawn(&kinds, write);
    let mut asked = 0;
    let loc = f.loc(a);
    f.keys.disable(a, false);
    f.storage.despawn_recycling(loc, Some(&mut |_, _| asked += 1));
    assert_eq!((asked, live()), (1, before));
    // A panicking recycler: the value and the rest of the row are dropped
    // once, and the row is removed.
    let b = f.spawn(&kinds, write);
    let c = f.spawn(&kinds, write);
    let loc = f.loc(b);
    f.keys.disable(b, false);
    f.keys.relocate(c, loc);
    let result = catch_unwind(AssertUnwindSafe(|| {
        f.storage
            .despawn_recycling(loc, Some(&mut |_, _| panic!("recycler failed")))
    }));
    assert!(result.is_err(), "the panic goes on");
    assert_eq!(live(), before + 2, "only c's values are left");
    f.check();
    // The same in a sparse set.
    f.sparse.insert(&infos()[SPARSE_POOLED], 9, Tracked::new("s")).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        f.sparse.remove_all(9, Some(&mut |_, _| panic!("recycler failed")))
    }));
    assert!(result.is_err());
    assert!(!f.sparse.any_of(9));
    assert_eq!(live(), before + 2);
    f.despawn(c);
    assert_eq!(live(), before);
}

#[test]
fn a_batch_writes_whole_rows_across_chunks_and_drops_each_value_once() {
    let before = live();
    let mut f = Fixture::new();
    // `Big` rows: about 30 per chunk, so 100 rows span four chunks.
    let rows: Vec<(Tracked, Big, u8)> = (0..100u8)
        .map(|i| (Tracked::new(&format!("t{i}")), Big([u64::from(i); 64]), i))
        .collect();
    let made = f
        .spawn_batch(&[TRACKED, BIG, U8], rows)
        .unwrap_or_else(|_| panic!("the plan is the tuple's"));
    assert_eq!(made.len(), 100);
    assert_eq!(live() - before, 100, "every value was moved in, none dropped");
    f.check();
    let archetype = f.storage.get(f.loc(made[0]).archetype);
    assert!(archetype.chunk_count() > 3, "the test must span chunks");
    for (i, &e) in made.iter().enumerate() {
        let loc = f.loc(e);
        assert_eq!(loc.row as usize, i, "rows in batch order");
        assert_eq!(
            f.get::<Tracked>(e, TRACKED).map(|t| t.0.as_str()),
            Some(format!("t{i}").as_str())
        );
        assert_eq!(f.get::<Big>(e, BIG), Some(&Big([i as u64; 64])));
        assert_eq!(f.get::<u8>(e, U8), Some(&(i as u8)));
    }
    for &e in made.iter().rev() {
        f.despawn(e);
    }
    f.check();
    drop(f);
    assert_eq!(live(), before, "each value dropped exactly once");
}

#[test]
fn a_batch_refuses_a_plan_that_is_not_its_columns() {
    let before = live();
    let mut f = Fixture::new();
    // A component kept in a sparse set: the batch leaves it to row-by-row writes.
    let sparse = f.spawn_batch(&[U8, SPARSE_TRACKED], vec![(1u8, Tracked::new("s"))]);
    let rows = sparse.expect_err("a plan with a sparse element is refused");
    assert_eq!(rows.len(), 1, "the rows come back untouched");
    drop(rows);
    // Another order, or another type, than the plan's.
    assert!(f.spawn_batch(&[U8, U64], vec![(2u64, 3u8)]).is_err());
    assert!(f.spawn_batch(&[U8, U64], vec![(2u8, 3u32)]).is_err());
    assert!(f.spawn_batch(&[U8, U64], vec![(2u8,)]).is_err());
    f.check();
    assert_eq!(f.keys.len(), 0, "no entity made");
    assert_eq!(live(), before);
}

#[test]
fn a_batch_whose_entity_maker_panics_keeps_the_rows_before_and_drops_the_refused_values() {
    let before = live();
    let mut f = Fixture::new();
    let bundle = f.storage.register_bundle(None, &[id(TRACKED), id(U64)]).unwrap();
    let rows: Vec<(Tracked, u64)> = (0..5).map(|i| (Tracked::new("t"), i)).collect();
    let keys = &mut f.keys;
    let mut made = Vec::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        f.storage.spawn_batch(
            bundle,
            rows.into_iter(),
            |at| {
                assert!(at.row < 3, "no entity for row 3");
                keys.alloc(at)
            },
            |e| made.push(e),
        )
    }));
    assert!(outcome.is_err(), "the entity maker panicked");
    assert_eq!(made.len(), 3, "the three rows before stay");
    f.check();
    for (i, &e) in made.iter().enumerate() {
        assert_eq!(f.get::<u64>(e, U64), Some(&(i as u64)));
    }
    assert_eq!(
        live() - before,
        3,
        "the refused row's value and those not reached were dropped"
    );
    drop(f);
    assert_eq!(live(), before);
}

#[test]
fn prepared_rows_read_and_write_the_row_asked_at_the_plans_offsets() {
    let mut f = Fixture::new();
    // Rows of two archetypes holding `U64` (one with `BIG`, one with `U8`,
    // across several chunks), one archetype without it, and a sparse value
    // for some.
    let mut with_big = Vec::new();
    let mut with_u8 = Vec::new();
    for i in 0..100u64 {
        with_big.push(f.spawn(&[U64, BIG], |w| {
            w.put(i).unwrap();
            w.put(Big([i; 64])).unwrap();
        }));
        with_u8.push(f.spawn(&[U8, U64], |w| {
            w.put(i as u8).unwrap();
            w.put(i + 1000).unwrap();
        }));
    }
    let without = f.spawn(&[U8], |w| w.put(7u8).unwrap());
    for &e in with_big.iter().step_by(3) {
        f.sparse
            .insert_with(id(SPARSE_TRACKED), e.index(), Tracked::new("hot"), || {
                &infos()[SPARSE_TRACKED]
            })
            .unwrap();
    }
    f.storage.set_watched(&set(&[U64]));
    let tick = f.storage.change_tick();
    // Writes `U64`, reads `BIG` if present and the sparse value.
    let mut plan = ColumnPlan::new([take(U64, true), take(BIG, false), take(SPARSE_TRACKED, false)]).unwrap();
    for archetype in f
        .storage
        .iter()
        .filter(|a| a.set().contains(id(U64)))
        .map(Archetype::id)
        .collect::<Vec<_>>()
    {
        plan.place(&f.storage, archetype);
    }
    let locs: Vec<(Entity, Location)> = with_big.iter().chain(&with_u8).map(|&e| (e, f.loc(e))).collect();
    let without_at = f.loc(without);
    {
        let sparse = SparseLend::exclusive(&mut f.sparse, plan.columns());
        let mut rows = f.storage.lend(plan.columns()).prepared(&plan, sparse);
        for &(e, at) in locs.iter().rev() {
            let mut row = rows.row(at.archetype.index() as u32, at.row).expect("placed and live");
            assert_eq!(row.entity(), Some(e));
            let value = row.write::<u64>().unwrap().unwrap();
            let big = row.read::<Big>().unwrap();
            let hot = row.read_sparse::<Tracked>().unwrap();
            match big {
                Some(big) => assert_eq!(big.0[0], *value),
                None => assert!(*value >= 1000),
            }
            assert_eq!(hot.is_some(), with_big.iter().step_by(3).any(|&x| x == e));
            *value += 1;
            assert!(row.read::<u64>().is_none(), "each column is taken once");
        }
        // Not placed there; past the last row; another type than planned.
        assert!(rows.row(without_at.archetype.index() as u32, without_at.row).is_none());
        let at = locs[0].1;
        assert!(rows.row(at.archetype.index() as u32, 100).is_none());
        assert!(rows.row(u32::MAX, 0).is_none());
        let mut row = rows.row(at.archetype.index() as u32, at.row).unwrap();
        assert!(row.read::<u8>().is_none(), "the plan's first column holds `u64`s");
    }
    for (i, &e) in with_big.iter().enumerate() {
        assert_eq!(f.get::<u64>(e, U64), Some(&(i as u64 + 1)));
        let at = f.loc(e);
        let col = f.storage.get(at.archetype).column_index(id(U64)).unwrap();
        assert_eq!(f.storage.row_stamp(at, col), tick, "a write is stamped");
    }
    for (i, &e) in with_u8.iter().enumerate() {
        assert_eq!(f.get::<u64>(e, U64), Some(&(i as u64 + 1001)));
    }
    // Read only: every write refused, any number of rows alive at once.
    let read = ReadLend::shared(&f.storage, &f.sparse);
    let shared = read.prepared(&plan);
    let (a, b) = (f.loc(with_big[0]), f.loc(with_u8[0]));
    let mut first = shared.row(a.archetype.index() as u32, a.row).unwrap();
    let mut second = shared.row(b.archetype.index() as u32, b.row).unwrap();
    assert!(first.write::<u64>().is_none(), "a shared row does not write");
    assert!(second.write::<u64>().is_none());
    assert_eq!(first.read::<Big>().unwrap().unwrap().0[0], 0);
    // A plan placed elsewhere is refused.
    let other = Archetypes::new(infos());
    let wrong = catch_unwind(AssertUnwindSafe(|| {
        ReadLend::shared(&other, &f.sparse).prepared(&plan);
    }));
    assert!(wrong.is_err(), "a plan placed in another context's archetypes panics");
    f.check();
    drop(f);
    assert_eq!(live(), 0);
}
