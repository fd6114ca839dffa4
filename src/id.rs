//! The ids of component types, and of what a context owns: contexts,
//! groups, collectors, entity indices and subscriptions. They live here,
//! below every concept, so that storage, errors and change routes can name
//! them without importing the concepts; each concept re-exports its own id.
//! (What the registry knows of a component id, such as its name, is looked
//! up in `storage/component_info.rs`.)
//!
//! Every id of what a context owns carries the instance id of its context
//! ([`ContextId`]), so one used with another context is refused with an
//! error, never taken for one of that context's own. A component id is the
//! same in every context.

use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;

use slotmap::Key;

/// The id of a component type: a small dense integer, the same for a type in
/// every context of the program. Ids are given to all declared components at
/// once, in the order of their full type names, so they do not depend on which
/// type is used first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ComponentId(pub(crate) u32);

impl ComponentId {
    /// The id with the given index, declared or not (storage and sets work
    /// on indices they were given by ids).
    #[inline]
    pub(crate) fn at(index: usize) -> Self {
        ComponentId(u32::try_from(index).expect("an index of the registry or of a u32 id fits in u32"))
    }

    /// This id as an index, `0..ComponentInfo::all().len()` for declared types.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Identifies one context instance: the context of a
/// [`ContextEntity`](crate::system::ContextEntity), of a
/// [`CollectorId`] or of a [`GroupId`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextId(pub(crate) u64);

impl fmt::Display for ContextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "context #{}", self.0)
    }
}

/// Identifies a group of one context. Get one from
/// [`Context::add_group`](crate::Context::add_group); it stays valid for the
/// context's life (groups are never removed, and
/// [`Context::reset`](crate::Context::reset) keeps them). A `GroupId` knows
/// its context: using it with another context is an
/// [`Error::UnknownGroup`](crate::Error::UnknownGroup).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId {
    pub(crate) context: u64,
    pub(crate) index: u32,
}

impl fmt::Display for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "group {}", self.index)
    }
}

/// What [`Context::group`](crate::Context::group) reads a group by: a
/// [`GroupId`], and nothing else (the trait is sealed).
///
/// It exists for the compiler's message. `group(id)` reads a group that
/// [`Context::add_group`](crate::Context::add_group) made; passing it a
/// [`Matcher`](crate::Matcher) (as code written for Entitas' `GetGroup`
/// might) fails to compile with a note that names `add_group`, the call
/// that makes (or finds) the group of a matcher and returns its id.
///
/// ```compile_fail,E0277
/// use reactecs::prelude::*;
/// struct Position;
/// reactecs::component!(Position);
///
/// let game = Context::new();
/// // error: `Context::group` reads a group by its `GroupId`, not a `Matcher`
/// // note: to make a group from a `Matcher` ... call `add_group(matcher)`
/// let _ = game.group(Matcher::all_of::<Position>());
/// ```
#[diagnostic::on_unimplemented(
    message = "`Context::group` reads a group by its `GroupId`, not a `{Self}`",
    label = "expected a `GroupId`",
    note = "to make a group from a `Matcher` (or find the one an equal matcher made), call `add_group(matcher)`: it returns the `GroupId` that `group(id)` reads"
)]
pub trait IntoGroupId: sealed::Sealed {
    /// The id.
    #[doc(hidden)]
    fn into_group_id(self) -> GroupId;
}

impl IntoGroupId for GroupId {
    #[inline]
    fn into_group_id(self) -> GroupId {
        self
    }
}

/// What [`Context::collector`](crate::Context::collector) reads a collector
/// by: a [`CollectorId`], and nothing else (the trait is sealed).
///
/// It exists for the compiler's message. `collector(id)` reads a collector
/// that [`Context::add_collector`](crate::Context::add_collector) made;
/// passing it a trigger (`matcher.added()`, a
/// [`TriggerOnEvent`](crate::TriggerOnEvent)) or a
/// [`CollectorSpec`](crate::CollectorSpec) fails to compile with a note
/// that names `add_collector`, the call that makes a collector and returns
/// its id.
///
/// ```compile_fail,E0277
/// use reactecs::prelude::*;
/// struct Position;
/// reactecs::component!(Position);
///
/// let mut game = Context::new();
/// // error: `Context::collector` reads a collector by its `CollectorId`, not a `TriggerOnEvent`
/// // note: to make a collector from a trigger ... call `add_collector(trigger)`
/// let _ = game.collector(Matcher::all_of::<Position>().added());
/// ```
#[diagnostic::on_unimplemented(
    message = "`Context::collector` reads a collector by its `CollectorId`, not a `{Self}`",
    label = "expected a `CollectorId`",
    note = "to make a collector from a trigger (`matcher.added()`, `.removed()`, `.updated()`, ...) or a `CollectorSpec`, call `add_collector(trigger)`: it returns the `CollectorId` that `collector(id)` reads"
)]
pub trait IntoCollectorId: sealed::Sealed {
    /// The id.
    #[doc(hidden)]
    fn into_collector_id(self) -> CollectorId;
}

