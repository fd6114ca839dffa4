//! The changed-rows scan: the blocks of a column holding rows stamped after
//! a tick, read from the block summaries, row entries only where needed.

use std::sync::atomic::Ordering;

use super::column::{SPAN_SHIFT, Stamps};
use super::tick::{AtomicTick, Tick};

impl Stamps {
    /// Calls `f` with each block among the first `len` rows that holds rows
    /// stamped after `since`: its first row, and a mask of those rows, in
    /// increasing order.
    #[inline]
    pub(in crate::storage) fn changed_blocks(&mut self, len: usize, since: Tick, f: impl FnMut(usize, u64)) {
        let blocks = ChangedBlocks::new(self, len, since, |rows: &[AtomicTick]| {
            // SAFETY: `AtomicTick` is a `repr(transparent)` `AtomicU32`,
            // which has the size, alignment and bit validity of `u32`;
            // `&mut self` rules out any other access to these stamps while
            // the shared view lives.
            let rows: &[u32] = unsafe { std::slice::from_raw_parts(rows.as_ptr().cast::<u32>(), rows.len()) };
            newer_than(rows, since)
        });
        blocks.run(f);
    }

    /// As [`changed_blocks`](Stamps::changed_blocks), as an iterator and
    /// through a shared borrow (atomic loads, no SIMD): for rows read
    /// meanwhile, and for sparse sets, scanned while other parts of the
    /// context are read.
    #[inline]
    pub(in crate::storage) fn changed_blocks_shared(
        &self,
        len: usize,
        since: Tick,
    ) -> impl Iterator<Item = (usize, u64)> + '_ {
        ChangedBlocks::new(self, len, since, move |rows: &[AtomicTick]| {
            rows.iter().enumerate().fold(0, |mask, (i, stamp)| {
                mask | (u64::from(stamp.load().is_newer_than(since)) << i)
            })
        })
    }
}

/// The blocks among a column's first `len` rows holding rows stamped
/// after `since`, in increasing order: each block's first row and a mask of
/// those rows. A block whose largest stamp is not after `since` is skipped;
/// one whose other rows are all at or before `since` gives its mask; the
/// rest are read with `newer`.
///
/// Blocks are taken a span (64) at a time: a span whose tick is not after
/// `since` is skipped unread; the others' blocks are compared into a mask
/// without a branch per block (a scattered write leaves about every other
/// block changed, which no branch predictor guesses), then the changed
/// ones are read.
struct ChangedBlocks<'a, N> {
    stamps: &'a Stamps,
    len: usize,
    since: Tick,
    newer: N,
    /// The next span of 64 blocks to compare, and how many blocks hold rows.
    span: usize,
    blocks: usize,
    /// The blocks of the group compared last not read yet, and its first.
    touched: u64,
    first: usize,
}

impl<'a, N: Fn(&[AtomicTick]) -> u64> ChangedBlocks<'a, N> {
    #[inline(always)]
    fn new(stamps: &'a Stamps, len: usize, since: Tick, newer: N) -> Self {
        // A column not marked since `since` has no block to read.
        let blocks = if stamps.latest.load().is_newer_than(since) {
            len.div_ceil(1 << stamps.shift).min(stamps.blocks.len())
        } else {
            0
        };
        ChangedBlocks {
            stamps,
            len,
            since,
            newer,
            span: 0,
            blocks,
            touched: 0,
            first: 0,
        }
    }
}

impl<N: Fn(&[AtomicTick]) -> u64> ChangedBlocks<'_, N> {
    /// The rows of block `block` stamped after `since` (its mask's, and
    /// its other rows' entries only if its `prev` is after `since`).
    #[inline(always)]
    fn changed_in(&self, block: usize) -> (usize, u64) {
        let stamps = self.stamps;
        let size = 1usize << stamps.shift;
        let summary = &stamps.blocks[block];
        let start = block * size;
        let end = (start + size).min(self.len);
        let live = if end - start == 64 {
            u64::MAX
        } else {
            (1u64 << (end - start)) - 1
        };
        // The rows in the mask have the block's tick, after `since`; the
        // others their own entries.
        let mask = summary.mask.load(Ordering::Relaxed);
        let changed = if !summary.prev.load().is_newer_than(self.since) {
            mask & live
        } else {
            let own = stamps.rows.get().map_or(0, |rows| (self.newer)(&rows[start..end]));
            (own | mask) & live
        };
        (start, changed)
    }

    /// Moves to the next span with a block after `since`: its blocks that
    /// are go to `touched`. False when no span is left.
    #[inline(always)]
    fn next_span(&mut self) -> bool {
        let stamps = self.stamps;
        let since = self.since;
        loop {
            let first = self.span << SPAN_SHIFT;
            if first >= self.blocks {
                return false;
            }
            let span = self.span;
            self.span += 1;
            if !stamps.spans[span].load().is_newer_than(since) {
                continue;
            }
            let blocks = &stamps.blocks[first..(first + (1 << SPAN_SHIFT)).min(self.blocks)];
            self.touched = blocks.iter().enumerate().fold(0u64, |touched, (i, summary)| {
                touched | (u64::from(summary.tick.load().is_newer_than(since)) << i)
            });
            self.first = first;
            return true;
        }
    }

    /// Calls `f` with each changed block, as the iterator gives them, with
    /// the scan's state in locals rather than kept between calls.
    #[inline(always)]
    fn run(mut self, mut f: impl FnMut(usize, u64)) {
        while self.next_span() {
            let mut touched = self.touched;
            while touched != 0 {
                let block = self.first + touched.trailing_zeros() as usize;
                touched &= touched - 1;
                let (start, changed) = self.changed_in(block);
                if changed != 0 {
                    f(start, changed);
                }
            }
        }
    }
}

impl<N: Fn(&[AtomicTick]) -> u64> Iterator for ChangedBlocks<'_, N> {
    type Item = (usize, u64);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, u64)> {
        loop {
            while self.touched != 0 {
                let block = self.first + self.touched.trailing_zeros() as usize;
                self.touched &= self.touched - 1;
                let (start, changed) = self.changed_in(block);
                if changed != 0 {
                    return Some((start, changed));
                }
            }
            if !self.next_span() {
                return None;
            }
        }
    }
}

/// A mask of the `stamps` (at most 64, ticks' numbers) newer than `since`:
/// bit `i` for `stamps[i]`, as [`Tick::is_newer_than`] says. Stamps and
/// ticks stay below 2^31 (they are rebased at
/// [`Clock::REBASE_AT`](super::Clock::REBASE_AT)), so a signed compare is
/// the unsigned one, four at a time with SSE2.
#[inline]
pub(super) fn newer_than(stamps: &[u32], since: Tick) -> u64 {
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
            let limit = _mm_set1_epi32(since.get() as i32);
            for (i, quad) in quads.enumerate() {
                let values = _mm_loadu_si128(quad.as_ptr().cast::<__m128i>());
                let newer = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(values, limit)));
                mask |= (newer as u64) << (4 * i);
            }
        }
        done
    };
    for (i, &stamp) in stamps[done..].iter().enumerate() {
        mask |= u64::from(Tick::new(stamp).is_newer_than(since)) << (done + i);
    }
    mask
}
