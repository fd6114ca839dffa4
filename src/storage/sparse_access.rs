//! `SparseLend`, `SparseChunk` and `SparseChunkMut`: the flag and sparse
//! components a query fetches. Their values are not laid out by row, so a
//! query looks each row's value up by its entity's slot: a chunk of such a
//! component is the chunk's entity array beside a view of the component's
//! sparse set.
//!
//! Writes need no borrow flags, for the same reasons as columns' (see
//! `columns.rs`): a lend that writes serves one plan (checked when each
//! `ColumnAccess` is made), and the plan refuses a query that writes a
//! component and names it again, so the sets written are distinct from
//! every other set its views read; within one set, each row belongs to a
//! distinct entity of a distinct slot (`Archetypes::spawn` refuses a slot a
//! live row holds), hence a distinct entry, and each row is handed out once
//! (each archetype is lent once, and a `SparseChunkMut` only ever splits its
//! entity array in two).
//!
//! No `&mut` to the sets is made while they are lent: a write view copies
//! out the pointer each set keeps to its values (taken with
//! `Vec::as_mut_ptr` when the set was last changed), so the shared borrows
//! the query's per-entity checks take of the sets' indices meanwhile stay
//! valid.

use std::marker::PhantomData;
use std::ptr::NonNull;

use super::column_plan::PlannedColumns;
use super::sparse::SparseSets;
use super::stamps::{Stamp, Stamps, Tick};
use crate::entity::Entity;
use crate::id::ComponentId;

/// The sparse sets of one context, lent to a query for `'a`: to read
/// (made from `&'a SparseSets`), or to read and write (made from
/// `&'a mut SparseSets`). Copied into each archetype's `ColumnAccess`.
#[derive(Clone, Copy)]
pub struct SparseLend<'a> {
    /// Derived from the reference the lend was made from: with write
    /// permission if `writable`.
    sets: NonNull<SparseSets>,
    writable: bool,
    /// For an exclusive lend, the plan (its takes' address and number) that
    /// every `ColumnAccess` made with it must follow: so the views of one
    /// lend never write a component that another view of it reads.
    plan: (usize, usize),
    _lend: PhantomData<&'a SparseSets>,
}

// SAFETY: a `SparseLend` is a `&'a SparseSets` or a `&'a mut SparseSets` in
// raw form, or one of the two halves of a split `&'a mut SparseSets`
// (`split`: one half writes the sets its plan writes, the other reads only
// sets its own plan names, which are others); `SparseSets` is `Send + Sync`
// (its values are), so any may cross threads. Writes through it happen only
// through `SparseWrite` views (`SparseChunkMut`, `write_sparse_row`), whose
// entries are disjoint (see the module docs), and the lend only ever makes
// shared references to the sets themselves.
unsafe impl Send for SparseLend<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for SparseLend<'_> {}

impl<'a> SparseLend<'a> {
    /// The sets, to read.
    #[inline]
    pub(crate) fn shared(sets: &'a SparseSets) -> Self {
        SparseLend {
            sets: NonNull::from(sets),
            writable: false,
            plan: (0, 0),
            _lend: PhantomData,
        }
    }

    /// The sets, to read and write through accesses that follow `plan`
    /// (checked by `ColumnAccess`). The `&mut` is held for `'a`, so nothing
    /// else reaches them meanwhile.
    #[inline]
    pub(crate) fn exclusive(sets: &'a mut SparseSets, plan: PlannedColumns<'a>) -> Self {
        // Borrowing the plan for `'a` too: no other plan can take its place
        // (and its address) while the lend lives.
        Self::exclusive_for(sets, plan)
    }

    /// As [`exclusive`](Self::exclusive), for one access made at once (the
    /// lend does not outlive the call's use of it, so the plan need not).
    #[inline]
    pub(super) fn exclusive_for(sets: &'a mut SparseSets, plan: PlannedColumns<'_>) -> Self {
        SparseLend {
            sets: NonNull::from(sets),
            writable: true,
            plan: plan.identity(),
            _lend: PhantomData,
        }
    }

