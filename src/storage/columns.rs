//! `ColumnAccess`: chunk-by-chunk slices of one archetype's columns, for
//! queries, taken as a `ColumnPlan` says. The plan is checked once per query
//! (no component written and also named again), so taking columns from each
//! archetype needs no borrow flags: no sequence of calls can produce two live
//! `&mut` to one value, or a `&mut` next to a `&`.
//!
//! A plan placed in archetypes (`column_plan.rs`) remembers, per archetype,
//! where each of its columns sits, so a query walking the placed archetypes
//! (`ColumnPlan::walk_placed`, here) takes each column with a load and a type
//! check against the plan instead of a lookup in the archetype.

use std::any::TypeId;
use std::marker::PhantomData;

use super::archetype::{Archetype, ArchetypeMut};
use super::archetypes::Archetypes;
use super::bitset::ComponentSet;
use super::chunk::Chunk;
use super::column_plan::{ABSENT, ColumnPlan, PlacedOffsets, PlannedColumns, Take};
use super::sparse_access::{SparseChunk, SparseChunkMut, SparseLend};
use super::stamps::{Stamp, Stamps, Tick};
use crate::entity::Entity;
use crate::id::ComponentId;

impl ColumnPlan {
    /// Read access, as the plan says, to the placed archetypes of
    /// `archetypes` that hold entities and whose components `keep` accepts.
    ///
    /// # Panics
    /// If the plan is placed in another `Archetypes`, or `sparse` is lent to
    /// write for another plan.
    #[inline]
    pub(crate) fn walk_placed<'a, 'p>(
        &'p self,
        archetypes: &'a Archetypes,
        sparse: SparseLend<'a>,
        keep: impl Fn(&ComponentSet) -> bool + 'p,
    ) -> impl Iterator<Item = ColumnAccess<'a, 'p>> + 'p
    where
        'a: 'p,
    {
        self.check_placed_in(archetypes);
        assert!(
            sparse.serves(self.columns()),
            "sparse sets lent exclusively are used with the plan they were lent for"
        );
        self.placed_with_offsets()
            .map(|(id, offsets)| (archetypes.get(id), offsets))
            .filter(move |(a, _)| !a.is_empty() && keep(a.set()))
            .map(move |(a, offsets)| ColumnAccess::served(a, sparse, self.columns(), None, Some(offsets)))
    }

    /// Read and write access, as the plan says, to the placed archetypes of
    /// `archetypes` that hold entities and whose components `keep` accepts.
    /// Only through an [`ArchetypesLend`](super::lend::ArchetypesLend)
    /// lent for this plan (which holds the archetypes as `&mut` would).
    ///
    /// # Panics
    /// If the plan is placed in another `Archetypes`.
    #[inline(always)]
    pub(super) fn walk_placed_mut<'a, K: Fn(&ComponentSet) -> bool>(
        &'a self,
        archetypes: &'a Archetypes,
        sparse: SparseLend<'a>,
        keep: K,
    ) -> PlacedMut<'a, K> {
        self.check_placed_in(archetypes);
        assert!(
            sparse.serves(self.columns()),
            "sparse sets lent exclusively are used with the plan they were lent for"
        );
        // Stamps are looked for in each archetype only if the plan writes a
        // watched component (the archetype's own flag is a cache line the
        // walk does not otherwise touch).
        let (watched, kept_out) = (archetypes.watched(), sparse.watched());
        let stamps = (!watched.is_empty() || !kept_out.is_empty())
            && self
                .takes
                .iter()
                .any(|t| t.write && (watched.contains(t.id) || kept_out.contains(t.id)));
        PlacedMut {
            tick: if stamps { archetypes.change_tick() } else { Tick::NEVER },
            // Held shared, but lent as `&mut` would be for `'a`: nothing
            // else writes them meanwhile.
            list: &archetypes.list,
            placed: self.placed_with_offsets(),
            takes: &self.takes,
            sparse,
            keep,
        }
    }
}

/// The placed archetypes of a [`ColumnPlan`], with read and write access to
/// their columns: see [`ColumnPlan::walk_placed_mut`].
pub(crate) struct PlacedMut<'a, K> {
    /// Every archetype, lent to the walk (see `lend.rs`).
    list: &'a [Archetype],
    /// The placed archetypes not visited yet, with their column offsets. Their
    /// ids are strictly increasing (`place` checks it), so each archetype is
    /// handed out once and no two `ColumnAccess`es share one.
    placed: PlacedOffsets<'a>,
    takes: &'a [Take],
    sparse: SparseLend<'a>,
    keep: K,
    /// The change tick the writes stamp.
    tick: Tick,
}

