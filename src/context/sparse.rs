//! Components kept out of archetypes (the `flag` and `sparse` storage
//! kinds): adding and taking them (the entity stays in its row, so the route
//! is the (archetype, component) toggle's, not a transition's), and the
//! Entitas-style flag calls `set_flag` (read a flag with `has`).
//!
//! `add`, `take`, `remove`, `replace`, `get` and `has` come here through the
//! ordinary calls when the component's kind says so; the events, their order
//! and the errors are the same as for an archetype component.

use super::Context;
use super::dispatch::{ConsumerView, Dispatch};
use crate::aerc::Retains;
use crate::collector::Collectors;
use crate::component::Component;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::event::ContextEvent;
use crate::id::{CollectorKey, ComponentId};
use crate::routes::{Gate, Holding, Membership, Route};
use crate::storage::{Archetype, ComponentRef, Location, SparseSets};

impl Context {
    /// [`add`](Context::add) of a component kept out of archetypes, whose id
    /// is `id` (the caller checked that the context accepts it). When nothing listens and
    /// the component is not unique, this is the entity lookup and the
    /// insert: the rest is out of line.
    #[inline(always)]
    pub(super) fn add_sparse<T: Component>(&mut self, entity: Entity, id: ComponentId, value: T) -> Result<(), Error> {
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive_for(entity, id));
        };
        if T::registration().is_unique() {
            // The entity may leave groups: what was written goes to collectors first.
            self.flush_stamps(entity, at);
            return self.add_sparse_routed(entity, at, value);
        }
        let insert = |sparse: &mut SparseSets, value| sparse.insert_with(id, entity.index(), value, T::component_info);
        let inserted = if self.routes.is_idle() {
            // Nothing listens, and nothing is stamped (stamps exist only
            // while a collector watches).
            insert(&mut self.sparse, value)
        } else {
            self.flush_stamps(entity, at);
            match self.toggle(entity, at, id, true) {
                Toggle::Lean(lean) => lean.change(|sparse| insert(sparse, value)),
                Toggle::Direct(route) => return self.add_sparse_direct(entity, at, value, route),
                Toggle::Routed => return self.add_sparse_routed(entity, at, value),
            }
        };
        inserted.map_err(|_| self.present(entity, id))
    }

    /// How to carry out adding (`added`) or removing sparse component `id`
    /// on live `entity` at `at`: see [`Toggle`].
    #[inline(always)]
    fn toggle(&mut self, entity: Entity, at: Location, id: ComponentId, added: bool) -> Toggle<'_> {
        let p = self.parts();
        let ask = ConsumerView::asker(p.collectors, p.indices, p.groups, p.subscribers);
        let index = p.routes.toggle_index(at.archetype, id, added, p.archetypes, ask);
        let route = p.routes.route(index);
        if route.lean {
            Toggle::Lean(LeanToggle {
                keys: route.all_collectors(),
                sparse: p.sparse,
                collectors: p.collectors,
                retains: p.retains,
                entity,
            })
        } else if route.is_direct() {
            Toggle::Direct(index)
        } else {
            Toggle::Routed
        }
    }

    /// [`add_sparse`](Context::add_sparse) whose route is direct (see
    /// [`Route::is_direct`]).
    #[inline(never)]
    fn add_sparse_direct<T: Component>(
        &mut self,
        entity: Entity,
        at: Location,
        value: T,
        route: u32,
    ) -> Result<(), Error> {
        let id = T::component_id();
        let insert = |sparse: &mut SparseSets| sparse.insert_with(id, entity.index(), value, T::component_info);
        let inserted = self.direct_toggle(entity, at, route).change(insert, |_| None);
        inserted.map_err(|_| self.present(entity, id))
    }

    /// [`take_sparse`](Context::take_sparse) whose route is direct (see
    /// [`Route::is_direct`]).
    #[inline(never)]
    fn take_sparse_direct<T: Component>(&mut self, entity: Entity, at: Location, route: u32) -> Result<T, Error> {
        let id = T::component_id();
        let take = |sparse: &mut SparseSets| sparse.take::<T>(id, entity.index()).ok_or(());
        let taken = self.direct_toggle(entity, at, route).change(take, removed_value::<T>);
        taken.map_err(|()| self.absent(entity, id))
    }

    /// The toggle along direct route `route` (as [`toggle`](Context::toggle)
    /// found it) of `entity` at `at`.
    #[inline(always)]
    fn direct_toggle(&mut self, entity: Entity, at: Location, route: u32) -> DirectToggle<'_> {
        let (routes, archetypes, sparse, dispatch) = self.split();
        DirectToggle {
            route: routes.route(route),
            archetype: archetypes.get(at.archetype),
            sparse,
            dispatch,
            entity,
            row: at.row,
        }
    }

    /// [`add_sparse`](Context::add_sparse) of a unique component, or with
    /// someone to tell: the toggle's route, looked up once, carried out
    /// around the insert.
    #[inline(never)]
    fn add_sparse_routed<T: Component>(&mut self, entity: Entity, at: Location, value: T) -> Result<(), Error> {
        let id = T::component_id();
        let unique = T::registration().is_unique();
        if unique {
            self.uniques.check_free_for(id, entity, self.name)?;
        }
        let (name, slot) = (self.name, entity.index());
        let (routes, archetypes, sparse, mut dispatch) = self.split();
        let present = || Error::ComponentAlreadyPresent {
            context: name,
            entity,
            component: id.name(),
        };
        if routes.is_idle() {
            sparse
                .insert_with(id, slot, value, T::component_info)
                .map_err(|_| present())?;
        } else {
            let (route, membership) = routes.of_toggle(at.archetype, id, true, archetypes, dispatch.asker());
            let archetype = archetypes.get(at.archetype);
            if route.files() {
                if sparse.contains(id, slot) {
                    return Err(present());
                }
                let holding = Holding::Slot(sparse, slot);
                let gate = route
                    .gated
                    .then(|| Gate::toggling(membership, archetype.set(), id, true, holding));
                let added = ComponentRef::new(T::component_info(), &value);
                dispatch.prepare_change(
                    (route, gate.as_ref()),
                    (archetype, at.row, sparse),
                    entity,
                    (id, Some(added)),
                )?;
            }
            sparse
                .insert_with(id, slot, value, T::component_info)
                .map_err(|_| present())?;
            toggled(
                dispatch,
                (route, membership),
                archetype,
                sparse,
                (entity, at.row),
                (id, None),
            );
        }
        if unique {
            self.uniques.set_holder(id, Some(entity));
        }
        Ok(())
    }

    /// [`Error::ComponentAlreadyPresent`] for component `id` of `entity`.
    #[cold]
    #[inline(never)]
    fn present(&self, entity: Entity, id: ComponentId) -> Error {
        Error::ComponentAlreadyPresent {
            context: self.name,
            entity,
            component: id.name(),
        }
    }

    /// [`take`](Context::take) of a component kept out of archetypes; as
    /// [`add_sparse`](Context::add_sparse), the lookup and the take when
    /// nothing listens.
    #[inline(always)]
    pub(super) fn take_sparse<T: Component>(&mut self, entity: Entity) -> Result<T, Error> {
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive_for(entity, T::component_id()));
        };
        let id = T::component_id();
        if T::registration().is_unique() {
            self.flush_stamps(entity, at);
            return self.take_sparse_routed(entity, at);
        }
        let slot = entity.index();
        let taken = if self.routes.is_idle() {
            // Nothing listens, and nothing is stamped.
            take_value::<T>(&mut self.sparse, id, slot)
        } else {
            self.flush_stamps(entity, at);
            match self.toggle(entity, at, id, false) {
                Toggle::Lean(lean) => lean.change(|sparse| take_value::<T>(sparse, id, slot)),
                Toggle::Direct(route) => return self.take_sparse_direct(entity, at, route),
                Toggle::Routed => return self.take_sparse_routed(entity, at),
            }
        };
        taken.map_err(|()| self.absent(entity, id))
    }

    /// [`take_sparse`](Context::take_sparse) of a unique component, or with
    /// someone to tell, as [`add_sparse_routed`](Context::add_sparse_routed).
    #[inline(never)]
    fn take_sparse_routed<T: Component>(&mut self, entity: Entity, at: Location) -> Result<T, Error> {
        let id = T::component_id();
        let (name, slot) = (self.name, entity.index());
        let (routes, archetypes, sparse, mut dispatch) = self.split();
        let absent = || Error::absent(name, entity, id.name());
        let value = if routes.is_idle() {
            sparse.take::<T>(id, slot).ok_or_else(absent)?
        } else {
            let (route, membership) = routes.of_toggle(at.archetype, id, false, archetypes, dispatch.asker());
            let archetype = archetypes.get(at.archetype);
            if route.files() {
                if !sparse.contains(id, slot) {
                    return Err(absent());
                }
                let holding = Holding::Slot(sparse, slot);
                let gate = route
                    .gated
                    .then(|| Gate::toggling(membership, archetype.set(), id, false, holding));
                dispatch.prepare_change((route, gate.as_ref()), (archetype, at.row, sparse), entity, (id, None))?;
            }
            let value = sparse.take::<T>(id, slot).ok_or_else(absent)?;
            let removed = ComponentRef::new(T::component_info(), &value);
            toggled(
                dispatch,
                (route, membership),
                archetype,
                sparse,
                (entity, at.row),
                (id, Some(removed)),
            );
            value
        };
        if T::registration().is_unique() {
            self.uniques.set_holder(id, None);
        }
        Ok(value)
    }

    /// Sets (`true`) or clears flag `T` on the entity, as Entitas' `isT =
    /// value`: adds or removes the zero-sized component, with the events of
    /// [`add`](Context::add) or [`remove`](Context::remove), and does
    /// nothing (no event, no error) when the entity already is as asked. Any
    /// zero-sized component with a `Default` (the value it adds) works; one
    /// declared `flag` never moves the entity.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`]), and the errors of
    /// `add` and `remove` (a declared context's [`Error::WrongContext`], a
    /// unique flag's [`Error::UniqueAlreadyHeld`], a primary index's
    /// [`Error::DuplicatePrimaryKey`]); nothing changes then.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Default)]
    /// struct Burning;
    /// reactecs::component!(flag Burning);
    ///
    /// let mut game = Context::new();
    /// let e = game.create_entity();
    /// let burning = game.add_collector(Matcher::all_of::<Burning>().added());
    /// game.set_flag::<Burning>(e, true)?;
    /// assert_eq!(game.collector(burning)?.entities(), [e]);
    /// game.collector_mut(burning)?.clear();
    /// game.set_flag::<Burning>(e, true)?; // already set: nothing happens
    /// assert!(game.has::<Burning>(e));
    /// assert!(game.collector(burning)?.is_empty()); // no event reached the collector
    /// game.set_flag::<Burning>(e, false)?;
    /// assert!(!game.has::<Burning>(e));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn set_flag<T: Component + Default>(&mut self, entity: Entity, value: bool) -> Result<(), Error> {
        const { assert!(size_of::<T>() == 0, "`set_flag` takes a zero-sized component") };
        // One `add` or `remove`, no lookup before it: a flag already set (or
        // already clear) is the one refusal that means "nothing to do".
        if value {
            match self.add(entity, T::default()) {
                Err(Error::ComponentAlreadyPresent { .. }) => Ok(()),
                done => done,
            }
        } else {
            match self.remove::<T>(entity) {
                Err(Error::ComponentAbsent { .. }) => Ok(()),
                done => done,
            }
        }
    }
}

