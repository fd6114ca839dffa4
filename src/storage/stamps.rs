//! Change stamps: for a column that some consumer watches for changes, the
//! change tick of the last mutable access to each row, and per block of rows
//! (64, or a whole chunk when chunks are smaller) a summary (the largest
//! stamp, the rows that have it, a bound on the others), so a consumer finds
//! "rows changed since tick `t`" without reading untouched blocks, and
//! usually without reading the rows of touched ones.
//!
//! Ticks only grow (the context rebases them long before they could wrap:
//! see `Context::end_change_tick`); 0 means "never changed", the stamp of a
//! new row. A row that moves inside its archetype (the last row filling a
//! hole) takes its stamp along; a row that leaves its archetype leaves it
//! behind (the context hands what it was stamped for to the collectors that
//! watch it before the row moves).
//!
//! A mark writes the block's summary only: a row's stamp is its block's
//! largest (`tick`) when the block's `mask` holds the row, else the row's
//! own entry, which is written only when the row leaves the mask (a later
//! tick marks other rows of its block, or a move sets it), and only if some
//! consumer has not looked since (the stamp is above the [`Floor`]; below
//! it, the old entry stands for it). So a write to a whole column costs a
//! store per block, not per row, and the rows' entries are allocated only
//! when the first row needs one: a watched column costs 16 bytes per 64
//! rows until then, 4 bytes a row more after.
//!
//! Stamps are atomics so that a mark through a shared borrow of the
//! archetype (a `ColumnAccess` made from an exclusive one, each row handed
//! out once) is sound; marks use relaxed loads and stores (plain ones on
//! every target).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// One row's change stamp, to be set once a write is known to stand (a
/// write whose observers may still refuse it, such as a primary index
/// checking the new key): [`mark`](Stamp::mark) sets it. Holds a shared
/// borrow of the stamps only, so the row's value can be lent out mutably
/// meanwhile.
#[derive(Clone, Copy)]
pub(crate) struct Stamp<'a> {
    stamps: Option<&'a Stamps>,
    row: u32,
    tick: u32,
}

impl<'a> Stamp<'a> {
    /// `row` of `stamps` (if the column has them), to be stamped with
    /// `tick` (0: never).
    #[inline(always)]
    pub(super) fn new(stamps: Option<&'a Stamps>, row: u32, tick: u32) -> Self {
        Stamp { stamps, row, tick }
    }

    /// Nothing to stamp (a component without change stamps).
    pub(crate) const NONE: Stamp<'static> = Stamp {
        stamps: None,
        row: 0,
        tick: 0,
    };

    /// Stamps the row as changed.
    #[inline(always)]
    pub(crate) fn mark(&self) {
        if let Some(stamps) = self.stamps
            && self.tick != 0
        {
            stamps.mark(self.row, self.tick);
        }
    }
}

/// The change tick at or below which no stamp matters any more: every
/// consumer that compares stamps (the active collectors) has looked at or
/// after it, so a stamp at or below it reads as "unchanged" to each of
/// them, whatever its exact value. The context keeps it (raising it as its
/// oldest collector looks); the stamps of its columns and sparse sets
/// share it. A mark lets rows that leave their block's mask at a tick at or
/// below it keep no entry of their own (their old entries, lower still,
/// stand for it): a scattered write, which moves most blocks' ticks every
/// frame, then writes no entries at all.
#[derive(Clone, Default)]
pub(crate) struct Floor(Arc<AtomicU32>);

impl Floor {
    /// The floor now.
    #[inline(always)]
    pub(crate) fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    /// Moves the floor to `tick` (never past an active consumer's last look).
    pub(crate) fn set(&self, tick: u32) {
        self.0.store(tick, Ordering::Relaxed);
    }
}

/// The tick of the last mark in any of a group of stamped columns (an
/// archetype's), shared by their [`Stamps`]: at least every stamp among
/// them, so that when it is not above the floor, no row of the group was
/// stamped after it, and a check of one row's columns
/// ([`Archetype::row_stamped`](super::Archetype::row_stamped)) reads none
/// of them. The group's owner lowers it when it rebases their stamps.
#[derive(Clone, Default)]
pub(crate) struct LastMark(Arc<AtomicU32>);

