//! `Keyed`: the part both kinds of index share, written once. An index is
//! its [`IndexCore`], its key function, the keys each entity is filed
//! under and the keys prepared for the change under way, all kept here,
//! around a table from keys to entities, which is what differs: an
//! [`EntityIndex`](crate::EntityIndex) lists the entities of each key, a
//! [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) maps a key to its one
//! entity and refuses a second. The [`Table`] and [`KeyTable`] traits say
//! how a key is counted, filed, pulled and checked in each (and, for a
//! primary index, refused); `Keyed` does the rest (the
//! prepare / file / refile / unfile dance the context drives), and every
//! index type gets [`IndexStore`] by handing out its `Keyed`
//! ([`Indexed`]). All of it is static dispatch: each index type compiles
//! to its own code, as if written by hand.
//!
//! What each index type still writes for itself, and why: its public
//! constructors and lookups (`new`, `multi`, `matching`, `get`, ...),
//! documented and tested per type, each a line that hands over to `Keyed`
//! or reads its own table; and the few lines of its `Indexed`, `Display`
//! and `Debug` impls, which a blanket impl cannot give (`Display` and
//! `Debug` are not this crate's traits, and ask nothing of the key type).

use std::any::Any;
use std::fmt;

use super::keys::{FiledKeys, KeyFn, Prepared};
use super::sealed::{Filing, IndexCore, IndexStore};
use crate::entity::Entity;
use crate::matcher::Matcher;
use crate::storage::ComponentRef;

/// The table of one kind of index, from keys to entities: what it is
/// called and how many keys it has, which need nothing of the key type (so
/// that `Display` and `Debug` of an index ask nothing of it either).
pub(crate) trait Table {
    /// `EntityIndex` or `PrimaryEntityIndex`.
    const KIND: &'static str;

    /// How many keys have an entity.
    fn keys_len(&self) -> usize;
}

/// How a table files and takes out entities by key `K`, keeping `P` beside
/// each key of a filed entity (in the index's [`FiledKeys`]).
pub(crate) trait KeyTable<K, P>: Table + Default {
    /// Files `entity` under `key`: what to keep beside the key, or `None`
    /// if the table refuses it (a bug: `clash` was asked first).
    fn file(&mut self, key: &K, entity: Entity) -> Option<P>;

    /// Takes `entity`'s place under `key` (`beside` is what was kept beside
    /// it) out of the table; `filed` holds the other entities' keys, to
    /// mend what is kept beside them.
    fn pull(&mut self, filed: &mut FiledKeys<K, P>, key: &K, beside: P);

    /// The first of `keys` that another entity than `entity` (`None`: one
    /// being created) holds and will not share, printed, with its holder.
    fn clash(&self, _keys: &[K], _entity: Option<Entity>) -> Option<(String, Entity)> {
        None
    }

    /// Moves `entity` to `keys` in place if the table can (true; `keys`
    /// may be drained), without unfiling and filing it again.
    fn refile_in_place(&mut self, _filed: &mut FiledKeys<K, P>, _entity: Entity, _keys: &mut Vec<K>) -> bool {
        false
    }

    /// Takes every key out (the entities are taken out of `filed` first).
    fn clear(&mut self);

    /// Checks the table against `filed` (and `filed` itself); gives the
    /// entities held.
    fn check(&self, filed: &FiledKeys<K, P>) -> Result<Vec<Entity>, String>;
}

/// An index: its core, its key function over one component type, its
/// table `T`, the keys each entity is filed under (with `P` beside each),
/// and the keys made for the entity a change is about.
pub(crate) struct Keyed<K, T, P> {
    pub(crate) core: IndexCore,
    keys: KeyFn<K>,
    /// Key -> its entity or entities.
    pub(crate) table: T,
    /// The keys each entity is filed under, with what the table keeps
    /// beside each.
    pub(crate) filed: FiledKeys<K, P>,
    /// The keys made (and, for a primary index, checked) for the entity a
    /// change is about.
    prepared: Prepared<K>,
}

impl<K: 'static, T: Default, P> Keyed<K, T, P> {
    /// An index named `name` keyed by `keys`, over the key component's own
    /// group until told otherwise; empty.
    pub(crate) fn new(name: &'static str, keys: KeyFn<K>) -> Self {
        Keyed {
            core: IndexCore::new(name, keys.info()),
            keys,
            table: T::default(),
            filed: FiledKeys::default(),
            prepared: Prepared::default(),
        }
    }
}

impl<K, T, P> Keyed<K, T, P> {
    /// The same index over `matcher`'s group.
    pub(crate) fn matching(mut self, matcher: Matcher) -> Self {
        self.core.matcher = matcher;
        self
    }
}

impl<K: PartialEq, T, P> Keyed<K, T, P> {
    /// The keys `entity` is filed under (none if it is not in the index).
    pub(crate) fn keys_of(&self, entity: Entity) -> impl Iterator<Item = &K> + '_ {
        self.filed.of(entity).iter().map(|(key, _)| key)
    }
}

