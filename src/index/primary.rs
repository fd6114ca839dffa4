//! `PrimaryEntityIndex`: key -> the one entity that has it.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use super::KeyHasher;
use super::keyed::{Indexed, KeyTable, Keyed, Table};
use super::keys::{FiledKeys, KeyFn};
use crate::component::Component;
use crate::entity::Entity;
use crate::matcher::Matcher;

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
    keyed: Keyed<K, Holders<K>, ()>,
}

/// A [`PrimaryEntityIndex`]'s table: key -> the entity that holds it.
pub(crate) type Holders<K> = HashMap<K, Entity, KeyHasher>;

impl<K> PrimaryEntityIndex<K>
where
    K: Hash + Eq + Clone + fmt::Debug + Send + Sync + 'static,
{
    /// A primary index named `name` that files each entity of `T`'s group
    /// (`Matcher::all_of::<T>()`, see [`matching`](PrimaryEntityIndex::matching))
    /// under `key(&t)`.
    pub fn new<T: Component>(name: &'static str, key: impl Fn(&T) -> K + Send + Sync + 'static) -> Self {
        PrimaryEntityIndex {
            keyed: Keyed::new(name, KeyFn::single(key)),
        }
    }

    /// A primary index that files each entity under every key `keys(&t)`
    /// gives (aliases, say); each of them must be free.
    pub fn multi<T, I>(name: &'static str, keys: impl Fn(&T) -> I + Send + Sync + 'static) -> Self
    where
        T: Component,
        I: IntoIterator<Item = K>,
    {
        PrimaryEntityIndex {
            keyed: Keyed::new(name, KeyFn::multi(keys)),
        }
    }

    /// Indexes the entities of `matcher`'s group instead of the key
    /// component's own group. The matcher must have the key component in its
    /// AllOf set.
    pub fn matching(self, matcher: Matcher) -> Self {
        PrimaryEntityIndex {
            keyed: self.keyed.matching(matcher),
        }
    }

    /// The entity filed under `key`, if any.
    #[inline]
    pub fn get<Q>(&self, key: &Q) -> Option<Entity>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.keyed.table.get(key).copied()
    }

    /// Whether an entity is filed under `key`.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.keyed.table.contains_key(key)
    }

    /// The keys `entity` is filed under (none if it is not in the index).
    pub fn keys_of(&self, entity: Entity) -> impl Iterator<Item = &K> + '_ {
        self.keyed.keys_of(entity)
    }

    /// Every key with its entity, entity by entity in slot order (so the same
    /// operations give the same order).
    pub fn iter(&self) -> impl Iterator<Item = (&K, Entity)> + '_ {
        self.keyed
            .filed
            .iter()
            .flat_map(|(entity, keys)| keys.iter().map(move |(key, ())| (key, entity)))
    }

    /// Every key, in [`iter`](PrimaryEntityIndex::iter)'s order.
    pub fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.iter().map(|(key, _)| key)
    }
}

impl<K> Table for Holders<K> {
    const KIND: &'static str = "PrimaryEntityIndex";

    fn keys_len(&self) -> usize {
        self.len()
    }
}

impl<K: Hash + Eq + Clone + fmt::Debug> KeyTable<K, ()> for Holders<K> {
    #[inline]
    fn file(&mut self, key: &K, entity: Entity) -> Option<()> {
        match self.get(key) {
            // Checked by `clash`, with these very keys, before the change;
            // the key stays with its holder.
            Some(&holder) if holder != entity => {
                debug_assert!(false, "{key:?} is {holder}'s, not {entity}'s");
                None
            }
            _ => {
                self.insert(key.clone(), entity);
                Some(())
            }
        }
    }

    fn pull(&mut self, _filed: &mut FiledKeys<K, ()>, key: &K, (): ()) {
        self.remove(key);
    }

    #[inline]
    fn clash(&self, keys: &[K], entity: Option<Entity>) -> Option<(String, Entity)> {
        keys.iter().find_map(|key| match self.get(key) {
            Some(&holder) if Some(holder) != entity => Some((format!("{key:?}"), holder)),
            _ => None,
        })
    }

    fn clear(&mut self) {
        HashMap::clear(self);
    }

    fn check(&self, filed: &FiledKeys<K, ()>) -> Result<Vec<Entity>, String> {
        let (held, keys) = filed.check(|entity, key, ()| match self.get(key) {
            Some(&holder) if holder == entity => Ok(()),
            other => Err(format!("key {key:?} of {entity} maps to {other:?}")),
        })?;
        if keys != self.len() {
            return Err(format!("{} keys mapped for {keys} filed", self.len()));
        }
        Ok(held)
    }
}

impl<K> Indexed for PrimaryEntityIndex<K>
where
    K: Hash + Eq + Clone + fmt::Debug + Send + Sync + 'static,
{
    type Key = K;
    type Beside = ();
    type Table = Holders<K>;

    fn keyed(&self) -> &Keyed<K, Holders<K>, ()> {
        &self.keyed
    }

    fn keyed_mut(&mut self) -> &mut Keyed<K, Holders<K>, ()> {
        &mut self.keyed
    }
}

impl<K> fmt::Display for PrimaryEntityIndex<K> {
    /// `PrimaryEntityIndex "Name" on AllOf(Name): 3 keys, 3 entities` (and
    /// `, inactive` when deactivated).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.keyed.describe(f)
    }
}

impl<K> fmt::Debug for PrimaryEntityIndex<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.keyed.debug(f)
    }
}