    /// The sets lent in two for `'a`: to read and write through accesses
    /// that follow `writes`, and to read through accesses that follow
    /// `reads` (which the caller checked writes nothing `writes` names).
    #[inline]
    pub(super) fn split(
        sets: &'a mut SparseSets,
        writes: PlannedColumns<'a>,
        reads: PlannedColumns<'a>,
    ) -> (Self, Self) {
        let sets = NonNull::from(sets);
        let lend = |writable, plan: PlannedColumns<'a>| SparseLend {
            sets,
            writable,
            plan: plan.identity(),
            _lend: PhantomData,
        };
        (lend(true, writes), lend(false, reads))
    }

    /// Whether accesses following `plan` may use this lend: the plan it was
    /// made for, if it writes or is a split's read side; any, if it was made
    /// to read (`shared`).
    #[inline]
    pub(super) fn serves(&self, plan: PlannedColumns<'_>) -> bool {
        self.plan == plan.identity() || (!self.writable && self.plan == (0, 0))
    }

    /// The sets, to read. Private to storage: through the lend, values are
    /// read only by views of components the query does not write (see
    /// `ColumnAccess`), and code outside reads indices only (`contains`).
    #[inline]
    fn sets(self) -> &'a SparseSets {
        // SAFETY: `sets` comes from a reference valid for `'a`. Nothing
        // changes the sets during `'a` but the values written through
        // `SparseWrite`s, which use the pointer each set keeps to its values
        // (`SparseSet::values_at`), never a `&mut` to a set. No shared borrow
        // made here reads a value written meanwhile: `contains` reads indices
        // only, and `read` makes views only for a `ColumnAccess` following
        // the plan the lend serves, which writes none of what it reads; a
        // split's two lends (`split`) serve two plans, the one that reads
        // naming nothing the one that writes writes.
        unsafe { self.sets.as_ref() }
    }

    /// The components whose sets carry change stamps.
    #[inline]
    pub(crate) fn watched(self) -> &'a super::ComponentSet {
        self.sets().watched()
    }

    /// Whether the entity in `slot` has a value of component `id` (for the
    /// per-entity checks of a query; reads the set's index only).
    #[inline]
    pub(crate) fn contains(self, id: ComponentId, slot: u32) -> bool {
        self.sets().contains(id, slot)
    }

    /// A view of component `id`'s values, which are `T`s, to read: `None`
    /// if that set holds another type. The caller takes it for a component
    /// the query does not write.
    #[inline]
    pub(super) fn read<T: 'static>(self, id: ComponentId) -> Option<SparseRead<'a, T>> {
        let Some(set) = self.sets().set(id) else {
            return Some(SparseRead::empty());
        };
        let (index, values) = set.typed_parts::<T>()?;
        Some(SparseRead { index, values })
    }

    /// A view of component `id`'s values, which are `T`s, to write: `None`
    /// if the lend is shared or that set holds another type.
    ///
    /// Every write view of one component that a query holds must hand out
    /// each entry at most once: the caller takes it once per archetype for a
    /// component the plan names once, and rows are distinct entities.
    ///
    /// Writes stamp the set's change stamps (if it has them) with `tick`
    /// (0: never), when the caller marks them (see [`SparseWrite::mark_present`]
    /// and [`SparseWrite::stamp`]).
    #[inline]
    pub(super) fn write<T: 'static>(self, id: ComponentId, tick: Tick) -> Option<SparseWrite<'a, T>> {
        if !self.writable {
            return None;
        }
        let Some(set) = self.sets().set(id) else {
            return Some(SparseWrite::empty());
        };
        // The pointer was taken with `Vec::as_mut_ptr` from the set borrowed
        // mutably, and the lend was made from `&'a mut SparseSets`
        // (`writable`): writes through it are the query's alone during `'a`.
        let (index, values, len) = set.typed_raw::<T>()?;
        Some(SparseWrite {
            index,
            values,
            len,
            stamps: set.stamps().filter(|_| !tick.is_never()),
            tick,
            _values: PhantomData,
        })
    }
}

