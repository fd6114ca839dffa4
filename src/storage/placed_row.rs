//! Prepared random access: `PreparedRows`, archetypes lent for one placed
//! plan and read by handle, and `PlacedRow`, one live row of one archetype
//! read and written as the plan says. The row's chunk is found once; each
//! column is a load of the offset the plan keeps for that archetype and a
//! type check; nothing is looked up by component.

use std::any::TypeId;
use std::marker::PhantomData;

use super::archetype::Archetype;
use super::archetypes::Archetypes;
use super::bitset::ComponentSet;
use super::column_plan::{ABSENT, ColumnPlan, Take};
use super::location::ArchetypeId;
use super::sparse_access::SparseLend;
use super::stamps::{Stamps, Tick};
use crate::entity::Entity;

/// How many of a plan's first takes a [`PreparedRows`] finds the change
/// stamps of when it moves to another archetype (the others' are looked up
/// per write).
const FOUND_STAMPS: usize = 4;

/// Archetypes (and the sparse sets) lent for one placed plan, read and
/// written row by row: made by
/// [`ArchetypesLend::prepared`](super::lend::ArchetypesLend::prepared),
/// which checked that both lends serve the plan and that the plan is placed
/// in these archetypes. One row at a time is handed out
/// ([`row`](Self::row) borrows it mutably), so no two rows' values alias.
pub(crate) struct PreparedRows<'a> {
    /// The archetypes, the sparse sets and the plan, as a read-only
    /// [`SharedRows`] would hold them (its rows are never made: this lend
    /// makes its own, which write).
    lent: SharedRows<'a, 'a>,
    /// The change tick writes stamp.
    tick: Tick,
    /// The archetype of the row handed out last (its index), with its
    /// offsets and the tick its rows' writes stamp (`NEVER`: no stamps there):
    /// consecutive rows of one archetype look nothing up again.
    last: Option<(u32, &'a Archetype, &'a [u32], Tick)>,
    /// The change stamps there of the plan's first takes (`None` for one
    /// not written, lacking or unstamped), found once per archetype.
    stamps: [Option<&'a Stamps>; FOUND_STAMPS],
    _unique: PhantomData<&'a mut Archetypes>,
}

impl<'a> PreparedRows<'a> {
    /// The lends' checks are the caller's (`ArchetypesLend::prepared`).
    #[inline]
    pub(super) fn new(archetypes: &'a Archetypes, sparse: SparseLend<'a>, plan: &'a ColumnPlan) -> Self {
        PreparedRows {
            tick: archetypes.change_tick(),
            lent: SharedRows::new(archetypes, sparse, plan),
            last: None,
            stamps: [None; FOUND_STAMPS],
            _unique: PhantomData,
        }
    }

    /// Archetype `archetype` (an archetype index), its offsets and the tick
    /// its rows' writes stamp, if the plan is placed there.
    #[inline(always)]
    fn archetype(&mut self, archetype: u32) -> Option<(&'a Archetype, &'a [u32], Tick)> {
        match self.last {
            Some((index, found, offsets, tick)) if index == archetype => Some((found, offsets, tick)),
            _ => {
                let (found, offsets) = self.lent.locate(archetype)?;
                let tick = if found.is_stamped() { self.tick } else { Tick::NEVER };
                self.last = Some((archetype, found, offsets, tick));
                for (at, stamps) in self.stamps.iter_mut().enumerate() {
                    *stamps = match (self.lent.takes.get(at), offsets.get(at)) {
                        (Some(take), Some(&offset)) if take.write && offset != ABSENT && !tick.is_never() => {
                            found.stamps_of(take.id)
                        }
                        _ => None,
                    };
                }
                Some((found, offsets, tick))
            }
        }
    }

    /// Row `row` of archetype `archetype` (an archetype index, as an
    /// entity's raw location gives it), if the plan is placed there and the
    /// row is live.
    #[inline(always)]
    pub(crate) fn row(&mut self, archetype: u32, row: u32) -> Option<PlacedRow<'_, '_>> {
        let mut placed = self.make_row(archetype, row)?;
        placed.stamps = self.stamps.iter();
        Some(placed)
    }

