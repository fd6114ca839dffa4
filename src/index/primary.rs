//! `PrimaryEntityIndex`: key -> the one entity that has it.

use std::any::Any;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use super::keys::{FiledKeys, KeyFn, Prepared};
use super::sealed::{Filing, IndexStore};
use super::{IndexCore, KeyHasher, describe};
use crate::component::Component;
use crate::entity::Entity;
use crate::matcher::Matcher;
use crate::storage::ComponentRef;

/// Finds the one entity with a key: the entity with a given name, network
/// id or account. Key -> entity, in O(1).
///
/// Like [`EntityIndex`](crate::EntityIndex), but each key belongs to at most
/// one entity. A change that would give a second entity a key in use
/// ([`add`](crate::Context::add), [`replace`](crate::Context::replace),
/// [`create_entity_with`](crate::Context::create_entity_with), a removal
/// that makes an entity join the index's group, ...) is refused with
/// [`Error::DuplicatePrimaryKey`](crate::Error::DuplicatePrimaryKey), which
/// names the key and both entities, and **is not applied**: the context is
/// as it was before the call (the value given is dropped), and no event
/// fires. See the [`index`](crate::index) module for the rules all indices
/// share.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Clone, Debug, PartialEq)] struct Name(String);
/// reactecs::component!(Name);
///
/// let mut game = Context::new();
/// let names = game.add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0.clone()))?;
/// let hero = game.create_entity_with(Name("hero".into()))?;
/// assert_eq!(game.index(names)?.get("hero"), Some(hero));
/// assert_eq!(game.index(names)?.get("nobody"), None);
///
/// // A second "hero" is refused, and nothing changes.
/// let other = game.create_entity();
/// let err = game.add(other, Name("hero".into())).unwrap_err();
/// assert!(matches!(err, Error::DuplicatePrimaryKey { holder, entity: Some(e), .. } if holder == hero && e == other));
/// assert!(!game.has::<Name>(other));
/// assert_eq!(game.index(names)?.get("hero"), Some(hero));
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct PrimaryEntityIndex<K> {
    core: IndexCore,
    keys: KeyFn<K>,
    map: HashMap<K, Entity, KeyHasher>,
    /// The keys each entity is filed under.
    filed: FiledKeys<K, ()>,
    /// The keys made (and checked) for the entity a change is about.
    prepared: Prepared<K>,
}

impl<K> PrimaryEntityIndex<K>
where
    K: Hash + Eq + Clone + fmt::Debug + Send + Sync + 'static,
{
    /// A primary index named `name` that files each entity of `T`'s group
    /// (`Matcher::all_of::<T>()`, see [`matching`](PrimaryEntityIndex::matching))
    /// under `key(&t)`.
    pub fn new<T: Component>(name: &'static str, key: impl Fn(&T) -> K + Send + Sync + 'static) -> Self {
        Self::with_keys(name, KeyFn::single(key))
    }

    /// A primary index that files each entity under every key `keys(&t)`
    /// gives (aliases, say); each of them must be free.
    pub fn multi<T, I>(name: &'static str, keys: impl Fn(&T) -> I + Send + Sync + 'static) -> Self
    where
        T: Component,
        I: IntoIterator<Item = K>,
    {
        Self::with_keys(name, KeyFn::multi(keys))
    }

    fn with_keys(name: &'static str, keys: KeyFn<K>) -> Self {
        PrimaryEntityIndex {
            core: IndexCore::new(name, keys.info()),
            keys,
            map: HashMap::default(),
            filed: FiledKeys::default(),
            prepared: Prepared::default(),
        }
    }

    /// Indexes the entities of `matcher`'s group instead of the key
    /// component's own group. The matcher must have the key component in its
    /// AllOf set.
    pub fn matching(mut self, matcher: Matcher) -> Self {
        self.core.matcher = matcher;
        self
    }

    /// The entity filed under `key`, if any.
    #[inline]
    pub fn get<Q>(&self, key: &Q) -> Option<Entity>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key).copied()
    }

    /// Whether an entity is filed under `key`.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.contains_key(key)
    }

    /// The keys `entity` is filed under (none if it is not in the index).
    pub fn keys_of(&self, entity: Entity) -> impl Iterator<Item = &K> + '_ {
        self.filed.of(entity).iter().map(|(key, ())| key)
    }

    /// Every key with its entity, entity by entity in slot order (so the same
    /// operations give the same order).
    pub fn iter(&self) -> impl Iterator<Item = (&K, Entity)> + '_ {
        self.filed
            .iter()
            .flat_map(|(entity, keys)| keys.iter().map(move |(key, ())| (key, entity)))
    }

    /// Every key, in [`iter`](PrimaryEntityIndex::iter)'s order.
    pub fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.iter().map(|(key, _)| key)
    }

    /// Files `entity` (not filed yet) under `keys` (drained); true if there
    /// was at least one.
    fn file_keys(&mut self, entity: Entity, keys: &mut Vec<K>) -> bool {
        let mut filed = self.filed.start(entity);
        for key in keys.drain(..) {
            match self.map.get(&key) {
                // Checked by `prepare`, with these very keys, before the
                // change; the key stays with its holder.
                Some(&holder) if holder != entity => debug_assert!(false, "{key:?} is {holder}'s, not {entity}'s"),
                _ => {
                    self.map.insert(key.clone(), entity);
                    filed.push((key, ()));
                }
            }
        }
        self.filed.file(entity, filed)
    }
}

