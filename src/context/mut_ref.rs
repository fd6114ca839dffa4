//! `Mut`: a component borrowed mutably from a context by
//! [`Context::get_mut`] and its kin, which keeps the entity indices keyed on
//! the component current.

use std::fmt;
use std::ops::{Deref, DerefMut};

use super::Context;
use crate::component::Component;
use crate::entity::Entity;
use crate::id::ComponentId;
use crate::routes::Holding;

/// An entity's component, borrowed mutably: what [`Context::get_mut`]
/// and [`EntityMut::get_mut`](crate::EntityMut::get_mut)
/// give. Use it as a `&mut T` (it dereferences to one: `*health = ..`,
/// `health.0 -= 3`, `&mut *health` for a function that takes `&mut T`).
///
/// Collectors see the write (the row is stamped when it is borrowed, as
/// for every `&mut` the context hands out; see the crate docs, "What sees a
/// write"). When an [`EntityIndex`](crate::EntityIndex) or
/// [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) keys on `T`, dropping
/// the `Mut` moves the entity to the keys of its new value, so the index is
/// current for the next call (a key a primary index has for another entity
/// is reported by the next read of the index:
/// [`Error::PrimaryKeyConflict`](crate::Error::PrimaryKeyConflict)). Forgetting
/// it (`std::mem::forget`) leaves the index behind until the next write to
/// the entity's `T`.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)] struct Cell(i32, i32);
/// reactecs::component!(Cell);
///
/// let mut game = Context::new();
/// let cells = game.add_index(EntityIndex::new("Cell", |c: &Cell| *c))?;
/// let e = game.create_entity_with(Cell(0, 0))?;
/// game.get_mut::<Cell>(e)?.1 = 5;
/// assert_eq!(game.index(cells)?.get(&Cell(0, 5)), [e]);
/// assert!(game.index(cells)?.get(&Cell(0, 0)).is_empty());
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct Mut<'a, T: Component> {
    inner: Inner<'a, T>,
}

enum Inner<'a, T> {
    /// No index keys on `T`: the value itself.
    Value(&'a mut T),
    /// An index keys on `T`: the value is looked up at each use (the
    /// context stays borrowed whole, to re-key the entity on drop).
    Keyed { context: &'a mut Context, entity: Entity },
}

impl<'a, T: Component> Mut<'a, T> {
    /// `value`, which no index keys on.
    #[inline]
    pub(super) fn value(value: &'a mut T) -> Self {
        Mut {
            inner: Inner::Value(value),
        }
    }

    /// Live `entity`'s `T` (it has one, already stamped if the write is
    /// tracked), which an index keys on.
    pub(super) fn keyed(context: &'a mut Context, entity: Entity) -> Self {
        Mut {
            inner: Inner::Keyed { context, entity },
        }
    }
}

impl<T: Component> Deref for Mut<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        match &self.inner {
            Inner::Value(value) => value,
            Inner::Keyed { context, entity } => context
                .get::<T>(*entity)
                .expect("a keyed `Mut` borrows its context whole, so its entity keeps its T"),
        }
    }
}

impl<T: Component> DerefMut for Mut<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.inner {
            Inner::Value(value) => value,
            Inner::Keyed { context, entity } => context
                .get_mut_unkeyed::<T>(*entity, false)
                .expect("a keyed `Mut` borrows its context whole, so its entity keeps its T"),
        }
    }
}

impl<T: Component> Drop for Mut<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if let Inner::Keyed { context, entity } = &mut self.inner {
            context.rekey(*entity, T::component_id());
        }
    }
}

impl<T: Component + fmt::Debug> fmt::Debug for Mut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// Compares the values.
impl<T: Component + PartialEq> PartialEq for Mut<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Context {
    /// After a write through `&mut` to component `id` of `entity`: the
    /// indices keyed on `id` move the entity to the keys of its new value
    /// (see [`Indices::rekey`](crate::index::Indices::rekey)). Nothing if the
    /// entity is gone or lacks the component.
    pub(super) fn rekey(&mut self, entity: Entity, id: ComponentId) {
        let Some(at) = self.entities.location(entity) else {
            return;
        };
        self.routes.sync(&self.archetypes);
        let archetype = self.archetypes.get(at.archetype);
        let slot = entity.index();
        let value = archetype
            .component_ref(id, at.row)
            .or_else(|| self.sparse.set(id)?.component_ref(slot));
        let Some(value) = value else {
            return;
        };
        self.indices.rekey(
            id,
            entity,
            (archetype.set(), Holding::Slot(&self.sparse, slot)),
            value,
            self.routes.membership(),
            &mut self.retains,
            self.name,
        );
    }
}
