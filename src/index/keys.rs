//! What both kinds of index are made of: `KeyFn`, an index's key function
//! over one component type, with the component type erased so an index is
//! generic over its key type only; `Prepared`: the keys made before a
//! change, waiting for it to be done; and `FiledKeys`: the keys each filed
//! entity is filed under.

use smallvec::SmallVec;

use crate::component::Component;
use crate::entity::Entity;
use crate::storage::{ComponentInfo, ComponentRef};

type Keys<K> = dyn Fn(ComponentRef<'_>, &mut dyn FnMut(K)) + Send + Sync;

/// The keys of a component value: one (`single`) or any number (`multi`).
pub(crate) struct KeyFn<K> {
    component: &'static ComponentInfo,
    keys: Box<Keys<K>>,
}

impl<K: 'static> KeyFn<K> {
    /// One key per value of `T`.
    pub(crate) fn single<T: Component>(key: impl Fn(&T) -> K + Send + Sync + 'static) -> Self {
        KeyFn {
            component: T::component_info(),
            keys: Box::new(move |value, out| {
                if let Some(value) = value.get::<T>() {
                    out(key(value));
                }
            }),
        }
    }

    /// Any number of keys per value of `T` (e.g. every grid cell a bounding
    /// box covers).
    pub(crate) fn multi<T, I>(keys: impl Fn(&T) -> I + Send + Sync + 'static) -> Self
    where
        T: Component,
        I: IntoIterator<Item = K>,
    {
        KeyFn {
            component: T::component_info(),
            keys: Box::new(move |value, out| {
                if let Some(value) = value.get::<T>() {
                    keys(value).into_iter().for_each(&mut *out);
                }
            }),
        }
    }

    /// The component the keys are made from.
    pub(crate) fn info(&self) -> &'static ComponentInfo {
        self.component
    }

    /// Calls `out` with each key of `value` (none if `value` is not of the
    /// key component's type).
    #[inline]
    pub(crate) fn each(&self, value: ComponentRef<'_>, out: &mut dyn FnMut(K)) {
        (self.keys)(value, out);
    }

    /// The keys of `value` into `into` (emptied first), in the order the key
    /// function gives them, each once. Runs the user's key function before
    /// touching anything else, so a panic in it leaves `into` partly filled
    /// and nothing else changed.
    pub(crate) fn collect(&self, value: ComponentRef<'_>, into: &mut Vec<K>)
    where
        K: Eq,
    {
        into.clear();
        self.each(value, &mut |key| {
            if !into.contains(&key) {
                into.push(key);
            }
        });
    }
}

/// The keys an index made for the entity a change is about, before the
/// change, waiting to be filed once it is done (so that the key function is
/// called once per change, and never while the change is half made).
pub(crate) struct Prepared<K> {
    keys: Vec<K>,
    ready: bool,
}

impl<K> Default for Prepared<K> {
    fn default() -> Self {
        Prepared {
            keys: Vec::new(),
            ready: false,
        }
    }
}

impl<K: Eq + 'static> Prepared<K> {
    /// Makes the keys of `value` with `keys`, each once, and gives them for
    /// checking. If the key function panics, nothing is ready.
    pub(crate) fn make(&mut self, keys: &KeyFn<K>, value: ComponentRef<'_>) -> &[K] {
        self.ready = false;
        keys.collect(value, &mut self.keys);
        self.ready = true;
        &self.keys
    }

    /// Forgets the keys made (they were refused).
    pub(crate) fn cancel(&mut self) {
        self.ready = false;
    }

    /// The keys made, taken out to be filed (empty if none were made, a
    /// bug); give the list back with [`Prepared::give_back`].
    pub(crate) fn take(&mut self) -> Vec<K> {
        debug_assert!(self.ready, "filing without prepared keys");
        let mut keys = std::mem::take(&mut self.keys);
        if !std::mem::take(&mut self.ready) {
            keys.clear();
        }
        keys
    }

    /// Returns the list taken with [`Prepared::take`], for its memory.
    pub(crate) fn give_back(&mut self, mut keys: Vec<K>) {
        keys.clear();
        self.keys = keys;
    }
}

/// What an index keeps of each entity it filed, by entity slot: the entity
/// and the keys it is filed under, each beside what the index keeps with it
/// (`P`: an [`EntityIndex`](crate::EntityIndex) the entity's position in
/// the key's list, a [`PrimaryEntityIndex`](crate::PrimaryEntityIndex)
/// nothing); and how many entities are filed.
pub(crate) struct FiledKeys<K, P> {
    slots: Vec<Filed<K, P>>,
    entities: usize,
}

/// One slot: the entity filed there ([`Entity::PLACEHOLDER`] if none) and
/// its keys (empty if none).
struct Filed<K, P> {
    entity: Entity,
    keys: SmallVec<[(K, P); 1]>,
}

impl<K, P> Default for Filed<K, P> {
    fn default() -> Self {
        Filed {
            entity: Entity::PLACEHOLDER,
            keys: SmallVec::new(),
        }
    }
}

impl<K, P> Default for FiledKeys<K, P> {
    fn default() -> Self {
        FiledKeys {
            slots: Vec::new(),
            entities: 0,
        }
    }
}

impl<K, P> FiledKeys<K, P> {
    /// How many entities are filed.
    pub(crate) fn len(&self) -> usize {
        self.entities
    }
}

