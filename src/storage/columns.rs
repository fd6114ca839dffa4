//! `ColumnAccess`: chunk-by-chunk slices of one archetype's columns, for
//! queries. Borrows are checked per column at run time, so no sequence of
//! calls can produce two live `&mut` to one value, or a `&mut` next to a `&`.

use std::marker::PhantomData;

use super::archetype::Archetype;
use crate::component::ComponentId;
use crate::entity::Entity;

/// Hands out the columns of one archetype as per-chunk slices.
///
/// Made from `&'a Archetype` (`ColumnAccess::shared`: reads only) or from
/// `&'a mut Archetype` (`ColumnAccess::exclusive`: reads and writes). Each
/// column can be taken for writing once, or for reading any number of times,
/// but not both.
///
/// The borrow flags only prevent aliasing because there is one `ColumnAccess`
/// per exclusive borrow: it must never be `Clone` or `Copy`, and `exclusive`
/// must keep taking the `&'a mut Archetype` by value.
pub struct ColumnAccess<'a> {
    archetype: &'a Archetype,
    writable: bool,
    /// Bit `col` set: column `col` is borrowed shared (`read`).
    shared: ColumnBits,
    /// Bit `col` set: column `col` is borrowed exclusively (`write`).
    exclusive: ColumnBits,
}

/// A set of column indices: a word for the first 64 columns, and words
/// beyond (not allocated, for all but very wide archetypes).
#[derive(Default)]
struct ColumnBits {
    low: u64,
    high: Option<Box<[u64]>>,
}

impl ColumnBits {
    #[inline]
    fn contains(&self, col: usize) -> bool {
        match col.checked_sub(64) {
            None => self.low & (1 << col) != 0,
            Some(rest) => self
                .high
                .as_deref()
                .and_then(|high| high.get(rest / 64))
                .is_some_and(|word| word & (1 << (rest % 64)) != 0),
        }
    }

    #[inline]
    fn insert(&mut self, col: usize) {
        match col.checked_sub(64) {
            None => self.low |= 1 << col,
            Some(rest) => self.insert_high(rest),
        }
    }

    #[cold]
    fn insert_high(&mut self, rest: usize) {
        let mut high = self.high.take().unwrap_or_default().into_vec();
        if high.len() <= rest / 64 {
            high.resize(rest / 64 + 1, 0);
        }
        high[rest / 64] |= 1 << (rest % 64);
        self.high = Some(high.into_boxed_slice());
    }
}

impl<'a> ColumnAccess<'a> {
    /// Read access to `archetype`'s columns.
    #[inline]
    pub(crate) fn shared(archetype: &'a Archetype) -> Self {
        Self::new(archetype, false)
    }

    /// Read and write access to `archetype`'s columns. The `&mut` is held for
    /// `'a`, so nothing else reads or writes the archetype meanwhile.
    #[inline]
    pub(crate) fn exclusive(archetype: &'a mut Archetype) -> Self {
        Self::new(archetype, true)
    }

    #[inline]
    fn new(archetype: &'a Archetype, writable: bool) -> Self {
        ColumnAccess {
            archetype,
            writable,
            shared: ColumnBits::default(),
            exclusive: ColumnBits::default(),
        }
    }

