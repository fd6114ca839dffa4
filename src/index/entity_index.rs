//! `EntityIndex`: key -> the entities filed under it.

use std::borrow::Borrow;
use std::fmt;
use std::hash::Hash;

use super::KeyHasher;
use super::keyed::{Indexed, KeyTable, Keyed, Table};
use super::keys::{FiledKeys, KeyFn};
use crate::component::Component;
use crate::entity::Entity;
use crate::matcher::Matcher;
use indexmap::IndexMap;

/// Finds entities by a key made from one of their components: all entities
/// at a grid cell, all units of a team. Key -> entities, in O(1), without
/// allocating.
///
/// Build one with [`EntityIndex::new`](crate::EntityIndex::new) (one key per entity) or
/// [`EntityIndex::multi`](crate::EntityIndex::multi) (several keys per entity, e.g. every cell a
/// bounding box covers), give it to [`Context::add_index`](crate::Context::add_index), and look up with
/// [`get`](EntityIndex::get) through [`Context::index`](crate::Context::index).
/// The context keeps it current: an entity that
/// joins the index's group is filed under its keys, one that leaves it
/// (removal, destroy) is taken out, and a [`replace`](crate::Context::replace) of
/// the key component moves it from the old keys to the new ones (nothing
/// happens when the keys are unchanged). See the [`index`](crate::index)
/// module for the rules all indices share.
///
/// The entities of one key are in the order they were filed, except that
/// taking one out moves the last-filed entity of that key into its place.
/// Keys are in the order they were first used, with the same exception.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Clone, Copy, Debug, PartialEq)] struct Position { x: f32, y: f32 }
/// reactecs::component!(Position);
///
/// fn cell(p: &Position) -> (i32, i32) { ((p.x / 10.0).floor() as i32, (p.y / 10.0).floor() as i32) }
///
/// let mut game = Context::new();
/// let a = game.create_entity_with(Position { x: 1.0, y: 1.0 })?;
/// let cells = game.add_index(EntityIndex::new("Cell", cell))?; // indexes `a` now
/// let b = game.create_entity_with(Position { x: 5.0, y: 2.0 })?;
///
/// assert_eq!(game.index(cells)?.get(&(0, 0)), [a, b]);
/// game.replace(a, Position { x: 15.0, y: 1.0 })?;        // moves to cell (1, 0)
/// assert_eq!(game.index(cells)?.get(&(0, 0)), [b]);
/// assert_eq!(game.index(cells)?.get(&(1, 0)), [a]);
/// assert!(game.index(cells)?.get(&(7, 7)).is_empty()); // a missing key: empty
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct EntityIndex<K> {
    keyed: Keyed<K, Lists<K>, Spot>,
}

/// An [`EntityIndex`]'s table: key -> its entities.
pub(crate) struct Lists<K> {
    /// Key -> its entities (never empty: an emptied key is removed).
    map: IndexMap<K, Vec<Entity>, KeyHasher>,
    /// Emptied entity lists, kept so that churn does not allocate.
    spare: Vec<Vec<Entity>>,
}

impl<K> Default for Lists<K> {
    fn default() -> Self {
        Lists {
            map: IndexMap::default(),
            spare: Vec::new(),
        }
    }
}

/// Where a filed entity is under one of its keys: its position in the
/// key's list, and where the key was in the map when the entity was filed
/// (a hint: right unless an emptied key was taken out of the map since,
/// moving another into its place; a wrong one costs a hash lookup).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Spot {
    at: u32,
    key: u32,
}

impl<K> EntityIndex<K>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    /// An index named `name` that files each entity of `T`'s group
    /// (`Matcher::all_of::<T>()`, see [`matching`](EntityIndex::matching))
    /// under `key(&t)`.
    pub fn new<T: Component>(name: &'static str, key: impl Fn(&T) -> K + Send + Sync + 'static) -> Self {
        EntityIndex {
            keyed: Keyed::new(name, KeyFn::single(key)),
        }
    }

    /// An index that files each entity under every key `keys(&t)` gives
    /// (none, one or several; a repeated key counts once). For example the
    /// grid cells a bounding box covers.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// struct Span { from: i32, to: i32 }   // covers cells from..=to
    /// reactecs::component!(Span);
    ///
    /// let mut game = Context::new();
    /// let cells = game.add_index(EntityIndex::multi("Cells", |s: &Span| s.from..=s.to))?;
    /// let wide = game.create_entity_with(Span { from: 0, to: 2 })?;
    /// let narrow = game.create_entity_with(Span { from: 2, to: 2 })?;
    /// assert_eq!(game.index(cells)?.get(&1), [wide]);
    /// assert_eq!(game.index(cells)?.get(&2), [wide, narrow]);
    /// assert_eq!(game.index(cells)?.entity_count(), 2);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn multi<T, I>(name: &'static str, keys: impl Fn(&T) -> I + Send + Sync + 'static) -> Self
    where
        T: Component,
        I: IntoIterator<Item = K>,
    {
        EntityIndex {
            keyed: Keyed::new(name, KeyFn::multi(keys)),
        }
    }

    /// Indexes the entities of `matcher`'s group instead of the key
    /// component's own group, e.g. `Matcher::all_of::<(Position, Enemy)>()`
    /// for enemies only. The matcher must have the key component in its
    /// AllOf set ([`Error::IndexNotKeyed`](crate::Error::IndexNotKeyed)
    /// otherwise, from [`Context::add_index`](crate::Context::add_index)).
    pub fn matching(self, matcher: Matcher) -> Self {
        EntityIndex {
            keyed: self.keyed.matching(matcher),
        }
    }

    /// The entities filed under `key`, in filing order (empty when none).
    #[inline]
    pub fn get<Q>(&self, key: &Q) -> &[Entity]
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.keyed.table.map.get(key).map_or(&[], Vec::as_slice)
    }

    /// Whether any entity is filed under `key`.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.keyed.table.map.contains_key(key)
    }

    /// The keys `entity` is filed under (none if it is not in the index).
    pub fn keys_of(&self, entity: Entity) -> impl Iterator<Item = &K> + '_ {
        self.keyed.keys_of(entity)
    }

    /// Every key with its entities.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &[Entity])> + '_ {
        self.keyed
            .table
            .map
            .iter()
            .map(|(key, entities)| (key, entities.as_slice()))
    }

    /// Every key.
    pub fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.keyed.table.map.keys()
    }
}