impl<K: PartialEq, P> FiledKeys<K, P> {
    /// The keys `entity` is filed under, each with what is kept beside it
    /// (none if it is not filed: a slot's keys belong to the entity filed
    /// there, never to an older handle of the slot).
    pub(crate) fn of(&self, entity: Entity) -> &[(K, P)] {
        self.slots
            .get(entity.index() as usize)
            .filter(|filed| filed.entity == entity)
            .map_or(&[], |filed| &filed.keys)
    }

    /// Whether `entity` is filed.
    pub(crate) fn holds(&self, entity: Entity) -> bool {
        self.slots
            .get(entity.index() as usize)
            .is_some_and(|filed| filed.entity == entity)
    }

    /// Whether `entity` is filed under exactly `keys`, in that order
    /// (nothing to refile; also when it is not filed and `keys` is empty).
    pub(crate) fn unchanged(&self, entity: Entity, keys: &[K]) -> bool {
        let old = self.of(entity);
        old.len() == keys.len() && old.iter().zip(keys).all(|((old, _), new)| old == new)
    }

    /// Each filed entity with its keys, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Entity, &[(K, P)])> + '_ {
        self.slots
            .iter()
            .filter(|filed| !filed.keys.is_empty())
            .map(|filed| (filed.entity, &filed.keys[..]))
    }

    /// What is kept beside `key` for `entity`, which is filed under it.
    pub(crate) fn beside_mut(&mut self, entity: Entity, key: &K) -> Option<&mut P> {
        let filed = self.slots.get_mut(entity.index() as usize)?;
        let (_, beside) = filed.keys.iter_mut().find(|(k, _)| k == key)?;
        Some(beside)
    }

    /// The one key `entity` is filed under, with what is kept beside it,
    /// when it is filed under exactly one (`None` otherwise): a move to
    /// another single key is then made in place.
    pub(crate) fn single_mut(&mut self, entity: Entity) -> Option<&mut (K, P)> {
        let filed = self
            .slots
            .get_mut(entity.index() as usize)
            .filter(|filed| filed.entity == entity)?;
        match filed.keys.as_mut_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// The list to file `entity` (not filed yet) under: its slot's, empty,
    /// which keeps the memory of the slot's earlier entities. Give it back
    /// filled with [`FiledKeys::file`].
    pub(crate) fn start(&mut self, entity: Entity) -> SmallVec<[(K, P); 1]> {
        let slot = entity.index() as usize;
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, Filed::default);
        }
        debug_assert!(self.slots[slot].keys.is_empty(), "{entity} is filed twice");
        std::mem::take(&mut self.slots[slot].keys)
    }

    /// Files `entity` under `keys` (the list [`FiledKeys::start`] gave);
    /// true if there is at least one.
    pub(crate) fn file(&mut self, entity: Entity, keys: SmallVec<[(K, P); 1]>) -> bool {
        let held = !keys.is_empty();
        self.slots[entity.index() as usize] = Filed {
            entity: if held { entity } else { Entity::PLACEHOLDER },
            keys,
        };
        self.entities += usize::from(held);
        held
    }

    /// Takes `entity` out, with the keys it was filed under (`None` if it
    /// was not filed). Give the emptied list back with
    /// [`FiledKeys::give_back`], for its memory.
    pub(crate) fn take(&mut self, entity: Entity) -> Option<SmallVec<[(K, P); 1]>> {
        let filed = self
            .slots
            .get_mut(entity.index() as usize)
            .filter(|filed| filed.entity == entity)?;
        filed.entity = Entity::PLACEHOLDER;
        self.entities -= 1;
        Some(std::mem::take(&mut filed.keys))
    }

    /// Keeps the memory of a list [`FiledKeys::take`] gave, for the next
    /// entity filed in `entity`'s slot.
    pub(crate) fn give_back(&mut self, entity: Entity, mut keys: SmallVec<[(K, P); 1]>) {
        keys.clear();
        self.slots[entity.index() as usize].keys = keys;
    }

    /// Takes every entity out, each handed to `each`; slots keep their
    /// memory.
    pub(crate) fn clear(&mut self, each: &mut dyn FnMut(Entity)) {
        for filed in &mut self.slots {
            if !filed.keys.is_empty() {
                each(filed.entity);
                filed.keys.clear();
                filed.entity = Entity::PLACEHOLDER;
            }
        }
        self.entities = 0;
    }

    /// Checks the slots (each filed entity in its own slot, with at least
    /// one key; an empty slot names none) and each pair by `pair`; gives
    /// the filed entities and how many pairs of entity and key there are.
    pub(crate) fn check(
        &self,
        mut pair: impl FnMut(Entity, &K, &P) -> Result<(), String>,
    ) -> Result<(Vec<Entity>, usize), String> {
        let mut held = Vec::new();
        let mut pairs = 0;
        for (slot, filed) in self.slots.iter().enumerate() {
            if filed.keys.is_empty() != filed.entity.is_null() {
                return Err(format!(
                    "slot {slot} has {} keys for entity {}",
                    filed.keys.len(),
                    filed.entity
                ));
            }
            if filed.entity.is_null() {
                continue;
            }
            if filed.entity.index() as usize != slot {
                return Err(format!("{} is filed in slot {slot}", filed.entity));
            }
            for (key, beside) in &filed.keys {
                pair(filed.entity, key, beside)?;
            }
            pairs += filed.keys.len();
            held.push(filed.entity);
        }
        if held.len() != self.entities {
            return Err(format!("{} entities counted for {} filed", self.entities, held.len()));
        }
        Ok((held, pairs))
    }
}
