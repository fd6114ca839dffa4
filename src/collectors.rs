//! `Collectors`: the collectors of one context as plain data, fed directly
//! by group events (no closure per event).

use std::any::Any;
use std::collections::HashMap;

use slotmap::SlotMap;
use smallvec::SmallVec;

use crate::aerc::{Aerc, Owner};
use crate::component::{Component, ComponentId};
use crate::entity::{Entities, Entity};
use crate::entity_ref::EntityRef;
use crate::group::GroupEvent;
use crate::storage::ComponentRef;

slotmap::new_key_type! {
    /// A collector's slot in its context.
    pub(crate) struct CollectorKey;
}

/// Which group events a collector takes from one group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Trigger {
    /// The entity joined the group, or a component of the group's matcher
    /// was replaced on a member (this is how a reactive system sees
    /// `replace`).
    Added,
    /// The entity left the group (a removal, or destroy). Unlike Entitas, a
    /// `replace` is not a removal: it does not trigger `Removed`.
    Removed,
    /// `Added` or `Removed`.
    AddedOrRemoved,
    /// A component of the group's matcher was replaced on a member (only
    /// that: joining the group does not count).
    Updated,
}

impl Trigger {
    /// Whether `event` triggers.
    #[inline]
    fn accepts(self, event: &GroupEvent<'_>) -> bool {
        match event {
            GroupEvent::Added { .. } => matches!(self, Trigger::Added | Trigger::AddedOrRemoved),
            GroupEvent::Removed { .. } => matches!(self, Trigger::Removed | Trigger::AddedOrRemoved),
            GroupEvent::Updated { .. } => self.on_updated(),
        }
    }

    /// Whether a replacement on a member (`Updated`) triggers.
    #[inline]
    pub(crate) fn on_updated(self) -> bool {
        !matches!(self, Trigger::Removed)
    }

    /// The method name that makes this trigger from a matcher.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Trigger::Added => "added",
            Trigger::Removed => "removed",
            Trigger::AddedOrRemoved => "added_or_removed",
            Trigger::Updated => "updated",
        }
    }
}

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

const NOT_HELD: u32 = u32::MAX;

/// One collector.
pub(crate) struct CollectorData {
    /// The owner of the retains the collector holds.
    pub(crate) owner: Owner,
    /// Its groups (indices) and their triggers.
    pub(crate) triggers: SmallVec<[(u32, Trigger); 2]>,
    pub(crate) active: bool,
    /// Collected entities, in the order they were first collected.
    pub(crate) entities: Vec<Entity>,
    /// Per slot index, the entity's position in `entities`, or `NOT_HELD`
    /// (a collected entity is retained, so its slot is not reused meanwhile).
    position: Vec<u32>,
    /// An empty list whose memory the next batch reuses.
    spare: Vec<Entity>,
    pub(crate) removed: Option<Box<dyn RemovedStore>>,
}

impl CollectorData {
    /// Adds `entity` if it is not collected yet; true if it was added.
    #[inline]
    fn insert(&mut self, entity: Entity) -> bool {
        let index = entity.index() as usize;
        if index >= self.position.len() {
            self.position.resize(index + 1, NOT_HELD);
        }
        if self.position[index] != NOT_HELD {
            return false;
        }
        self.position[index] = u32::try_from(self.entities.len()).expect("fewer than 2^32 entities");
        self.entities.push(entity);
        true
    }

    /// Whether `entity` is collected.
    pub(crate) fn contains(&self, entity: Entity) -> bool {
        self.position
            .get(entity.index() as usize)
            .and_then(|&at| self.entities.get(at as usize))
            == Some(&entity)
    }

    /// Takes the collected entities out (the collector is then empty; its
    /// entities stay retained by its owner), leaving reused memory behind.
    pub(crate) fn take_batch(&mut self) -> Vec<Entity> {
        for &entity in &self.entities {
            self.position[entity.index() as usize] = NOT_HELD;
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
    context: u32,
    list: SlotMap<CollectorKey, CollectorData>,
}

impl Collectors {
    pub(crate) fn new(context: u32) -> Self {
        Collectors {
            context,
            list: SlotMap::with_key(),
        }
    }

    /// The instance id of the context.
    pub(crate) fn context(&self) -> u32 {
        self.context
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
            // Sized for the slots the context has now, so a collector over a
            // populated context does not grow while warming up.
            position: vec![NOT_HELD; slots],
            spare: Vec::new(),
            removed,
        })
    }

    pub(crate) fn remove(&mut self, key: CollectorKey) -> Option<CollectorData> {
        self.list.remove(key)
    }

    /// Feeds a group event to collector `key` listening with `trigger`: an
    /// entity collected for the first time is retained.
    #[inline(always)]
    pub(crate) fn deliver(
        &mut self,
        key: CollectorKey,
        trigger: Trigger,
        event: &GroupEvent<'_>,
        entities: &mut Entities,
    ) {
        if !trigger.accepts(event) {
            return;
        }
        self.collect(key, event.entity(), entities);
        if let GroupEvent::Removed { entity, removed, .. } = event {
            let collector = &mut self.list[key];
            if let (true, Some(store)) = (collector.active, &mut collector.removed) {
                store.record(*entity, *removed);
            }
        }
    }

    /// Collector `key` collects `entity` (if active), retaining it the first
    /// time.
    #[inline(always)]
    pub(crate) fn collect(&mut self, key: CollectorKey, entity: Entity, entities: &mut Entities) {
        let collector = &mut self.list[key];
        if collector.active && collector.insert(entity) {
            let meta = entities
                .slot_mut(entity)
                .expect("a group event is about an entity in a slot");
            // Fewer than 2^32 collectors exist, so the count cannot overflow.
            Aerc::retain_internal(meta).expect("one retain per collector holding the entity");
        }
    }
}
