//! `Archetype`: every entity with exactly one component set, in dense chunks.

use std::any::TypeId;
use std::ptr::{self, NonNull};

use super::bitset::ComponentSet;
use super::chunk::{Chunk, ChunkLayout};
use super::component_info::{ComponentInfo, ComponentRef, TypedId};
use super::edges::Edges;
use super::location::{ArchetypeId, Location};
use super::stamps::{Clock, Floor, LastMark, Stamp, Stamps, Tick};
use super::type_info::{ErasedRef, Recycler};
use crate::entity::Entity;
use crate::id::ComponentId;

/// Marks "no column" in `Archetype::column_of`.
const NO_COLUMN: u32 = u32::MAX;

/// Where the column of one component id is: its index in `columns` and its
/// array's byte offset in each chunk, so a typed access by id finds the
/// value with one lookup (`col == NO_COLUMN`: the archetype lacks it).
#[derive(Clone, Copy)]
struct ColumnAt {
    offset: usize,
    col: u32,
}

impl ColumnAt {
    const ABSENT: ColumnAt = ColumnAt {
        offset: 0,
        col: NO_COLUMN,
    };
}

/// One column of one archetype: index, byte offset in a chunk, value size,
/// and the type it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ColumnSlot {
    pub(super) col: usize,
    pub(super) offset: usize,
    pub(super) size: usize,
    pub(super) ty: TypeId,
}

impl ColumnSlot {
    pub(super) fn of(archetype: &Archetype, col: usize) -> Self {
        let (offset, size) = archetype.column_geometry(col);
        ColumnSlot {
            col,
            offset,
            size,
            ty: archetype.columns[col].info.ty.type_id(),
        }
    }
}

/// One component array of an archetype.
pub(super) struct Column {
    pub(super) info: &'static ComponentInfo,
    /// `info`'s type, kept here so that a typed access checks it without
    /// following `info`.
    type_id: TypeId,
    /// Byte offset of the array in each chunk (0 for zero-sized types).
    pub(super) offset: usize,
    pub(super) size: usize,
    /// Change stamps, while some consumer watches the component for
    /// changes (see `stamps/`).
    pub(super) stamps: Option<Stamps>,
}

/// The entities that have exactly one set of components, stored in chunks of
/// at most [`CHUNK_BYTES`](super::CHUNK_BYTES): an entity array and one array
/// per component (structure of arrays).
///
/// Invariants (checked by [`Archetype::check`]):
/// - rows `0..len` are initialised in every column and in the entity array,
///   numbered across chunks (`row = chunk << shift | row in chunk`);
/// - every chunk but the last is full, and the last holds at least one row;
///   `spare` chunks hold no live values;
/// - `columns` are sorted by component id and match `set`.
pub(crate) struct Archetype {
    id: ArchetypeId,
    set: ComponentSet,
    pub(super) columns: Box<[Column]>,
    /// By component id (up to the largest this archetype has).
    column_of: Box<[ColumnAt]>,
    layout: ChunkLayout,
    /// `layout.rows - 1`.
    mask: u32,
    chunks: Vec<Chunk>,
    spare: Vec<Chunk>,
    len: usize,
    pub(super) edges: Edges,
    /// Whether any column has change stamps.
    stamped: bool,
    /// The last mark in any of the stamped columns, and the context's floor
    /// (given with the first stamps): a row is not stamped after the floor
    /// in any column when the last mark is not.
    last_mark: LastMark,
    floor: Floor,
    /// Rows per block of change stamps, as a shift: 64 rows, or a chunk's
    /// when chunks hold fewer (so no block spans two chunks).
    stamp_shift: u32,
}

impl Archetype {
    /// An empty archetype for the given components, which must be sorted by id
    /// without duplicates.
    pub(super) fn new(id: ArchetypeId, infos: Vec<&'static ComponentInfo>) -> Self {
        debug_assert!(infos.windows(2).all(|w| w[0].id() < w[1].id()));
        let layouts: Vec<_> = infos.iter().map(|info| info.ty.layout()).collect();
        let layout = ChunkLayout::new(&layouts);
        let set: ComponentSet = infos.iter().map(|info| info.id()).collect();
        let width = infos.last().map_or(0, |info| info.id().index() + 1);
        let mut column_of = vec![ColumnAt::ABSENT; width].into_boxed_slice();
        let columns = infos
            .iter()
            .zip(&layout.offsets)
            .enumerate()
            .map(|(i, (&info, &offset))| {
                column_of[info.id().index()] = ColumnAt { offset, col: i as u32 };
                Column {
                    info,
                    type_id: info.ty.type_id(),
                    offset,
                    size: info.ty.layout().size(),
                    stamps: None,
                }
            })
            .collect();
        Archetype {
            id,
            set,
            columns,
            column_of,
            mask: (layout.rows - 1) as u32,
            stamp_shift: layout.shift.min(6),
            layout,
            chunks: Vec::new(),
            spare: Vec::new(),
            len: 0,
            edges: Edges::default(),
            stamped: false,
            last_mark: LastMark::default(),
            floor: Floor::default(),
        }
    }

