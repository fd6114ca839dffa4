//! `Archetypes`: all archetypes of a context, the graph between them, and the
//! row moves (spawn, insert, take, replace, despawn) that keep them dense.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::mem::ManuallyDrop;

use indexmap::IndexMap;

use super::archetype::{Archetype, ArchetypeId, Location, copy_value};
use super::bitset::ComponentSet;
use super::edges::{ColumnSlot, Transition, TransitionId};
use crate::component::{ComponentId, ComponentInfo};
use crate::entity::Entity;

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

/// Every archetype of one context, created on demand and never removed (so
/// `ArchetypeId`s stay valid and groups can remember which ones they scanned).
pub(crate) struct Archetypes {
    infos: &'static [ComponentInfo],
    list: Vec<Archetype>,
    by_set: IndexMap<ComponentSet, ArchetypeId>,
    /// Every edge taken so far, with its move plan.
    transitions: Vec<Transition>,
    /// Bundle type -> its plan in `plans`.
    bundles: HashMap<TypeId, BundleId, BuildHasherDefault<TypeIdHasher>>,
    /// The bundle type used last, checked before `bundles`: programs create
    /// runs of entities of one bundle type.
    last_bundle: Option<(TypeId, BundleId)>,
    plans: Vec<BundlePlan>,
}

/// Identifies a [`BundlePlan`] of one `Archetypes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BundleId(u32);

/// How to write the values of one bundle type into a new row: the archetype of
/// exactly its components, and for each tuple element in order, the column it
/// goes to and the type that column holds. The columns are a permutation of
/// the archetype's columns (it is the archetype of exactly the bundle's ids,
/// and a bundle listing an id twice is refused), so a row written by following
/// the plan to its end is complete.
struct BundlePlan {
    archetype: ArchetypeId,
    columns: Box<[ColumnSlot]>,
}

/// `TypeId`s are hashes already: use their bits instead of hashing them again.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }
}

impl Archetypes {
    /// The archetypes of a context that knows the components `infos` (indexed by
    /// component id); starts with the empty archetype.
    pub(crate) fn new(infos: &'static [ComponentInfo]) -> Self {
        let mut archetypes = Archetypes {
            infos,
            list: Vec::new(),
            by_set: IndexMap::new(),
            transitions: Vec::new(),
            bundles: HashMap::default(),
            last_bundle: None,
            plans: Vec::new(),
        };
        archetypes.find_or_create(&ComponentSet::new());
        archetypes
    }

