//! `Indices`: the entity indices of one context as plain data, updated
//! directly by the context as the change routes say (no closure per event).

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use slotmap::SlotMap;

use super::{Filing, Index};
use crate::aerc::Retains;
use crate::entity::Entity;
use crate::error::Error;
use crate::id::{ComponentId, IndexKey};
use crate::routes::{Holding, Member, Membership};
use crate::storage::{Archetypes, ComponentRef, ComponentSet, SparseSets};

/// One registered index and the group it follows.
pub(crate) struct IndexEntry {
    pub(crate) group: u32,
    pub(crate) store: Box<dyn Index>,
    /// Primary-key conflicts found while catching up with writes through
    /// `&mut`, not reported yet (see [`Conflicts`]).
    conflicts: Conflicts,
}

/// The primary-key conflicts an index found while catching up with writes
/// made through `&mut` (a write gave an entity a key another entity holds):
/// each is reported once, by the next read of the index. Reads go through
/// `&Context`, so the queue sits behind a lock; `pending` keeps the lock off
/// the path of every read while there is nothing to report.
#[derive(Default)]
struct Conflicts {
    pending: AtomicBool,
    queue: Mutex<VecDeque<Error>>,
}

impl Conflicts {
    fn push(&mut self, conflict: Error) {
        self.queue
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push_back(conflict);
        *self.pending.get_mut() = true;
    }

    /// The oldest conflict not reported yet, now reported.
    #[inline]
    fn report(&self) -> Result<(), Error> {
        if !self.pending.load(Ordering::Acquire) {
            return Ok(());
        }
        self.report_queued()
    }

    #[cold]
    fn report_queued(&self) -> Result<(), Error> {
        let mut queue = self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let oldest = queue.pop_front();
        if queue.is_empty() {
            self.pending.store(false, Ordering::Release);
        }
        oldest.map_or(Ok(()), Err)
    }
}

/// Every index of a context.
#[derive(Default)]
pub(crate) struct Indices {
    list: SlotMap<IndexKey, IndexEntry>,
    /// The key components of the active indices.
    keyed: ComponentSet,
}

impl Indices {
    pub(crate) fn get(&self, key: IndexKey) -> Option<&IndexEntry> {
        self.list.get(key)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (IndexKey, &IndexEntry)> + '_ {
        self.list.iter()
    }

