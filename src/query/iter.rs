//! How a query walks storage: the archetypes it accepts, their chunks in
//! lock-step across columns, and the rows of each chunk.

use crate::entity::Entity;
use crate::id::ComponentId;
use crate::query_param::QueryParam;
use crate::routes::{Holding, Member};
use crate::storage::{ChunkLens, ColumnAccess, ComponentSet, EntityChunks, SparseLend};

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

/// The items of chunks (those of a [`ChunkIter`], or the runs of a
/// [`Runs`]), one entity at a time.
pub(super) struct RowIter<'w, Q: QueryParam, C> {
    chunks: C,
    /// The current chunk's rows (at first, an empty chunk's).
    rows: Q::Rows<'w>,
}

impl<'w, Q: QueryParam, C: Iterator<Item = (Q::Chunk<'w>, usize)>> RowIter<'w, Q, C> {
    #[inline]
    pub(super) fn new(chunks: C) -> Self {
        RowIter {
            chunks,
            rows: Q::rows(Q::empty_chunk(), 0),
        }
    }
}

impl<'w, Q: QueryParam, C: Iterator<Item = (Q::Chunk<'w>, usize)>> Iterator for RowIter<'w, Q, C> {
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

impl<'w, Q: QueryParam, C: Iterator<Item = (Q::Chunk<'w>, usize)>> RowIter<'w, Q, C> {
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
) -> RowIter<'w, Q, ChunkIter<'w, Q, I>> {
    RowIter::new(ChunkIter::new(archetypes))
}

/// The per-entity check of a query narrowed by a group or a matcher that
/// names flag or sparse components, or a query that requires some: each
/// such membership, and each required component, asked of each row's
/// entity.
#[derive(Clone, Copy)]
pub(super) struct RowCheck<'s> {
    /// The flag and sparse components the query requires.
    required: &'s [ComponentId],
    /// The group's membership and the matcher's, those that check entities.
    members: [Option<&'s Member>; 2],
    /// Held as a lend, not a `&SparseSets`: the query may write values
    /// through it meanwhile, so each check borrows the sets only for itself.
    sparse: SparseLend<'s>,
}

impl<'s> RowCheck<'s> {
    /// The check of `required` and `members` (those gated), if there is
    /// anything to check.
    pub(super) fn of(
        required: &'s [ComponentId],
        members: [Option<&'s Member>; 2],
        sparse: SparseLend<'s>,
    ) -> Option<Self> {
        let members = members.map(|member| member.filter(|member| member.is_gated()));
        (!required.is_empty() || members.iter().any(Option::is_some)).then_some(RowCheck {
            required,
            members,
            sparse,
        })
    }

    /// Whether `entity`, a row of an archetype with components `set`, passes.
    #[inline]
    pub(super) fn admits(&self, set: &ComponentSet, entity: Entity) -> bool {
        let slot = entity.index();
        let holding = Holding::Lent(self.sparse, slot);
        self.required.iter().all(|&id| self.sparse.contains(id, slot))
            && self
                .members
                .iter()
                .flatten()
                .all(|member| member.admits(set, holding, None))
    }
}

/// The chunks of the archetypes `archetypes` yields, cut into runs of
/// consecutive rows whose entities pass a [`RowCheck`]: what a query whose
/// group or matcher names flag or sparse components walks (its chunk
/// methods hand out these runs).
pub(super) struct Runs<'w, 's, Q: QueryParam, I> {
    archetypes: I,
    check: RowCheck<'s>,
    current: Option<Current<'w, Q>>,
    /// What is left of the chunk being cut, and its entities.
    rest: Option<(Q::Chunk<'w>, &'w [Entity])>,
}

/// The archetype a [`Runs`] is in.
struct Current<'w, Q: QueryParam> {
    state: Q::State<'w>,
    lens: ChunkLens<'w>,
    entities: EntityChunks<'w>,
    set: &'w ComponentSet,
}

impl<'w, 's, Q: QueryParam, I> Runs<'w, 's, Q, I> {
    #[inline]
    pub(super) fn new(archetypes: I, check: RowCheck<'s>) -> Self {
        Runs {
            archetypes,
            check,
            current: None,
            rest: None,
        }
    }
}

