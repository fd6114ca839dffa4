//! `View`: read-only random access to some components of any entity, by
//! handle, and to the context's entity indices: beside a
//! [`QueryMut`](crate::QueryMut) that writes other components
//! ([`Context::query_mut_and_view`]), or on its own ([`Context::view`]).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use super::Context;
use crate::entity::Entity;
use crate::error::Error;
use crate::id::{ComponentId, IndexId};
use crate::index::{Index, Indices};
use crate::query::{Access, QueryPlan};
use crate::query_param::{QueryParam, ReadOnlyQueryParam};
use crate::slot_table::SlotTable;
use crate::storage::{ArchetypeId, ComponentSet, ReadLend, SharedRows, SparseLend};

/// Read-only access to the components `R` names (a tuple of `&T`,
/// `Option<&T>` and `Entity`, as a query takes) of any entity of one
/// context, by handle, and to its entity indices: e.g. a neighbour's
/// `(&Position, &Velocity)`, found through a grid index, while a
/// [`QueryMut`](crate::QueryMut) writes each entity's `&mut Steering`. Made
/// by [`Context::query_mut_and_view`] (beside a query that writes other
/// components) and [`Context::view`].
///
/// A view is `Clone`, `Send` and `Sync`: closures of a parallel loop share
/// it. Each [`get`](View::get) finds the entity and its archetype once for
/// all of `R`'s components.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Clone, Copy)] struct Position(f32);
/// #[derive(Clone, Copy)] struct Pull(f32);
/// reactecs::component!(Position, Pull);
///
/// let mut game = Context::new();
/// let entities: Vec<Entity> = (0..4).map(|i| game.create_entity_with((Position(i as f32), Pull(0.0)))).collect::<Result<_, _>>()?;
/// // Each entity is pulled toward the next one's position: its own `Pull`
/// // written, any entity's `Position` read.
/// let (mut pulls, positions) = game.query_mut_and_view::<(Entity, &mut Pull, &Position), &Position>()?;
/// pulls.for_each(|(e, pull, at)| {
///     let next = entities[(entities.iter().position(|&x| x == e).unwrap() + 1) % entities.len()];
///     pull.0 = positions.get(next).map_or(0.0, |p| p.0 - at.0);
/// });
/// assert_eq!(game.get::<Pull>(entities[0])?.0, 1.0);
/// assert_eq!(game.get::<Pull>(entities[3])?.0, -3.0);
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct View<'w, R: ReadOnlyQueryParam> {
    entities: &'w SlotTable,
    indices: &'w Indices,
    /// The context's instance id (which its index ids carry).
    instance: u64,
    read: ReadLend<'w>,
    /// `R`'s plan, placed in every archetype: the context's, or one made
    /// and placed for the view (when the context keeps none current).
    plan: Cow<'w, QueryPlan>,
    /// Rows read at the offsets the context's plan keeps (no lookup by
    /// component); `None` when the plan is the view's own (its rows are
    /// made per read, borrowing it).
    rows: Option<SharedRows<'w, 'w>>,
    context: &'static str,
    _r: PhantomData<fn() -> R>,
}

impl<'w, R: ReadOnlyQueryParam> View<'w, R> {
    /// `plan` is `R`'s, placed in every archetype of `read`'s; rows are
    /// read at its offsets.
    pub(super) fn new(
        entities: &'w SlotTable,
        indices: &'w Indices,
        instance: u64,
        read: ReadLend<'w>,
        plan: Cow<'w, QueryPlan>,
        context: &'static str,
    ) -> Self {
        let rows = match &plan {
            Cow::Borrowed(plan) => Some(read.prepared(plan.column_plan())),
            Cow::Owned(plan) => {
                // Checked once here; each read makes its rows again.
                read.prepared(plan.column_plan());
                None
            }
        };
        View {
            entities,
            indices,
            instance,
            rows,
            read,
            plan,
            context,
            _r: PhantomData,
        }
    }