    /// The number of archetypes; grows as new component sets appear.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Every archetype, in creation order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Archetype> + '_ {
        self.list.iter()
    }

    #[inline]
    pub(crate) fn get(&self, id: ArchetypeId) -> &Archetype {
        &self.list[id.index()]
    }

    /// Every archetype, mutably, in creation order.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Archetype> + '_ {
        self.list.iter_mut()
    }

    /// The source and target archetypes of a transition.
    #[inline]
    pub(crate) fn transition_ends(&self, transition: TransitionId) -> (ArchetypeId, ArchetypeId) {
        let transition = &self.transitions[transition.0 as usize];
        (transition.from, transition.to)
    }

    /// Frees every archetype's spare chunks.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.list.iter_mut().for_each(Archetype::shrink_to_fit);
    }

    /// The archetype for exactly `set`, created if new.
    pub(crate) fn find_or_create(&mut self, set: &ComponentSet) -> ArchetypeId {
        if let Some(&id) = self.by_set.get(set) {
            return id;
        }
        let id = ArchetypeId(u32::try_from(self.list.len()).expect("more than 2^32 archetypes"));
        let infos = set.iter().map(|c| &self.infos[c.index()]).collect();
        self.list.push(Archetype::new(id, infos));
        self.by_set.insert(set.clone(), id);
        id
    }

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
        let mut set = ComponentSet::new();
        if let Some(&twice) = ids.iter().find(|&&id| !set.insert(id)) {
            return Err(twice);
        }
        let archetype = self.find_or_create(&set);
        let target = &self.list[archetype.index()];
        let columns = ids
            .iter()
            .map(|&id| {
                let col = target
                    .column_index(id)
                    .expect("the archetype of a set has a column per id");
                ColumnSlot::of(target, col)
            })
            .collect();
        let id = BundleId(u32::try_from(self.plans.len()).expect("more than 2^32 bundle types"));
        self.plans.push(BundlePlan { archetype, columns });
        if let Some(bundle) = bundle {
            self.bundles.insert(bundle, id);
        }
        Ok(id)
    }

    /// The archetype a bundle's entities go to.
    pub(crate) fn bundle_archetype(&self, bundle: BundleId) -> ArchetypeId {
        self.plans[bundle.0 as usize].archetype
    }

    /// The transition from `from` adding `id`; `None` if `from` already has
    /// it. Cached on the edge after the first time.
    #[inline]
    pub(crate) fn add_transition(&mut self, from: ArchetypeId, id: ComponentId) -> Option<TransitionId> {
        match self.list[from.index()].edges.add(id) {
            Some(known) => Some(known),
            None => self.new_transition(from, id, true),
        }
    }

    /// The transition from `from` removing `id`; `None` if `from` lacks it.
    #[inline]
    pub(crate) fn remove_transition(&mut self, from: ArchetypeId, id: ComponentId) -> Option<TransitionId> {
        match self.list[from.index()].edges.remove(id) {
            Some(known) => Some(known),
            None => self.new_transition(from, id, false),
        }
    }

    /// Where a transition leads.
    #[cfg(test)]
    pub(crate) fn transition_target(&self, transition: TransitionId) -> ArchetypeId {
        self.transitions[transition.0 as usize].to
    }

    #[cold]
    fn new_transition(&mut self, from: ArchetypeId, id: ComponentId, add: bool) -> Option<TransitionId> {
        let source = self.list[from.index()].set();
        if source.contains(id) == add {
            return None;
        }
        let set = if add { source.with(id) } else { source.without(id) };
        let to = self.find_or_create(&set);
        let index = TransitionId(u32::try_from(self.transitions.len()).expect("more than 2^32 transitions"));
        let transition = Transition::new(&self.list[from.index()], &self.list[to.index()], id);
        self.transitions.push(transition);
        let edges = &mut self.list[from.index()].edges;
        if add {
            edges.set_add(id, index);
        } else {
            edges.set_remove(id, index);
        }
        Some(index)
    }

    /// Adds a row for `entity` to the bundle's archetype, with its values
    /// written by `write` in the bundle's tuple order. Returns `None` (and leaves
    /// no row behind, dropping what was written) unless `write` wrote every
    /// element of the bundle.
    #[inline]
    pub(crate) fn spawn(
        &mut self,
        bundle: BundleId,
        entity: Entity,
        write: impl FnOnce(&mut RowWriter<'_>),
    ) -> Option<Location> {
        let plan = &self.plans[bundle.0 as usize];
        let archetype = &mut self.list[plan.archetype.index()];
        // SAFETY: the `RowWriter` below owns the new row until every column is
        // written; if `write` stops early or panics, its drop removes the row.
        let loc = unsafe { archetype.alloc_row(entity) };
        let mut writer = RowWriter {
            base: archetype.chunk_base(loc.chunk as usize),
            archetype,
            plan: &plan.columns,
            loc,
            next: 0,
        };
        write(&mut writer);
        if writer.next != writer.plan.len() {
            return None; // `writer`'s drop removes the partial row
        }
        let _ = ManuallyDrop::new(writer);
        Some(loc)
    }

    /// Moves the entity at `loc` to the archetype with `id` added, writing
    /// `value` as that component. Gives `value` back if the entity already has
    /// `id`, if `loc` is not a live row, or if `id` does not hold `T`s.
    #[inline]
    pub(crate) fn insert<T: 'static>(&mut self, loc: Location, id: ComponentId, value: T) -> Result<Moved, T> {
        let Some(transition) = self.add_transition(loc.archetype, id) else {
            return Err(value);
        };
        if !self.can_transfer::<T>(transition, loc) {
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
    #[inline]
    pub(crate) fn take<T: 'static>(&mut self, loc: Location, id: ComponentId) -> Option<(T, Moved)> {
        let transition = self.remove_transition(loc.archetype, id)?;
        if !self.can_transfer::<T>(transition, loc) {
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
        let transition = &self.transitions[transition.0 as usize];
        transition.changed.ty == TypeId::of::<T>() && self.list[transition.from.index()].contains(loc)
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
        let index = transition.0;
        let transition = &self.transitions[index as usize];
        let [src, dst] = self
            .list
            .get_disjoint_mut([transition.from.index(), transition.to.index()])
            .expect("an edge never leads back to its own archetype");
        let entity = src.entity_at(loc).expect("`loc` is live (caller: `can_transfer`)");
        // SAFETY: every column of the new row is written below, the shared ones by
        // the moves and the added one (if any) by `finish`, with nothing in between
        // that can panic or read `dst`.
        let to = unsafe { dst.alloc_row(entity) };
        let (from_base, to_base) = (src.chunk_base(loc.chunk as usize), dst.chunk_base(to.chunk as usize));
        let (from_row, to_row) = (loc.row as usize, to.row as usize);
        for m in &transition.moves {
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
        let changed = &transition.changed;
        let slot = if transition.added {
            to_base.wrapping_add(changed.offset + to_row * changed.size)
        } else {
            from_base.wrapping_add(changed.offset + from_row * changed.size)
        };
        let result = finish(slot);
        // SAFETY: every value of the row at `loc` was moved to `dst` or out by
        // `finish` (caller's contract).
        let displaced = unsafe { src.fill_hole(loc) };
        (
            result,
            Moved {
                to,
                displaced,
                transition: TransitionId(index),
            },
        )
    }

    /// Swaps the `T` of component `id` at `loc` for `value`, giving back the old
    /// one; gives `value` back if there is no such `T` there.
    #[inline]
    pub(crate) fn replace<T: 'static>(&mut self, loc: Location, id: ComponentId, value: T) -> Result<T, T> {
        match self.list[loc.archetype.index()].get_mut::<T>(id, loc) {
            Some(slot) => Ok(std::mem::replace(slot, value)),
            None => Err(value),
        }
    }

    /// Mutable access to the `T` of component `id` at `loc`.
    #[inline]
    pub(crate) fn get_mut<T: 'static>(&mut self, id: ComponentId, loc: Location) -> Option<&mut T> {
        self.list[loc.archetype.index()].get_mut(id, loc)
    }

    /// Removes the row at `loc`, dropping its values. Returns `None` if `loc` is
    /// not live, else the entity moved into `loc` (see
    /// [`Archetype::displaced_by_removal`], which tells it beforehand).
    ///
    /// If a component's `Drop` panics, the row's other values are still dropped
    /// and the row is still removed before the panic continues.
    pub(crate) fn despawn(&mut self, loc: Location) -> Option<Option<Entity>> {
        let archetype = &mut self.list[loc.archetype.index()];
        if !archetype.contains(loc) {
            return None;
        }
        let mut guard = DespawnGuard {
            archetype,
            loc,
            next: 0,
        };
        guard.drop_remaining();
        Some(guard.finish())
    }

    /// Checks every archetype and the graph: edges lead to the archetype with
    /// exactly one component more or less.
    pub(crate) fn check(&self) -> Result<(), String> {
        for (i, archetype) in self.list.iter().enumerate() {
            if archetype.id().index() != i || self.by_set.get(archetype.set()) != Some(&archetype.id()) {
                return Err(format!("archetype {i} is not indexed by its component set"));
            }
            archetype.check()?;
        }
        for transition in &self.transitions {
            let (from, to) = (&self.list[transition.from.index()], &self.list[transition.to.index()]);
            let expected = if transition.added {
                from.set().with(transition.component)
            } else {
                from.set().without(transition.component)
            };
            if *to.set() != expected
                || *from.set() == expected
                || Transition::new(from, to, transition.component) != *transition
            {
                return Err(format!(
                    "the transition {:?} -> {:?} for component {} is wrong",
                    transition.from,
                    transition.to,
                    transition.component.index()
                ));
            }
        }
        Ok(())
    }
}

