//! `SparseSets`: the components kept out of archetypes (the `flag` and
//! `sparse` storage kinds), one sparse set per component type.
//!
//! A sparse set is keyed by entity slot index: `index[slot]` is the entry's
//! position in the dense arrays (`slots`, `values`), or `ABSENT`. Adding a
//! value pushes an entry; removing one swaps the last entry into its place.
//! The entity's row never moves, so adding and removing costs a few stores,
//! and a flag (a zero-sized type) has a dense value array that never
//! allocates. The slot is all a set knows of an entity: the context removes
//! an entity's entries when it is destroyed, before the slot can be reused,
//! so an entry always belongs to the slot's current entity.

use std::any::TypeId;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

use super::bitset::ComponentSet;
use super::component_info::{ComponentInfo, ComponentRef};
use super::stamps::{Clock, Floor, LastMark, Stamp, Stamps, Tick};
use super::type_info::{ErasedRef, Recycler};
use crate::id::ComponentId;

/// Slots per block of a sparse set's change stamps.
const STAMP_SHIFT: u32 = 6;

/// Marks "no entry" in a sparse set's index.
const ABSENT: u32 = u32::MAX;

/// The dense values of one sparse set, typed underneath.
trait Values: Send + Sync {
    /// Removes entry `at` by moving the last one into its place, and drops it.
    fn swap_remove_drop(&mut self, at: usize);
    /// As `swap_remove_drop`, handing the value (as component `id`) to `to`
    /// first (see [`Recycler`]).
    fn swap_remove_hand_over(&mut self, at: usize, id: ComponentId, to: Recycler<'_>);
    /// A view of entry `at`.
    fn erased(&self, at: usize) -> ErasedRef<'_>;
    /// The number of entries.
    fn len(&self) -> usize;
    /// Bytes allocated.
    fn bytes(&self) -> usize;
    /// Frees spare capacity; returns where the values now start (see
    /// `SparseSet::values_at`).
    fn shrink_to_fit(&mut self) -> NonNull<u8>;
}

/// Where `values` start, from `Vec::as_mut_ptr` (so the pointer may write,
/// and taking it borrows no value).
#[inline(always)]
fn start<T>(values: &mut Vec<T>) -> NonNull<u8> {
    NonNull::new(values.as_mut_ptr().cast::<u8>())
        .expect("a `Vec`'s pointer is never null, even unallocated (dangling)")
}

impl<T: Send + Sync + 'static> Values for Vec<T> {
    fn swap_remove_drop(&mut self, at: usize) {
        // The value leaves the vector before it is dropped: a panicking `Drop`
        // leaves the vector consistent.
        drop(self.swap_remove(at));
    }

    fn swap_remove_hand_over(&mut self, at: usize, id: ComponentId, to: Recycler<'_>) {
        let mut value = Some(self.swap_remove(at));
        to(id, &mut value);
    }

    fn erased(&self, at: usize) -> ErasedRef<'_> {
        ErasedRef::of(&self[at])
    }

    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn bytes(&self) -> usize {
        self.capacity() * size_of::<T>()
    }

    fn shrink_to_fit(&mut self) -> NonNull<u8> {
        Vec::shrink_to_fit(self);
        start(self)
    }
}

/// The values of one component type kept out of archetypes, by entity slot.
///
/// Invariants (checked by [`SparseSet::check`]): `slots` and `values` have
/// one entry each per present slot, in the same order; `index[slots[i]] ==
/// i` for every entry, and every other index entry is `ABSENT`.
pub(crate) struct SparseSet {
    info: &'static ComponentInfo,
    /// The type `values` holds (a `Vec` of it).
    type_id: TypeId,
    /// By entity slot: the entry's position, or `ABSENT`.
    index: Vec<u32>,
    /// Each entry's entity slot.
    slots: Vec<u32>,
    values: Box<dyn Values>,
    /// Where `values`' elements start: taken from `Vec::as_mut_ptr` whenever
    /// the vector may have moved them (grown, shrunk; dangling while it has
    /// never held a value, when no entry is read through it), so a query that
    /// has the sets lent exclusively writes values through it without a
    /// `&mut` to the set (which would clash with the shared borrows its
    /// per-entity checks take meanwhile).
    values_at: NonNull<u8>,
    /// Change stamps by entity slot, while some collector watches the
    /// component (see `stamps/`): `NEVER` for a slot without a value.
    stamps: Option<Stamps>,
}

