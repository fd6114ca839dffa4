//! Which component types opted in to snapshots (`reactecs::snapshot!`),
//! and their type-erased serialize / deserialize functions, found by
//! component id (to write) and by declared name (to read).

use std::any::Any;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::MapEntities;
use super::column::{Column, MapFn, read_values};
use super::limits::Budget;
use crate::component::Component;
use crate::id::ComponentId;
use crate::storage::{ComponentRef, registry};

/// A component type listed in [`snapshot!`](crate::snapshot!), as the
/// snapshot code sees it (whatever its type).
#[doc(hidden)]
pub trait SnapshotType: Sync {
    /// The type's component id.
    fn id(&self) -> ComponentId;
    /// The type's declared name: its key in a snapshot.
    fn name(&self) -> &'static str;
    /// The value `component` views, to serialize (`None`: another type's).
    fn value<'a>(&self, component: &ComponentRef<'a>) -> Option<&'a dyn erased_serde::Serialize>;
    /// Reads a list of `(entity position, value)` pairs of this type,
    /// charging them to `budget`.
    fn read(
        &self,
        input: &mut dyn erased_serde::Deserializer<'_>,
        budget: &Budget,
    ) -> Result<Box<dyn Column>, erased_serde::Error>;
    /// The registration itself, to be taken back as its type (by typed
    /// snapshots, which know the type).
    fn as_any(&self) -> &dyn Any;
}

/// What [`snapshot!`](crate::snapshot!) makes for one component type.
#[doc(hidden)]
pub struct SnapshotRegistration<T> {
    /// The type's [`MapEntities`] implementation, if it has one (found by
    /// the macro, see [`MapProbe`]).
    map: fn() -> Option<MapFn<T>>,
    _type: PhantomData<fn() -> T>,
}

impl<T: Component + Serialize + DeserializeOwned> SnapshotRegistration<T> {
    /// Used by [`snapshot!`](crate::snapshot!).
    pub const fn new(map: fn() -> Option<MapFn<T>>) -> Self {
        SnapshotRegistration {
            map,
            _type: PhantomData,
        }
    }
}

impl<T: Component + Serialize + DeserializeOwned> SnapshotType for SnapshotRegistration<T> {
    fn id(&self) -> ComponentId {
        T::component_id()
    }

    fn name(&self) -> &'static str {
        T::component_info().name()
    }

    fn value<'a>(&self, component: &ComponentRef<'a>) -> Option<&'a dyn erased_serde::Serialize> {
        component.get::<T>().map(|value| value as &dyn erased_serde::Serialize)
    }

    fn read(
        &self,
        input: &mut dyn erased_serde::Deserializer<'_>,
        budget: &Budget,
    ) -> Result<Box<dyn Column>, erased_serde::Error> {
        read_values::<T, _>(input, (self.map)(), budget)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The [`MapEntities`] implementation of listed type `T`, if it has one
/// (`None` too if `T` is not listed, which typed snapshots check first).
pub(crate) fn map_fn_of<T: Component>() -> Option<MapFn<T>> {
    let registration = snapshot_types().of(T::component_id())?;
    let registration = registration.as_any().downcast_ref::<SnapshotRegistration<T>>()?;
    (registration.map)()
}

/// What [`snapshot!`](crate::snapshot!) submits to `inventory`.
#[doc(hidden)]
pub struct RegisteredSnapshot(pub &'static dyn SnapshotType);

inventory::collect!(RegisteredSnapshot);

/// Every component type that opted in to snapshots.
pub(crate) struct SnapshotTypes {
    /// By component id.
    by_id: Vec<Option<&'static dyn SnapshotType>>,
    /// By declared name; `None` for a name two opted-in types share.
    by_name: HashMap<&'static str, Option<&'static dyn SnapshotType>>,
    /// In the order a snapshot lists them: by name, then by id.
    ordered: Vec<&'static dyn SnapshotType>,
}

impl SnapshotTypes {
    /// The type of component `id`, if it opted in.
    #[inline]
    pub(crate) fn of(&self, id: ComponentId) -> Option<&'static dyn SnapshotType> {
        self.by_id.get(id.index()).copied().flatten()
    }

    /// The opted-in type declared with `name`: `Err` with the reason if
    /// there is none, or more than one.
    pub(crate) fn named(&self, name: &str) -> Result<&'static dyn SnapshotType, String> {
        match self.by_name.get(name) {
            Some(Some(ty)) => Ok(*ty),
            Some(None) => Err(ambiguous(name)),
            None => Err(match registry().iter().any(|info| info.name() == name) {
                true => format!(
                    "component `{name}` is not listed for snapshots (list it in `reactecs::snapshot!` to read it)"
                ),
                false => format!("no component is declared with the name `{name}`"),
            }),
        }
    }

    /// Whether two opted-in types share `name`.
    pub(crate) fn is_ambiguous(&self, name: &str) -> bool {
        matches!(self.by_name.get(name), Some(None))
    }

    /// The opted-in types, in snapshot order.
    pub(crate) fn ordered(&self) -> &[&'static dyn SnapshotType] {
        &self.ordered
    }

    /// How many component ids there are (opted in or not).
    pub(crate) fn id_count(&self) -> usize {
        self.by_id.len()
    }
}