    #[cfg(feature = "serde")]
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (IndexKey, &mut IndexEntry)> + '_ {
        self.list.iter_mut()
    }

    /// Whether index `key` exists and follows its group.
    #[inline]
    pub(crate) fn is_active(&self, key: IndexKey) -> bool {
        self.list.get(key).is_some_and(|entry| entry.store.is_active())
    }

    /// The index named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<IndexKey> {
        self.list
            .iter()
            .find(|(_, entry)| entry.store.name() == name)
            .map(|(key, _)| key)
    }

    /// Registers a filled (active) index of group `group`.
    pub(crate) fn insert(&mut self, group: u32, store: Box<dyn Index>) -> IndexKey {
        debug_assert!(store.is_active());
        let key = self.list.insert(IndexEntry {
            group,
            store,
            conflicts: Conflicts::default(),
        });
        self.sync_keyed();
        key
    }

    pub(crate) fn remove(&mut self, key: IndexKey) -> Option<IndexEntry> {
        let removed = self.list.remove(key);
        self.sync_keyed();
        removed
    }

    /// Whether any active index keys on a component.
    #[inline]
    pub(crate) fn any_keyed(&self) -> bool {
        !self.keyed.is_empty()
    }

    /// Whether an active index keys on component `id`: a write to it
    /// through `&mut` must re-key the entity afterwards.
    #[inline]
    pub(crate) fn keys_on(&self, id: ComponentId) -> bool {
        self.keyed.contains(id)
    }

    /// The component `id` and the name of the first active index keyed on
    /// it, if one is.
    #[inline]
    pub(crate) fn keyed_by(&self, id: ComponentId) -> Option<(&'static str, &'static str)> {
        if !self.keys_on(id) {
            return None;
        }
        self.list
            .values()
            .find(|entry| entry.store.is_active() && entry.store.component() == id)
            .map(|entry| (id.name(), entry.store.name()))
    }

    /// The next primary-key conflict index `key` found and has not reported
    /// (see [`rekey`](Indices::rekey)), now reported.
    #[inline]
    pub(crate) fn report_conflict(&self, key: IndexKey) -> Result<(), Error> {
        self.list.get(key).map_or(Ok(()), |entry| entry.conflicts.report())
    }

    fn sync_keyed(&mut self) {
        self.keyed = ComponentSet::new();
        for entry in self.list.values().filter(|entry| entry.store.is_active()) {
            self.keyed.insert(entry.store.component());
        }
    }

    /// Files the entities of `group` in index `key` (inactive), retaining
    /// each it holds, and makes it active. See [`fill`].
    pub(crate) fn activate(
        &mut self,
        key: IndexKey,
        group: &Member,
        storage: (&Archetypes, &SparseSets),
        retains: &mut Retains,
        context: &'static str,
    ) -> Result<(), Error> {
        let store = &mut *self.list[key].store;
        if store.is_active() {
            return Ok(());
        }
        let filled = fill(store, group, storage, retains, context);
        self.sync_keyed();
        filled
    }

    /// Empties index `key` and releases what it held; it follows its group no
    /// more. Does nothing if it is inactive.
    pub(crate) fn deactivate(&mut self, key: IndexKey, retains: &mut Retains) {
        let store = &mut *self.list[key].store;
        if !store.is_active() {
            return;
        }
        store.clear(&mut |entity| release(retains, entity));
        store.core_mut().active = false;
        self.list[key].conflicts = Conflicts::default();
        self.sync_keyed();
    }

    /// Before a change about `entity` (`None`: one being created) that files
    /// it in the indices `keys` (active ones, from a route) or, for a
    /// replacement, gives it a new value of their key component: each makes
    /// the keys of the value `value_of` gives for its key component (the one
    /// call of its key function for the change).
    /// [`Error::DuplicatePrimaryKey`] if a primary index has one of them for
    /// another entity.
    pub(crate) fn prepare<'v>(
        &mut self,
        keys: impl Iterator<Item = IndexKey>,
        entity: Option<Entity>,
        value_of: impl Fn(ComponentId) -> Option<ComponentRef<'v>>,
        context: &'static str,
    ) -> Result<(), Error> {
        for key in keys {
            let store = &mut *self.list[key].store;
            debug_assert!(store.is_active(), "routes list active indices only");
            let Some(value) = value_of(store.component()) else {
                continue;
            };
            if let Err((key, holder)) = store.prepare(entity, value) {
                return Err(Error::DuplicatePrimaryKey {
                    context,
                    index: store.name(),
                    key,
                    holder,
                    entity,
                });
            }
        }
        Ok(())
    }

    /// `entity` joined the group of index `key`: it files it under the keys it
    /// prepared, retaining it.
    #[inline]
    pub(crate) fn file(&mut self, key: IndexKey, entity: Entity, retains: &mut Retains) {
        if self.list[key].store.file_prepared(entity) {
            retains.retain_internal(entity.index());
        }
    }

    /// `entity` left the group of index `key`: it takes it out, releasing it.
    /// (The entity is still enabled: an index never keeps a destroyed entity.)
    #[inline]
    pub(crate) fn unfile(&mut self, key: IndexKey, entity: Entity, retains: &mut Retains) {
        if self.list[key].store.unfile(entity) {
            release(retains, entity);
        }
    }

    /// The key component of member `entity` of the group of index `key` was
    /// replaced: it moves it to the keys it prepared.
    #[inline]
    pub(crate) fn refile(&mut self, key: IndexKey, entity: Entity, retains: &mut Retains) {
        match self.list[key].store.refile_prepared(entity) {
            Filing::Unchanged => {}
            Filing::Filed => retains.retain_internal(entity.index()),
            Filing::Unfiled => release(retains, entity),
        }
    }

    /// After a write through `&mut` to component `id` of live `entity`
    /// (archetype components `set`, flag and sparse ones in `holding`), whose
    /// value is now `value`: each active index keyed on `id` whose group
    /// holds the entity moves it to the keys of `value` (no work when they
    /// are its keys already).
    ///
    /// A key a primary index has for another entity is a conflict, never
    /// resolved silently: the holder keeps the key, `entity` leaves the
    /// index (it is filed again when a later change gives it a free key),
    /// and the next read of the index reports
    /// [`Error::PrimaryKeyConflict`]. If a key function panics, `entity`
    /// leaves that index (its old keys no longer describe its value) and
    /// the panic goes on, unless the thread is already unwinding (a `Mut`
    /// dropped during a panic): then the next read of the index reports
    /// [`Error::KeyFunctionPanicked`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rekey(
        &mut self,
        id: ComponentId,
        entity: Entity,
        (set, holding): (&ComponentSet, Holding<'_>),
        value: ComponentRef<'_>,
        membership: &Membership,
        retains: &mut Retains,
        context: &'static str,
    ) {
        for entry in self.list.values_mut() {
            if entry.store.component() == id
                && entry.store.is_active()
                && membership.group(entry.group).admits(set, holding, None)
            {
                rekey_one(entry, entity, value, retains, context);
            }
        }
    }

    /// How many active indices hold `entity`.
    pub(crate) fn holding(&self, entity: Entity) -> u32 {
        let holding = self.list.values().filter(|entry| entry.store.holds(entity)).count();
        u32::try_from(holding).expect("fewer than 2^32 indices: each costs memory, which runs out first")
    }
}

