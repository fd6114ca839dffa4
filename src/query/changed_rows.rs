//! Reading given blocks of rows of one archetype in place: what
//! [`CollectorMut::drain`](crate::CollectorMut::drain) walks for
//! the rows stamped since a collector last looked.

use crate::query_param::QueryParam;
use crate::storage::ColumnAccess;

/// Calls `f` with the items of `Q` of the rows of one archetype (the one
/// `columns` takes from, whose chunks hold `1 << shift` rows) that `blocks`
/// names: each block's first row and a mask of its rows to read (bit `i`:
/// the block's row `i`), blocks in increasing order, no block crossing a
/// chunk boundary. Each run of set bits is read as one slice per column,
/// but the row of a block with one changed row alone is read with `lone`
/// (the item of one row, without the chunk cursor's set-up; `None` if that
/// cannot read it, then it is read as a run). Nothing if the archetype
/// lacks a component `Q` requires. Gives how many rows it visited.
pub(crate) fn for_each_in_blocks<'w, Q: QueryParam>(
    mut columns: ColumnAccess<'w, '_>,
    shift: u32,
    blocks: impl IntoIterator<Item = (usize, u64)>,
    lone: impl Fn(u32) -> Option<Q::Item<'w>>,
    f: &mut impl FnMut(Q::Item<'w>),
) -> usize {
    let mut lens = columns.chunk_lens();
    let Some(mut state) = Q::fetch(&mut columns) else {
        return 0;
    };
    let mut visited = 0;
    let in_chunk = (1usize << shift) - 1;
    // The chunk being read: its index, what is left of it, and the row of
    // the chunk that part starts at.
    let mut current: Option<(usize, Q::Chunk<'w>, usize)> = None;
    let mut next_chunk = 0;
    'blocks: for (start, mut mask) in blocks {
        if mask != 0
            && mask & (mask - 1) == 0
            && let Some(item) = lone((start + mask.trailing_zeros() as usize) as u32)
        {
            // A scattered write's common block: one row, read where it is.
            f(item);
            visited += 1;
            continue;
        }
        let (chunk, offset) = (start >> shift, start & in_chunk);
        let (mut rest, mut at) = match current.take() {
            Some((index, rest, at)) if index == chunk => (rest, at),
            _ => {
                // Chunks before this one hold nothing to read: skip them.
                let mut data = None;
                while next_chunk <= chunk {
                    let Some(rows) = lens.next() else {
                        break 'blocks;
                    };
                    data = Some(Q::next_chunk(&mut state, rows));
                    next_chunk += 1;
                }
                let Some(data) = data else {
                    continue;
                };
                (data, 0)
            }
        };
        while mask != 0 {
            let skip = mask.trailing_zeros() as usize;
            let ones = (mask >> skip).trailing_ones() as usize;
            let first = offset + skip;
            let (_, from_run) = Q::split_chunk(rest, first - at);
            let (run, after) = Q::split_chunk(from_run, ones);
            // A lone row (the common run of a scattered write) without the
            // set-up of a loop over a slice.
            if ones == 1 {
                Q::rows(run, 1).next().into_iter().for_each(&mut *f);
            } else {
                Q::rows(run, ones).for_each(&mut *f);
            }
            visited += ones;
            (rest, at) = (after, first + ones);
            mask = if skip + ones >= 64 {
                0
            } else {
                mask & !(((1u64 << ones) - 1) << skip)
            };
        }
        current = Some((chunk, rest, at));
    }
    visited
}
