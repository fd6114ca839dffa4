//! Comparing two contexts: [`Context::diff`] and [`Context::diff_by_key`]
//! list how their entities differ in the component types a caller names,
//! as a [`ContextDiff`] that prints one difference per line.
//!
//! Entities are matched either by creation order (the first-created live
//! entity of one context with the first of the other, and so on: what a
//! save/load round trip or a deterministic replay keeps), or by a key
//! component (a net id: what a client and its server share). Handles are
//! never compared: they are per context.
//!
//! ```
//! # use reactecs::Context;
//! #[derive(Debug, PartialEq)]
//! struct Position(f32, f32);
//! #[derive(Debug, PartialEq)]
//! struct Health(u32);
//! reactecs::component!(Position, Health);
//!
//! let mut left = Context::new();
//! let mut right = Context::new();
//! for game in [&mut left, &mut right] {
//!     game.create_entity_with((Position(0.0, 0.0), Health(3)))?;
//! }
//! assert!(left.diff::<(Position, Health)>(&right).is_empty());
//!
//! let e = right.entities().next().unwrap();
//! right.replace(e, Position(0.0, 2.5))?;
//! right.create_entity_with(Health(1))?;
//! let diff = left.diff::<(Position, Health)>(&right);
//! assert_eq!(
//!     diff.to_string(),
//!     "entity #0: Position(0.0, 0.0) != Position(0.0, 2.5)\n\
//!      entity #1 only in right\n"
//! );
//! # Ok::<(), reactecs::Error>(())
//! ```

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt::{self, Debug};
use std::hash::Hash;

use crate::component::Component;
use crate::context::Context;
use crate::entity::Entity;

mod sealed {
    pub trait Sealed {}
}

/// A tuple of component types that [`Context::diff`] compares, e.g.
/// `(Position, Health)`, or a single component type. Each type needs
/// `PartialEq` (to compare values) and `Debug` (to show them).
/// Implemented for tuples of up to 12 components.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component type or a tuple of component types that can be compared",
    label = "expected a component type, or a tuple such as `(Position, Health)`",
    note = "each compared component type needs `PartialEq` and `Debug`"
)]
pub trait DiffTuple: sealed::Sealed + 'static {
    /// Compares each type's value on `l` (of `left`) and `r` (of `right`),
    /// in tuple order, pushing what differs for the entity labelled `label`.
    #[doc(hidden)]
    fn compare(left: &Context, l: Entity, right: &Context, r: Entity, label: &str, out: &mut Vec<Difference>);
}

/// Which of the two compared contexts: the one `diff` is called on (left)
/// or the one given to it (right).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The context `diff` was called on.
    Left,
    /// The context passed to `diff`.
    Right,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Left => "left",
            Side::Right => "right",
        })
    }
}

/// One difference between two contexts. Entities are named by their
/// place in creation order (`#3`) or by their key (`NetId(7)`); values as
/// their `Debug` text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Difference {
    /// A matched pair of entities differ in one component: its value, or
    /// whether they have it (`None`: that side lacks it).
    Component {
        /// The entity: `#n` (creation order) or its key.
        entity: String,
        /// The component type's name.
        component: &'static str,
        /// The left value (`Debug`), if the left entity has the component.
        left: Option<String>,
        /// The right value (`Debug`), if the right entity has the component.
        right: Option<String>,
    },
    /// An entity of one side has no match on the other.
    Unmatched {
        /// The entity: `#n` (creation order) or its key.
        entity: String,
        /// The side that has it.
        side: Side,
    },
    /// Several entities of one side hold the same key
    /// ([`diff_by_key`](Context::diff_by_key)); they are not compared.
    DuplicateKey {
        /// The key (`Debug`).
        key: String,
        /// The side where it is held more than once.
        side: Side,
        /// How many entities of that side hold it.
        holders: usize,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Component {
                entity,
                component,
                left,
                right,
            } => {
                let show = |value: &Option<String>| match value {
                    Some(value) => value.clone(),
                    None => format!("(no {component})"),
                };
                write!(f, "entity {entity}: {} != {}", show(left), show(right))
            }
            Difference::Unmatched { entity, side } => write!(f, "entity {entity} only in {side}"),
            Difference::DuplicateKey { key, side, holders } => {
                write!(f, "key {key} held by {holders} entities in {side}")
            }
        }
    }
}

/// How two contexts differ in the component types compared, from
/// [`Context::diff`] or [`Context::diff_by_key`]: empty when they agree.
/// Prints (`Display`) one difference per line, each line ended by a
/// newline; differences come in the left context's creation order, then
/// entities only the right one has, in its creation order.
///
/// Two diffs are equal (`Eq`) when they list the same differences.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextDiff {
    differences: Vec<Difference>,
}