    /// Gives column `col` change stamps (every row unchanged, below the
    /// context's `floor`), or drops them.
    pub(super) fn set_watched(&mut self, col: usize, watched: bool, floor: &Floor) {
        let rows = self.stamp_capacity();
        let shift = self.stamp_shift;
        self.floor = floor.clone();
        let column = &mut self.columns[col];
        match (watched, column.stamps.is_some()) {
            (true, false) => column.stamps = Some(Stamps::new(rows, shift, floor.clone(), self.last_mark.clone())),
            (false, true) => column.stamps = None,
            _ => {}
        }
        self.stamped = self.columns.iter().any(|c| c.stamps.is_some());
    }

    /// The rows that change stamps need room for: those of the chunks in
    /// use and spare, at least one block.
    fn stamp_capacity(&self) -> usize {
        ((self.chunks.len() + self.spare.len()) * self.layout.rows).max(1 << self.stamp_shift)
    }

    /// Whether any column has change stamps.
    #[inline(always)]
    pub(crate) fn is_stamped(&self) -> bool {
        self.stamped
    }

    /// The columns with change stamps, by increasing component id.
    pub(crate) fn stamped_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.stamps.is_some())
            .map(|(col, _)| col)
    }

    /// The change stamp of `row` (live) in column `col`: `NEVER` if the
    /// column has none or the row was not changed since it arrived.
    #[inline]
    pub(crate) fn stamp(&mut self, col: usize, row: u32) -> Tick {
        match &mut self.columns[col].stamps {
            Some(stamps) if self.len > row as usize => stamps.get(row),
            _ => Tick::NEVER,
        }
    }

    /// Marks live `row` unchanged in column `col` (if it has stamps).
    #[inline]
    pub(crate) fn clear_stamp(&mut self, col: usize, row: u32) {
        if let Some(stamps) = &mut self.columns[col].stamps
            && self.len > row as usize
        {
            stamps.set(row, Tick::NEVER);
        }
    }

    /// Calls `f` with the entity of each live row whose stamp in column
    /// `col` is larger than `since`, in row order (nothing if the column
    /// has no stamps).
    pub(crate) fn changed_since(&mut self, col: usize, since: Tick, mut f: impl FnMut(Entity)) {
        let len = self.len;
        let (shift, mask) = (self.layout.shift, self.mask as usize);
        let Archetype { columns, chunks, .. } = self;
        let Some(stamps) = &mut columns[col].stamps else {
            return;
        };
        stamps.changed_blocks(len, since, |start, mut changed| {
            let Some(chunk) = chunks.get(start >> shift) else {
                return;
            };
            let first = chunk.base().cast::<Entity>().wrapping_add(start & mask);
            while changed != 0 {
                // SAFETY: a block lies within one chunk (it holds at most a
                // chunk's rows, and starts at a multiple of its size), and
                // each set bit names one of its live rows (`changed_blocks`
                // stops at `len`), whose entity slot is initialised and
                // aligned, and not written while `&mut self` is held.
                f(unsafe { first.add(changed.trailing_zeros() as usize).read() });
                changed &= changed - 1;
            }
        });
    }

    /// The blocks of rows holding live rows stamped after `since` in column
    /// `col`, if it has stamps: each one's first row and a mask of those
    /// rows, in increasing order. A block never crosses a chunk boundary.
    /// Reads through a shared borrow, as the rows' values are read
    /// meanwhile.
    #[inline]
    pub(crate) fn changed_blocks(&self, col: usize, since: Tick) -> Option<impl Iterator<Item = (usize, u64)> + '_> {
        let stamps = self.columns[col].stamps.as_ref()?;
        Some(stamps.changed_blocks_shared(self.len, since))
    }

    /// Rows per chunk, as a power of two: a row's chunk is `row >> shift`.
    #[inline]
    pub(crate) fn chunk_shift(&self) -> u32 {
        self.layout.shift
    }

    /// Lowers every change stamp by `base`.
    pub(super) fn rebase_stamps(&mut self, base: Tick) {
        let mut last = Tick::NEVER;
        for column in self.columns.iter_mut() {
            if let Some(stamps) = &mut column.stamps {
                stamps.rebase(base);
                last = last.newer(stamps.latest());
            }
        }
        self.last_mark.set(last);
    }

    /// Bytes of change stamps held.
    pub(crate) fn stamp_bytes(&self) -> usize {
        self.columns
            .iter()
            .filter_map(|c| c.stamps.as_ref())
            .map(Stamps::bytes)
            .sum()
    }

    /// The change stamps of component `id`'s column, if it has them.
    #[inline(always)]
    pub(super) fn stamps_of(&self, id: ComponentId) -> Option<&Stamps> {
        if !self.stamped {
            return None;
        }
        self.columns[self.column_index(id)?].stamps.as_ref()
    }

    /// A new row `row` is unchanged in every stamped column (room made
    /// first if it starts a chunk).
    #[inline]
    fn fresh_stamps(&mut self, row: u32) {
        if self.row_in_chunk(row) == 0 {
            self.grow_stamps();
        }
        for column in self.columns.iter_mut() {
            if let Some(stamps) = &mut column.stamps
                && !stamps.get(row).is_never()
            {
                stamps.set(row, Tick::NEVER);
            }
        }
    }

    /// Room in every stamped column for the rows of the chunks in use and
    /// spare.
    #[cold]
    #[inline(never)]
    fn grow_stamps(&mut self) {
        let rows = self.stamp_capacity();
        for column in self.columns.iter_mut() {
            if let Some(stamps) = &mut column.stamps {
                stamps.grow(rows);
            }
        }
    }

    /// Whether live `row` was stamped after the floor in any column: a
    /// change some collector has not gathered yet (or has, since the
    /// floor last moved).
    #[inline]
    pub(crate) fn row_stamped(&self, row: u32) -> bool {
        self.stamped
            && self.last_mark.get().is_newer_than(self.floor.get())
            && self
                .columns
                .iter()
                .any(|c| c.stamps.as_ref().is_some_and(|s| s.is_live(row)))
    }

    /// This archetype's id.
    #[inline]
    pub(crate) fn id(&self) -> ArchetypeId {
        self.id
    }

    /// The components every entity here has.
    #[inline]
    pub(crate) fn set(&self) -> &ComponentSet {
        &self.set
    }

    /// The number of entities.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the archetype holds no entity.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Rows per chunk.
    #[inline]
    pub(crate) fn rows_per_chunk(&self) -> usize {
        self.layout.rows
    }

    /// The chunks in use: every one full but the last, which holds at least
    /// one row.
    #[inline]
    pub(super) fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Bytes of one chunk.
    pub(crate) fn chunk_bytes(&self) -> usize {
        self.layout.layout.size()
    }

    /// Chunks in use.
    #[inline]
    pub(crate) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Empty chunks kept for reuse.
    pub(crate) fn spare_chunk_count(&self) -> usize {
        self.spare.len()
    }

    /// Frees the spare chunks.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.spare = Vec::new();
    }

    /// The number of columns (components).
    #[inline]
    pub(crate) fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// The component types, by increasing id.
    pub(crate) fn component_infos(&self) -> impl Iterator<Item = &'static ComponentInfo> + '_ {
        self.columns.iter().map(|c| c.info)
    }

    /// The component of column `col` (which must exist).
    #[inline]
    pub(crate) fn component_id(&self, col: usize) -> ComponentId {
        self.columns[col].info.id()
    }

    /// The column of component `id`, if the archetype has it.
    #[inline]
    pub(crate) fn column_index(&self, id: ComponentId) -> Option<usize> {
        match self.column_of.get(id.index()) {
            Some(at) if at.col != NO_COLUMN => Some(at.col as usize),
            _ => None,
        }
    }

    /// Whether column `col` exists and holds `T`s.
    #[inline(always)]
    pub(super) fn column_holds<T: 'static>(&self, col: usize) -> bool {
        self.columns.get(col).is_some_and(|c| c.type_id == TypeId::of::<T>())
    }

    /// The type of the values column `col` (which must exist) holds.
    #[inline(always)]
    pub(super) fn column_type(&self, col: usize) -> TypeId {
        self.columns[col].type_id
    }

    /// The column of `id`, if it holds `T` values.
    #[inline(always)]
    pub(super) fn typed_column<T: 'static>(&self, id: ComponentId) -> Option<usize> {
        let col = self.column_index(id)?;
        self.column_holds::<T>(col).then_some(col)
    }

    /// Whether `row` is a live row.
    #[inline(always)]
    pub(crate) fn contains_row(&self, row: u32) -> bool {
        (row as usize) < self.len
    }

    /// Whether `loc` names a live row of this archetype.
    #[inline]
    pub(crate) fn contains(&self, loc: Location) -> bool {
        loc.archetype == self.id && self.contains_row(loc.row)
    }

    /// Rows live in chunk `chunk`.
    #[inline(always)]
    pub(super) fn rows_in_chunk(&self, chunk: usize) -> usize {
        (self.len - (chunk << self.layout.shift)).min(self.layout.rows)
    }

    /// The byte offset of column `col`'s array in a chunk, and its element size.
    #[inline]
    pub(super) fn column_geometry(&self, col: usize) -> (usize, usize) {
        let column = &self.columns[col];
        (column.offset, column.size)
    }

    /// The address of the first value of the column at byte offset `offset`
    /// in chunk `chunk` (which must be in use), and the number of live values
    /// there.
    #[inline(always)]
    pub(super) fn column_start(&self, offset: usize, chunk: usize) -> (*mut u8, usize) {
        (
            self.chunks[chunk].base().wrapping_add(offset),
            self.rows_in_chunk(chunk),
        )
    }

    /// The first byte of the chunk holding `row`.
    #[inline(always)]
    pub(super) fn chunk_base(&self, row: u32) -> *mut u8 {
        self.chunks[(row >> self.layout.shift) as usize].base()
    }

    /// `row`'s position within its chunk.
    #[inline(always)]
    pub(super) fn row_in_chunk(&self, row: u32) -> usize {
        (row & self.mask) as usize
    }

    /// Address of the value of column `col` at `row`, in bounds when `row` is
    /// in an allocated chunk. Zero-sized columns have offset 0 and size 0, so
    /// their address is the chunk's base, which is aligned for them too (a
    /// chunk's alignment is the largest of all its columns').
    #[inline(always)]
    pub(super) fn value_ptr(&self, col: usize, row: u32) -> *mut u8 {
        let column = &self.columns[col];
        self.chunk_base(row)
            .wrapping_add(column.offset + self.row_in_chunk(row) * column.size)
    }

    /// Address of the value at `row` of the column at byte offset `offset`,
    /// which must hold `T`s; in bounds when `row` is in an allocated chunk.
    #[inline(always)]
    pub(super) fn value_at<T>(&self, offset: usize, row: u32) -> *mut T {
        self.chunk_base(row)
            .wrapping_add(offset)
            .cast::<T>()
            .wrapping_add(self.row_in_chunk(row))
    }

    #[inline(always)]
    fn entity_ptr(&self, row: u32) -> *mut Entity {
        self.chunk_base(row)
            .cast::<Entity>()
            .wrapping_add(self.row_in_chunk(row))
    }

    /// The entity at `row`, if it is a live row.
    #[inline]
    pub(crate) fn entity_at(&self, row: u32) -> Option<Entity> {
        if !self.contains_row(row) {
            return None;
        }
        // SAFETY: `row` is live, so its entity slot is initialised.
        Some(unsafe { self.entity_ptr(row).read() })
    }

    /// The entities of chunk `chunk` (empty if there is no such chunk).
    #[inline]
    pub(crate) fn chunk_entities(&self, chunk: usize) -> &[Entity] {
        if chunk >= self.chunks.len() {
            return &[];
        }
        let base = self.chunks[chunk].base().cast::<Entity>();
        // SAFETY: the first `rows_in_chunk` entity slots of a chunk in use are
        // initialised, aligned (offset 0 of a chunk aligned at least for `Entity`),
        // and not written while `&self` is borrowed.
        unsafe { std::slice::from_raw_parts(base, self.rows_in_chunk(chunk)) }
    }

    /// Every entity, chunk by chunk, row by row.
    pub(crate) fn entities(&self) -> impl Iterator<Item = Entity> + '_ {
        (0..self.chunks.len()).flat_map(|c| self.chunk_entities(c).iter().copied())
    }

    /// The values of component `id` in chunk `chunk`, if they are `T`s (row
    /// by row, as [`chunk_entities`](Archetype::chunk_entities) lists their
    /// entities).
    #[cfg(any(test, feature = "serde"))]
    #[inline]
    pub(crate) fn column_slice<T: 'static>(&self, id: ComponentId, chunk: usize) -> Option<&[T]> {
        let col = self.typed_column::<T>(id)?;
        if chunk >= self.chunks.len() {
            return None;
        }
        let (start, len) = self.column_start(self.columns[col].offset, chunk);
        // SAFETY: column `col` holds `T`s (checked); the first `rows_in_chunk` of
        // them in this chunk are initialised and contiguous from `start`, which is
        // aligned for `T` (column offsets are aligned, and zero-sized columns sit
        // at the chunk's base, aligned for them too); `&self` keeps them from
        // being written.
        Some(unsafe { std::slice::from_raw_parts(start.cast::<T>(), len) })
    }

    /// The address of the `T` of column `col` at `row`, if column `col`
    /// exists and holds `T`s and `row` is live: the one path every typed
    /// access of one value takes.
    #[inline(always)]
    fn typed_slot<T: 'static>(&self, col: usize, row: u32) -> Option<*mut T> {
        // `NO_COLUMN` is out of range too.
        let column = self.columns.get(col)?;
        if column.type_id != TypeId::of::<T>() || !self.contains_row(row) {
            return None;
        }
        let chunk = (row >> self.layout.shift) as usize;
        debug_assert!(chunk < self.chunks.len());
        // SAFETY: `row < len`, and an archetype keeps exactly `ceil(len / rows)`
        // chunks (see the type's invariants), so `chunk` is in range.
        let base = unsafe { self.chunks.get_unchecked(chunk) }.base();
        let at = base.wrapping_add(column.offset + self.row_in_chunk(row) * column.size);
        Some(at.cast::<T>())
    }

    /// The `T` of component `id` at `row`.
    #[inline(always)]
    pub(crate) fn get<T: 'static>(&self, id: TypedId<T>, row: u32) -> Option<&T> {
        let (_, at) = self.typed_slot_of(id, row)?;
        // SAFETY: `row` is live and `at` is its value in `id`'s column, which
        // holds `T`s (`typed_slot_of`), so the pointer is an initialised,
        // aligned `T`, borrowed for as long as `&self`.
        Some(unsafe { &*at })
    }

    /// The column of `id` and the address of its `T` at `row`, if the
    /// archetype has the component and `row` is live: one lookup by id, no
    /// type compare (a [`TypedId`] names a `T` column, whose array starts at
    /// the offset kept beside its index, aligned for `T`).
    #[inline(always)]
    fn typed_slot_of<T: 'static>(&self, id: TypedId<T>, row: u32) -> Option<(usize, *mut T)> {
        let at = *self.column_of.get(id.id().index())?;
        if at.col == NO_COLUMN || !self.contains_row(row) {
            return None;
        }
        debug_assert!(
            self.column_holds::<T>(at.col as usize),
            "a TypedId names a column of its type"
        );
        let chunk = (row >> self.layout.shift) as usize;
        debug_assert!(chunk < self.chunks.len());
        // SAFETY: `row < len`, and an archetype keeps exactly `ceil(len / rows)`
        // chunks (see the type's invariants), so `chunk` is in range.
        let base = unsafe { self.chunks.get_unchecked(chunk) }.base();
        let value = base
            .wrapping_add(at.offset)
            .cast::<T>()
            .wrapping_add(self.row_in_chunk(row));
        Some((at.col as usize, value))
    }

    /// The `T` of column `col` at `row`, mutably (a column index from
    /// [`column_index`](Archetype::column_index), for an access without a
    /// second lookup); not stamped.
    #[cfg(test)]
    #[inline(always)]
    pub(super) fn get_mut_at<T: 'static>(&mut self, col: usize, row: u32) -> Option<&mut T> {
        let at = self.typed_slot::<T>(col, row)?;
        // SAFETY: as in `get`; `&mut self` makes the borrow unique.
        Some(unsafe { &mut *at })
    }

    /// A type-erased view of component `id` at `row`.
    #[inline]
    pub(crate) fn component_ref(&self, id: ComponentId, row: u32) -> Option<ComponentRef<'_>> {
        let col = self.column_index(id)?;
        self.column_ref(col, row)
    }

    /// Views of every component at `row`, by increasing id.
    pub(crate) fn component_refs(&self, row: u32) -> impl Iterator<Item = ComponentRef<'_>> {
        (0..self.columns.len()).filter_map(move |col| self.column_ref(col, row))
    }

    #[inline]
    fn column_ref(&self, col: usize, row: u32) -> Option<ComponentRef<'_>> {
        if !self.contains_row(row) {
            return None;
        }
        let ptr = NonNull::new(self.value_ptr(col, row))?;
        let info = self.columns[col].info;
        // SAFETY: `row` is live, so the value of column `col` there is initialised
        // and of the type its info describes; `&self` keeps it alive and unwritten.
        let value = unsafe { ErasedRef::from_raw(&info.ty, ptr) };
        Some(ComponentRef::from_erased(info, value))
    }

    /// Appends a row for `entity` and returns its number. The row counts as
    /// live, but its column values are not initialised.
    ///
    /// # Safety
    /// Before any other use of this archetype, the caller must write every
    /// column of the row, or remove the row with `fill_hole` (dropping what it
    /// wrote); a panic in between must be guarded so that this still happens.
    #[inline(always)]
    pub(super) unsafe fn alloc_row(&mut self, entity: Entity) -> u32 {
        let row = self.next_row();
        if self.row_in_chunk(row) == 0 {
            let chunk = self.spare.pop().unwrap_or_else(|| Chunk::new(&self.layout));
            self.chunks.push(chunk);
        }
        // SAFETY: the row's chunk exists (pushed above when the row starts one) and
        // `row & mask < rows_per_chunk`, so the entity slot is in bounds and
        // aligned; writing initialises it.
        unsafe { self.entity_ptr(row).write(entity) };
        self.len += 1;
        if self.stamped {
            self.fresh_stamps(row);
        }
        row
    }

    /// The row a new row gets (the archetype's length).
    #[inline(always)]
    pub(super) fn next_row(&self) -> u32 {
        u32::try_from(self.len)
            .ok()
            .filter(|&row| row != u32::MAX)
            .expect("fewer than 2^32 - 1 rows in one archetype: each row holds an entity slot, and slots are u32s")
    }

    /// Adds a live row for `entity` whose values `write` writes, given the
    /// base of the row's chunk and the row's position in it; returns the row.
    ///
    /// # Safety
    /// `write` must initialise the row's value in every column (column `c`'s
    /// at `base + offset + position * size`, as [`value_ptr`] computes it)
    /// and must not unwind: the row's chunk may be new, and the row is only
    /// counted after `write` returns.
    ///
    /// [`value_ptr`]: Archetype::value_ptr
    #[inline(always)]
    pub(super) unsafe fn push_row_with(&mut self, entity: Entity, write: impl FnOnce(*mut u8, usize)) -> u32 {
        let row = self.next_row();
        if self.row_in_chunk(row) == 0 {
            let chunk = self.spare.pop().unwrap_or_else(|| Chunk::new(&self.layout));
            self.chunks.push(chunk);
        }
        let (base, position) = (self.chunk_base(row), self.row_in_chunk(row));
        // The chunk's entity array comes first (as `entity_ptr` finds it).
        let entity_slot = base.cast::<Entity>().wrapping_add(position);
        write(base, position);
        // SAFETY: the row's chunk exists (pushed above when the row starts one)
        // and `position < rows_per_chunk`, so the entity slot is in bounds and
        // aligned; writing initialises it. `write` initialised every column's
        // value (the contract), so the row is complete when it is counted.
        unsafe { entity_slot.write(entity) };
        self.len += 1;
        if self.stamped {
            self.fresh_stamps(row);
        }
        row
    }

    /// Drops the value of column `col` at `row` in place.
    ///
    /// # Safety
    /// `row` must be a row whose value in column `col` is initialised, and that
    /// value must not be read or dropped again.
    #[inline]
    pub(super) unsafe fn drop_value(&mut self, col: usize, row: u32) {
        let ptr = self.value_ptr(col, row);
        // SAFETY: per the contract the value is initialised and dead after this.
        unsafe { self.columns[col].info.ty.drop_values(ptr, 1) }
    }

    /// Moves the value of column `col` at `row` out and hands it to `to`, if
    /// the column's component is pooled; else drops it in place.
    ///
    /// # Safety
    /// As [`drop_value`](Archetype::drop_value).
    #[inline]
    pub(super) unsafe fn release_value(&mut self, col: usize, row: u32, to: &mut Option<Recycler<'_>>) {
        let info = self.columns[col].info;
        match to {
            Some(to) if info.is_pooled() => {
                let ptr = self.value_ptr(col, row);
                // SAFETY: per the contract the value is initialised and dead after this.
                unsafe { info.ty.hand_over(ptr, info.id(), &mut **to) }
            }
            // SAFETY: forwarded from this function's contract.
            _ => unsafe { self.drop_value(col, row) },
        }
    }

    /// The entity that `fill_hole(row)` would move into `row`: the last row's,
    /// if `row` is not the last row.
    #[inline]
    pub(crate) fn displaced_by_removal(&self, row: u32) -> Option<Entity> {
        let last = self.len.checked_sub(1)? as u32;
        if last == row { None } else { self.entity_at(last) }
    }

    /// Removes `row` by moving the last row into it (swap-remove), keeping
    /// chunks dense; returns the entity that moved into `row`. A chunk left
    /// empty goes to the spare list.
    ///
    /// # Safety
    /// `row` must be a live row whose column values have all been moved out or
    /// dropped already (they are overwritten without a drop), and every other
    /// live row must be fully initialised (the last one is moved into `row`,
    /// unless `row` is itself the last row).
    #[inline(always)]
    pub(super) unsafe fn fill_hole(&mut self, row: u32) -> Option<Entity> {
        debug_assert!(self.contains_row(row));
        let last = (self.len - 1) as u32;
        let displaced = if last != row {
            let (hole, tail) = (self.chunk_base(row), self.chunk_base(last));
            let (hole_row, tail_row) = (self.row_in_chunk(row), self.row_in_chunk(last));
            for column in &self.columns {
                // SAFETY: `last` and `row` are distinct live rows of the same column,
                // so the two `size`-byte ranges are in bounds and disjoint. The value
                // at `last` is moved (its row leaves the live range below); the slot
                // at `row` is free per the contract.
                unsafe {
                    copy_value(
                        tail.wrapping_add(column.offset + tail_row * column.size),
                        hole.wrapping_add(column.offset + hole_row * column.size),
                        column.size,
                    )
                };
            }
            // SAFETY: both entity slots are live rows; `Entity` is `Copy`.
            let moved = unsafe { self.entity_ptr(last).read() };
            // SAFETY: as above, the slot at `row` is in bounds and aligned.
            unsafe { self.entity_ptr(row).write(moved) };
            if self.stamped {
                for column in self.columns.iter_mut() {
                    if let Some(stamps) = &mut column.stamps {
                        let stamp = stamps.get(last);
                        stamps.set(row, stamp);
                    }
                }
            }
            Some(moved)
        } else {
            None
        };
        self.len -= 1;
        if self.row_in_chunk(last) == 0 {
            let empty = self
                .chunks
                .pop()
                .expect("the last row was in a chunk: a row is allocated in the last chunk");
            self.spare.push(empty);
        }
        displaced
    }

    /// Checks the structural invariants listed on the type.
    pub(crate) fn check(&self) -> Result<(), String> {
        let name = format!("archetype {:?} {:?}", self.id, self.set);
        let expected_chunks = self.len.div_ceil(self.layout.rows);
        if self.chunks.len() != expected_chunks {
            return Err(format!(
                "{name}: {} rows in {} chunks of {} rows (expected {expected_chunks} chunks)",
                self.len,
                self.chunks.len(),
                self.layout.rows
            ));
        }
        let ids: ComponentSet = self.columns.iter().map(|c| c.info.id()).collect();
        if ids != self.set || !self.columns.windows(2).all(|w| w[0].info.id() < w[1].info.id()) {
            return Err(format!("{name}: columns do not match the component set"));
        }
        for (i, column) in self.columns.iter().enumerate() {
            if self.column_index(column.info.id()) != Some(i) {
                return Err(format!("{name}: column lookup of {} is wrong", column.info.name()));
            }
            let align = column.info.ty.layout().align();
            for chunk in &self.chunks {
                if !(chunk.base() as usize + column.offset).is_multiple_of(align) {
                    return Err(format!("{name}: column {} is misaligned", column.info.name()));
                }
            }
        }
        Ok(())
    }
}

