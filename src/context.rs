//! `Context`: owns entities and their components, and tells about every change.

use std::any::TypeId;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};

use smallvec::SmallVec;

use crate::aerc::{Aerc, AercMode};
use crate::bundle::{Bundle, ComponentTuple};
use crate::collector::CollectorId;
use crate::collectors::Collectors;
use crate::component::{Component, ComponentId, ComponentInfo, registry};
use crate::entity::{Entities, Entity, EntityMeta};
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::event::{ContextEvent, Subscribers};
use crate::group::GroupEvent;
use crate::groups::Groups;
use crate::indices::Indices;
use crate::storage::{ArchetypeId, Archetypes, BundleId, ComponentRef, ComponentSet, Location, Moved, StorageStats};
use crate::unique::Uniques;

mod builder;
mod dispatch;
mod indexing;

pub(crate) use dispatch::collect_updated;

mod invariants;

pub use builder::ContextBuilder;

/// A world of entities and their components.
///
/// Entities are created and destroyed here; components are added, removed,
/// replaced and read here; every change fires an event
/// ([`ContextEvent`], order in the [`event`](crate::event) module docs).
/// Underneath, entities with the same component set share an archetype whose
/// rows are packed in 16 KiB chunks.
///
/// # Example
/// ```
/// use reactecs::{Context, Error};
/// #[derive(Debug, PartialEq)] struct Position { x: f32, y: f32 }
/// #[derive(Debug, PartialEq)] struct Velocity { x: f32, y: f32 }
/// reactecs::component!(Position, Velocity);
///
/// let mut game = Context::with_name("Game");
/// let e = game.create_entity();
/// game.add(e, Position { x: 0.0, y: 0.0 })?;
/// game.add(e, Velocity { x: 1.0, y: 0.0 })?;
/// game.replace(e, Position { x: 1.0, y: 0.0 })?;
/// assert_eq!(game.get::<Position>(e)?, &Position { x: 1.0, y: 0.0 });
///
/// // Misuse is a typed error that names what went wrong, and changes nothing.
/// let err = game.add(e, Velocity { x: 9.0, y: 9.0 }).unwrap_err();
/// assert!(matches!(err, Error::ComponentAlreadyPresent { .. }));
/// assert_eq!(game.get::<Velocity>(e)?, &Velocity { x: 1.0, y: 0.0 });
///
/// game.destroy_entity(e)?;
/// assert!(!game.is_alive(e));
/// # Ok::<(), Error>(())
/// ```
pub struct Context {
    pub(crate) name: &'static str,
    pub(crate) entities: Entities,
    pub(crate) aerc: Aerc,
    pub(crate) archetypes: Archetypes,
    next_creation_index: u64,
    pub(crate) subscribers: Subscribers,
    pub(crate) groups: Groups,
    pub(crate) uniques: Uniques,
    pub(crate) collectors: Collectors,
    pub(crate) indices: Indices,
    /// Entities whose `EntityReleased` waits for the end of a batch release.
    pub(crate) released: Vec<Entity>,
    /// For a declared context, the components it accepts (`None`: all).
    accepts: Option<ComponentSet>,
    next_subscription: u64,
}

/// Gives each context an instance id, so ids of its groups are recognised.
static NEXT_CONTEXT_ID: AtomicU32 = AtomicU32::new(0);

impl Default for Context {
    fn default() -> Self {
        Self::new()
    }
}

impl Context {
    /// An empty context named `Context`, accepting every declared component,
    /// in safe AERC mode. See [`Context::builder`] for the options.
    pub fn new() -> Self {
        Self::with_name("Context")
    }

    /// An empty context with a name (used in error messages and `Debug`),
    /// accepting every declared component, in safe AERC mode.
    pub fn with_name(name: &'static str) -> Self {
        ContextBuilder::new().name(name).build()
    }

    /// Options for a new context: its name, its [`AercMode`], and which
    /// declared context it is (see [`Context::of`]).
    pub fn builder() -> ContextBuilder {
        ContextBuilder::new()
    }

