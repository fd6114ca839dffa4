//! Draining a collector (`CollectorMut::drain` and `par_drain`): they read
//! a collector's batch and clear it, in place (the rows written since its
//! last look, read where they are) or gathered (entity by entity), and keep
//! one rule when the visitor panics: what was handed to it is consumed, the
//! rest stays collected.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use smallvec::SmallVec;

use super::Context;
use crate::collector::{CollectorData, CollectorId};
use crate::entity::Entity;
use crate::error::Error;
use crate::id::CollectorKey;
use crate::query::{QueryPlan, ReadOnlyQueryParam, for_each_in_blocks};
use crate::routes::Membership;
use crate::storage::{Archetype, ArchetypeId, Archetypes, ColumnAccess, ReadLend, SparseLend, SparseSets, Tick};

impl Context {
    /// The body of [`CollectorMut::drain`](super::CollectorMut::drain): draining collector `id` (see
    /// there).
    pub(super) fn drain_collected<Q: ReadOnlyQueryParam>(
        &mut self,
        id: CollectorId,
        mut f: impl FnMut(Q::Item<'_>),
    ) -> Result<usize, Error> {
        self.collector_data(id)?;
        let handed = Handed::one_piece();
        let read = match self.in_place::<Q>(id.key)? {
            Some(place) => panic::catch_unwind(AssertUnwindSafe(|| {
                let mut tally = handed.tally(0);
                let mut visited = 0;
                for (archetype, col) in place.walk.iter().copied() {
                    let archetype = place.archetypes.get(archetype);
                    if let Some(blocks) = archetype.changed_blocks(col, place.since) {
                        visited += place.visit_blocks::<Q>(archetype, blocks, &mut |item| {
                            tally.hand();
                            f(item);
                        });
                    }
                }
                visited
            })),
            None => {
                return self.visit_gathered(id, &mut |_| handed.clone(), |game, batch, handed| {
                    let mut tally = handed.tally(0);
                    let mut visited = 0;
                    for &entity in batch {
                        tally.hand();
                        if let Some(item) = game.entity(entity).ok().and_then(|view| view.query::<Q>()) {
                            visited += 1;
                            f(item);
                        }
                    }
                    visited
                });
            }
        };
        self.after_in_place::<Q, _>(id.key, read, &handed)
    }

    /// The body of [`CollectorMut::par_drain`](super::CollectorMut::par_drain): draining collector `id`
    /// in parallel (see there).
    #[cfg(feature = "parallel")]
    pub(super) fn par_drain_collected<Q: ReadOnlyQueryParam, S: Send>(
        &mut self,
        id: CollectorId,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) -> Result<Vec<S>, Error> {
        use rayon::prelude::*;
        self.collector_data(id)?;
        let pieces = rayon::current_num_threads() * 4;
        let (read, handed) = match self.in_place::<Q>(id.key)? {
            Some(place) => {
                let (blocks, cuts) = place.pieces(pieces);
                let handed = Handed::new(cuts.iter().map(|&cut| rows_of(&blocks[..cut])).collect());
                let read = panic::catch_unwind(AssertUnwindSafe(|| {
                    place.par_fold_pieces::<Q, S>((&blocks, &cuts), &handed, &init, &f)
                }));
                (read, handed)
            }
            None => {
                let piece_len = |len: usize| len.div_ceil(pieces).max(64);
                let mut cut =
                    |len: usize| Handed::new((0..len.div_ceil(piece_len(len))).map(|p| p * piece_len(len)).collect());
                return self.visit_gathered(id, &mut cut, |game, batch, handed| {
                    batch
                        .par_chunks(piece_len(batch.len()))
                        .enumerate()
                        .map(|(piece, entities)| {
                            let mut tally = handed.tally(piece);
                            let mut state = init();
                            for &entity in entities {
                                tally.hand();
                                if let Some(item) = game.entity(entity).ok().and_then(|view| view.query::<Q>()) {
                                    f(&mut state, item);
                                }
                            }
                            state
                        })
                        .collect()
                });
            }
        };
        self.after_in_place::<Q, _>(id.key, read, &handed)
    }

    /// How [`drain_collected`](Context::drain_collected) reads collector
    /// `key` in place, if it can (see [`InPlace::of`]).
    fn in_place<Q: ReadOnlyQueryParam>(&mut self, key: CollectorKey) -> Result<Option<InPlace<'_>>, Error> {
        let Context {
            archetypes,
            sparse,
            routes,
            collectors,
            queries,
            name,
            ..
        } = self;
        let plan = queries.current::<Q>(archetypes, name)?;
        Ok(InPlace::of(
            plan,
            collectors.get(key),
            routes.membership(),
            archetypes,
            sparse,
        ))
    }

