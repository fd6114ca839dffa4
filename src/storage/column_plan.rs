//! `ColumnPlan`: the columns a query takes from each archetype it visits,
//! checked once (no component written and also named again), and placed in
//! archetypes: per archetype, where each of its columns sits. `ColumnAccess`
//! (`columns.rs`) takes columns as a plan says.

use std::any::TypeId;

use smallvec::SmallVec;

use super::archetypes::Archetypes;
use super::location::ArchetypeId;
use crate::id::ComponentId;

/// One column a plan takes: the component, the type its values have, and
/// whether it is written.
#[derive(Clone, Copy, Debug)]
pub(super) struct Take {
    pub(super) id: ComponentId,
    pub(super) ty: TypeId,
    pub(super) write: bool,
}

/// A placed plan's mark for a column the archetype lacks.
pub(super) const ABSENT: u32 = u32::MAX;

/// The columns a query takes from each archetype it visits, in the order it
/// takes them, each as `(component, value type, written)`. Made only by
/// [`ColumnPlan::new`], which refuses a plan that writes a component and
/// names it again: so the columns of one `ColumnAccess` never alias.
///
/// Placed (by [`place`](Self::place)) in archetypes of one `Archetypes`, it
/// keeps, per archetype, each column's byte offset in a chunk, checked
/// against the archetype's column types when placed.
#[derive(Clone, Debug, Default)]
pub struct ColumnPlan {
    pub(super) takes: SmallVec<[Take; 8]>,
    /// The `Archetypes` the plan is placed in (its stamp; 0: none yet).
    placed_in: u64,
    /// The archetypes it is placed in, in creation order.
    pub(super) placed: Vec<ArchetypeId>,
    /// Per placed archetype, per take: the column's offset in a chunk, or
    /// `ABSENT`.
    offsets: Vec<u32>,
    /// By archetype index: where its offsets start in `offsets`, or
    /// `ABSENT` if it is not placed (what a prepared view reads per handle).
    offsets_of: Vec<u32>,
}

impl ColumnPlan {
    /// The plan taking `takes` in order; `Err` names the first component
    /// written and also named again (by another write or a read).
    pub(crate) fn new(takes: impl IntoIterator<Item = (ComponentId, TypeId, bool)>) -> Result<Self, ComponentId> {
        let takes: SmallVec<[Take; 8]> = takes
            .into_iter()
            .map(|(id, ty, write)| Take { id, ty, write })
            .collect();
        let conflict = takes.iter().enumerate().find_map(|(i, take)| {
            takes[i + 1..]
                .iter()
                .any(|other| other.id == take.id && (take.write || other.write))
                .then_some(take.id)
        });
        match conflict {
            Some(id) => Err(id),
            None => Ok(ColumnPlan {
                takes,
                ..ColumnPlan::default()
            }),
        }
    }