impl ContextDiff {
    /// Whether the two contexts agree: no difference.
    pub fn is_empty(&self) -> bool {
        self.differences.is_empty()
    }

    /// How many differences there are.
    pub fn len(&self) -> usize {
        self.differences.len()
    }

    /// The differences, in the order they print.
    pub fn differences(&self) -> &[Difference] {
        &self.differences
    }

    /// The differences, in the order they print.
    pub fn iter(&self) -> std::slice::Iter<'_, Difference> {
        self.differences.iter()
    }
}

impl<'a> IntoIterator for &'a ContextDiff {
    type Item = &'a Difference;
    type IntoIter = std::slice::Iter<'a, Difference>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Display for ContextDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for difference in &self.differences {
            writeln!(f, "{difference}")?;
        }
        Ok(())
    }
}

/// The live entities of `context`, in creation order.
fn in_creation_order(context: &Context) -> Vec<Entity> {
    let mut entities: Vec<(u64, Entity)> = context
        .entities()
        .filter_map(|entity| context.creation_index(entity).ok().map(|index| (index, entity)))
        .collect();
    entities.sort_unstable_by_key(|&(index, _)| index);
    entities.into_iter().map(|(_, entity)| entity).collect()
}

impl Context {
    /// How this context (left) and `other` (right) differ in the component
    /// types `C` (a type or a tuple, e.g. `(Position, Health)`; each
    /// `PartialEq + Debug`), entities matched by creation order: the `n`th
    /// live entity created here with the `n`th live entity created there,
    /// named `#n` (from 0). An entity past the other side's last is listed
    /// as only on its side. Other component types, handles, groups and
    /// indices are not compared.
    ///
    /// Creation order is what a snapshot round trip and a deterministic
    /// replay keep (see `Context::restore`). To match entities by a key
    /// component instead, use [`diff_by_key`](Context::diff_by_key). The
    /// [`diff`](crate::diff) module has more.
    ///
    /// # Example
    /// ```
    /// # use reactecs::Context;
    /// #[derive(Debug, PartialEq)]
    /// struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let mut saved = Context::new();
    /// saved.create_entities_with((0..3).map(Health))?;
    /// let mut loaded = Context::new();
    /// loaded.create_entities_with([Health(0), Health(7)])?;
    /// let diff = saved.diff::<Health>(&loaded);
    /// assert_eq!(diff.len(), 2);
    /// assert_eq!(
    ///     diff.to_string(),
    ///     "entity #1: Health(1) != Health(7)\nentity #2 only in left\n"
    /// );
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn diff<C: DiffTuple>(&self, other: &Context) -> ContextDiff {
        let left = in_creation_order(self);
        let right = in_creation_order(other);
        let mut differences = Vec::new();
        for (n, (&l, &r)) in left.iter().zip(&right).enumerate() {
            C::compare(self, l, other, r, &format!("#{n}"), &mut differences);
        }
        let (longer, side) = if left.len() > right.len() {
            (&left, Side::Left)
        } else {
            (&right, Side::Right)
        };
        let shorter = left.len().min(right.len());
        for n in shorter..longer.len() {
            differences.push(Difference::Unmatched {
                entity: format!("#{n}"),
                side,
            });
        }
        ContextDiff { differences }
    }

