//! Writing a snapshot: `Serialize` for [`Snapshot`], straight from the
//! context's storage, and for [`Entity`], which inside a snapshot writes
//! the entity's position in it.

use std::cell::RefCell;
use std::rc::Rc;

use serde::ser::{Error as _, SerializeSeq, SerializeStruct, SerializeTuple};
use serde::{Serialize, Serializer};

use super::registry::{SnapshotType, SnapshotTypes, ambiguous, snapshot_types};
use super::{DANGLING, MAX_ENTITIES, Snapshot};
use crate::context::Context;
use crate::entity::Entity;
use crate::storage::ComponentRef;

/// The entities of the snapshot being written, by position.
pub(super) struct Positions {
    /// The live entities, in creation order: entity `p` of the snapshot is
    /// `handles[p]`.
    handles: Vec<Entity>,
    /// By slot index, the position of the slot's live entity.
    by_slot: Vec<u32>,
}

impl Positions {
    pub(super) fn of(context: &Context) -> Self {
        let handles = context.entities.alive_in_creation_order();
        let mut by_slot = vec![DANGLING; context.entities.slot_capacity()];
        for (position, entity) in handles.iter().enumerate() {
            by_slot[entity.index() as usize] = position as u32;
        }
        Positions { handles, by_slot }
    }

    /// How many entities the snapshot holds, as it writes it: `Err` with
    /// the message if the context has more than a snapshot holds.
    pub(super) fn count(&self, context: &Context) -> Result<u32, String> {
        u32::try_from(self.handles.len())
            .ok()
            .filter(|&count| count <= MAX_ENTITIES)
            .ok_or_else(|| {
                format!(
                    "context `{}` has {} entities, more than a snapshot holds ({MAX_ENTITIES})",
                    context.name,
                    self.handles.len()
                )
            })
    }

    /// The position of the live entity in slot `slot`.
    #[inline(always)]
    pub(super) fn of_slot(&self, slot: u32) -> u32 {
        self.by_slot[slot as usize]
    }

    /// The position of `entity`, if it is one of the snapshot's.
    fn position(&self, entity: Entity) -> Option<u32> {
        let position = *self.by_slot.get(entity.index() as usize)?;
        (self.handles.get(position as usize) == Some(&entity)).then_some(position)
    }
}

thread_local! {
    /// The snapshot being written on this thread, for `Entity`'s `Serialize`.
    static WRITING: RefCell<Option<Rc<Positions>>> = const { RefCell::new(None) };
}

/// Makes `Entity`'s `Serialize` write positions in a snapshot while it lives;
/// puts back what was there before (a snapshot written inside another's
/// value) when dropped, also on an error or a panic.
pub(super) struct Writing(Option<Rc<Positions>>);

impl Writing {
    pub(super) fn enter(positions: Rc<Positions>) -> Self {
        Writing(WRITING.with(|writing| writing.replace(Some(positions))))
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        let previous = self.0.take();
        WRITING.with(|writing| *writing.borrow_mut() = previous);
    }
}

/// Inside a snapshot ([`Context::snapshot`]), a handle writes as the
/// position of its entity in the snapshot (a `u32`: entity `p` is the
/// `p`-th live entity in creation order), or as `u32::MAX` if it names no
/// entity of the snapshot (destroyed, a placeholder, or another context's):
/// restored, that is a handle that names no entity. Outside a snapshot a
/// handle means nothing (handles differ per context and per run), so
/// serializing one is an error.
impl Serialize for Entity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let position = WRITING.with(|writing| writing.borrow().as_ref().map(|positions| positions.position(*self)));
        match position {
            Some(position) => serializer.serialize_u32(position.unwrap_or(DANGLING)),
            None => Err(S::Error::custom(format!(
                "entity {self} is serialized outside a context snapshot: a handle names an entity only in its \
                 context, so it is written only as part of `Context::snapshot`"
            ))),
        }
    }
}

impl Serialize for Snapshot<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let context = self.context;
        let types = snapshot_types();
        let positions = Rc::new(Positions::of(context));
        let count = positions.count(context).map_err(S::Error::custom)?;
        // Per component id, the values to write with their entities'
        // positions (views into storage: nothing is copied).
        let mut columns: Vec<Vec<(u32, ComponentRef<'_>)>> = (0..types.id_count()).map(|_| Vec::new()).collect();
        for (position, &entity) in positions.handles.iter().enumerate() {
            let view = context.entity(entity).expect("a listed entity is alive");
            for component in view.components() {
                if types.of(component.id()).is_some() {
                    columns[component.id().index()].push((position as u32, component));
                }
            }
        }
        let _writing = Writing::enter(positions);
        let mut out = serializer.serialize_struct("Snapshot", 2)?;
        out.serialize_field("entities", &count)?;
        out.serialize_field(
            "components",
            &ColumnsOut {
                types,
                columns: &columns,
            },
        )?;
        out.end()
    }
}

/// The `components` field: one `(name, values)` pair per opted-in type
/// some entity has, by name.
struct ColumnsOut<'s, 'a> {
    types: &'static SnapshotTypes,
    columns: &'s [Vec<(u32, ComponentRef<'a>)>],
}

impl Serialize for ColumnsOut<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let present = || {
            self.types
                .ordered()
                .iter()
                .map(|&ty| (ty, &self.columns[ty.id().index()]))
                .filter(|(_, values)| !values.is_empty())
        };
        let mut out = serializer.serialize_seq(Some(present().count()))?;
        for (ty, values) in present() {
            if self.types.is_ambiguous(ty.name()) {
                return Err(S::Error::custom(ambiguous(ty.name())));
            }
            out.serialize_element(&(ty.name(), ValuesOut { ty, values }))?;
        }
        out.end()
    }
}

/// The values of one type: `(entity position, value)` pairs, by position.
struct ValuesOut<'s, 'a> {
    ty: &'static dyn SnapshotType,
    values: &'s [(u32, ComponentRef<'a>)],
}

impl Serialize for ValuesOut<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_seq(Some(self.values.len()))?;
        for (position, component) in self.values {
            let value = self.ty.value(component).expect("a column holds values of its type");
            out.serialize_element(&Pair(*position, value))?;
        }
        out.end()
    }
}

/// `(position, value)` as a 2-tuple.
struct Pair<'a>(u32, &'a dyn erased_serde::Serialize);

impl Serialize for Pair<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_tuple(2)?;
        out.serialize_element(&self.0)?;
        out.serialize_element(self.1)?;
        out.end()
    }
}
