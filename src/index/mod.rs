//! Entity indices: find entities by a component value in O(1).
//!
//! On [`Context`](crate::Context): [`add_index`](crate::Context::add_index),
//! [`index`](crate::Context::index) (the index, to look keys up),
//! [`index_id`](crate::Context::index_id) (by name),
//! [`indices`](crate::Context::indices), and
//! [`index_mut`](crate::Context::index_mut), the [`IndexMut`](crate::IndexMut)
//! handle that activates, deactivates or removes one. The context's side
//! is in `context/index.rs`.
//!
//! - [`EntityIndex`]: key -> entities (all entities at a grid cell).
//! - [`PrimaryEntityIndex`]: key -> one entity (the entity with a name, a
//!   network id); a second entity with a key in use is an
//!   [`Error::DuplicatePrimaryKey`](crate::Error::DuplicatePrimaryKey).
//!
//! An index is made with a name and a key function over one component type
//! `T` (one key, or several with `multi`), and covers the entities of a
//! group: by default `Matcher::all_of::<T>()`, or any matcher whose AllOf
//! set has `T` (`.matching(..)`). [`Context::add_index`](crate::Context::add_index) registers it and
//! files the group's current entities; from then on the context keeps it
//! current, as part of every change (before any event fires):
//!
//! | change | index |
//! |---|---|
//! | an entity joins the group (create, add, remove) | filed under its keys |
//! | an entity leaves the group (remove, destroy, destroy_all, reset) | taken out of every key |
//! | `replace` / `modify*` of `T` on a member | moved from the old keys to the new ones; nothing when they are equal |
//! | a write through `get_mut` / `EntityMut::get_mut` / `EntityMut::get_mut_untracked` of `T` on a member | moved to the new keys when the [`Mut`](crate::Mut) drops |
//! | `replace` of another component | nothing |
//! | `query_mut` or `EntityMut::query` naming `&mut T` | refused with [`Error::KeyedWrite`](crate::Error::KeyedWrite): nothing is lent |
//!
//! So an index is current whenever the context can be read. An index
//! remembers the keys it filed each entity under (made from the value the
//! entity had then), so taking an entity out never calls the key function
//! again.
//!
//! A write through a `Mut` has happened by the time the index hears of it,
//! so a primary key another entity holds cannot be refused as `replace`
//! refuses it: the holder keeps the key, the written entity leaves the
//! index (until a later change gives it a free key), and the next read of
//! the index ([`Context::index`](crate::Context::index) and the lookups
//! through it) reports
//! [`Error::PrimaryKeyConflict`](crate::Error::PrimaryKeyConflict), naming
//! both, once; the read after it answers normally. A key function that
//! panics on such a write takes the entity out of that index, and the
//! panic goes on.
//!
//! An index retains (AERC) each entity it holds and releases it when the
//! entity leaves. These retains count in
//! [`Aerc::retain_count`](crate::Aerc::retain_count), but they never keep a destroyed entity, since a
//! destroyed entity has left every group; so [`Context::reset`](crate::Context::reset) does not count
//! them as retains that forbid a reset.
//!
//! Indices are registered under a name unique in their context and found
//! again with the typed [`IndexId`] that `add_index` returns
//! ([`Context::index`](crate::Context::index)), or by name
//! (`index(index_id(name)?)`: [`Context::index_id`](crate::Context::index_id)).
//! [`Context::index_mut`](crate::Context::index_mut) gives the handle that
//! acts on one ([`IndexMut`](crate::IndexMut)): its
//! [`deactivate`](crate::IndexMut::deactivate) empties the index and releases what it held;
//! [`activate`](crate::IndexMut::activate) files the group's current entities again;
//! [`remove`](crate::IndexMut::remove) takes it away.
//!
//! Keys are hashed with [foldhash](https://docs.rs/foldhash) (the default
//! hasher of `hashbrown`): seeded per index, so not predictable from outside,
//! and several times faster than the standard library's SipHash on small
//! keys. Lookups do not allocate.
//!
//! A key function is user code; it sees only the component value, and is
//! called once per change, before anything changes (the primary-key check
//! uses the keys it made, and filing uses them again once the change is
//! done). So if it panics, nothing has changed (the value given is dropped;
//! in [`Context::modify_each`](crate::Context::modify_each), that entity gets its old value back), and the
//! panic goes on. A key function should give the same keys for equal values;
//! the key type's `Hash`, `Eq` and `Clone` must not panic (as for any
//! `HashMap` key): if they do, an index may be left wrong.
//!
//! # Example
//! ```
//! use reactecs::prelude::*;
//! #[derive(Clone, Debug, PartialEq)] struct NetId(u64);
//! #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)] struct Cell(i32, i32);
//! reactecs::component!(NetId, Cell);
//!
//! let mut game = Context::with_name("Game");
//! let by_net = game.add_index(PrimaryEntityIndex::new("NetId", |id: &NetId| id.0))?;
//! let by_cell = game.add_index(EntityIndex::new("Cell", |c: &Cell| *c))?;
//!
//! let a = game.create_entity_with((NetId(7), Cell(0, 0)))?;
//! let b = game.create_entity_with((NetId(8), Cell(0, 0)))?;
//! assert_eq!(game.index(by_net)?.get(&8), Some(b));
//! assert_eq!(game.index(by_cell)?.get(&Cell(0, 0)), [a, b]);
//!
//! // Found again by name, with its type:
//! let cells = game.index(game.index_id::<EntityIndex<Cell>>("Cell")?)?;
//! assert_eq!(cells.to_string(), r#"EntityIndex "Cell" on AllOf(Cell): 1 key, 2 entities"#);
//!
//! game.destroy_entity(a)?;
//! assert_eq!(game.index(by_cell)?.get(&Cell(0, 0)), [b]);
//! assert_eq!(game.index(by_net)?.get(&7), None);
//! # Ok::<(), reactecs::Error>(())
//! ```

