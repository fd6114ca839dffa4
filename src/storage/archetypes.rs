//! `Archetypes`: all archetypes of a context, the graph between them, and the
//! row moves (spawn, insert, take, replace, despawn) that keep them dense.

use std::any::TypeId;
use std::mem::ManuallyDrop;

use indexmap::IndexMap;
use smallvec::SmallVec;

use super::archetype::{Archetype, ArchetypeId, Location};
use super::bitset::ComponentSet;
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
}

/// Every archetype of one context, created on demand and never removed (so
/// `ArchetypeId`s stay valid and groups can remember which ones they scanned).
pub(crate) struct Archetypes {
    infos: &'static [ComponentInfo],
    list: Vec<Archetype>,
    by_set: IndexMap<ComponentSet, ArchetypeId>,
}

impl Archetypes {
    /// The archetypes of a context that knows the components `infos` (indexed by
    /// component id); starts with the empty archetype.
    pub(crate) fn new(infos: &'static [ComponentInfo]) -> Self {
        let mut archetypes = Archetypes {
            infos,
            list: Vec::new(),
            by_set: IndexMap::new(),
        };
        archetypes.find_or_create(&ComponentSet::new());
        archetypes
    }

    /// The number of archetypes; grows as new component sets appear.
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

    /// The archetype reached from `from` by adding `id`; `None` if `from` already
    /// has it. Cached on the edge after the first time.
    #[inline]
    pub(crate) fn add_target(&mut self, from: ArchetypeId, id: ComponentId) -> Option<ArchetypeId> {
        if let Some(to) = self.list[from.index()].edges.add(id) {
            return Some(to);
        }
        self.add_target_slow(from, id)
    }

    #[cold]
    fn add_target_slow(&mut self, from: ArchetypeId, id: ComponentId) -> Option<ArchetypeId> {
        let source = self.list[from.index()].set();
        if source.contains(id) {
            return None;
        }
        let set = source.with(id);
        let to = self.find_or_create(&set);
        self.list[from.index()].edges.set_add(id, to);
        self.list[to.index()].edges.set_remove(id, from);
        Some(to)
    }

    /// The archetype reached from `from` by removing `id`; `None` if `from` does
    /// not have it.
    #[inline]
    pub(crate) fn remove_target(&mut self, from: ArchetypeId, id: ComponentId) -> Option<ArchetypeId> {
        if let Some(to) = self.list[from.index()].edges.remove(id) {
            return Some(to);
        }
        let source = self.list[from.index()].set();
        if !source.contains(id) {
            return None;
        }
        let set = source.without(id);
        let to = self.find_or_create(&set);
        self.list[from.index()].edges.set_remove(id, to);
        self.list[to.index()].edges.set_add(id, from);
        Some(to)
    }

    /// The source and target archetypes of a move, both mutable.
    fn pair(&mut self, from: ArchetypeId, to: ArchetypeId) -> (&mut Archetype, &mut Archetype) {
        let [src, dst] = self
            .list
            .get_disjoint_mut([from.index(), to.index()])
            .expect("an edge never leads back to its own archetype");
        (src, dst)
    }

    /// Adds a row for `entity` to `archetype`, with its values written by
    /// `write`. Returns `None` (and leaves no row behind, dropping what was
    /// written) unless `write` wrote every column exactly once.
    pub(crate) fn spawn(
        &mut self,
        archetype: ArchetypeId,
        entity: Entity,
        write: impl FnOnce(&mut RowWriter<'_>),
    ) -> Option<Location> {
        let archetype = &mut self.list[archetype.index()];
        let loc = archetype.alloc_row(entity);
        let columns = archetype.columns.len();
        let mut writer = RowWriter {
            archetype,
            loc,
            written: smallvec::smallvec![0; columns.div_ceil(64)],
            count: 0,
        };
        write(&mut writer);
        if writer.count != columns {
            return None; // `writer`'s drop removes the partial row
        }
        let _ = ManuallyDrop::new(writer);
        Some(loc)
    }

    /// Moves the entity at `loc` to the archetype with `id` added, writing
    /// `value` as that component. Gives `value` back if the entity already has
    /// `id`, if `loc` is not a live row, or if `id` does not hold `T`s.
    pub(crate) fn insert<T: 'static>(&mut self, loc: Location, id: ComponentId, value: T) -> Result<Moved, T> {
        if !self.list[loc.archetype.index()].contains(loc) {
            return Err(value);
        }
        let Some(target) = self.add_target(loc.archetype, id) else {
            return Err(value);
        };
        let (src, dst) = self.pair(loc.archetype, target);
        let Some(new_col) = dst.column_index(id) else {
            return Err(value);
        };
        if dst.columns[new_col].info.ty.type_id() != TypeId::of::<T>() {
            return Err(value);
        }
        let entity = src.entity_at(loc).expect("checked live above");
        let to = dst.alloc_row(entity);
        // `dst`'s columns are `src`'s with `id` inserted, both sorted by id (edge
        // invariant), so walking `dst` and skipping `new_col` pairs them up.
        let mut s = 0;
        for d in 0..dst.columns.len() {
            if d != new_col {
                // SAFETY: the columns hold the same component (see above); `loc` is
                // live in `src`; the new row's slot in `dst` is uninitialised.
                unsafe { dst.move_value_from(d, to, src, s, loc) };
                s += 1;
            }
        }
        // SAFETY: column `new_col` holds `T`s (checked above) and the new row's slot
        // there is uninitialised.
        unsafe { dst.write_value(new_col, to, value) };
        // SAFETY: every value of the row at `loc` was moved to `dst` above.
        let displaced = unsafe { src.fill_hole(loc) };
        Ok(Moved { to, displaced })
    }

