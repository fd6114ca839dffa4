//! Change stamps: for a column that some consumer watches for changes, the
//! change tick of the last mutable access to each row, and per block of rows
//! (64, or a whole chunk when chunks are smaller) the largest of them, so a
//! consumer finds "rows changed since tick `t`" without reading the rows of
//! untouched blocks.
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

use std::sync::atomic::{AtomicU32, Ordering};

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
    /// Per block of `1 << shift` rows, at least the largest of its rows'
    /// stamps (never less; a row that moved away may leave it larger).
    blocks: Box<[AtomicU32]>,
    shift: u32,
}

/// A boxed slice of `len` zeroed stamps.
fn zeroed(len: usize) -> Box<[AtomicU32]> {
    (0..len).map(|_| AtomicU32::new(0)).collect()
}

impl Stamps {
    /// Stamps for `rows` rows (a multiple of the block size), every one 0,
    /// in blocks of `1 << shift` rows.
    pub(super) fn new(rows: usize, shift: u32) -> Self {
        Stamps {
            rows: zeroed(rows),
            blocks: zeroed(rows >> shift),
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
        let copy = |old: &mut Box<[AtomicU32]>, len: usize| {
            let mut new = zeroed(len);
            for (to, from) in new.iter_mut().zip(old.iter_mut()) {
                *to.get_mut() = *from.get_mut();
            }
            *old = new;
        };
        copy(&mut self.rows, rows);
        copy(&mut self.blocks, rows >> self.shift);
    }

    /// The row capacity.
    #[inline]
    pub(super) fn capacity(&self) -> usize {
        self.rows.len()
    }

    /// Stamps `row` (within the capacity) with `tick`.
    #[inline(always)]
    pub(super) fn mark(&self, row: u32, tick: u32) {
        let row = row as usize;
        self.rows[row].store(tick, Ordering::Relaxed);
        self.blocks[row >> self.shift].store(tick, Ordering::Relaxed);
    }

    /// Stamps rows `start..start + len` (within the capacity) with `tick`.
    ///
    /// # Safety
    /// No other thread may read or write those rows' stamps while this runs
    /// (the caller hands those rows out to one user; blocks are stored
    /// atomically, so they may be shared).
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
        if len == 0 {
            return;
        }
        for block in (start >> self.shift)..=((start + len - 1) >> self.shift) {
            self.blocks[block].store(tick, Ordering::Relaxed);
        }
    }

    /// The stamp of `row`.
    #[inline]
    pub(super) fn get(&mut self, row: u32) -> u32 {
        *self.rows[row as usize].get_mut()
    }

    /// Sets the stamp of `row` to `stamp` (a new row's 0, or the stamp of
    /// a row moved into it); its block's summary stays at least as large.
    #[inline]
    pub(super) fn set(&mut self, row: u32, stamp: u32) {
        let row = row as usize;
        *self.rows[row].get_mut() = stamp;
        let block = self.blocks[row >> self.shift].get_mut();
        *block = (*block).max(stamp);
    }

    /// Calls `f` with each of the first `len` rows stamped after `since`,
    /// in increasing order.
    #[inline]
    pub(super) fn changed(&mut self, len: usize, since: u32, mut f: impl FnMut(u32)) {
        let size = 1usize << self.shift;
        for (block, summary) in self.blocks.iter_mut().enumerate() {
            let start = block * size;
            if start >= len {
                break;
            }
            if *summary.get_mut() <= since {
                continue;
            }
            let end = (start + size).min(len);
            let mut largest = 0;
            for (row, stamp) in self.rows[start..end].iter_mut().enumerate() {
                let stamp = *stamp.get_mut();
                largest = largest.max(stamp);
                if stamp > since {
                    f((start + row) as u32);
                }
            }
            // Tighten the summary: rows that moved away no longer count.
            *summary.get_mut() = largest;
        }
    }

    /// Subtracts `base` from every stamp (0 for those at or below it).
    pub(super) fn rebase(&mut self, base: u32) {
        for stamp in self.rows.iter_mut().chain(self.blocks.iter_mut()) {
            let stamp = stamp.get_mut();
            *stamp = stamp.saturating_sub(base);
        }
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        (self.rows.len() + self.blocks.len()) * size_of::<AtomicU32>()
    }
}