impl<'a, K: Fn(&ComponentSet) -> bool> Iterator for PlacedMut<'a, K> {
    type Item = ColumnAccess<'a, 'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<ColumnAccess<'a, 'a>> {
        loop {
            let (id, offsets) = self.placed.next()?;
            let archetype = &self.list[id.index()];
            if !archetype.is_empty() && (self.keep)(archetype.set()) {
                return Some(ColumnAccess::served(
                    archetype,
                    self.sparse,
                    PlannedColumns(self.takes),
                    Some(self.tick),
                    Some(offsets),
                ));
            }
        }
    }
}

/// Hands out the columns of one archetype, as per-chunk slices or single
/// values, in the order of a `ColumnPlan`: each call takes the plan's next
/// column, once.
///
/// Made from `&'a Archetype` (`ColumnAccess::shared`: reads only), from an
/// `ArchetypeMut<'a>` (`ColumnAccess::exclusive`: reads, and writes of the
/// columns the plan marks written), or by the walks of an `ArchetypesLend`
/// (`ColumnAccess::lent` and placed walks: as `exclusive`, one per archetype
/// per walk).
///
/// The plan only prevents aliasing because there is one writable
/// `ColumnAccess` per archetype lent, whose cursor only moves forward: it
/// must never be `Clone` or `Copy`, `exclusive` must keep taking the
/// `ArchetypeMut` by value, and a lend's walks must keep handing each
/// archetype out once. A split lend's read side makes only shared accesses,
/// for a plan that names nothing the write side writes.
pub struct ColumnAccess<'a, 'p> {
    archetype: &'a Archetype,
    /// The context's flag and sparse components (lent exclusively if
    /// `writable`).
    sparse: SparseLend<'a>,
    writable: bool,
    /// The change tick its writes stamp (`NEVER`: not stamped).
    tick: Tick,
    /// The plan's columns not taken yet.
    takes: std::slice::Iter<'p, Take>,
    /// If the plan is placed in the archetype, the offsets of the columns
    /// not taken yet (see [`ColumnPlan::place`]).
    placed: Option<std::slice::Iter<'p, u32>>,
}

impl<'a, 'p> ColumnAccess<'a, 'p> {
    /// Read access to `archetype`'s columns and to the `sparse` sets'
    /// values of its rows, as `plan` says.
    #[inline]
    pub(crate) fn shared(archetype: &'a Archetype, sparse: SparseLend<'a>, plan: PlannedColumns<'p>) -> Self {
        Self::new(archetype, sparse, plan, None, None)
    }

    /// Read and write access to `archetype`'s columns and to the `sparse`
    /// sets' values of its rows, as `plan` says (the values are written only
    /// if `sparse` is lent exclusively). The `&mut` is held for `'a`, so
    /// nothing else reads or writes the archetype meanwhile.
    #[inline]
    pub(crate) fn exclusive(archetype: ArchetypeMut<'a>, sparse: SparseLend<'a>, plan: PlannedColumns<'p>) -> Self {
        Self::new(archetype.archetype, sparse, plan, Some(archetype.tick), None)
    }

    /// Read and write access to `archetype`'s columns as `plan` says, for
    /// a walk of an [`ArchetypesLend`](super::lend::ArchetypesLend) lent for
    /// `plan` (which checked, as the walk started, that `sparse` serves
    /// `plan`), stamping writes with `tick`.
    #[inline(always)]
    pub(super) fn lent(archetype: &'a Archetype, sparse: SparseLend<'a>, plan: PlannedColumns<'p>, tick: Tick) -> Self {
        Self::served(archetype, sparse, plan, Some(tick), None)
    }

    /// Read and write access to one row's worth of `archetype`'s columns and
    /// `sparse`'s values, as `plan` says (the sets are lent to this access
    /// alone).
    #[inline]
    pub(crate) fn exclusive_row(
        archetype: ArchetypeMut<'a>,
        sparse: &'a mut super::SparseSets,
        plan: PlannedColumns<'p>,
    ) -> Self {
        let tick = Some(archetype.tick);
        Self::new(
            archetype.archetype,
            SparseLend::exclusive_for(sparse, plan),
            plan,
            tick,
            None,
        )
    }