/// Writes the components of a new row, one at a time in bundle order.
/// Dropping it before every element is written removes the row and drops what
/// was written.
#[doc(hidden)]
pub struct RowWriter<'a> {
    /// The first byte of the row's chunk.
    base: *mut u8,
    archetype: &'a mut Archetype,
    plan: &'a [ColumnSlot],
    loc: Location,
    /// Elements `..next` of the plan are written.
    next: usize,
}

impl RowWriter<'_> {
    /// Writes the next element of the bundle; gives `value` back if the bundle
    /// has no more elements or the next one is not a `T`.
    #[inline]
    pub fn put<T: 'static>(&mut self, value: T) -> Result<(), T> {
        match self.plan.get(self.next) {
            Some(entry) if entry.ty == TypeId::of::<T>() => {
                let ptr = self
                    .base
                    .wrapping_add(entry.offset + self.loc.row as usize * entry.size);
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
        unsafe { self.archetype.fill_hole(self.loc) };
        for entry in &self.plan[..self.next] {
            let ptr = self
                .base
                .wrapping_add(entry.offset + self.loc.row as usize * entry.size);
            // SAFETY: `put` initialised this slot, in the row's chunk whose memory is
            // still allocated; the row is no longer live, so nothing else drops it,
            // and each written entry is visited once. (If a `Drop` panics, the rest
            // leak: never a double drop.)
            unsafe { self.archetype.columns[entry.col].info.ty.drop_values(ptr, 1) };
        }
    }
}

/// Drops a row's values column by column; if one `Drop` panics, its own drop
/// goes on with the remaining columns and removes the row, so the archetype
/// stays dense and no value is dropped twice.
struct DespawnGuard<'a> {
    archetype: &'a mut Archetype,
    loc: Location,
    next: usize,
}

impl DespawnGuard<'_> {
    fn drop_remaining(&mut self) {
        while self.next < self.archetype.columns.len() {
            let col = self.next;
            self.next += 1;
            // SAFETY: `loc` is live and columns before `next` were dropped once;
            // `next` moves past `col` before the drop, so it is never dropped again.
            unsafe { self.archetype.drop_value(col, self.loc) };
        }
    }

    fn finish(self) -> Option<Entity> {
        let mut this = ManuallyDrop::new(self);
        let loc = this.loc;
        // SAFETY: every value of the row was dropped by `drop_remaining`.
        unsafe { this.archetype.fill_hole(loc) }
    }
}

impl Drop for DespawnGuard<'_> {
    fn drop(&mut self) {
        self.drop_remaining();
        // SAFETY: every value of the row has now been dropped (or was the one whose
        // panicking `Drop` brought us here, which counts as dropped).
        unsafe { self.archetype.fill_hole(self.loc) };
    }
}
