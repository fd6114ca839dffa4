//! Writing a typed snapshot: [`Context::snapshot_of`] and `Serialize` for
//! [`TypedSnapshot`], column by column straight from the archetype chunks
//! (and the sparse sets of flag and sparse components), each value written
//! by its type's own `Serialize`, monomorphised for the format.

use std::marker::PhantomData;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde::ser::{Error as _, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};
use smallvec::SmallVec;

use super::tuple::{ElementVisitor, SnapshotTuple, checked_ids};
use super::write::{Positions, Writing};
use crate::component::Component;
use crate::context::Context;
use crate::error::Error;
use crate::id::ComponentId;

/// A typed snapshot of a context: its entities and the values of the
/// component types of `C` (a [`SnapshotTuple`]), ready to be serialized in
/// the format [`Context::snapshot`] writes, each value by its type's own
/// `Serialize` (no erased dispatch). Made by [`Context::snapshot_of`]; it
/// borrows the context and copies nothing.
///
/// # Errors
/// Serializing fails (with the serializer's error) if a component's own
/// `Serialize` fails, or if the context has more than `u32::MAX - 2`
/// entities.
pub struct TypedSnapshot<'a, C> {
    context: &'a Context,
    /// The places in `C` of its types, and their ids, in the order a
    /// snapshot lists them: by declared name, then by id.
    order: SmallVec<[(usize, ComponentId); 12]>,
    _types: PhantomData<fn() -> C>,
}

/// The component types, the context's name and how many entities the
/// snapshot holds: `TypedSnapshot { types: "(game::Position, game::Name)", .. }`.
impl<C> std::fmt::Debug for TypedSnapshot<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedSnapshot")
            .field("types", &std::any::type_name::<C>())
            .field("context", &self.context.name())
            .field("entities", &self.context.len())
            .finish()
    }
}

impl Context {
    /// A typed snapshot of this context: every live entity in creation
    /// order, with the values of the component types of `C` (one type, or a
    /// tuple of up to 12). It writes what [`snapshot`](Context::snapshot)
    /// writes for those types, in the same format (so either
    /// [`restore`](Context::restore) or [`restore_of`](Context::restore_of)
    /// reads it), without going through the registry: serde compiles it for
    /// the serializer given, a few times faster. The values of types not in
    /// `C` are left out (the entities that hold them are still there).
    ///
    /// # Errors
    /// [`Error::SnapshotTypeRefused`] if a type of `C` is not listed in
    /// [`snapshot!`](crate::snapshot!), is named twice in `C`, or shares its
    /// declared name with another listed type.
    ///
    /// # Example
    /// ```
    /// use reactecs::{Context, Entity, MapEntities};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Debug, PartialEq, Serialize, Deserialize)]
    /// struct Life(u32);
    /// #[derive(Serialize, Deserialize)]
    /// struct Aim(Entity);
    /// impl MapEntities for Aim {
    ///     fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
    ///         self.0 = map(self.0);
    ///     }
    /// }
    /// reactecs::component!(Life, Aim);
    /// reactecs::snapshot!(Life, Aim);
    ///
    /// let mut game = Context::with_name("Game");
    /// let orc = game.create_entity_with(Life(30))?;
    /// game.create_entity_with((Life(10), Aim(orc)))?;
    /// let json = serde_json::to_string(&game.snapshot_of::<(Life, Aim)>()?).unwrap();
    /// // The format `snapshot` writes: types by name, handles as entity positions.
    /// assert_eq!(json, r#"{"entities":2,"components":[["Aim",[[1,0]]],["Life",[[0,30],[1,10]]]]}"#);
    /// assert_eq!(json, serde_json::to_string(&game.snapshot()).unwrap());
    ///
    /// let mut loaded = Context::with_name("Game");
    /// loaded.restore_of::<(Life, Aim)>(&mut serde_json::Deserializer::from_str(&json), reactecs::RestoreLimits::default())?;
    /// let archer = loaded.entities().nth(1).unwrap();
    /// let target = loaded.get::<Aim>(archer)?.0;
    /// assert_eq!(loaded.get::<Life>(target)?, &Life(30));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn snapshot_of<C: SnapshotTuple>(&self) -> Result<TypedSnapshot<'_, C>, Error> {
        let ids = checked_ids::<C>(self.name)?;
        let mut order: SmallVec<[(usize, ComponentId); 12]> = ids.into_iter().enumerate().collect();
        order.sort_by_key(|&(_, id)| (id.name(), id));
        Ok(TypedSnapshot {
            context: self,
            order,
            _types: PhantomData,
        })
    }

    /// How many values of component `id` this context holds.
    fn stored(&self, id: ComponentId) -> usize {
        if self.archetypes.is_sparse(id) {
            self.sparse.set(id).map_or(0, |set| set.len())
        } else {
            self.archetypes
                .with_component(id)
                .iter()
                .map(|&archetype| self.archetypes.get(archetype).len())
                .sum()
        }
    }
}