    /// `offsets`, if given, must be where `plan` was placed in `archetype`
    /// (by [`ColumnPlan::place`], which checked the column types). Writable
    /// if given the change tick its writes stamp (`Some`).
    ///
    /// # Panics
    /// If `sparse` is lent to write for another plan than `plan`.
    #[inline(always)]
    fn new(
        archetype: &'a Archetype,
        sparse: SparseLend<'a>,
        plan: PlannedColumns<'p>,
        tick: Option<Tick>,
        offsets: Option<&'p [u32]>,
    ) -> Self {
        assert!(
            sparse.serves(plan),
            "sparse sets lent exclusively are used with the plan they were lent for"
        );
        Self::served(archetype, sparse, plan, tick, offsets)
    }

    /// As [`new`](Self::new), for a walk that checked once that `sparse`
    /// serves `plan` (the same for every archetype it visits).
    #[inline(always)]
    fn served(
        archetype: &'a Archetype,
        sparse: SparseLend<'a>,
        plan: PlannedColumns<'p>,
        tick: Option<Tick>,
        offsets: Option<&'p [u32]>,
    ) -> Self {
        debug_assert!(sparse.serves(plan));
        ColumnAccess {
            archetype,
            sparse,
            writable: tick.is_some(),
            tick: tick.unwrap_or(Tick::NEVER),
            takes: plan.0.iter(),
            placed: offsets.map(|offsets| offsets.iter()),
        }
    }

