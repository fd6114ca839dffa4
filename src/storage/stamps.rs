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
//! Stamps are `AtomicU32`s so that a write through a shared borrow of the
//! archetype (a `ColumnAccess` made from an exclusive one, each row handed
//! out once) is sound; single rows are stamped with relaxed stores (a plain
//! store on every target), a chunk handed out whole with a plain fill.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

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

/// The change stamps of one column.
pub(crate) struct Stamps {
    /// Per row (across chunks), the tick of its last mutable access.
    rows: Box<[AtomicU32]>,
    /// Per block of `1 << shift` rows, a summary of its rows' stamps.
    blocks: Box<[Block]>,
    shift: u32,
}

/// What one block of rows knows of its rows' stamps: the largest (`tick`),
/// which rows have it (`mask`), and a bound on every other (`prev`). So a
/// consumer that last looked at or after `prev` finds the block's changed
/// rows in `mask` without reading them, which is the common case (writes
/// since one consumer's last look); others read the rows' stamps.
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

impl Block {
    /// Rows `bits` were stamped `tick` (not less than any stamp before).
    /// Marks are never concurrent (see `Stamps::mark`), so a plain load and
    /// store stand in for read-modify-write.
    #[inline(always)]
    fn mark(&self, bits: u64, tick: u32) {
        let old = self.tick.load(Ordering::Relaxed);
        if old == tick {
            let mask = self.mask.load(Ordering::Relaxed);
            self.mask.store(mask | bits, Ordering::Relaxed);
        } else {
            self.prev.store(old, Ordering::Relaxed);
            self.tick.store(tick, Ordering::Relaxed);
            self.mask.store(bits, Ordering::Relaxed);
        }
    }
}