impl LastMark {
    /// The tick now.
    #[inline(always)]
    pub(crate) fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    /// Raises it to `tick` if below.
    #[inline(always)]
    fn raise(&self, tick: u32) {
        if self.get() < tick {
            self.0.store(tick, Ordering::Relaxed);
        }
    }

    /// Sets it to `tick` (after a rebase: the largest of the group's own).
    pub(super) fn set(&self, tick: u32) {
        self.0.store(tick, Ordering::Relaxed);
    }
}

/// The change stamps of one column.
pub(crate) struct Stamps {
    /// Per row (across chunks), the tick of its last mutable access, unless
    /// its block's mask holds it (its stamp is then the block's tick).
    /// Allocated the first time a row needs an entry of its own (a write
    /// to whole blocks never does): until then every entry is 0.
    rows: OnceLock<Box<[AtomicU32]>>,
    /// Rows the stamps have room for.
    capacity: usize,
    /// Per block of `1 << shift` rows, a summary of its rows' stamps.
    blocks: Box<[Block]>,
    shift: u32,
    /// At least every stamp of the column (the tick of its last mark): a
    /// column not marked since the floor has no live row, which
    /// [`is_live`](Stamps::is_live) answers without reading the row.
    latest: AtomicU32,
    /// The last mark of the column's group (shared).
    group: LastMark,
    /// The context's floor (shared).
    floor: Floor,
}

/// What one block of rows knows of its rows' stamps: the largest (`tick`),
/// which rows have it (`mask`: their own entries may be older, and are not
/// read), and a bound on every other (`prev`). So a consumer that last
/// looked at or after `prev` finds the block's changed rows in `mask`
/// without reading rows, which is the common case (writes since one
/// consumer's last look); others read the other rows' entries.
#[repr(C)]
struct Block {
    /// At least every stamp of the block's rows (more after a row moved
    /// away: the block is then read once more by each consumer).
    tick: AtomicU32,
    /// At least every stamp of the rows not in `mask`.
    prev: AtomicU32,
    /// The rows (bit `i`: the block's row `i`) stamped `tick`.
    mask: AtomicU64,
}

/// `len` stamps, all 0, from zeroed memory (which the system hands out
/// without touching it: entries cost resident memory only as rows get
/// entries of their own).
fn zeroed_rows(len: usize) -> Box<[AtomicU32]> {
    let plain = Box::into_raw(vec![0u32; len].into_boxed_slice());
    // SAFETY: `AtomicU32` has the size, alignment and bit validity of `u32`
    // (documented), so the allocation of `len` zeroed `u32`s is one of `len`
    // valid `AtomicU32`s with the same layout, which the new box frees with
    // that same layout; the `u32` box was released by `into_raw`.
    unsafe { Box::from_raw(plain as *mut [AtomicU32]) }
}

// The layout `zeroed_blocks` relies on.
const _: () = assert!(size_of::<Block>() == 16 && align_of::<Block>() == 8);

/// `len` block summaries, all 0, from zeroed memory (as `zeroed_rows`).
fn zeroed_blocks(len: usize) -> Box<[Block]> {
    let plain = Box::into_raw(vec![[0u64; 2]; len].into_boxed_slice());
    // SAFETY: `Block` is `repr(C)` of two `AtomicU32`s and an `AtomicU64`:
    // 16 bytes, aligned to 8, with no padding, for which all zeros is valid
    // (atomics have their integers' bit validity), the size and alignment
    // of `[u64; 2]`. So the allocation of `len` zeroed `[u64; 2]` is one of
    // `len` valid `Block`s with the same layout, which the new box frees
    // with that same layout.
    unsafe { Box::from_raw(plain as *mut [Block]) }
}

impl Stamps {
    /// Stamps for `rows` rows (a multiple of the block size), every one 0,
    /// in blocks of `1 << shift` rows (at most 64), below the context's
    /// `floor`.
    pub(super) fn new(rows: usize, shift: u32, floor: Floor, group: LastMark) -> Self {
        debug_assert!(shift <= 6, "a block's mask holds 64 rows");
        Stamps {
            rows: OnceLock::new(),
            capacity: rows,
            blocks: zeroed_blocks(rows >> shift),
            shift,
            latest: AtomicU32::new(0),
            group,
            floor,
        }
    }