impl Archetype {
    /// Checks the change stamps of the columns against the module docs of
    /// `stamps/` (invariants 2 to 7): a column has stamps exactly when its
    /// component is `watched`, room for every row, and each passes
    /// [`Stamps::check`] sharing `clock`'s floor and this archetype's last
    /// mark, which is not after the current tick.
    pub(super) fn check_stamps(&self, clock: &Clock, watched: &ComponentSet) -> Result<(), String> {
        let name = format!("archetype {:?} {:?}", self.id, self.set);
        if self.stamped != self.columns.iter().any(|c| c.stamps.is_some()) {
            return Err(format!("{name}: the stamped flag does not match the columns"));
        }
        if !self.stamped {
            return Ok(());
        }
        if !self.floor.is(clock.floor()) {
            return Err(format!("{name}: does not share the context's stamp floor"));
        }
        if self.last_mark.get().is_newer_than(clock.now()) {
            return Err(format!(
                "{name}: last marked at {}, after the current tick {}",
                self.last_mark.get(),
                clock.now()
            ));
        }
        for column in self.columns.iter() {
            let column_name = column.info.name();
            if column.stamps.is_some() != watched.contains(column.info.id()) {
                return Err(format!(
                    "{name}: column {column_name} has change stamps: {}, is watched: {}",
                    column.stamps.is_some(),
                    watched.contains(column.info.id())
                ));
            }
            let Some(stamps) = &column.stamps else {
                continue;
            };
            if stamps.capacity() < self.len {
                return Err(format!(
                    "{name}: column {column_name} has change stamps for {} of {} rows",
                    stamps.capacity(),
                    self.len
                ));
            }
            stamps
                .check(clock.now(), clock.floor(), Some(&self.last_mark))
                .map_err(|broken| format!("{name}: column {column_name}: {broken}"))?;
        }
        Ok(())
    }
}