    /// The number of rows in each chunk, in order.
    #[inline]
    pub(crate) fn chunk_lens(&self) -> ChunkLens<'a> {
        ChunkLens {
            archetype: self.archetype,
            next: 0,
        }
    }

    /// Whether the archetype has component `id`.
    #[inline]
    pub(crate) fn has(&self, id: ComponentId) -> bool {
        self.archetype.column_index(id).is_some()
    }

    /// The entity array of each chunk.
    #[inline]
    pub(crate) fn entities(&self) -> EntityChunks<'a> {
        EntityChunks {
            archetype: self.archetype,
            next: 0,
        }
    }

    /// Takes the column of `id` for reading if it holds `T`s and is not
    /// taken for writing.
    #[inline(always)]
    fn borrow_shared<T: 'static>(&mut self, id: ComponentId) -> Option<usize> {
        let col = self.archetype.typed_column::<T>(id)?;
        if self.exclusive.contains(col) {
            return None;
        }
        self.shared.insert(col);
        Some(col)
    }

    /// Takes the column of `id` for writing if it holds `T`s, the access can
    /// write, and the column is not taken yet.
    #[inline(always)]
    fn borrow_exclusive<T: 'static>(&mut self, id: ComponentId) -> Option<usize> {
        let col = self.archetype.typed_column::<T>(id)?;
        if !self.writable || self.shared.contains(col) || self.exclusive.contains(col) {
            return None;
        }
        self.exclusive.insert(col);
        Some(col)
    }

    /// The column of `id`, if it holds `T`s, for reading. `None` if the
    /// archetype lacks it or it is already taken for writing.
    #[inline]
    pub(crate) fn read<T: 'static>(&mut self, id: ComponentId) -> Option<ColumnChunks<'a, T>> {
        let col = self.borrow_shared::<T>(id)?;
        Some(ColumnChunks {
            archetype: self.archetype,
            offset: self.archetype.column_geometry(col).0,
            next: 0,
            _values: PhantomData,
        })
    }

    /// The column of `id`, if it holds `T`s, for writing. `None` if the
    /// archetype lacks it, the access is read-only, or the column is already
    /// taken.
    #[inline]
    pub(crate) fn write<T: 'static>(&mut self, id: ComponentId) -> Option<ColumnChunksMut<'a, T>> {
        let col = self.borrow_exclusive::<T>(id)?;
        Some(ColumnChunksMut {
            archetype: self.archetype,
            offset: self.archetype.column_geometry(col).0,
            next: 0,
            _values: PhantomData,
        })
    }

    /// The entity at `row`, if it is a live row.
    #[inline]
    pub(crate) fn entity_at(&self, row: u32) -> Option<Entity> {
        self.archetype.entity_at(row)
    }

    /// The `T` of component `id` at `row`, for reading (taking the column as
    /// [`read`](ColumnAccess::read) does). `None` if `row` is not live or the
    /// column cannot be read.
    #[inline]
    pub(crate) fn read_row<T: 'static>(&mut self, id: ComponentId, row: u32) -> Option<&'a T> {
        if !self.archetype.contains_row(row) {
            return None;
        }
        let col = self.borrow_shared::<T>(id)?;
        // SAFETY: column `col` holds `T`s (checked by `borrow_shared`) and `row` is
        // live, so the value is initialised and aligned. The column is borrowed
        // shared for `'a` (never exclusively), and the archetype is borrowed for
        // `'a`, so no `&mut` to it exists meanwhile.
        Some(unsafe { &*self.archetype.value_ptr(col, row).cast::<T>() })
    }

    /// The `T` of component `id` at `row`, for writing (taking the column as
    /// [`write`](ColumnAccess::write) does). `None` if `row` is not live or the
    /// column cannot be written.
    #[inline]
    pub(crate) fn write_row<T: 'static>(&mut self, id: ComponentId, row: u32) -> Option<&'a mut T> {
        if !self.archetype.contains_row(row) {
            return None;
        }
        let col = self.borrow_exclusive::<T>(id)?;
        // SAFETY: as in `read_row` for type, initialisation and alignment.
        // Uniqueness: the access was made from `&'a mut Archetype` (`writable`) and
        // the column was taken once, only for writing, so this is the only
        // reference to any of its values for `'a`.
        Some(unsafe { &mut *self.archetype.value_ptr(col, row).cast::<T>() })
    }
}

/// One live row of one archetype, with one of its columns lent out mutably
/// (by `RowAccess::split`) and the others readable: the one lookup a
/// single-entity write that reads other components needs.
pub struct RowAccess<'a> {
    archetype: &'a Archetype,
    row: u32,
    /// The row's chunk's first byte, and the row's place in it.
    base: *mut u8,
    in_chunk: usize,
    /// The column lent out mutably.
    written: usize,
}

impl<'a> RowAccess<'a> {
    /// Column `col` of live `row`, mutably, if it holds `T`s, and the rest of
    /// the row for reading.
    #[inline(always)]
    pub(crate) fn split<T: 'static>(archetype: &'a mut Archetype, col: usize, row: u32) -> Option<(&'a mut T, Self)> {
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
        };
        // SAFETY: column `col` holds `T`s and `row` is live, so `value` is an
        // initialised, aligned `T` in chunk memory (reached through the chunk's
        // raw pointer, not through `archetype`). It is unique for `'a`: the
        // archetype was borrowed mutably for `'a`, so nothing else reaches it,
        // and `rest` refuses to read column `col`.
        Some((unsafe { &mut *value }, rest))
    }

    /// The `T` of component `id` in the row, unless the archetype lacks it, it
    /// does not hold `T`s, or it is the column lent out.
    #[inline(always)]
    pub(crate) fn read<T: 'static>(&self, id: ComponentId) -> Option<&'a T> {
        let col = self.archetype.typed_column::<T>(id)?;
        if col == self.written {
            return None;
        }
        let (offset, size) = self.archetype.column_geometry(col);
        let value = self.base.wrapping_add(offset + self.in_chunk * size).cast::<T>();
        // SAFETY: column `col` holds `T`s (checked) and the row is live (checked
        // by `split`), so `value` is an initialised, aligned `T`. Only column
        // `written` of the row is lent mutably, and `col` is another column
        // (disjoint bytes), so this shared borrow aliases no `&mut` for `'a`.
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
        self.archetype.entity_at(self.row).expect("the row is live")
    }
}

