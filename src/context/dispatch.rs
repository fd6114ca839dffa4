//! Carrying out a change's route, and subscriptions.
//!
//! A change to an entity runs in this order (see the [`event`](crate::event)
//! module for what each call fires):
//!
//! 1. before anything changes, the entity indices the route files the entity
//!    in make its keys (`Indices::prepare`): a refused primary key or a
//!    panicking key function leaves the context unchanged;
//! 2. storage changes (the row moves, is written, or is removed);
//! 3. phase one: the route's indices file or unfile the entity (every
//!    group's membership is the archetypes', so it is already current);
//! 4. phase two: first the entity lists of the groups that keep one (see
//!    [`Group::entities`](crate::Group::entities)) take the entity in or
//!    out, so a panicking handler cannot leave one behind; then, group by
//!    group in creation order, the route's collectors collect the entity,
//!    then the group's handlers get the group event;
//! 5. the context's subscribers get the component event.
//!
//! The route says who is concerned; this file only does what it says.

use super::Context;
use crate::aerc::Retains;
use crate::collector::Collectors;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::event::{ContextEvent, Subscribers};
use crate::group::{GroupEvent, GroupId, Groups};
use crate::id::{CollectorKey, ComponentId, IndexKey, SubscriptionId};
use crate::index::Indices;
use crate::pool::Pools;
use crate::routes::{Consumers, Gate, ReplaceRoute, Route, Routes};
use crate::storage::{Archetype, Archetypes, ComponentRef, SparseSets};

/// What the routes ask about the context's consumers.
pub(super) struct ConsumerView<'a> {
    collectors: &'a Collectors,
    indices: &'a Indices,
    groups: &'a Groups,
    subscribers: bool,
}

impl<'a> ConsumerView<'a> {
    /// A maker of views of these parts that holds copies of their
    /// addresses, so routes can ask for one only when they compile.
    #[inline(always)]
    pub(super) fn asker(
        collectors: &'a Collectors,
        indices: &'a Indices,
        groups: &'a Groups,
        subscribers: &'a Subscribers,
    ) -> impl FnOnce() -> ConsumerView<'a> + use<'a> {
        move || ConsumerView {
            collectors,
            indices,
            groups,
            subscribers: !subscribers.is_empty(),
        }
    }
}

impl Consumers for ConsumerView<'_> {
    fn collector_active(&self, key: CollectorKey) -> bool {
        self.collectors.is_active(key)
    }

    fn collector_keeps_removed(&self, key: CollectorKey) -> bool {
        self.collectors.keeps_removed(key)
    }

    fn index_active(&self, key: IndexKey) -> bool {
        self.indices.is_active(key)
    }

    fn group_handlers(&self, group: u32) -> bool {
        self.groups.has_handlers(group)
    }

    fn group_listed(&self, group: u32) -> bool {
        self.groups.is_listed(group)
    }

    fn subscribers(&self) -> bool {
        self.subscribers
    }
}

/// The parts of a context a route's consumers live in, borrowed apart from
/// its routes, storage and entity records.
pub(super) struct Dispatch<'a> {
    pub(super) name: &'static str,
    instance: u64,
    pub(super) retains: &'a mut Retains,
    pub(super) groups: &'a mut Groups,
    pub(super) collectors: &'a mut Collectors,
    pub(super) indices: &'a mut Indices,
    pub(super) subscribers: &'a mut Subscribers,
}

/// A context borrowed apart, field by field, for a change: its storage,
/// routes and pools beside the consumers a route reaches (what a
/// [`Dispatch`] is made of). Plain references, so a path that turns out
/// lean never builds a `Dispatch` (which costs ~10 instructions per
/// `replace`, measured with callgrind): it is made from these fields only
/// where a route needs one.
pub(super) struct Parts<'a> {
    pub(super) name: &'static str,
    pub(super) instance: u64,
    pub(super) retains: &'a mut Retains,
    pub(super) archetypes: &'a mut Archetypes,
    pub(super) sparse: &'a mut SparseSets,
    pub(super) routes: &'a mut Routes,
    pub(super) groups: &'a mut Groups,
    pub(super) collectors: &'a mut Collectors,
    pub(super) indices: &'a mut Indices,
    pub(super) subscribers: &'a mut Subscribers,
    pub(super) pools: &'a mut Pools,
}

impl<'a> Dispatch<'a> {
    pub(super) fn new(
        name: &'static str,
        instance: u64,
        retains: &'a mut Retains,
        groups: &'a mut Groups,
        collectors: &'a mut Collectors,
        indices: &'a mut Indices,
        subscribers: &'a mut Subscribers,
    ) -> Self {
        Dispatch {
            name,
            instance,
            retains,
            groups,
            collectors,
            indices,
            subscribers,
        }
    }

