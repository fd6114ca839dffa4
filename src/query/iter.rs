//! How a query walks storage: the archetypes it accepts, their chunks in
//! lock-step across columns, and the rows of each chunk.

use super::param::QueryParam;
use crate::storage::{ChunkLens, ColumnAccess};

/// The chunks of the archetypes that `archetypes` yields, in order, with
/// their row counts.
pub(super) struct ChunkIter<'w, Q: QueryParam, I> {
    archetypes: I,
    current: Option<(Q::State<'w>, ChunkLens<'w>)>,
}

impl<'w, 'p, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w, 'p>>> ChunkIter<'w, Q, I> {
    #[inline]
    pub(super) fn new(archetypes: I) -> Self {
        ChunkIter {
            archetypes,
            current: None,
        }
    }
}

impl<'w, 'p, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w, 'p>>> Iterator for ChunkIter<'w, Q, I> {
    type Item = (Q::Chunk<'w>, usize);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((state, lens)) = &mut self.current
                && let Some(len) = lens.next()
            {
                return Some((Q::next_chunk(state, len), len));
            }
            let mut columns = self.archetypes.next()?;
            let state = Q::fetch(&mut columns);
            // The filter checked the required components and `Access` the aliasing,
            // so every visited archetype can be fetched.
            debug_assert!(state.is_some(), "a query skipped an archetype it accepted");
            self.current = state.map(|state| (state, columns.chunk_lens()));
        }
    }

    /// One tight loop per archetype's chunks, without the per-chunk state
    /// checks of `next`: what `for_each`, `for_each_chunk` and `RowIter`'s
    /// `fold` run on.
    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, mut f: F) -> B {
        let mut acc = init;
        if let Some((mut state, lens)) = self.current {
            for len in lens {
                acc = f(acc, (Q::next_chunk(&mut state, len), len));
            }
        }
        self.archetypes.fold(acc, |mut acc, mut columns| {
            let Some(mut state) = Q::fetch(&mut columns) else {
                debug_assert!(false, "a query skipped an archetype it accepted");
                return acc;
            };
            for len in columns.chunk_lens() {
                acc = f(acc, (Q::next_chunk(&mut state, len), len));
            }
            acc
        })
    }
}

/// The items of the chunks of a [`ChunkIter`], one entity at a time.
pub(super) struct RowIter<'w, Q: QueryParam, I> {
    chunks: ChunkIter<'w, Q, I>,
    /// The current chunk's rows (at first, an empty chunk's).
    rows: Q::Rows<'w>,
}

impl<'w, 'p, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w, 'p>>> Iterator for RowIter<'w, Q, I> {
    type Item = Q::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self.rows.next() {
            Some(item) => Some(item),
            None => self.next_in_next_chunk(),
        }
    }

    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, mut f: F) -> B {
        let acc = self.rows.fold(init, &mut f);
        self.chunks
            .fold(acc, |acc, (chunk, len)| Q::rows(chunk, len).fold(acc, &mut f))
    }
}

impl<'w, 'p, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w, 'p>>> RowIter<'w, Q, I> {
    /// The first item of the next non-empty chunk, once the current one is
    /// used up (out of line: the per-row path stays one check).
    #[inline(never)]
    fn next_in_next_chunk(&mut self) -> Option<Q::Item<'w>> {
        loop {
            let (chunk, len) = self.chunks.next()?;
            self.rows = Q::rows(chunk, len);
            if let Some(item) = self.rows.next() {
                return Some(item);
            }
        }
    }
}

#[inline]
pub(super) fn rows<'w, 'p, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w, 'p>>>(
    archetypes: I,
) -> RowIter<'w, Q, I> {
    RowIter {
        chunks: ChunkIter::new(archetypes),
        rows: Q::rows(Q::empty_chunk(), 0),
    }
}

/// Rows per parallel task when the caller sets none: enough tasks for every
/// thread to steal from (about eight per thread), but none under 64 rows, so
/// small queries do not drown in task overhead.
#[cfg(feature = "parallel")]
pub(super) fn default_batch(rows: usize) -> usize {
    (rows / (rayon::current_num_threads() * 8)).max(64)
}

/// The chunks of a [`ChunkIter`] cut into batches of about `batch` rows:
/// chunks larger than that are split, smaller consecutive ones are grouped.
#[cfg(feature = "parallel")]
struct Batches<'w, Q: QueryParam, I> {
    chunks: ChunkIter<'w, Q, I>,
    batch: usize,
    /// What is left of the chunk being split.
    pending: Option<(Q::Chunk<'w>, usize)>,
}

/// One parallel task's chunk pieces.
#[cfg(feature = "parallel")]
type Batch<'w, Q> = smallvec::SmallVec<[(<Q as QueryParam>::Chunk<'w>, usize); 4]>;

#[cfg(feature = "parallel")]
impl<'w, 'p, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w, 'p>>> Batches<'w, Q, I> {
    fn new(archetypes: I, batch: usize) -> Self {
        Batches {
            chunks: ChunkIter::new(archetypes),
            batch: batch.max(1),
            pending: None,
        }
    }
}

#[cfg(feature = "parallel")]
impl<'w, 'p, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w, 'p>>> Iterator for Batches<'w, Q, I> {
    type Item = Batch<'w, Q>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut batch = Batch::<Q>::new();
        let mut rows = 0;
        while rows < self.batch {
            let Some((chunk, len)) = self.pending.take().or_else(|| self.chunks.next()) else {
                break;
            };
            let wanted = self.batch - rows;
            if len > wanted {
                let (head, tail) = Q::split_chunk(chunk, wanted);
                self.pending = Some((tail, len - wanted));
                batch.push((head, wanted));
                rows += wanted;
            } else {
                batch.push((chunk, len));
                rows += len;
            }
        }
        (!batch.is_empty()).then_some(batch)
    }
}

/// Calls `f` with each entity's items, spreading the rows of `archetypes`
/// over rayon's thread pool in batches of about `batch` rows.
#[cfg(feature = "parallel")]
pub(super) fn par_for_each<'w, 'p, Q, I>(archetypes: I, batch: usize, f: impl Fn(Q::Item<'w>) + Send + Sync)
where
    Q: QueryParam,
    I: Iterator<Item = ColumnAccess<'w, 'p>> + Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    let batches = Batches::<Q, I>::new(archetypes, batch);
    batches.par_bridge().for_each(|batch| {
        for (chunk, len) in batch {
            Q::rows(chunk, len).for_each(&f);
        }
    });
}

/// Calls `f` with each chunk (or piece of a chunk) of `archetypes`, spread
/// over rayon's thread pool in batches of about `batch` rows.
#[cfg(feature = "parallel")]
pub(super) fn par_for_each_chunk<'w, 'p, Q, I>(archetypes: I, batch: usize, f: impl Fn(Q::Chunk<'w>) + Send + Sync)
where
    Q: QueryParam,
    I: Iterator<Item = ColumnAccess<'w, 'p>> + Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    let batches = Batches::<Q, I>::new(archetypes, batch);
    batches.par_bridge().for_each(|batch| {
        for (chunk, _) in batch {
            f(chunk);
        }
    });
}