    /// The number of rows in each chunk, in order.
    #[inline]
    pub(crate) fn chunk_lens(&self) -> ChunkLens<'a> {
        ChunkLens(ChunkCursor::new(self.archetype))
    }

    /// The archetype's components.
    #[inline]
    pub(crate) fn set(&self) -> &'a ComponentSet {
        self.archetype.set()
    }

    /// The entity array of each chunk.
    #[inline]
    pub(crate) fn entities(&self) -> EntityChunks<'a> {
        EntityChunks(ChunkCursor::new(self.archetype))
    }

    /// Takes the plan's next column, for writing if `write`, as its byte
    /// offset in a chunk: `None` if the plan is used up, or `write` and the
    /// plan or the access cannot write it, or the plan or the archetype's
    /// column holds another type than `T`; `Some(None)` if the archetype lacks
    /// the component.
    #[inline(always)]
    fn take<T: 'static>(&mut self, write: bool) -> Option<Option<usize>> {
        let take = self.takes.next()?;
        if (write && !(self.writable && take.write)) || take.ty != TypeId::of::<T>() {
            return None;
        }
        let offset = match &mut self.placed {
            // Placing checked that the column holds `take.ty`, that is `T`.
            Some(offsets) => *offsets.next()?,
            None => match self.archetype.column_index(take.id) {
                None => ABSENT,
                Some(col) if self.archetype.column_type(col) == take.ty => {
                    return Some(Some(self.archetype.column_geometry(col).0));
                }
                Some(_) => return None,
            },
        };
        Some((offset != ABSENT).then_some(offset as usize))
    }

    /// Takes the plan's next component, one kept out of archetypes, for
    /// writing if `write`: its id, or `None` if the plan is used up, or
    /// `write` and the plan or the access cannot write it, or the plan
    /// records another type than `T`.
    #[inline(always)]
    fn take_kept_out<T: 'static>(&mut self, write: bool) -> Option<ComponentId> {
        let take = self.takes.next()?;
        if let Some(offsets) = &mut self.placed {
            offsets.next()?;
        }
        if (write && !(self.writable && take.write)) || take.ty != TypeId::of::<T>() {
            return None;
        }
        Some(take.id)
    }

    /// The entity at `row`, if it is a live row.
    #[inline]
    pub(crate) fn entity_at(&self, row: u32) -> Option<Entity> {
        self.archetype.entity_at(row)
    }

    /// The value at `row` of the plan's next column, for reading: `None` if
    /// `row` is not live or the column is refused, `Some(None)` if the
    /// archetype lacks it.
    #[inline]
    pub(crate) fn read_row<T: 'static>(&mut self, row: u32) -> Option<Option<&'a T>> {
        if !self.archetype.contains_row(row) {
            return None;
        }
        Some(self.take::<T>(false)?.map(|offset| {
            // SAFETY: the column at `offset` holds `T`s (checked by `take`) and
            // `row` is live, so the value is initialised and aligned. No `&mut`
            // to it exists for `'a`: the plan names no column both written and
            // read; the archetype was borrowed for `'a` (shared, or lent to
            // this access alone); and a split lend's other side writes only
            // columns this access's plan does not name (`Archetypes::split`).
            unsafe { &*self.archetype.value_at::<T>(offset, row) }
        }))
    }

    /// The value at `row` of the plan's next column, for writing: `None` if
    /// `row` is not live or the column is refused, `Some(None)` if the
    /// archetype lacks it. The row is stamped as changed.
    #[inline]
    pub(crate) fn write_row<T: 'static>(&mut self, row: u32) -> Option<Option<&'a mut T>> {
        let written = self.write_row_deferred::<T>(row)?;
        Some(written.map(|(value, stamp)| {
            stamp.mark();
            value
        }))
    }

    /// As [`write_row`](Self::write_row), the row not stamped yet: the
    /// caller marks the [`Stamp`] once the write stands.
    #[inline]
    pub(crate) fn write_row_deferred<T: 'static>(&mut self, row: u32) -> Option<Option<(&'a mut T, Stamp<'a>)>> {
        if !self.archetype.contains_row(row) {
            return None;
        }
        let tick = self.tick;
        Some(self.take_written::<T>()?.map(|(offset, stamps)| {
            // SAFETY: as in `read_row` for type, initialisation and alignment.
            // Uniqueness: the access is writable only if made from an
            // `ArchetypeMut<'a>` or by a walk of an `ArchetypesLend<'a>` (each
            // archetype handed out once per walk, one walk at a time), and the
            // plan names a written column once, which a split's read side does
            // not name: so this is the only reference to any of its values for
            // `'a`.
            let value = unsafe { &mut *self.archetype.value_at::<T>(offset, row) };
            (value, Stamp::new(stamps, row, tick))
        }))
    }

    /// Takes the plan's next column for writing (see [`take`](Self::take)),
    /// with its change stamps if it has them and the access stamps.
    #[inline(always)]
    fn take_written<T: 'static>(&mut self) -> Option<Option<(usize, Option<&'a Stamps>)>> {
        let archetype: &'a Archetype = self.archetype;
        // Looked up only if some column of the archetype has stamps.
        let stamped =
            (!self.tick.is_never() && archetype.is_stamped()).then(|| self.takes.as_slice().first().map(|t| t.id));
        let offset = self.take::<T>(true)?;
        let stamps = stamped.flatten().and_then(|id| archetype.stamps_of(id));
        Some(offset.map(|offset| (offset, stamps)))
    }

    /// The plan's next component, a flag or sparse one, for reading chunk by
    /// chunk: `None` if refused (see [`take_kept_out`](Self::take_kept_out))
    /// or its set holds another type.
    #[inline]
    pub(crate) fn read_sparse<T: 'static>(&mut self) -> Option<SparseChunks<'a, T>> {
        let id = self.take_kept_out::<T>(false)?;
        Some(SparseChunks {
            entities: self.entities(),
            values: self.sparse.read::<T>(id)?,
        })
    }

    /// The plan's next component, a flag or sparse one, for writing chunk by
    /// chunk: `None` if refused (see [`take_kept_out`](Self::take_kept_out)),
    /// the sets are not lent exclusively, or its set holds another type.
    #[inline]
    pub(crate) fn write_sparse<T: 'static>(&mut self) -> Option<SparseChunksMut<'a, T>> {
        let id = self.take_kept_out::<T>(true)?;
        // The plan names a written component once, and this access takes it
        // once, for this archetype's rows only: the view's entries are asked
        // for by these rows' (distinct) entities alone.
        Some(SparseChunksMut {
            entities: self.entities(),
            values: self.sparse.write::<T>(id, self.tick)?,
        })
    }

    /// The value of the entity at `row` of the plan's next component, a flag
    /// or sparse one, for reading: `None` if `row` is not live or the take is
    /// refused (see [`read_sparse`](Self::read_sparse)), `Some(None)` if the
    /// entity has no value.
    #[inline]
    pub(crate) fn read_sparse_row<T: 'static>(&mut self, row: u32) -> Option<Option<&'a T>> {
        let entity = self.archetype.entity_at(row)?;
        let id = self.take_kept_out::<T>(false)?;
        Some(self.sparse.read::<T>(id)?.get(entity.index()))
    }

    /// The value of the entity at `row` of the plan's next component, a flag
    /// or sparse one, for writing: `None` if `row` is not live or the take is
    /// refused (see [`write_sparse`](Self::write_sparse)), `Some(None)` if
    /// the entity has no value.
    #[inline]
    pub(crate) fn write_sparse_row<T: 'static>(&mut self, row: u32) -> Option<Option<&'a mut T>> {
        let written = self.write_sparse_row_deferred::<T>(row)?;
        Some(written.map(|(value, stamp)| {
            stamp.mark();
            value
        }))
    }

    /// As [`write_sparse_row`](Self::write_sparse_row), the slot not stamped
    /// yet: the caller marks the [`Stamp`] once the write stands.
    #[inline]
    pub(crate) fn write_sparse_row_deferred<T: 'static>(&mut self, row: u32) -> Option<Option<(&'a mut T, Stamp<'a>)>> {
        let entity = self.archetype.entity_at(row)?;
        let id = self.take_kept_out::<T>(true)?;
        // A view for this one row, asked for one slot.
        let values = self.sparse.write::<T>(id, self.tick)?;
        let stamp = values.stamp(entity.index());
        // SAFETY: a fresh view, asked for one slot.
        Some(unsafe { values.take(entity.index()) }.map(|value| (value, stamp)))
    }

    /// The plan's next column, for reading: `None` if refused (see
    /// [`take`](Self::take)), `Some(None)` if the archetype lacks it.
    #[inline]
    pub(crate) fn read<T: 'static>(&mut self) -> Option<Option<ColumnChunks<'a, T>>> {
        Some(self.take::<T>(false)?.map(|offset| ColumnChunks {
            chunks: ChunkCursor::new(self.archetype),
            offset,
            _values: PhantomData,
        }))
    }

    /// The plan's next column, for writing: `None` if refused (see
    /// [`take`](Self::take)), `Some(None)` if the archetype lacks it.
    ///
    /// Every live row of the archetype is stamped as changed now, as the
    /// column is taken, before any is handed out (unless the access does not
    /// stamp).
    #[inline(always)]
    pub(crate) fn write<T: 'static>(&mut self) -> Option<Option<ColumnChunksMut<'a, T>>> {
        self.write_tracked(true)
    }

    /// As [`write`](Self::write); every row of the archetype is stamped
    /// now only if `tracked` (else the caller stamps the rows it wrote with
    /// [`ColumnChunksMut::mark`]).
    #[inline(always)]
    pub(crate) fn write_tracked<T: 'static>(&mut self, tracked: bool) -> Option<Option<ColumnChunksMut<'a, T>>> {
        let tick = self.tick;
        let archetype = self.archetype;
        Some(self.take_written::<T>()?.map(|(offset, stamps)| {
            let stamping = match stamps {
                Some(stamps) if tracked => {
                    stamp_all(stamps, archetype.len(), tick);
                    None
                }
                Some(stamps) => Some(Stamping {
                    stamps,
                    tick,
                    last: 0,
                    next: 0,
                }),
                None => None,
            };
            ColumnChunksMut {
                chunks: ChunkCursor::new(archetype),
                offset,
                stamping,
                _values: PhantomData,
            }
        }))
    }
}

