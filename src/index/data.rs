//! `Indices`: the entity indices of one context as plain data, updated
//! directly by the context as the change routes say (no closure per event).

use slotmap::SlotMap;

use super::{Filing, Index};
use crate::aerc::Retains;
use crate::component::{ComponentId, ComponentRef};
use crate::entity::Entity;
use crate::error::Error;
use crate::id::IndexKey;
use crate::routes::{Holding, Member};
use crate::storage::{Archetypes, SparseSets};

/// One registered index and the group it follows.
pub(crate) struct IndexEntry {
    pub(crate) group: u32,
    pub(crate) store: Box<dyn Index>,
}

/// Every index of a context.
#[derive(Default)]
pub(crate) struct Indices {
    list: SlotMap<IndexKey, IndexEntry>,
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
        self.list.insert(IndexEntry { group, store })
    }

    pub(crate) fn remove(&mut self, key: IndexKey) -> Option<IndexEntry> {
        self.list.remove(key)
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
        fill(store, group, storage, retains, context)
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

/// Takes an index's retain off `entity`, which is still enabled (an entity
/// leaves every group before it is disabled), so its slot stays.
#[inline]
fn release(retains: &mut Retains, entity: Entity) {
    let released = retains.release_internal(entity.index());
    debug_assert!(released, "index released {entity}, which it did not retain");
}
