//! One column's change stamps (`Stamps`), the handle that marks one row
//! once a write stands (`Stamp`), and the last mark of a group of columns
//! (`LastMark`).

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use super::block::{Block, zeroed_blocks};
use super::clock::Floor;
use super::tick::{AtomicTick, Tick};

/// One row's change stamp, to be set once a write is known to stand (a
/// write whose observers may still refuse it, such as a primary index
/// checking the new key): [`mark`](Stamp::mark) sets it. Holds a shared
/// borrow of the stamps only, so the row's value can be lent out mutably
/// meanwhile.
#[derive(Clone, Copy)]
pub(crate) struct Stamp<'a> {
    stamps: Option<&'a Stamps>,
    row: u32,
    tick: Tick,
}

impl<'a> Stamp<'a> {
    /// `row` of `stamps` (if the column has them), to be stamped with
    /// `tick` ([`Tick::NEVER`]: not stamped).
    #[inline(always)]
    pub(in crate::storage) fn new(stamps: Option<&'a Stamps>, row: u32, tick: Tick) -> Self {
        Stamp { stamps, row, tick }
    }

    /// Nothing to stamp (a component without change stamps).
    pub(crate) const NONE: Stamp<'static> = Stamp {
        stamps: None,
        row: 0,
        tick: Tick::NEVER,
    };

    /// Stamps the row as changed.
    #[inline(always)]
    pub(crate) fn mark(&self) {
        if let Some(stamps) = self.stamps
            && !self.tick.is_never()
        {
            stamps.mark(self.row, self.tick);
        }
    }
}

/// The tick of the last mark in any of a group of stamped columns (an
/// archetype's), shared by their [`Stamps`]: at least every stamp among
/// them, so that when it is not above the floor, no row of the group was
/// stamped after it, and a check of one row's columns
/// ([`Archetype::row_stamped`](crate::storage::Archetype::row_stamped)) reads none
/// of them. The group's owner lowers it when it rebases their stamps.
#[derive(Clone, Default)]
pub(crate) struct LastMark(Arc<AtomicTick>);

impl LastMark {
    /// The tick now.
    #[inline(always)]
    pub(crate) fn get(&self) -> Tick {
        self.0.load()
    }

    /// Raises it to `tick` if below.
    #[inline(always)]
    fn raise(&self, tick: Tick) {
        self.0.raise(tick);
    }

    /// Sets it to `tick` (after a rebase: the largest of the group's own).
    pub(in crate::storage) fn set(&self, tick: Tick) {
        self.0.store(tick);
    }

    /// Whether `self` and `other` are the same (shared).
    pub(in crate::storage) fn is(&self, other: &LastMark) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The change stamps of one column.
pub(crate) struct Stamps {
    /// Per row (across chunks), the tick of its last mutable access, unless
    /// its block's mask holds it (its stamp is then the block's tick).
    /// Allocated the first time a row needs an entry of its own (a write
    /// to whole blocks never does): until then every entry is 0.
    pub(super) rows: OnceLock<Box<[AtomicTick]>>,
    /// Rows the stamps have room for.
    capacity: usize,
    /// Per block of `1 << shift` rows, a summary of its rows' stamps.
    pub(super) blocks: Box<[Block]>,
    /// Per span of 64 blocks, the largest `tick` among them: a scan since
    /// a tick skips a span not newer without comparing its blocks.
    pub(super) spans: Box<[AtomicTick]>,
    pub(super) shift: u32,
    /// At least every stamp of the column (the tick of its last mark): a
    /// column not marked since the floor has no live row, which
    /// [`is_live`](Stamps::is_live) answers without reading the row.
    pub(super) latest: AtomicTick,
    /// The last mark of the column's group (shared).
    group: LastMark,
    /// The context's floor (shared).
    floor: Floor,
}

/// `len` stamps, all 0, from zeroed memory (which the system hands out
/// without touching it: entries cost resident memory only as rows get
/// entries of their own).
fn zeroed_rows(len: usize) -> Box<[AtomicTick]> {
    let plain = Box::into_raw(vec![0u32; len].into_boxed_slice());
    // SAFETY: `AtomicTick` is a `repr(transparent)` `AtomicU32`, which has
    // the size, alignment and bit validity of `u32` (documented), so the
    // allocation of `len` zeroed `u32`s is one of `len` valid `AtomicTick`s
    // (each `Tick::NEVER`) with the same layout, which the new box frees
    // with that same layout; the `u32` box was released by `into_raw`.
    unsafe { Box::from_raw(plain as *mut [AtomicTick]) }
}

/// Blocks per span, as a shift (64: one mask of a scan).
pub(super) const SPAN_SHIFT: u32 = 6;

/// The span summaries for `blocks` blocks, all `NEVER`.
fn zeroed_spans(blocks: usize) -> Box<[AtomicTick]> {
    (0..blocks.div_ceil(1 << SPAN_SHIFT))
        .map(|_| AtomicTick::default())
        .collect()
}

impl Stamps {
    /// Stamps for `rows` rows (a multiple of the block size), every one 0,
    /// in blocks of `1 << shift` rows (at most 64), below the context's
    /// `floor`.
    pub(in crate::storage) fn new(rows: usize, shift: u32, floor: Floor, group: LastMark) -> Self {
        debug_assert!(shift <= 6, "a block's mask holds 64 rows");
        Stamps {
            rows: OnceLock::new(),
            capacity: rows,
            blocks: zeroed_blocks(rows >> shift),
            spans: zeroed_spans(rows >> shift),
            shift,
            latest: AtomicTick::default(),
            group,
            floor,
        }
    }