    /// What the routes ask, answered from these parts.
    #[inline]
    pub(super) fn view(&self) -> ConsumerView<'_> {
        ConsumerView {
            collectors: self.collectors,
            indices: self.indices,
            groups: self.groups,
            subscribers: !self.subscribers.is_empty(),
        }
    }

    /// A maker of [`view`](Dispatch::view)s, for routes to ask only when
    /// they compile.
    #[inline(always)]
    pub(super) fn asker<'s>(&'s self) -> impl FnOnce() -> ConsumerView<'s> + use<'s, 'a> {
        ConsumerView::asker(self.collectors, self.indices, self.groups, self.subscribers)
    }

    /// Step 1 for a route that files `entity` (`None`: one being created):
    /// the indices it joins make its keys from the values `value_of` gives.
    /// `gate` describes the change, for a gated route.
    pub(super) fn prepare_filing<'v>(
        &mut self,
        route: &Route,
        gate: Option<&Gate<'_>>,
        entity: Option<Entity>,
        value_of: impl Fn(ComponentId) -> Option<ComponentRef<'v>>,
    ) -> Result<(), Error> {
        let joined = route
            .indices
            .iter()
            .filter(|filing| filing.joined && Route::passes(filing.gated, filing.group, gate))
            .map(|filing| filing.key);
        self.indices.prepare(joined, entity, value_of, self.name)
    }

    /// Step 1 for a change of component `id` of live `entity` (row `row` of
    /// `archetype`, its sparse values in `sparse`), to `changed` (the added
    /// value; `None`: a removal): the indices the route files the entity in
    /// make its keys from its values as they will be. `gate` describes the
    /// change, for a gated route.
    pub(super) fn prepare_change(
        &mut self,
        (route, gate): (&Route, Option<&Gate<'_>>),
        (archetype, row, sparse): (&Archetype, u32, &SparseSets),
        entity: Entity,
        (id, changed): (ComponentId, Option<ComponentRef<'_>>),
    ) -> Result<(), Error> {
        let value_of = value_of(archetype, row, sparse, entity);
        self.prepare_filing(
            route,
            gate,
            Some(entity),
            |c| if c == id { changed } else { value_of(c) },
        )
    }

    /// Phase one: the route's indices file (joined) or unfile `entity`.
    #[inline(never)]
    pub(super) fn file(&mut self, route: &Route, gate: Option<&Gate<'_>>, entity: Entity) {
        for filing in route.indices.iter() {
            if !Route::passes(filing.gated, filing.group, gate) {
                continue;
            }
            if filing.joined {
                self.indices.file(filing.key, entity, self.retains);
            } else {
                self.indices.unfile(filing.key, entity, self.retains);
            }
        }
    }

    /// Phase two: the kept entity lists of the groups joined or left follow;
    /// then, per group joined or left, its collectors collect the entity,
    /// then its handlers get the event. `entity` is the entity as it is now
    /// (for a destruction, with every component still readable); `removed`,
    /// the value whose removal made it leave.
    #[inline]
    pub(super) fn notify(
        &mut self,
        route: &Route,
        gate: Option<&Gate<'_>>,
        entity: EntityRef<'_>,
        removed: Option<ComponentRef<'_>>,
    ) {
        if route.lists {
            for step in route.steps.iter() {
                if step.list && Route::passes(step.gated, step.group, gate) {
                    self.groups.list(step.group, entity.entity(), step.joined);
                }
            }
        }
        for step in route.steps.iter() {
            if !Route::passes(step.gated, step.group, gate) || !(step.emit || step.collects()) {
                continue;
            }
            let group = GroupId {
                context: self.instance,
                index: step.group,
            };
            let event = if step.joined {
                GroupEvent::Added { group, entity }
            } else {
                GroupEvent::Removed { group, entity, removed }
            };
            for &key in route.collectors(step) {
                self.collectors.deliver(key, &event, self.retains);
            }
            if step.emit {
                self.groups.emit(step.group, &event);
            }
        }
    }

    /// A replacement's indices file `entity` under the keys they prepared
    /// (but those of the groups in `skip`: gated groups the entity is not a
    /// member of).
    #[inline]
    pub(super) fn refile(&mut self, route: &ReplaceRoute, skip: &[u32], entity: Entity) {
        for key in reached(route, skip) {
            self.indices.refile(key, entity, self.retains);
        }
    }

    /// A replacement's events: `Updated` to the route's groups with
    /// handlers (but those in `skip`), then `ComponentReplaced` to the
    /// subscribers.
    pub(super) fn replaced(
        &mut self,
        route: &ReplaceRoute,
        skip: &[u32],
        entity: Entity,
        old: ComponentRef<'_>,
        new: ComponentRef<'_>,
    ) {
        for &index in route.groups.iter() {
            if skip.contains(&index) {
                continue;
            }
            let group = GroupId {
                context: self.instance,
                index,
            };
            self.groups.emit(
                index,
                &GroupEvent::Updated {
                    group,
                    entity,
                    old,
                    new,
                },
            );
        }
        if route.subscribers {
            self.subscribers
                .emit(&ContextEvent::ComponentReplaced { entity, old, new });
        }
    }
}

/// The values of live `entity`, a row `row` of `archetype`, by component id,
/// whatever their storage kind (what entity indices make keys from).
pub(super) fn value_of<'v>(
    archetype: &'v Archetype,
    row: u32,
    sparse: &'v SparseSets,
    entity: Entity,
) -> impl Fn(ComponentId) -> Option<ComponentRef<'v>> + use<'v> {
    move |id| {
        archetype
            .component_ref(id, row)
            .or_else(|| sparse.set(id)?.component_ref(entity.index()))
    }
}

