//! Creating many rows of one bundle type at once (what
//! `create_entities_with` does when nothing hears of it): the bundle's
//! types are checked against its plan once per batch rather than once per
//! value, and each row's values go straight to their columns.
//!
//! [`RowValues`] is implemented here, for tuples (a single component is
//! written as a tuple of one), so the types checked are, by construction,
//! the types written.

use std::any::TypeId;

use smallvec::SmallVec;

use super::archetypes::{Archetypes, claim};
use super::bundle_plan::{BundleId, Element};
use super::location::Location;
use super::spawn::refused_slot;
use crate::entity::Entity;

/// The values of one row, as a batch writes them: a tuple of up to 12
/// values. Implemented only here (the trait cannot be
/// named outside the crate).
#[doc(hidden)]
pub trait RowValues: Sized {
    /// Calls `f` with each value's type, in tuple order.
    fn type_ids(f: impl FnMut(TypeId));

    /// Writes the values, in tuple order, each at `base + offsets[i] +
    /// position * size_of::<Ti>()`.
    ///
    /// # Safety
    /// `offsets` has one entry per value, and the `i`-th value's address
    /// as above is in bounds, aligned for its type and free to overwrite
    /// (the `i`-th entry is the offset of a column of the `i`-th type, in
    /// the chunk starting at `base`, and `position` is a row of that chunk
    /// no live value occupies).
    unsafe fn write_row(self, base: *mut u8, position: usize, offsets: &[usize]);
}

macro_rules! row_values {
    ($($ty:ident $value:ident $offset:ident),*) => {
        impl<$($ty: 'static),*> RowValues for ($($ty,)*) {
            #[allow(unused_variables, unused_mut)]
            #[inline(always)]
            fn type_ids(mut f: impl FnMut(TypeId)) {
                $(f(TypeId::of::<$ty>());)*
            }

            #[allow(unused_variables)]
            #[inline(always)]
            unsafe fn write_row(self, base: *mut u8, position: usize, offsets: &[usize]) {
                let ($($value,)*) = self;
                let &[$($offset),*] = offsets else {
                    unreachable!("one offset per value: `spawn_batch` makes one per type `type_ids` lists")
                };
                $(
                    // SAFETY: per the contract, this address is in bounds, aligned for
                    // its type and free; `write` moves the value in without reading
                    // the old bytes.
                    unsafe {
                        base.wrapping_add($offset + position * size_of::<$ty>())
                            .cast::<$ty>()
                            .write($value);
                    };
                )*
            }
        }
    };
}

row_values!();
row_values!(A a oa);
row_values!(A a oa, B b ob);
row_values!(A a oa, B b ob, C c oc);
row_values!(A a oa, B b ob, C c oc, D d od);
row_values!(A a oa, B b ob, C c oc, D d od, E e oe);
row_values!(A a oa, B b ob, C c oc, D d od, E e oe, F f of);
row_values!(A a oa, B b ob, C c oc, D d od, E e oe, F f of, G g og);
row_values!(A a oa, B b ob, C c oc, D d od, E e oe, F f of, G g og, H h oh);
row_values!(A a oa, B b ob, C c oc, D d od, E e oe, F f of, G g og, H h oh, I i oi);
row_values!(A a oa, B b ob, C c oc, D d od, E e oe, F f of, G g og, H h oh, I i oi, J j oj);
row_values!(A a oa, B b ob, C c oc, D d od, E e oe, F f of, G g og, H h oh, I i oi, J j oj, K k ok);
row_values!(A a oa, B b ob, C c oc, D d od, E e oe, F f of, G g og, H h oh, I i oi, J j oj, K k ok, L l ol);

impl Archetypes {
    /// Adds a row per item of `rows` to the archetype of bundle plan
    /// `bundle`, each for the entity `entity` makes given the row's
    /// location, which `created` is then told. The plan's elements must be
    /// exactly `B`'s types in order, all kept in columns; if they are not
    /// (a plan with sparse components), nothing is done and `rows` comes
    /// back untouched, for the caller to write row by row.
    ///
    /// If `entity` panics, the row it was asked for is not made (its values
    /// are dropped); the rows before it stay.
    pub(crate) fn spawn_batch<B: RowValues, I: Iterator<Item = B>>(
        &mut self,
        bundle: BundleId,
        rows: I,
        mut entity: impl FnMut(Location) -> Entity,
        mut created: impl FnMut(Entity),
    ) -> Result<(), I> {
        let plan = self.plan(bundle);
        let mut types = SmallVec::<[TypeId; 12]>::new();
        B::type_ids(|ty| types.push(ty));
        if types.len() != plan.elements.len() {
            return Err(rows);
        }
        let mut offsets = SmallVec::<[usize; 12]>::new();
        for (element, &ty) in plan.elements.iter().zip(&types) {
            match element {
                Element::Column(slot) if slot.ty == ty => offsets.push(slot.offset),
                _ => return Err(rows),
            }
        }
        let id = plan.archetype;
        let Archetypes { list, occupied, .. } = self;
        let archetype = &mut list[id.index()];
        for values in rows {
            let location = Location {
                archetype: id,
                row: archetype.next_row(),
            };
            let entity = entity(location);
            if !claim(occupied, entity.index()) {
                refused_slot(entity.index());
            }
            // SAFETY: the plan's columns hold `B`'s types in order (checked above
            // against `B::type_ids`, which lists the types `write_row` writes), so
            // `offsets` has one entry per value, each the offset of a column of the
            // value's type, whose size is that type's size; the row is a new row
            // of its chunk, so no live value is there. `write_row` only moves
            // values in: it does not unwind.
            let row =
                unsafe { archetype.push_row_with(entity, |base, position| values.write_row(base, position, &offsets)) };
            debug_assert_eq!(row, location.row);
            created(entity);
        }
        Ok(())
    }
}