    /// Moves the entity at `loc` to the archetype without `id`, and gives back
    /// its `T`. `None` if the entity lacks `id`, `loc` is not live, or `id` does
    /// not hold `T`s.
    pub(crate) fn take<T: 'static>(&mut self, loc: Location, id: ComponentId) -> Option<(T, Moved)> {
        let source = &self.list[loc.archetype.index()];
        if !source.contains(loc) {
            return None;
        }
        let old_col = source.column_index(id)?;
        if source.columns[old_col].info.ty.type_id() != TypeId::of::<T>() {
            return None;
        }
        let target = self.remove_target(loc.archetype, id)?;
        let (src, dst) = self.pair(loc.archetype, target);
        let entity = src.entity_at(loc).expect("checked live above");
        let to = dst.alloc_row(entity);
        let mut d = 0;
        for s in 0..src.columns.len() {
            if s == old_col {
                continue;
            }
            // SAFETY: `dst`'s columns are `src`'s without `id` (edge invariant), so
            // walking `src` and skipping `old_col` pairs equal components; `loc` is
            // live in `src`; the new row's slot in `dst` is uninitialised.
            unsafe { dst.move_value_from(d, to, src, s, loc) };
            d += 1;
        }
        // SAFETY: column `old_col` holds `T`s (checked) and `loc` is live; every
        // other value of the row was moved above, so this moves out the last one.
        let value = unsafe { src.read_value::<T>(old_col, loc) };
        // SAFETY: every value at `loc` has been moved out.
        let displaced = unsafe { src.fill_hole(loc) };
        Some((value, Moved { to, displaced }))
    }

    /// Swaps the `T` of component `id` at `loc` for `value`, giving back the old
    /// one; gives `value` back if there is no such `T` there.
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
            for (id, added, to) in archetype.edges.iter() {
                let expected = if added {
                    archetype.set().with(id)
                } else {
                    archetype.set().without(id)
                };
                if *self.list[to.index()].set() == *archetype.set() || *self.list[to.index()].set() != expected {
                    return Err(format!("archetype {i}: edge for component {} is wrong", id.index()));
                }
            }
        }
        Ok(())
    }
}

/// Writes the components of a new row, one at a time. Dropping it before every
/// column is written removes the row and drops what was written.
#[doc(hidden)]
pub struct RowWriter<'a> {
    archetype: &'a mut Archetype,
    loc: Location,
    written: SmallVec<[u64; 1]>,
    count: usize,
}

impl RowWriter<'_> {
    /// Writes `value` as component `id`; gives it back if the archetype has no
    /// such column, the column does not hold `T`s, or it was written already.
    pub fn put<T: 'static>(&mut self, id: ComponentId, value: T) -> Result<(), T> {
        let Some(col) = self.archetype.column_index(id) else {
            return Err(value);
        };
        let (word, bit) = (col / 64, 1u64 << (col % 64));
        if self.archetype.columns[col].info.ty.type_id() != TypeId::of::<T>() || self.written[word] & bit != 0 {
            return Err(value);
        }
        // SAFETY: the column holds `T`s (checked) and this row's slot was not
        // written yet (bit clear), so it is uninitialised.
        unsafe { self.archetype.write_value(col, self.loc, value) };
        self.written[word] |= bit;
        self.count += 1;
        Ok(())
    }
}

impl Drop for RowWriter<'_> {
    fn drop(&mut self) {
        for col in 0..self.archetype.columns.len() {
            if self.written[col / 64] & (1 << (col % 64)) != 0 {
                // SAFETY: this column's value was written by `put` and is dropped once.
                unsafe { self.archetype.drop_value(col, self.loc) };
            }
        }
        // SAFETY: every written value was just dropped and the others were never
        // initialised; the row is the archetype's last (the writer borrowed the
        // archetype since allocating it), so nothing reads the unwritten slots.
        unsafe { self.archetype.fill_hole(self.loc) };
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
