//! `Collectors`: the collectors of one context as plain data, fed directly
//! by the change routes (no closure per event).

use std::any::Any;
use std::collections::HashMap;

use smallvec::SmallVec;

use super::Trigger;
use crate::aerc::{Owner, Retains};
use crate::component::Component;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::group::GroupEvent;
use crate::id::{CollectorKey, ComponentId};
use crate::slot_table::SlotTable;
use crate::storage::{ComponentRef, Tick};

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
///
/// For a `pooled` component, values let go of are kept in `spare` and
/// cloned into (`clone_from`) when the next value is recorded, so a
/// steady flow of removals allocates nothing once warmed up.
pub(crate) struct RemovedValues<T> {
    current: HashMap<Entity, T>,
    batch: HashMap<Entity, T>,
    spare: Vec<T>,
}

impl<T> RemovedValues<T> {
    /// How many entities have a value, recorded or in the batch.
    pub(crate) fn len(&self) -> usize {
        let batch_only = self.batch.keys().filter(|entity| !self.current.contains_key(entity));
        self.current.len() + batch_only.count()
    }
}

impl<T: Component + Clone> RemovedValues<T> {
    pub(crate) fn boxed() -> Box<dyn RemovedStore> {
        Box::new(RemovedValues::<T> {
            current: HashMap::new(),
            batch: HashMap::new(),
            spare: Vec::new(),
        })
    }

    /// Empties `values`: into `spare` for a pooled `T`, else dropped.
    fn let_go(values: &mut HashMap<Entity, T>, spare: &mut Vec<T>) {
        if T::POOLED {
            spare.extend(values.drain().map(|(_, value)| value));
        } else {
            values.clear();
        }
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
        let Some(value) = value else {
            return;
        };
        if !T::POOLED {
            self.current.insert(view.entity(), value.clone());
            return;
        }
        match self.current.get_mut(&view.entity()) {
            Some(kept) => kept.clone_from(value),
            None => {
                let kept = match self.spare.pop() {
                    Some(mut spare) => {
                        spare.clone_from(value);
                        spare
                    }
                    None => value.clone(),
                };
                self.current.insert(view.entity(), kept);
            }
        }
    }

    fn start_batch(&mut self) {
        Self::let_go(&mut self.batch, &mut self.spare);
        std::mem::swap(&mut self.current, &mut self.batch);
    }

    fn end_batch(&mut self) {
        Self::let_go(&mut self.batch, &mut self.spare);
    }

    fn clear(&mut self) {
        Self::let_go(&mut self.current, &mut self.spare);
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
    /// The change tick of its last look at change stamps: rows stamped
    /// later are changes it has not taken yet.
    pub(crate) seen: Tick,
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
    /// Collects `entity` (if it is not collected yet, retaining it).
    #[inline(always)]
    pub(crate) fn collect(&mut self, entity: Entity, retains: &mut Retains) {
        if self.insert(entity) {
            retains.retain_internal(entity.index());
        }
    }

    /// Adds `entity` if it is not collected yet; true if it was added.
    #[inline(always)]
    fn insert(&mut self, entity: Entity) -> bool {
        let index = entity.index() as usize;
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        let held = match self.held.get_mut(word) {
            Some(held) => held,
            None => self.grow(word),
        };
        if *held & bit != 0 {
            return false;
        }
        *held |= bit;
        self.entities.push(entity);
        true
    }

    /// Room for the bits of word `word`, which it gives.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, word: usize) -> &mut u64 {
        self.held.resize((word + 1).next_power_of_two(), 0);
        &mut self.held[word]
    }

    /// Whether `entity` is collected.
    pub(crate) fn contains(&self, entity: Entity, entities: &SlotTable) -> bool {
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

    /// Puts entities taken with `take_batch` (still retained by the
    /// collector) back, in their order, ahead of nothing (the collector is
    /// empty: nothing can be collected while a batch is read); gives those
    /// already collected again, whose retain the caller lets go.
    pub(crate) fn put_back(&mut self, entities: &[Entity]) -> Vec<Entity> {
        let mut twice = Vec::new();
        for &entity in entities {
            if self.insert(entity) {
                continue;
            }
            twice.push(entity);
        }
        twice
    }

    /// Gives back the memory of a batch taken with `take_batch`.
    pub(crate) fn return_batch(&mut self, mut batch: Vec<Entity>) {
        batch.clear();
        if batch.capacity() > self.spare.capacity() {
            self.spare = batch;
        }
    }
}

/// One collector slot: its generation, and its collector while it has one.
struct Slot {
    generation: u32,
    data: Option<CollectorData>,
}

/// Every collector of a context, in slots that keep their index (change
/// routes refer to a collector by it); a removed collector's slot is reused,
/// last freed first, with the next generation.
pub(crate) struct Collectors {
    slots: Vec<Slot>,
    free: Vec<u32>,
    len: usize,
}

impl Collectors {
    pub(crate) fn new() -> Self {
        Collectors {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, key: CollectorKey) -> Option<&CollectorData> {
        let slot = self.slots.get(key.index as usize)?;
        slot.data.as_ref().filter(|_| slot.generation == key.generation)
    }

    pub(crate) fn get_mut(&mut self, key: CollectorKey) -> Option<&mut CollectorData> {
        let slot = self.slots.get_mut(key.index as usize)?;
        slot.data.as_mut().filter(|_| slot.generation == key.generation)
    }

    /// Every collector, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (CollectorKey, &CollectorData)> + '_ {
        self.slots.iter().enumerate().filter_map(|(index, slot)| {
            let key = CollectorKey {
                index: index as u32,
                generation: slot.generation,
            };
            Some((key, slot.data.as_ref()?))
        })
    }