/// Why a snapshot cannot name component `name`.
pub(crate) fn ambiguous(name: &str) -> String {
    format!(
        "two component types listed in `reactecs::snapshot!` are declared with the name `{name}`, which keys them in \
         a snapshot: rename one"
    )
}

/// The opted-in types, collected on first use.
pub(crate) fn snapshot_types() -> &'static SnapshotTypes {
    static TYPES: OnceLock<SnapshotTypes> = OnceLock::new();
    TYPES.get_or_init(|| {
        let mut by_id: Vec<Option<&'static dyn SnapshotType>> = vec![None; registry().len()];
        for registered in inventory::iter::<RegisteredSnapshot> {
            // A type listed twice keeps one entry.
            by_id[registered.0.id().index()] = Some(registered.0);
        }
        let mut ordered: Vec<&'static dyn SnapshotType> = by_id.iter().flatten().copied().collect();
        ordered.sort_by_key(|ty| (ty.name(), ty.id()));
        let mut by_name = HashMap::new();
        for &ty in &ordered {
            by_name
                .entry(ty.name())
                .and_modify(|entry| *entry = None)
                .or_insert(Some(ty));
        }
        SnapshotTypes {
            by_id,
            by_name,
            ordered,
        }
    })
}

/// Picks a [`MapFn`] for types that implement [`MapEntities`] and none for
/// others (autoref specialisation, as for `Debug`: the macro calls
/// `(&&MapProbe::<T>::new()).map_fn()`).
#[doc(hidden)]
pub struct MapProbe<T>(PhantomData<T>);

impl<T> MapProbe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        MapProbe(PhantomData)
    }
}

impl<T> Default for MapProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when the component implements [`MapEntities`].
#[doc(hidden)]
pub trait ViaMapEntities<T> {
    /// The probed type's `map_entities`.
    fn map_fn(&self) -> Option<MapFn<T>>;
}

impl<T: MapEntities> ViaMapEntities<T> for &MapProbe<T> {
    fn map_fn(&self) -> Option<MapFn<T>> {
        Some(|value, map| value.map_entities(map))
    }
}

/// Chosen when the component does not implement [`MapEntities`].
#[doc(hidden)]
pub trait ViaNoMap<T> {
    /// No mapping: the type holds no handles.
    fn map_fn(&self) -> Option<MapFn<T>>;
}

impl<T> ViaNoMap<T> for MapProbe<T> {
    fn map_fn(&self) -> Option<MapFn<T>> {
        None
    }
}
