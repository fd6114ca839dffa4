//! Entities' lives: creating them (one, or many of one bundle type),
//! destroying them (one, or all), and `reset`.

use std::any::{Any, TypeId};
use std::panic::{self, AssertUnwindSafe};

use smallvec::SmallVec;

use super::Context;
use super::dispatch::value_of;
use crate::bundle::Bundle;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::event::ContextEvent;
use crate::id::{CollectorId, ComponentId};
use crate::routes::{Gate, Holding, Route};
use crate::storage::{ArchetypeId, BundleId, ComponentRef, ComponentSet, Location, RowWriter};

impl Context {
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
    /// assert!(game.entity(e)?.has_all::<(Position, Velocity)>());
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn create_entity_with<B: Bundle>(&mut self, bundle: B) -> Result<Entity, Error> {
        let plan = self.bundle::<B>()?;
        let archetype = self.archetypes.bundle_archetype(plan);
        let unique = self.unique_bundle(plan);
        if unique {
            self.check_unique_free(plan)?;
        }
        if !self.routes.is_idle() {
            self.prepare_spawn(plan, archetype, &bundle)?;
        }
        Ok(self.spawn(plan, bundle, unique))
    }

    /// Whether bundle `plan` holds a unique component.
    #[inline]
    pub(crate) fn unique_bundle(&self, plan: BundleId) -> bool {
        let archetype = self.archetypes.bundle_archetype(plan);
        self.uniques.any_in(self.archetypes.get(archetype).set())
            || self.uniques.any_in(self.archetypes.bundle_sparse(plan))
    }

    /// [`Error::UniqueAlreadyHeld`] if an entity holds a unique component of
    /// bundle `plan`.
    pub(crate) fn check_unique_free(&self, plan: BundleId) -> Result<(), Error> {
        let archetype = self.archetypes.bundle_archetype(plan);
        self.uniques
            .check_free(self.archetypes.get(archetype).set(), self.name)?;
        self.uniques.check_free(self.archetypes.bundle_sparse(plan), self.name)
    }

