//! `Indices`: the entity indices of one context as plain data, updated
//! directly by the context as entities join, leave and change in groups (no
//! closure per event).

use slotmap::SlotMap;

use crate::aerc::Aerc;
use crate::component::ComponentId;
use crate::entity::{Entities, Entity};
use crate::error::Error;
use crate::groups::GroupData;
use crate::index::{Filing, Index};
use crate::storage::{Archetypes, ComponentRef};

slotmap::new_key_type! {
    /// An index's slot in its context.
    pub(crate) struct IndexKey;
}

/// One registered index and the group it follows.
pub(crate) struct IndexEntry {
    pub(crate) group: u32,
    pub(crate) store: Box<dyn Index>,
}

/// Every index of a context.
#[derive(Default)]
pub(crate) struct Indices {
    list: SlotMap<IndexKey, IndexEntry>,
    /// Active indices: zero means changes skip index work.
    active: usize,
}

impl Indices {
    /// Whether any index follows its group (else changes need no index work).
    #[inline]
    pub(crate) fn any_active(&self) -> bool {
        self.active != 0
    }

    pub(crate) fn get(&self, key: IndexKey) -> Option<&IndexEntry> {
        self.list.get(key)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &IndexEntry> + '_ {
        self.list.values()
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
        self.active += 1;
        self.list.insert(IndexEntry { group, store })
    }

    pub(crate) fn remove(&mut self, key: IndexKey) -> Option<IndexEntry> {
        let entry = self.list.remove(key)?;
        if entry.store.is_active() {
            self.active -= 1;
        }
        Some(entry)
    }

    /// Files the entities of `group` in index `key` (inactive), retaining
    /// each it holds, and makes it active. See [`fill`].
    pub(crate) fn activate(
        &mut self,
        key: IndexKey,
        group: &GroupData,
        archetypes: &Archetypes,
        entities: &mut Entities,
        context: &'static str,
    ) -> Result<(), Error> {
        let store = &mut *self.list[key].store;
        if store.is_active() {
            return Ok(());
        }
        fill(store, group, archetypes, entities, context)?;
        self.active += 1;
        Ok(())
    }

    /// Empties index `key` and releases what it held; it follows its group no
    /// more. Does nothing if it is inactive.
    pub(crate) fn deactivate(&mut self, key: IndexKey, entities: &mut Entities) {
        let store = &mut *self.list[key].store;
        if !store.is_active() {
            return;
        }
        store.clear(&mut |entity| release(entities, entity));
        store.core_mut().active = false;
        self.active -= 1;
    }

    /// Before a change about `entity` (`None`: one being created), which
    /// makes it join the group of the indices `keys` or, for `replace`, gives
    /// it a new value of a key component: each active index keyed on a
    /// component that `value_of` gives a value for makes its keys (the one
    /// call of its key function for the change). [`Error::DuplicatePrimaryKey`]
    /// if a primary index has one of them for another entity.
    pub(crate) fn prepare<'v>(
        &mut self,
        keys: &[IndexKey],
        entity: Option<Entity>,
        value_of: impl Fn(ComponentId) -> Option<ComponentRef<'v>>,
        context: &'static str,
    ) -> Result<(), Error> {
        for &key in keys {
            let store = &mut *self.list[key].store;
            if !store.is_active() {
                continue;
            }
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

    /// `entity` joined the group of the indices `keys`: each active one files
    /// it under the keys it prepared, retaining it.
    #[inline]
    pub(crate) fn joined(&mut self, keys: &[IndexKey], entity: Entity, entities: &mut Entities) {
        for &key in keys {
            let store = &mut *self.list[key].store;
            if store.is_active() && store.file_prepared(entity) {
                retain(entities, entity);
            }
        }
    }

    /// `entity` left the group of the indices `keys`: each active one takes
    /// it out, releasing it. (The entity is still enabled: an index never
    /// keeps a destroyed entity.)
    #[inline]
    pub(crate) fn left(&mut self, keys: &[IndexKey], entity: Entity, entities: &mut Entities) {
        for &key in keys {
            let store = &mut *self.list[key].store;
            if store.is_active() && store.unfile(entity) {
                release(entities, entity);
            }
        }
    }

    /// Component `id` of member `entity` of the group of the indices `keys`
    /// was replaced: each active index keyed on `id` moves it to the keys it
    /// prepared.
    #[inline]
    pub(crate) fn replaced(&mut self, keys: &[IndexKey], entity: Entity, id: ComponentId, entities: &mut Entities) {
        for &key in keys {
            let store = &mut *self.list[key].store;
            if !store.is_active() || store.component() != id {
                continue;
            }
            match store.refile_prepared(entity) {
                Filing::Unchanged => {}
                Filing::Filed => retain(entities, entity),
                Filing::Unfiled => release(entities, entity),
            }
        }
    }

    /// The active indices among `keys` that are keyed on component `id`.
    pub(crate) fn keyed_on<'a>(&'a self, keys: &'a [IndexKey], id: ComponentId) -> impl Iterator<Item = IndexKey> + 'a {
        let list = &self.list;
        keys.iter().copied().filter(move |&key| {
            let store = &list[key].store;
            store.is_active() && store.component() == id
        })
    }

    /// How many active indices hold `entity`.
    pub(crate) fn holding(&self, entity: Entity) -> u32 {
        let holding = self.list.values().filter(|entry| entry.store.holds(entity)).count();
        u32::try_from(holding).expect("fewer than 2^32 indices")
    }
}

/// Files every entity of `group` in `store` (inactive), then retains each it
/// holds and marks it active. On a primary-key clash
/// ([`Error::DuplicatePrimaryKey`]), or if a key function panics, `store` is
/// left empty and inactive, with nothing retained.
pub(crate) fn fill(
    store: &mut dyn Index,
    group: &GroupData,
    archetypes: &Archetypes,
    entities: &mut Entities,
    context: &'static str,
) -> Result<(), Error> {
    debug_assert!(!store.is_active() && store.is_empty());
    let component = store.component();
    let mut held = Vec::new();
    let filled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for &archetype in &group.archetypes {
            let archetype = archetypes.get(archetype);
            for entity in archetype.entities() {
                let value = entities
                    .get(entity)
                    .and_then(|meta| archetype.component_ref(component, meta.location));
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
                retain(entities, entity);
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

/// An index's retain on `entity`, alive.
#[inline]
fn retain(entities: &mut Entities, entity: Entity) {
    let meta = entities.slot_mut(entity).expect("an indexed entity is alive");
    // Fewer than 2^32 collectors and indices exist, so this cannot overflow.
    Aerc::retain_internal(meta).expect("one retain per index holding the entity");
}

/// Takes an index's retain off `entity`, which is still enabled (an entity
/// leaves every group before it is disabled), so its slot stays.
#[inline]
fn release(entities: &mut Entities, entity: Entity) {
    let meta = entities.slot_mut(entity).expect("an indexed entity is alive");
    let released = Aerc::release_internal(meta);
    debug_assert!(
        released && meta.enabled,
        "index released {entity}, which it did not retain"
    );
}