impl Context {
    /// The context's routes, storage and consumers, borrowed apart.
    #[inline(always)]
    pub(super) fn split(&mut self) -> (&mut Routes, &mut Archetypes, &mut SparseSets, Dispatch<'_>) {
        let (routes, archetypes, sparse, dispatch, _) = self.split_pooled();
        (routes, archetypes, sparse, dispatch)
    }

    /// As [`split`](Context::split), with the component pools.
    #[inline(always)]
    pub(super) fn split_pooled(&mut self) -> (&mut Routes, &mut Archetypes, &mut SparseSets, Dispatch<'_>, &mut Pools) {
        let p = self.parts();
        let dispatch = Dispatch::new(
            p.name,
            p.instance,
            p.retains,
            p.groups,
            p.collectors,
            p.indices,
            p.subscribers,
        );
        (p.routes, p.archetypes, p.sparse, dispatch, p.pools)
    }

    /// The context borrowed apart into the [`Parts`] a change uses.
    #[inline(always)]
    pub(super) fn parts(&mut self) -> Parts<'_> {
        Parts {
            name: self.name,
            instance: self.instance,
            retains: &mut self.retains,
            archetypes: &mut self.archetypes,
            sparse: &mut self.sparse,
            routes: &mut self.routes,
            groups: &mut self.groups,
            collectors: &mut self.collectors,
            indices: &mut self.indices,
            subscribers: &mut self.subscribers,
            pools: &mut self.pools,
        }
    }

    /// Drops the compiled routes: call after any change to consumers (a
    /// group made, a collector or index added, removed, switched; a
    /// subscription made or ended).
    pub(crate) fn invalidate_routes(&mut self) {
        let (routes, _, _, dispatch) = self.split();
        routes.invalidate(&dispatch.view());
        self.sync_watched();
    }

    /// Calls `handler` with every event from now on, after the handlers
    /// subscribed before it. The handler sees read-only data and cannot reach
    /// the context. Handlers are `Send + Sync` so that the context is too (share
    /// state through `Arc<Mutex<_>>`, an `mpsc::Sender`, or atomics).
    ///
    /// # Example
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use reactecs::{Context, ContextEvent};
    /// struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let mut game = Context::new();
    /// let sink = log.clone();
    /// game.subscribe(move |event: &ContextEvent<'_>| {
    ///     if let ContextEvent::ComponentReplaced { old, new, .. } = event {
    ///         let (old, new) = (old.get::<Health>().unwrap().0, new.get::<Health>().unwrap().0);
    ///         sink.lock().unwrap().push((old, new));
    ///     }
    /// });
    /// let e = game.create_entity_with((Health(10),))?;
    /// game.replace(e, Health(7))?;
    /// assert_eq!(*log.lock().unwrap(), [(10, 7)]);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn subscribe(&mut self, handler: impl FnMut(&ContextEvent<'_>) + Send + Sync + 'static) -> SubscriptionId {
        let id = self.next_subscription_id();
        self.subscribers.add(id, Box::new(handler));
        self.invalidate_routes();
        id
    }

    /// Stops a subscription, to the context or to one of its groups.
    ///
    /// # Errors
    /// [`Error::UnknownSubscription`] if `id` is not subscribed here.
    pub fn unsubscribe(&mut self, id: SubscriptionId) -> Result<(), Error> {
        if id.context == self.instance && (self.subscribers.remove(id) || self.groups.unsubscribe(id)) {
            self.invalidate_routes();
            Ok(())
        } else {
            Err(Error::UnknownSubscription { context: self.name, id })
        }
    }
}

/// The indices of a replacement's route that reach the entity (those of
/// groups not in `skip`).
#[inline]
pub(super) fn reached<'r>(route: &'r ReplaceRoute, skip: &'r [u32]) -> impl Iterator<Item = crate::id::IndexKey> + 'r {
    let groups = if skip.is_empty() {
        &[][..]
    } else {
        &route.index_groups[..]
    };
    route
        .indices
        .iter()
        .enumerate()
        .filter(move |&(at, _)| groups.get(at).is_none_or(|group| !skip.contains(group)))
        .map(|(_, &key)| key)
}
