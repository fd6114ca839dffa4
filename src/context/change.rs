//! Changing components: `add`, `remove`, `take` (structural: the entity's
//! row moves along an archetype transition), and `replace`, `modify`,
//! `modify_with`, `modify_each` (the value changes in place, and observers
//! hear of it). Each change looks up its route and does what it says (see
//! `dispatch.rs`); a replacement of a component kept in archetype columns
//! reaches collectors through the row's change stamp (`tracking.rs`), the
//! rest of its route (indices, handlers, subscribers) at once.

use std::panic::{self, AssertUnwindSafe};

use super::Context;
use super::dispatch::{ConsumerView, Dispatch, reached};
use crate::component::Component;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::event::ContextEvent;
use crate::group::GroupId;
use crate::id::ComponentId;
use crate::query::{Access, QueryParam, ReadOnlyQueryParam};
use crate::routes::{Consumers, Gate, Holding, Membership, ReplaceRoute, Routes};
use crate::storage::{
    Archetypes, ColumnAccess, ComponentRef, ComponentSet, Location, Moved, RowAccess, SparseLend, SparseSets, Stamp,
};
use smallvec::SmallVec;

impl Context {
    /// Adds component `value` to the entity. Fires group `Added` / `Removed`
    /// for each group the entity joins or leaves, then `ComponentAdded`.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity), [`Error::WrongContext`] for a component this declared context does
    /// not accept, [`Error::ComponentAlreadyPresent`] if the
    /// entity has a `T` already (use [`replace`](Context::replace) to
    /// overwrite), [`Error::UniqueAlreadyHeld`] for a unique component another
    /// entity holds, or [`Error::DuplicatePrimaryKey`] if the change would give
    /// the entity a key a [`PrimaryEntityIndex`](crate::PrimaryEntityIndex)
    /// has for another entity; `value` is dropped and nothing changes.
    pub fn add<T: Component>(&mut self, entity: Entity, value: T) -> Result<(), Error> {
        let id = T::component_id();
        self.check_accepts(id)?;
        if T::STORAGE.is_sparse() {
            return self.add_sparse(entity, id, value);
        }
        let Some(from) = self.entities.location(entity) else {
            return Err(self.not_alive_for(entity, id));
        };
        let unique = T::registration().is_unique();
        if unique {
            self.uniques.check_free_for(id, entity, self.name)?;
        }
        let Some(transition) = self.archetypes.add_transition(from.archetype, id) else {
            return Err(Error::ComponentAlreadyPresent {
                context: self.name,
                entity,
                component: T::component_info().name(),
            });
        };
        self.routes.sync(&self.archetypes);
        if !self.routes.is_idle() {
            let (routes, archetypes, sparse, mut dispatch) = self.split();
            let (route, membership) = routes.of_move(transition, archetypes, dispatch.asker());
            if route.files() {
                let (source, added) = (
                    archetypes.get(from.archetype),
                    ComponentRef::new(T::component_info(), &value),
                );
                let target = archetypes.get(archetypes.transition(transition).to);
                let holding = Holding::Slot(sparse, entity.index());
                let gate = route
                    .gated
                    .then(|| Gate::moving(membership, source.set(), target.set(), holding));
                dispatch.prepare_change(
                    (route, gate.as_ref()),
                    (source, from.row, sparse),
                    entity,
                    (id, Some(added)),
                )?;
            }
        }
        // The row moves: what was written to it goes to collectors first.
        self.flush_stamps(entity, from);
        let moved = match self.archetypes.insert_along(transition, from, value) {
            Ok(moved) => moved,
            Err(_) => unreachable!(
                "`from` is the entity's live row and the transition adds a column of `T`s (ids and types \
                 correspond one to one: `assign_id` refuses another type's info)"
            ),
        };
        self.relocate(entity, from, moved);
        if unique {
            self.uniques.set_holder(id, Some(entity));
        }
        if !self.routes.is_idle() {
            self.after_move(entity, moved, None, id);
        }
        Ok(())
    }

    /// Records where a move put the entity, and the entity moved into its
    /// old row.
    #[inline(always)]
    fn relocate(&mut self, entity: Entity, from: Location, moved: Moved) {
        self.entities.relocate(entity, moved.to);
        if let Some(displaced) = moved.displaced {
            self.entities.relocate(displaced, from);
        }
    }