/// `len` stamps, all 0, from zeroed memory (which the system hands out
/// without touching it: a column that starts being watched costs resident
/// memory only as its rows are written).
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
    /// in blocks of `1 << shift` rows (at most 64).
    pub(super) fn new(rows: usize, shift: u32) -> Self {
        debug_assert!(shift <= 6, "a block's mask holds 64 rows");
        Stamps {
            rows: zeroed_rows(rows),
            blocks: zeroed_blocks(rows >> shift),
            shift,
        }
    }

    /// Room for at least `rows` rows (a multiple of the block size); the
    /// new ones are 0.
    #[cold]
    pub(super) fn grow(&mut self, rows: usize) {
        if rows <= self.rows.len() {
            return;
        }
        let rows = rows.max(2 * self.rows.len());
        let mut new = zeroed_rows(rows);
        for (to, from) in new.iter_mut().zip(self.rows.iter_mut()) {
            *to.get_mut() = *from.get_mut();
        }
        self.rows = new;
        let mut new = zeroed_blocks(rows >> self.shift);
        for (to, from) in new.iter_mut().zip(self.blocks.iter_mut()) {
            std::mem::swap(to, from);
        }
        self.blocks = new;
    }

    /// The row capacity.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.rows.len()
    }

    /// Stamps `row` (within the capacity) with `tick`, the context's
    /// current one.
    ///
    /// Marks are never concurrent: they happen under an exclusive borrow of
    /// the archetype, or as a `ColumnAccess` hands a row or chunk out (a
    /// parallel query's chunks are handed out one at a time, under its
    /// iterator's lock). They go through atomics so that they can be made
    /// through a shared borrow; a concurrent mark would lose a block bit
    /// (a missed change), never be undefined behaviour.
    #[inline(always)]
    pub(super) fn mark(&self, row: u32, tick: u32) {
        let row = row as usize;
        self.rows[row].store(tick, Ordering::Relaxed);
        let size = 1usize << self.shift;
        self.blocks[row >> self.shift].mark(1 << (row & (size - 1)), tick);
    }

    /// Stamps rows `start..start + len` (within the capacity) with `tick`.
    ///
    /// # Safety
    /// No other thread may read or write those rows' stamps while this runs
    /// (the caller hands those rows out to one user).
    #[inline]
    pub(super) unsafe fn mark_range(&self, start: usize, len: usize, tick: u32) {
        let rows = &self.rows[start..start + len];
        // SAFETY: `AtomicU32` has the size, alignment and bit validity of
        // `u32`, and its `UnsafeCell` lets its value be written through a
        // shared borrow; the contract rules out any concurrent access to
        // these rows' stamps, so plain stores race with nothing. The range
        // is in bounds (the slice above is).
        let plain = unsafe { std::slice::from_raw_parts_mut(rows.as_ptr().cast::<u32>().cast_mut(), rows.len()) };
        plain.fill(tick);
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
            self.blocks[block].mark(bits, tick);
            row += count;
        }
    }

    /// The stamp of `row` (within the capacity), through a shared borrow.
    #[inline]
    pub(super) fn peek(&self, row: u32) -> u32 {
        self.rows
            .get(row as usize)
            .map_or(0, |stamp| stamp.load(Ordering::Relaxed))
    }

    /// The stamp of `row`.
    #[inline]
    pub(super) fn get(&mut self, row: u32) -> u32 {
        *self.rows[row as usize].get_mut()
    }

    /// Sets the stamp of `row` to `stamp` (a new row's 0, or the stamp of
    /// a row moved into it), keeping its block's summary true.
    #[inline]
    pub(super) fn set(&mut self, row: u32, stamp: u32) {
        let row = row as usize;
        *self.rows[row].get_mut() = stamp;
        let size = 1usize << self.shift;
        let bit = 1u64 << (row & (size - 1));
        let block = &mut self.blocks[row >> self.shift];
        let (tick, prev, mask) = (block.tick.get_mut(), block.prev.get_mut(), block.mask.get_mut());
        if stamp != 0 && stamp == *tick {
            *mask |= bit;
        } else if stamp > *tick {
            *prev = *tick;
            *tick = stamp;
            *mask = bit;
        } else {
            *mask &= !bit;
            *prev = (*prev).max(stamp);
        }
    }

    /// Calls `f` with each block among the first `len` rows that holds rows
    /// stamped after `since`: its first row, and a mask of those rows, in
    /// increasing order.
    #[inline]
    pub(super) fn changed_blocks(&mut self, len: usize, since: u32, f: impl FnMut(usize, u64)) {
        self.scan(len, since, f, |rows| {
            // SAFETY: `AtomicU32` has the size, alignment and bit validity
            // of `u32`; `&mut self` rules out any other access to these
            // stamps while the shared view lives.
            let rows: &[u32] = unsafe { std::slice::from_raw_parts(rows.as_ptr().cast::<u32>(), rows.len()) };
            newer_than(rows, since)
        });
    }

    /// As [`changed_blocks`](Stamps::changed_blocks), through a shared
    /// borrow (atomic loads, no SIMD): for sparse sets, scanned while other
    /// parts of the context are read.
    #[inline]
    pub(super) fn changed_blocks_shared(&self, len: usize, since: u32, f: impl FnMut(usize, u64)) {
        self.scan(len, since, f, |rows| {
            rows.iter().enumerate().fold(0, |mask, (i, stamp)| {
                mask | (u64::from(stamp.load(Ordering::Relaxed) > since) << i)
            })
        });
    }

    /// The block walk of both: a block whose largest stamp is not after
    /// `since` is skipped; one whose other rows are all at or before
    /// `since` gives its mask; the rest are read with `newer`.
    #[inline(always)]
    fn scan(&self, len: usize, since: u32, mut f: impl FnMut(usize, u64), newer: impl Fn(&[AtomicU32]) -> u64) {
        let size = 1usize << self.shift;
        let blocks = len.div_ceil(size).min(self.blocks.len());
        for (block, summary) in self.blocks[..blocks].iter().enumerate() {
            if summary.tick.load(Ordering::Relaxed) <= since {
                continue;
            }
            let start = block * size;
            let end = (start + size).min(len);
            let live = if end - start == 64 {
                u64::MAX
            } else {
                (1u64 << (end - start)) - 1
            };
            let changed = if summary.prev.load(Ordering::Relaxed) <= since {
                summary.mask.load(Ordering::Relaxed) & live
            } else {
                newer(&self.rows[start..end])
            };
            if changed != 0 {
                f(start, changed);
            }
        }
    }

    /// Subtracts `base` from every stamp (0 for those at or below it).
    pub(super) fn rebase(&mut self, base: u32) {
        for stamp in self.rows.iter_mut() {
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
        self.rows.len() * size_of::<AtomicU32>() + self.blocks.len() * size_of::<Block>()
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
        // Blocks of 64 rows and of 4 (a chunk of few, large rows).
        for shift in [6, 2] {
            let capacity = 256;
            let mut stamps = Stamps::new(capacity, shift);
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
            let rounds = if cfg!(miri) { 300 } else { 5_000 };
            for _ in 0..rounds {
                match next(7) {
                    0 | 1 => {
                        let row = next(len);
                        stamps.mark(row as u32, tick);
                        model[row] = tick;
                    }
                    2 => {
                        let start = next(len);
                        let count = next(len - start + 1);
                        // SAFETY: nothing else touches these stamps.
                        unsafe { stamps.mark_range(start, count, tick) };
                        model[start..start + count].fill(tick);
                    }
                    3 => {
                        // The last row moves into a hole, or a row is cleared.
                        let row = next(len);
                        let stamp = if next(2) == 0 { model[len - 1] } else { 0 };
                        stamps.set(row as u32, stamp);
                        model[row] = stamp;
                    }
                    4 => tick += 1,
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
                    }
                }
                let since = next(tick as usize + 1) as u32;
                assert_eq!(
                    found(&mut stamps, len, since, shift),
                    naive(&model, len, since),
                    "since {since}"
                );
                for (row, &stamp) in model.iter().enumerate().take(len) {
                    assert_eq!(stamps.get(row as u32), stamp);
                }
            }
        }
    }

    #[test]
    fn growing_keeps_every_stamp_and_block() {
        let mut stamps = Stamps::new(64, 6);
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