/// Takes `slot`'s `T` of sparse component `id` out (`Err` if it has none):
/// inlined into each path of [`Context::take_sparse`] (a closure shared by
/// two paths was not).
#[inline(always)]
fn take_value<T: 'static>(sparse: &mut SparseSets, id: ComponentId, slot: u32) -> Result<T, ()> {
    sparse.take::<T>(id, slot).ok_or(())
}

/// A removed value, for the `Removed` events of a direct toggle.
fn removed_value<T: Component>(value: &T) -> Option<ComponentRef<'_>> {
    Some(ComponentRef::new(T::component_info(), value))
}

/// How a toggle is carried out, by its route.
enum Toggle<'c> {
    /// Only collectors to feed.
    Lean(LeanToggle<'c>),
    /// Group events to build, and nothing to check first: out of line, by
    /// `add_sparse_direct` or `take_sparse_direct`, along the route with
    /// this index.
    Direct(u32),
    /// Anything else: out of line, by `add_sparse_routed` or
    /// `take_sparse_routed`.
    Routed,
}

/// A toggle whose route only feeds collectors: the storage change, then
/// the collectors collect the entity (no event is built).
struct LeanToggle<'c> {
    keys: &'c [CollectorKey],
    sparse: &'c mut SparseSets,
    collectors: &'c mut Collectors,
    retains: &'c mut Retains,
    entity: Entity,
}