/// One sparse set's values, to read, by entity slot.
pub struct SparseRead<'a, T> {
    /// By slot: the entry's position, or `u32::MAX`.
    index: &'a [u32],
    values: &'a [T],
}

impl<T> Clone for SparseRead<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SparseRead<'_, T> {}

impl<'a, T> SparseRead<'a, T> {
    fn empty() -> Self {
        SparseRead {
            index: &[],
            values: &[],
        }
    }

    /// The value of the entity in `slot`, if it has one.
    #[inline(always)]
    pub(super) fn get(&self, slot: u32) -> Option<&'a T> {
        let &at = self.index.get(slot as usize)?;
        self.values.get(at as usize)
    }
}

/// One sparse set's values, to write, by entity slot: each entry is handed
/// out at most once (see [`SparseLend::write`]).
pub struct SparseWrite<'a, T> {
    /// By slot: the entry's position, or `u32::MAX`.
    index: &'a [u32],
    /// The set's `len` values, from `Vec::as_mut_ptr`.
    values: NonNull<T>,
    len: usize,
    /// The set's change stamps (only ever marked from the thread that hands
    /// rows out: see [`mark_present`](Self::mark_present)), and the tick.
    stamps: Option<&'a Stamps>,
    tick: Tick,
    _values: PhantomData<&'a mut [T]>,
}

// SAFETY: a `SparseWrite` hands out `&'a mut T`s to distinct entries, as a
// `&'a mut [T]` would: it may move to another thread if `T: Send`.
unsafe impl<T: Send> Send for SparseWrite<'_, T> {}
// SAFETY: `take` and `split` hand out `&'a mut T`s from `&self` (to distinct
// entries, by their contracts), so threads sharing one may each get some:
// as for `&mut [T]` split across threads, that needs `T: Send`, and reads
// through shared copies need `T: Sync`.
unsafe impl<T: Send + Sync> Sync for SparseWrite<'_, T> {}

impl<'a, T> SparseWrite<'a, T> {
    fn empty() -> Self {
        SparseWrite {
            index: &[],
            values: NonNull::dangling(),
            len: 0,
            stamps: None,
            tick: Tick::NEVER,
            _values: PhantomData,
        }
    }

    /// Stamps as changed the slots of `entities` that have a value: the rows
    /// of a chunk about to be handed out (called where chunks are handed
    /// out, one at a time, never from the threads that write them).
    #[inline]
    pub(super) fn mark_present(&self, entities: &[Entity]) {
        if let Some(stamps) = self.stamps {
            for entity in entities {
                let slot = entity.index();
                if self
                    .index
                    .get(slot as usize)
                    .is_some_and(|&at| (at as usize) < self.len)
                {
                    stamps.mark(slot, self.tick);
                }
            }
        }
    }

    /// The change stamp of `slot`, to mark once its write stands.
    #[inline]
    pub(super) fn stamp(&self, slot: u32) -> Stamp<'a> {
        Stamp::new(self.stamps, slot, self.tick)
    }

    /// A copy for a disjoint set of rows (a chunk split in two, or the next
    /// chunk).
    ///
    /// # Safety
    /// Over this view and every copy of it, each slot is asked for (by
    /// [`take`](Self::take)) at most once while the values handed out live.
    pub(super) unsafe fn split(&self) -> Self {
        SparseWrite {
            index: self.index,
            values: self.values,
            len: self.len,
            stamps: self.stamps,
            tick: self.tick,
            _values: PhantomData,
        }
    }

    /// The value of the entity in `slot`, if it has one.
    ///
    /// # Safety
    /// Over this view and every copy of it (see [`split`](Self::split)),
    /// each slot is asked for at most once while the values handed out live.
    #[inline(always)]
    pub(super) unsafe fn take(&self, slot: u32) -> Option<&'a mut T> {
        let at = *self.index.get(slot as usize)? as usize;
        if at >= self.len {
            return None;
        }
        // SAFETY: `at < len`, so the value is one of the set's initialised
        // values (the set cannot change during `'a`: the sets are lent
        // exclusively to the query, which writes values only). It is handed
        // out once: distinct slots have distinct entries, and each slot is
        // asked for once (the caller's contract, met by rows of distinct
        // entities).
        Some(unsafe { &mut *self.values.as_ptr().add(at) })
    }
}

