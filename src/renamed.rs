//! Names that changed, kept for one release as deprecated aliases of the
//! new ones (the crate docs' "Naming" section says why each changed).

use std::fmt;
use std::hash::Hash;

use crate::collector::Collector;
use crate::context::{Context, EntityMut};
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::group::Group;
use crate::id::{CollectorId, GroupId, IndexId};
use crate::index::{EntityIndex, PrimaryEntityIndex};

impl Entity {
    /// Renamed [`tag`](Entity::tag), the word every doc uses.
    #[deprecated(since = "0.2.0", note = "renamed to `tag`")]
    #[inline]
    pub fn generation(self) -> u32 {
        self.tag()
    }
}

impl EntityMut<'_> {
    /// Renamed [`as_readonly`](EntityMut::as_readonly): an inherent
    /// `as_ref` shadowed the `AsRef` convention.
    #[deprecated(since = "0.2.0", note = "renamed to `as_readonly`")]
    pub fn as_ref(&self) -> EntityRef<'_> {
        self.as_readonly()
    }
}

impl Context {
    /// Renamed [`group`](Context::group) (getters are named after what
    /// they get; [`add_group`](Context::add_group) makes one).
    ///
    /// # Errors
    /// Those of [`group`](Context::group).
    #[deprecated(since = "0.2.0", note = "renamed to `group`; `add_group` makes one")]
    pub fn get_group(&self, id: GroupId) -> Result<Group<'_>, Error> {
        self.group(id)
    }

    /// Renamed [`collector`](Context::collector) (getters are named after
    /// what they get; [`add_collector`](Context::add_collector) makes one).
    ///
    /// # Errors
    /// Those of [`collector`](Context::collector).
    #[deprecated(since = "0.2.0", note = "renamed to `collector`; `add_collector` makes one")]
    pub fn get_collector(&mut self, id: CollectorId) -> Result<Collector<'_>, Error> {
        self.collector(id)
    }

    /// Renamed [`entities_by_key`](Context::entities_by_key) (`_with` is
    /// creation from bundles: `create_entities_with`).
    ///
    /// # Errors
    /// Those of [`entities_by_key`](Context::entities_by_key).
    #[deprecated(since = "0.2.0", note = "renamed to `entities_by_key`")]
    pub fn entities_with<K, Q>(&self, id: IndexId<EntityIndex<K>>, key: &Q) -> Result<&[Entity], Error>
    where
        K: Hash + Eq + Clone + Send + Sync + 'static + std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entities_by_key(id, key)
    }

    /// Renamed [`entity_by_key`](Context::entity_by_key) (`_with` is
    /// creation from bundles: `create_entity_with`).
    ///
    /// # Errors
    /// Those of [`entity_by_key`](Context::entity_by_key).
    #[deprecated(since = "0.2.0", note = "renamed to `entity_by_key`")]
    pub fn entity_with<K, Q>(&self, id: IndexId<PrimaryEntityIndex<K>>, key: &Q) -> Result<Option<Entity>, Error>
    where
        K: Hash + Eq + Clone + fmt::Debug + Send + Sync + 'static + std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entity_by_key(id, key)
    }
}