/// Stamps the first `len` rows of a column just taken by a
/// [`ColumnAccess`] (out of line: the path of a watched column, kept off
/// the per-archetype setup of every query).
#[inline(never)]
fn stamp_all(stamps: &Stamps, len: usize, tick: Tick) {
    stamps.mark_range(0, len, tick);
}

/// One live row of one archetype, with one of its columns lent out mutably
/// (by `RowAccess::split`) and the others readable: the one lookup a
/// single-entity write that reads other components needs. Also one row to
/// read some components of (`RowAccess::reading`: a split lend's read side).
pub struct RowAccess<'a> {
    archetype: &'a Archetype,
    row: u32,
    /// The row's chunk's first byte, and the row's place in it.
    base: *mut u8,
    in_chunk: usize,
    /// The column lent out mutably.
    written: usize,
    /// The change tick a write to it stamps.
    tick: Tick,
    /// If given, the only components it reads (a plan's takes).
    only: Option<&'a [Take]>,
}

impl<'a> RowAccess<'a> {
    /// Column `col` of live `row`, mutably, if it holds `T`s, and the rest of
    /// the row for reading.
    #[inline(always)]
    pub(crate) fn split<T: 'static>(archetype: ArchetypeMut<'a>, col: usize, row: u32) -> Option<(&'a mut T, Self)> {
        let ArchetypeMut { archetype, tick } = archetype;
        if !archetype.column_holds::<T>(col) || !archetype.contains_row(row) {
            return None;
        }
        let archetype: &'a Archetype = archetype;
        let (base, in_chunk) = (archetype.chunk_base(row), archetype.row_in_chunk(row));
        let (offset, size) = archetype.column_geometry(col);
        let value = base.wrapping_add(offset + in_chunk * size).cast::<T>();
        let rest = RowAccess {
            archetype,
            row,
            base,
            in_chunk,
            written: col,
            tick,
            only: None,
        };
        // SAFETY: column `col` holds `T`s and `row` is live, so `value` is an
        // initialised, aligned `T` in chunk memory (reached through the chunk's
        // raw pointer, not through `archetype`). It is unique for `'a`: the
        // archetype was borrowed mutably for `'a`, so nothing else reaches it,
        // and `rest` refuses to read column `col`.
        Some((unsafe { &mut *value }, rest))
    }

    /// Live `row` of `archetype` for reading, with no column lent out (for a
    /// write to a value kept out of archetypes that reads other components).
    #[inline(always)]
    pub(crate) fn shared(archetype: &'a Archetype, row: u32) -> Option<Self> {
        Self::reading(archetype, row, None)
    }

    /// Live `row` of `archetype` for reading the components `only` takes
    /// (all, if `None`), with no column lent out.
    #[inline(always)]
    pub(super) fn reading(archetype: &'a Archetype, row: u32, only: Option<&'a [Take]>) -> Option<Self> {
        if !archetype.contains_row(row) {
            return None;
        }
        Some(RowAccess {
            archetype,
            row,
            base: archetype.chunk_base(row),
            in_chunk: archetype.row_in_chunk(row),
            written: usize::MAX,
            tick: Tick::NEVER,
            only,
        })
    }

    /// The change stamp of the column lent out, in the row: the caller
    /// marks it once the write stands (nothing for a row made by `shared`).
    #[inline(always)]
    pub(crate) fn stamp(&self) -> Stamp<'a> {
        let stamps = self.archetype.columns.get(self.written).and_then(|c| c.stamps.as_ref());
        Stamp::new(stamps, self.row, self.tick)
    }

    /// The `T` of component `id` in the row, unless the archetype lacks it, it
    /// does not hold `T`s, it is the column lent out, or the access reads
    /// only other components.
    #[inline(always)]
    pub(crate) fn read<T: 'static>(&self, id: ComponentId) -> Option<&'a T> {
        let col = self.archetype.typed_column::<T>(id)?;
        if col == self.written || self.only.is_some_and(|only| !only.iter().any(|take| take.id == id)) {
            return None;
        }
        let offset = self.archetype.column_geometry(col).0;
        let value = self
            .base
            .wrapping_add(offset + self.in_chunk * std::mem::size_of::<T>())
            .cast::<T>();
        // SAFETY: column `col` holds `T`s (checked) and the row is live (checked
        // by `split` or `reading`), so `value` is an initialised, aligned `T`
        // (a column's values are `size_of::<T>()` apart). Only column
        // `written` of the row is lent mutably (none, if made by `reading`),
        // and `col` is another column (disjoint bytes); a row made by a split
        // lend's read side reads only the components its plan takes
        // (`only`), none of which its write side writes (checked by
        // `Archetypes::split`). So this shared borrow aliases no `&mut` for
        // `'a`.
        Some(unsafe { &*value })
    }

    /// Whether the archetype has component `id`.
    #[inline]
    pub(crate) fn has(&self, id: ComponentId) -> bool {
        self.archetype.column_index(id).is_some()
    }

    /// The row's entity.
    #[inline]
    pub(crate) fn entity(&self) -> Entity {
        self.archetype
            .entity_at(self.row)
            .expect("the row is live: a `RowAccess` is made only for a live row")
    }
}

