//! Creating rows from bundles: making and following the plan of each bundle
//! type (`bundle_plan.rs`), and `RowWriter`, which writes a new row
//! element by element and removes it if it is dropped half written.

use std::any::TypeId;
use std::mem::ManuallyDrop;

use super::archetype::{Archetype, ColumnSlot};
use super::archetypes::Archetypes;
use super::bitset::ComponentSet;
use super::bundle_plan::{BundleId, BundlePlan, Element};
use super::location::{ArchetypeId, Location};
use super::sparse::SparseSets;
use crate::entity::Entity;
use crate::id::ComponentId;

impl Archetypes {
    /// The plan cached for bundle type `bundle`, if any.
    #[inline]
    pub(crate) fn cached_bundle(&mut self, bundle: TypeId) -> Option<BundleId> {
        match self.last_bundle {
            Some((last, id)) if last == bundle => Some(id),
            _ => {
                let id = *self.bundles.get(&bundle)?;
                self.last_bundle = Some((bundle, id));
                Some(id)
            }
        }
    }

    /// Makes the plan for a bundle of the components `ids`, in tuple order, and
    /// caches it under `bundle` if given. `Err(id)` if `id` is listed twice.
    pub(crate) fn register_bundle(
        &mut self,
        bundle: Option<TypeId>,
        ids: &[ComponentId],
    ) -> Result<BundleId, ComponentId> {
        let mut all = ComponentSet::new();
        if let Some(&twice) = ids.iter().find(|&&id| !all.insert(id)) {
            return Err(twice);
        }
        let sparse: ComponentSet = ids.iter().copied().filter(|&id| self.is_sparse(id)).collect();
        let set: ComponentSet = ids.iter().copied().filter(|&id| !sparse.contains(id)).collect();
        let archetype = self.find_or_create(&set);
        let target = self.get(archetype);
        let elements = ids
            .iter()
            .map(|&id| match target.column_index(id) {
                Some(col) => Element::Column(ColumnSlot::of(target, col)),
                None => Element::Sparse(&self.infos[id.index()]),
            })
            .collect();
        let id = BundleId(
            u32::try_from(self.plans.len())
                .expect("fewer than 2^32 bundle plans: each costs memory, which runs out first"),
        );
        self.plans.push(BundlePlan {
            archetype,
            elements,
            sparse,
        });
        if let Some(bundle) = bundle {
            self.bundles.insert(bundle, id);
        }
        Ok(id)
    }

    /// Bundle plan `bundle`.
    #[inline]
    pub(super) fn plan(&self, bundle: BundleId) -> &BundlePlan {
        &self.plans[bundle.0 as usize]
    }

    /// The archetype a bundle's entities go to.
    #[inline]
    pub(crate) fn bundle_archetype(&self, bundle: BundleId) -> ArchetypeId {
        self.plans[bundle.0 as usize].archetype
    }

    /// The bundle's components kept out of archetypes.
    #[inline]
    pub(crate) fn bundle_sparse(&self, bundle: BundleId) -> &ComponentSet {
        &self.plans[bundle.0 as usize].sparse
    }

