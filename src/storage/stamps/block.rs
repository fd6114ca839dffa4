//! Block summaries: per block of rows, the largest stamp, the rows that
//! have it, and a bound on the others.

use std::sync::atomic::AtomicU64;

use super::tick::AtomicTick;

/// What one block of rows knows of its rows' stamps: the largest (`tick`),
/// which rows have it (`mask`: their own entries may be older, and are not
/// read), and a bound on every other (`prev`). So a consumer that last
/// looked at or after `prev` finds the block's changed rows in `mask`
/// without reading rows, which is the common case (writes since one
/// consumer's last look); others read the other rows' entries.
#[repr(C)]
pub(super) struct Block {
    /// At least every stamp of the block's rows (more after a row moved
    /// away: the block is then read once more by each consumer).
    pub(super) tick: AtomicTick,
    /// At least every stamp of the rows not in `mask`.
    pub(super) prev: AtomicTick,
    /// The rows (bit `i`: the block's row `i`) stamped `tick`.
    pub(super) mask: AtomicU64,
}

// The layout `zeroed_blocks` relies on.
const _: () = assert!(size_of::<Block>() == 16 && align_of::<Block>() == 8);

/// `len` block summaries, all 0, from zeroed memory (as `zeroed_rows`).
pub(super) fn zeroed_blocks(len: usize) -> Box<[Block]> {
    let plain = Box::into_raw(vec![[0u64; 2]; len].into_boxed_slice());
    // SAFETY: `Block` is `repr(C)` of two `AtomicTick`s (each a
    // `repr(transparent)` `AtomicU32`) and an `AtomicU64`: 16 bytes,
    // aligned to 8, with no padding, for which all zeros is valid (atomics
    // have their integers' bit validity), the size and alignment of
    // `[u64; 2]`. So the allocation of `len` zeroed `[u64; 2]` is one of
    // `len` valid `Block`s with the same layout, which the new box frees
    // with that same layout.
    unsafe { Box::from_raw(plain as *mut [Block]) }
}
