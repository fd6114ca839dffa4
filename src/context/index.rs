//! The context's side of entity indices: registering them (`add_index`),
//! finding them (`index`, `index_id`, `indices`), and the handle that acts
//! on one (`index_mut`'s [`IndexMut`]: activate, deactivate, remove).
//! Keeping them current is the change routes' job (see `change.rs` and
//! `lifecycle.rs`).

use std::fmt;

use super::Context;
use crate::error::Error;
use crate::id::{IndexId, IndexKey};
use crate::index::{Index, Indices, fill};
use crate::routes::Member;

impl Context {
    /// Registers `index` under its name and files the entities of its group
    /// now (the group is made if needed); from then on every change keeps it
    /// current. Returns the typed id to find it again.
    ///
    /// # Errors
    /// - [`Error::DuplicateIndexName`] if an index of this context has the
    ///   name;
    /// - [`Error::IndexNotKeyed`] if the index's matcher does not have the key
    ///   component in its AllOf set;
    /// - [`Error::DuplicatePrimaryKey`] if, for a primary index, two
    ///   entities of the group have the same key already.
    ///
    /// The index is not added then, and nothing changes: no group is made
    /// (the index is filled from its matcher's membership first), no event
    /// fires, nothing is retained.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug)] struct Name(String);
    /// struct Enemy;
    /// reactecs::component!(Name, Enemy);
    ///
    /// let mut game = Context::new();
    /// let boss = game.create_entity_with((Name("boss".into()), Enemy))?;
    /// game.create_entity_with(Name("hero".into()))?;
    /// // Enemies only; made after the entities, so it indexes them at once.
    /// let enemies = game.add_index(
    ///     PrimaryEntityIndex::new("Enemy", |n: &Name| n.0.clone()).matching(Matcher::all_of::<(Name, Enemy)>()),
    /// )?;
    /// assert_eq!(game.index(enemies)?.get("boss"), Some(boss));
    /// assert_eq!(game.index(enemies)?.get("hero"), None);
    /// assert_eq!(game.aerc().retain_count(boss)?, 1); // the index holds it
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn add_index<I: Index>(&mut self, index: I) -> Result<IndexId<I>, Error> {
        let (name, component) = (index.name(), index.core().component);
        if self.indices.find(name).is_some() {
            return Err(Error::DuplicateIndexName {
                context: self.name,
                index: name,
            });
        }
        if !index.matcher().all().contains(component.id()) {
            return Err(Error::IndexNotKeyed {
                context: self.name,
                index: name,
                component: component.name(),
                matcher: index.matcher().to_string(),
            });
        }
        let mut store: Box<dyn Index> = Box::new(index);
        // An index is filled here and only here (nothing it held is retained).
        store.clear(&mut |_| {});
        store.core_mut().active = false;
        // Filled from the group's membership, or from what a new group's
        // would be, so that a refusal leaves no group behind.
        let preview;
        let member = match self.groups.find(store.matcher()) {
            Some(existing) => self.routes.membership().group(existing),
            None => {
                preview = Member::listed(store.matcher().clone(), &self.archetypes);
                &preview
            }
        };
        fill(
            &mut *store,
            member,
            (&self.archetypes, &self.sparse),
            &mut self.retains,
            self.name,
        )?;
        let group = self.add_group(store.matcher().clone());
        store.core_mut().group = Some(group);
        let key = self.indices.insert(group.index, store);
        self.routes.attach_index(group.index, key, component.id());
        self.invalidate_routes();
        Ok(IndexId::new(self.instance, key))
    }

    /// The index with id `id`: the [`EntityIndex`](crate::EntityIndex) or
    /// [`PrimaryEntityIndex`](crate::PrimaryEntityIndex)
    /// itself, to look keys up with its `get` (Entitas'
    /// `context.GetEntityIndex(name)` is `index(index_id(name)?)`). To
    /// switch or remove it, [`index_mut`](Context::index_mut).
    ///
    /// # Errors
    /// [`Error::UnknownIndex`] if it was removed or belongs to another
    /// context; [`Error::PrimaryKeyConflict`], once, after a write through
    /// `&mut` gave an entity a primary key another entity has (the index is
    /// usable again at the next call: see the [`index`](crate::index)
    /// module docs).
    pub fn index<I: Index>(&self, id: IndexId<I>) -> Result<&I, Error> {
        Self::typed_index(&self.indices, self.instance, self.name, id)
    }