    /// The route of a move just made, carried out: indices, collectors and
    /// group events, then `ComponentAdded` (no `removed` value) or
    /// `ComponentRemoved` (of `removed`) of component `id`.
    fn after_move(&mut self, entity: Entity, moved: Moved, removed: Option<ComponentRef<'_>>, id: ComponentId) {
        let (routes, archetypes, sparse, mut dispatch) = self.split();
        let (route, membership) = routes.of_move(moved.transition, archetypes, dispatch.asker());
        if route.lean {
            let keys = route.all_collectors();
            dispatch.collectors.collect_each(keys, entity, dispatch.retains);
            return;
        }
        let archetype = archetypes.get(moved.to.archetype);
        let from = archetypes.get(archetypes.transition(moved.transition).from);
        let holding = Holding::Slot(sparse, entity.index());
        let gate = route
            .gated
            .then(|| Gate::moving(membership, from.set(), archetype.set(), holding));
        dispatch.file(route, gate.as_ref(), entity);
        let view = EntityRef::new(entity, archetype, moved.to.row, sparse);
        dispatch.notify(route, gate.as_ref(), view, removed);
        if route.subscribers {
            let event = match removed {
                Some(component) => Some(ContextEvent::ComponentRemoved { entity, component }),
                None => archetype
                    .component_ref(id, moved.to.row)
                    .map(|component| ContextEvent::ComponentAdded { entity, component }),
            };
            if let Some(event) = event {
                dispatch.subscribers.emit(&event);
            }
        }
    }