impl<K> IndexStore for PrimaryEntityIndex<K>
where
    K: Hash + Eq + Clone + fmt::Debug + Send + Sync + 'static,
{
    fn core(&self) -> &IndexCore {
        &self.core
    }

    fn core_mut(&mut self) -> &mut IndexCore {
        &mut self.core
    }

    fn kind(&self) -> &'static str {
        "PrimaryEntityIndex"
    }

    fn prepare(&mut self, entity: Option<Entity>, value: ComponentRef<'_>) -> Result<(), (String, Entity)> {
        let keys = self.prepared.make(&self.keys, value);
        let clash = keys.iter().find_map(|key| match self.map.get(key) {
            Some(&holder) if Some(holder) != entity => Some((format!("{key:?}"), holder)),
            _ => None,
        });
        if clash.is_some() {
            self.prepared.cancel();
        }
        clash.map_or(Ok(()), Err)
    }

    fn file_prepared(&mut self, entity: Entity) -> bool {
        let mut keys = self.prepared.take();
        let held = self.file_keys(entity, &mut keys);
        self.prepared.give_back(keys);
        held
    }

    fn unfile(&mut self, entity: Entity) -> bool {
        let Some(mut filed) = self.filed.take(entity) else {
            return false;
        };
        for (key, ()) in filed.drain(..) {
            self.map.remove(&key);
        }
        self.filed.give_back(entity, filed);
        true
    }

    fn refile_prepared(&mut self, entity: Entity) -> Filing {
        let mut keys = self.prepared.take();
        let filing = if self.filed.unchanged(entity, &keys) {
            Filing::Unchanged
        } else {
            let was = self.unfile(entity);
            Filing::of(was, self.file_keys(entity, &mut keys))
        };
        self.prepared.give_back(keys);
        filing
    }

    fn holds(&self, entity: Entity) -> bool {
        self.filed.holds(entity)
    }

    fn clear(&mut self, each: &mut dyn FnMut(Entity)) {
        self.filed.clear(each);
        self.map.clear();
    }

    fn keys_len(&self) -> usize {
        self.map.len()
    }

    fn held_len(&self) -> usize {
        self.filed.len()
    }

    fn check(&self) -> Result<Vec<Entity>, String> {
        let (held, keys) = self.filed.check(|entity, key, ()| match self.map.get(key) {
            Some(&holder) if holder == entity => Ok(()),
            other => Err(format!("key {key:?} of {entity} maps to {other:?}")),
        })?;
        if keys != self.map.len() {
            return Err(format!("{} keys mapped for {keys} filed", self.map.len()));
        }
        Ok(held)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl<K> fmt::Display for PrimaryEntityIndex<K> {
    /// `PrimaryEntityIndex "Name" on AllOf(Name): 3 keys, 3 entities` (and
    /// `, inactive` when deactivated).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        describe(f, "PrimaryEntityIndex", &self.core, self.map.len(), self.filed.len())
    }
}

impl<K> fmt::Debug for PrimaryEntityIndex<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core
            .debug(f, "PrimaryEntityIndex")
            .field("keys", &self.map.len())
            .field("entities", &self.filed.len())
            .finish()
    }
}