impl LeanToggle<'_> {
    /// Makes the change with `change`; if it succeeds, feeds the
    /// collectors.
    #[inline(always)]
    fn change<R, E>(self, change: impl FnOnce(&mut SparseSets) -> Result<R, E>) -> Result<R, E> {
        let changed = change(self.sparse)?;
        self.collectors.collect_each(self.keys, self.entity, self.retains);
        Ok(changed)
    }
}

/// A toggle whose route is direct but not lean (see [`Route::is_direct`]):
/// the storage change, then the group events to the steps' collectors and
/// handlers.
struct DirectToggle<'c> {
    route: &'c Route,
    archetype: &'c Archetype,
    sparse: &'c mut SparseSets,
    dispatch: Dispatch<'c>,
    entity: Entity,
    row: u32,
}

impl DirectToggle<'_> {
    /// Makes the change with `change`; if it succeeds, carries out the
    /// route, handing a removal's `Removed` events the value `removed`
    /// describes.
    #[inline(always)]
    fn change<R, E>(
        self,
        change: impl FnOnce(&mut SparseSets) -> Result<R, E>,
        removed: impl FnOnce(&R) -> Option<ComponentRef<'_>>,
    ) -> Result<R, E> {
        let DirectToggle {
            route,
            archetype,
            sparse,
            mut dispatch,
            entity,
            row,
        } = self;
        let changed = change(sparse)?;
        let view = EntityRef::new(entity, archetype, row, sparse);
        dispatch.notify(route, None, view, removed(&changed));
        Ok(changed)
    }
}

