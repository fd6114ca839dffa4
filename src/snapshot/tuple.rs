//! The type lists of typed snapshots: [`SnapshotTuple`], implemented for a
//! component type and for tuples of 1 to 12 of them, which hands each
//! listed type to generic code (the typed writer and reader) by its place in
//! the list; and the check that a list can be in a snapshot.

use serde::Serialize;
use serde::de::DeserializeOwned;
use smallvec::SmallVec;

use super::registry::snapshot_types;
use crate::bundle::ComponentTuple;
use crate::component::Component;
use crate::error::Error;
use crate::id::ComponentId;
use crate::storage::ComponentSet;

mod sealed {
    use serde::Serialize;
    use serde::de::DeserializeOwned;

    use crate::component::Component;

    /// Hands the type at a place of the list to a generic visitor.
    pub trait Elements {
        /// Calls `visitor` with the type at place `index` of the list
        /// (`None` past its end).
        fn visit<V: ElementVisitor>(index: usize, visitor: V) -> Option<V::Output>;
    }

    /// Generic code run for one type of a list.
    pub trait ElementVisitor {
        /// What the visit gives.
        type Output;
        /// Runs for type `T`.
        fn visit<T: Component + Serialize + DeserializeOwned>(self) -> Self::Output;
    }
}

pub(crate) use sealed::{ElementVisitor, Elements};

/// The component types a typed snapshot writes and reads: one type, e.g.
/// `Position`, or a tuple of up to 12, e.g. `(Position, Velocity)`; used by
/// [`Context::snapshot_of`](crate::Context::snapshot_of) and
/// [`Context::restore_of`](crate::Context::restore_of) (feature `serde`).
///
/// Each type implements `Serialize` and `DeserializeOwned` (a compile error
/// otherwise) and must be listed in [`snapshot!`](crate::snapshot!), which
/// is checked when the typed snapshot is made: the listing tells whether
/// the type implements [`MapEntities`](crate::MapEntities) and lets the
/// registry read what the typed path wrote. A type not listed there, a
/// type named twice in the tuple, or one sharing its declared name with
/// another listed type is refused with [`Error::SnapshotTypeRefused`].
///
/// The order of the tuple does not matter: a snapshot lists its component
/// types by declared name.
///
/// # Example
/// ```
/// use reactecs::{Context, Error};
/// use serde::{Deserialize, Serialize};
/// #[derive(Serialize, Deserialize)]
/// struct Cell(f32, f32);
/// #[derive(Serialize, Deserialize)]
/// struct Drift(f32, f32);
/// #[derive(Serialize, Deserialize)]
/// struct Draft(u8); // not listed in `snapshot!`
/// reactecs::component!(Cell, Drift, Draft);
/// reactecs::snapshot!(Cell, Drift);
///
/// let game = Context::with_name("Game");
/// assert!(game.snapshot_of::<(Cell, Drift)>().is_ok());
/// assert!(game.snapshot_of::<Cell>().is_ok());
/// let err = game.snapshot_of::<(Cell, Draft)>().err().unwrap();
/// assert!(matches!(err, Error::SnapshotTypeRefused { component: "Draft", .. }));
/// ```
///
/// A type without the serde traits does not compile:
/// ```compile_fail
/// struct Plain(u32);
/// reactecs::component!(Plain);
/// let game = reactecs::Context::new();
/// let _ = game.snapshot_of::<Plain>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component type with the serde traits, or a tuple of them",
    label = "expected a component type implementing `Serialize` and `Deserialize`, or a tuple such as `(Position, \
             Velocity)` of up to 12 of them",
    note = "declare each type with `reactecs::component!`, derive `Serialize` and `Deserialize`, and list it in \
            `reactecs::snapshot!`"
)]
pub trait SnapshotTuple: ComponentTuple + sealed::Elements {}

impl<C: Component + Serialize + DeserializeOwned> Elements for C {
    #[inline]
    fn visit<V: ElementVisitor>(index: usize, visitor: V) -> Option<V::Output> {
        (index == 0).then(|| visitor.visit::<C>())
    }
}

/// A single type is a list of one: `snapshot_of::<Position>()`.
impl<C: Component + Serialize + DeserializeOwned> SnapshotTuple for C {}

macro_rules! tuples {
    ($($name:ident),+) => {
        impl<$($name: Component + Serialize + DeserializeOwned),+> Elements for ($($name,)+) {
            #[allow(unused_assignments)]
            #[inline]
            fn visit<V: ElementVisitor>(index: usize, visitor: V) -> Option<V::Output> {
                let mut at = 0;
                $(
                    if index == at {
                        return Some(visitor.visit::<$name>());
                    }
                    at += 1;
                )+
                None
            }
        }

        impl<$($name: Component + Serialize + DeserializeOwned),+> SnapshotTuple for ($($name,)+) {}
    };
}

tuples!(A);
tuples!(A, B);
tuples!(A, B, C);
tuples!(A, B, C, D);
tuples!(A, B, C, D, E);
tuples!(A, B, C, D, E, F);
tuples!(A, B, C, D, E, F, G);
tuples!(A, B, C, D, E, F, G, H);
tuples!(A, B, C, D, E, F, G, H, I);
tuples!(A, B, C, D, E, F, G, H, I, J);
tuples!(A, B, C, D, E, F, G, H, I, J, K);
tuples!(A, B, C, D, E, F, G, H, I, J, K, L);

/// The ids of the types of `C`, in tuple order (at most 12).
pub(crate) type TypeIds = SmallVec<[ComponentId; 12]>;

/// The ids of the types of `C`, in tuple order, once checked: each listed
/// in [`snapshot!`](crate::snapshot!), named once in the tuple, with a
/// declared name no other listed type has. Otherwise
/// [`Error::SnapshotTypeRefused`] for context `context`.
pub(crate) fn checked_ids<C: SnapshotTuple>(context: &'static str) -> Result<TypeIds, Error> {
    let types = snapshot_types();
    let mut ids = TypeIds::new();
    C::for_each_id(|id| ids.push(id));
    let mut seen = ComponentSet::new();
    for &id in &ids {
        let refused = |reason: &'static str| Error::SnapshotTypeRefused {
            context,
            component: id.name(),
            reason,
        };
        let Some(ty) = types.of(id) else {
            return Err(refused(
                "it is not listed in `reactecs::snapshot!` (list it there: snapshots hold listed types only)",
            ));
        };
        if !seen.insert(id) {
            return Err(refused("the type list names it twice (name each type once)"));
        }
        if types.is_ambiguous(ty.name()) {
            return Err(refused(
                "another type listed in `reactecs::snapshot!` is declared with the same name, which keys both in \
                 a snapshot (rename one)",
            ));
        }
    }
    Ok(ids)
}