    /// The plan, to make a `ColumnAccess` per archetype from.
    #[inline]
    pub(crate) fn columns(&self) -> PlannedColumns<'_> {
        PlannedColumns(&self.takes)
    }

    /// Places the plan in archetype `id` of `archetypes`: remembers where each
    /// of its columns sits there.
    ///
    /// # Panics
    /// If archetypes are placed out of creation order or from two
    /// `Archetypes`, or a column the archetype has holds another type than
    /// the plan says (a component id names one type: this cannot happen).
    pub(crate) fn place(&mut self, archetypes: &Archetypes, id: ArchetypeId) {
        if self.placed.is_empty() {
            self.placed_in = archetypes.stamp();
        }
        assert_eq!(
            self.placed_in,
            archetypes.stamp(),
            "a plan is placed in one context's archetypes"
        );
        assert!(
            self.placed.last().is_none_or(|&last| last < id),
            "archetypes are placed in creation order"
        );
        let archetype = archetypes.get(id);
        // A plan of no takes keeps one unused offset per archetype, so every
        // placed archetype has as many offsets as `placed_offsets` walks.
        if self.offsets_of.len() <= id.index() {
            self.offsets_of.resize(id.index() + 1, ABSENT);
        }
        self.offsets_of[id.index()] = u32::try_from(self.offsets.len()).expect("a plan keeps fewer than 2^32 offsets: one per take (at most 10) per archetype, and 400 million archetypes do not fit in memory");
        if self.takes.is_empty() {
            self.offsets.push(ABSENT);
        }
        for take in &self.takes {
            let offset = archetype.column_index(take.id).map_or(ABSENT, |col| {
                assert!(
                    archetype.column_type(col) == take.ty,
                    "a component's column holds its type"
                );
                u32::try_from(archetype.column_geometry(col).0).expect("a column offset fits in u32: a chunk is `CHUNK_BYTES` long unless one row is longer, and no component value of 4 GiB can be passed by value")
            });
            self.offsets.push(offset);
        }
        self.placed.push(id);
    }

    /// The offsets of the plan's columns in archetype `archetype` (an
    /// archetype index), if the plan is placed there: one indexed load, for
    /// access by handle. `width` is the number of offsets per archetype,
    /// [`width`](Self::width) (which a caller keeps).
    #[inline(always)]
    pub(super) fn offsets_in(&self, archetype: u32, width: usize) -> Option<&[u32]> {
        let start = *self.offsets_of.get(archetype as usize)? as usize;
        if start == ABSENT as usize {
            return None;
        }
        self.offsets.get(start..start + width)
    }

    /// The number of offsets kept per placed archetype: one per take, at
    /// least one.
    #[inline]
    pub(super) fn width(&self) -> usize {
        self.takes.len().max(1)
    }

    /// The archetypes the plan is placed in, in creation order.
    pub(crate) fn placed(&self) -> &[ArchetypeId] {
        &self.placed
    }

    /// The placed archetypes, each with its offsets (see
    /// [`place`](Self::place)), in placement order.
    #[inline]
    pub(super) fn placed_with_offsets(&self) -> PlacedOffsets<'_> {
        PlacedOffsets {
            ids: self.placed.iter(),
            offsets: &self.offsets,
            width: self.width(),
        }
    }

    #[inline]
    pub(super) fn check_placed_in(&self, archetypes: &Archetypes) {
        assert!(
            self.placed.is_empty() || self.placed_in == archetypes.stamp(),
            "a plan placed in one context's archetypes is walked in another's"
        );
    }
}

/// The archetypes a [`ColumnPlan`] is placed in, each with its offsets:
/// [`ColumnPlan::placed_with_offsets`]. (Cut one archetype's worth at a
/// time, not by `chunks_exact`, whose set-up divides: a query run pays it.)
#[derive(Clone)]
pub(super) struct PlacedOffsets<'p> {
    ids: std::slice::Iter<'p, ArchetypeId>,
    /// The offsets of the archetypes `ids` has left.
    offsets: &'p [u32],
    /// Offsets per archetype.
    width: usize,
}

impl<'p> Iterator for PlacedOffsets<'p> {
    type Item = (ArchetypeId, &'p [u32]);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let id = *self.ids.next()?;
        let (offsets, rest) = self.offsets.split_at_checked(self.width)?;
        self.offsets = rest;
        Some((id, offsets))
    }
}

/// A [`ColumnPlan`]'s columns, borrowed once for the many archetypes a
/// query visits.
#[derive(Clone, Copy)]
pub struct PlannedColumns<'p>(pub(super) &'p [Take]);

impl<'p> PlannedColumns<'p> {
    /// The components the plan writes, in the order it takes them.
    pub(crate) fn written(self) -> impl Iterator<Item = ComponentId> + 'p {
        self.0.iter().filter(|take| take.write).map(|take| take.id)
    }

    /// Which plan this is: its takes' address and number.
    #[inline]
    pub(super) fn identity(self) -> (usize, usize) {
        (self.0.as_ptr() as usize, self.0.len())
    }
}
