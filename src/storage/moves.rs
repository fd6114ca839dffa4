//! Moving rows: along a transition when a component is added or removed (the
//! row changes archetype), and out of storage when an entity is destroyed.
//! Every move keeps archetypes dense by swapping the last row into the hole.

use std::any::TypeId;
use std::mem::ManuallyDrop;

use super::archetype::{Archetype, copy_value};
use super::archetypes::Archetypes;
use super::edges::TransitionId;
use super::location::Location;
use super::type_info::Recycler;
use crate::entity::Entity;
#[cfg(test)]
use crate::id::ComponentId;

/// The outcome of moving an entity's row to another archetype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Moved {
    /// The entity's new location.
    pub(crate) to: Location,
    /// The entity that was moved into the entity's old location to keep the old
    /// archetype dense (its location is now the old location).
    pub(crate) displaced: Option<Entity>,
    /// The edge the row moved along.
    pub(crate) transition: TransitionId,
}

impl Archetypes {
    /// Moves the entity at `loc` to the archetype with `id` added, writing
    /// `value` as that component. Gives `value` back if the entity already has
    /// `id`, if `loc` is not a live row, or if `id` does not hold `T`s.
    #[cfg(test)]
    #[inline]
    pub(crate) fn insert<T: 'static>(&mut self, loc: Location, id: ComponentId, value: T) -> Result<Moved, T> {
        match self.add_transition(loc.archetype, id) {
            Some(transition) => self.insert_along(transition, loc, value),
            None => Err(value),
        }
    }

    /// Moves the entity at `loc` along `transition`, which adds a component,
    /// writing `value` as that component. Gives `value` back if `loc` is not a
    /// live row of the transition's source, or if the transition does not add
    /// a `T`.
    #[inline]
    pub(crate) fn insert_along<T: 'static>(
        &mut self,
        transition: TransitionId,
        loc: Location,
        value: T,
    ) -> Result<Moved, T> {
        if !self.transition(transition).added || !self.can_transfer::<T>(transition, loc) {
            return Err(value);
        }
        // SAFETY: `can_transfer` holds; the transition adds a component, so the slot
        // is the new row's (uninitialised) `T` slot, which the closure initialises.
        let ((), moved) = unsafe { self.transfer(transition, loc, |slot| slot.cast::<T>().write(value)) };
        Ok(moved)
    }

    /// Moves the entity at `loc` to the archetype without `id`, and gives back
    /// its `T`. `None` if the entity lacks `id`, `loc` is not live, or `id` does
    /// not hold `T`s.
    #[cfg(test)]
    #[inline]
    pub(crate) fn take<T: 'static>(&mut self, loc: Location, id: ComponentId) -> Option<(T, Moved)> {
        let transition = self.remove_transition(loc.archetype, id)?;
        self.take_along(transition, loc)
    }

    /// Moves the entity at `loc` along `transition`, which removes a
    /// component, and gives back its `T`. `None` if `loc` is not a live row of
    /// the transition's source, or if the transition does not remove a `T`.
    #[inline]
    pub(crate) fn take_along<T: 'static>(&mut self, transition: TransitionId, loc: Location) -> Option<(T, Moved)> {
        if self.transition(transition).added || !self.can_transfer::<T>(transition, loc) {
            return None;
        }
        // SAFETY: `can_transfer` holds; the transition removes a component, so the
        // slot is the old row's initialised `T`, which the closure moves out once.
        Some(unsafe { self.transfer(transition, loc, |slot| slot.cast::<T>().read()) })
    }

    /// Whether `transition` can move the row at `loc`: `loc` is a live row of
    /// its source, and the added or removed component holds `T`s.
    #[inline(always)]
    fn can_transfer<T: 'static>(&self, transition: TransitionId, loc: Location) -> bool {
        let transition = self.transition(transition);
        transition.changed.ty == TypeId::of::<T>() && self.get(transition.from).contains(loc)
    }

    /// Moves the row at `loc` along `transition`: allocates the target row,
    /// moves every shared column's value by the transition's plan, lets
    /// `finish` initialise (added component: the new row's slot) or move out
    /// (removed component: the old row's slot) the changed column's value, then
    /// fills the hole in the source.
    ///
    /// # Safety
    /// `can_transfer` must hold for `transition`, `loc` and the type `finish`
    /// handles, and `finish` must initialise (if the transition adds) or move
    /// out (if it removes) exactly that slot's value, without panicking.
    #[inline(always)]
    unsafe fn transfer<R>(
        &mut self,
        transition: TransitionId,
        loc: Location,
        finish: impl FnOnce(*mut u8) -> R,
    ) -> (R, Moved) {
        let Archetypes { list, transitions, .. } = self;
        let plan = &transitions[transition.index()];
        let [src, dst] = list
            .get_disjoint_mut([plan.from.index(), plan.to.index()])
            .expect("an edge never leads back to its own archetype: its two sets differ");
        let entity = src.entity_at(loc.row).expect("`loc` is live (caller: `can_transfer`)");
        // SAFETY: every column of the new row is written below, the shared ones by
        // the moves and the added one (if any) by `finish`, with nothing in between
        // that can panic or read `dst`.
        let to = unsafe { dst.alloc_row(entity) };
        let (from_base, to_base) = (src.chunk_base(loc.row), dst.chunk_base(to));
        let (from_row, to_row) = (src.row_in_chunk(loc.row), dst.row_in_chunk(to));
        for m in &plan.moves {
            // SAFETY: the plan was made from these two archetypes' layouts, which
            // never change: both addresses are the same component's slot in the live
            // row `loc` of `src` and in the new row of `dst`, in different chunks (so
            // disjoint); the new slot is uninitialised.
            unsafe {
                copy_value(
                    from_base.wrapping_add(m.from_offset + from_row * m.size),
                    to_base.wrapping_add(m.to_offset + to_row * m.size),
                    m.size,
                )
            };
        }
        let changed = &plan.changed;
        let slot = if plan.added {
            to_base.wrapping_add(changed.offset + to_row * changed.size)
        } else {
            from_base.wrapping_add(changed.offset + from_row * changed.size)
        };
        let result = finish(slot);
        // SAFETY: every value of the row at `loc` was moved to `dst` or out by
        // `finish` (caller's contract).
        let displaced = unsafe { src.fill_hole(loc.row) };
        let to = Location {
            archetype: plan.to,
            row: to,
        };
        (
            result,
            Moved {
                to,
                displaced,
                transition,
            },
        )
    }

    /// Swaps the `T` of component `id` at `loc` for `value`, giving back the old
    /// one; gives `value` back if there is no such `T` there.
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn replace<T: 'static>(&mut self, loc: Location, id: ComponentId, value: T) -> Result<T, T> {
        let archetype = self.archetype_mut(loc.archetype);
        let slot = archetype
            .column_index(id)
            .and_then(|col| archetype.get_mut_at::<T>(col, loc.row));
        match slot {
            Some(slot) => Ok(std::mem::replace(slot, value)),
            None => Err(value),
        }
    }

    /// Removes the row at `loc`, dropping its values. Returns `None` if `loc` is
    /// not live, else the entity moved into `loc` (see
    /// [`Archetype::displaced_by_removal`], which tells it beforehand).
    ///
    /// If a component's `Drop` panics, the row's other values are still dropped
    /// and the row is still removed before the panic continues.
    #[cfg(test)]
    pub(crate) fn despawn(&mut self, loc: Location) -> Option<Option<Entity>> {
        self.despawn_recycling(loc, None)
    }

    /// As [`despawn`](Archetypes::despawn), handing the values of pooled
    /// components to `to` (when given) instead of dropping them. If `to`
    /// panics, the rest of the row is dropped (not handed over) and the row
    /// is still removed before the panic continues.
    pub(crate) fn despawn_recycling(&mut self, loc: Location, to: Option<Recycler<'_>>) -> Option<Option<Entity>> {
        let entity = self.get(loc.archetype).entity_at(loc.row)?;
        // Freed first: the row is removed even if a value's `Drop` panics.
        self.release(entity.index());
        let archetype = self.archetype_mut(loc.archetype);
        if !archetype.contains(loc) {
            return None;
        }
        let mut guard = DespawnGuard {
            archetype,
            row: loc.row,
            next: 0,
        };
        let mut to = to;
        guard.release_remaining(&mut to);
        Some(guard.finish())
    }
}

