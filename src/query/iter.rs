//! How a query walks storage: the archetypes it accepts, their chunks in
//! lock-step across columns, and the rows of each chunk.

use super::param::QueryParam;
use crate::matcher::Matcher;
use crate::storage::{Archetype, ChunkLens, ColumnAccess, ComponentSet};

/// Which archetypes a query visits: those with the query's required
/// components, accepted by the optional matcher and the optional group.
#[derive(Clone, Copy)]
pub(super) struct Filter<'w> {
    pub(super) required: &'w ComponentSet,
    pub(super) matcher: Option<&'w Matcher>,
    pub(super) group: Option<&'w Matcher>,
}

impl Filter<'_> {
    #[inline]
    pub(super) fn accepts(&self, archetype: &Archetype) -> bool {
        let set = archetype.set();
        archetype.len() != 0
            && set.is_superset(self.required)
            && self.matcher.is_none_or(|m| m.matches_components(set))
            && self.group.is_none_or(|m| m.matches_components(set))
    }
}

/// The chunks of the archetypes that `archetypes` yields, in order, with
/// their row counts.
pub(super) struct ChunkIter<'w, Q: QueryParam, I> {
    archetypes: I,
    current: Option<(Q::State<'w>, ChunkLens<'w>)>,
}

impl<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>> ChunkIter<'w, Q, I> {
    #[inline]
    pub(super) fn new(archetypes: I) -> Self {
        ChunkIter {
            archetypes,
            current: None,
        }
    }
}

impl<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>> Iterator for ChunkIter<'w, Q, I> {
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
}

/// The items of the chunks of a [`ChunkIter`], one entity at a time.
pub(super) struct RowIter<'w, Q: QueryParam, I> {
    chunks: ChunkIter<'w, Q, I>,
    /// The current chunk's rows (at first, an empty chunk's).
    rows: Q::Rows<'w>,
}

impl<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>> Iterator for RowIter<'w, Q, I> {
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
        let mut acc = self.rows.fold(init, &mut f);
        for (chunk, len) in self.chunks {
            acc = Q::rows(chunk, len).fold(acc, &mut f);
        }
        acc
    }
}

impl<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>> RowIter<'w, Q, I> {
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
pub(super) fn rows<'w, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w>>>(archetypes: I) -> RowIter<'w, Q, I> {
    RowIter {
        chunks: ChunkIter::new(archetypes),
        rows: Q::rows(Q::empty_chunk(), 0),
    }
}

/// Calls `f` with each entity's items, spreading the chunks of `archetypes`
/// over rayon's thread pool.
#[cfg(feature = "parallel")]
pub(super) fn par_for_each<'w, Q, I>(archetypes: I, f: impl Fn(Q::Item<'w>) + Send + Sync)
where
    Q: QueryParam,
    I: Iterator<Item = ColumnAccess<'w>> + Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    ChunkIter::<Q, _>::new(archetypes)
        .par_bridge()
        .for_each(|(chunk, len)| Q::rows(chunk, len).for_each(&f));
}

/// Calls `f` with each chunk of `archetypes`, spread over rayon's thread pool.
#[cfg(feature = "parallel")]
pub(super) fn par_for_each_chunk<'w, Q, I>(archetypes: I, f: impl Fn(Q::Chunk<'w>) + Send + Sync)
where
    Q: QueryParam,
    I: Iterator<Item = ColumnAccess<'w>> + Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    ChunkIter::<Q, _>::new(archetypes)
        .par_bridge()
        .for_each(|(chunk, _)| f(chunk));
}