/// Copies one value of `size` bytes. Common small sizes compile to plain moves
/// instead of a `memcpy` call (a structural change copies every column).
///
/// # Safety
/// `src` must be readable and `dst` writable for `size` bytes, and the two
/// ranges must not overlap.
#[inline(always)]
pub(super) unsafe fn copy_value(src: *const u8, dst: *mut u8, size: usize) {
    // SAFETY: per the contract; every arm copies exactly `size` bytes.
    unsafe {
        match size {
            0 => {}
            1 => ptr::copy_nonoverlapping(src, dst, 1),
            2 => ptr::copy_nonoverlapping(src, dst, 2),
            4 => ptr::copy_nonoverlapping(src, dst, 4),
            8 => ptr::copy_nonoverlapping(src, dst, 8),
            12 => ptr::copy_nonoverlapping(src, dst, 12),
            16 => ptr::copy_nonoverlapping(src, dst, 16),
            24 => ptr::copy_nonoverlapping(src, dst, 24),
            32 => ptr::copy_nonoverlapping(src, dst, 32),
            64 => ptr::copy_nonoverlapping(src, dst, 64),
            _ => ptr::copy_nonoverlapping(src, dst, size),
        }
    }
}

/// Exclusive access to one archetype, as storage lends it out: reads
/// through `Deref`, writes through its own methods (and `ColumnAccess`,
/// `RowAccess`). It never hands out `&mut Archetype`, so code outside
/// storage cannot move or swap an archetype out from under the edge and
/// bundle plans that record its layout by its place in the list.
///
/// Every value it hands out mutably is a change: the row is stamped with
/// `tick` in the column's change stamps (if the column has them), unless
/// the borrow was made [`untracked`](ArchetypeMut::untracked).
pub(crate) struct ArchetypeMut<'a> {
    pub(super) archetype: &'a mut Archetype,
    /// The change tick its writes stamp; `NEVER`: writes are not stamped.
    pub(super) tick: Tick,
}