    fn from_parts(name: &'static str, aerc: AercMode, accepts: Option<ComponentSet>) -> Self {
        let id = NEXT_CONTEXT_ID.fetch_add(1, Ordering::Relaxed);
        let mut context = Context {
            name,
            entities: Entities::default(),
            aerc: Aerc::new(aerc),
            archetypes: Archetypes::new(registry()),
            next_creation_index: 0,
            subscribers: Subscribers::default(),
            groups: Groups::new(id),
            uniques: Uniques::new(registry()),
            collectors: Collectors::new(id),
            indices: Indices::default(),
            released: Vec::new(),
            accepts,
            next_subscription: 0,
        };
        context.groups.sync(&context.archetypes);
        context
    }

    /// The instance id that the ids of this context's groups and collectors
    /// carry.
    pub(crate) fn instance(&self) -> u32 {
        self.collectors.context()
    }

    /// The context's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The number of live (enabled) entities.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether there are no live entities.
    pub fn is_empty(&self) -> bool {
        self.entities.len() == 0
    }

    /// Whether `entity` is alive here (false once destroyed, even while it is
    /// still retained; see [`is_enabled`](Context::is_enabled)).
    pub fn is_alive(&self, entity: Entity) -> bool {
        self.entities.get(entity).is_some()
    }