use std::fmt;
use std::hash::Hash;

use crate::group::GroupId;
use crate::id::ComponentId;
use crate::matcher::Matcher;

mod data;
mod entity_index;
mod keyed;
mod keys;
mod primary;

pub use crate::id::IndexId;
pub(crate) use data::{Indices, fill};
pub use entity_index::EntityIndex;
pub use primary::PrimaryEntityIndex;

/// What the context needs of an index. Sealed: only this crate's indices
/// implement it.
pub(crate) mod sealed {
    use std::any::Any;

    use crate::entity::Entity;
    use crate::group::GroupId;
    use crate::matcher::Matcher;
    use crate::storage::{ComponentInfo, ComponentRef};

    /// What every index has besides its keys.
    pub struct IndexCore {
        pub(crate) name: &'static str,
        pub(crate) matcher: Matcher,
        pub(crate) component: &'static ComponentInfo,
        pub(crate) group: Option<GroupId>,
        pub(crate) active: bool,
    }

    impl IndexCore {
        /// An index named `name` keyed on `component`, over that
        /// component's own group until told otherwise.
        pub(crate) fn new(name: &'static str, component: &'static ComponentInfo) -> Self {
            IndexCore {
                name,
                matcher: Matcher::all_of_ids([component.id()]),
                component,
                group: None,
                active: true,
            }
        }
    }

    /// How re-filing an entity changed whether the index holds it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Filing {
        /// Held before and after, or neither.
        Unchanged,
        /// Now held (it has keys again): retain it.
        Filed,
        /// No longer held (no keys left): release it.
        Unfiled,
    }

    impl Filing {
        pub(crate) fn of(was: bool, now: bool) -> Self {
            match (was, now) {
                (false, true) => Filing::Filed,
                (true, false) => Filing::Unfiled,
                _ => Filing::Unchanged,
            }
        }
    }

    /// An index as the context drives it. A change that files an entity
    /// first `prepare`s every index concerned (the one call of the user's
    /// key function, before anything changes), then, once the change is
    /// made, files with the prepared keys. Values come as
    /// [`ComponentRef`](crate::ComponentRef)s of the key component; the context retains an entity
    /// when filing returns true (or `Filing::Filed`) and releases it when
    /// `unfile` returns true (or `Filing::Unfiled`).
    pub trait IndexStore: Any + Send + Sync {
        fn core(&self) -> &IndexCore;
        fn core_mut(&mut self) -> &mut IndexCore;
        /// `EntityIndex` or `PrimaryEntityIndex`.
        fn kind(&self) -> &'static str;
        /// Makes the keys of `value`, for `entity` (`None`: one being
        /// created), to file next. For a primary index, a key another entity
        /// has is refused: that key, printed, and its holder.
        fn prepare(&mut self, entity: Option<Entity>, value: ComponentRef<'_>) -> Result<(), (String, Entity)>;
        /// Files `entity` (not filed yet) under the prepared keys; true if it
        /// now holds the entity (there was at least one key).
        fn file_prepared(&mut self, entity: Entity) -> bool;
        /// Moves `entity` to the prepared keys (no work when they are its
        /// keys already).
        fn refile_prepared(&mut self, entity: Entity) -> Filing;
        /// Takes `entity` out of every key; true if it was held.
        fn unfile(&mut self, entity: Entity) -> bool;
        /// Whether `entity` is held.
        fn holds(&self, entity: Entity) -> bool;
        /// Empties the index, calling `each` once per entity it held.
        fn clear(&mut self, each: &mut dyn FnMut(Entity));
        fn keys_len(&self) -> usize;
        fn held_len(&self) -> usize;
        /// Checks the index's own bookkeeping; gives the entities held.
        fn check(&self) -> Result<Vec<Entity>, String>;
        fn as_any(&self) -> &dyn Any;
    }
}

pub(crate) use sealed::{Filing, IndexStore};

/// How indices hash their keys: foldhash, seeded per index.
pub(crate) type KeyHasher = foldhash::fast::RandomState;

/// What [`EntityIndex`] and [`PrimaryEntityIndex`] have in common: a name,
/// the group they cover, counts. In the [prelude](crate::prelude). Sealed:
/// implemented by this crate's indices only.
pub trait Index: IndexStore + fmt::Display + fmt::Debug {
    /// The index's name, unique in its context.
    fn name(&self) -> &'static str {
        self.core().name
    }

    /// The matcher of the group whose entities are indexed.
    fn matcher(&self) -> &Matcher {
        &self.core().matcher
    }

    /// The component the keys are made from.
    fn component(&self) -> ComponentId {
        self.core().component.id()
    }

    /// The group indexed, once the index is added to a context.
    fn group(&self) -> Option<GroupId> {
        self.core().group
    }

    /// Whether the index follows its group (see
    /// [`IndexMut::deactivate`](crate::IndexMut::deactivate)).
    fn is_active(&self) -> bool {
        self.core().active
    }

    /// How many keys have an entity.
    fn key_count(&self) -> usize {
        self.keys_len()
    }

    /// How many entities are filed (under one key or more).
    fn entity_count(&self) -> usize {
        self.held_len()
    }

    /// Whether no entity is filed.
    fn is_empty(&self) -> bool {
        self.held_len() == 0
    }
}

impl<K: Hash + Eq + Clone + Send + Sync + 'static> Index for EntityIndex<K> {}

impl<K: Hash + Eq + Clone + fmt::Debug + Send + Sync + 'static> Index for PrimaryEntityIndex<K> {}