// SAFETY: `values_at` points into `values`, which the set owns and which is
// `Send + Sync` (its elements are); the pointer is written through only by a
// query that has the sets lent exclusively (`SparseLend::write`), as a
// `&mut` to those values would be.
unsafe impl Send for SparseSet {}
// SAFETY: as for `Send`: through `&SparseSet` the pointer is only copied out,
// never written through (a `SparseLend` made from `&SparseSets` refuses to
// write).
unsafe impl Sync for SparseSet {}

impl SparseSet {
    /// An empty set of `info`'s values, which are `T`s.
    fn new<T: Send + Sync + 'static>(info: &'static ComponentInfo) -> Self {
        assert_eq!(info.ty.type_id(), TypeId::of::<T>(), "the info of another type");
        SparseSet {
            info,
            type_id: TypeId::of::<T>(),
            index: Vec::new(),
            slots: Vec::new(),
            values: Box::new(Vec::<T>::new()),
            values_at: NonNull::<T>::dangling().cast(),
            stamps: None,
        }
    }

    /// Gives the set change stamps (every slot unchanged, below the
    /// context's `floor`), or drops them.
    fn set_watched(&mut self, watched: bool, floor: &Floor) {
        match (watched, self.stamps.is_some()) {
            (true, false) => {
                self.stamps = Some(Stamps::new(
                    self.stamp_capacity(),
                    STAMP_SHIFT,
                    floor.clone(),
                    LastMark::default(),
                ));
            }
            (false, true) => self.stamps = None,
            _ => {}
        }
    }

    /// Slots the change stamps need room for: every indexed one, in whole
    /// blocks.
    fn stamp_capacity(&self) -> usize {
        self.index.len().max(1).next_multiple_of(1 << STAMP_SHIFT)
    }

    /// The change stamps, if the set has them.
    #[inline(always)]
    pub(super) fn stamps(&self) -> Option<&Stamps> {
        self.stamps.as_ref()
    }

    /// Room in the change stamps for every indexed slot (new ones 0).
    #[cold]
    #[inline(never)]
    fn grow_stamps(&mut self) {
        let capacity = self.stamp_capacity();
        if let Some(stamps) = &mut self.stamps {
            stamps.grow(capacity);
        }
    }

    /// The change stamp of `slot` (`NEVER`: none, or no stamps).
    #[inline]
    pub(crate) fn stamp(&self, slot: u32) -> Tick {
        self.stamps.as_ref().map_or(Tick::NEVER, |stamps| stamps.peek(slot))
    }

    /// Marks `slot` unchanged (its change was handed to its collectors).
    pub(crate) fn clear_stamp(&mut self, slot: u32) {
        if let Some(stamps) = &mut self.stamps
            && !stamps.get(slot).is_never()
        {
            stamps.set(slot, Tick::NEVER);
        }
    }

    /// Calls `f` with each slot stamped after `since`, in slot order.
    pub(crate) fn changed_since(&self, since: Tick, mut f: impl FnMut(u32)) {
        let len = self.index.len();
        if let Some(stamps) = &self.stamps {
            for (start, mut changed) in stamps.changed_blocks_shared(len, since) {
                while changed != 0 {
                    f((start + changed.trailing_zeros() as usize) as u32);
                    changed &= changed - 1;
                }
            }
        }
    }

    /// The entry of `slot`, if it has one.
    #[inline(always)]
    fn entry(&self, slot: u32) -> Option<usize> {
        match self.index.get(slot as usize) {
            Some(&at) if at != ABSENT => Some(at as usize),
            _ => None,
        }
    }

    /// Whether `slot` has a value.
    #[inline(always)]
    pub(crate) fn contains(&self, slot: u32) -> bool {
        self.entry(slot).is_some()
    }

    /// The number of values.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The slots with a value, in entry order (insertion order, but for the
    /// last entry moved into each removed one's place).
    #[inline]
    pub(crate) fn slots(&self) -> &[u32] {
        &self.slots
    }

    /// The values as the `Vec<T>` they are, if they are `T`s.
    #[inline(always)]
    fn typed<T: 'static>(&self) -> Option<&Vec<T>> {
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        let values: *const dyn Values = &*self.values;
        // SAFETY: `values` was made as a `Vec<T'>` by `new::<T'>`, which recorded
        // `TypeId::of::<T'>()` in `type_id` (neither changes afterwards); that id
        // is `T`'s, so the box holds a `Vec<T>`, and the data pointer of the
        // trait object points to it. The borrow is tied to `&self`.
        Some(unsafe { &*values.cast::<Vec<T>>() })
    }

    /// The values as the `Vec<T>` they are, if they are `T`s, mutably, with
    /// the index and the slot list beside them (borrowed apart).
    #[inline(always)]
    fn parts_mut<T: 'static>(&mut self) -> Option<(&mut Vec<T>, &mut Vec<u32>, &mut Vec<u32>)> {
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        let values: *mut dyn Values = &mut *self.values;
        // SAFETY: as in `typed`; the borrow is tied to `&mut self`, so it is
        // unique, and `index` and `slots` are other fields.
        let values = unsafe { &mut *values.cast::<Vec<T>>() };
        Some((values, &mut self.index, &mut self.slots))
    }

    /// The slots with a value and the values, entry by entry, if they are
    /// `T`s.
    #[cfg(feature = "serde")]
    #[inline]
    pub(crate) fn entries<T: 'static>(&self) -> Option<(&[u32], &[T])> {
        Some((&self.slots, self.typed::<T>()?))
    }

    /// The index by slot and the values, if they are `T`s.
    #[inline]
    pub(super) fn typed_parts<T: 'static>(&self) -> Option<(&[u32], &[T])> {
        Some((&self.index, self.typed::<T>()?))
    }

    /// The index by slot, and where the values start and their number, if
    /// they are `T`s. The pointer comes from `Vec::as_mut_ptr` (see
    /// `values_at`): it may write if the set is borrowed exclusively.
    #[inline]
    pub(super) fn typed_raw<T: 'static>(&self) -> Option<(&[u32], NonNull<T>, usize)> {
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        Some((&self.index, self.values_at.cast::<T>(), self.slots.len()))
    }

    /// `slot`'s `T`.
    #[inline(always)]
    pub(crate) fn get<T: 'static>(&self, slot: u32) -> Option<&T> {
        let at = self.entry(slot)?;
        self.typed::<T>()?.get(at)
    }

    /// `slot`'s `T`, mutably, with its change stamp (to mark once the write
    /// stands) with `tick`.
    #[inline(always)]
    pub(crate) fn get_mut<T: 'static>(&mut self, slot: u32, tick: Tick) -> Option<(&mut T, Stamp<'_>)> {
        let at = self.entry(slot)?;
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        let values: *mut dyn Values = &mut *self.values;
        // SAFETY: as in `parts_mut` (the box holds a `Vec<T>`); the borrow is
        // unique through `&mut self`, and `stamps` is another field.
        let values = unsafe { &mut *values.cast::<Vec<T>>() };
        if at >= values.len() {
            return None;
        }
        // SAFETY: `at < len`: an initialised `T`, borrowed uniquely through
        // `&mut self`. Reached through `Vec::as_mut_ptr` rather than a
        // `&mut [T]`, so the pointer `values_at` keeps (from the same call)
        // stays valid for the queries that write through it later.
        let value = unsafe { &mut *values.as_mut_ptr().add(at) };
        Some((value, Stamp::new(self.stamps.as_ref(), slot, tick)))
    }

    /// Gives `slot` the value `value`; gives it back if `slot` has one
    /// already or `T` is not this set's type.
    #[inline(always)]
    fn insert<T: 'static>(&mut self, slot: u32, value: T) -> Result<(), T> {
        let Some((values, index, slots)) = self.parts_mut::<T>() else {
            return Err(value);
        };
        // Fewer than 2^32 - 1 entries: every entry has a distinct slot, and
        // slots are below 2^32 - 1 (entity slots stop there).
        let at = slots.len() as u32;
        let entry = index.get_mut(slot as usize);
        if entry.as_ref().is_some_and(|entry| **entry != ABSENT) {
            return Err(value);
        }
        // The value first: if its push panics (a capacity overflow), nothing
        // has changed. The rest cannot panic (fewer than 2^32 `u32`s; running
        // out of memory aborts).
        values.push(value);
        slots.push(slot);
        let grew = match entry {
            Some(entry) => {
                *entry = at;
                false
            }
            None => {
                grow(index, slot, at);
                true
            }
        };
        self.values_at = start(values);
        // A slot's stamp is 0 while it has no value (cleared as the value
        // goes), so only a grown index needs stamps made room for.
        if grew {
            self.grow_stamps();
        }
        Ok(())
    }

    /// Takes `slot`'s `T` out, moving the last entry into its place.
    #[inline(always)]
    fn take<T: 'static>(&mut self, slot: u32) -> Option<T> {
        let at = self.entry(slot)?;
        let (values, index, slots) = self.parts_mut::<T>()?;
        let value = values.swap_remove(at);
        slots.swap_remove(at);
        if let Some(&moved) = slots.get(at) {
            index[moved as usize] = at as u32;
        }
        index[slot as usize] = ABSENT;
        if self.stamps.is_some() {
            self.clear_stamp(slot);
        }
        Some(value)
    }

    /// Takes `slot`'s entry out of the index and the slot list (moving the
    /// last entry into its place); returns its position, where the caller
    /// removes the value the same way.
    fn unlink(&mut self, slot: u32) -> Option<usize> {
        let at = self.entry(slot)?;
        self.slots.swap_remove(at);
        if let Some(&moved) = self.slots.get(at) {
            self.index[moved as usize] = at as u32;
        }
        self.index[slot as usize] = ABSENT;
        if self.stamps.is_some() {
            self.clear_stamp(slot);
        }
        Some(at)
    }

    /// Drops `slot`'s value, if it has one. If its `Drop` panics, the set is
    /// consistent already (the value left it first).
    fn remove(&mut self, slot: u32) -> bool {
        match self.unlink(slot) {
            Some(at) => {
                self.values.swap_remove_drop(at);
                true
            }
            None => false,
        }
    }

    /// As `remove`, handing the value to `to` (when given and the component
    /// is pooled) instead of dropping it.
    fn remove_recycling(&mut self, slot: u32, to: &mut Option<Recycler<'_>>) -> bool {
        match (self.unlink(slot), to) {
            (Some(at), Some(to)) if self.info.is_pooled() => {
                self.values.swap_remove_hand_over(at, self.info.id(), &mut **to);
                true
            }
            (Some(at), _) => {
                self.values.swap_remove_drop(at);
                true
            }
            (None, _) => false,
        }
    }

    /// A view of `slot`'s value.
    #[inline]
    pub(crate) fn component_ref(&self, slot: u32) -> Option<ComponentRef<'_>> {
        let at = self.entry(slot)?;
        Some(ComponentRef::from_erased(self.info, self.values.erased(at)))
    }

    /// Checks the invariants listed on the type; `holds(slot)` says whether
    /// a live entity holds a slot (every entry must belong to one).
    fn check(&self, holds: &dyn Fn(u32) -> bool) -> Result<(), String> {
        let name = self.info.name();
        if self.values.len() != self.slots.len() {
            return Err(format!(
                "sparse {name}: {} slots but {} values",
                self.slots.len(),
                self.values.len()
            ));
        }
        for (at, &slot) in self.slots.iter().enumerate() {
            if self.entry(slot) != Some(at) {
                return Err(format!("sparse {name}: slot {slot} is not indexed at {at}"));
            }
            if !holds(slot) {
                return Err(format!("sparse {name}: slot {slot} holds no live entity"));
            }
        }
        let indexed = self.index.iter().filter(|&&at| at != ABSENT).count();
        if indexed != self.slots.len() {
            return Err(format!(
                "sparse {name}: {indexed} indexed slots for {} entries",
                self.slots.len()
            ));
        }
        Ok(())
    }
}

