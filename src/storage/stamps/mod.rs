//! Change stamps: for a column that some consumer watches for changes, the
//! change tick of the last mutable access to each row, and per block of rows
//! (64, or a whole chunk when chunks are smaller) a summary (the largest
//! stamp, the rows that have it, a bound on the others), so a consumer finds
//! "rows changed since tick `t`" without reading untouched blocks, and
//! usually without reading the rows of touched ones.
//!
//! The ideas, each under its own name, one file each:
//! - a [`Tick`] (`tick.rs`): a point in the context's change time, a plain
//!   `u32` compared in one place ([`Tick::is_newer_than`]); [`Tick::NEVER`]
//!   (0) is "never changed", the stamp of a new row;
//! - the [`Clock`] and the [`Floor`] (`clock.rs`): the tick writes stamp
//!   now, ended each time a consumer looks and rebased long before it
//!   could wrap; and the tick at or below which no stamp matters any more,
//!   the oldest look of an active consumer. The rules for both (when to
//!   rebase and by how much, where the floor stands, which looks hold it)
//!   are the clock's; which consumers look, and when, is the context's
//!   (`context/tracking.rs`);
//! - a column's [`Stamps`] (`column.rs`), its [`Stamp`] handle for one
//!   write that may still be refused, and the [`LastMark`] an archetype's
//!   stamped columns share (so a check of one row reads no column when
//!   nothing was stamped since the floor);
//! - the block summaries (`block.rs`): per block, the largest stamp
//!   (`tick`), the rows that have it (`mask`) and a bound on the others
//!   (`prev`); and per span of 64 blocks, the largest block `tick`, so a
//!   scan skips a span with nothing new without reading its blocks;
//! - the changed-rows scan (`scan.rs`): the blocks holding rows stamped
//!   after a consumer's last look, 64 summaries compared at a time, rows
//!   read only where the summary cannot tell.
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
//! A row that moves inside its archetype (the last row filling a hole)
//! takes its stamp along; a row that leaves its archetype leaves it behind
//! (the context hands what it was stamped for to the collectors that watch
//! it before the row moves, then clears it).
//!
//! Stamps are atomics so that a mark through a shared borrow of the
//! archetype (a `ColumnAccess` made from an exclusive one, each row handed
//! out once) is sound; marks use relaxed loads and stores (plain ones on
//! every target).
//!
//! # Invariants
//!
//! Written here once; `Context::check_invariants` checks those marked
//! (checked) through `Clock::check`, `Stamps::check`,
//! `Archetype::check_stamps`, `SparseSets::check_stamps` and the context's
//! `check_looks`.
//!
//! 1. The clock's tick `now` is in `1..=Clock::REBASE_AT` (2^30): it only
//!    grows, and is rebased before it passes 2^30, so every tick is below
//!    2^31 and the scan may compare stamps as signed numbers. (checked)
//! 2. Nothing is stamped after `now` (a mark stamps `now`; a move copies a
//!    stamp); every consumer's last look is a tick ended, before `now`.
//!    (checked)
//! 3. The floor is before `now`, and while a consumer is active it is the
//!    oldest last look of an active consumer: never past one, so no change
//!    a consumer has yet to take is at or below it. Every stamped column
//!    and sparse set of a context shares its one floor. (checked)
//! 4. Per block: `prev <= tick`; every row out of `mask` has an entry at
//!    most `prev`; the rows in `mask` read as `tick` (their own entries are
//!    not read). (checked)
//! 5. A column's latest mark is at least every span's tick, a span's tick
//!    at least the `tick` of each of its 64 blocks (so every stamp in
//!    them), and its archetype's [`LastMark`], shared by the
//!    archetype's stamped columns, is at least every column's latest mark.
//!    (checked)
//! 6. A column's stamps have room for every row of its archetype (a sparse
//!    set's for every indexed slot): a whole number of blocks, one entry
//!    per row once entries are allocated. (checked)
//! 7. A column (or sparse set) has stamps exactly while its component is
//!    watched; a sparse slot without a value is unstamped. (checked)
//! 8. A row's stamp reads exact while it is after the floor; at or below
//!    the floor it reads as some tick at or below the floor (the old entry
//!    stands for it). Not checkable from the state alone: the model test
//!    (`tests.rs`) checks it against a naive model through marks, moves,
//!    floor rises and rebases.

mod block;
mod clock;
mod column;
mod scan;
#[cfg(test)]
mod tests;
mod tick;

pub(crate) use clock::{Clock, Floor};
pub(crate) use column::{LastMark, Stamp, Stamps};
pub(crate) use tick::Tick;
