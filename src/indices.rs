//! `Indices`: the entity indices of one context as plain data, updated
//! directly by the context as entities join, leave and change in groups (no
//! closure per event).

use slotmap::SlotMap;

use crate::aerc::Aerc;
use crate::component::ComponentId;
use crate::entity::{Entities, Entity};
use crate::entity_ref::EntityRef;
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
    /// Active primary indices: zero means changes skip the key checks.
    active_primary: usize,
}

impl Indices {
    /// Whether any index follows its group (else changes need no index work).
    #[inline]
    pub(crate) fn any_active(&self) -> bool {
        self.active != 0
    }

    /// Whether any primary index follows its group (else changes need no
    /// key check).
    #[inline]
    pub(crate) fn any_active_primary(&self) -> bool {
        self.active_primary != 0
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
        self.count(store.is_primary(), true);
        self.list.insert(IndexEntry { group, store })
    }

    pub(crate) fn remove(&mut self, key: IndexKey) -> Option<IndexEntry> {
        let entry = self.list.remove(key)?;
        if entry.store.is_active() {
            self.count(entry.store.is_primary(), false);
        }
        Some(entry)
    }

    /// Counts an index (primary or not) that became active (`up`) or
    /// inactive.
    fn count(&mut self, primary: bool, up: bool) {
        let change = |n: &mut usize| if up { *n += 1 } else { *n -= 1 };
        change(&mut self.active);
        if primary {
            change(&mut self.active_primary);
        }
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
        let primary = store.is_primary();
        self.count(primary, true);
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
        let primary = store.is_primary();
        self.count(primary, false);
    }

    /// `entity` joined the group of the indices `keys`: each active one files
    /// it under the keys of its component (read from `view`), retaining it.
    #[inline]
    pub(crate) fn joined(&mut self, keys: &[IndexKey], view: EntityRef<'_>, entities: &mut Entities) {
        for &key in keys {
            let store = &mut *self.list[key].store;
            if !store.is_active() {
                continue;
            }
            let Some(value) = view.component_ref(store.component()) else {
                debug_assert!(false, "a group member has its matcher's components");
                continue;
            };
            if store.file(view.entity(), value) {
                retain(entities, view.entity());
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
    /// was replaced by `new`: each active index keyed on `id` moves it to its
    /// new keys.
    #[inline]
    pub(crate) fn replaced(
        &mut self,
        keys: &[IndexKey],
        entity: Entity,
        id: ComponentId,
        new: ComponentRef<'_>,
        entities: &mut Entities,
    ) {
        for &key in keys {
            let store = &mut *self.list[key].store;
            if !store.is_active() || store.component() != id {
                continue;
            }
            match store.refile(entity, new) {
                Filing::Unchanged => {}
                Filing::Filed => retain(entities, entity),
                Filing::Unfiled => release(entities, entity),
            }
        }
    }

    /// Whether `entity` (or, for `None`, an entity being created) may have
    /// the component values `value_of` gives as a member of the group of the
    /// indices `keys`: [`Error::DuplicatePrimaryKey`] if an active primary
    /// index has one of their keys for another entity. `value_of` answers
    /// `None` for a component whose keys do not change.
    pub(crate) fn check<'v>(
        &self,
        keys: &[IndexKey],
        entity: Option<Entity>,
        value_of: impl Fn(ComponentId) -> Option<ComponentRef<'v>>,
        context: &'static str,
    ) -> Result<(), Error> {
        for &key in keys {
            let store = &*self.list[key].store;
            if !store.is_active() || !store.is_primary() {
                continue;
            }
            if let Some(value) = value_of(store.component())
                && let Some((key, holder)) = store.conflict(entity, value)
            {
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

    /// Whether any of the indices `keys` is an active primary index.
    pub(crate) fn any_primary(&self, keys: &[IndexKey]) -> bool {
        keys.iter().any(|&key| {
            let store = &self.list[key].store;
            store.is_active() && store.is_primary()
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
                if let Some((key, holder)) = store.conflict(Some(entity), value) {
                    return Err(Error::DuplicatePrimaryKey {
                        context,
                        index: store.name(),
                        key,
                        holder,
                        entity: Some(entity),
                    });
                }
                if store.file(entity, value) {
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
    debug_assert!(meta.enabled && meta.internal_retains > 0);
    meta.internal_retains -= 1;
}