    /// After an in-place read of collector `key` (`read`: its result, or
    /// the visitor's panic), the collector has looked now. If the visitor
    /// panicked, the rows not `handed` to it are collected first, in the
    /// order the read takes them (retained), and the panic goes on.
    fn after_in_place<Q: ReadOnlyQueryParam, R>(
        &mut self,
        key: CollectorKey,
        read: std::thread::Result<R>,
        handed: &Handed,
    ) -> Result<R, Error> {
        let payload = match read {
            Ok(read) => {
                self.looked_now(key);
                return Ok(read);
            }
            Err(payload) => payload,
        };
        // The read's order, as the same walk gives it again (the visitor
        // could not change the context).
        let order = (self.in_place::<Q>(key).ok().flatten()).map_or_else(Vec::new, |place| place.entities());
        let Context {
            collectors, retains, ..
        } = self;
        for (at, entity) in order.into_iter().enumerate() {
            if !handed.is_handed(at) {
                collectors.collect(key, entity, retains);
            }
        }
        self.looked_now(key);
        panic::resume_unwind(payload)
    }

    /// Gathers collector `id`'s batch and takes it out, lets `visit` read
    /// it beside the context, then lets the batch go (released). `visit`
    /// counts in a [`Handed`] (which `cut` makes for the batch's length)
    /// what it hands to the user: if it panics, what it handed is
    /// released, the rest goes back to the collector (still retained, in
    /// its order), and the panic goes on.
    fn visit_gathered<R>(
        &mut self,
        id: CollectorId,
        cut: &mut dyn FnMut(usize) -> Handed,
        visit: impl FnOnce(&Context, &[Entity], &Handed) -> R,
    ) -> Result<R, Error> {
        self.gather(id.key);
        let batch = self.take_collected(id)?;
        let handed = cut(batch.len());
        let visited = panic::catch_unwind(AssertUnwindSafe(|| visit(self, &batch, &handed)));
        let payload = match visited {
            Ok(visited) => {
                self.let_go(id, batch)?;
                return Ok(visited);
            }
            Err(payload) => payload,
        };
        let mut consumed = Vec::new();
        let mut rest = Vec::new();
        for (at, &entity) in batch.iter().enumerate() {
            if handed.is_handed(at) {
                consumed.push(entity);
            } else {
                rest.push(entity);
            }
        }
        // Back in the collector, still retained by it. (The collector
        // exists: the visitor could not remove it. Nothing here returns
        // early, so the panic always goes on.)
        if let Ok(collector) = self.collector_data_mut(id) {
            consumed.extend(collector.put_back(&rest));
            collector.return_batch(batch);
        }
        self.release_all(&mut consumed);
        panic::resume_unwind(payload)
    }
}

/// What a drain handed to its visitor, piece by piece: the pieces start at
/// the given places of the batch's order, and each counts how many of its
/// entities (from its start) were handed, even while other pieces run on
/// other threads.
/// (A sequential drain's one piece is kept inline: a steady frame
/// allocates nothing.)
#[derive(Debug)]
struct Handed {
    starts: SmallVec<[usize; 1]>,
    counts: SmallVec<[AtomicUsize; 1]>,
}

impl Handed {
    /// Pieces starting at `starts` (increasing, the first at 0).
    fn new(starts: SmallVec<[usize; 1]>) -> Self {
        let counts = starts.iter().map(|_| AtomicUsize::new(0)).collect();
        Handed { starts, counts }
    }

