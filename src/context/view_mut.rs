//! `ViewMut`: prepared random access by handle, reading and writing the
//! components a query type names, for many entities: [`Context::view_mut`](crate::Context::view_mut).

use std::fmt;
use std::marker::PhantomData;

use super::view::item_error;
use crate::entity::Entity;
use crate::error::Error;
use crate::query::QueryParam;
use crate::slot_table::SlotTable;
use crate::storage::{PreparedRows, RowSets};

/// Random access by handle to the components `Q` names (a tuple of `&T`,
/// `&mut T`, `Option<&T>`, `Option<&mut T>` and `Entity`, as
/// [`query_mut`](crate::Context::query_mut) takes), prepared once and used for many
/// entities: hecs' `view_mut`, bevy's `Query::get_mut`, shipyard's
/// `ViewMut`. Made by [`Context::view_mut`](crate::Context::view_mut).
///
/// Each [`get_mut`](ViewMut::get_mut) reads the entity's location and the
/// column offsets the view's plan keeps for that archetype: no search by
/// component and no plan per call. Its writes are seen by collectors as
/// [`Context::get_mut`](crate::Context::get_mut)'s are (an `added()` or `updated()` trigger on a group
/// naming the component collects the entity when next read): handing out
/// `&mut T` counts as a change. Like `query_mut`, it refuses a component an
/// entity index keys on (the index could not follow the write).
///
/// Reach for it when one system writes many entities picked by handle (a
/// list, an index, a neighbour): one view for the loop rather than a
/// `get_mut` per entity.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Debug, PartialEq)] struct Position(f32);
/// struct Velocity(f32);
/// reactecs::component!(Position, Velocity);
///
/// let mut game = Context::new();
/// let moved = game.add_collector(Matcher::all_of::<Position>().updated());
/// let picked: Vec<Entity> = (0..3)
///     .map(|i| game.create_entity_with((Position(0.0), Velocity(i as f32))))
///     .collect::<Result<_, _>>()?;
/// let mut view = game.view_mut::<(&mut Position, &Velocity)>()?;
/// for &e in &picked[1..] {
///     let (position, velocity) = view.get_mut(e)?;
///     position.0 += velocity.0;
/// }
/// assert_eq!(game.get::<Position>(picked[2])?, &Position(2.0));
/// assert_eq!(game.collector(moved)?.entities(), &picked[1..]);
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct ViewMut<'w, Q: QueryParam> {
    entities: &'w SlotTable,
    /// The archetypes and sparse sets, lent for `Q`'s plan (placed in every
    /// archetype with `Q`'s required components).
    rows: PreparedRows<'w>,
    context: &'static str,
    _q: PhantomData<fn() -> Q>,
}

impl<'w, Q: QueryParam> ViewMut<'w, Q> {
    pub(super) fn new(entities: &'w SlotTable, rows: PreparedRows<'w>, context: &'static str) -> Self {
        ViewMut {
            entities,
            rows,
            context,
            _q: PhantomData,
        }
    }

    /// `entity`'s items, for as long as the view is not used again.
    ///
    /// # Errors
    /// [`Error::StaleEntity`], [`Error::EntityDisabled`] or
    /// [`Error::ForeignEntity`] if `entity` is not alive here;
    /// [`Error::ComponentAbsent`] naming the first component `Q` requires
    /// (not behind an `Option`) that the entity lacks.
    #[inline]
    pub fn get_mut(&mut self, entity: Entity) -> Result<Q::Item<'_>, Error> {
        let (entities, sets, context) = (self.entities, self.rows.sets(), self.context);
        // A disabled entity's raw archetype id names no archetype.
        if let Some((archetype, row)) = self.entities.raw_location(entity)
            && let Some(mut placed) = self.rows.row(archetype, row)
            && let Some(item) = Q::placed_row(&mut placed)
        {
            return Ok(item);
        }
        Err(error::<Q>(entities, sets, context, entity))
    }

    /// As [`get_mut`](ViewMut::get_mut), for as long as the view would
    /// have lived (the view is used up): one entity's items.
    #[inline]
    pub(super) fn into_item(self, entity: Entity) -> Result<Q::Item<'w>, Error> {
        let (entities, sets, context) = (self.entities, self.rows.sets(), self.context);
        if let Some((archetype, row)) = entities.raw_location(entity)
            && let Some(mut placed) = self.rows.into_row(archetype, row)
            && let Some(item) = Q::placed_row(&mut placed)
        {
            return Ok(item);
        }
        Err(error::<Q>(entities, sets, context, entity))
    }

    /// Whether `entity` is alive here and has every component `Q` requires.
    #[inline]
    pub fn contains(&mut self, entity: Entity) -> bool {
        self.get_mut(entity).is_ok()
    }
}

/// Why [`ViewMut::get_mut`] found nothing.
#[cold]
#[inline(never)]
fn error<Q: QueryParam>(entities: &SlotTable, sets: RowSets<'_>, context: &'static str, entity: Entity) -> Error {
    item_error::<Q>(entities, |id| sets.set_of(id), sets.sparse(), context, entity)
}

/// The parameters and the context: `ViewMut { params: "(&mut game::Position,
/// &game::Velocity)", context: "Game" }`.
impl<Q: QueryParam> fmt::Debug for ViewMut<'_, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ViewMut")
            .field("params", &std::any::type_name::<Q>())
            .field("context", &self.context)
            .finish()
    }
}
