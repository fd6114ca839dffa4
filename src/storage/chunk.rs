//! Chunks: fixed-size raw allocations holding an entity array and one column per
//! component (structure of arrays), and the layout computation that places them.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::entity::Entity;

/// Target size of one chunk in bytes. A row larger than this gets a bigger
/// chunk holding exactly one row.
pub const CHUNK_BYTES: usize = 16 * 1024;

/// Where each array lives inside a chunk of some archetype.
#[derive(Clone, Debug)]
pub(super) struct ChunkLayout {
    /// Rows per chunk: a power of two (at least 1), so a row number splits
    /// into chunk and row within it with a shift and a mask.
    pub(super) rows: usize,
    /// `rows == 1 << shift`.
    pub(super) shift: u32,
    /// The allocation layout of one chunk.
    pub(super) layout: Layout,
    /// Byte offset of each column's array, in the order of the `columns` given
    /// to [`ChunkLayout::new`]. Zero-sized columns get offset 0 and no space
    /// (the chunk is aligned for them, so the chunk's base is a valid address).
    pub(super) offsets: Vec<usize>,
}

impl ChunkLayout {
    /// Lays out the entity array (at offset 0) and the given columns for the
    /// largest power of two of rows that fits in [`CHUNK_BYTES`], or one row
    /// if a single row is larger. The chunk is allocated at the size its
    /// arrays take (at most `CHUNK_BYTES` unless one row is larger).
    pub(super) fn new(columns: &[Layout]) -> Self {
        let row_bytes: usize = size_of::<Entity>() + columns.iter().map(|l| l.size()).sum::<usize>();
        let fit = (CHUNK_BYTES / row_bytes).max(1);
        let mut rows = 1 << fit.ilog2();
        loop {
            let (end, align, offsets) = place(columns, rows);
            if end <= CHUNK_BYTES || rows == 1 {
                let layout = Layout::from_size_align(end, align)
                    .expect("a chunk's size fits in isize: a row of declared component types whose sizes sum past it could never be built");
                return ChunkLayout {
                    rows,
                    shift: rows.trailing_zeros(),
                    layout,
                    offsets,
                };
            }
            // Padding pushed us over: half as many rows always fit if one row fits at all.
            rows /= 2;
        }
    }
}

/// Places the arrays for `rows` rows: entities first, then columns by
/// decreasing alignment (least padding). Returns (end offset, alignment,
/// offsets in the given column order).
fn place(columns: &[Layout], rows: usize) -> (usize, usize, Vec<usize>) {
    let mut order: Vec<usize> = (0..columns.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(columns[i].align()));
    let mut offsets = vec![0; columns.len()];
    let mut end = size_of::<Entity>() * rows;
    let mut align = align_of::<Entity>();
    for i in order {
        let column = columns[i];
        align = align.max(column.align());
        if column.size() == 0 {
            continue;
        }
        end = end.next_multiple_of(column.align());
        offsets[i] = end;
        end = column
            .size()
            .checked_mul(rows)
            .and_then(|bytes| end.checked_add(bytes))
            .expect("a chunk's size fits in usize: a row of declared component types whose sizes sum past it could never be built");
    }
    (end, align, offsets)
}

/// One chunk's memory. Owns the allocation only: the values in it are
/// initialised, moved and dropped by the owning archetype, which knows how many
/// rows are live.
pub(super) struct Chunk {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a chunk is plain memory holding `Entity` values and component values,
// and every stored type is `Send + Sync` (`TypeInfo::of` requires it, and a
// column's type comes only from a `TypeInfo`). The owning archetype hands out
// `&`/`&mut` values only through borrows of itself.
unsafe impl Send for Chunk {}
// SAFETY: as for `Send`. The owning archetype writes chunk memory only through
// `&mut self`, or through a writable `ColumnAccess` (made from an `ArchetypeMut`
// or by a walk of an `ArchetypesLend`), which hands out each written column's
// slice of each chunk once, so threads given different chunks' slices never
// touch the same bytes; meanwhile nothing else reaches those columns: the
// archetypes are borrowed mutably for the lend, and a split lend's read side
// (`ReadLend`, shared between threads) reads only other columns. Otherwise
// shared access from several threads only reads.
unsafe impl Sync for Chunk {}

impl Chunk {
    /// Allocates an uninitialised chunk.
    pub(super) fn new(layout: &ChunkLayout) -> Self {
        let layout = layout.layout;
        debug_assert!(layout.size() > 0);
        // SAFETY: `layout` has a non-zero size: every chunk holds at least one
        // row, whose `Entity` takes 8 bytes.
        let raw = unsafe { alloc::alloc(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        Chunk { ptr, layout }
    }

    /// The start of the chunk's memory (aligned to the chunk layout's alignment).
    #[inline]
    pub(super) fn base(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated in `Chunk::new` with exactly `self.layout`
        // and is freed only here, once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_holds_as_many_rows_as_fit_in_sixteen_kib() {
        let layout = ChunkLayout::new(&[Layout::new::<[f32; 3]>(), Layout::new::<u8>()]);
        // 8 (entity) + 12 + 1 = 21 bytes per row: 780 fit, 512 is the power of two.
        assert_eq!(layout.rows, 512);
        assert_eq!(layout.rows, 1 << layout.shift);
        assert!(layout.layout.size() <= CHUNK_BYTES);
        assert!(layout.layout.size() >= 512 * 21);
        // 8 + 24 = 32 bytes per row fills a chunk exactly.
        let exact = ChunkLayout::new(&[Layout::new::<[f32; 3]>(), Layout::new::<[f32; 3]>()]);
        assert_eq!((exact.rows, exact.layout.size()), (512, CHUNK_BYTES));
    }

    #[test]
    fn offsets_are_aligned_and_arrays_do_not_overlap() {
        #[repr(align(64))]
        struct Wide {
            _bytes: [u8; 64],
        }
        let columns = [
            Layout::new::<u8>(),
            Layout::new::<u64>(),
            Layout::new::<[u8; 3]>(),
            Layout::new::<Wide>(),
            Layout::new::<()>(),
        ];
        let chunk = ChunkLayout::new(&columns);
        assert_eq!(chunk.layout.align(), 64);
        let mut spans = vec![(0, size_of::<Entity>() * chunk.rows)];
        for (column, &offset) in columns.iter().zip(&chunk.offsets) {
            assert_eq!(offset % column.align(), 0);
            if column.size() > 0 {
                spans.push((offset, offset + column.size() * chunk.rows));
            }
        }
        spans.sort();
        for pair in spans.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "arrays overlap: {spans:?}");
        }
        assert!(spans.last().unwrap().1 <= chunk.layout.size());
    }

    #[test]
    fn a_row_larger_than_a_chunk_gets_a_bigger_chunk_with_one_row() {
        let layout = ChunkLayout::new(&[Layout::new::<[u8; 40_000]>()]);
        assert_eq!(layout.rows, 1);
        assert!(layout.layout.size() >= 40_000 + size_of::<Entity>());
    }

    #[test]
    fn zero_sized_columns_take_no_space() {
        let with = ChunkLayout::new(&[Layout::new::<u32>(), Layout::new::<()>()]);
        let without = ChunkLayout::new(&[Layout::new::<u32>()]);
        assert_eq!(with.rows, without.rows);
    }
}