    /// How this context (left) and `other` (right) differ in the component
    /// types `C`, entities matched by their value of the key component `K`
    /// (a net id shared by a client and its server), named by the key's
    /// `Debug` text. A key held on one side only is listed as such; a key
    /// held by several entities of one side is listed once as a
    /// [`Difference::DuplicateKey`] and not compared. Entities without `K`
    /// are not compared.
    ///
    /// # Example
    /// ```
    /// # use reactecs::Context;
    /// #[derive(Debug, PartialEq, Eq, Hash)]
    /// struct NetId(u32);
    /// #[derive(Debug, PartialEq)]
    /// struct Position(f32, f32);
    /// reactecs::component!(NetId, Position);
    ///
    /// let mut server = Context::new();
    /// server.create_entities_with([(NetId(1), Position(0.0, 0.0)), (NetId(2), Position(5.0, 5.0))])?;
    /// let mut client = Context::new();
    /// // Created in another order: matched by key, not by creation.
    /// client.create_entities_with([(NetId(2), Position(5.0, 5.0)), (NetId(1), Position(0.0, 1.0))])?;
    /// let diff = server.diff_by_key::<NetId, Position>(&client);
    /// assert_eq!(
    ///     diff.to_string(),
    ///     "entity NetId(1): Position(0.0, 0.0) != Position(0.0, 1.0)\n"
    /// );
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn diff_by_key<K, C>(&self, other: &Context) -> ContextDiff
    where
        K: Component + Eq + Hash + Debug,
        C: DiffTuple,
    {
        let left = keyed::<K>(self);
        let right = keyed::<K>(other);
        let mut differences = Vec::new();
        for key in &left.order {
            let holders = left.holders.get(key).map_or(&[][..], Vec::as_slice);
            let label = format!("{key:?}");
            let theirs = right.holders.get(key);
            if holders.len() > 1 {
                differences.push(Difference::DuplicateKey {
                    key: label.clone(),
                    side: Side::Left,
                    holders: holders.len(),
                });
            }
            match theirs {
                None => differences.push(Difference::Unmatched {
                    entity: label,
                    side: Side::Left,
                }),
                Some(theirs) if theirs.len() > 1 => differences.push(Difference::DuplicateKey {
                    key: label,
                    side: Side::Right,
                    holders: theirs.len(),
                }),
                Some(theirs) => {
                    if let ([l], [r]) = (holders, theirs.as_slice()) {
                        C::compare(self, *l, other, *r, &label, &mut differences);
                    }
                }
            }
        }
        for key in &right.order {
            if left.holders.contains_key(key) {
                continue;
            }
            let holders = right.holders.get(key).map_or(&[][..], Vec::as_slice);
            let label = format!("{key:?}");
            if holders.len() > 1 {
                differences.push(Difference::DuplicateKey {
                    key: label.clone(),
                    side: Side::Right,
                    holders: holders.len(),
                });
            }
            differences.push(Difference::Unmatched {
                entity: label,
                side: Side::Right,
            });
        }
        ContextDiff { differences }
    }
}

/// The holders of each key of one context.
struct Keyed<'c, K> {
    /// Key -> its holders, in creation order.
    holders: HashMap<&'c K, Vec<Entity>>,
    /// Each key once, in the creation order of its first holder.
    order: Vec<&'c K>,
}

fn keyed<K: Component + Eq + Hash>(context: &Context) -> Keyed<'_, K> {
    let mut holders: HashMap<&K, Vec<Entity>> = HashMap::new();
    let mut order = Vec::new();
    for entity in in_creation_order(context) {
        let Ok(key) = context.get::<K>(entity) else {
            continue;
        };
        match holders.entry(key) {
            Entry::Occupied(mut list) => list.get_mut().push(entity),
            Entry::Vacant(slot) => {
                order.push(key);
                slot.insert(vec![entity]);
            }
        }
    }
    Keyed { holders, order }
}

/// The value of `C` on `entity`: `None` if it lacks it, its `Debug` text
/// (or the type's name, if the value cannot be read) otherwise.
fn value_of<C: Component + Debug>(context: &Context, entity: Entity) -> Option<Result<&C, &'static str>> {
    context
        .has::<C>(entity)
        .then(|| context.get::<C>(entity).map_err(|_| C::component_id().name()))
}

/// Compares component `C` of `l` (of `left`) and `r` (of `right`).
fn compare_one<C: Component + PartialEq + Debug>(
    left: &Context,
    l: Entity,
    right: &Context,
    r: Entity,
    label: &str,
    out: &mut Vec<Difference>,
) {
    let a = value_of::<C>(left, l);
    let b = value_of::<C>(right, r);
    let same = match (&a, &b) {
        (None, None) => true,
        (Some(Ok(a)), Some(Ok(b))) => a == b,
        (Some(a), Some(b)) => a.is_err() && b.is_err(),
        _ => false,
    };
    if !same {
        let show = |value: Option<Result<&C, &'static str>>| {
            value.map(|value| match value {
                Ok(value) => format!("{value:?}"),
                Err(name) => name.to_owned(),
            })
        };
        out.push(Difference::Component {
            entity: label.to_owned(),
            component: C::component_id().name(),
            left: show(a),
            right: show(b),
        });
    }
}

macro_rules! tuples {
    ($($name:ident),*) => {
        impl<$($name: Component + PartialEq + Debug),*> sealed::Sealed for ($($name,)*) {}

        impl<$($name: Component + PartialEq + Debug),*> DiffTuple for ($($name,)*) {
            #[allow(unused_variables)]
            fn compare(left: &Context, l: Entity, right: &Context, r: Entity, label: &str, out: &mut Vec<Difference>) {
                $(compare_one::<$name>(left, l, right, r, label, out);)*
            }
        }
    };
}

impl<C: Component + PartialEq + Debug> sealed::Sealed for C {}

/// A single component type is a tuple of one: `diff::<Position>(..)`.
impl<C: Component + PartialEq + Debug> DiffTuple for C {
    fn compare(left: &Context, l: Entity, right: &Context, r: Entity, label: &str, out: &mut Vec<Difference>) {
        compare_one::<C>(left, l, right, r, label, out);
    }
}

tuples!();
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
