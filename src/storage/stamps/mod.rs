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