impl IntoCollectorId for CollectorId {
    #[inline]
    fn into_collector_id(self) -> CollectorId {
        self
    }
}

/// Keeps [`IntoGroupId`] and [`IntoCollectorId`] to the ids themselves.
mod sealed {
    pub trait Sealed {}
}

impl sealed::Sealed for GroupId {}
impl sealed::Sealed for CollectorId {}

/// A collector's slot in its context: the slot's index, and its
/// generation, which tells the collector apart from earlier ones in the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CollectorKey {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

slotmap::new_key_type! {
    /// An entity index's slot in its context.
    pub(crate) struct IndexKey;
}

/// `index v version` of a slot key.
fn write_key(f: &mut fmt::Formatter<'_>, what: &str, key: impl Key) -> fmt::Result {
    let raw = key.data().as_ffi();
    write!(f, "{what} {}v{}", raw as u32, raw >> 32)
}

/// Identifies a collector of one context, from
/// [`Context::add_collector`](crate::Context::add_collector). Valid until
/// [`CollectorMut::remove`](crate::CollectorMut::remove); it knows
/// its context, so using it with another is
/// [`Error::UnknownCollector`](crate::Error::UnknownCollector).
///
/// Ids are ordered by context, then by slot (not by creation: a removed
/// collector's slot is reused), so they can key sorted collections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CollectorId {
    pub(crate) context: u64,
    pub(crate) key: CollectorKey,
}

impl CollectorId {
    /// The context the collector belongs to.
    pub fn context(&self) -> ContextId {
        ContextId(self.context)
    }
}

impl fmt::Display for CollectorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "collector {}v{}", self.key.index, self.key.generation)
    }
}

/// Identifies an index of one context and its type, from
/// [`Context::add_index`](crate::Context::add_index):
/// [`Context::index`](crate::Context::index) gives the index back typed.
/// Valid until [`IndexMut::remove`](crate::IndexMut::remove); it
/// knows its context, so using it with another is
/// [`Error::UnknownIndex`](crate::Error::UnknownIndex).
///
/// Ids are ordered by context, then by slot (not by creation: a removed
/// index's slot is reused), so they can key sorted collections.
pub struct IndexId<I> {
    pub(crate) context: u64,
    pub(crate) key: IndexKey,
    index: PhantomData<fn() -> I>,
}

impl<I> IndexId<I> {
    pub(crate) fn new(context: u64, key: IndexKey) -> Self {
        IndexId {
            context,
            key,
            index: PhantomData,
        }
    }

    /// The context the index belongs to.
    pub fn context(&self) -> ContextId {
        ContextId(self.context)
    }
}

impl<I> Clone for IndexId<I> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<I> Copy for IndexId<I> {}

impl<I> PartialEq for IndexId<I> {
    fn eq(&self, other: &Self) -> bool {
        (self.context, self.key) == (other.context, other.key)
    }
}

impl<I> Eq for IndexId<I> {}

impl<I> PartialOrd for IndexId<I> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<I> Ord for IndexId<I> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.context, self.key).cmp(&(other.context, other.key))
    }
}

impl<I> Hash for IndexId<I> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.context, self.key).hash(state);
    }
}

impl<I> fmt::Display for IndexId<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_key(f, "index", self.key)
    }
}

impl<I> fmt::Debug for IndexId<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IndexId({self})")
    }
}

/// Identifies one subscription of one context, for
/// [`Context::unsubscribe`](crate::Context::unsubscribe), which refuses one
/// of another context's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubscriptionId {
    pub(crate) context: u64,
    pub(crate) number: u64,
}

impl SubscriptionId {
    /// The context whose subscription this is.
    pub fn context(&self) -> ContextId {
        ContextId(self.context)
    }
}

impl fmt::Display for SubscriptionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "subscription {}", self.number)
    }
}