    /// Whether `row` (within the capacity) was stamped after the floor:
    /// changed for some consumer.
    #[inline]
    pub(super) fn is_live(&self, row: u32) -> bool {
        let floor = self.floor.get();
        self.latest.load(Ordering::Relaxed) > floor && self.peek(row) > floor
    }

    /// The tick of the column's last mark: at least every stamp in it.
    #[inline]
    pub(super) fn latest(&self) -> u32 {
        self.latest.load(Ordering::Relaxed)
    }

    /// Every row's own entry, allocated now if it was not.
    #[inline]
    fn entries(&self) -> &[AtomicU32] {
        self.rows.get_or_init(|| zeroed_rows(self.capacity))
    }

    /// Room for at least `rows` rows (a multiple of the block size); the
    /// new ones are 0.
    #[cold]
    pub(super) fn grow(&mut self, rows: usize) {
        if rows <= self.capacity {
            return;
        }
        let rows = rows.max(2 * self.capacity);
        if let Some(old) = self.rows.get_mut() {
            let mut new = zeroed_rows(rows);
            for (to, from) in new.iter_mut().zip(old.iter_mut()) {
                *to.get_mut() = *from.get_mut();
            }
            self.rows = OnceLock::from(new);
        }
        self.capacity = rows;
        let mut new = zeroed_blocks(rows >> self.shift);
        for (to, from) in new.iter_mut().zip(self.blocks.iter_mut()) {
            std::mem::swap(to, from);
        }
        self.blocks = new;
    }

    /// The row capacity.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Stamps `row` (within the capacity) with `tick`, the context's
    /// current one.
    ///
    /// Marks are never concurrent: they happen under an exclusive borrow of
    /// the archetype, or as a `ColumnAccess` hands a row or chunk out (a
    /// parallel query's chunks are handed out one at a time, under its
    /// iterator's lock). They go through atomics so that they can be made
    /// through a shared borrow; a concurrent mark would lose a block bit
    /// or a row's stamp (a missed change), never be undefined behaviour.
    #[inline(always)]
    pub(super) fn mark(&self, row: u32, tick: u32) {
        let row = row as usize;
        let size = 1usize << self.shift;
        self.mark_block(row >> self.shift, 1 << (row & (size - 1)), tick);
    }

    /// Stamps rows `start..start + len` (within the capacity) with `tick`:
    /// a store per block.
    #[inline]
    pub(super) fn mark_range(&self, start: usize, len: usize, tick: u32) {
        let size = 1usize << self.shift;
        let mut row = start;
        while row < start + len {
            let (block, first) = (row >> self.shift, row & (size - 1));
            let count = (size - first).min(start + len - row);
            let bits = if count == 64 {
                u64::MAX
            } else {
                ((1u64 << count) - 1) << first
            };
            self.mark_block(block, bits, tick);
            row += count;
        }
    }

    /// Rows `bits` of block `block` were stamped `tick` (not less than any
    /// stamp before). The rows that leave the block's mask (it held them at
    /// its old tick) get that tick in their own entries first.
    #[inline(always)]
    fn mark_block(&self, block: usize, bits: u64, tick: u32) {
        let summary = &self.blocks[block];
        let (old, mask) = (
            summary.tick.load(Ordering::Relaxed),
            summary.mask.load(Ordering::Relaxed),
        );
        if old == tick {
            summary.mask.store(mask | bits, Ordering::Relaxed);
        } else {
            // Rows stamped `old` at or below the floor need no entry: their
            // old entries (lower) read as unchanged to every consumer too.
            let leaving = mask & !bits;
            if leaving != 0 && old > self.floor.get() {
                self.keep_stamps(block, leaving, old);
            }
            summary.prev.store(old, Ordering::Relaxed);
            summary.tick.store(tick, Ordering::Relaxed);
            summary.mask.store(bits, Ordering::Relaxed);
            // A mark's tick is the context's current one, at least every
            // stamp there is: marks racing on other threads store the same.
            if self.latest.load(Ordering::Relaxed) < tick {
                self.latest.store(tick, Ordering::Relaxed);
                self.group.raise(tick);
            }
        }
    }