    /// As [`row`](Self::row), for the rest of the lend: the rows are not
    /// lent again. (Its writes look their columns' stamps up: for one row,
    /// finding them first would not pay.)
    #[inline(always)]
    pub(crate) fn into_row(mut self, archetype: u32, row: u32) -> Option<PlacedRow<'a, 'a>> {
        self.make_row(archetype, row)
    }

    /// The row, its values borrowed for all of `'a`: only `row` (which
    /// narrows them to its borrow of the lend) and `into_row` (which uses
    /// the lend up) hand it out, so no two rows' values are alive at once.
    #[inline(always)]
    fn make_row(&mut self, archetype: u32, row: u32) -> Option<PlacedRow<'a, 'a>> {
        let (found, offsets, tick) = self.archetype(archetype)?;
        PlacedRow::new(
            found,
            self.lent.sparse,
            self.lent.takes,
            offsets,
            row,
            (tick, self.tick),
        )
    }

    /// What an error path reads while a row's values may be alive: the
    /// archetypes' component sets and the sparse sets' membership, which no
    /// row access writes.
    #[inline]
    pub(crate) fn sets(&self) -> RowSets<'a> {
        RowSets {
            archetypes: self.lent.archetypes,
            sparse: self.lent.sparse,
        }
    }
}

/// Archetypes (and the sparse sets) read row by row as one placed plan
/// says, through a shared borrow: made by
/// [`ReadLend::prepared`](super::lend::ReadLend::prepared). Its rows only
/// read (a [`PlacedRow`] it makes refuses every write), so any number may be
/// alive at once, on any thread. The values are borrowed for `'a`, the plan
/// for `'p` (which may be shorter: a plan made for one view, and kept in
/// it, reads values borrowed for as long as the context is).
#[derive(Clone, Copy)]
pub(crate) struct SharedRows<'a, 'p> {
    archetypes: &'a Archetypes,
    sparse: SparseLend<'a>,
    plan: &'p ColumnPlan,
    /// The plan's takes, and the offsets it keeps per archetype.
    takes: &'p [Take],
    width: usize,
}

impl<'a, 'p> SharedRows<'a, 'p> {
    /// The lend's checks are the caller's (`ReadLend::prepared`).
    #[inline]
    pub(super) fn new(archetypes: &'a Archetypes, sparse: SparseLend<'a>, plan: &'p ColumnPlan) -> Self {
        SharedRows {
            archetypes,
            sparse,
            plan,
            takes: plan.columns().0,
            width: plan.width(),
        }
    }

    /// Archetype `archetype` (an archetype index) and the plan's offsets
    /// there, if the plan is placed there.
    #[inline(always)]
    fn locate(self, archetype: u32) -> Option<(&'a Archetype, &'p [u32])> {
        let offsets = self.plan.offsets_in(archetype, self.width)?;
        Some((self.archetypes.try_get(archetype)?, offsets))
    }

    /// Row `row` of archetype `archetype` (an archetype index), for
    /// reading, if the plan is placed there and the row is live.
    #[inline(always)]
    pub(crate) fn row(self, archetype: u32, row: u32) -> Option<PlacedRow<'a, 'p>> {
        self.in_archetype(archetype)?.row(row)
    }

    /// The rows of archetype `archetype` (an archetype index), if the plan
    /// is placed there: for many rows of one archetype, found once.
    #[inline]
    pub(crate) fn in_archetype(self, archetype: u32) -> Option<ArchetypeRows<'a, 'p>> {
        let (found, offsets) = self.locate(archetype)?;
        Some(ArchetypeRows {
            archetype: found,
            sparse: self.sparse,
            takes: self.takes,
            offsets,
        })
    }
}

/// The rows of one archetype a [`SharedRows`] reads:
/// [`SharedRows::in_archetype`].
#[derive(Clone, Copy)]
pub(crate) struct ArchetypeRows<'a, 'p> {
    archetype: &'a Archetype,
    sparse: SparseLend<'a>,
    takes: &'p [Take],
    offsets: &'p [u32],
}