/// After sparse component `id` was added to `entity` (a row `row` of
/// `archetype`; `removed` `None`) or removed from it (`removed`, its
/// value): the toggle's route carried out (indices, then collectors and
/// group events), then `ComponentAdded` or `ComponentRemoved`.
fn toggled(
    mut dispatch: Dispatch<'_>,
    (route, membership): (&Route, &Membership),
    archetype: &Archetype,
    sparse: &SparseSets,
    (entity, row): (Entity, u32),
    (id, removed): (ComponentId, Option<ComponentRef<'_>>),
) {
    if route.lean {
        let keys = route.all_collectors();
        dispatch.collectors.collect_each(keys, entity, dispatch.retains);
        return;
    }
    let added = removed.is_none();
    let holding = Holding::Slot(sparse, entity.index());
    let gate = route
        .gated
        .then(|| Gate::toggling(membership, archetype.set(), id, added, holding));
    if !route.indices.is_empty() {
        dispatch.file(route, gate.as_ref(), entity);
    }
    if !route.steps.is_empty() {
        let view = EntityRef::new(entity, archetype, row, sparse);
        dispatch.notify(route, gate.as_ref(), view, removed);
    }
    if route.subscribers {
        toggled_event(&mut dispatch, sparse, entity, id, removed);
    }
}

/// `ComponentAdded` (`removed` `None`) or `ComponentRemoved` of sparse
/// component `id` of `entity`, to the subscribers (out of line: most routes
/// have none).
#[inline(never)]
fn toggled_event(
    dispatch: &mut Dispatch<'_>,
    sparse: &SparseSets,
    entity: Entity,
    id: ComponentId,
    removed: Option<ComponentRef<'_>>,
) {
    let event = match removed {
        Some(component) => Some(ContextEvent::ComponentRemoved { entity, component }),
        None => sparse
            .set(id)
            .and_then(|set| set.component_ref(entity.index()))
            .map(|component| ContextEvent::ComponentAdded { entity, component }),
    };
    if let Some(event) = event {
        dispatch.subscribers.emit(&event);
    }
}
