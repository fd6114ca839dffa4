//! `EntityRef`: a read-only view of one live entity and its components.

use std::fmt;

use crate::bundle::ComponentTuple;
use crate::component::{Component, typed_id};
use crate::entity::Entity;
use crate::id::ComponentId;
use crate::query_param::{Access, ReadOnlyQueryParam};
use crate::storage::{Archetype, ColumnAccess, ComponentRef, RowAccess, SparseLend, SparseSets};

/// A read-only view of a live entity: its handle and its components.
///
/// Get one from [`Context::entity`](crate::Context::entity); events about an
/// entity that is about to be destroyed carry one too. Its `Debug` lists the
/// components, using each type's own `Debug` where it has one.
///
/// # Example
/// ```
/// use reactecs::Context;
/// #[derive(Debug)] struct Position { x: f32, y: f32 }
/// struct Secret(u64);
/// reactecs::component!(Position, Secret);
///
/// let mut game = Context::new();
/// let e = game.create_entity_with((Position { x: 1.0, y: 2.0 }, Secret(7))).unwrap();
/// let view = game.entity(e).unwrap();
/// assert_eq!(view.get::<Position>().map(|p| p.x), Some(1.0));
/// assert_eq!(view.component_names().collect::<Vec<_>>(), ["Position", "Secret"]);
/// assert_eq!(format!("{view:?}"), format!("{e} {{Position {{ x: 1.0, y: 2.0 }}, Secret(..)}}"));
/// ```
#[derive(Clone, Copy)]
pub struct EntityRef<'a> {
    entity: Entity,
    archetype: &'a Archetype,
    row: u32,
    /// Where the entity's flag and sparse components are (under its slot).
    sparse: &'a SparseSets,
}

impl<'a> EntityRef<'a> {
    pub(crate) fn new(entity: Entity, archetype: &'a Archetype, row: u32, sparse: &'a SparseSets) -> Self {
        EntityRef {
            entity,
            archetype,
            row,
            sparse,
        }
    }

    /// The entity's handle.
    pub fn entity(&self) -> Entity {
        self.entity
    }

    /// The entity's `T`, if it has one.
    pub fn get<T: Component>(&self) -> Option<&'a T> {
        if T::STORAGE.is_sparse() {
            self.sparse.get(T::component_id(), self.entity.index())
        } else {
            self.archetype.get(typed_id::<T>(), self.row)
        }
    }

    /// Whether the entity has a `T`.
    pub fn has<T: Component>(&self) -> bool {
        self.has_component(T::component_id())
    }

    /// Whether the entity has the component with id `id`.
    pub fn has_component(&self, id: ComponentId) -> bool {
        self.archetype.set().contains(id) || self.sparse.contains(id, self.entity.index())
    }

    /// Whether the entity has every component of `C`, e.g.
    /// `has_all::<(Position, Velocity)>()`. True for `()`.
    pub fn has_all<C: ComponentTuple>(&self) -> bool {
        let mut all = true;
        C::for_each_id(|id| all &= self.has_component(id));
        all
    }

    /// Whether the entity has at least one component of `C`.
    pub fn has_any<C: ComponentTuple>(&self) -> bool {
        let mut any = false;
        C::for_each_id(|id| any |= self.has_component(id));
        any
    }

    /// The number of components.
    pub fn len(&self) -> usize {
        self.archetype.set().len() + self.sparse.ids_of(self.entity.index()).count()
    }

    /// Whether the entity has no components.
    pub fn is_empty(&self) -> bool {
        self.archetype.set().is_empty() && !self.sparse.any_of(self.entity.index())
    }

    /// Views of every component, by increasing component id (whatever
    /// their storage kind).
    pub fn components(&self) -> impl Iterator<Item = ComponentRef<'a>> + use<'a> {
        let sparse = self.sparse.component_refs(self.entity.index());
        merge_by_id(self.archetype.component_refs(self.row), sparse, |c| c.id())
    }

    /// The component ids, increasing.
    pub fn component_ids(&self) -> impl Iterator<Item = ComponentId> + use<'a> {
        let sparse = self.sparse.ids_of(self.entity.index());
        merge_by_id(self.archetype.component_infos().map(|info| info.id()), sparse, |&id| id)
    }

    /// Several of the entity's components at once, as a read-only query's
    /// item: `view.query::<(&Position, Option<&Velocity>)>()`. `None` if the
    /// entity lacks a component `Q` requires (one not in an `Option`), as
    /// [`get`](EntityRef::get) answers for one.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug, PartialEq)] struct Mass(f32);
    /// #[derive(Debug, PartialEq)] struct Charge(f32);
    /// reactecs::component!(Mass, Charge);
    ///
    /// let mut game = Context::new();
    /// let e = game.create_entity_with(Mass(2.0))?;
    /// let view = game.entity(e)?;
    /// assert_eq!(view.query::<(&Mass, Option<&Charge>)>(), Some((&Mass(2.0), None)));
    /// assert_eq!(view.query::<&Charge>(), None);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn query<Q: ReadOnlyQueryParam>(&self) -> Option<Q::Item<'a>> {
        if !Q::SPARSE {
            // Only archetype columns: read from the row, each column found
            // by its component id (no plan to make).
            return RowAccess::shared(self.archetype, self.row).and_then(|row| Q::read_row(&row));
        }
        let access = Access::of::<Q>();
        let slot = self.entity.index();
        if access
            .missing(self.archetype.set(), |id| self.sparse.contains(id, slot))
            .is_some()
        {
            return None;
        }
        // Read-only, so no aliasing to refuse: the plan is made all the same.
        let plan = access.plan("").ok()?;
        let mut columns = ColumnAccess::shared(self.archetype, SparseLend::shared(self.sparse), plan.columns());
        Q::fetch_row(&mut columns, self.row)
    }

    /// The declared names of the components, by increasing component id.
    pub fn component_names(&self) -> impl Iterator<Item = &'static str> + use<'a> {
        self.components().map(|c| c.name())
    }
}

/// The items of two iterators ascending by `id`, merged in that order.
fn merge_by_id<T, K: Ord>(
    a: impl Iterator<Item = T>,
    b: impl Iterator<Item = T>,
    id: impl Fn(&T) -> K,
) -> impl Iterator<Item = T> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if id(y) < id(x) => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

/// Two views are equal when they view the same entity in the same place
/// (which, while both borrow the context, is the same entity). Component
/// values are not compared.
impl PartialEq for EntityRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.entity == other.entity
            && std::ptr::eq(self.archetype, other.archetype)
            && self.row == other.row
            && std::ptr::eq(self.sparse, other.sparse)
    }
}

impl Eq for EntityRef<'_> {}

impl fmt::Debug for EntityRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.entity)?;
        f.debug_set().entries(self.components()).finish()
    }
}