/// One chunk's values (or a run of its rows) of a flag or sparse component
/// a query reads: what [`for_each_chunk`](crate::QueryMut::for_each_chunk)
/// hands out for `&T` or `Option<&T>` when `T` is kept out of archetypes.
/// Row `i` is the entity `entities()[i]`'s value; for a `&T` parameter,
/// every row has one.
pub struct SparseChunk<'a, T> {
    entities: &'a [Entity],
    values: SparseRead<'a, T>,
}

impl<'a, T> SparseChunk<'a, T> {
    #[inline]
    pub(crate) fn new(entities: &'a [Entity], values: SparseRead<'a, T>) -> Self {
        SparseChunk { entities, values }
    }

    /// A chunk of no rows.
    #[inline]
    pub(crate) fn empty() -> Self {
        SparseChunk::new(&[], SparseRead::empty())
    }

    /// The number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether there are no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The rows' entities.
    #[inline]
    pub fn entities(&self) -> &'a [Entity] {
        self.entities
    }

    /// Row `row`'s value: `None` if the row's entity has none, or there is
    /// no such row.
    #[inline]
    pub fn get(&self, row: usize) -> Option<&'a T> {
        self.values.get(self.entities.get(row)?.index())
    }

    /// Each row's value, in row order.
    #[inline]
    pub fn iter(&self) -> SparseRows<'a, T> {
        SparseRows {
            entities: self.entities.iter(),
            values: self.values,
        }
    }

    /// The rows before `mid` and the rest.
    #[inline]
    pub(crate) fn split_at(self, mid: usize) -> (Self, Self) {
        let (head, tail) = self.entities.split_at(mid);
        (SparseChunk::new(head, self.values), SparseChunk::new(tail, self.values))
    }
}

impl<T> Clone for SparseChunk<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SparseChunk<'_, T> {}

/// The rows' entities and values: `SparseChunk { entities: [..], values:
/// [Some(..), None, ..] }` (at most a chunk's rows).
impl<T: std::fmt::Debug> std::fmt::Debug for SparseChunk<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseChunk")
            .field("entities", &self.entities)
            .field("values", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

impl<'a, T> IntoIterator for SparseChunk<'a, T> {
    type Item = Option<&'a T>;
    type IntoIter = SparseRows<'a, T>;

    fn into_iter(self) -> SparseRows<'a, T> {
        self.iter()
    }
}

/// The values of a [`SparseChunk`]'s rows, in row order.
pub struct SparseRows<'a, T> {
    entities: std::slice::Iter<'a, Entity>,
    values: SparseRead<'a, T>,
}

impl<T> Clone for SparseRows<'_, T> {
    fn clone(&self) -> Self {
        SparseRows {
            entities: self.entities.clone(),
            values: self.values,
        }
    }
}

/// How many rows are left: `SparseRows { remaining: 3 }`.
impl<T> std::fmt::Debug for SparseRows<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseRows")
            .field("remaining", &self.entities.len())
            .finish()
    }
}

impl<'a, T> Iterator for SparseRows<'a, T> {
    type Item = Option<&'a T>;

    #[inline]
    fn next(&mut self) -> Option<Option<&'a T>> {
        let entity = self.entities.next()?;
        Some(self.values.get(entity.index()))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entities.size_hint()
    }
}

impl<T> ExactSizeIterator for SparseRows<'_, T> {}