impl<C: SnapshotTuple> Serialize for TypedSnapshot<'_, C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let context = self.context;
        let positions = Rc::new(Positions::of(context));
        let count = positions.count(context).map_err(S::Error::custom)?;
        // The types some entity has, each with its place in `C`.
        let present: SmallVec<[usize; 12]> = self
            .order
            .iter()
            .filter(|&&(_, id)| context.stored(id) > 0)
            .map(|&(index, _)| index)
            .collect();
        let _writing = Writing::enter(Rc::clone(&positions));
        let mut out = serializer.serialize_struct("Snapshot", 2)?;
        out.serialize_field("entities", &count)?;
        out.serialize_field(
            "components",
            &ColumnsOut::<C> {
                context,
                positions: &positions,
                present: &present,
                _types: PhantomData,
            },
        )?;
        out.end()
    }
}

/// The `components` field: one `(name, values)` pair per type of `C` some
/// entity has, by name.
struct ColumnsOut<'s, C> {
    context: &'s Context,
    positions: &'s Positions,
    /// The places in `C` of the types to write, in order.
    present: &'s [usize],
    _types: PhantomData<fn() -> C>,
}

impl<C: SnapshotTuple> Serialize for ColumnsOut<'_, C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_seq(Some(self.present.len()))?;
        for &index in self.present {
            let column = WriteColumn {
                out: &mut out,
                context: self.context,
                positions: self.positions,
            };
            C::visit(index, column).expect("the index is a position of the tuple, found in its ids just above")?;
        }
        out.end()
    }
}

/// Writes the `(name, values)` pair of the visited type as the next element
/// of `out`.
struct WriteColumn<'s, Q> {
    out: &'s mut Q,
    context: &'s Context,
    positions: &'s Positions,
}

impl<Q: SerializeSeq> ElementVisitor for WriteColumn<'_, Q> {
    type Output = Result<(), Q::Error>;

    #[inline]
    fn visit<T: Component + Serialize + DeserializeOwned>(self) -> Self::Output {
        let values = ValuesOut::<T> {
            context: self.context,
            positions: self.positions,
            _type: PhantomData,
        };
        self.out.serialize_element(&(T::component_info().name(), values))
    }
}

/// The values of `T`: `(entity position, value)` pairs, by position.
struct ValuesOut<'s, T> {
    context: &'s Context,
    positions: &'s Positions,
    _type: PhantomData<fn() -> T>,
}

impl<T: Component + Serialize> Serialize for ValuesOut<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pairs = pairs::<T>(self.context, self.positions);
        let mut out = serializer.serialize_seq(Some(pairs.len()))?;
        for pair in &pairs {
            out.serialize_element(pair)?;
        }
        out.end()
    }
}

/// The values of `T` in `context`, each with its entity's position, by
/// position: read column by column, chunk by chunk (or from the sparse
/// set), then sorted if storage does not hold them in creation order
/// already (several archetypes, or rows moved by removals). Kept out of
/// line: inlined into each type's writer, it measured ~5% more
/// instructions.
#[inline(never)]
fn pairs<'c, T: Component>(context: &'c Context, positions: &Positions) -> Vec<(u32, &'c T)> {
    let id = T::component_id();
    let mut pairs = Vec::with_capacity(context.stored(id));
    if T::STORAGE.is_sparse() {
        if let Some(set) = context.sparse.set(id) {
            let (slots, values) = set.entries::<T>().expect("a set holds values of its type");
            pairs.extend(
                slots
                    .iter()
                    .zip(values)
                    .map(|(&slot, value)| (positions.of_slot(slot), value)),
            );
        }
    } else {
        for &at in context.archetypes.with_component(id) {
            let archetype = context.archetypes.get(at);
            for chunk in 0..archetype.chunk_count() {
                let entities = archetype.chunk_entities(chunk);
                let values = archetype
                    .column_slice::<T>(id, chunk)
                    .expect("an archetype with the component has its column");
                pairs.extend(
                    entities
                        .iter()
                        .zip(values)
                        .map(|(entity, value)| (positions.of_slot(entity.index()), value)),
                );
            }
        }
    }
    if !pairs.is_sorted_by_key(|&(position, _)| position) {
        // Positions are distinct (one per live entity).
        pairs.sort_unstable_by_key(|&(position, _)| position);
    }
    pairs
}