    /// Creates one entity per bundle, like
    /// [`create_entity_with`](Context::create_entity_with) (same events, in
    /// order), resolving the archetype and its route once and reserving room
    /// up front. Returns the new entities in order; when nobody reads them,
    /// [`create_entities_with_count`](Context::create_entities_with_count)
    /// does the same without the `Vec`.
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
        self.create_each_with::<B, I, Vec<Entity>>(bundles)
    }

    /// Creates one entity per bundle, exactly as
    /// [`create_entities_with`](Context::create_entities_with) does (same
    /// events in the same order, same errors, same storage), and returns how
    /// many it created instead of their handles: for bulk creation whose
    /// handles nobody reads (a million entities would otherwise leave an
    /// 8 MB `Vec<Entity>` to drop). It allocates nothing for the handles.
    ///
    /// To learn the new entities later, read them from a group, a query or
    /// [`entities`](Context::entities); to have them now, use
    /// [`create_entities_with`](Context::create_entities_with).
    ///
    /// # Errors
    /// As [`create_entities_with`](Context::create_entities_with):
    /// [`Error::DuplicateComponent`] before anything is created;
    /// [`Error::UniqueAlreadyHeld`] or [`Error::DuplicatePrimaryKey`] for a
    /// bundle the context refuses, when the entities created before it stay
    /// (count them with [`len`](Context::len)) and the rest of `bundles` is
    /// not consumed.
    ///
    /// # Example
    /// ```
    /// # use reactecs::Context;
    /// # struct Particle(f32);
    /// # reactecs::component!(Particle);
    /// let mut world = Context::new();
    /// let made = world.create_entities_with_count((0..10_000).map(|i| Particle(i as f32)))?;
    /// assert_eq!(made, 10_000);
    /// assert_eq!(world.len(), 10_000);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn create_entities_with_count<B, I>(&mut self, bundles: I) -> Result<usize, Error>
    where
        B: Bundle,
        I: IntoIterator<Item = B>,
    {
        self.create_each_with::<B, I, usize>(bundles)
    }

    /// The one body of [`create_entities_with`](Context::create_entities_with)
    /// and [`create_entities_with_count`](Context::create_entities_with_count):
    /// creates one entity per bundle and hands each new entity to an `M` (a
    /// `Vec` of handles, or a count), in order.
    #[inline]
    fn create_each_with<B, I, M>(&mut self, bundles: I) -> Result<M, Error>
    where
        B: Bundle,
        I: IntoIterator<Item = B>,
        M: Made + Default,
    {
        // A local of this function, not a `&mut` the caller lends: with the
        // list behind a caller's pointer, simple_insert took 15% longer (the
        // peer benchmark, same instructions within 2.3%).
        let mut made = M::default();
        let plan = self.bundle::<B>()?;
        let bundles = bundles.into_iter();
        let expected = bundles.size_hint().0;
        self.entities.reserve(expected);
        made.reserve_for(expected);
        if self.spawns_quietly(plan) {
            self.spawn_quietly(plan, bundles, &mut made);
            return Ok(made);
        }
        let archetype = self.archetypes.bundle_archetype(plan);
        let unique = self.unique_bundle(plan);
        let quiet = self.creation_is_quiet(archetype);
        for bundle in bundles {
            if unique {
                self.check_unique_free(plan)?;
            }
            if !quiet {
                self.prepare_spawn(plan, archetype, &bundle)?;
            }
            made.made(self.spawn(plan, bundle, unique));
        }
        Ok(made)
    }

    /// Creates an entity per bundle `bundles` gives (appended to `created`)
    /// as [`create_entities_with`](Context::create_entities_with) does, when
    /// that is storage alone and cannot fail: nobody hears of the
    /// creations, the bundle holds no unique component and is valid for
    /// this context. Otherwise returns `false` without calling `bundles`.
    pub(crate) fn create_quietly<B: Bundle, I: Iterator<Item = B>>(
        &mut self,
        bundles: impl FnOnce() -> I,
        created: &mut Vec<Entity>,
    ) -> bool {
        let Ok(plan) = self.bundle::<B>() else {
            return false;
        };
        if !self.spawns_quietly(plan) {
            return false;
        }
        let bundles = bundles();
        self.entities.reserve(bundles.size_hint().0);
        created.reserve(bundles.size_hint().0);
        self.spawn_quietly(plan, bundles, created);
        true
    }

    /// Creates an entity per bundle of plan `plan` (each handed to `made`,
    /// in order) in storage alone, which nobody hears of: in one batch
    /// unless the bundle has components kept out of archetypes.
    fn spawn_quietly<B: Bundle>(&mut self, plan: BundleId, bundles: impl Iterator<Item = B>, made: &mut impl Made) {
        let Context {
            archetypes, entities, ..
        } = self;
        let rows = bundles.map(B::into_row);
        let batch = archetypes.spawn_batch(plan, rows, |at| entities.alloc(at), |entity| made.made(entity));
        if let Err(rows) = batch {
            for row in rows {
                made.made(self.spawn_row(plan, B::from_row(row)).0);
            }
        }
    }

    /// Whether creating an entity of bundle plan `plan` is storage alone:
    /// nobody hears of it and the bundle holds no unique component (so it
    /// cannot fail).
    #[inline]
    pub(crate) fn spawns_quietly(&mut self, plan: BundleId) -> bool {
        let archetype = self.archetypes.bundle_archetype(plan);
        !self.unique_bundle(plan) && self.creation_is_quiet(archetype)
    }

    /// Whether creating an entity in `archetype` concerns no one: no entity
    /// index files it, no group, collector or subscriber hears of it.
    #[inline]
    pub(super) fn creation_is_quiet(&mut self, archetype: ArchetypeId) -> bool {
        self.routes.is_idle() || {
            let (routes, archetypes, _, dispatch) = self.split();
            routes
                .of_archetype(archetype, true, archetypes, dispatch.asker())
                .0
                .is_empty()
        }
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
        for &id in &ids {
            self.check_accepts(id)?;
        }
        // A second holder of a unique component is refused before storage
        // makes the bundle's archetype, so the refused call leaves nothing
        // behind. (A bundle naming a type twice is refused below.)
        let set: ComponentSet = ids.iter().copied().collect();
        if set.len() == ids.len() {
            self.uniques.check_free(&set, self.name)?;
        }
        let plan = self
            .archetypes
            .register_bundle(Some(TypeId::of::<B>()), &ids)
            .map_err(|id| Error::DuplicateComponent {
                context: self.name,
                component: id.name(),
            });
        self.routes.sync(&self.archetypes);
        plan
    }

    /// Before creating an entity from `bundle` (of plan `plan`) in
    /// `archetype`: the indices of its groups make its keys.
    #[inline]
    fn prepare_spawn<B: Bundle>(&mut self, plan: BundleId, archetype: ArchetypeId, bundle: &B) -> Result<(), Error> {
        self.prepare_spawn_with(plan, archetype, |id| bundle.component_ref(id))
    }

    /// As [`prepare_spawn`](Context::prepare_spawn), with the values of the
    /// new entity given by `value_of` (a bundle, or values read from a
    /// snapshot).
    pub(crate) fn prepare_spawn_with<'v>(
        &mut self,
        plan: BundleId,
        archetype: ArchetypeId,
        value_of: impl Fn(ComponentId) -> Option<ComponentRef<'v>>,
    ) -> Result<(), Error> {
        let (routes, archetypes, _, mut dispatch) = self.split();
        let (route, membership) = routes.of_archetype(archetype, true, archetypes, dispatch.asker());
        if route.files() {
            let holding = Holding::Set(archetypes.bundle_sparse(plan));
            let set = archetypes.get(archetype).set();
            let gate = route.gated.then(|| Gate::spawning(membership, set, true, holding));
            dispatch.prepare_filing(route, gate.as_ref(), None, value_of)?;
        }
        Ok(())
    }

    /// Stores a new entity made of `bundle` (plan `plan`): its row, and its
    /// sparse values under the slot it gets. Tells no one.
    #[inline(always)]
    fn spawn_row<B: Bundle>(&mut self, plan: BundleId, bundle: B) -> (Entity, Location) {
        self.spawn_row_with(plan, |row| bundle.write_into(row))
    }

    /// As [`spawn_row`](Context::spawn_row), with the values written by
    /// `write`, which writes every element of bundle plan `plan` in order.
    #[inline(always)]
    pub(crate) fn spawn_row_with(
        &mut self,
        plan: BundleId,
        write: impl FnOnce(&mut RowWriter<'_>),
    ) -> (Entity, Location) {
        let Context {
            archetypes,
            entities,
            sparse,
            ..
        } = self;
        let slot = entities.next_slot();
        archetypes
            .spawn(plan, sparse, slot, |at| entities.alloc(at), write)
            .expect("a bundle writes every element of its plan")
    }

    /// Creates an entity from `bundle` and tells everyone concerned.
    #[inline]
    fn spawn<B: Bundle>(&mut self, plan: BundleId, bundle: B, unique: bool) -> Entity {
        let (entity, location) = self.spawn_row(plan, bundle);
        self.spawned(plan, entity, location, unique, |f| B::for_each_id(f));
        entity
    }

    /// After storage made `entity` (of bundle plan `plan`) at `location`:
    /// records it as the holder of its `unique` components and tells
    /// everyone concerned; `for_each_id` calls its argument with each
    /// component id, in the order `ComponentAdded` fires.
    #[inline(always)]
    pub(crate) fn spawned(
        &mut self,
        plan: BundleId,
        entity: Entity,
        location: Location,
        unique: bool,
        for_each_id: impl FnOnce(&mut dyn FnMut(ComponentId)),
    ) {
        if unique {
            self.uniques.hold(self.archetypes.get(location.archetype).set(), entity);
            self.uniques.hold(self.archetypes.bundle_sparse(plan), entity);
        }
        if !self.routes.is_idle() {
            self.created(entity, location, for_each_id);
        }
    }

    /// A new entity's route: its indices file it, `EntityCreated`, its
    /// groups' collectors and `Added` events, then `ComponentAdded` per
    /// component id `for_each_id` gives.
    fn created(&mut self, entity: Entity, location: Location, for_each_id: impl FnOnce(&mut dyn FnMut(ComponentId))) {
        let (routes, archetypes, sparse, mut dispatch) = self.split();
        let (route, membership) = routes.of_archetype(location.archetype, true, archetypes, dispatch.asker());
        let archetype = archetypes.get(location.archetype);
        let holding = Holding::Slot(sparse, entity.index());
        let gate = route
            .gated
            .then(|| Gate::spawning(membership, archetype.set(), true, holding));
        dispatch.file(route, gate.as_ref(), entity);
        if route.subscribers {
            dispatch.subscribers.emit(&ContextEvent::EntityCreated { entity });
        }
        let view = EntityRef::new(entity, archetype, location.row, sparse);
        dispatch.notify(route, gate.as_ref(), view, None);
        if route.subscribers {
            let value_of = value_of(archetype, location.row, sparse, entity);
            for_each_id(&mut |id| {
                if let Some(component) = value_of(id) {
                    dispatch
                        .subscribers
                        .emit(&ContextEvent::ComponentAdded { entity, component });
                }
            });
        }
    }

    /// Destroys the entity: fires `EntityWillBeDestroyed` (components still
    /// readable), group `Removed` for each group it was in, one
    /// `ComponentRemoved` per component, drops the components (those of
    /// `pooled` components go to the context's pools), then fires
    /// `EntityDestroyed`. If nothing retains the entity, its slot is freed
    /// and `EntityReleased` fires; the handle is stale afterwards. If
    /// something does ([`aerc`](crate::aerc)), the entity stays disabled
    /// (`aerc().is_enabled(e) == Ok(false)`) until its last release.
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
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive(entity));
        };
        // What was written to the entity goes to collectors before it leaves.
        self.flush_stamps(entity, at);
        if !self.subscribers.is_empty() {
            let view = EntityRef::new(entity, self.archetypes.get(at.archetype), at.row, &self.sparse);
            self.subscribers
                .emit(&ContextEvent::EntityWillBeDestroyed { entity: view });
        }
        // From here the removal must finish even if a handler panics: catch,
        // finish, then resume the panic.
        let notified = if self.routes.is_idle() {
            Ok(())
        } else {
            let (routes, archetypes, sparse, mut dispatch) = self.split();
            let (route, membership): (&Route, _) =
                routes.of_archetype(at.archetype, false, archetypes, dispatch.asker());
            let archetype = archetypes.get(at.archetype);
            let holding = Holding::Slot(sparse, entity.index());
            let gate = route
                .gated
                .then(|| Gate::spawning(membership, archetype.set(), false, holding));
            dispatch.file(route, gate.as_ref(), entity);
            panic::catch_unwind(AssertUnwindSafe(|| {
                let view = EntityRef::new(entity, archetype, at.row, sparse);
                dispatch.notify(route, gate.as_ref(), view, None);
                if route.subscribers {
                    for component in view.components() {
                        dispatch
                            .subscribers
                            .emit(&ContextEvent::ComponentRemoved { entity, component });
                    }
                }
            }))
        };
        let archetype = self.archetypes.get(at.archetype);
        self.uniques.release(archetype.set(), entity);
        for id in self.sparse.ids_of(entity.index()) {
            if self.uniques.holder(id) == Some(entity) {
                self.uniques.set_holder(id, None);
            }
        }
        // Bookkeeping first, then the drops: if a component's `Drop` panics, the
        // row is still removed (see `Archetypes::despawn`), the sparse values
        // too, and the records match.
        if let Some(displaced) = archetype.displaced_by_removal(at.row) {
            self.entities.relocate(displaced, at);
        }
        let freed = self.entities.disable(entity, self.retains.is_retained(entity.index()));
        let pools = &mut self.pools;
        let mut recycle = |id, value: &mut dyn Any| pools.put_any(id, value);
        let dropped = panic::catch_unwind(AssertUnwindSafe(|| {
            self.archetypes.despawn_recycling(at, Some(&mut recycle))
        }));
        self.sparse.remove_all(entity.index(), Some(&mut recycle));
        if let Err(payload) = dropped {
            panic::resume_unwind(payload);
        }
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
        let all: Vec<Entity> = self.entities.alive().collect();
        for entity in all {
            self.destroy_entity(entity).expect("every listed entity is alive");
        }
    }

    /// Destroys every entity (with events) and restarts creation indices at 0.
    /// Groups, entity indices and subscriptions are kept, and so are
    /// collectors, emptied after the destruction (what they collected from it
    /// is released, so every slot is free), and the storage's memory.
    ///
    /// What hears of it: subscribers and group handlers get every event of
    /// each destruction, as [`destroy_entity`](Context::destroy_entity)
    /// fires them; collectors, and so reactive systems, do not: their batch
    /// is emptied, so a renderer is not told that its entities went away.
    /// To let reactive systems see the destruction, call
    /// [`destroy_all_entities`](Context::destroy_all_entities), run them,
    /// then `reset`. The
    /// component pools are emptied (their values dropped); their bounds stay.
    /// New entities then take slots in the order a new context gives them,
    /// so they iterate in creation order, as in a new context.
    ///
    /// # Errors
    /// [`Error::EntitiesRetained`] if any entity, alive or destroyed, is
    /// retained (by a collector, a reactive system or your own
    /// [`retain`](Context::retain); the retains of entity indices do not
    /// count, as they go with the entities); nothing changes then. Clear reactive
    /// systems' collectors and release your retains first.
    pub fn reset(&mut self) -> Result<(), Error> {
        // Collectors hold (and retain) what was written to them so far.
        self.gather_all();
        self.check_resettable()?;
        self.destroy_all_entities();
        // What collectors gathered from the destruction goes too: a reset
        // context starts over, with every slot free.
        let collectors: Vec<CollectorId> = self.collectors().map(|c| c.id()).collect();
        for id in collectors {
            self.clear_collector(id)?;
        }
        self.entities.restart_creation_indices();
        self.entities.relink_free_slots();
        self.pools.clear();
        Ok(())
    }

    /// [`Error::EntitiesRetained`] if any entity is retained by something
    /// other than entity indices (whose retains go as the entities are
    /// destroyed).
    pub(crate) fn check_resettable(&self) -> Result<(), Error> {
        let count = self
            .entities
            .held()
            .filter(|&(entity, _)| {
                let index = entity.index();
                self.retains.user(index) != 0 || self.retains.internal(index) > self.indices.holding(entity)
            })
            .count();
        if count > 0 {
            return Err(Error::EntitiesRetained {
                context: self.name,
                count,
            });
        }
        Ok(())
    }
}

/// Where a batch creation hands its new entities: a `Vec` of their handles,
/// or a count.
trait Made {
    /// `n` entities are about to be made.
    fn reserve_for(&mut self, n: usize);
    /// `entity` was made.
    fn made(&mut self, entity: Entity);
}

impl Made for Vec<Entity> {
    fn reserve_for(&mut self, n: usize) {
        self.reserve_exact(n);
    }

    #[inline]
    fn made(&mut self, entity: Entity) {
        self.push(entity);
    }
}

impl Made for usize {
    fn reserve_for(&mut self, _: usize) {}

    #[inline]
    fn made(&mut self, _: Entity) {
        *self += 1;
    }
}