/// Drops (or hands over) a row's values column by column; if one `Drop`
/// panics, its own drop goes on with the remaining columns and removes the
/// row, so the archetype stays dense and no value is dropped twice.
struct DespawnGuard<'a> {
    archetype: &'a mut Archetype,
    row: u32,
    next: usize,
}

impl DespawnGuard<'_> {
    /// Drops the values not released yet, or hands those of pooled
    /// components to `to`.
    fn release_remaining(&mut self, to: &mut Option<Recycler<'_>>) {
        while self.next < self.archetype.columns.len() {
            let col = self.next;
            self.next += 1;
            // SAFETY: `row` is live and columns before `next` were released once;
            // `next` moves past `col` before the release, so it is never released
            // again.
            unsafe { self.archetype.release_value(col, self.row, to) };
        }
    }

    fn finish(self) -> Option<Entity> {
        let mut this = ManuallyDrop::new(self);
        let row = this.row;
        // SAFETY: every value of the row was dropped by `drop_remaining`.
        unsafe { this.archetype.fill_hole(row) }
    }
}

impl Drop for DespawnGuard<'_> {
    fn drop(&mut self) {
        self.release_remaining(&mut None);
        // SAFETY: every value of the row has now been dropped (or was the one whose
        // panicking `Drop` brought us here, which counts as dropped).
        unsafe { self.archetype.fill_hole(self.row) };
    }
}