    /// One piece: the whole batch.
    fn one_piece() -> Self {
        Handed::new(smallvec::smallvec![0])
    }

    /// The count of piece `piece`, kept by one thread: see [`Tally`].
    fn tally(&self, piece: usize) -> Tally<'_> {
        Tally {
            handed: self,
            piece,
            count: 0,
        }
    }

    /// Whether the entity at place `at` of the batch was handed over.
    fn is_handed(&self, at: usize) -> bool {
        let piece = self.starts.partition_point(|&start| start <= at).saturating_sub(1);
        self.starts
            .get(piece)
            .is_some_and(|&start| at - start < self.counts[piece].load(Ordering::Relaxed))
    }
}

/// How many entities of one piece were handed over, counted in a plain
/// integer (no atomic operation per entity) and stored in its [`Handed`]
/// when dropped: at the end of the piece, or while a panic unwinds from it.
struct Tally<'h> {
    handed: &'h Handed,
    piece: usize,
    count: usize,
}

impl Tally<'_> {
    /// The piece's next entity is handed over.
    #[inline(always)]
    fn hand(&mut self) {
        self.count += 1;
    }
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        self.handed.counts[self.piece].store(self.count, Ordering::Relaxed);
    }
}

impl Clone for Handed {
    /// An empty count of the same pieces.
    fn clone(&self) -> Self {
        Handed::new(self.starts.clone())
    }
}

/// The rows `blocks` hold.
#[cfg(feature = "parallel")]
fn rows_of(blocks: &[(usize, usize, u64)]) -> usize {
    blocks.iter().map(|&(_, _, mask)| mask.count_ones() as usize).sum()
}

/// What reading a collector's batch in place needs: its query's plan, the
/// storage, the collector's last look, and the archetypes to walk, each
/// with its watched column, in order.
struct InPlace<'c> {
    plan: &'c QueryPlan,
    archetypes: &'c Archetypes,
    sparse: &'c SparseSets,
    since: Tick,
    walk: SmallVec<[(ArchetypeId, usize); 8]>,
}

impl<'c> InPlace<'c> {
    /// Whether collector `data`'s batch can be read in place: one group,
    /// updates taken, nothing pushed or kept, no per-entity membership
    /// check, no watched flag or sparse component, one watched column per
    /// archetype, and `plan` (its query's) requiring no flag or sparse
    /// component. If so, the walk: the group's archetypes with stamps and
    /// `plan`'s components.
    fn of(
        plan: &'c QueryPlan,
        data: Option<&CollectorData>,
        membership: &Membership,
        archetypes: &'c Archetypes,
        sparse: &'c SparseSets,
    ) -> Option<Self> {
        let data = data?;
        let &[(group, trigger)] = &data.triggers[..] else {
            return None;
        };
        if !data.active || !trigger.takes().updated || !data.entities.is_empty() || data.removed.is_some() {
            return None;
        }
        let member = membership.group(group);
        let watched = || member.matcher.watched();
        if member.is_gated() || plan.requires_sparse() || watched().any(|id| sparse.watched().contains(id)) {
            return None;
        }
        let mut walk = SmallVec::new();
        for &id in &member.archetypes {
            let archetype = archetypes.get(id);
            let mut columns = watched().filter_map(|id| archetype.column_index(id));
            let col = match (columns.next(), columns.next()) {
                (Some(col), None) => col,
                // Two watched columns here: their rows would need merging.
                (Some(_), Some(_)) => return None,
                (None, _) => continue,
            };
            if !archetype.is_empty() && archetype.is_stamped() && plan.fits(archetype.set()) {
                walk.push((id, col));
            }
        }
        Some(InPlace {
            plan,
            archetypes,
            sparse,
            since: data.seen,
            walk,
        })
    }