/// The number of rows in each chunk of an archetype, in order.
#[derive(Clone)]
pub struct ChunkLens<'a> {
    archetype: &'a Archetype,
    next: usize,
}

impl Iterator for ChunkLens<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.next >= self.archetype.chunk_count() {
            return None;
        }
        self.next += 1;
        Some(self.archetype.rows_in_chunk(self.next - 1))
    }
}

/// The entity array of each chunk of an archetype, in order.
pub struct EntityChunks<'a> {
    archetype: &'a Archetype,
    next: usize,
}

impl<'a> Iterator for EntityChunks<'a> {
    type Item = &'a [Entity];

    #[inline]
    fn next(&mut self) -> Option<&'a [Entity]> {
        if self.next >= self.archetype.chunk_count() {
            return None;
        }
        self.next += 1;
        Some(self.archetype.chunk_entities(self.next - 1))
    }
}

/// One column's values, chunk by chunk, shared.
pub struct ColumnChunks<'a, T> {
    archetype: &'a Archetype,
    /// The column's offset in a chunk.
    offset: usize,
    next: usize,
    _values: PhantomData<&'a [T]>,
}

impl<'a, T: 'static> Iterator for ColumnChunks<'a, T> {
    type Item = &'a [T];

    #[inline]
    fn next(&mut self) -> Option<&'a [T]> {
        let chunk = self.next;
        if chunk >= self.archetype.chunk_count() {
            return None;
        }
        self.next += 1;
        let (start, len) = self.archetype.column_start(self.offset, chunk);
        // SAFETY: `ColumnAccess::read` checked that the column holds `T`s; the
        // first `len` values of the column in a chunk in use are initialised and
        // contiguous from `start`, which is aligned for `T` (column offsets are
        // aligned; zero-sized columns sit at the chunk's aligned base). The column
        // is borrowed shared (never exclusively) for `'a`, and the archetype is
        // borrowed for `'a`, so no `&mut` to these values exists meanwhile.
        Some(unsafe { std::slice::from_raw_parts(start.cast::<T>(), len) })
    }
}

/// One column's values, chunk by chunk, exclusive: each chunk's slice is
/// handed out once.
pub struct ColumnChunksMut<'a, T> {
    archetype: &'a Archetype,
    /// The column's offset in a chunk.
    offset: usize,
    next: usize,
    _values: PhantomData<&'a mut [T]>,
}

impl<'a, T: 'static> Iterator for ColumnChunksMut<'a, T> {
    type Item = &'a mut [T];

    #[inline]
    fn next(&mut self) -> Option<&'a mut [T]> {
        let chunk = self.next;
        if chunk >= self.archetype.chunk_count() {
            return None;
        }
        self.next += 1;
        let (start, len) = self.archetype.column_start(self.offset, chunk);
        // SAFETY: as in `ColumnChunks::next` for type, initialisation and
        // alignment. Uniqueness: the `ColumnAccess` was made from `&'a mut
        // Archetype` (`writable`), this column was taken once and only for
        // writing, and `next` only moves forward, so each chunk's slice of this
        // column is handed out once; slices of different chunks (separate
        // allocations) or of different columns (disjoint byte ranges of a chunk)
        // never overlap. The chunk memory is not freed or moved while the
        // archetype is borrowed.
        Some(unsafe { std::slice::from_raw_parts_mut(start.cast::<T>(), len) })
    }
}

#[cfg(test)]
mod tests {
    use super::ColumnBits;

    #[test]
    fn column_bits_hold_indices_below_and_above_64() {
        let mut bits = ColumnBits::default();
        for col in [0, 5, 63, 64, 65, 127, 128, 300] {
            assert!(!bits.contains(col));
            bits.insert(col);
            assert!(bits.contains(col));
        }
        assert!(!bits.contains(1) && !bits.contains(62) && !bits.contains(66) && !bits.contains(299));
    }
}