impl<K: Hash + Eq + Clone> Lists<K> {
    /// Adds `entity` to `key`'s list (the entity is being filed).
    #[inline]
    fn push(&mut self, key: K, entity: Entity) -> Spot {
        let spare = &mut self.spare;
        let entry = self.map.entry(key);
        // A position past `u32::MAX` is no hint: the lookup falls back to the hash.
        let key = u32::try_from(entry.index()).unwrap_or(u32::MAX);
        let list = entry.or_insert_with(|| spare.pop().unwrap_or_default());
        list.push(entity);
        let at = u32::try_from(list.len() - 1).expect("fewer than 2^32 entities per key: entity slots are u32s");
        Spot { at, key }
    }

    /// Moves `entity` from the one key it is filed under to `new`, another
    /// single key, in place: the same as unfiling and filing it again (its
    /// old list mended the same way, the entity last in its new one),
    /// without either's bookkeeping.
    fn move_key(&mut self, filed: &mut FiledKeys<K, Spot>, entity: Entity, new: K) {
        let Some(pair) = filed.single_mut(entity) else {
            return;
        };
        let (old, spot) = std::mem::replace(pair, (new.clone(), Spot::default()));
        self.pull(filed, &old, spot);
        let spot = self.push(new, entity);
        if let Some(pair) = filed.single_mut(entity) {
            pair.1 = spot;
        }
    }
}

impl<K> Table for Lists<K> {
    const KIND: &'static str = "EntityIndex";

    fn keys_len(&self) -> usize {
        self.map.len()
    }
}

impl<K: Hash + Eq + Clone> KeyTable<K, Spot> for Lists<K> {
    #[inline]
    fn file(&mut self, key: &K, entity: Entity) -> Option<Spot> {
        Some(self.push(key.clone(), entity))
    }

    /// Takes the entity at `spot` out of `key`'s list, mending the position
    /// of the entity moved into its place. The key is found at the spot's
    /// hint when it is still there, without hashing it.
    fn pull(&mut self, filed: &mut FiledKeys<K, Spot>, key: &K, spot: Spot) {
        let hinted = self.map.get_index(spot.key as usize).is_some_and(|(k, _)| k == key);
        let Some(position) = (if hinted {
            Some(spot.key as usize)
        } else {
            self.map.get_index_of(key)
        }) else {
            debug_assert!(false, "a filed key has a list");
            return;
        };
        let Some((_, list)) = self.map.get_index_mut(position) else {
            return;
        };
        list.swap_remove(spot.at as usize);
        if let Some(&moved) = list.get(spot.at as usize) {
            if let Some(beside) = filed.beside_mut(moved, key) {
                beside.at = spot.at;
            }
        } else if list.is_empty()
            && let Some((_, empty)) = self.map.swap_remove_index(position)
        {
            self.spare.push(empty);
        }
    }

    /// One key before and after (the common case): moved in place.
    #[inline]
    fn refile_in_place(&mut self, filed: &mut FiledKeys<K, Spot>, entity: Entity, keys: &mut Vec<K>) -> bool {
        let unchanged = match (keys.as_slice(), filed.single_mut(entity)) {
            ([new], Some((old, _))) => old == new,
            _ => return false,
        };
        if !unchanged && let Some(new) = keys.pop() {
            self.move_key(filed, entity, new);
        }
        true
    }

    fn clear(&mut self) {
        for (_, mut list) in self.map.drain(..) {
            list.clear();
            self.spare.push(list);
        }
    }

    fn check(&self, filed: &FiledKeys<K, Spot>) -> Result<Vec<Entity>, String> {
        let (held, pairs) = filed.check(|entity, key, &Spot { at, .. }| {
            if self.map.get(key).and_then(|list| list.get(at as usize)) == Some(&entity) {
                Ok(())
            } else {
                Err(format!(
                    "{entity}'s position {at} in one of its keys holds another entity"
                ))
            }
        })?;
        let listed: usize = self.map.values().map(Vec::len).sum();
        if listed != pairs || self.map.values().any(Vec::is_empty) {
            return Err(format!("{listed} entries for {pairs} filed keys"));
        }
        Ok(held)
    }
}

impl<K> Indexed for EntityIndex<K>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    type Key = K;
    type Beside = Spot;
    type Table = Lists<K>;

    fn keyed(&self) -> &Keyed<K, Lists<K>, Spot> {
        &self.keyed
    }

    fn keyed_mut(&mut self) -> &mut Keyed<K, Lists<K>, Spot> {
        &mut self.keyed
    }
}

impl<K> fmt::Display for EntityIndex<K> {
    /// `EntityIndex "Cell" on AllOf(Position): 12 keys, 40 entities` (and
    /// `, inactive` when deactivated).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.keyed.describe(f)
    }
}

impl<K> fmt::Debug for EntityIndex<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.keyed.debug(f)
    }
}
