//! `Archetype`: every entity with exactly one component set, in dense chunks.

use std::any::TypeId;
use std::ptr::{self, NonNull};

use super::bitset::ComponentSet;
use super::chunk::{Chunk, ChunkLayout};
use super::component_ref::ComponentRef;
use super::edges::Edges;
use crate::component::{ComponentId, ComponentInfo};
use crate::entity::Entity;

/// The index of an archetype in its context, in creation order (archetype 0
/// is the empty one, where `create_entity` puts new entities).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ArchetypeId(pub(super) u32);

impl ArchetypeId {
    /// The position of this archetype in creation order.
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where an entity's row is: archetype, chunk within it, row within the chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) archetype: ArchetypeId,
    pub(crate) chunk: u32,
    pub(crate) row: u32,
}

/// Marks "no column" in `Archetype::column_of`.
const NO_COLUMN: u32 = u32::MAX;

/// One component array of an archetype.
pub(super) struct Column {
    pub(super) info: &'static ComponentInfo,
    /// `info`'s type, kept here so that a typed access checks it without
    /// following `info`.
    type_id: TypeId,
    /// Byte offset of the array in each chunk (0 for zero-sized types).
    offset: usize,
    size: usize,
}

/// The entities that have exactly one set of components, stored in chunks of
/// [`CHUNK_BYTES`](super::CHUNK_BYTES): an entity array and one array per
/// component (structure of arrays).
///
/// Invariants (checked by [`Archetype::check`]):
/// - rows `0..len` are initialised in every column and in the entity array,
///   numbered across chunks (`flat = chunk * rows_per_chunk + row`);
/// - every chunk but the last is full, and the last holds at least one row;
///   `spare` chunks hold no live values;
/// - `columns` are sorted by component id and match `set`.
pub(crate) struct Archetype {
    id: ArchetypeId,
    set: ComponentSet,
    pub(super) columns: Box<[Column]>,
    column_of: Box<[u32]>,
    layout: ChunkLayout,
    chunks: Vec<Chunk>,
    spare: Vec<Chunk>,
    len: usize,
    pub(super) edges: Edges,
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
        let mut column_of = vec![NO_COLUMN; width].into_boxed_slice();
        let columns = infos
            .iter()
            .zip(&layout.offsets)
            .enumerate()
            .map(|(i, (&info, &offset))| {
                column_of[info.id().index()] = i as u32;
                Column {
                    info,
                    type_id: info.ty.type_id(),
                    offset,
                    size: info.ty.layout().size(),
                }
            })
            .collect();
        Archetype {
            id,
            set,
            columns,
            column_of,
            layout,
            chunks: Vec::new(),
            spare: Vec::new(),
            len: 0,
            edges: Edges::default(),
        }
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

    /// Rows per chunk.
    #[cfg(test)]
    pub(crate) fn rows_per_chunk(&self) -> usize {
        self.layout.rows
    }

    /// Bytes of one chunk.
    pub(crate) fn chunk_bytes(&self) -> usize {
        self.layout.layout.size()
    }

    /// Chunks in use.
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

    /// The component types, by increasing id.
    pub(crate) fn component_infos(&self) -> impl Iterator<Item = &'static ComponentInfo> + '_ {
        self.columns.iter().map(|c| c.info)
    }

    #[inline]
    pub(super) fn column_index(&self, id: ComponentId) -> Option<usize> {
        match self.column_of.get(id.index()) {
            Some(&c) if c != NO_COLUMN => Some(c as usize),
            _ => None,
        }
    }