impl<'a, 'p> ArchetypeRows<'a, 'p> {
    /// Row `row`, for reading, if it is live.
    #[inline(always)]
    pub(crate) fn row(self, row: u32) -> Option<PlacedRow<'a, 'p>> {
        let mut placed = PlacedRow::new(
            self.archetype,
            self.sparse,
            self.takes,
            self.offsets,
            row,
            (Tick::NEVER, Tick::NEVER),
        )?;
        placed.writable = false;
        Some(placed)
    }
}

/// The component sets of the archetypes and the sparse sets of a
/// [`PreparedRows`]: [`PreparedRows::sets`].
#[derive(Clone, Copy)]
pub(crate) struct RowSets<'a> {
    archetypes: &'a Archetypes,
    sparse: SparseLend<'a>,
}

impl<'a> RowSets<'a> {
    /// Archetype `id`'s components.
    #[inline]
    pub(crate) fn set_of(self, id: ArchetypeId) -> &'a ComponentSet {
        self.archetypes.get(id).set()
    }

    /// The flag and sparse components, as lent.
    #[inline]
    pub(crate) fn sparse(self) -> SparseLend<'a> {
        self.sparse
    }
}

/// One live row, handed out column by column in the order of a placed
/// plan: each call takes the plan's next column, once. Made only by
/// [`PreparedRows::row`], from lends made for the same plan (so the
/// archetype and the sparse sets are held as `&mut` would be, and the plan
/// names a written column once): no two values it hands out alias.
pub struct PlacedRow<'a, 'p> {
    archetype: &'a Archetype,
    sparse: SparseLend<'a>,
    /// The row's chunk's first byte, and the row's place in it.
    base: *mut u8,
    in_chunk: usize,
    row: u32,
    /// The plan's columns not taken yet, and their offsets in this archetype.
    takes: std::slice::Iter<'p, Take>,
    offsets: std::slice::Iter<'p, u32>,
    /// The change stamps of the first of those columns, found beforehand
    /// (see [`PreparedRows`]; empty when not: a write looks them up).
    stamps: std::slice::Iter<'p, Option<&'a Stamps>>,
    /// The change tick a write stamps (`NEVER`: the archetype's columns have no
    /// stamps).
    tick: Tick,
    /// The change tick a write to a flag or sparse component stamps.
    sparse_tick: Tick,
    /// Whether the row was lent to write (by [`PreparedRows`]) or only to
    /// read (by [`SharedRows`]).
    writable: bool,
}

impl<'a, 'p> PlacedRow<'a, 'p> {
    /// Row `row` of `archetype`, if live, taken as a plan's `takes` say at
    /// `offsets` (where the plan was placed in `archetype`); writes to
    /// archetype columns stamped with `tick` (`NEVER` if the archetype has no
    /// stamps), to flag or sparse components with `sparse_tick`.
    #[inline(always)]
    pub(super) fn new(
        archetype: &'a Archetype,
        sparse: SparseLend<'a>,
        takes: &'p [Take],
        offsets: &'p [u32],
        row: u32,
        (tick, sparse_tick): (Tick, Tick),
    ) -> Option<Self> {
        if !archetype.contains_row(row) {
            return None;
        }
        Some(PlacedRow {
            archetype,
            sparse,
            base: archetype.chunk_base(row),
            in_chunk: archetype.row_in_chunk(row),
            row,
            takes: takes.iter(),
            offsets: offsets.iter(),
            stamps: [].iter(),
            tick,
            sparse_tick,
            writable: true,
        })
    }

    /// The entity of the row (`None` never: the row is live).
    #[inline]
    pub(crate) fn entity(&self) -> Option<Entity> {
        self.archetype.entity_at(self.row)
    }