impl std::ops::Deref for ArchetypeMut<'_> {
    type Target = Archetype;

    #[inline(always)]
    fn deref(&self) -> &Archetype {
        self.archetype
    }
}

impl<'a> ArchetypeMut<'a> {
    /// The same borrow, its writes not stamped (not seen as changes).
    #[inline(always)]
    pub(crate) fn untracked(self) -> Self {
        ArchetypeMut {
            tick: Tick::NEVER,
            ..self
        }
    }

    /// The `T` of component `id` at `row`, mutably, for all of `'a`; the row
    /// is stamped as changed.
    #[inline(always)]
    pub(crate) fn into_mut<T: 'static>(self, id: TypedId<T>, row: u32) -> Option<&'a mut T> {
        let archetype: &'a Archetype = self.archetype;
        let (col, at) = archetype.typed_slot_of(id, row)?;
        Stamp::new(archetype.columns[col].stamps.as_ref(), row, self.tick).mark();
        // SAFETY: `at` is a live row's value of a column of `T`s (found by
        // `typed_slot_of`), as in `into_mut_deferred`: borrowed uniquely.
        Some(unsafe { &mut *at })
    }

    /// The `T` of column `col` at `row` (a column index from
    /// [`column_index`](Archetype::column_index)), mutably, for all of `'a`,
    /// if the column holds `T`s; the row not stamped
    /// yet: the caller marks the [`Stamp`] once the write stands.
    #[inline(always)]
    pub(crate) fn into_mut_deferred<T: 'static>(self, col: usize, row: u32) -> Option<(&'a mut T, Stamp<'a>)> {
        let archetype: &'a Archetype = self.archetype;
        let at = archetype.typed_slot::<T>(col, row)?;
        let stamp = Stamp::new(archetype.columns[col].stamps.as_ref(), row, self.tick);
        // SAFETY: `at` is a live row's value of a column of `T`s (found by
        // `typed_slot`), initialised and aligned, in chunk memory reached
        // through the chunk's raw pointer. The archetype was borrowed
        // mutably for `'a` and only the stamps (separate allocations) are
        // borrowed shared beside it, so the value's borrow is unique.
        Some((unsafe { &mut *at }, stamp))
    }
}