/// Grows `index` to hold `slot`, with entry `at` there.
#[cold]
#[inline(never)]
fn grow(index: &mut Vec<u32>, slot: u32, at: u32) {
    index.resize(slot as usize + 1, ABSENT);
    index[slot as usize] = at;
}

/// Every sparse set of one context, by component id (made on a type's first
/// value).
#[derive(Default)]
pub(crate) struct SparseSets {
    /// By component id.
    sets: Vec<Option<SparseSet>>,
    /// The ids that have a set, ascending.
    ids: Vec<ComponentId>,
    /// The components whose sets carry change stamps, as a set and listed.
    watched: ComponentSet,
    watched_ids: Vec<ComponentId>,
    /// The stamps' floor (see [`Floor`]), shared by every stamped set and
    /// by the context's archetypes.
    floor: Floor,
}

impl SparseSets {
    /// No sets yet; their stamps will share the floor of `clock` (the
    /// archetypes' clock).
    pub(crate) fn new(clock: &Clock) -> Self {
        SparseSets {
            floor: clock.floor().clone(),
            ..SparseSets::default()
        }
    }

    /// The set of component `id`, if one was made.
    #[inline(always)]
    pub(crate) fn set(&self, id: ComponentId) -> Option<&SparseSet> {
        self.sets.get(id.index())?.as_ref()
    }

