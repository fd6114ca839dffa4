//! `Archetypes`: every archetype of a context, found by component set or by
//! component, and the graph between them: the transition for adding or
//! removing one component, found on the archetype's edges (`edges.rs`) or
//! made once (`transition.rs`). Creating rows from bundles is in `spawn.rs`
//! (many at once in `spawn_batch.rs`), moving rows in `moves.rs`.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU64, Ordering};

use indexmap::IndexMap;

use super::archetype::{Archetype, ArchetypeMut};
use super::bitset::ComponentSet;
use super::bundle_plan::{BundleId, BundlePlan};
use super::component_info::ComponentInfo;
use super::edges::TransitionId;
use super::location::ArchetypeId;
use super::stamps::{Clock, Tick};
use super::transition::Transition;
use super::type_info::TypeIdHasher;
use crate::id::ComponentId;

/// Every archetype of one context, created on demand and never removed (so
/// `ArchetypeId`s stay valid and groups can remember which ones they
/// accept).
pub(crate) struct Archetypes {
    /// Tells this `Archetypes` from every other in the process (nonzero), so
    /// a plan placed in its archetypes is never walked in another's.
    stamp: u64,
    pub(super) infos: &'static [ComponentInfo],
    pub(super) list: Vec<Archetype>,
    by_set: IndexMap<ComponentSet, ArchetypeId>,
    /// Per component id, the archetypes that have it, in creation order: what
    /// a query over that component visits.
    by_component: Vec<Vec<ArchetypeId>>,
    /// Every edge taken so far, with its move plan.
    pub(super) transitions: Vec<Transition>,
    /// Bundle type -> its plan in `plans`.
    pub(super) bundles: HashMap<TypeId, BundleId, BuildHasherDefault<TypeIdHasher>>,
    /// The bundle type used last, checked before `bundles`: programs create
    /// runs of entities of one bundle type.
    pub(super) last_bundle: Option<(TypeId, BundleId)>,
    pub(super) plans: Vec<BundlePlan>,
    /// By entity slot, a bit set while a live row holds that slot's entity:
    /// `spawn` refuses a taken slot, so the rows of one `Archetypes` have
    /// distinct slots, which the sparse write views rely on.
    pub(super) occupied: Vec<u64>,
    /// The change tick mutable accesses stamp now, and the stamps' floor
    /// (shared by every stamped column and sparse set).
    clock: Clock,
    /// The components whose columns carry change stamps.
    watched: ComponentSet,
}

impl Archetypes {
    /// The archetypes of a context that knows the components `infos` (indexed by
    /// component id); starts with the empty archetype.
    pub(crate) fn new(infos: &'static [ComponentInfo]) -> Self {
        static NEXT_STAMP: AtomicU64 = AtomicU64::new(1);
        let mut archetypes = Archetypes {
            stamp: NEXT_STAMP.fetch_add(1, Ordering::Relaxed),
            infos,
            list: Vec::new(),
            by_set: IndexMap::new(),
            by_component: Vec::new(),
            transitions: Vec::new(),
            bundles: HashMap::default(),
            last_bundle: None,
            plans: Vec::new(),
            occupied: Vec::new(),
            clock: Clock::new(),
            watched: ComponentSet::new(),
        };
        archetypes.find_or_create(&ComponentSet::new());
        archetypes
    }

    /// Marks slot `slot` held by a live row; `false` if it was already.
    #[inline]
    pub(super) fn claim(&mut self, slot: u32) -> bool {
        claim(&mut self.occupied, slot)
    }

    /// Marks slot `slot` free (its row was removed).
    #[inline]
    pub(super) fn release(&mut self, slot: u32) {
        if let Some(held) = self.occupied.get_mut(slot as usize / 64) {
            *held &= !(1u64 << (slot % 64));
        }
    }

    /// What tells this `Archetypes` from every other in the process.
    #[inline]
    pub(super) fn stamp(&self) -> u64 {
        self.stamp
    }