impl Drop for Archetype {
    /// Drops every live value, column by column and chunk by chunk. A
    /// panicking `Drop` does not stop the rest: every other value is still
    /// dropped, then the first panic goes on. (A second value of the same
    /// column and chunk panicking while the first unwinds aborts, as a
    /// panic during unwinding does anywhere in Rust.)
    fn drop(&mut self) {
        let mut first_panic = None;
        for col in 0..self.columns.len() {
            if !self.columns[col].info.ty.needs_drop() {
                continue;
            }
            for chunk in 0..self.chunks.len() {
                let (start, rows) = self.column_start(self.columns[col].offset, chunk);
                let info = &self.columns[col].info;
                let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    // SAFETY: the first `rows` values of this column in this
                    // chunk are live and contiguous; the archetype is being
                    // dropped, so they are never used again, and each (column,
                    // chunk) is visited once. If one `Drop` panics, the rest of
                    // these values are still dropped (as a slice's are), and
                    // the panic is caught here: never a double drop, nothing
                    // left behind.
                    unsafe { info.ty.drop_values(start, rows) }
                }));
                if let Err(panic) = dropped {
                    first_panic.get_or_insert(panic);
                }
            }
        }
        if let Some(panic) = first_panic {
            std::panic::resume_unwind(panic);
        }
    }
}
