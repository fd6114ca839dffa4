//! The values of one component type read from a snapshot: a typed list of
//! `(entity position, value)` pairs, read within the restore's byte budget,
//! and held as a [`Column`] that the restore takes from in order.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, Deserializer, SeqAccess, Visitor};

use super::limits::Budget;
use crate::component::Component;
use crate::context::Context;
use crate::entity::Entity;
use crate::error::Error;
use crate::id::ComponentId;
use crate::storage::{ComponentRef, RowWriter};

/// Replaces the handles held by a value: [`MapEntities::map_entities`](super::MapEntities::map_entities) of
/// one type.
#[doc(hidden)]
pub type MapFn<T> = fn(&mut T, &mut dyn FnMut(Entity) -> Entity);

/// The values of one component type read from a snapshot, taken in order
/// as the entities are restored.
#[doc(hidden)]
pub trait Column {
    /// The component's id.
    fn id(&self) -> ComponentId;
    /// The component's declared name.
    fn name(&self) -> &'static str;
    /// The positions of the entities holding the values, in order.
    fn positions(&self) -> &[u32];
    /// Whether the type implements `MapEntities`.
    fn maps_entities(&self) -> bool;
    /// Replaces each handle held by the values not yet taken with `map`'s.
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity);
    /// A view of the next value.
    fn peek(&self) -> Option<ComponentRef<'_>>;
    /// A view of the value `n` places after the next one.
    fn value_at(&self, n: usize) -> Option<ComponentRef<'_>>;
    /// Writes the next value as the next element of a new row.
    fn write_next(&mut self, row: &mut RowWriter<'_>);
    /// Adds the next value to `entity` with [`Context::add`].
    fn add_next(&mut self, context: &mut Context, entity: Entity) -> Result<(), Error>;
}

/// The values of component type `T`.
struct Values<T> {
    positions: Vec<u32>,
    values: std::vec::IntoIter<T>,
    map: Option<MapFn<T>>,
}

impl<T: Component> Column for Values<T> {
    fn id(&self) -> ComponentId {
        T::component_id()
    }

    fn name(&self) -> &'static str {
        T::component_info().name()
    }

    fn positions(&self) -> &[u32] {
        &self.positions
    }

    fn maps_entities(&self) -> bool {
        self.map.is_some()
    }

    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        if let Some(map_one) = self.map {
            for value in self.values.as_mut_slice() {
                map_one(value, map);
            }
        }
    }

    fn peek(&self) -> Option<ComponentRef<'_>> {
        self.value_at(0)
    }

    fn value_at(&self, n: usize) -> Option<ComponentRef<'_>> {
        let value = self.values.as_slice().get(n)?;
        Some(ComponentRef::new(T::component_info(), value))
    }

    #[inline]
    fn write_next(&mut self, row: &mut RowWriter<'_>) {
        if let Some(value) = self.values.next() {
            // A refused value is dropped; the row is then incomplete, which
            // the spawn reports.
            let _refused = row.put(value);
        }
    }

    fn add_next(&mut self, context: &mut Context, entity: Entity) -> Result<(), Error> {
        match self.values.next() {
            Some(value) => context.add(entity, value),
            None => Ok(()),
        }
    }
}

/// Reads a list of `(position, value)` pairs of `T`: from an erased
/// deserializer for the registration of `T`, from the format's own for a
/// typed snapshot.
pub(super) fn read_values<'de, T: Component + DeserializeOwned, D: Deserializer<'de>>(
    input: D,
    map: Option<MapFn<T>>,
    budget: &Budget,
) -> Result<Box<dyn Column>, D::Error> {
    let (positions, values) = input.deserialize_seq(PairsVisitor::<T>(budget, PhantomData))?;
    Ok(Box::new(Values {
        positions,
        values: values.into_iter(),
        map,
    }))
}

/// A cap on what a length read from the input reserves up front (a
/// corrupt length then fails when the input ends, not with an allocation;
/// the lists grow as values actually arrive).
const RESERVE_AT_MOST: usize = 1 << 10;

/// How far a full list trusts the length the input announced: it grows to
/// at most this many times the values that arrived, so what it holds stays
/// in proportion to the input read, in a few steps rather than a doubling
/// (and a copy of the values) per power of two.
const GROW_AT_MOST: usize = 16;

/// What room for one value takes: the value and its entity's position.
const fn pair_bytes<T>() -> usize {
    size_of::<T>() + size_of::<u32>()
}

struct PairsVisitor<'b, T>(&'b Budget, PhantomData<fn() -> T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for PairsVisitor<'_, T> {
    type Value = (Vec<u32>, Vec<T>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of (entity position, value) pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let announced = seq.size_hint().unwrap_or(0);
        let (mut positions, mut values) = (Vec::new(), Vec::new());
        while let Some((position, value)) = seq.next_element::<(u32, T)>()? {
            if values.len() == values.capacity() {
                // Room is charged to the budget as it is reserved.
                let len = values.len();
                let more = match len {
                    0 => announced.clamp(1, RESERVE_AT_MOST),
                    _ if announced > len => (announced - len).min(len * (GROW_AT_MOST - 1)),
                    _ => len,
                };
                if !self.0.charge(more.saturating_mul(pair_bytes::<T>())) {
                    return Err(de::Error::custom("the byte budget of its `RestoreLimits` ran out"));
                }
                positions.reserve_exact(more);
                values.reserve_exact(more);
            }
            positions.push(position);
            values.push(value);
        }
        Ok((positions, values))
    }
}