    /// Takes the plan's next column: the take, and its offset here (or
    /// `ABSENT`); `None` if the plan is used up or holds another type than
    /// `T`, or `write` and the plan does not write it or the row is only
    /// lent to read.
    #[inline(always)]
    fn take<T: 'static>(&mut self, write: bool) -> Option<(&'p Take, u32)> {
        let take = self.takes.next()?;
        let offset = *self.offsets.next()?;
        (take.ty == TypeId::of::<T>() && (!write || (take.write && self.writable))).then_some((take, offset))
    }

    /// As [`take`](Self::take), for writing, with the column's change
    /// stamps (found beforehand, or looked up; `None` if it has none).
    #[inline(always)]
    fn take_stamped<T: 'static>(&mut self) -> Option<(&'p Take, u32, Option<&'a Stamps>)> {
        let found = self.stamps.next().copied();
        let (take, offset) = self.take::<T>(true)?;
        let stamps = match found {
            Some(found) => found,
            None if !self.tick.is_never() => self.archetype.stamps_of(take.id),
            None => None,
        };
        Some((take, offset, stamps))
    }

    /// The row's value of the plan's next column, for reading: `None` if
    /// refused (see [`take`](Self::take)), `Some(None)` if the archetype
    /// lacks it.
    #[inline(always)]
    pub(crate) fn read<T: 'static>(&mut self) -> Option<Option<&'a T>> {
        self.stamps.next();
        let (_, offset) = self.take::<T>(false)?;
        if offset == ABSENT {
            return Some(None);
        }
        let at = self
            .base
            .wrapping_add(offset as usize)
            .cast::<T>()
            .wrapping_add(self.in_chunk);
        // SAFETY: the row is live (checked by `new`), so its chunk is
        // allocated and `base` is its first byte; placing the plan checked
        // that the column at `offset` holds the take's type, which is `T`
        // (checked by `take`): the value is initialised and aligned. No
        // `&mut` to it exists for `'a`: the plan names no column both
        // written and read; a writable row's archetype is lent to it alone,
        // and a shared one's is borrowed shared (or is a split lend's read
        // side, whose plan names nothing the write side writes).
        Some(Some(unsafe { &*at }))
    }

    /// The row's value of the plan's next column, for writing, the row
    /// stamped as changed: `None` if refused (see [`take`](Self::take)),
    /// `Some(None)` if the archetype lacks it.
    #[inline(always)]
    pub(crate) fn write<T: 'static>(&mut self) -> Option<Option<&'a mut T>> {
        let (_, offset, stamps) = self.take_stamped::<T>()?;
        if offset == ABSENT {
            return Some(None);
        }
        if let Some(stamps) = stamps {
            stamps.mark(self.row, self.tick);
        }
        let at = self
            .base
            .wrapping_add(offset as usize)
            .cast::<T>()
            .wrapping_add(self.in_chunk);
        // SAFETY: as in `read` for type, initialisation and alignment. A
        // row that writes (`writable`, checked by `take`) is made only from
        // a lend held as `&mut` for `'a` and handed out one row at a time,
        // and the plan names a written column once: this is the only
        // reference to the value for `'a`.
        Some(Some(unsafe { &mut *at }))
    }

    /// The entity's value of the plan's next component, a flag or sparse
    /// one, for reading: `None` if refused, `Some(None)` if it has none.
    #[inline]
    pub(crate) fn read_sparse<T: 'static>(&mut self) -> Option<Option<&'a T>> {
        self.stamps.next();
        let (take, _) = self.take::<T>(false)?;
        let slot = self.entity()?.index();
        Some(self.sparse.read::<T>(take.id)?.get(slot))
    }

    /// The entity's value of the plan's next component, a flag or sparse
    /// one, for writing, its slot stamped as changed: `None` if refused or
    /// the sets are not lent exclusively, `Some(None)` if it has none.
    #[inline]
    pub(crate) fn write_sparse<T: 'static>(&mut self) -> Option<Option<&'a mut T>> {
        self.stamps.next();
        let (take, _) = self.take::<T>(true)?;
        let slot = self.entity()?.index();
        // A view for this one row, asked for one slot.
        let values = self.sparse.write::<T>(take.id, self.sparse_tick)?;
        let stamp = values.stamp(slot);
        // SAFETY: a fresh view, asked for one slot.
        let value = unsafe { values.take(slot) };
        if value.is_some() {
            stamp.mark();
        }
        Some(value)
    }
}