/// The chunks of an archetype in use, in order, each with its first byte
/// and its live row count: what every per-chunk iterator below walks. Every
/// chunk but the last is full, so the counts follow from the row total.
#[derive(Clone)]
struct ChunkCursor<'a> {
    chunks: std::slice::Iter<'a, Chunk>,
    /// Live rows in the chunks not visited yet.
    left: usize,
    /// Rows per chunk.
    rows: usize,
}

impl<'a> ChunkCursor<'a> {
    #[inline]
    fn new(archetype: &'a Archetype) -> Self {
        ChunkCursor {
            chunks: archetype.chunks().iter(),
            left: archetype.len(),
            rows: archetype.rows_per_chunk(),
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Option<(*mut u8, usize)> {
        let chunk = self.chunks.next()?;
        let len = self.left.min(self.rows);
        self.left -= len;
        Some((chunk.base(), len))
    }
}

/// The number of rows in each chunk of an archetype, in order.
#[derive(Clone)]
pub struct ChunkLens<'a>(ChunkCursor<'a>);

impl Iterator for ChunkLens<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        self.0.next().map(|(_, len)| len)
    }
}

/// The entity array of each chunk of an archetype, in order.
pub struct EntityChunks<'a>(ChunkCursor<'a>);

impl<'a> Iterator for EntityChunks<'a> {
    type Item = &'a [Entity];