    /// `entity`'s items.
    ///
    /// # Errors
    /// [`Error::StaleEntity`], [`Error::EntityDisabled`] or
    /// [`Error::ForeignEntity`] if `entity` is not alive here;
    /// [`Error::ComponentAbsent`] naming the first component `R` requires
    /// (not behind an `Option`) that the entity lacks.
    #[inline(always)]
    pub fn get(&self, entity: Entity) -> Result<R::Item<'w>, Error> {
        // The common path inline: the context's plan, the entity has `R`.
        // A disabled entity's raw archetype id names no archetype.
        if let Some(rows) = self.rows
            && let Some((archetype, row)) = self.entities.raw_location(entity)
            && let Some(item) = rows.row(archetype, row).and_then(|mut row| R::placed_row(&mut row))
        {
            return Ok(item);
        }
        self.get_by_own_plan(entity)
    }

    /// [`get`](View::get) by the view's own plan, or when the entity is
    /// not alive here or lacks a component.
    #[inline(never)]
    fn get_by_own_plan(&self, entity: Entity) -> Result<R::Item<'w>, Error> {
        if self.rows.is_none()
            && let Some((archetype, row)) = self.entities.raw_location(entity)
            && let Some(item) = self
                .read
                .prepared(self.plan.column_plan())
                .row(archetype, row)
                .and_then(|mut row| R::placed_row(&mut row))
        {
            return Ok(item);
        }
        Err(self.error(entity))
    }

    /// Whether `entity` is alive here and has every component `R` requires.
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.get(entity).is_ok()
    }

    /// The context's index with id `id`, as [`Context::index`] gives it
    /// (indices are current while the view lives: a query beside it cannot
    /// write the components they key on).
    ///
    /// # Errors
    /// As [`Context::index`].
    pub fn index<I: Index>(&self, id: IndexId<I>) -> Result<&'w I, Error> {
        Context::typed_index(self.indices, self.instance, self.context, id)
    }

    /// Why [`get`](View::get) found nothing.
    #[cold]
    #[inline(never)]
    fn error(&self, entity: Entity) -> Error {
        let read = self.read;
        item_error::<R>(self.entities, |id| read.set_of(id), read.sparse(), self.context, entity)
    }
}

/// Why a view found no item of `Q` for `entity`: not alive here, or the
/// first component `Q` requires that it lacks. `set_of` gives an
/// archetype's components, `sparse` the flag and sparse ones.
pub(super) fn item_error<'a, Q: QueryParam>(
    entities: &SlotTable,
    set_of: impl Fn(ArchetypeId) -> &'a ComponentSet,
    sparse: SparseLend<'_>,
    context: &'static str,
    entity: Entity,
) -> Error {
    let access = Access::of::<Q>();
    let Some(location) = entities.location(entity) else {
        return entities.why_dead(context, entity, access.first().map(ComponentId::name));
    };
    // A live entity with every required component gives its items, so
    // `missing` finds one; were a column not of its component's type, it
    // is refused as absent, like `get`.
    let missing = access.missing(set_of(location.archetype), |id| sparse.contains(id, entity.index()));
    let component = missing
        .or(access.first())
        .map_or(std::any::type_name::<Q>(), ComponentId::name);
    Error::absent(context, entity, component)
}

impl<R: ReadOnlyQueryParam> Clone for View<'_, R> {
    fn clone(&self) -> Self {
        View {
            entities: self.entities,
            indices: self.indices,
            instance: self.instance,
            read: self.read,
            plan: self.plan.clone(),
            rows: self.rows,
            context: self.context,
            _r: PhantomData,
        }
    }
}

/// The parameters and the context: `View { params: "&game::Position",
/// context: "Game" }`.
impl<R: ReadOnlyQueryParam> fmt::Debug for View<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("View")
            .field("params", &std::any::type_name::<R>())
            .field("context", &self.context)
            .finish()
    }
}