    /// Whether `row` (within the capacity) was stamped after the floor:
    /// changed for some consumer.
    #[inline]
    pub(in crate::storage) fn is_live(&self, row: u32) -> bool {
        let floor = self.floor.get();
        self.latest.load().is_newer_than(floor) && self.peek(row).is_newer_than(floor)
    }

    /// The tick of the column's last mark: at least every stamp in it.
    #[inline]
    pub(in crate::storage) fn latest(&self) -> Tick {
        self.latest.load()
    }

    /// Every row's own entry, allocated now if it was not.
    #[inline]
    fn entries(&self) -> &[AtomicTick] {
        self.rows.get_or_init(|| zeroed_rows(self.capacity))
    }

    /// Room for at least `rows` rows (a multiple of the block size); the
    /// new ones are 0.
    #[cold]
    pub(in crate::storage) fn grow(&mut self, rows: usize) {
        if rows <= self.capacity {
            return;
        }
        let rows = rows.max(2 * self.capacity);
        if let Some(old) = self.rows.get_mut() {
            let mut new = zeroed_rows(rows);
            for (to, from) in new.iter_mut().zip(old.iter_mut()) {
                to.write(from.read());
            }
            self.rows = OnceLock::from(new);
        }
        self.capacity = rows;
        let mut new = zeroed_blocks(rows >> self.shift);
        for (to, from) in new.iter_mut().zip(self.blocks.iter_mut()) {
            std::mem::swap(to, from);
        }
        self.blocks = new;
        let mut new = zeroed_spans(rows >> self.shift);
        for (to, from) in new.iter_mut().zip(self.spans.iter_mut()) {
            to.write(from.read());
        }
        self.spans = new;
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
    pub(in crate::storage) fn mark(&self, row: u32, tick: Tick) {
        let row = row as usize;
        let size = 1usize << self.shift;
        self.mark_block(row >> self.shift, 1 << (row & (size - 1)), tick);
    }

    /// Stamps rows `start..start + len` (within the capacity) with `tick`:
    /// a store per block.
    #[inline]
    pub(in crate::storage) fn mark_range(&self, start: usize, len: usize, tick: Tick) {
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
    fn mark_block(&self, block: usize, bits: u64, tick: Tick) {
        let summary = &self.blocks[block];
        let (old, mask) = (summary.tick.load(), summary.mask.load(Ordering::Relaxed));
        if old == tick {
            summary.mask.store(mask | bits, Ordering::Relaxed);
        } else {
            // Rows stamped `old` at or below the floor need no entry: their
            // old entries (lower) read as unchanged to every consumer too.
            let leaving = mask & !bits;
            if leaving != 0 && old.is_newer_than(self.floor.get()) {
                self.keep_stamps(block, leaving, old);
            }
            summary.prev.store(old);
            summary.tick.store(tick);
            summary.mask.store(bits, Ordering::Relaxed);
            self.spans[block >> SPAN_SHIFT].raise(tick);
            // A mark's tick is the context's current one, at least every
            // stamp there is: marks racing on other threads store the same.
            if tick.is_newer_than(self.latest.load()) {
                self.latest.store(tick);
                self.group.raise(tick);
            }
        }
    }

    /// Writes `stamp` into the entries of block `block`'s rows `bits`
    /// (rows leaving its mask at that stamp).
    #[inline]
    fn keep_stamps(&self, block: usize, mut bits: u64, stamp: Tick) {
        let (start, rows) = (block << self.shift, self.entries());
        while bits != 0 {
            rows[start + bits.trailing_zeros() as usize].store(stamp);
            bits &= bits - 1;
        }
    }

    /// The stamp of `row` (within the capacity), through a shared borrow:
    /// exact above the floor; at or below it, some tick at or below it.
    #[inline]
    pub(in crate::storage) fn peek(&self, row: u32) -> Tick {
        let row = row as usize;
        if row >= self.capacity {
            return Tick::NEVER;
        }
        let summary = &self.blocks[row >> self.shift];
        let size = 1usize << self.shift;
        if summary.mask.load(Ordering::Relaxed) & (1 << (row & (size - 1))) != 0 {
            summary.tick.load()
        } else {
            self.rows.get().map_or(Tick::NEVER, |rows| rows[row].load())
        }
    }

    /// The stamp of `row` (as [`peek`](Stamps::peek)).
    #[inline]
    pub(in crate::storage) fn get(&mut self, row: u32) -> Tick {
        self.peek(row)
    }

    /// Sets the stamp of `row` to `stamp` (a new row's `NEVER`, or the
    /// stamp of a row moved into it), keeping its block's summary true.
    #[inline]
    pub(in crate::storage) fn set(&mut self, row: u32, stamp: Tick) {
        let latest = self.latest.read();
        self.latest.write(latest.newer(stamp));
        self.group.raise(stamp);
        let row = row as usize;
        let size = 1usize << self.shift;
        let (block, bit) = (row >> self.shift, 1u64 << (row & (size - 1)));
        let (tick, mask) = {
            let summary = &mut self.blocks[block];
            (summary.tick.read(), *summary.mask.get_mut())
        };
        if !stamp.is_never() && stamp == tick {
            *self.blocks[block].mask.get_mut() = mask | bit;
        } else if stamp.is_newer_than(tick) {
            let leaving = mask & !bit;
            if leaving != 0 {
                self.keep_stamps(block, leaving, tick);
            }
            let summary = &mut self.blocks[block];
            summary.prev.write(tick);
            summary.tick.write(stamp);
            *summary.mask.get_mut() = bit;
            self.spans[block >> SPAN_SHIFT].raise(stamp);
        } else {
            // An entry not allocated yet is 0 already.
            if !stamp.is_never() || self.rows.get().is_some() {
                self.entries()[row].store(stamp);
            }
            let summary = &mut self.blocks[block];
            *summary.mask.get_mut() = mask & !bit;
            let prev = summary.prev.read();
            summary.prev.write(prev.newer(stamp));
        }
    }

    /// Lowers every stamp by `base` (`NEVER` for those at or below it).
    pub(in crate::storage) fn rebase(&mut self, base: Tick) {
        let latest = self.latest.read();
        self.latest.write(latest.rebased(base));
        for stamp in self.rows.get_mut().map_or(&mut [][..], |rows| &mut rows[..]) {
            let rebased = stamp.read().rebased(base);
            stamp.write(rebased);
        }
        for block in self.blocks.iter_mut() {
            for tick in [&mut block.tick, &mut block.prev] {
                let rebased = tick.read().rebased(base);
                tick.write(rebased);
            }
        }
        for span in self.spans.iter_mut() {
            let rebased = span.read().rebased(base);
            span.write(rebased);
        }
    }

    /// The row capacity.
    #[inline]
    pub(in crate::storage) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Checks the invariants of the module docs that one column's stamps
    /// can tell (2 to 6): they share `floor` (and `group`'s last mark, if
    /// given, which is at least their latest mark); their room; nothing
    /// stamped after `now`; and per block, `prev` at most `tick` at most
    /// the latest mark, every row out of the mask at most `prev`. Reads
    /// every entry: for tests.
    pub(in crate::storage) fn check(&self, now: Tick, floor: &Floor, group: Option<&LastMark>) -> Result<(), String> {
        if !self.floor.is(floor) {
            return Err("change stamps do not share the context's floor".into());
        }
        let latest = self.latest.load();
        if let Some(group) = group {
            if !self.group.is(group) {
                return Err("change stamps do not share their archetype's last mark".into());
            }
            if latest.is_newer_than(group.get()) {
                return Err(format!(
                    "a column's last mark {latest} is after its archetype's {}",
                    group.get()
                ));
            }
        }
        if latest.is_newer_than(now) {
            return Err(format!("a column was stamped {latest}, after the current tick {now}"));
        }
        if self.blocks.len() << self.shift != self.capacity
            || self.spans.len() != self.blocks.len().div_ceil(1 << SPAN_SHIFT)
            || self.rows.get().is_some_and(|rows| rows.len() != self.capacity)
        {
            return Err(format!(
                "change stamps for {} rows hold {} blocks of {} rows and {:?} row entries",
                self.capacity,
                self.blocks.len(),
                1 << self.shift,
                self.rows.get().map(|rows| rows.len())
            ));
        }
        let size = 1usize << self.shift;
        for (at, block) in self.blocks.iter().enumerate() {
            let (tick, prev, mask) = (block.tick.load(), block.prev.load(), block.mask.load(Ordering::Relaxed));
            let span = self.spans[at >> SPAN_SHIFT].load();
            if prev.is_newer_than(tick) || tick.is_newer_than(span) || span.is_newer_than(latest) {
                return Err(format!(
                    "block {at} of change stamps: prev {prev}, tick {tick}, its span's {span}, last mark {latest} \
                     (not in order)"
                ));
            }
            let Some(rows) = self.rows.get() else {
                continue;
            };
            for (i, entry) in rows[at * size..(at + 1) * size].iter().enumerate() {
                if mask & (1 << i) == 0 && entry.load().is_newer_than(prev) {
                    return Err(format!(
                        "row {} of change stamps is stamped {} out of its block's mask, after its block's prev {prev}",
                        at * size + i,
                        entry.load()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Bytes held.
    pub(in crate::storage) fn bytes(&self) -> usize {
        self.rows.get().map_or(0, |rows| rows.len() * size_of::<AtomicTick>())
            + self.blocks.len() * size_of::<Block>()
            + self.spans.len() * size_of::<AtomicTick>()
    }
}