    /// Whether component `id` is kept out of archetypes (flag and sparse
    /// kinds).
    #[inline]
    pub(crate) fn is_sparse(&self, id: ComponentId) -> bool {
        self.infos
            .get(id.index())
            .is_some_and(|info| info.storage().is_sparse())
    }

    /// Whether component `id` is zero-sized (a tag or flag: never updated,
    /// see [`ComponentInfo::is_tag`]).
    #[inline]
    pub(crate) fn is_tag(&self, id: ComponentId) -> bool {
        self.infos.get(id.index()).is_some_and(ComponentInfo::is_tag)
    }

    /// The number of archetypes; grows as new component sets appear.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Every archetype, in creation order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Archetype> {
        self.list.iter()
    }

    /// The archetypes created at or after position `from`, in creation order.
    pub(crate) fn since(&self, from: usize) -> &[Archetype] {
        self.list.get(from..).unwrap_or_default()
    }

    #[inline(always)]
    pub(crate) fn get(&self, id: ArchetypeId) -> &Archetype {
        &self.list[id.index()]
    }

    /// The archetype with raw id `id`, if there is one (a raw id from an
    /// entity record may be a marker that names none).
    #[inline(always)]
    pub(crate) fn try_get(&self, id: u32) -> Option<&Archetype> {
        self.list.get(id as usize)
    }

    #[inline(always)]
    pub(super) fn archetype_mut(&mut self, id: ArchetypeId) -> &mut Archetype {
        &mut self.list[id.index()]
    }

    /// Exclusive access to archetype `id`.
    #[inline(always)]
    pub(crate) fn lend_mut(&mut self, id: ArchetypeId) -> ArchetypeMut<'_> {
        let tick = self.clock.now();
        ArchetypeMut {
            archetype: self.archetype_mut(id),
            tick,
        }
    }

    /// The change tick mutable accesses stamp now.
    #[inline(always)]
    pub(crate) fn change_tick(&self) -> Tick {
        self.clock.now()
    }

    /// The change clock: the current tick, the stamps' floor, and their
    /// rules.
    #[inline(always)]
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Ends the current change tick and gives it (see [`Clock::end_tick`]).
    pub(crate) fn end_tick(&mut self) -> Tick {
        self.clock.end_tick()
    }

    /// Lowers the change tick, the floor and every change stamp of the
    /// columns by `base` (below the current tick; `NEVER` for stamps at or
    /// below it). The sparse sets' stamps are rebased with them
    /// ([`SparseSets::rebase_stamps`](super::SparseSets::rebase_stamps)).
    pub(crate) fn rebase_ticks(&mut self, base: Tick) {
        for archetype in &mut self.list {
            archetype.rebase_stamps(base);
        }
        self.clock.rebase(base);
    }

    /// Calls `f` with the entity of each live row of archetype `id` whose
    /// change stamp in column `col` is larger than `since`, in row order.
    #[inline]
    pub(crate) fn changed_since(
        &mut self,
        id: ArchetypeId,
        col: usize,
        since: Tick,
        f: impl FnMut(crate::entity::Entity),
    ) {
        self.archetype_mut(id).changed_since(col, since, f);
    }

    /// The change stamp of the row at `at` in column `col` (`NEVER`: none).
    #[inline]
    pub(crate) fn row_stamp(&mut self, at: super::Location, col: usize) -> Tick {
        self.archetype_mut(at.archetype).stamp(col, at.row)
    }

    /// Marks the row at `at` unchanged in column `col` (its change was
    /// handed to every collector that watches it).
    #[inline]
    pub(crate) fn clear_row_stamp(&mut self, at: super::Location, col: usize) {
        self.archetype_mut(at.archetype).clear_stamp(col, at.row);
    }

    /// Moves the change tick on to `tick` (tests of the rebase).
    #[cfg(test)]
    pub(crate) fn jump_tick(&mut self, tick: Tick) {
        self.clock.jump(tick);
    }

    /// Stamps the row at `at` in column `col` (which has stamps) with
    /// `tick`, whatever the current tick: a fault for tests of the checks.
    #[cfg(test)]
    pub(crate) fn plant_stamp(&mut self, at: super::Location, col: usize, tick: Tick) {
        let stamps = self.archetype_mut(at.archetype).columns[col].stamps.as_ref();
        stamps.expect("a stamped column").mark(at.row, tick);
    }

    /// The components whose columns carry change stamps.
    #[inline]
    pub(crate) fn watched(&self) -> &ComponentSet {
        &self.watched
    }

    /// Gives the columns of the components in `watched` change stamps
    /// (every row unchanged, in every archetype, and in those made later),
    /// and drops those of the other components.
    pub(crate) fn set_watched(&mut self, watched: &ComponentSet) {
        if *watched == self.watched {
            return;
        }
        for archetype in &mut self.list {
            for col in 0..archetype.column_count() {
                let id = archetype.columns[col].info.id();
                if watched.contains(id) != self.watched.contains(id) {
                    archetype.set_watched(col, watched.contains(id), self.clock.floor());
                }
            }
        }
        self.watched = watched.clone();
    }

    /// The archetypes `visit` names, in creation order.
    #[inline]
    pub(crate) fn visit<'a: 'v, 'v>(&'a self, visit: Visit<'v>) -> impl Iterator<Item = &'a Archetype> + 'v {
        let list = &self.list;
        Ids::new(visit, &self.by_component, list.len()).map(move |id| &list[id.index()])
    }

    /// The archetypes with component `id`, in creation order.
    #[inline]
    pub(crate) fn with_component(&self, id: ComponentId) -> &[ArchetypeId] {
        self.by_component.get(id.index()).map_or(&[], Vec::as_slice)
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
        // Entity records use the two highest raw ids as markers.
        let id = u32::try_from(self.list.len())
            .ok()
            .filter(|&id| id < u32::MAX - 1)
            .expect("fewer than 2^32 - 2 archetypes: each costs memory, which runs out first");
        let id = ArchetypeId(id);
        let infos: Vec<&'static ComponentInfo> = set.iter().map(|c| &self.infos[c.index()]).collect();
        debug_assert!(
            infos.iter().all(|info| !info.storage().is_sparse()),
            "sparse components never enter an archetype"
        );
        for info in &infos {
            let index = info.id().index();
            if self.by_component.len() <= index {
                self.by_component.resize_with(index + 1, Vec::new);
            }
            self.by_component[index].push(id);
        }
        let mut archetype = Archetype::new(id, infos);
        for col in 0..archetype.column_count() {
            if self.watched.contains(archetype.columns[col].info.id()) {
                archetype.set_watched(col, true, self.clock.floor());
            }
        }
        self.list.push(archetype);
        self.by_set.insert(set.clone(), id);
        id
    }

    /// Checks every archetype (with its change stamps), the clock, the
    /// component index and the graph.
    pub(crate) fn check(&self) -> Result<(), String> {
        self.clock.check()?;
        for (i, archetype) in self.list.iter().enumerate() {
            if archetype.id().index() != i || self.by_set.get(archetype.set()) != Some(&archetype.id()) {
                return Err(format!("archetype {i} is not indexed by its component set"));
            }
            archetype.check()?;
            archetype.check_stamps(&self.clock, &self.watched)?;
        }
        for (index, listed) in self.by_component.iter().enumerate() {
            let id = ComponentId::at(index);
            let expected: Vec<ArchetypeId> = self
                .list
                .iter()
                .filter(|a| a.set().contains(id))
                .map(Archetype::id)
                .collect();
            if *listed != expected {
                return Err(format!("the archetypes of component {index} are listed wrongly"));
            }
        }
        self.check_transitions()
    }
}

