//! `ArchetypesLend` and `ReadLend`: the archetypes lent to a query that
//! writes, whole (`Archetypes::lend`) or split by component
//! (`Archetypes::split`): one side writes the columns its plan writes, row
//! by row, while the other reads other components of any row.
//!
//! Why no `&mut` is needed to write: column values live in chunk memory
//! reached through each chunk's raw pointer, never through a reference to
//! the archetype, so a `ColumnAccess` made from `&Archetype` can write the
//! columns its plan marks written (as `ColumnAccess` does for a placed
//! walk). What keeps two accesses from aliasing is which columns each
//! touches: a lend writes only the written columns of the one plan it was
//! made for (checked once as each walk starts), hands out each
//! archetype once per walk (the ids visited strictly increase), and is
//! unique (not `Clone`; shorter walks go through `reborrow`); a split's
//! read side reads only the columns of its own plan, which writes nothing
//! and names none of the components the write side's plan writes (checked
//! by `split`). Both sides read the entity arrays and the archetypes'
//! layout, which nothing changes while the `&mut Archetypes` they come from
//! is held.

use std::marker::PhantomData;

use super::archetype::Archetype;
use super::archetypes::{Archetypes, Visit};
use super::bitset::ComponentSet;
use super::column_plan::{ColumnPlan, PlannedColumns};
use super::columns::{ColumnAccess, PlacedMut};
use super::location::ArchetypeId;
use super::placed_row::{PreparedRows, SharedRows};
use super::sparse::SparseSets;
use super::sparse_access::SparseLend;
use crate::id::ComponentId;

/// The archetypes, lent to write the columns one plan writes (and read the
/// rest) for `'a`. Made by [`Archetypes::lend`] or [`Archetypes::split`].
pub(crate) struct ArchetypesLend<'a> {
    archetypes: &'a Archetypes,
    /// The plan whose written columns it writes: its takes' address and
    /// number.
    plan: (usize, usize),
    /// Lent as if by `&'a mut`: unique, so never `Clone`.
    _unique: PhantomData<&'a mut Archetypes>,
}

/// A split's read side: any row's values of the components of one plan,
/// which the write side does not write. Made by [`Archetypes::split`], or
/// by [`ReadLend::shared`] to read while nothing is lent to write; shared
/// freely (between threads too).
#[derive(Clone, Copy)]
pub(crate) struct ReadLend<'a> {
    archetypes: &'a Archetypes,
    /// The flag and sparse sets, to read for `reads` only.
    sparse: SparseLend<'a>,
    /// The plan it reads by (`None`: any component, nothing being lent to
    /// write).
    reads: Option<&'a ColumnPlan>,
}

impl Archetypes {
    /// Lends the archetypes to write the columns `plan` writes, as `&mut
    /// self` would.
    #[inline]
    pub(crate) fn lend<'a>(&'a mut self, plan: PlannedColumns<'a>) -> ArchetypesLend<'a> {
        ArchetypesLend {
            archetypes: self,
            plan: plan.identity(),
            _unique: PhantomData,
        }
    }

    /// Lends the archetypes (and `sparse`, the same context's flag and
    /// sparse sets) in two for `'a`: to write the columns `writes` writes,
    /// and to read any row's values of the components `reads` takes.
    /// `Err` names the first component `reads` writes, or takes while
    /// `writes` writes it.
    pub(crate) fn split<'a>(
        &'a mut self,
        sparse: &'a mut SparseSets,
        writes: PlannedColumns<'a>,
        reads: &'a ColumnPlan,
    ) -> Result<(ArchetypesLend<'a>, SparseLend<'a>, ReadLend<'a>), ComponentId> {
        if let Some(take) = reads
            .columns()
            .0
            .iter()
            .find(|take| take.write || writes.written().any(|id| id == take.id))
        {
            return Err(take.id);
        }
        let (write_sparse, read_sparse) = SparseLend::split(sparse, writes, reads.columns());
        let archetypes: &'a Archetypes = self;
        let read = ReadLend {
            archetypes,
            sparse: read_sparse,
            reads: Some(reads),
        };
        let write = ArchetypesLend {
            archetypes,
            plan: writes.identity(),
            _unique: PhantomData,
        };
        Ok((write, write_sparse, read))
    }
}

impl<'a> ArchetypesLend<'a> {
    /// The archetypes, to read their layout and entities (not their
    /// values: those go through the accesses the walks make).
    #[inline(always)]
    pub(crate) fn archetypes(&self) -> &Archetypes {
        self.archetypes
    }

