//! Reading a snapshot into plain buffers (one typed list of values per
//! component type), before anything touches the target context; and
//! `Deserialize` for [`Entity`], which reads a position as a placeholder
//! that the restore maps to the restored entity.

use std::cell::Cell;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::DANGLING;
use super::column::Column;
use super::limits::Budget;
use super::registry::{SnapshotType, snapshot_types};
use crate::entity::Entity;
use crate::storage::ComponentSet;

/// The placeholder a position of [`DANGLING`] reads as: it names no entity,
/// before and after the restore maps handles.
pub(crate) fn dangling() -> Entity {
    Entity::placeholder(Entity::PLACEHOLDERS - 1)
}

thread_local! {
    /// Whether this thread is reading a snapshot (in [`parse`]).
    static READING: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as reading a snapshot for as long as it lives (and
/// puts the mark back as it was, on a panic too).
struct Reading(bool);

impl Reading {
    fn start() -> Self {
        Reading(READING.replace(true))
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        READING.set(self.0);
    }
}

/// Reads what [`Entity`]'s `Serialize` wrote inside a snapshot: a position,
/// as a placeholder handle ([`Context::restore`](crate::Context::restore)
/// maps it to the restored entity with [`MapEntities`](crate::MapEntities)),
/// or `u32::MAX`, as a handle that names no entity. Outside a restore it is
/// an error, as writing one outside a snapshot is: a number read from
/// anywhere else would become a handle that names nothing.
impl<'de> Deserialize<'de> for Entity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if !READING.get() {
            return Err(de::Error::custom(
                "an entity handle is read outside a context snapshot: a handle names an entity only in its \
                 context, so it is read only as part of `Context::restore`",
            ));
        }
        match u32::deserialize(deserializer)? {
            DANGLING => Ok(dangling()),
            position if position < Entity::PLACEHOLDERS - 1 => Ok(Entity::placeholder(position)),
            position => Err(de::Error::invalid_value(
                de::Unexpected::Unsigned(position.into()),
                &"an entity position in a snapshot",
            )),
        }
    }
}

/// A snapshot as read, not yet checked against the target context.
pub(crate) struct Parsed {
    /// How many entities it has.
    pub(crate) entities: u32,
    /// The values of each component type it lists, in its order.
    pub(crate) columns: Vec<Box<dyn Column>>,
}

/// Reads the values of one component type, given its name: the
/// registry's erased reader ([`Registered`]), or a typed snapshot's, which
/// reads the types of its list itself.
pub(crate) trait ReadColumn {
    /// Reads the values of the type declared with `name`, as the next
    /// element of `seq` (`None` if `seq` has none).
    fn read_column<'de, A: SeqAccess<'de>>(
        &self,
        name: &str,
        seq: &mut A,
        budget: &Budget,
    ) -> Result<Option<Box<dyn Column>>, A::Error>;
}

/// Reads any type listed in [`snapshot!`](crate::snapshot!), through its
/// registration (and an erased deserializer).
pub(crate) struct Registered;

impl ReadColumn for Registered {
    fn read_column<'de, A: SeqAccess<'de>>(
        &self,
        name: &str,
        seq: &mut A,
        budget: &Budget,
    ) -> Result<Option<Box<dyn Column>>, A::Error> {
        let ty = snapshot_types().named(name).map_err(de::Error::custom)?;
        seq.next_element_seed(ValuesSeed(ty, budget))
    }
}

/// Reads a whole snapshot, each type's values with `reader`, charging
/// them to `budget`.
pub(crate) fn parse<'de, D: Deserializer<'de>, R: ReadColumn>(
    input: D,
    reader: &R,
    budget: &Budget,
) -> Result<Parsed, D::Error> {
    let _reading = Reading::start();
    input.deserialize_struct("Snapshot", FIELDS, SnapshotVisitor(reader, budget))
}

const FIELDS: &[&str] = &["entities", "components"];

enum Field {
    Entities,
    Components,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`entities` or `components`")
            }

            fn visit_str<E: de::Error>(self, field: &str) -> Result<Field, E> {
                match field {
                    "entities" => Ok(Field::Entities),
                    "components" => Ok(Field::Components),
                    other => Err(E::unknown_field(other, FIELDS)),
                }
            }

            fn visit_u64<E: de::Error>(self, field: u64) -> Result<Field, E> {
                match field {
                    0 => Ok(Field::Entities),
                    1 => Ok(Field::Components),
                    other => Err(E::invalid_value(de::Unexpected::Unsigned(other), &self)),
                }
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

struct SnapshotVisitor<'r, R>(&'r R, &'r Budget);

impl<'de, R: ReadColumn> Visitor<'de> for SnapshotVisitor<'_, R> {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a context snapshot")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsed, A::Error> {
        let entities = seq
            .next_element::<u32>()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let columns = seq
            .next_element_seed(ColumnsSeed(self.0, self.1))?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        Ok(Parsed { entities, columns })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let (mut entities, mut columns) = (None, None);
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Entities if entities.is_some() => return Err(de::Error::duplicate_field("entities")),
                Field::Entities => entities = Some(map.next_value::<u32>()?),
                Field::Components if columns.is_some() => return Err(de::Error::duplicate_field("components")),
                Field::Components => columns = Some(map.next_value_seed(ColumnsSeed(self.0, self.1))?),
            }
        }
        Ok(Parsed {
            entities: entities.ok_or_else(|| de::Error::missing_field("entities"))?,
            columns: columns.ok_or_else(|| de::Error::missing_field("components"))?,
        })
    }
}

/// The `components` field: a list of `(name, values)` pairs.
struct ColumnsSeed<'r, R>(&'r R, &'r Budget);

impl<'de, R: ReadColumn> DeserializeSeed<'de> for ColumnsSeed<'_, R> {
    type Value = Vec<Box<dyn Column>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, R: ReadColumn> Visitor<'de> for ColumnsSeed<'_, R> {
    type Value = Vec<Box<dyn Column>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of (component name, values) pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut seen = ComponentSet::new();
        let mut columns = Vec::new();
        while let Some(column) = seq.next_element_seed(ColumnSeed(self.0, self.1))? {
            if !seen.insert(column.id()) {
                return Err(de::Error::custom(format!(
                    "component `{}` is listed twice",
                    column.name()
                )));
            }
            columns.push(column);
        }
        Ok(columns)
    }
}

/// One `(name, values)` pair: the name says which type reads the values.
struct ColumnSeed<'r, R>(&'r R, &'r Budget);

impl<'de, R: ReadColumn> DeserializeSeed<'de> for ColumnSeed<'_, R> {
    type Value = Box<dyn Column>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_tuple(2, self)
    }
}

impl<'de, R: ReadColumn> Visitor<'de> for ColumnSeed<'_, R> {
    type Value = Box<dyn Column>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a (component name, values) pair")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let name: std::borrow::Cow<'de, str> =
            seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
        self.0
            .read_column(&name, &mut seq, self.1)?
            .ok_or_else(|| de::Error::invalid_length(1, &self))
    }
}

/// The values of one type, read by that type's registration through an
/// erased deserializer.
struct ValuesSeed<'b>(&'static dyn SnapshotType, &'b Budget);

impl<'de> DeserializeSeed<'de> for ValuesSeed<'_> {
    type Value = Box<dyn Column>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let mut erased = <dyn erased_serde::Deserializer<'de>>::erase(deserializer);
        self.0
            .read(&mut erased, self.1)
            .map_err(|error| de::Error::custom(format_args!("in the values of component `{}`: {error}", self.0.name())))
    }
}