    /// Writes `stamp` into the entries of block `block`'s rows `bits`
    /// (rows leaving its mask at that stamp).
    #[inline]
    fn keep_stamps(&self, block: usize, mut bits: u64, stamp: u32) {
        let (start, rows) = (block << self.shift, self.entries());
        while bits != 0 {
            rows[start + bits.trailing_zeros() as usize].store(stamp, Ordering::Relaxed);
            bits &= bits - 1;
        }
    }

    /// The stamp of `row` (within the capacity), through a shared borrow:
    /// exact above the floor; at or below it, some tick at or below it.
    #[inline]
    pub(super) fn peek(&self, row: u32) -> u32 {
        let row = row as usize;
        if row >= self.capacity {
            return 0;
        }
        let summary = &self.blocks[row >> self.shift];
        let size = 1usize << self.shift;
        if summary.mask.load(Ordering::Relaxed) & (1 << (row & (size - 1))) != 0 {
            summary.tick.load(Ordering::Relaxed)
        } else {
            self.rows.get().map_or(0, |rows| rows[row].load(Ordering::Relaxed))
        }
    }

    /// The stamp of `row` (as [`peek`](Stamps::peek)).
    #[inline]
    pub(super) fn get(&mut self, row: u32) -> u32 {
        self.peek(row)
    }

    /// Sets the stamp of `row` to `stamp` (a new row's 0, or the stamp of
    /// a row moved into it), keeping its block's summary true.
    #[inline]
    pub(super) fn set(&mut self, row: u32, stamp: u32) {
        let latest = self.latest.get_mut();
        *latest = (*latest).max(stamp);
        self.group.raise(stamp);
        let row = row as usize;
        let size = 1usize << self.shift;
        let (block, bit) = (row >> self.shift, 1u64 << (row & (size - 1)));
        let (tick, mask) = {
            let summary = &mut self.blocks[block];
            (*summary.tick.get_mut(), *summary.mask.get_mut())
        };
        if stamp != 0 && stamp == tick {
            *self.blocks[block].mask.get_mut() = mask | bit;
        } else if stamp > tick {
            let leaving = mask & !bit;
            if leaving != 0 {
                self.keep_stamps(block, leaving, tick);
            }
            let summary = &mut self.blocks[block];
            *summary.prev.get_mut() = tick;
            *summary.tick.get_mut() = stamp;
            *summary.mask.get_mut() = bit;
        } else {
            // An entry not allocated yet is 0 already.
            if stamp != 0 || self.rows.get().is_some() {
                self.entries()[row].store(stamp, Ordering::Relaxed);
            }
            let summary = &mut self.blocks[block];
            *summary.mask.get_mut() = mask & !bit;
            let prev = summary.prev.get_mut();
            *prev = (*prev).max(stamp);
        }
    }

    /// Calls `f` with each block among the first `len` rows that holds rows
    /// stamped after `since`: its first row, and a mask of those rows, in
    /// increasing order.
    #[inline]
    pub(super) fn changed_blocks(&mut self, len: usize, since: u32, mut f: impl FnMut(usize, u64)) {
        let blocks = ChangedBlocks::new(self, len, since, |rows: &[AtomicU32]| {
            // SAFETY: `AtomicU32` has the size, alignment and bit validity
            // of `u32`; `&mut self` rules out any other access to these
            // stamps while the shared view lives.
            let rows: &[u32] = unsafe { std::slice::from_raw_parts(rows.as_ptr().cast::<u32>(), rows.len()) };
            newer_than(rows, since)
        });
        blocks.for_each(|(start, mask)| f(start, mask));
    }