impl<K, T: Table, P> Keyed<K, T, P> {
    /// `EntityIndex "Cell" on AllOf(Position): 12 keys, 40 entities[, inactive]`.
    pub(crate) fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
        let (keys, entities) = (self.table.keys_len(), self.filed.len());
        write!(
            f,
            "{} \"{}\" on {}: {keys} {}, {entities} {}",
            T::KIND,
            self.core.name,
            self.core.matcher,
            plural(keys, "key", "keys"),
            plural(entities, "entity", "entities")
        )?;
        if !self.core.active {
            write!(f, ", inactive")?;
        }
        Ok(())
    }

    /// The index's `Debug`: name, matcher, whether active, counts.
    pub(crate) fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(T::KIND)
            .field("name", &self.core.name)
            .field("matcher", &format_args!("{}", self.core.matcher))
            .field("active", &self.core.active)
            .field("keys", &self.table.keys_len())
            .field("entities", &self.filed.len())
            .finish()
    }
}

impl<K, T, P> Keyed<K, T, P>
where
    K: Eq + 'static,
    T: KeyTable<K, P>,
{
    /// Makes the keys of `value` for `entity`, to file next; a key the
    /// table refuses (a primary key another entity holds) is refused
    /// before anything changes, and nothing is prepared.
    #[inline]
    fn prepare(&mut self, entity: Option<Entity>, value: ComponentRef<'_>) -> Result<(), (String, Entity)> {
        let keys = self.prepared.make(&self.keys, value);
        let clash = self.table.clash(keys, entity);
        if clash.is_some() {
            self.prepared.cancel();
        }
        clash.map_or(Ok(()), Err)
    }

    /// Files `entity` (not filed yet) under `keys` (drained); true if there
    /// was at least one.
    fn file_keys(&mut self, entity: Entity, keys: &mut Vec<K>) -> bool {
        let mut filed = self.filed.start(entity);
        for key in keys.drain(..) {
            if let Some(beside) = self.table.file(&key, entity) {
                filed.push((key, beside));
            }
        }
        self.filed.file(entity, filed)
    }

    #[inline]
    fn file_prepared(&mut self, entity: Entity) -> bool {
        let mut keys = self.prepared.take();
        let held = self.file_keys(entity, &mut keys);
        self.prepared.give_back(keys);
        held
    }

    #[inline]
    fn unfile(&mut self, entity: Entity) -> bool {
        let Some(mut filed) = self.filed.take(entity) else {
            return false;
        };
        for (key, beside) in filed.drain(..) {
            self.table.pull(&mut self.filed, &key, beside);
        }
        self.filed.give_back(entity, filed);
        true
    }

    #[inline]
    fn refile_prepared(&mut self, entity: Entity) -> Filing {
        let mut keys = self.prepared.take();
        let filing =
            if self.table.refile_in_place(&mut self.filed, entity, &mut keys) || self.filed.unchanged(entity, &keys) {
                Filing::Unchanged
            } else {
                let was = self.unfile(entity);
                Filing::of(was, self.file_keys(entity, &mut keys))
            };
        self.prepared.give_back(keys);
        filing
    }

    fn clear(&mut self, each: &mut dyn FnMut(Entity)) {
        self.filed.clear(each);
        self.table.clear();
    }
}

/// An index type made of a [`Keyed`], which it hands out: that is all it
/// takes to be an [`IndexStore`].
pub(crate) trait Indexed: Any + Send + Sync {
    /// The key type.
    type Key: Eq + 'static;
    /// What is kept beside each key of a filed entity.
    type Beside;
    /// The table from keys to entities.
    type Table: KeyTable<Self::Key, Self::Beside>;

    fn keyed(&self) -> &Keyed<Self::Key, Self::Table, Self::Beside>;
    fn keyed_mut(&mut self) -> &mut Keyed<Self::Key, Self::Table, Self::Beside>;
}

impl<I: Indexed> IndexStore for I {
    fn core(&self) -> &IndexCore {
        &self.keyed().core
    }

    fn core_mut(&mut self) -> &mut IndexCore {
        &mut self.keyed_mut().core
    }

    fn kind(&self) -> &'static str {
        I::Table::KIND
    }

    fn prepare(&mut self, entity: Option<Entity>, value: ComponentRef<'_>) -> Result<(), (String, Entity)> {
        self.keyed_mut().prepare(entity, value)
    }

    fn file_prepared(&mut self, entity: Entity) -> bool {
        self.keyed_mut().file_prepared(entity)
    }

    fn refile_prepared(&mut self, entity: Entity) -> Filing {
        self.keyed_mut().refile_prepared(entity)
    }

    fn unfile(&mut self, entity: Entity) -> bool {
        self.keyed_mut().unfile(entity)
    }

    fn holds(&self, entity: Entity) -> bool {
        self.keyed().filed.holds(entity)
    }

    fn clear(&mut self, each: &mut dyn FnMut(Entity)) {
        self.keyed_mut().clear(each);
    }

    fn keys_len(&self) -> usize {
        self.keyed().table.keys_len()
    }

    fn held_len(&self) -> usize {
        self.keyed().filed.len()
    }

    fn check(&self) -> Result<Vec<Entity>, String> {
        let keyed = self.keyed();
        keyed.table.check(&keyed.filed)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