/// Files every entity of `group` (found in `storage`: its archetypes and
/// sparse sets) in `store` (inactive), then retains each it holds and marks
/// it active. On a primary-key clash
/// ([`Error::DuplicatePrimaryKey`]), or if a key function panics, `store` is
/// left empty and inactive, with nothing retained.
pub(crate) fn fill(
    store: &mut dyn Index,
    group: &Member,
    (archetypes, sparse): (&Archetypes, &SparseSets),
    retains: &mut Retains,
    context: &'static str,
) -> Result<(), Error> {
    debug_assert!(!store.is_active() && store.is_empty());
    let component = store.component();
    let mut held = Vec::new();
    let filled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for &archetype in &group.archetypes {
            let archetype = archetypes.get(archetype);
            for row in 0..archetype.len() as u32 {
                let entity = archetype
                    .entity_at(row)
                    .expect("rows below the archetype's length are live");
                if !group.admits(archetype.set(), Holding::Slot(sparse, entity.index()), None) {
                    continue;
                }
                let value = archetype
                    .component_ref(component, row)
                    .or_else(|| sparse.set(component)?.component_ref(entity.index()));
                let Some(value) = value else {
                    debug_assert!(false, "a group member has its matcher's components");
                    continue;
                };
                if let Err((key, holder)) = store.prepare(Some(entity), value) {
                    return Err(Error::DuplicatePrimaryKey {
                        context,
                        index: store.name(),
                        key,
                        holder,
                        entity: Some(entity),
                    });
                }
                if store.file_prepared(entity) {
                    held.push(entity);
                }
            }
        }
        Ok(())
    }));
    match filled {
        Ok(Ok(())) => {
            for entity in held {
                retains.retain_internal(entity.index());
            }
            store.core_mut().active = true;
            Ok(())
        }
        Ok(Err(error)) => {
            store.clear(&mut |_| {});
            Err(error)
        }
        Err(payload) => {
            store.clear(&mut |_| {});
            std::panic::resume_unwind(payload)
        }
    }
}

/// Moves `entity`, a member of `entry`'s group, to the keys of `value`: see
/// [`Indices::rekey`].
fn rekey_one(
    entry: &mut IndexEntry,
    entity: Entity,
    value: ComponentRef<'_>,
    retains: &mut Retains,
    context: &'static str,
) {
    let store = &mut *entry.store;
    let prepared = panic::catch_unwind(AssertUnwindSafe(|| store.prepare(Some(entity), value)));
    match prepared {
        Ok(Ok(())) => match store.refile_prepared(entity) {
            Filing::Unchanged => {}
            Filing::Filed => retains.retain_internal(entity.index()),
            Filing::Unfiled => release(retains, entity),
        },
        Ok(Err((key, holder))) => {
            if store.unfile(entity) {
                release(retains, entity);
            }
            entry.conflicts.push(Error::PrimaryKeyConflict {
                context,
                index: store.name(),
                key,
                holder,
                entity,
            });
        }
        Err(payload) => {
            if store.unfile(entity) {
                release(retains, entity);
            }
            if !std::thread::panicking() {
                panic::resume_unwind(payload);
            }
            // A `Mut` dropped while the thread unwinds: a panic leaving
            // this drop would abort the process. The first panic goes on;
            // this one is reported by the next read of the index.
            drop(payload);
            entry.conflicts.push(Error::KeyFunctionPanicked {
                context,
                index: store.name(),
                entity,
            });
        }
    }
}

/// Takes an index's retain off `entity`, which is still enabled (an entity
/// leaves every group before it is disabled), so its slot stays.
#[inline]
fn release(retains: &mut Retains, entity: Entity) {
    let released = retains.release_internal(entity.index());
    debug_assert!(released, "index released {entity}, which it did not retain");
}