impl Archetypes {
    /// The transition from `from` adding `id`; `None` if `from` already has
    /// it. Cached on the edge after the first time.
    #[inline]
    pub(crate) fn add_transition(&mut self, from: ArchetypeId, id: ComponentId) -> Option<TransitionId> {
        match self.get(from).edges.add(id) {
            Some(known) => Some(known),
            None => self.new_transition(from, id, true),
        }
    }

    /// The transition from `from` removing `id`; `None` if `from` lacks it.
    #[inline]
    pub(crate) fn remove_transition(&mut self, from: ArchetypeId, id: ComponentId) -> Option<TransitionId> {
        match self.get(from).edges.remove(id) {
            Some(known) => Some(known),
            None => self.new_transition(from, id, false),
        }
    }

    /// The transition with id `id`.
    #[inline(always)]
    pub(crate) fn transition(&self, id: TransitionId) -> &Transition {
        &self.transitions[id.0 as usize]
    }

    /// The number of transitions taken so far (ids are `0..count`).
    pub(crate) fn transition_count(&self) -> usize {
        self.transitions.len()
    }

    #[cold]
    fn new_transition(&mut self, from: ArchetypeId, id: ComponentId, add: bool) -> Option<TransitionId> {
        let source = self.get(from).set();
        if source.contains(id) == add {
            return None;
        }
        let set = if add { source.with(id) } else { source.without(id) };
        let to = self.find_or_create(&set);
        let index = TransitionId(
            u32::try_from(self.transitions.len())
                .expect("fewer than 2^32 transitions: each costs memory, which runs out first"),
        );
        let transition = Transition::new(self.get(from), self.get(to), id);
        self.transitions.push(transition);
        let edges = &mut self.archetype_mut(from).edges;
        if add {
            edges.set_add(id, index);
        } else {
            edges.set_remove(id, index);
        }
        Some(index)
    }