impl<'w, 'p, Q: QueryParam, I: Iterator<Item = ColumnAccess<'w, 'p>>> Iterator for Runs<'w, '_, Q, I> {
    type Item = (Q::Chunk<'w>, usize);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((chunk, entities)) = self.rest.take()
                && let Some(current) = &self.current
            {
                let admits = |&entity: &Entity| self.check.admits(current.set, entity);
                let Some(skip) = entities.iter().position(admits) else {
                    continue;
                };
                let (_, chunk) = Q::split_chunk(chunk, skip);
                let entities = &entities[skip..];
                let run = entities.iter().position(|e| !admits(e)).unwrap_or(entities.len());
                let (head, tail) = Q::split_chunk(chunk, run);
                if run + 1 < entities.len() {
                    // The row after the run failed the check: the rest starts
                    // past it, so no row is asked twice.
                    let (_, tail) = Q::split_chunk(tail, 1);
                    self.rest = Some((tail, &entities[run + 1..]));
                }
                return Some((head, run));
            }
            if let Some(current) = &mut self.current
                && let Some(len) = current.lens.next()
            {
                let chunk = Q::next_chunk(&mut current.state, len);
                self.rest = Some((chunk, current.entities.next().unwrap_or_default()));
                continue;
            }
            let mut columns = self.archetypes.next()?;
            let (entities, set, lens) = (columns.entities(), columns.set(), columns.chunk_lens());
            let Some(state) = Q::fetch(&mut columns) else {
                debug_assert!(false, "a query skipped an archetype it accepted");
                continue;
            };
            self.current = Some(Current {
                state,
                lens,
                entities,
                set,
            });
        }
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
struct Batches<'w, Q: QueryParam, C> {
    chunks: C,
    batch: usize,
    /// What is left of the chunk being split.
    pending: Option<(Q::Chunk<'w>, usize)>,
}

/// One parallel task's chunk pieces.
#[cfg(feature = "parallel")]
type Batch<'w, Q> = smallvec::SmallVec<[(<Q as QueryParam>::Chunk<'w>, usize); 4]>;

#[cfg(feature = "parallel")]
impl<'w, Q: QueryParam, C: Iterator<Item = (Q::Chunk<'w>, usize)>> Batches<'w, Q, C> {
    fn new(chunks: C, batch: usize) -> Self {
        Batches {
            chunks,
            batch: batch.max(1),
            pending: None,
        }
    }
}

#[cfg(feature = "parallel")]
impl<'w, Q: QueryParam, C: Iterator<Item = (Q::Chunk<'w>, usize)>> Iterator for Batches<'w, Q, C> {
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

/// Calls `f` with each entity's items, spreading the rows of `chunks`
/// over rayon's thread pool in batches of about `batch` rows.
#[cfg(feature = "parallel")]
pub(super) fn par_for_each<'w, Q, C>(chunks: C, batch: usize, f: impl Fn(Q::Item<'w>) + Send + Sync)
where
    Q: QueryParam,
    C: Iterator<Item = (Q::Chunk<'w>, usize)> + Send,
{
    par_for_each_init::<Q, C, ()>(chunks, batch, || (), |(), item| f(item));
}

/// As [`par_for_each`], `f` also given a state `init` makes for each task
/// (rayon's `for_each_init`: reused across the batches a task runs).
#[cfg(feature = "parallel")]
pub(super) fn par_for_each_init<'w, Q, C, S>(
    chunks: C,
    batch: usize,
    init: impl Fn() -> S + Send + Sync,
    f: impl Fn(&mut S, Q::Item<'w>) + Send + Sync,
) where
    Q: QueryParam,
    C: Iterator<Item = (Q::Chunk<'w>, usize)> + Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    let batches = Batches::<Q, C>::new(chunks, batch);
    batches.par_bridge().for_each_init(init, |state, batch| {
        for (chunk, len) in batch {
            Q::rows(chunk, len).for_each(|item| f(state, item));
        }
    });
}

/// Folds each batch of about `batch` rows of `chunks` into a state `init`
/// makes, spread over rayon's thread pool; gives the states in row order
/// (the batches' order), whatever order the threads ran them in.
#[cfg(feature = "parallel")]
pub(super) fn par_fold<'w, Q, C, S>(
    chunks: C,
    batch: usize,
    init: impl Fn() -> S + Send + Sync,
    f: impl Fn(&mut S, Q::Item<'w>) + Send + Sync,
) -> Vec<S>
where
    Q: QueryParam,
    C: Iterator<Item = (Q::Chunk<'w>, usize)> + Send,
    S: Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    let batches = Batches::<Q, C>::new(chunks, batch);
    let mut states: Vec<(usize, S)> = batches
        .enumerate()
        .par_bridge()
        .map(|(index, batch)| {
            let mut state = init();
            for (chunk, len) in batch {
                Q::rows(chunk, len).for_each(|item| f(&mut state, item));
            }
            (index, state)
        })
        .collect();
    states.sort_unstable_by_key(|&(index, _)| index);
    states.into_iter().map(|(_, state)| state).collect()
}

/// Calls `f` with each chunk (or piece of a chunk) of `chunks`, spread
/// over rayon's thread pool in batches of about `batch` rows.
#[cfg(feature = "parallel")]
pub(super) fn par_for_each_chunk<'w, Q, C>(chunks: C, batch: usize, f: impl Fn(Q::Chunk<'w>) + Send + Sync)
where
    Q: QueryParam,
    C: Iterator<Item = (Q::Chunk<'w>, usize)> + Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    let batches = Batches::<Q, C>::new(chunks, batch);
    batches.par_bridge().for_each(|batch| {
        for (chunk, _) in batch {
            f(chunk);
        }
    });
}