    #[inline(always)]
    fn set_mut(&mut self, id: ComponentId) -> Option<&mut SparseSet> {
        self.sets.get_mut(id.index())?.as_mut()
    }

    /// Whether `slot` has a value of component `id`.
    #[inline(always)]
    pub(crate) fn contains(&self, id: ComponentId, slot: u32) -> bool {
        self.set(id).is_some_and(|set| set.contains(slot))
    }

    /// `slot`'s `T` of component `id`.
    #[inline(always)]
    pub(crate) fn get<T: 'static>(&self, id: ComponentId, slot: u32) -> Option<&T> {
        self.set(id)?.get(slot)
    }

    /// `slot`'s `T` of component `id`, mutably, with its change stamp (to
    /// mark once the write stands) with `tick` (`NEVER`: not stamped).
    #[inline(always)]
    pub(crate) fn get_mut<T: 'static>(
        &mut self,
        id: ComponentId,
        slot: u32,
        tick: Tick,
    ) -> Option<(&mut T, Stamp<'_>)> {
        self.set_mut(id)?.get_mut(slot, tick)
    }

    /// The sets of the components in `watched` get change stamps (now, or
    /// when made), the others' are dropped.
    pub(crate) fn set_watched(&mut self, watched: &ComponentSet) {
        if *watched == self.watched {
            return;
        }
        for &id in &self.ids {
            if let Some(set) = self.sets[id.index()].as_mut() {
                set.set_watched(watched.contains(id), &self.floor);
            }
        }
        self.watched = watched.clone();
        self.watched_ids = watched.iter().collect();
    }

    /// The components whose sets carry change stamps.
    #[inline(always)]
    pub(crate) fn watched(&self) -> &ComponentSet {
        &self.watched
    }

    /// The set of component `id`, mutably.
    #[inline]
    pub(crate) fn set_of_mut(&mut self, id: ComponentId) -> Option<&mut SparseSet> {
        self.set_mut(id)
    }

    /// Lowers every change stamp of every set by `base` (`NEVER` for those
    /// at or below it), as [`Archetypes::rebase_ticks`](super::Archetypes::rebase_ticks)
    /// does for columns.
    pub(crate) fn rebase_stamps(&mut self, base: Tick) {
        for set in self.sets.iter_mut().flatten() {
            if let Some(stamps) = &mut set.stamps {
                stamps.rebase(base);
            }
        }
    }

    /// Checks the sets' change stamps against the module docs of
    /// `stamps/` (invariants 2 to 7): they share `clock`'s floor, a set has
    /// stamps exactly when its component is watched, with room for every
    /// indexed slot, and passes [`Stamps::check`]; a slot without a value
    /// is unstamped.
    pub(crate) fn check_stamps(&self, clock: &Clock) -> Result<(), String> {
        if !self.floor.is(clock.floor()) {
            return Err("the sparse sets do not share the context's stamp floor".into());
        }
        for &id in &self.ids {
            let Some(set) = self.set(id) else {
                continue;
            };
            let name = set.info.name();
            if set.stamps.is_some() != self.watched.contains(id) {
                return Err(format!("sparse {name}: has change stamps: {}", set.stamps.is_some()));
            }
            let Some(stamps) = &set.stamps else {
                continue;
            };
            if stamps.capacity() < set.index.len() {
                return Err(format!(
                    "sparse {name}: change stamps for {} of {} slots",
                    stamps.capacity(),
                    set.index.len()
                ));
            }
            stamps
                .check(clock.now(), &self.floor, None)
                .map_err(|broken| format!("sparse {name}: {broken}"))?;
            if let Some(slot) =
                (0..stamps.capacity() as u32).find(|&slot| !set.contains(slot) && !stamps.peek(slot).is_never())
            {
                return Err(format!(
                    "sparse {name}: slot {slot} has no value but is stamped {}",
                    stamps.peek(slot)
                ));
            }
        }
        Ok(())
    }

    /// Bytes of change stamps held.
    pub(crate) fn stamp_bytes(&self) -> usize {
        self.ids
            .iter()
            .filter_map(|&id| self.set(id)?.stamps())
            .map(Stamps::bytes)
            .sum()
    }

    /// Whether `slot` was stamped after the floor (changed for some
    /// consumer) in any watched set.
    #[inline]
    pub(crate) fn slot_stamped(&self, slot: u32) -> bool {
        self.watched_ids.iter().any(|&id| {
            self.set(id)
                .is_some_and(|set| set.stamp(slot).is_newer_than(self.floor.get()))
        })
    }

    /// Gives `slot` the value `value` of component `info`; gives it back if
    /// `slot` has one already (or `info` describes another type).
    #[inline]
    pub(crate) fn insert<T: Send + Sync + 'static>(
        &mut self,
        info: &'static ComponentInfo,
        slot: u32,
        value: T,
    ) -> Result<(), T> {
        self.insert_with(info.id(), slot, value, || info)
    }

    /// As [`insert`](SparseSets::insert), for component `id`, whose info
    /// `info` gives (asked only when the set is made).
    #[inline(always)]
    pub(crate) fn insert_with<T: Send + Sync + 'static>(
        &mut self,
        id: ComponentId,
        slot: u32,
        value: T,
        info: impl FnOnce() -> &'static ComponentInfo,
    ) -> Result<(), T> {
        match self.set_mut(id) {
            Some(set) => set.insert(slot, value),
            None => {
                let info = info();
                if info.ty.type_id() != TypeId::of::<T>() || info.id() != id {
                    return Err(value);
                }
                self.new_set::<T>(info).insert(slot, value)
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn new_set<T: Send + Sync + 'static>(&mut self, info: &'static ComponentInfo) -> &mut SparseSet {
        let id = info.id();
        if self.sets.len() <= id.index() {
            self.sets.resize_with(id.index() + 1, || None);
        }
        let at = self.ids.partition_point(|&have| have < id);
        self.ids.insert(at, id);
        let mut set = SparseSet::new::<T>(info);
        set.set_watched(self.watched.contains(id), &self.floor);
        self.sets[id.index()].insert(set)
    }

    /// Takes `slot`'s `T` of component `id` out.
    #[inline(always)]
    pub(crate) fn take<T: 'static>(&mut self, id: ComponentId, slot: u32) -> Option<T> {
        self.set_mut(id)?.take(slot)
    }

    /// Drops `slot`'s value of component `id`; `false` if it has none.
    #[inline]
    pub(crate) fn remove(&mut self, id: ComponentId, slot: u32) -> bool {
        self.set_mut(id).is_some_and(|set| set.remove(slot))
    }

    /// The components `slot` has values of, ascending.
    pub(crate) fn ids_of(&self, slot: u32) -> impl Iterator<Item = ComponentId> + '_ {
        self.ids.iter().copied().filter(move |&id| self.contains(id, slot))
    }

    /// Views of `slot`'s values, by ascending component id.
    pub(crate) fn component_refs(&self, slot: u32) -> impl Iterator<Item = ComponentRef<'_>> + '_ {
        self.ids
            .iter()
            .filter_map(move |&id| self.set(id).and_then(|set| set.component_ref(slot)))
    }

    /// Whether `slot` has any value.
    pub(crate) fn any_of(&self, slot: u32) -> bool {
        self.ids_of(slot).next().is_some()
    }

    /// Drops every value of `slot` (its entity is destroyed). A panicking
    /// `Drop` does not stop the rest: every value leaves its set, and the
    /// first panic goes on afterwards.
    /// Values of pooled components go to `to`, when given, instead of being
    /// dropped (a panicking `to` is treated as a panicking `Drop`).
    pub(crate) fn remove_all(&mut self, slot: u32, mut to: Option<Recycler<'_>>) {
        let mut first_panic = None;
        for at in 0..self.ids.len() {
            let id = self.ids[at];
            let set = self.sets[id.index()]
                .as_mut()
                .expect("listed ids have sets: an id is listed when its set is made, and sets are never removed");
            if let Err(panic) = panic::catch_unwind(AssertUnwindSafe(|| set.remove_recycling(slot, &mut to))) {
                first_panic.get_or_insert(panic);
            }
        }
        if let Some(panic) = first_panic {
            panic::resume_unwind(panic);
        }
    }

    /// Frees the sets' spare capacity (the slot index keeps its length up to
    /// the highest slot with a value).
    pub(crate) fn shrink_to_fit(&mut self) {
        for &id in &self.ids {
            let set = self.sets[id.index()]
                .as_mut()
                .expect("listed ids have sets: an id is listed when its set is made, and sets are never removed");
            let used = set.slots.iter().max().map_or(0, |&slot| slot as usize + 1);
            set.index.truncate(used);
            set.index.shrink_to_fit();
            set.slots.shrink_to_fit();
            set.values_at = set.values.shrink_to_fit();
        }
    }

    /// Bytes allocated for the sets' indices and entries.
    pub(crate) fn bytes(&self) -> usize {
        self.ids
            .iter()
            .filter_map(|&id| self.set(id))
            .map(|set| set.index.capacity() * 4 + set.slots.capacity() * 4 + set.values.bytes())
            .sum()
    }

    /// The number of values held, over every set.
    pub(crate) fn len(&self) -> usize {
        self.ids.iter().filter_map(|&id| self.set(id)).map(SparseSet::len).sum()
    }

    /// Checks every set (see [`SparseSet::check`]) and the id list.
    pub(crate) fn check(&self, holds: &dyn Fn(u32) -> bool) -> Result<(), String> {
        let listed: Vec<ComponentId> = (0..self.sets.len())
            .filter(|&i| self.sets[i].is_some())
            .map(ComponentId::at)
            .collect();
        if listed != self.ids {
            return Err("the sparse sets are listed wrongly".to_owned());
        }
        for &id in &self.ids {
            let set = self
                .set(id)
                .expect("each listed id has a set: `ids` was checked against `sets` above");
            if set.info.id() != id {
                return Err(format!("the sparse set of {} is filed under {id:?}", set.info.name()));
            }
            set.check(holds)?;
        }
        Ok(())
    }
}