    /// Checks the graph: each transition leads to the archetype with exactly
    /// one component more or less, with the right plan.
    pub(super) fn check_transitions(&self) -> Result<(), String> {
        for transition in &self.transitions {
            let (from, to) = (self.get(transition.from), self.get(transition.to));
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

/// Which archetypes to visit.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Visit<'a> {
    /// These, given in creation order.
    Listed(&'a [ArchetypeId]),
    /// Those with this component.
    With(ComponentId),
    /// Every one.
    All,
}

impl Drop for Archetypes {
    /// Drops the archetypes one by one, so one whose values' `Drop` panics
    /// does not stop (or, by panicking again during the unwind, abort) the
    /// dropping of the others; the first panic goes on afterwards.
    fn drop(&mut self) {
        let mut first_panic = None;
        for archetype in self.list.drain(..) {
            if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(archetype))) {
                first_panic.get_or_insert(panic);
            }
        }
        if let Some(panic) = first_panic {
            std::panic::resume_unwind(panic);
        }
    }
}

/// The ids of the archetypes a [`Visit`] names, in creation order.
enum Ids<'a> {
    Listed(std::slice::Iter<'a, ArchetypeId>),
    All(std::ops::Range<u32>),
}

impl<'a> Ids<'a> {
    #[inline]
    fn new(visit: Visit<'a>, by_component: &'a [Vec<ArchetypeId>], len: usize) -> Self {
        match visit {
            Visit::Listed(ids) => Ids::Listed(ids.iter()),
            Visit::With(id) => Ids::Listed(by_component.get(id.index()).map_or(&[][..], Vec::as_slice).iter()),
            Visit::All => Ids::All(0..len as u32),
        }
    }
}

impl Iterator for Ids<'_> {
    type Item = ArchetypeId;

    #[inline]
    fn next(&mut self) -> Option<ArchetypeId> {
        match self {
            Ids::Listed(ids) => ids.next().copied(),
            Ids::All(range) => range.next().map(ArchetypeId),
        }
    }
}

/// Marks `slot` as held by a row in the held bits `occupied`; false if it
/// already was.
#[inline(always)]
pub(super) fn claim(occupied: &mut Vec<u64>, slot: u32) -> bool {
    let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
    let held = match occupied.get_mut(word) {
        Some(held) => held,
        None => grow_occupied(occupied, word),
    };
    let free = *held & bit == 0;
    *held |= bit;
    free
}

/// Room for the held bits of word `word`, which it gives.
#[cold]
#[inline(never)]
fn grow_occupied(occupied: &mut Vec<u64>, word: usize) -> &mut u64 {
    occupied.resize((word + 1).next_power_of_two(), 0);
    &mut occupied[word]
}