    /// Adds a row to the bundle's archetype, with its values written by
    /// `write` in the bundle's tuple order (those of sparse components go to
    /// `sparse`, under entity slot `slot`), for the entity `entity` then
    /// makes (given the row's location), which must be in slot `slot`.
    /// Returns `None` (and leaves no row and no sparse value behind,
    /// dropping what was written, and makes no entity) unless `write` wrote
    /// every element of the bundle.
    #[inline]
    pub(crate) fn spawn(
        &mut self,
        bundle: BundleId,
        sparse: &mut SparseSets,
        slot: u32,
        entity: impl FnOnce(Location) -> Entity,
        write: impl FnOnce(&mut RowWriter<'_>),
    ) -> Option<(Entity, Location)> {
        let BundlePlan {
            archetype: id,
            elements: columns,
            ..
        } = &self.plans[bundle.0 as usize];
        let archetype = &mut self.list[id.index()];
        let location = Location {
            archetype: *id,
            row: archetype.len() as u32,
        };
        // SAFETY: the `RowWriter` below owns the new row until every column is
        // written; if `write` stops early or panics, its drop removes the row.
        // The row's entity is set once it is complete.
        let row = unsafe { archetype.alloc_row(Entity::PLACEHOLDER) };
        debug_assert_eq!(row, location.row);
        let mut writer = RowWriter {
            base: archetype.chunk_base(row),
            row_in_chunk: archetype.row_in_chunk(row),
            archetype,
            sparse,
            slot,
            plan: columns,
            row,
            next: 0,
        };
        write(&mut writer);
        if writer.next != writer.plan.len() {
            return None; // `writer`'s drop removes the partial row
        }
        // The row's entity slot: the chunk's entity array comes first.
        let entity_slot = writer.base.cast::<Entity>().wrapping_add(writer.row_in_chunk);
        let _ = ManuallyDrop::new(writer);
        let entity = entity(location);
        // The rows of one `Archetypes` hold distinct slots (sparse write
        // views rely on it). Checked before the entity is written: a row
        // refused here keeps `Entity::PLACEHOLDER`, whose slot no set has, and its
        // values leak (a caller's bug: the entity allocator gave a slot twice).
        if entity.index() != slot || !self.claim(slot) {
            refused_slot(slot);
        }
        // SAFETY: `entity_slot` is the entity slot of live row `row` (in bounds,
        // aligned, initialised with `Entity::PLACEHOLDER`, which is `Copy`), reached
        // through the chunk's raw pointer; the archetype is borrowed mutably
        // here, so nothing else reads or writes it meanwhile.
        unsafe { entity_slot.write(entity) };
        Some((entity, location))
    }
}

/// `spawn`'s refusal of a row for slot `slot` (out of line).
#[cold]
#[inline(never)]
pub(super) fn refused_slot(slot: u32) -> ! {
    panic!("slot {slot} given twice, or not the slot written: the entity allocator gives each free slot once")
}

/// Writes the components of a new row, one at a time in bundle order.
/// Dropping it before every element is written removes the row and drops what
/// was written.
#[doc(hidden)]
pub struct RowWriter<'a> {
    /// The first byte of the row's chunk.
    base: *mut u8,
    /// The row's position in its chunk.
    row_in_chunk: usize,
    archetype: &'a mut Archetype,
    /// Where the values of sparse components go, under `slot`.
    sparse: &'a mut SparseSets,
    slot: u32,
    plan: &'a [Element],
    row: u32,
    /// Elements `..next` of the plan are written.
    next: usize,
}

impl RowWriter<'_> {
    /// Writes the next element of the bundle; gives `value` back if the bundle
    /// has no more elements or the next one is not a `T`.
    #[inline(always)]
    pub fn put<T: Send + Sync + 'static>(&mut self, value: T) -> Result<(), T> {
        match self.plan.get(self.next) {
            Some(Element::Sparse(info)) => {
                self.sparse.insert(info, self.slot, value)?;
                self.next += 1;
                Ok(())
            }
            Some(Element::Column(entry)) if entry.ty == TypeId::of::<T>() => {
                let ptr = self.base.wrapping_add(entry.offset + self.row_in_chunk * entry.size);
                // SAFETY: the entry's column holds `T`s (the plan records the column's
                // type, just compared) at `offset + row * size` in the row's chunk, so
                // `ptr` is in bounds and aligned; the slot is not written yet: the
                // plan's columns are distinct and elements before `next` are the only
                // ones written.
                unsafe { ptr.cast::<T>().write(value) };
                self.next += 1;
                Ok(())
            }
            _ => Err(value),
        }
    }
}

impl Drop for RowWriter<'_> {
    /// Removes the half-written row, then drops what was written. In this
    /// order a panicking `Drop` of a written value cannot leave the row counted:
    /// removing the last row moves nothing, and its chunk's memory stays
    /// allocated (at worst as a spare chunk) while the values are dropped from it.
    fn drop(&mut self) {
        // SAFETY: the row is the archetype's last (the writer has borrowed the
        // archetype since allocating it), so `fill_hole` only shrinks the live range
        // and reads none of its slots.
        unsafe { self.archetype.fill_hole(self.row) };
        for element in &self.plan[..self.next] {
            let entry = match element {
                Element::Column(entry) => entry,
                Element::Sparse(info) => {
                    let _had = self.sparse.remove(info.id(), self.slot);
                    continue;
                }
            };
            let ptr = self.base.wrapping_add(entry.offset + self.row_in_chunk * entry.size);
            // SAFETY: `put` initialised this slot, in the row's chunk whose memory is
            // still allocated; the row is no longer live, so nothing else drops it,
            // and each written entry is visited once. (If a `Drop` panics, the rest
            // leak: never a double drop.)
            unsafe { self.archetype.columns[entry.col].info.ty.drop_values(ptr, 1) };
        }
    }
}