    /// Removes the entity's `T` and drops it (or, for a `pooled` component,
    /// puts it in the context's pool: see [`Recycle`](crate::Recycle)).
    /// Fires group `Removed` (with the value) / `Added` for each group the
    /// entity leaves or joins, then `ComponentRemoved` (with the value),
    /// before the drop.
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity), [`Error::ComponentAbsent`] if there is no `T`, or
    /// [`Error::DuplicatePrimaryKey`] if the removal would make the entity join
    /// a group (one with a NoneOf set) whose
    /// [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) has one of its keys
    /// for another entity; nothing changes then.
    pub fn remove<T: Component>(&mut self, entity: Entity) -> Result<(), Error> {
        let value = self.take::<T>(entity)?;
        self.pools.put(value);
        Ok(())
    }

    /// Removes the entity's `T` and gives it back. Fires the same events as
    /// [`remove`](Context::remove).
    ///
    /// # Errors
    /// As [`remove`](Context::remove).
    pub fn take<T: Component>(&mut self, entity: Entity) -> Result<T, Error> {
        if T::STORAGE.is_sparse() {
            return self.take_sparse(entity);
        }
        let id = T::component_id();
        let Some(from) = self.entities.location(entity) else {
            return Err(self.not_alive_for(entity, id));
        };
        let Some(transition) = self.archetypes.remove_transition(from.archetype, id) else {
            return Err(self.absent(entity, id));
        };
        self.routes.sync(&self.archetypes);
        if !self.routes.is_idle() {
            let (routes, archetypes, sparse, mut dispatch) = self.split();
            let (route, membership) = routes.of_move(transition, archetypes, dispatch.asker());
            if route.files() {
                let source = archetypes.get(from.archetype);
                let target = archetypes.get(archetypes.transition(transition).to);
                let holding = Holding::Slot(sparse, entity.index());
                let gate = route
                    .gated
                    .then(|| Gate::moving(membership, source.set(), target.set(), holding));
                dispatch.prepare_change((route, gate.as_ref()), (source, from.row, sparse), entity, (id, None))?;
            }
        }
        self.flush_stamps(entity, from);
        let Some((value, moved)) = self.archetypes.take_along::<T>(transition, from) else {
            unreachable!(
                "`from` is the entity's live row and the transition takes out a column of `T`s (ids and \
                 types correspond one to one: `assign_id` refuses another type's info)"
            );
        };
        self.relocate(entity, from, moved);
        if T::registration().is_unique() {
            self.uniques.set_holder(id, None);
        }
        if !self.routes.is_idle() {
            let removed = ComponentRef::new(T::component_info(), &value);
            self.after_move(entity, moved, Some(removed), id);
        }
        Ok(value)
    }

    /// Sets the entity's `T` to `value`. If it had a `T`, fires group `Updated`
    /// for each group watching `T` and `ComponentReplaced` (old and new value),
    /// then drops the old value (or pools it, for a `pooled` component); if
    /// not, this is an [`add`](Context::add). A zero-sized `T` (a tag or
    /// flag) is never updated: replacing one the entity has changes nothing
    /// and fires nothing (as setting an Entitas flag that is already set).
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`] for a destroyed, retained
    /// entity); [`Error::DuplicatePrimaryKey`] if the new value has a key a
    /// [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) has for another
    /// entity (the old value stays, nothing changes); when `T` is absent, as
    /// [`add`](Context::add).
    #[inline(always)]
    pub fn replace<T: Component>(&mut self, entity: Entity, value: T) -> Result<(), Error> {
        let id = T::component_id();
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive_for(entity, id));
        };
        let column = if T::STORAGE.is_sparse() {
            if !self.sparse.contains(id, entity.index()) {
                return self.add(entity, value);
            }
            None
        } else {
            let Some(column) = self.archetypes.get(at.archetype).column_index(id) else {
                return self.add(entity, value);
            };
            Some(column)
        };
        if T::component_info().is_tag() {
            // A zero-sized value cannot differ from the one there: a tag is
            // never updated (as an Entitas flag set again changes nothing).
            drop(value);
            return Ok(());
        }
        // Borrowed apart into `Parts`, not through `split`, so the lean
        // paths never build a `Dispatch` (see `Parts`).
        let p = self.parts();
        if p.routes.is_idle() {
            let Some((slot, _)) = value_slot::<T>(p.archetypes, p.sparse, at, column, entity) else {
                return Err(Error::absent(p.name, entity, id.name()));
            };
            p.pools.put(std::mem::replace(slot, value));
            return Ok(());
        }
        let ask = ConsumerView::asker(p.collectors, p.indices, p.groups, p.subscribers);
        let (route, skip) = replace_route(p.routes, p.archetypes, p.sparse, ask, (entity, at), (id, column));
        let Some((slot, stamp)) = value_slot::<T>(p.archetypes, p.sparse, at, column, entity) else {
            return Err(Error::absent(p.name, entity, id.name()));
        };
        if route.lean {
            p.pools.put(std::mem::replace(slot, value));
            stamp.mark();
            return Ok(());
        }
        let dispatch = Dispatch::new(
            p.name,
            p.instance,
            p.retains,
            p.groups,
            p.collectors,
            p.indices,
            p.subscribers,
        );
        p.pools
            .put(replace_routed(dispatch, route, &skip, entity, (slot, stamp), value)?);
        Ok(())
    }

    /// Changes the entity's `T` in place through `&mut`, and tells observers
    /// as [`replace`](Context::replace) does (group `Updated`,
    /// `ComponentReplaced` with the old and the new value, entity indices
    /// keyed on `T` re-keyed), for one entity lookup. The old value is cloned
    /// only when someone is to see it (a group handler, a subscriber) or an
    /// index keyed on `T` may refuse the new one. Returns what `f` returns.
    ///
    /// For a zero-sized `T` (a tag or flag), `f` runs and nobody hears of
    /// it: a tag is never updated (see [`replace`](Context::replace)).
    ///
    /// If `f` panics, the value keeps what `f` wrote, no event fires and no
    /// collector sees it (the entity is stamped as changed only once the
    /// write stands: after `f`, and after the indices took the new key).
    ///
    /// # Errors
    /// [`Error::StaleEntity`] ([`Error::EntityDisabled`]),
    /// [`Error::ComponentAbsent`] if there is no `T`;
    /// [`Error::DuplicatePrimaryKey`] if the new value has a key a primary
    /// index has for another entity: the old value is put back and nothing
    /// fires.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Debug, PartialEq)] struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let mut game = Context::new();
    /// let hurt = game.add_collector(Matcher::all_of::<Health>().updated());
    /// let e = game.create_entity_with(Health(10))?;
    /// let left = game.modify(e, |h: &mut Health| { h.0 -= 3; h.0 })?;
    /// assert_eq!(left, 7);
    /// assert_eq!(game.collector(hurt)?.entities(), [e]);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn modify<T, R>(&mut self, entity: Entity, f: impl FnOnce(&mut T) -> R) -> Result<R, Error>
    where
        T: Component + Clone,
    {
        self.modify_with::<T, (), R>(entity, |value, ()| f(value))
    }

    /// As [`modify`](Context::modify), passing `f` the entity's `Q` items
    /// too (e.g. `&Velocity`), all found with the one lookup:
    /// `game.modify_with::<Position, &Velocity, _>(e, |p, v| p.x += v.x)`.
    /// The `_` is what `f` returns (`R`): Rust takes a turbofish whole, and
    /// `Q` cannot be inferred from the closure (its items borrow), so name
    /// `T` and `Q` and leave `R` to inference. Over several entities,
    /// [`modify_each`](Context::modify_each) takes only `T` and `Q`.
    ///
    /// # Errors
    /// As [`modify`](Context::modify); [`Error::ComponentAbsent`] names the
    /// first component of `Q` the entity lacks; [`Error::QueryAliasing`] if
    /// `Q` reads `T`.
    #[inline(always)]
    pub fn modify_with<T, Q, R>(&mut self, entity: Entity, f: impl FnOnce(&mut T, Q::Item<'_>) -> R) -> Result<R, Error>
    where
        T: Component + Clone,
        Q: ReadOnlyQueryParam,
    {
        let id = T::component_id();
        let Some(at) = self.entities.location(entity) else {
            return Err(self.not_alive_for(entity, id));
        };
        let archetype = self.archetypes.get(at.archetype);
        let column = if T::STORAGE.is_sparse() {
            if !self.sparse.contains(id, entity.index()) {
                return Err(self.absent(entity, id));
            }
            None
        } else {
            let Some(column) = archetype.column_index(id) else {
                return Err(self.absent(entity, id));
            };
            Some(column)
        };
        let p = self.parts();
        let mut skip = Skipped::new();
        // A tag cannot change: nobody hears of `f`.
        let route = if p.routes.is_idle() || T::component_info().is_tag() {
            None
        } else {
            let ask = ConsumerView::asker(p.collectors, p.indices, p.groups, p.subscribers);
            let (route, skipped) = replace_route(p.routes, p.archetypes, p.sparse, ask, (entity, at), (id, column));
            skip = skipped;
            Some(route)
        };
        let (name, archetypes, sparse) = (p.name, &mut *p.archetypes, &mut *p.sparse);
        // The row's change stamp is marked once the write stands.
        let (value, items, stamp) = match column {
            // A flag or sparse component in `Q`: through a plan, as a query.
            _ if Q::SPARSE => fetch_with_sparse::<T, Q>(archetypes, sparse, (entity, at), name)?,
            Some(column) => {
                let split = RowAccess::split::<T>(archetypes.lend_mut(at.archetype), column, at.row);
                let Some((value, Some(items), stamp)) =
                    split.map(|(value, row)| (value, Q::read_row(&row), row.stamp()))
                else {
                    // The row refuses a missing component and aliasing: say which.
                    return Err(cannot_fetch::<T, Q>(
                        archetypes.get(at.archetype).set(),
                        sparse,
                        name,
                        entity,
                    ));
                };
                (value, items, stamp)
            }
            None => {
                let archetype = archetypes.get(at.archetype);
                let row = RowAccess::shared(archetype, at.row)
                    .expect("the entity's row is live: `at` is its location, read above");
                let Some(items) = Q::read_row(&row) else {
                    return Err(cannot_fetch::<T, Q>(archetype.set(), sparse, name, entity));
                };
                // Present (checked above): `None` only if the set does not hold `T`s.
                let tick = archetypes.change_tick();
                let Some((value, stamp)) = sparse.get_mut::<T>(id, entity.index(), tick) else {
                    return Err(Error::absent(name, entity, id.name()));
                };
                (value, items, stamp)
            }
        };
        let result = match route {
            None => f(value, items),
            Some(route) if route.lean => {
                let result = f(value, items);
                stamp.mark();
                result
            }
            Some(route) => {
                let old = p.pools.clone_of(value);
                let result = f(value, items);
                let mut dispatch = Dispatch::new(
                    name,
                    p.instance,
                    p.retains,
                    p.groups,
                    p.collectors,
                    p.indices,
                    p.subscribers,
                );
                p.pools
                    .put(changed(&mut dispatch, route, &skip, entity, (value, stamp), old, id)?);
                result
            }
        };
        Ok(result)
    }

    /// [`modify_each`](Context::modify_each) over the members of `group`:
    /// archetype by archetype where no group gate or sparse storage is in
    /// the way, else entity by entity.
    pub(super) fn modify_group<T, Q>(
        &mut self,
        group: GroupId,
        mut f: impl FnMut(&mut T, Q::Item<'_>),
    ) -> Result<usize, Error>
    where
        T: Component + Clone,
        Q: ReadOnlyQueryParam,
    {
        let index = self.groups.lookup(group, self.name)?;
        let id = T::component_id();
        let mut access = Access::of::<Q>();
        access.add(T::component_info(), true, true);
        let plan = access.plan(self.name)?;
        self.routes.sync(&self.archetypes);
        if T::STORAGE.is_sparse() || Q::SPARSE || self.routes.membership().group(index).is_gated() {
            return self.modify_each_entity::<T, Q>(group, f);
        }
        let mut visited = 0;
        let (routes, archetypes, sparse, mut dispatch, pools) = self.split_pooled();
        let idle = ReplaceRoute::idle();
        for at in 0.. {
            let Some(&archetype) = routes.membership().group(index).archetypes.get(at) else {
                break;
            };
            let target = archetypes.get(archetype);
            let Some(column) = target.column_index(id) else {
                continue;
            };
            if target.is_empty() || !access.fits(target.set()) {
                continue;
            }
            let (route, membership) = if routes.is_idle() {
                (&idle, None)
            } else {
                let columns = target.column_count();
                let set = || target.set();
                let (route, membership) =
                    routes.of_replace(archetype, Some(column), id, columns, set, dispatch.asker());
                (route, Some(membership))
            };
            // Groups of the route that check entities (other than `group`,
            // which does not): asked per entity, of the archetype's set.
            let gated = membership
                .filter(|_| !route.gated.is_empty())
                .map(|membership| (membership, target.set().clone()));
            // `plan` takes `Q`'s columns, then `T`'s.
            let mut columns = ColumnAccess::exclusive(
                archetypes.lend_mut(archetype),
                SparseLend::shared(sparse),
                plan.columns(),
            );
            let lens = columns.chunk_lens();
            let mut entities = columns.entities();
            // The archetype has `T` and `Q`'s components, and the plan has no
            // aliasing: `None` only if a column does not hold its component's
            // type, whose entities are then passed over as lacking it.
            // Rows are stamped as written (below), not as handed out: a
            // refused key or a panic leaves the rest unchanged and unseen.
            let (Some(mut state), Some(Some(mut values))) = (Q::fetch(&mut columns), columns.write_tracked::<T>(false))
            else {
                continue;
            };
            for len in lens {
                let chunk = values.next().unwrap_or_default();
                let rows = Q::rows(Q::next_chunk(&mut state, len), len);
                let entity_chunk = entities.next().unwrap_or_default();
                visited += chunk.len();
                if route.lean {
                    // Nothing to clone, check or show: write the chunk, then
                    // stamp what was written (if `f` panics, the rows
                    // written before, as they would have been one by one).
                    let mut written = 0;
                    let wrote = panic::catch_unwind(AssertUnwindSafe(|| {
                        for (value, item) in chunk.iter_mut().zip(rows) {
                            f(value, item);
                            written += 1;
                        }
                    }));
                    values.mark(0..written);
                    if let Err(payload) = wrote {
                        panic::resume_unwind(payload);
                    }
                    continue;
                }
                for (row, ((value, item), &entity)) in chunk.iter_mut().zip(rows).zip(entity_chunk).enumerate() {
                    let skip: Skipped = match &gated {
                        None => Skipped::new(),
                        Some((membership, set)) => skipped(route, membership, set, sparse, entity),
                    };
                    let old = pools.clone_of(value);
                    f(value, item);
                    let stamp = values.stamp_at(row);
                    pools.put(changed(&mut dispatch, route, &skip, entity, (value, stamp), old, id)?);
                }
            }
        }
        Ok(visited)
    }

    /// `modify_each` entity by entity, for a group with a per-entity check
    /// or a `T` kept out of archetypes: each member with `T` and `Q`'s
    /// components goes through [`modify_with`](Context::modify_with). The
    /// members come from the group's cached list (no allocation while the
    /// group's entities stay the same).
    fn modify_each_entity<T, Q>(
        &mut self,
        group: GroupId,
        mut f: impl FnMut(&mut T, Q::Item<'_>),
    ) -> Result<usize, Error>
    where
        T: Component + Clone,
        Q: ReadOnlyQueryParam,
    {
        let members = self.group(group)?.entities();
        let id = T::component_id();
        let needs = Access::of::<Q>();
        let mut visited = 0;
        for &entity in members.iter() {
            let has_sparse = |id| self.sparse.contains(id, entity.index());
            let fits = self.entities.location(entity).is_some_and(|at| {
                needs
                    .missing(self.archetypes.get(at.archetype).set(), has_sparse)
                    .is_none()
            });
            if !fits || !self.has_id(entity, id) {
                continue;
            }
            self.modify_with::<T, Q, ()>(entity, |value, items| f(value, items))?;
            visited += 1;
        }
        Ok(visited)
    }
}

/// The groups a replacement's gated route does not reach (the entity is
/// not a member): few, so kept inline.
type Skipped = SmallVec<[u32; 4]>;

/// The gated groups of `route` that the entity, a row of an archetype with
/// components `set`, is not a member of (none when the route has no gated
/// group).
#[inline(always)]
pub(super) fn skipped(
    route: &ReplaceRoute,
    membership: &Membership,
    set: &ComponentSet,
    sparse: &SparseSets,
    entity: Entity,
) -> Skipped {
    if route.gated.is_empty() {
        return Skipped::new();
    }
    let gate = Gate::staying(membership, set, Holding::Slot(sparse, entity.index()));
    route
        .gated
        .iter()
        .copied()
        .filter(|&group| !gate.passes(group))
        .collect()
}

/// The route of a replace of component `id` (in column `column` of its
/// row, or kept out of archetypes: `None`) of `entity` at `at`, compiled on
/// first use (asking `ask` about the consumers), and the gated groups the
/// entity is not a member of (see [`skipped`]).
#[inline(always)]
pub(super) fn replace_route<'r, C: Consumers>(
    routes: &'r mut Routes,
    archetypes: &Archetypes,
    sparse: &SparseSets,
    ask: impl FnOnce() -> C,
    (entity, at): (Entity, Location),
    (id, column): (ComponentId, Option<usize>),
) -> (&'r ReplaceRoute, Skipped) {
    let archetype = archetypes.get(at.archetype);
    let (route, membership) = routes.of_replace(
        at.archetype,
        column,
        id,
        archetype.column_count(),
        || archetype.set(),
        ask,
    );
    (route, skipped(route, membership, archetype.set(), sparse, entity))
}

/// The entity's `T`, which it has: in column `column` of its row, or (for
/// `None`) in `T`'s sparse set; with the row's change stamp, to mark once
/// the write stands. `None` only if that column or set does not hold `T`s
/// (refused as absent, like `get`).
#[inline(always)]
fn value_slot<'a, T: Component>(
    archetypes: &'a mut Archetypes,
    sparse: &'a mut SparseSets,
    at: Location,
    column: Option<usize>,
    entity: Entity,
) -> Option<(&'a mut T, Stamp<'a>)> {
    match column {
        Some(column) => archetypes.lend_mut(at.archetype).into_mut_deferred::<T>(column, at.row),
        None => sparse.get_mut::<T>(T::component_id(), entity.index(), archetypes.change_tick()),
    }
}

/// Why `T` (written) and `Q` could not be fetched from an entity whose
/// components are `set`: [`Error::QueryAliasing`] or
/// [`Error::ComponentAbsent`].
#[cold]
#[inline(never)]
fn cannot_fetch<T: Component, Q: QueryParam>(
    set: &ComponentSet,
    sparse: &SparseSets,
    context: &'static str,
    entity: Entity,
) -> Error {
    let mut access = Access::of::<Q>();
    access.add(T::component_info(), true, true);
    if let Err(aliasing) = access.plan(context) {
        return aliasing;
    }
    let missing = access.missing(set, |id| sparse.contains(id, entity.index()));
    Error::absent(context, entity, missing.unwrap_or(T::component_id()).name())
}

/// `entity`'s (at `at`) `T`, mutably, and its `Q` items, for a `Q` that
/// fetches a flag or sparse component: through a plan of `Q`'s components
/// then `T`, as a query takes them. [`Error::QueryAliasing`] if `Q` names
/// `T`, [`Error::ComponentAbsent`] for the first component the entity lacks.
fn fetch_with_sparse<'a, T: Component, Q: QueryParam>(
    archetypes: &'a mut Archetypes,
    sparse: &'a mut SparseSets,
    (entity, at): (Entity, Location),
    context: &'static str,
) -> Result<(&'a mut T, Q::Item<'a>, Stamp<'a>), Error> {
    let mut access = Access::of::<Q>();
    access.add(T::component_info(), true, true);
    let plan = access.plan(context)?;
    let set = archetypes.get(at.archetype).set();
    if let Some(missing) = access.missing(set, |id| sparse.contains(id, entity.index())) {
        return Err(Error::absent(context, entity, missing.name()));
    }
    let mut columns = ColumnAccess::exclusive_row(archetypes.lend_mut(at.archetype), sparse, plan.columns());
    // Present and not aliased (checked above): `None` only if a column or set
    // does not hold its component's type, refused as absent, like `get`.
    let mismatched = || Error::absent(context, entity, T::component_info().name());
    let items = Q::fetch_row(&mut columns, at.row).ok_or_else(mismatched)?;
    let (value, stamp) = if T::STORAGE.is_sparse() {
        let written = columns.write_sparse_row_deferred::<T>(at.row).flatten();
        written.ok_or_else(mismatched)?
    } else {
        let written = columns.write_row_deferred::<T>(at.row).flatten();
        written.ok_or_else(mismatched)?
    };
    Ok((value, items, stamp))
}

/// `replace` of `entity`'s `slot` by `value` along a route that re-keys
/// indices or shows values (out of line: the common routes are the lean
/// ones). The indices check the new keys before anything changes.
/// Gives back the old value.
#[inline(never)]
fn replace_routed<T: Component>(
    mut dispatch: Dispatch<'_>,
    route: &ReplaceRoute,
    skip: &[u32],
    entity: Entity,
    (slot, stamp): (&mut T, Stamp<'_>),
    value: T,
) -> Result<T, Error> {
    if !route.indices.is_empty() {
        let id = T::component_id();
        let new = ComponentRef::new(T::component_info(), &value);
        let keys = reached(route, skip);
        let name = dispatch.name;
        dispatch
            .indices
            .prepare(keys, Some(entity), |c| (c == id).then_some(new), name)?;
    }
    let old = std::mem::replace(slot, value);
    dispatch.refile(route, skip, entity);
    stamp.mark();
    if route.shows_values() {
        let new = ComponentRef::new(T::component_info(), &*slot);
        dispatch.replaced(route, skip, entity, new.sibling(&old), new);
    }
    Ok(old)
}

/// After `value`, component `id` of `entity`, was changed in place from
/// `old`, along a route that is not lean: the route's indices check and file
/// the new keys (a refused key puts `old` back and is the error; a panicking
/// key function puts `old` back and the panic goes on), its collectors
/// collect the entity, and its events fire. Gives back `old`.
#[inline]
fn changed<T: Component>(
    dispatch: &mut Dispatch<'_>,
    route: &ReplaceRoute,
    skip: &[u32],
    entity: Entity,
    (value, stamp): (&mut T, Stamp<'_>),
    old: T,
    id: ComponentId,
) -> Result<T, Error> {
    if !route.indices.is_empty() {
        let new = ComponentRef::new(T::component_info(), &*value);
        let name = dispatch.name;
        let keys = reached(route, skip);
        let prepared = panic::catch_unwind(AssertUnwindSafe(|| {
            dispatch
                .indices
                .prepare(keys, Some(entity), |c| (c == id).then_some(new), name)
        }));
        match prepared {
            Ok(Ok(())) => dispatch.refile(route, skip, entity),
            Ok(Err(refused)) => {
                *value = old;
                return Err(refused);
            }
            Err(payload) => {
                *value = old;
                panic::resume_unwind(payload);
            }
        }
    }
    stamp.mark();
    if route.shows_values() {
        let new = ComponentRef::new(T::component_info(), &*value);
        dispatch.replaced(route, skip, entity, new.sibling(&old), new);
    }
    Ok(old)
}