    /// Whether collector `key` exists and collects.
    #[inline]
    pub(crate) fn is_active(&self, key: CollectorKey) -> bool {
        self.get(key).is_some_and(|c| c.active)
    }

    /// Whether collector `key` keeps the removed values of the entities it
    /// collects (`keep_removed`).
    pub(crate) fn keeps_removed(&self, key: CollectorKey) -> bool {
        self.get(key).is_some_and(|c| c.removed.is_some())
    }

    /// A new, active collector over `triggers`, with a bitset sized for
    /// `slots` entity slots (so a collector over a populated context does not
    /// grow while warming up).
    pub(crate) fn insert(
        &mut self,
        triggers: SmallVec<[(u32, Trigger); 2]>,
        removed: Option<Box<dyn RemovedStore>>,
        slots: usize,
        seen: Tick,
    ) -> CollectorKey {
        let data = CollectorData {
            owner: Owner::internal(),
            triggers,
            active: true,
            seen,
            entities: Vec::new(),
            held: vec![0; slots.div_ceil(64)],
            spare: Vec::new(),
            removed,
        };
        self.len += 1;
        match self.free.pop() {
            Some(index) => {
                let slot = &mut self.slots[index as usize];
                slot.generation = slot.generation.wrapping_add(1);
                slot.data = Some(data);
                CollectorKey {
                    index,
                    generation: slot.generation,
                }
            }
            None => {
                let index = u32::try_from(self.slots.len())
                    .expect("fewer than 2^32 collector slots: each costs memory, which runs out first");
                self.slots.push(Slot {
                    generation: 1,
                    data: Some(data),
                });
                CollectorKey { index, generation: 1 }
            }
        }
    }

    /// Lowers every collector's last look by `base` (`NEVER` for those at
    /// or below it: inactive ones, which look again when activated).
    pub(crate) fn rebase(&mut self, base: Tick) {
        for slot in &mut self.slots {
            if let Some(data) = &mut slot.data {
                data.seen = data.seen.rebased(base);
            }
        }
    }

    pub(crate) fn remove(&mut self, key: CollectorKey) -> Option<CollectorData> {
        self.get(key)?;
        self.len -= 1;
        self.free.push(key.index);
        self.slots[key.index as usize].data.take()
    }

    /// The collector in slot `key` (which a route names, so it exists).
    #[inline(always)]
    fn routed(&mut self, key: CollectorKey) -> &mut CollectorData {
        match &mut self.slots[key.index as usize].data {
            Some(data) => data,
            None => unreachable!("routes name existing collectors: `remove_collector` detaches one from its routes"),
        }
    }

    /// Collector `key` (an active one: routes list no other) collects
    /// `entity`, retaining it the first time.
    #[inline(always)]
    pub(crate) fn collect(&mut self, key: CollectorKey, entity: Entity, retains: &mut Retains) {
        if self.routed(key).insert(entity) {
            retains.retain_internal(entity.index());
        }
    }

    /// The collectors `keys` (active ones, from a route) collect `entity`.
    #[inline(always)]
    pub(crate) fn collect_each(&mut self, keys: &[CollectorKey], entity: Entity, retains: &mut Retains) {
        match *keys {
            [] => {}
            [key] => self.collect(key, entity, retains),
            _ => {
                for &key in keys {
                    self.collect(key, entity, retains);
                }
            }
        }
    }

    /// Collector `key` collects the entity of `event`, a group event its
    /// trigger takes; for an entity leaving, its removed-value store (if any)
    /// records the value.
    #[inline]
    pub(crate) fn deliver(&mut self, key: CollectorKey, event: &GroupEvent<'_>, retains: &mut Retains) {
        self.collect(key, event.entity(), retains);
        if let GroupEvent::Removed { entity, removed, .. } = event
            && let Some(store) = &mut self.routed(key).removed
        {
            store.record(*entity, *removed);
        }
    }
}