    #[inline]
    fn next(&mut self) -> Option<&'a [Entity]> {
        let (base, len) = self.0.next()?;
        // SAFETY: the first `len` entity slots of a chunk in use are
        // initialised, aligned (offset 0 of a chunk aligned at least for
        // `Entity`), and not written while the archetype is borrowed (`'a`).
        Some(unsafe { std::slice::from_raw_parts(base.cast::<Entity>(), len) })
    }
}

/// One flag or sparse component's values, chunk by chunk, shared: each
/// chunk's entities with a view of the component's set.
pub struct SparseChunks<'a, T> {
    entities: EntityChunks<'a>,
    values: super::sparse_access::SparseRead<'a, T>,
}

impl<'a, T> Iterator for SparseChunks<'a, T> {
    type Item = SparseChunk<'a, T>;

    #[inline]
    fn next(&mut self) -> Option<SparseChunk<'a, T>> {
        Some(SparseChunk::new(self.entities.next()?, self.values))
    }
}

/// One flag or sparse component's values, chunk by chunk, exclusive: each
/// chunk's entities with a view of the component's set, each chunk handed
/// out once.
pub struct SparseChunksMut<'a, T> {
    entities: EntityChunks<'a>,
    values: super::sparse_access::SparseWrite<'a, T>,
}

impl<'a, T> Iterator for SparseChunksMut<'a, T> {
    type Item = SparseChunkMut<'a, T>;

    #[inline]
    fn next(&mut self) -> Option<SparseChunkMut<'a, T>> {
        let entities = self.entities.next()?;
        // Handed out here, one chunk at a time: the rows with a value are
        // changes.
        self.values.mark_present(entities);
        // SAFETY: the view was taken for this archetype's rows, each a
        // distinct entity (the only live one of its slot), and each chunk's
        // rows are handed out once.
        Some(SparseChunkMut::new(entities, unsafe { self.values.split() }))
    }
}

/// One column's values, chunk by chunk, shared.
pub struct ColumnChunks<'a, T> {
    chunks: ChunkCursor<'a>,
    /// The column's offset in a chunk.
    offset: usize,
    _values: PhantomData<&'a [T]>,
}

impl<'a, T: 'static> Iterator for ColumnChunks<'a, T> {
    type Item = &'a [T];

    #[inline]
    fn next(&mut self) -> Option<&'a [T]> {
        let (base, len) = self.chunks.next()?;
        // SAFETY: `ColumnAccess::take` checked that the column holds `T`s; the
        // first `len` values of the column in a chunk in use are initialised and
        // contiguous from `base + offset`, which is aligned for `T` (column
        // offsets are aligned; zero-sized columns sit at the chunk's aligned
        // base). The column is not written under the access's plan, the
        // archetype is borrowed for `'a` (shared, or lent to this access), and
        // a split lend's write side writes only columns this access's plan
        // does not name (`Archetypes::split`), so no `&mut` to these values
        // exists meanwhile.
        Some(unsafe { std::slice::from_raw_parts(base.wrapping_add(self.offset).cast::<T>(), len) })
    }
}

