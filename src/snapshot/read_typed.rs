//! Reading a typed snapshot's columns: the values of each type of the list
//! are read by that type's own `Deserialize`, monomorphised for the format
//! (no erased dispatch), into the same typed buffers the registry's reader
//! fills; a column of a type outside the list falls back to that reader.

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, SeqAccess};

use super::column::{Column, read_values};
use super::limits::Budget;
use super::read::{ReadColumn, Registered};
use super::registry::map_fn_of;
use super::tuple::{ElementVisitor, SnapshotTuple, TypeIds};
use crate::component::Component;

/// Reads the columns of the types of `C` itself, the others through the
/// registry.
pub(crate) struct TypedReader<C> {
    /// The types of `C`, in tuple order (checked: listed, named once).
    ids: TypeIds,
    _types: PhantomData<fn() -> C>,
}

impl<C: SnapshotTuple> TypedReader<C> {
    /// A reader of the types `ids` of `C` (from
    /// [`checked_ids`](super::tuple::checked_ids)).
    pub(crate) fn new(ids: TypeIds) -> Self {
        TypedReader {
            ids,
            _types: PhantomData,
        }
    }
}

impl<C: SnapshotTuple> ReadColumn for TypedReader<C> {
    fn read_column<'de, A: SeqAccess<'de>>(
        &self,
        name: &str,
        seq: &mut A,
        budget: &Budget,
    ) -> Result<Option<Box<dyn Column>>, A::Error> {
        match self.ids.iter().position(|id| id.name() == name) {
            Some(index) => C::visit(index, ReadValues(seq, budget, PhantomData))
                .expect("the index is a position of the tuple, found in its ids just above"),
            None => Registered.read_column(name, seq, budget),
        }
    }
}

/// Reads the values of the visited type as the next element of a sequence.
struct ReadValues<'s, 'de, A>(&'s mut A, &'s Budget, PhantomData<&'de ()>);

impl<'de, A: SeqAccess<'de>> ElementVisitor for ReadValues<'_, 'de, A> {
    type Output = Result<Option<Box<dyn Column>>, A::Error>;

    #[inline]
    fn visit<T: Component + Serialize + DeserializeOwned>(self) -> Self::Output {
        self.0.next_element_seed(ValuesOf::<T>(self.1, PhantomData))
    }
}

/// The `(position, value)` pairs of `T`, read with the format's own
/// deserializer.
struct ValuesOf<'b, T>(&'b Budget, PhantomData<fn() -> T>);

impl<'de, T: Component + DeserializeOwned> DeserializeSeed<'de> for ValuesOf<'_, T> {
    type Value = Box<dyn Column>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        read_values::<T, D>(deserializer, map_fn_of::<T>(), self.0).map_err(|error| {
            let name = T::component_info().name();
            de::Error::custom(format_args!("in the values of component `{name}`: {error}"))
        })
    }
}