/// One chunk's values (or a run of its rows) of a flag or sparse component
/// a query writes: what [`for_each_chunk`](crate::QueryMut::for_each_chunk)
/// hands out for `&mut T` or `Option<&mut T>` when `T` is kept out of
/// archetypes. Row `i` is the entity `entities()[i]`'s value; for a `&mut T`
/// parameter, every row has one.
pub struct SparseChunkMut<'a, T> {
    /// Distinct entities, each the only one of its slot.
    entities: &'a [Entity],
    values: SparseWrite<'a, T>,
}

impl<'a, T> SparseChunkMut<'a, T> {
    /// `entities` are rows of the query `values` was taken for, handed to
    /// no other chunk of that view.
    #[inline]
    pub(crate) fn new(entities: &'a [Entity], values: SparseWrite<'a, T>) -> Self {
        SparseChunkMut { entities, values }
    }

    /// A chunk of no rows.
    #[inline]
    pub(crate) fn empty() -> Self {
        SparseChunkMut::new(&[], SparseWrite::empty())
    }

    /// The number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether there are no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The rows' entities.
    #[inline]
    pub fn entities(&self) -> &'a [Entity] {
        self.entities
    }

    /// Each row's value, mutably, in row order.
    #[inline]
    pub fn iter_mut(&mut self) -> SparseRowsMut<'_, T> {
        SparseRowsMut {
            entities: self.entities.iter(),
            // The rows are this chunk's, borrowed mutably for the iterator's
            // life: no other access to their values meanwhile.
            // SAFETY: this chunk's rows are distinct entities (the only ones
            // of their slots) that no other copy of the view is asked for;
            // the iterator borrows the chunk mutably, so no other of its
            // iterators asks for them meanwhile.
            values: unsafe { self.values.split() },
        }
    }

    /// The rows before `mid` and the rest.
    #[inline]
    pub(crate) fn split_at(self, mid: usize) -> (Self, Self) {
        let (head, tail) = self.entities.split_at(mid);
        // SAFETY: the two chunks' rows are disjoint parts of this one's.
        let values = unsafe { self.values.split() };
        (
            SparseChunkMut::new(head, self.values),
            SparseChunkMut::new(tail, values),
        )
    }
}

/// The rows' entities (the values are reached through `&mut self` only):
/// `SparseChunkMut { entities: [..] }`.
impl<T> std::fmt::Debug for SparseChunkMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseChunkMut")
            .field("entities", &self.entities)
            .finish()
    }
}

impl<'a, T> IntoIterator for SparseChunkMut<'a, T> {
    type Item = Option<&'a mut T>;
    type IntoIter = SparseRowsMut<'a, T>;

    fn into_iter(self) -> SparseRowsMut<'a, T> {
        SparseRowsMut {
            entities: self.entities.iter(),
            values: self.values,
        }
    }
}

/// The values of a [`SparseChunkMut`]'s rows, mutably, in row order.
pub struct SparseRowsMut<'a, T> {
    /// Distinct entities, each the only one of its slot.
    entities: std::slice::Iter<'a, Entity>,
    values: SparseWrite<'a, T>,
}

/// How many rows are left: `SparseRowsMut { remaining: 3 }`.
impl<T> std::fmt::Debug for SparseRowsMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseRowsMut")
            .field("remaining", &self.entities.len())
            .finish()
    }
}

impl<'a, T> Iterator for SparseRowsMut<'a, T> {
    type Item = Option<&'a mut T>;

    #[inline]
    fn next(&mut self) -> Option<Option<&'a mut T>> {
        let entity = self.entities.next()?;
        // SAFETY: each of the chunk's entities is visited once, is the only
        // live entity of its slot in the walked storage, and belongs to no
        // other chunk of the view.
        Some(unsafe { self.values.take(entity.index()) })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entities.size_hint()
    }
}

impl<T> ExactSizeIterator for SparseRowsMut<'_, T> {}