    /// As [`changed_blocks`](Stamps::changed_blocks), as an iterator and
    /// through a shared borrow (atomic loads, no SIMD): for rows read
    /// meanwhile, and for sparse sets, scanned while other parts of the
    /// context are read.
    #[inline]
    pub(super) fn changed_blocks_shared(&self, len: usize, since: u32) -> impl Iterator<Item = (usize, u64)> + '_ {
        ChangedBlocks::new(self, len, since, move |rows: &[AtomicU32]| {
            rows.iter().enumerate().fold(0, |mask, (i, stamp)| {
                mask | (u64::from(stamp.load(Ordering::Relaxed) > since) << i)
            })
        })
    }

    /// Subtracts `base` from every stamp (0 for those at or below it).
    pub(super) fn rebase(&mut self, base: u32) {
        let latest = self.latest.get_mut();
        *latest = latest.saturating_sub(base);
        for stamp in self.rows.get_mut().map_or(&mut [][..], |rows| &mut rows[..]) {
            let stamp = stamp.get_mut();
            *stamp = stamp.saturating_sub(base);
        }
        for block in self.blocks.iter_mut() {
            for tick in [&mut block.tick, &mut block.prev] {
                let tick = tick.get_mut();
                *tick = tick.saturating_sub(base);
            }
        }
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.rows.get().map_or(0, |rows| rows.len() * size_of::<AtomicU32>()) + self.blocks.len() * size_of::<Block>()
    }
}

/// The blocks among a column's first `len` rows holding rows stamped
/// after `since`, in increasing order: each block's first row and a mask of
/// those rows. A block whose largest stamp is not after `since` is skipped;
/// one whose other rows are all at or before `since` gives its mask; the
/// rest are read with `newer`.
///
/// Blocks are compared 64 at a time into a mask without a branch per
/// block (a scattered write leaves about every other block changed, which
/// no branch predictor guesses), then the changed ones are read.
struct ChangedBlocks<'a, N> {
    stamps: &'a Stamps,
    len: usize,
    since: u32,
    newer: N,
    /// The next group of 64 blocks to compare, and how many blocks hold rows.
    group: usize,
    blocks: usize,
    /// The blocks of the group compared last not read yet, and its first.
    touched: u64,
    first: usize,
}

impl<'a, N: Fn(&[AtomicU32]) -> u64> ChangedBlocks<'a, N> {
    #[inline(always)]
    fn new(stamps: &'a Stamps, len: usize, since: u32, newer: N) -> Self {
        // A column not marked since `since` has no block to read.
        let blocks = if stamps.latest.load(Ordering::Relaxed) > since {
            len.div_ceil(1 << stamps.shift).min(stamps.blocks.len())
        } else {
            0
        };
        ChangedBlocks {
            stamps,
            len,
            since,
            newer,
            group: 0,
            blocks,
            touched: 0,
            first: 0,
        }
    }
}

impl<N: Fn(&[AtomicU32]) -> u64> Iterator for ChangedBlocks<'_, N> {
    type Item = (usize, u64);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, u64)> {
        let stamps = self.stamps;
        let size = 1usize << stamps.shift;
        loop {
            while self.touched != 0 {
                let block = self.first + self.touched.trailing_zeros() as usize;
                self.touched &= self.touched - 1;
                let summary = &stamps.blocks[block];
                let start = block * size;
                let end = (start + size).min(self.len);
                let live = if end - start == 64 {
                    u64::MAX
                } else {
                    (1u64 << (end - start)) - 1
                };
                // The rows in the mask have the block's tick, after `since`;
                // the others their own entries.
                let mask = summary.mask.load(Ordering::Relaxed);
                let changed = if summary.prev.load(Ordering::Relaxed) <= self.since {
                    mask & live
                } else {
                    let own = stamps.rows.get().map_or(0, |rows| (self.newer)(&rows[start..end]));
                    (own | mask) & live
                };
                if changed != 0 {
                    return Some((start, changed));
                }
            }
            let first = self.group * 64;
            if first >= self.blocks {
                return None;
            }
            let since = self.since;
            let group = &stamps.blocks[first..(first + 64).min(self.blocks)];
            self.touched = group.iter().enumerate().fold(0u64, |touched, (i, summary)| {
                touched | (u64::from(summary.tick.load(Ordering::Relaxed) > since) << i)
            });
            self.first = first;
            self.group += 1;
        }
    }
}