    /// The same lend for a shorter time.
    #[inline(always)]
    pub(crate) fn reborrow(&mut self) -> ArchetypesLend<'_> {
        ArchetypesLend {
            archetypes: self.archetypes,
            plan: self.plan,
            _unique: PhantomData,
        }
    }

    /// Read and write access, as `plan` (the plan lent for) says, to the
    /// archetypes `visit` names that `keep` accepts, each once, in creation
    /// order.
    ///
    /// # Panics
    /// If `plan` is not the plan the archetypes were lent for.
    #[inline]
    pub(crate) fn visit<'p>(
        self,
        visit: Visit<'a>,
        sparse: SparseLend<'a>,
        plan: PlannedColumns<'p>,
        keep: impl Fn(&Archetype) -> bool + 'a,
    ) -> impl Iterator<Item = ColumnAccess<'a, 'p>> + 'a
    where
        'p: 'a,
    {
        assert!(
            self.serves(plan),
            "archetypes lent to write are walked by the plan they were lent for"
        );
        assert!(
            sparse.serves(plan),
            "sparse sets lent exclusively are used with the plan they were lent for"
        );
        let tick = self.archetypes.change_tick();
        let mut last = None;
        self.archetypes.visit(visit).filter(move |a| keep(a)).map(move |a| {
            assert!(
                last.is_none_or(|last| last < a.id()),
                "the ids visited increase: archetypes are named in creation order"
            );
            last = Some(a.id());
            ColumnAccess::lent(a, sparse, plan, tick)
        })
    }

    /// As [`visit`](Self::visit), over the archetypes `plan` (the plan lent
    /// for) is placed in that hold entities and whose components `keep`
    /// accepts: see [`ColumnPlan::walk_placed_mut`].
    #[inline(always)]
    pub(crate) fn walk_placed<K: Fn(&ComponentSet) -> bool>(
        self,
        plan: &'a ColumnPlan,
        sparse: SparseLend<'a>,
        keep: K,
    ) -> PlacedMut<'a, K> {
        assert!(
            self.serves(plan.columns()),
            "archetypes lent to write are walked by the plan they were lent for"
        );
        plan.walk_placed_mut(self.archetypes, sparse, keep)
    }

    /// Random access by handle to the archetypes, as `plan` says (see
    /// [`PreparedRows`]): the plan's placing and the lends are checked here,
    /// once, not per row.
    ///
    /// # Panics
    /// If the lend or `sparse` was made for another plan, or `plan` is
    /// placed in another `Archetypes`.
    #[inline]
    pub(crate) fn prepared(self, plan: &'a ColumnPlan, sparse: SparseLend<'a>) -> PreparedRows<'a> {
        assert!(
            self.serves(plan.columns()),
            "archetypes lent to write are accessed by the plan they were lent for"
        );
        assert!(
            sparse.serves(plan.columns()),
            "sparse sets lent exclusively are used with the plan they were lent for"
        );
        plan.check_placed_in(self.archetypes);
        PreparedRows::new(self.archetypes, sparse, plan)
    }

    #[inline(always)]
    fn serves(&self, plan: PlannedColumns<'_>) -> bool {
        self.plan == plan.identity()
    }
}

impl<'a> ReadLend<'a> {
    /// Read access to any row's values of any component, nothing being lent
    /// to write for `'a`.
    #[inline]
    pub(crate) fn shared(archetypes: &'a Archetypes, sparse: &'a SparseSets) -> Self {
        ReadLend {
            archetypes,
            sparse: SparseLend::shared(sparse),
            reads: None,
        }
    }

    /// The components of archetype `id` (its layout only: a split's read
    /// side hands out no way to read values but [`row`](Self::row) and
    /// [`access`](Self::access), which keep to its plan).
    #[inline]
    pub(crate) fn set_of(&self, id: ArchetypeId) -> &'a ComponentSet {
        self.archetypes.get(id).set()
    }

    /// The flag and sparse sets, to check which components an entity has
    /// (their indices only).
    #[inline(always)]
    pub(crate) fn sparse(&self) -> SparseLend<'a> {
        self.sparse
    }

    /// Random access by handle, reading as `plan` says (see
    /// [`SharedRows`]): a split's read side only by the plan it was lent
    /// for.
    ///
    /// # Panics
    /// If the lend is a split's read side lent for another plan, or `plan`
    /// is placed in another `Archetypes`.
    #[inline]
    pub(crate) fn prepared<'p>(&self, plan: &'p ColumnPlan) -> SharedRows<'a, 'p> {
        assert!(
            self.reads
                .is_none_or(|lent| lent.columns().identity() == plan.columns().identity()),
            "a split's read side reads by the plan it was lent for"
        );
        plan.check_placed_in(self.archetypes);
        SharedRows::new(self.archetypes, self.sparse, plan)
    }
}