    /// Every live entity, in slot order: deterministic for a given sequence of
    /// operations (destroyed slots are reused last-freed first).
    pub fn entities(&self) -> impl Iterator<Item = Entity> + '_ {
        self.entities.keys()
    }

    /// The entity's position in creation order since the context was made or
    /// last [`reset`](Context::reset).
    pub fn creation_index(&self, entity: Entity) -> Result<u64, Error> {
        Ok(self.meta(entity)?.creation_index)
    }

    /// A read-only view of the entity and its components.
    pub fn entity(&self, entity: Entity) -> Result<EntityRef<'_>, Error> {
        let location = self.meta(entity)?.location;
        Ok(EntityRef::new(
            entity,
            self.archetypes.get(location.archetype),
            location,
        ))
    }

    /// The component set of a live entity.
    pub(crate) fn component_set(&self, entity: Entity) -> Option<&ComponentSet> {
        let meta = self.entities.get(entity)?;
        Some(self.archetypes.get(meta.location.archetype).set())
    }

    /// How many archetypes and chunks the storage holds, and their bytes.
    pub fn storage_stats(&self) -> StorageStats {
        StorageStats::of(&self.archetypes)
    }

    /// Frees memory kept for reuse: empty chunks that archetypes hold on to so
    /// churn does not allocate.
    pub fn shrink_to_fit(&mut self) {
        self.archetypes.shrink_to_fit();
    }

    #[inline]
    fn meta(&self, entity: Entity) -> Result<&EntityMeta, Error> {
        match self.entities.slot(entity) {
            Some(meta) if meta.enabled => Ok(meta),
            found => Err(self.not_alive(entity, found.is_some())),
        }
    }

    /// The error for using an entity that is not alive: disabled (destroyed
    /// but retained) if its slot is still `held`, else stale.
    #[cold]
    pub(crate) fn not_alive(&self, entity: Entity, held: bool) -> Error {
        let context = self.name;
        if held {
            Error::EntityDisabled { context, entity }
        } else {
            Error::StaleEntity { context, entity }
        }
    }

    #[inline]
    fn location(&self, entity: Entity) -> Result<Location, Error> {
        Ok(self.meta(entity)?.location)
    }

    fn next_creation_index(&mut self) -> u64 {
        let index = self.next_creation_index;
        self.next_creation_index += 1;
        index
    }

    /// Creates an entity with no components. Fires `EntityCreated` (and group
    /// `Added` for NoneOf-only groups; order in the [`event`](crate::event)
    /// module docs).
    pub fn create_entity(&mut self) -> Entity {
        self.create_entity_with(())
            .expect("an empty bundle has no duplicate component")
    }

    /// Creates an entity with the components of `bundle` in one step (one row
    /// write, no moves between archetypes). Fires `EntityCreated`, group
    /// `Added` for each group it joins, then `ComponentAdded` per component in
    /// bundle order.
    ///
    /// # Errors
    /// [`Error::DuplicateComponent`] if the bundle names a type twice,
    /// [`Error::UniqueAlreadyHeld`] if it holds a unique component another
    /// entity has, or [`Error::DuplicatePrimaryKey`] if it has a key a
    /// [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) has for another
    /// entity; nothing is created and the values are dropped.
    ///
    /// # Example
    /// ```
    /// # use reactecs::Context;
    /// # struct Position(f32, f32); struct Velocity(f32, f32);
    /// # reactecs::component!(Position, Velocity);
    /// let mut game = Context::new();
    /// let e = game.create_entity_with((Position(0.0, 0.0), Velocity(1.0, 0.0)))?;
    /// assert!(game.has_all::<(Position, Velocity)>(e));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn create_entity_with<B: Bundle>(&mut self, bundle: B) -> Result<Entity, Error> {
        let plan = self.bundle::<B>()?;
        let unique = self.unique_archetype(plan);
        if let Some(archetype) = unique {
            self.uniques
                .check_free(self.archetypes.get(archetype).set(), self.name)?;
        }
        if self.indices.any_active() {
            self.prepare_spawn(self.archetypes.bundle_archetype(plan), &bundle)?;
        }
        Ok(self.spawn(plan, bundle, unique.is_some()))
    }

    /// The archetype of a bundle whose components include a unique one.
    #[inline]
    fn unique_archetype(&self, plan: BundleId) -> Option<ArchetypeId> {
        let archetype = self.archetypes.bundle_archetype(plan);
        self.uniques
            .any_in(self.archetypes.get(archetype).set())
            .then_some(archetype)
    }

    /// Creates one entity per bundle, like
    /// [`create_entity_with`](Context::create_entity_with) (same events, in
    /// order), resolving the archetype once and reserving room up front. Returns
    /// the new entities in order.
    ///
    /// # Errors
    /// [`Error::DuplicateComponent`] if the bundle type names a component twice;
    /// nothing is created. [`Error::UniqueAlreadyHeld`] if a bundle holds a
    /// unique component that an entity (possibly one created by this call) has
    /// already, or [`Error::DuplicatePrimaryKey`] if a bundle has a key a
    /// primary index has for an entity (possibly one created by this call):
    /// the entities created before it stay, and the rest of `bundles` is not
    /// consumed.
    ///
    /// # Example
    /// ```
    /// # use reactecs::Context;
    /// # struct Position(f32, f32);
    /// # reactecs::component!(Position);
    /// let mut game = Context::new();
    /// let row = game.create_entities_with((0..100).map(|i| (Position(i as f32, 0.0),)))?;
    /// assert_eq!(row.len(), 100);
    /// assert_eq!(game.get::<Position>(row[7])?.0, 7.0);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn create_entities_with<B, I>(&mut self, bundles: I) -> Result<Vec<Entity>, Error>
    where
        B: Bundle,
        I: IntoIterator<Item = B>,
    {
        let plan = self.bundle::<B>()?;
        let bundles = bundles.into_iter();
        let expected = bundles.size_hint().0;
        self.entities.reserve(expected);
        let mut created = Vec::with_capacity(expected);
        let unique = self.unique_archetype(plan);
        if unique.is_none() && !self.indices.any_active() {
            created.extend(bundles.map(|bundle| self.spawn(plan, bundle, false)));
            return Ok(created);
        }
        let archetype = self.archetypes.bundle_archetype(plan);
        for bundle in bundles {
            if unique.is_some() {
                self.uniques
                    .check_free(self.archetypes.get(archetype).set(), self.name)?;
            }
            if self.indices.any_active() {
                self.prepare_spawn(archetype, &bundle)?;
            }
            created.push(self.spawn(plan, bundle, unique.is_some()));
        }
        Ok(created)
    }

    /// The storage plan for bundle type `B` (made on first use).
    #[inline]
    fn bundle<B: Bundle>(&mut self) -> Result<BundleId, Error> {
        match self.archetypes.cached_bundle(TypeId::of::<B>()) {
            Some(bundle) => Ok(bundle),
            None => self.new_bundle::<B>(),
        }
    }

    #[cold]
    fn new_bundle<B: Bundle>(&mut self) -> Result<BundleId, Error> {
        let mut ids = SmallVec::<[ComponentId; 16]>::new();
        B::for_each_id(|id| ids.push(id));
        if let Some(accepts) = &self.accepts
            && let Some(&id) = ids.iter().find(|&&id| !accepts.contains(id))
        {
            return Err(self.wrong_context(id));
        }
        let plan = self
            .archetypes
            .register_bundle(Some(TypeId::of::<B>()), &ids)
            .map_err(|id| Error::DuplicateComponent {
                context: self.name,
                component: self.component_name(id),
            });
        self.groups.sync(&self.archetypes);
        plan
    }

    /// Creates an entity from `bundle` and fires the creation events.
    #[inline]
    fn spawn<B: Bundle>(&mut self, bundle_id: BundleId, bundle: B, unique: bool) -> Entity {
        let creation_index = self.next_creation_index();
        let archetypes = &mut self.archetypes;
        let mut location = None;
        let entity = self.entities.insert_with_key(|entity| {
            let at = archetypes
                .spawn(bundle_id, entity, |row| bundle.write_into(row))
                .expect("a bundle writes every element of its plan");
            location = Some(at);
            EntityMeta {
                location: at,
                creation_index,
                user_retains: 0,
                internal_retains: 0,
                enabled: true,
            }
        });
        let location = location.expect("`insert_with_key` calls its closure");
        if unique {
            self.uniques.hold(self.archetypes.get(location.archetype).set(), entity);
        }
        if !self.groups.is_empty() {
            self.groups
                .apply_spawn_or_despawn(location.archetype, &self.archetypes, true);
            if self.indices.any_active() {
                self.index_archetype(entity, location.archetype, true);
            }
        }
        if !self.subscribers.is_empty() || self.groups.has_consumers() {
            self.creation_events::<B>(entity, location);
        }
        entity
    }

    /// `EntityCreated`, the group `Added` events, then `ComponentAdded` per
    /// component of bundle `B`, for a new entity.
    fn creation_events<B: Bundle>(&mut self, entity: Entity, location: Location) {
        if !self.subscribers.is_empty() {
            self.subscribers.emit(&ContextEvent::EntityCreated { entity });
        }
        self.fire_archetype_groups(entity, location, None, true);
        if !self.subscribers.is_empty() {
            let archetype = self.archetypes.get(location.archetype);
            B::for_each_id(|id| {
                if let Some(component) = archetype.component_ref(id, location) {
                    self.subscribers
                        .emit(&ContextEvent::ComponentAdded { entity, component });
                }
            });
        }
    }

    /// Destroys the entity: fires `EntityWillBeDestroyed` (components still
    /// readable), group `Removed` for each group it was in, one
    /// `ComponentRemoved` per component, drops the components, then fires
    /// `EntityDestroyed`. If nothing retains the entity, its slot is freed
    /// and `EntityReleased` fires; the handle is stale afterwards. If
    /// something does ([`aerc`](crate::aerc)), the entity stays disabled
    /// (`is_enabled == Ok(false)`) until its last release.
    ///
    /// If an `EntityWillBeDestroyed` handler panics, nothing has changed yet:
    /// the entity stays alive. If a later handler panics, the entity is still
    /// destroyed before the panic goes on, but the events after the panicking
    /// one (including `EntityDestroyed`) are not fired.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] if the entity is not alive ([`Error::EntityDisabled`]
    /// if it was destroyed and is still retained).
    pub fn destroy_entity(&mut self, entity: Entity) -> Result<(), Error> {
        let location = self.location(entity)?;
        let archetype = self.archetypes.get(location.archetype);
        if !self.subscribers.is_empty() {
            let view = EntityRef::new(entity, archetype, location);
            self.subscribers
                .emit(&ContextEvent::EntityWillBeDestroyed { entity: view });
        }
        // From here the groups no longer count the entity, so the removal must
        // finish even if a handler panics: catch, finish, then resume the panic.
        self.groups
            .apply_spawn_or_despawn(location.archetype, &self.archetypes, false);
        if self.indices.any_active() {
            self.index_archetype(entity, location.archetype, false);
        }
        let notified = panic::catch_unwind(AssertUnwindSafe(|| {
            self.fire_archetype_groups(entity, location, None, false);
            if !self.subscribers.is_empty() {
                let view = EntityRef::new(entity, self.archetypes.get(location.archetype), location);
                for component in view.components() {
                    self.subscribers
                        .emit(&ContextEvent::ComponentRemoved { entity, component });
                }
            }
        }));
        let archetype = self.archetypes.get(location.archetype);
        self.uniques.release(archetype.set(), entity);
        // Bookkeeping first, then the drops: if a component's `Drop` panics, the
        // row is still removed (see `Archetypes::despawn`) and the meta matches.
        if let Some(displaced) = archetype.displaced_by_removal(location) {
            self.entities.relocate(displaced, location);
        }
        let freed = self.entities.disable(entity);
        if freed {
            self.aerc.forget(entity.index());
        }
        self.archetypes.despawn(location);
        if let Err(payload) = notified {
            panic::resume_unwind(payload);
        }
        if !self.subscribers.is_empty() {
            self.subscribers.emit(&ContextEvent::EntityDestroyed { entity });
            if freed {
                self.subscribers.emit(&ContextEvent::EntityReleased { entity });
            }
        }
        Ok(())
    }

    /// Destroys every entity, each with [`destroy_entity`](Context::destroy_entity)'s
    /// events, in [`entities`](Context::entities) order. Retained entities
    /// are destroyed too, and wait (disabled) for their last release.
    pub fn destroy_all_entities(&mut self) {
        let all: Vec<Entity> = self.entities.keys().collect();
        for entity in all {
            self.destroy_entity(entity).expect("every listed entity is alive");
        }
    }

    /// Destroys every entity (with events) and restarts creation indices at 0.
    /// Groups, entity indices and subscriptions are kept, and so are
    /// collectors, emptied after the destruction (what they collected from it
    /// is released, so every slot is free), and the storage's memory.
    ///
    /// # Errors
    /// [`Error::EntitiesRetained`] if any entity, alive or destroyed, is
    /// retained (by a collector, a reactive system or your own
    /// [`retain`](Context::retain); the retains of entity indices do not
    /// count, as they go with the entities); nothing changes then. Clear reactive
    /// systems' collectors and release your retains first.
    pub fn reset(&mut self) -> Result<(), Error> {
        self.check_resettable()?;
        self.destroy_all_entities();
        // What collectors gathered from the destruction goes too: a reset
        // context starts over, with every slot free.
        let collectors: Vec<CollectorId> = self.collectors().map(|c| c.id()).collect();
        for id in collectors {
            self.clear_collector(id)?;
        }
        self.next_creation_index = 0;
        Ok(())
    }

    /// [`Error::EntitiesRetained`] if any entity is retained by something
    /// other than entity indices (whose retains go as the entities are
    /// destroyed).
    pub(crate) fn check_resettable(&self) -> Result<(), Error> {
        let count = self
            .entities
            .iter_slots()
            .filter(|&(entity, meta)| meta.user_retains != 0 || meta.internal_retains > self.indices.holding(entity))
            .count();
        if count > 0 {
            return Err(Error::EntitiesRetained {
                context: self.name,
                count,
            });
        }
        Ok(())
    }

    /// Adds component `value` to the entity. Fires group `Added` / `Removed`
    /// for each group the entity joins or leaves, then `ComponentAdded`.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity), [`Error::WrongContext`] for a component this declared context does
    /// not accept, [`Error::ComponentAlreadyPresent`] if the
    /// entity has a `T` already (use [`replace`](Context::replace) to
    /// overwrite), or [`Error::DuplicatePrimaryKey`] if the change would give
    /// the entity a key a [`PrimaryEntityIndex`](crate::PrimaryEntityIndex)
    /// has for another entity; `value` is dropped and nothing changes.
    pub fn add<T: Component>(&mut self, entity: Entity, value: T) -> Result<(), Error> {
        let id = T::component_id();
        let context = self.name;
        if let Some(accepts) = &self.accepts
            && !accepts.contains(id)
        {
            return Err(self.wrong_context(id));
        }
        if self.indices.any_active() {
            self.prepare_insert(entity, &value)?;
        }
        let Some(meta) = self.entities.get_mut(entity) else {
            return Err(self.not_alive(entity, self.entities.slot(entity).is_some()));
        };
        let from = meta.location;
        let unique = T::registration().is_unique();
        if unique {
            self.uniques.check_free_for(id, entity, context)?;
        }
        let Ok(moved) = self.archetypes.insert(from, id, value) else {
            return Err(Error::ComponentAlreadyPresent {
                context,
                entity,
                component: T::component_info().name(),
            });
        };
        meta.location = moved.to;
        if unique {
            self.uniques.set_holder(id, Some(entity));
        }
        self.relocate_displaced(moved, from);
        if !self.groups.is_empty() {
            self.after_move(entity, moved, None);
        }
        if !self.subscribers.is_empty() {
            let component = self.archetypes.get(moved.to.archetype).component_ref(id, moved.to);
            if let Some(component) = component {
                self.subscribers
                    .emit(&ContextEvent::ComponentAdded { entity, component });
            }
        }
        Ok(())
    }

    /// After a move out of `from`, the entity moved into `from` lives there.
    #[inline]
    fn relocate_displaced(&mut self, moved: Moved, from: Location) {
        if let Some(displaced) = moved.displaced {
            self.entities.relocate(displaced, from);
        }
    }

    /// Removes the entity's `T` and drops it. Fires group `Removed` (with the
    /// value) / `Added` for each group the entity leaves or joins, then
    /// `ComponentRemoved` (with the value), before the drop.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity), [`Error::ComponentAbsent`] if there is no `T`, or
    /// [`Error::DuplicatePrimaryKey`] if the removal would make the entity join
    /// a group (one with a NoneOf set) whose
    /// [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) has one of its keys
    /// for another entity; nothing changes then.
    pub fn remove<T: Component>(&mut self, entity: Entity) -> Result<(), Error> {
        self.take::<T>(entity).map(drop)
    }

    /// Removes the entity's `T` and gives it back. Fires the same events as
    /// [`remove`](Context::remove).
    ///
    /// # Errors
    /// As [`remove`](Context::remove).
    pub fn take<T: Component>(&mut self, entity: Entity) -> Result<T, Error> {
        let id = T::component_id();
        if self.indices.any_active() {
            self.prepare_removal(entity, id)?;
        }
        let Some(meta) = self.entities.get_mut(entity) else {
            return Err(self.not_alive(entity, self.entities.slot(entity).is_some()));
        };
        let from = meta.location;
        let Some((value, moved)) = self.archetypes.take::<T>(from, id) else {
            return Err(self.absent::<T>(entity));
        };
        meta.location = moved.to;
        if T::registration().is_unique() {
            self.uniques.set_holder(id, None);
        }
        self.relocate_displaced(moved, from);
        if self.groups.is_empty() && self.subscribers.is_empty() {
            return Ok(value);
        }
        let component = ComponentRef::new(T::component_info(), &value);
        self.after_move(entity, moved, Some(component));
        if !self.subscribers.is_empty() {
            self.subscribers
                .emit(&ContextEvent::ComponentRemoved { entity, component });
        }
        Ok(value)
    }

    /// Sets the entity's `T` to `value`. If it had a `T`, fires group `Updated`
    /// for each group watching `T` and `ComponentReplaced` (old and new value),
    /// then drops the old value; if not, this is an [`add`](Context::add).
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity); [`Error::DuplicatePrimaryKey`] if the new value has a key a
    /// [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) has for another
    /// entity (the old value stays, nothing changes); when `T` is absent, as
    /// [`add`](Context::add).
    pub fn replace<T: Component>(&mut self, entity: Entity, value: T) -> Result<(), Error> {
        let id = T::component_id();
        let location = self.location(entity)?;
        let indexed = self.indices.any_active() && self.archetypes.get(location.archetype).set().contains(id);
        if indexed {
            self.prepare_replace(entity, location, ComponentRef::new(T::component_info(), &value))?;
        }
        match self.archetypes.replace(location, id, value) {
            Ok(old) => {
                if indexed {
                    self.index_replace(entity, location.archetype, id);
                }
                let mut handlers = false;
                if self.groups.has_consumers() {
                    // Collectors need only the entity; values are looked up
                    // below only if a subscriber is to see them.
                    for &index in self.groups.of_archetype(location.archetype) {
                        let group = self.groups.get(index);
                        if group.matcher.watches(id) {
                            handlers |= group.handler_count() != 0;
                            collect_updated(&self.groups, &mut self.collectors, &mut self.entities, index, entity);
                        }
                    }
                }
                if !handlers && self.subscribers.is_empty() {
                    return Ok(());
                }
                let archetype = self.archetypes.get(location.archetype);
                let Some(new) = archetype.component_ref(id, location) else {
                    return Ok(());
                };
                let Some(old) = new.sibling(&old) else {
                    return Ok(());
                };
                if handlers {
                    for i in 0..self.groups.of_archetype(location.archetype).len() {
                        let index = self.groups.of_archetype(location.archetype)[i];
                        let group = self.groups.get(index);
                        if group.handler_count() != 0 && group.matcher.watches(id) {
                            let event = GroupEvent::Updated {
                                group: self.groups.id(index),
                                entity,
                                old,
                                new,
                            };
                            self.groups.emit(index, &event);
                        }
                    }
                }
                if !self.subscribers.is_empty() {
                    self.subscribers
                        .emit(&ContextEvent::ComponentReplaced { entity, old, new });
                }
                Ok(())
            }
            Err(value) => self.add(entity, value),
        }
    }

    /// The entity's `T`.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity), or [`Error::ComponentAbsent`] if there is no `T`.
    #[inline]
    pub fn get<T: Component>(&self, entity: Entity) -> Result<&T, Error> {
        if let Some(meta) = self.entities.get(entity)
            && let Some(value) = self
                .archetypes
                .get(meta.location.archetype)
                .get(T::component_id(), meta.location)
        {
            return Ok(value);
        }
        Err(self.get_error::<T>(entity))
    }

    /// Why [`get`](Context::get) found nothing.
    #[cold]
    fn get_error<T: Component>(&self, entity: Entity) -> Error {
        match self.meta(entity) {
            Ok(_) => self.absent::<T>(entity),
            Err(error) => error,
        }
    }

    /// The entity's `T`, mutably. Writing through it is silent: no event fires
    /// (use [`replace`](Context::replace) when observers must hear of it).
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity), or [`Error::ComponentAbsent`] if there is no `T`.
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, Error> {
        let location = self.location(entity)?;
        let context = self.name;
        self.archetypes
            .get_mut(T::component_id(), location)
            .ok_or_else(|| Error::ComponentAbsent {
                context,
                entity,
                component: T::component_info().name(),
            })
    }

    /// Whether the entity is alive and has a `T`.
    pub fn has<T: Component>(&self, entity: Entity) -> bool {
        self.has_component(entity, T::component_id())
    }

    /// Whether the entity is alive and has the component with id `id`.
    pub fn has_component(&self, entity: Entity, id: ComponentId) -> bool {
        self.entities
            .get(entity)
            .is_some_and(|meta| self.archetypes.get(meta.location.archetype).set().contains(id))
    }

    /// Whether the entity is alive and has every component of `C`, e.g.
    /// `has_all::<(Position, Velocity)>(e)`. True for `()` on a live entity.
    pub fn has_all<C: ComponentTuple>(&self, entity: Entity) -> bool {
        let Some(meta) = self.entities.get(entity) else {
            return false;
        };
        let set = self.archetypes.get(meta.location.archetype).set();
        let mut all = true;
        C::for_each_id(|id| all &= set.contains(id));
        all
    }

    /// Whether the entity is alive and has at least one component of `C`.
    pub fn has_any<C: ComponentTuple>(&self, entity: Entity) -> bool {
        let Some(meta) = self.entities.get(entity) else {
            return false;
        };
        let set = self.archetypes.get(meta.location.archetype).set();
        let mut any = false;
        C::for_each_id(|id| any |= set.contains(id));
        any
    }

    /// The entity's component ids, increasing.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity).
    pub fn component_ids(&self, entity: Entity) -> Result<impl Iterator<Item = ComponentId> + '_, Error> {
        Ok(self.entity(entity)?.component_ids())
    }

    /// The declared names of the entity's components, by increasing id.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity).
    pub fn component_names(&self, entity: Entity) -> Result<impl Iterator<Item = &'static str> + '_, Error> {
        Ok(self.entity(entity)?.component_names())
    }

    fn component_name(&self, id: ComponentId) -> &'static str {
        id.info().map_or("?", ComponentInfo::name)
    }

    #[cold]
    fn wrong_context(&self, id: ComponentId) -> Error {
        Error::WrongContext {
            context: self.name,
            component: self.component_name(id),
            declared: id.info().map_or(&[], ComponentInfo::contexts),
        }
    }

    fn absent<T: Component>(&self, entity: Entity) -> Error {
        Error::ComponentAbsent {
            context: self.name,
            entity,
            component: T::component_info().name(),
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.name)
            .field("entities", &self.entities.len())
            .field("retained_destroyed", &self.entities.disabled_len())
            .field("collectors", &self.collectors.len())
            .field("aerc", &self.aerc.mode())
            .field("archetypes", &self.archetypes.len())
            .field("groups", &self.groups.len())
            .field("subscribers", &self.subscribers.len())
            .finish()
    }
}