/// A mask of `stamps` (at most 64) larger than `since`: bit `i` for
/// `stamps[i]`. Stamps and ticks stay below 2^31 (they are rebased at 2^30),
/// so a signed compare is the unsigned one, four at a time with SSE2.
#[inline]
fn newer_than(stamps: &[u32], since: u32) -> u64 {
    debug_assert!(stamps.len() <= 64, "a block holds at most 64 rows");
    let mut mask = 0u64;
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    #[cfg(target_arch = "x86_64")]
    let done = {
        use std::arch::x86_64::{
            __m128i, _mm_castsi128_ps, _mm_cmpgt_epi32, _mm_loadu_si128, _mm_movemask_ps, _mm_set1_epi32,
        };
        let quads = stamps.chunks_exact(4);
        let done = stamps.len() - quads.remainder().len();
        // SAFETY: SSE2 is part of every x86_64 target; each load reads the
        // 16 bytes of one `[u32; 4]` chunk of `stamps` (unaligned loads are
        // allowed), and the intrinsics only compute on registers.
        unsafe {
            let limit = _mm_set1_epi32(since as i32);
            for (i, quad) in quads.enumerate() {
                let values = _mm_loadu_si128(quad.as_ptr().cast::<__m128i>());
                let newer = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(values, limit)));
                mask |= (newer as u64) << (4 * i);
            }
        }
        done
    };
    for (i, &stamp) in stamps[done..].iter().enumerate() {
        mask |= u64::from(stamp > since) << (done + i);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows a naive model says changed after `since`.
    fn naive(model: &[u32], len: usize, since: u32) -> Vec<usize> {
        (0..len).filter(|&row| model[row] > since).collect()
    }

    fn found(stamps: &mut Stamps, len: usize, since: u32, shift: u32) -> Vec<usize> {
        let mut rows = Vec::new();
        stamps.changed_blocks(len, since, |start, mut mask| {
            assert_eq!(start % (1 << shift), 0, "blocks start at multiples of their size");
            while mask != 0 {
                rows.push(start + mask.trailing_zeros() as usize);
                mask &= mask - 1;
            }
        });
        rows
    }

    #[test]
    fn changed_rows_match_a_naive_model_through_marks_moves_and_rebases() {
        // Blocks of 64 rows and of 4 (a chunk of few, large rows): 8 and
        // 128 blocks, so the scan's groups of 64 blocks are crossed. The
        // floor rises now and then; consumers look at or after it.
        for shift in [6, 2] {
            let capacity = 512;
            let floor = Floor::default();
            let mut stamps = Stamps::new(capacity, shift, floor.clone(), LastMark::default());
            let mut model = vec![0u32; capacity];
            let mut tick = 1;
            let mut len = capacity;
            // A small deterministic generator: no dependency for tests.
            let mut state = 0x9E37_79B9_u32 ^ shift;
            let mut next = |bound: usize| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state as usize % bound
            };
            // Under Miri, fewer rounds, each row read back every fourth:
            // the same paths, crossing the same block and group bounds.
            let (rounds, every) = if cfg!(miri) { (160, 4) } else { (5_000, 1) };
            for round in 0..rounds {
                match next(7) {
                    0 | 1 => {
                        let row = next(len);
                        stamps.mark(row as u32, tick);
                        model[row] = tick;
                    }
                    2 => {
                        let start = next(len);
                        let count = next(len - start + 1);
                        stamps.mark_range(start, count, tick);
                        model[start..start + count].fill(tick);
                    }
                    3 => {
                        // The last row moves into a hole, or a row is cleared.
                        let row = next(len);
                        let stamp = if next(2) == 0 { model[len - 1] } else { 0 };
                        stamps.set(row as u32, stamp);
                        model[row] = stamp;
                    }
                    4 => {
                        tick += 1;
                        if next(3) == 0 {
                            // The oldest consumer looked: the floor rises, not past
                            // the last tick ended.
                            floor.set(floor.get() + next((tick - floor.get()) as usize) as u32);
                        }
                    }
                    5 => {
                        // Rows leave and come back, fresh.
                        let new_len = 1 + next(capacity);
                        for (row, stamp) in model.iter_mut().enumerate().take(new_len).skip(len.min(new_len)) {
                            stamps.set(row as u32, 0);
                            *stamp = 0;
                        }
                        len = new_len;
                    }
                    _ => {
                        let base = next(tick as usize) as u32;
                        stamps.rebase(base);
                        for stamp in &mut model {
                            *stamp = stamp.saturating_sub(base);
                        }
                        tick -= base;
                        floor.set(floor.get().saturating_sub(base));
                    }
                }
                let since = floor.get() + next((tick - floor.get()) as usize + 1) as u32;
                assert_eq!(
                    found(&mut stamps, len, since, shift),
                    naive(&model, len, since),
                    "since {since}, floor {}",
                    floor.get()
                );
                // Exact above the floor; at or below it, anything at or below.
                if round % every != 0 {
                    continue;
                }
                for (row, &stamp) in model.iter().enumerate().take(len) {
                    let got = stamps.get(row as u32);
                    if stamp > floor.get() {
                        assert_eq!(got, stamp, "row {row}");
                    } else {
                        assert!(got <= floor.get(), "row {row}: {got} above the floor for {stamp}");
                    }
                    assert_eq!(stamps.is_live(row as u32), stamp > floor.get());
                }
            }
        }
    }

    #[test]
    fn rows_get_entries_of_their_own_only_when_one_leaves_its_blocks_mask() {
        let mut stamps = Stamps::new(256, 6, Floor::default(), LastMark::default());
        let blocks = 4 * size_of::<Block>();
        assert_eq!(stamps.bytes(), blocks, "a new column's stamps: the block summaries");
        // Whole blocks written, tick after tick: summaries only.
        for tick in 1..4 {
            stamps.mark_range(0, 256, tick);
        }
        stamps.set(255, 0);
        assert_eq!(stamps.bytes(), blocks);
        assert_eq!(found(&mut stamps, 256, 2, 6), (0..255).collect::<Vec<_>>());
        // One row written at a later tick: the others of its block keep 3.
        stamps.mark(5, 4);
        assert_eq!(stamps.bytes(), blocks + 256 * size_of::<AtomicU32>());
        assert_eq!((stamps.get(5), stamps.get(6), stamps.get(255)), (4, 3, 0));
        assert_eq!(found(&mut stamps, 256, 3, 6), [5]);
    }

    #[test]
    fn rows_left_at_or_below_the_floor_get_no_entries() {
        let floor = Floor::default();
        let mut stamps = Stamps::new(256, 6, floor.clone(), LastMark::default());
        let blocks = 4 * size_of::<Block>();
        // A scattered write, a row per block per tick, the one consumer
        // looking after each tick: every block's tick moves, no entry kept.
        for tick in 1..10u32 {
            for block in 0..4 {
                stamps.mark(block * 64 + tick, tick);
            }
            floor.set(tick);
        }
        assert_eq!(stamps.bytes(), blocks, "no row entries");
        for block in 0..4 {
            stamps.mark(block * 64 + 10, 10);
        }
        assert_eq!(found(&mut stamps, 256, 9, 6), [10, 74, 138, 202]);
        // The consumer has not looked since tick 10: rows leaving the mask
        // at tick 11 keep 10 in entries of their own.
        stamps.mark(5, 11);
        assert_eq!(stamps.bytes(), blocks + 256 * size_of::<AtomicU32>());
        assert_eq!((stamps.get(10), stamps.get(5)), (10, 11));
        assert_eq!(found(&mut stamps, 256, 9, 6), [5, 10, 74, 138, 202]);
    }

    #[test]
    fn growing_keeps_every_stamp_and_block() {
        let mut stamps = Stamps::new(64, 6, Floor::default(), LastMark::default());
        stamps.mark(3, 5);
        stamps.mark(60, 7);
        stamps.grow(200);
        assert!(stamps.capacity() >= 200);
        stamps.mark(130, 9);
        assert_eq!(found(&mut stamps, 200, 4, 6), [3, 60, 130]);
        assert_eq!(found(&mut stamps, 200, 6, 6), [60, 130]);
        assert_eq!(found(&mut stamps, 200, 9, 6), Vec::<usize>::new());
    }

    #[test]
    fn the_simd_compare_matches_the_scalar_one() {
        let stamps: Vec<u32> = (0..64).map(|i| (i * 37) % 50).collect();
        for len in [0, 1, 3, 4, 5, 31, 64] {
            for since in [0, 10, 25, 49, 50] {
                let expected = (0..len).fold(0u64, |m, i| m | (u64::from(stamps[i] > since) << i));
                assert_eq!(newer_than(&stamps[..len], since), expected, "len {len} since {since}");
            }
        }
    }
}