    /// The handle that acts on index `id`: switch it off and on
    /// ([`deactivate`](IndexMut::deactivate), [`activate`](IndexMut::activate))
    /// or remove it ([`remove`](IndexMut::remove)). To look keys up, use
    /// [`index`](Context::index).
    ///
    /// # Errors
    /// [`Error::UnknownIndex`] if it was removed or belongs to another
    /// context.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug)] struct Name(&'static str);
    /// reactecs::component!(Name);
    ///
    /// let mut game = Context::new();
    /// let by_name = game.add_index(PrimaryEntityIndex::new("Name", |n: &Name| n.0))?;
    /// let hero = game.create_entity_with(Name("hero"))?;
    /// game.index_mut(by_name)?.deactivate(); // empty, and deaf, until activated
    /// assert_eq!(game.index(by_name)?.get("hero"), None);
    /// game.index_mut(by_name)?.activate()?; // files the group's entities again
    /// assert_eq!(game.index(by_name)?.get("hero"), Some(hero));
    /// game.index_mut(by_name)?.remove();
    /// assert!(matches!(game.index(by_name), Err(Error::UnknownIndex { .. })));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn index_mut<I: Index>(&mut self, id: IndexId<I>) -> Result<IndexMut<'_, I>, Error> {
        self.index_key(id)?;
        Ok(IndexMut { context: self, id })
    }

    /// Index `id` of `indices`, the indices of the context with instance id
    /// `instance` and name `context`: as [`index`](Context::index).
    pub(super) fn typed_index<'a, I: Index>(
        indices: &'a Indices,
        instance: u64,
        context: &'static str,
        id: IndexId<I>,
    ) -> Result<&'a I, Error> {
        let index = (id.context == instance)
            .then(|| indices.get(id.key))
            .flatten()
            .and_then(|entry| entry.store.as_any().downcast_ref::<I>())
            .ok_or_else(|| Error::UnknownIndex {
                context,
                index: id.to_string(),
            })?;
        indices.report_conflict(id.key)?;
        Ok(index)
    }

    /// The id of the index named `name`, which must be an `I` (e.g.
    /// `EntityIndex<(i32, i32)>`).
    ///
    /// # Errors
    /// [`Error::UnknownIndex`] if no index has the name;
    /// [`Error::WrongIndexType`] if it is not an `I`.
    pub fn index_id<I: Index>(&self, name: &str) -> Result<IndexId<I>, Error> {
        let key = self.indices.find(name).ok_or_else(|| Error::UnknownIndex {
            context: self.name,
            index: format!("`{name}`"),
        })?;
        let store = &*self
            .indices
            .get(key)
            .expect("the index exists: `find` gave its key just above")
            .store;
        if store.as_any().downcast_ref::<I>().is_none() {
            return Err(Error::WrongIndexType {
                context: self.name,
                index: store.core().name,
                found: store.kind(),
                expected: std::any::type_name::<I>(),
            });
        }
        Ok(IndexId::new(self.instance, key))
    }

    /// Every index, in slot order (creation order, except that a new index
    /// may take the slot of a removed one).
    pub fn indices(&self) -> impl Iterator<Item = &dyn Index> + '_ {
        self.indices.iter().map(|(_, entry)| &*entry.store)
    }

    /// [`IndexMut::activate`] of index `id`.
    fn activate_index<I: Index>(&mut self, id: IndexId<I>) -> Result<(), Error> {
        let key = self.index_key(id)?;
        let group = self
            .indices
            .get(key)
            .expect("the index exists: `index_key` found it just above")
            .group;
        let filled = self.indices.activate(
            key,
            self.routes.membership().group(group),
            (&self.archetypes, &self.sparse),
            &mut self.retains,
            self.name,
        );
        self.invalidate_routes();
        filled
    }

    /// [`IndexMut::deactivate`] of index `id`.
    fn deactivate_index<I: Index>(&mut self, id: IndexId<I>) -> Result<(), Error> {
        let key = self.index_key(id)?;
        self.indices.deactivate(key, &mut self.retains);
        self.invalidate_routes();
        Ok(())
    }

    /// [`IndexMut::remove`] of index `id`.
    fn remove_index<I: Index>(&mut self, id: IndexId<I>) -> Result<(), Error> {
        let key = self.index_key(id)?;
        self.indices.deactivate(key, &mut self.retains);
        let entry = self
            .indices
            .remove(key)
            .expect("the index exists: `index_key` found it just above");
        self.routes.detach_index(entry.group, key);
        self.invalidate_routes();
        Ok(())
    }

    fn index_store<I>(&self, id: IndexId<I>) -> Option<&dyn Index> {
        (id.context == self.instance)
            .then(|| self.indices.get(id.key))
            .flatten()
            .map(|entry| &*entry.store)
    }

    fn index_key<I>(&self, id: IndexId<I>) -> Result<IndexKey, Error> {
        self.index_store(id)
            .map(|_| id.key)
            .ok_or_else(|| self.unknown_index(id))
    }

    #[cold]
    fn unknown_index<I>(&self, id: IndexId<I>) -> Error {
        Error::UnknownIndex {
            context: self.name,
            index: id.to_string(),
        }
    }
}

/// The handle that acts on one entity index, from [`Context::index_mut`]
/// (Entitas' `entityIndex.Activate()`, `Deactivate()`): the index's id was
/// checked when the handle was made, and the handle borrows the context,
/// so none of its calls can find the index gone. To look keys up, use
/// [`Context::index`].
pub struct IndexMut<'a, I> {
    context: &'a mut Context,
    id: IndexId<I>,
}

impl<I: Index> IndexMut<'_, I> {
    /// The index's id.
    pub fn id(&self) -> IndexId<I> {
        self.id
    }

    /// Files the current entities of the index's group again, and follows
    /// the group from now on. Does nothing if the index is active.
    ///
    /// # Errors
    /// [`Error::DuplicatePrimaryKey`] if, for a primary index, two entities
    /// of the group have the same key (changes made while it was inactive
    /// were not checked): it stays inactive and empty.
    pub fn activate(&mut self) -> Result<(), Error> {
        self.context.activate_index(self.id)
    }

    /// Empties the index, releasing every entity it held, and stops it
    /// following its group until [`activate`](IndexMut::activate). Does
    /// nothing if it is inactive.
    pub fn deactivate(&mut self) {
        let done = self.context.deactivate_index(self.id);
        debug_assert!(done.is_ok(), "the handle's index exists");
    }

    /// Removes the index, releasing every entity it held. Its id is then
    /// unknown; its name is free again.
    pub fn remove(self) {
        let done = self.context.remove_index(self.id);
        debug_assert!(done.is_ok(), "the handle's index exists");
    }
}

impl<I> fmt::Debug for IndexMut<'_, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexMut").field("id", &self.id.to_string()).finish()
    }
}