    /// Calls `f` with `Q`'s items of the rows of `archetype` that `blocks`
    /// names (see [`for_each_in_blocks`]); gives how many.
    fn visit_blocks<'a, Q: ReadOnlyQueryParam>(
        &'a self,
        archetype: &'a Archetype,
        blocks: impl IntoIterator<Item = (usize, u64)>,
        f: &mut impl FnMut(Q::Item<'a>),
    ) -> usize {
        let sparse = SparseLend::shared(self.sparse);
        let columns = ColumnAccess::shared(archetype, sparse, self.plan.columns());
        // A lone changed row is read at the plan's offsets (the plan is
        // current: `in_place` brought it up to date).
        let rows = ReadLend::shared(self.archetypes, self.sparse)
            .prepared(self.plan.column_plan())
            .in_archetype(archetype.id().index() as u32);
        let lone = |row: u32| rows?.row(row).and_then(|mut placed| Q::placed_row(&mut placed));
        for_each_in_blocks::<Q>(columns, archetype.chunk_shift(), blocks, lone, f)
    }

    /// The entities of the rows an in-place read visits, in its order.
    fn entities(&self) -> Vec<Entity> {
        let mut order = Vec::new();
        for &(archetype, col) in &self.walk {
            let archetype = self.archetypes.get(archetype);
            if let Some(blocks) = archetype.changed_blocks(col, self.since) {
                for (start, mut mask) in blocks {
                    while mask != 0 {
                        let row = start + mask.trailing_zeros() as usize;
                        order.extend(archetype.entity_at(row as u32));
                        mask &= mask - 1;
                    }
                }
            }
        }
        order
    }

    /// The stamped rows' blocks, each as (place in the walk, first row,
    /// mask), cut into about `pieces` pieces of about the same rows (one
    /// archetype each): the blocks and where each piece starts, the last
    /// cut at the end.
    #[cfg(feature = "parallel")]
    fn pieces(&self, pieces: usize) -> (Vec<(usize, usize, u64)>, Vec<usize>) {
        let mut blocks: Vec<(usize, usize, u64)> = Vec::new();
        for (at, &(archetype, col)) in self.walk.iter().enumerate() {
            if let Some(changed) = self.archetypes.get(archetype).changed_blocks(col, self.since) {
                blocks.extend(changed.map(|(start, mask)| (at, start, mask)));
            }
        }
        let per_piece = rows_of(&blocks).div_ceil(pieces.max(1)).max(64);
        let mut cuts = vec![0];
        let mut filled = 0;
        for (i, block) in blocks.iter().enumerate() {
            let new_archetype = i > 0 && blocks[i - 1].0 != block.0;
            if filled >= per_piece || (new_archetype && filled > 0) {
                cuts.push(i);
                filled = 0;
            }
            filled += rows_of(std::slice::from_ref(block));
        }
        cuts.push(blocks.len());
        (blocks, cuts)
    }

    /// The pieces `cuts` makes of `blocks` (see [`pieces`](Self::pieces)),
    /// each folded in parallel into a state `init` makes, what each hands
    /// to `f` counted in `handed`; the states in row order.
    #[cfg(feature = "parallel")]
    fn par_fold_pieces<Q: ReadOnlyQueryParam, S: Send>(
        &self,
        (blocks, cuts): (&[(usize, usize, u64)], &[usize]),
        handed: &Handed,
        init: &(impl Fn() -> S + Send + Sync),
        f: &(impl Fn(&mut S, Q::Item<'_>) + Send + Sync),
    ) -> Vec<S> {
        use rayon::prelude::*;
        cuts.par_windows(2)
            .enumerate()
            .filter(|(_, cut)| cut[0] < cut[1])
            .map(|(number, cut)| {
                let piece = &blocks[cut[0]..cut[1]];
                let archetype = self.archetypes.get(self.walk[piece[0].0].0);
                let mut tally = handed.tally(number);
                let mut state = init();
                self.visit_blocks::<Q>(
                    archetype,
                    piece.iter().map(|&(_, start, mask)| (start, mask)),
                    &mut |item| {
                        tally.hand();
                        f(&mut state, item);
                    },
                );
                state
            })
            .collect()
    }
}