    /// The column of `id`, if it holds `T` values.
    #[inline]
    pub(super) fn typed_column<T: 'static>(&self, id: ComponentId) -> Option<usize> {
        let c = self.column_index(id)?;
        (self.columns[c].type_id == TypeId::of::<T>()).then_some(c)
    }

    /// The location of the first row of chunk `chunk`.
    #[inline]
    fn chunk_start(&self, chunk: usize) -> Location {
        Location {
            archetype: self.id,
            chunk: chunk as u32,
            row: 0,
        }
    }

    /// The location of the last live row. The last chunk always holds at least
    /// one row, so this needs no division.
    #[inline(always)]
    fn last_location(&self) -> Option<Location> {
        let chunk = self.chunks.len().checked_sub(1)?;
        let rows_in_last = self.len - chunk * self.layout.rows;
        Some(Location {
            archetype: self.id,
            chunk: chunk as u32,
            row: (rows_in_last - 1) as u32,
        })
    }

    /// The location of the next row to be appended.
    #[inline(always)]
    fn next_location(&self) -> Location {
        match self.last_location() {
            Some(last) if (last.row as usize) + 1 < self.layout.rows => Location {
                row: last.row + 1,
                ..last
            },
            Some(last) => Location {
                chunk: last.chunk + 1,
                row: 0,
                ..last
            },
            None => self.chunk_start(0),
        }
    }

    /// Whether `loc` names a live row of this archetype.
    #[inline]
    pub(crate) fn contains(&self, loc: Location) -> bool {
        loc.archetype == self.id
            && (loc.row as usize) < self.layout.rows
            && (loc.chunk as usize) * self.layout.rows + (loc.row as usize) < self.len
    }

    /// Rows live in chunk `chunk`.
    #[inline]
    pub(super) fn rows_in_chunk(&self, chunk: usize) -> usize {
        (self.len - chunk * self.layout.rows).min(self.layout.rows)
    }

    /// The byte offset of column `col`'s array in a chunk, and its element size.
    #[inline]
    pub(super) fn column_geometry(&self, col: usize) -> (usize, usize) {
        let column = &self.columns[col];
        (column.offset, column.size)
    }

    /// The address of column `col`'s first value in chunk `chunk` (which must
    /// be in use), and the number of live values there.
    #[inline]
    pub(super) fn column_start(&self, col: usize, chunk: usize) -> (*mut u8, usize) {
        (self.value_ptr(col, self.chunk_start(chunk)), self.rows_in_chunk(chunk))
    }

    /// The first byte of chunk `chunk`.
    #[inline]
    pub(super) fn chunk_base(&self, chunk: usize) -> *mut u8 {
        self.chunks[chunk].base()
    }

    /// Address of the value of column `col` at `loc`, in bounds when `loc` is a
    /// row of an allocated chunk. Zero-sized columns have offset 0 and size 0, so
    /// their address is the chunk's base, which is aligned for them too (a
    /// chunk's alignment is the largest of all its columns').
    #[inline(always)]
    fn value_ptr(&self, col: usize, loc: Location) -> *mut u8 {
        let column = &self.columns[col];
        self.chunks[loc.chunk as usize]
            .base()
            .wrapping_add(column.offset + loc.row as usize * column.size)
    }

    #[inline(always)]
    fn entity_ptr(&self, loc: Location) -> *mut Entity {
        self.chunks[loc.chunk as usize]
            .base()
            .cast::<Entity>()
            .wrapping_add(loc.row as usize)
    }

    /// The entity at `loc`, if `loc` is a live row.
    #[inline]
    pub(crate) fn entity_at(&self, loc: Location) -> Option<Entity> {
        if !self.contains(loc) {
            return None;
        }
        // SAFETY: `loc` is a live row, so its entity slot is initialised.
        Some(unsafe { self.entity_ptr(loc).read() })
    }

    /// The entities of chunk `chunk` (empty if there is no such chunk).
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

    /// The values of component `id` in chunk `chunk`, if they are `T`s.
    #[cfg(test)]
    pub(crate) fn column_slice<T: 'static>(&self, id: ComponentId, chunk: usize) -> Option<&[T]> {
        let col = self.typed_column::<T>(id)?;
        if chunk >= self.chunks.len() {
            return None;
        }
        let start = self.value_ptr(col, self.chunk_start(chunk));
        // SAFETY: column `col` holds `T`s (checked); the first `rows_in_chunk` of
        // them in this chunk are initialised and contiguous from `start`, which is
        // aligned for `T` (column offsets are aligned, and zero-sized columns sit
        // at the chunk's base, aligned for them too); `&self` keeps them from
        // being written.
        Some(unsafe { std::slice::from_raw_parts(start.cast::<T>(), self.rows_in_chunk(chunk)) })
    }

    /// The `T` of component `id` at `loc`.
    #[inline]
    pub(crate) fn get<T: 'static>(&self, id: ComponentId, loc: Location) -> Option<&T> {
        let col = self.typed_column::<T>(id)?;
        if !self.contains(loc) {
            return None;
        }
        // SAFETY: `loc` is live and column `col` holds `T`s, so the pointer is an
        // initialised, aligned `T`, borrowed for as long as `&self`.
        Some(unsafe { &*self.value_ptr(col, loc).cast::<T>() })
    }

    /// The `T` of component `id` at `loc`, mutably.
    #[inline]
    pub(crate) fn get_mut<T: 'static>(&mut self, id: ComponentId, loc: Location) -> Option<&mut T> {
        let col = self.typed_column::<T>(id)?;
        if !self.contains(loc) {
            return None;
        }
        // SAFETY: as in `get`; `&mut self` makes the borrow unique.
        Some(unsafe { &mut *self.value_ptr(col, loc).cast::<T>() })
    }

    /// A type-erased view of component `id` at `loc`.
    #[inline]
    pub(crate) fn component_ref(&self, id: ComponentId, loc: Location) -> Option<ComponentRef<'_>> {
        let col = self.column_index(id)?;
        self.column_ref(col, loc)
    }

    /// Views of every component at `loc`, by increasing id.
    pub(crate) fn component_refs(&self, loc: Location) -> impl Iterator<Item = ComponentRef<'_>> {
        (0..self.columns.len()).filter_map(move |col| self.column_ref(col, loc))
    }

    #[inline]
    fn column_ref(&self, col: usize, loc: Location) -> Option<ComponentRef<'_>> {
        if !self.contains(loc) {
            return None;
        }
        let ptr = NonNull::new(self.value_ptr(col, loc))?;
        // SAFETY: `loc` is live, so the value of column `col` there is initialised
        // and of the type its info describes; `&self` keeps it alive and unwritten.
        Some(unsafe { ComponentRef::from_raw(self.columns[col].info, ptr) })
    }

    /// Appends a row for `entity` and returns it. The row counts as live, but
    /// its column values are not initialised.
    ///
    /// # Safety
    /// Before any other use of this archetype, the caller must write every
    /// column of the row, or remove the row with `fill_hole` (dropping what it
    /// wrote); a panic in between must be guarded so that this still happens.
    #[inline(always)]
    pub(super) unsafe fn alloc_row(&mut self, entity: Entity) -> Location {
        let loc = self.next_location();
        if loc.chunk as usize == self.chunks.len() {
            let chunk = self.spare.pop().unwrap_or_else(|| Chunk::new(&self.layout));
            self.chunks.push(chunk);
        }
        // SAFETY: `loc.row < rows_per_chunk` and chunk `loc.chunk` exists, so the
        // entity slot is in bounds and aligned; writing initialises it.
        unsafe { self.entity_ptr(loc).write(entity) };
        self.len += 1;
        loc
    }

    /// Drops the value of column `col` at `loc` in place.
    ///
    /// # Safety
    /// `loc` must be a row whose value in column `col` is initialised, and that
    /// value must not be read or dropped again.
    #[inline]
    pub(super) unsafe fn drop_value(&mut self, col: usize, loc: Location) {
        let ptr = self.value_ptr(col, loc);
        // SAFETY: per the contract the value is initialised and dead after this.
        unsafe { self.columns[col].info.ty.drop_values(ptr, 1) }
    }

    /// The entity that `fill_hole(loc)` would move into `loc`: the last row's, if
    /// `loc` is not the last row.
    #[inline]
    pub(crate) fn displaced_by_removal(&self, loc: Location) -> Option<Entity> {
        let last = self.last_location()?;
        if last == loc { None } else { self.entity_at(last) }
    }

    /// Removes row `loc` by moving the last row into it (swap-remove), keeping
    /// chunks dense; returns the entity that moved into `loc`. A chunk left empty
    /// goes to the spare list.
    ///
    /// # Safety
    /// `loc` must be a live row whose column values have all been moved out or
    /// dropped already (they are overwritten without a drop), and every other
    /// live row must be fully initialised (the last one is moved into `loc`,
    /// unless `loc` is itself the last row).
    #[inline(always)]
    pub(super) unsafe fn fill_hole(&mut self, loc: Location) -> Option<Entity> {
        debug_assert!(self.contains(loc));
        let last = self.last_location().expect("`loc` is live, so there is a last row");
        let displaced = if last != loc {
            let (hole, tail) = (
                self.chunk_base(loc.chunk as usize),
                self.chunk_base(last.chunk as usize),
            );
            for column in &self.columns {
                // SAFETY: `last` and `loc` are distinct live rows of the same column,
                // so the two `size`-byte ranges are in bounds and disjoint. The value
                // at `last` is moved (its row leaves the live range below); the slot
                // at `loc` is free per the contract.
                unsafe {
                    copy_value(
                        tail.wrapping_add(column.offset + last.row as usize * column.size),
                        hole.wrapping_add(column.offset + loc.row as usize * column.size),
                        column.size,
                    )
                };
            }
            // SAFETY: both entity slots are live rows; `Entity` is `Copy`.
            let moved = unsafe { self.entity_ptr(last).read() };
            // SAFETY: as above, the slot at `loc` is in bounds and aligned.
            unsafe { self.entity_ptr(loc).write(moved) };
            Some(moved)
        } else {
            None
        };
        self.len -= 1;
        if last.row == 0 {
            let empty = self.chunks.pop().expect("the last row was in a chunk");
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

impl Drop for Archetype {
    fn drop(&mut self) {
        for col in 0..self.columns.len() {
            if !self.columns[col].info.ty.needs_drop() {
                continue;
            }
            for chunk in 0..self.chunks.len() {
                let rows = self.rows_in_chunk(chunk);
                let start = self.value_ptr(col, self.chunk_start(chunk));
                // SAFETY: the first `rows` values of this column in this chunk are live
                // and contiguous; the archetype is being dropped, so they are never used
                // again. (If one `Drop` panics, the rest of this chunk's values of the
                // column are still dropped and everything after leaks: never a double
                // drop.)
                unsafe { self.columns[col].info.ty.drop_values(start, rows) };
            }
        }
    }
}
