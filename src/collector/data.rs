//! `Collectors`: the collectors of one context as plain data, fed directly
//! by the change routes (no closure per event).

use std::any::Any;
use std::collections::HashMap;

use slotmap::SlotMap;
use smallvec::SmallVec;

use super::Trigger;
use crate::aerc::{Owner, Retains};
use crate::component::{Component, ComponentId, ComponentRef};
use crate::entity::{Entities, Entity};
use crate::entity_ref::EntityRef;
use crate::group::GroupEvent;
use crate::id::CollectorKey;

/// Keeps, per collected entity, the value of one component type when it
/// left a group.
pub(crate) trait RemovedStore: Send + Sync {
    /// The component type kept.
    fn component(&self) -> ComponentId;
    /// Records the value `entity` had as it left (the removed value, or the
    /// one still readable on `view`), replacing an earlier one.
    fn record(&mut self, view: EntityRef<'_>, removed: Option<ComponentRef<'_>>);
    /// The values recorded so far become the batch under execution.
    fn start_batch(&mut self);
    /// The batch under execution is done.
    fn end_batch(&mut self);
    /// Forgets the values recorded since the last batch.
    fn clear(&mut self);
    fn as_any(&self) -> &dyn Any;
}

/// [`RemovedStore`] for component `T`.
pub(crate) struct RemovedValues<T> {
    current: HashMap<Entity, T>,
    batch: HashMap<Entity, T>,
}

impl<T: Component + Clone> RemovedValues<T> {
    pub(crate) fn boxed() -> Box<dyn RemovedStore> {
        Box::new(RemovedValues::<T> {
            current: HashMap::new(),
            batch: HashMap::new(),
        })
    }

    /// The value the entity had when it last left: recorded since the last
    /// batch, else in the batch under execution.
    pub(crate) fn get(&self, entity: Entity) -> Option<&T> {
        self.current.get(&entity).or_else(|| self.batch.get(&entity))
    }
}

impl<T: Component + Clone> RemovedStore for RemovedValues<T> {
    fn component(&self) -> ComponentId {
        T::component_id()
    }

    fn record(&mut self, view: EntityRef<'_>, removed: Option<ComponentRef<'_>>) {
        let value = removed.and_then(|c| c.get::<T>()).or_else(|| view.get::<T>());
        if let Some(value) = value {
            self.current.insert(view.entity(), value.clone());
        }
    }

    fn start_batch(&mut self) {
        self.batch.clear();
        std::mem::swap(&mut self.current, &mut self.batch);
    }

    fn end_batch(&mut self) {
        self.batch.clear();
    }

    fn clear(&mut self) {
        self.current.clear();
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One collector.
pub(crate) struct CollectorData {
    /// The owner of the retains the collector holds.
    pub(crate) owner: Owner,
    /// Its groups (indices) and their triggers.
    pub(crate) triggers: SmallVec<[(u32, Trigger); 2]>,
    pub(crate) active: bool,
    /// Collected entities, in the order they were first collected.
    pub(crate) entities: Vec<Entity>,
    /// One bit per entity slot: set while the slot's entity is collected (a
    /// collected entity is retained, so its slot is not reused meanwhile).
    held: Vec<u64>,
    /// An empty list whose memory the next batch reuses.
    spare: Vec<Entity>,
    pub(crate) removed: Option<Box<dyn RemovedStore>>,
}

impl CollectorData {
    /// Adds `entity` if it is not collected yet; true if it was added.
    #[inline(always)]
    fn insert(&mut self, entity: Entity) -> bool {
        let index = entity.index() as usize;
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if word >= self.held.len() {
            self.held.resize((word + 1).next_power_of_two(), 0);
        }
        let held = &mut self.held[word];
        if *held & bit != 0 {
            return false;
        }
        *held |= bit;
        self.entities.push(entity);
        true
    }

    /// Whether `entity` is collected.
    pub(crate) fn contains(&self, entity: Entity, entities: &Entities) -> bool {
        let index = entity.index() as usize;
        let marked = self
            .held
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0);
        // A marked slot holds the collected entity (it is retained), so the
        // handle is that entity's if it still names the slot's entity.
        marked && entities.holds_slot(entity)
    }

    /// Takes the collected entities out (the collector is then empty; its
    /// entities stay retained), leaving reused memory behind.
    pub(crate) fn take_batch(&mut self) -> Vec<Entity> {
        if self.entities.len() >= self.held.len() {
            self.held.fill(0);
        } else {
            for &entity in &self.entities {
                let index = entity.index() as usize;
                self.held[index / 64] &= !(1 << (index % 64));
            }
        }
        let next = std::mem::take(&mut self.spare);
        std::mem::replace(&mut self.entities, next)
    }

    /// Gives back the memory of a batch taken with `take_batch`.
    pub(crate) fn return_batch(&mut self, mut batch: Vec<Entity>) {
        batch.clear();
        if batch.capacity() > self.spare.capacity() {
            self.spare = batch;
        }
    }
}

/// Every collector of a context.
pub(crate) struct Collectors {
    list: SlotMap<CollectorKey, CollectorData>,
}

impl Collectors {
    pub(crate) fn new() -> Self {
        Collectors {
            list: SlotMap::with_key(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn get(&self, key: CollectorKey) -> Option<&CollectorData> {
        self.list.get(key)
    }

    pub(crate) fn get_mut(&mut self, key: CollectorKey) -> Option<&mut CollectorData> {
        self.list.get_mut(key)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (CollectorKey, &CollectorData)> + '_ {
        self.list.iter()
    }

    /// Whether collector `key` exists and collects.
    #[inline]
    pub(crate) fn is_active(&self, key: CollectorKey) -> bool {
        self.list.get(key).is_some_and(|c| c.active)
    }

    /// A new, active collector over `triggers`, with a bitset sized for
    /// `slots` entity slots (so a collector over a populated context does not
    /// grow while warming up).
    pub(crate) fn insert(
        &mut self,
        triggers: SmallVec<[(u32, Trigger); 2]>,
        removed: Option<Box<dyn RemovedStore>>,
        slots: usize,
    ) -> CollectorKey {
        self.list.insert(CollectorData {
            owner: Owner::internal(),
            triggers,
            active: true,
            entities: Vec::new(),
            held: vec![0; slots.div_ceil(64)],
            spare: Vec::new(),
            removed,
        })
    }

    pub(crate) fn remove(&mut self, key: CollectorKey) -> Option<CollectorData> {
        self.list.remove(key)
    }

    /// Collector `key` (an active one: routes list no other) collects
    /// `entity`, retaining it the first time.
    #[inline(always)]
    pub(crate) fn collect(&mut self, key: CollectorKey, entity: Entity, retains: &mut Retains) {
        let collector = &mut self.list[key];
        if collector.insert(entity) {
            retains.retain_internal(entity.index());
        }
    }

    /// Collector `key` collects the entity of `event`, a group event its
    /// trigger takes; for an entity leaving, its removed-value store (if any)
    /// records the value.
    #[inline]
    pub(crate) fn deliver(&mut self, key: CollectorKey, event: &GroupEvent<'_>, retains: &mut Retains) {
        self.collect(key, event.entity(), retains);
        if let GroupEvent::Removed { entity, removed, .. } = event
            && let Some(store) = &mut self.list[key].removed
        {
            store.record(*entity, *removed);
        }
    }
}
