//! Reading given runs of rows of one archetype in place: what
//! [`Context::drain_collected`](crate::Context::drain_collected) walks for
//! the rows stamped since a collector last looked.

use crate::query_param::QueryParam;
use crate::storage::ColumnAccess;

/// Calls `f` with the items of `Q` of the rows of one archetype (the one
/// `columns` takes from, whose chunks hold `1 << shift` rows) that `runs`
/// names: `runs` calls the closure it is given with each run's first row
/// and length, in increasing order, no run crossing a chunk boundary.
/// Nothing if the archetype lacks a component `Q` requires. Gives how
/// many rows it visited.
pub(crate) fn for_each_in_runs<'w, Q: QueryParam>(
    mut columns: ColumnAccess<'w, '_>,
    shift: u32,
    runs: impl FnOnce(&mut dyn FnMut(usize, usize)),
    f: &mut impl FnMut(Q::Item<'w>),
) -> usize {
    let mut lens = columns.chunk_lens();
    let Some(mut state) = Q::fetch(&mut columns) else {
        return 0;
    };
    let mut visited = 0;
    let in_chunk = (1usize << shift) - 1;
    // The chunk being read: its index, and what is left of it (from row
    // `at` of the chunk on).
    let mut current: Option<(usize, Q::Chunk<'w>, usize)> = None;
    let mut next_chunk = 0;
    runs(&mut |first, len| {
        let (chunk, offset) = (first >> shift, first & in_chunk);
        let (rest, at) = match current.take() {
            Some((index, rest, at)) if index == chunk => (rest, at),
            _ => {
                // Chunks before this one hold no run: skip them.
                let mut data = None;
                while next_chunk <= chunk {
                    let Some(rows) = lens.next() else {
                        return;
                    };
                    data = Some(Q::next_chunk(&mut state, rows));
                    next_chunk += 1;
                }
                let Some(data) = data else {
                    return;
                };
                (data, 0)
            }
        };
        let (_, from_run) = Q::split_chunk(rest, offset - at);
        let (run, after) = Q::split_chunk(from_run, len);
        Q::rows(run, len).for_each(&mut *f);
        visited += len;
        current = Some((chunk, after, offset + len));
    });
    visited
}