/// One column's values, chunk by chunk, exclusive: each chunk's slice is
/// handed out once.
pub struct ColumnChunksMut<'a, T> {
    chunks: ChunkCursor<'a>,
    /// The column's offset in a chunk.
    offset: usize,
    /// How to stamp the rows handed out, if the column has change stamps
    /// (nothing to do per chunk otherwise).
    stamping: Option<Stamping<'a>>,
    _values: PhantomData<&'a mut [T]>,
}

/// The change stamps of a column walked chunk by chunk for writing, whose
/// caller stamps the rows it writes (a walk made with `tracked` false).
struct Stamping<'a> {
    stamps: &'a Stamps,
    tick: Tick,
    /// The first row of the chunk handed out last.
    last: usize,
    /// The first row of the next chunk.
    next: usize,
}

impl Stamping<'_> {
    /// The next chunk (of `rows` per chunk) is handed out.
    #[inline]
    fn hand_out(&mut self, rows: usize) {
        self.last = self.next;
        self.next += rows;
    }
}

impl<'a, T> ColumnChunksMut<'a, T> {
    /// Stamps rows `rows` (positions in it, in bounds) of the chunk handed
    /// out last as changed (for a walk made with `tracked` false).
    #[inline]
    pub(crate) fn mark(&mut self, rows: std::ops::Range<usize>) {
        if let Some(s) = &self.stamping {
            debug_assert!(s.last + rows.end <= s.next, "rows of the chunk handed out last");
            s.stamps.mark_range(s.last + rows.start, rows.len(), s.tick);
        }
    }

    /// The change stamp of row `row` (a position in it) of the chunk
    /// handed out last, to mark once its write stands.
    #[inline]
    pub(crate) fn stamp_at(&self, row: usize) -> Stamp<'a> {
        match &self.stamping {
            Some(s) => Stamp::new(Some(s.stamps), (s.last + row) as u32, s.tick),
            None => Stamp::NONE,
        }
    }
}

impl<'a, T: 'static> Iterator for ColumnChunksMut<'a, T> {
    type Item = &'a mut [T];

    #[inline]
    fn next(&mut self) -> Option<&'a mut [T]> {
        let (base, len) = self.chunks.next()?;
        if let Some(stamping) = &mut self.stamping {
            stamping.hand_out(self.chunks.rows);
        }
        // SAFETY: as in `ColumnChunks::next` for type, initialisation and
        // alignment. Uniqueness: the `ColumnAccess` was made from an
        // `ArchetypeMut<'a>` or by a walk of an `ArchetypesLend<'a>`, which
        // hands each archetype out once (`writable`); its plan names this
        // written column once (so it was taken once), and the cursor only
        // moves forward, so each chunk's slice of this column is handed out
        // once; slices of different chunks (separate allocations) or of
        // different columns (disjoint byte ranges of a chunk) never overlap;
        // a split lend's read side reads only columns this plan does not
        // write (`Archetypes::split`). The chunk memory is not freed or moved
        // while the archetype is borrowed.
        Some(unsafe { std::slice::from_raw_parts_mut(base.wrapping_add(self.offset).cast::<T>(), len) })
    }
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;

    use super::ColumnPlan;
    use crate::id::ComponentId;

    #[test]
    fn a_plan_refuses_a_written_component_named_again() {
        let a = |write| (ComponentId::at(0), TypeId::of::<u8>(), write);
        let b = |write| (ComponentId::at(1), TypeId::of::<u16>(), write);
        let refused = |takes: [_; 3]| ColumnPlan::new(takes).err().map(|id| id.index());
        assert_eq!(refused([a(true), b(false), b(false)]), None);
        assert_eq!(refused([a(false), b(true), a(false)]), None);
        assert_eq!(refused([a(true), b(false), a(false)]), Some(0));
        assert_eq!(refused([b(false), a(true), a(true)]), Some(0));
        assert_eq!(refused([b(false), a(false), b(true)]), Some(1));
    }
}
