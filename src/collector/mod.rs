//! `Collector`: gathers the entities that group events name, until cleared.
//!
//! On [`Context`](crate::Context): [`add_collector`](crate::Context::add_collector),
//! [`collector`](crate::Context::collector) (a read-only [`Collector`],
//! brought up to date), [`collectors`](crate::Context::collectors), and
//! [`collector_mut`](crate::Context::collector_mut), the
//! [`CollectorMut`](crate::CollectorMut) handle that activates,
//! deactivates, clears, removes and drains one. The context's side is in
//! `context/collector.rs` and `context/drain.rs`.
//!
//! This module has the public side (triggers, collector specs, the read-only
//! view); `data.rs` has what the context keeps per collector, which the
//! change routes feed.

use std::fmt;

use crate::aerc::Owner;
use crate::component::Component;
use crate::entity::Entity;
use crate::matcher::Matcher;
use crate::routes::{Membership, Takes};
use crate::slot_table::SlotTable;
use crate::storage::ComponentInfo;

mod data;

pub use crate::id::{CollectorId, IntoCollectorId};
pub(crate) use data::{CollectorData, Collectors};
use data::{RemovedStore, RemovedValues};

/// Which group events a collector takes from one group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Trigger {
    /// The entity joined the group, or a component of the group's matcher
    /// was replaced on a member (this is how a reactive system sees
    /// `replace`).
    Added,
    /// The entity left the group (a removal, or destroy). Unlike Entitas, a
    /// `replace` is not a removal: it does not trigger `Removed`.
    Removed,
    /// `Added` or `Removed`.
    AddedOrRemoved,
    /// A component of the group's matcher was replaced on a member (only
    /// that: joining the group does not count).
    Updated,
}

impl Trigger {
    /// The group events this trigger takes: `Added` takes joins and updates,
    /// `Removed` leaves, `AddedOrRemoved` all three, `Updated` updates only.
    pub(crate) fn takes(self) -> Takes {
        Takes {
            joined: matches!(self, Trigger::Added | Trigger::AddedOrRemoved),
            left: matches!(self, Trigger::Removed | Trigger::AddedOrRemoved),
            updated: !matches!(self, Trigger::Removed),
        }
    }

    /// The method name that makes this trigger from a matcher.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Trigger::Added => "added",
            Trigger::Removed => "removed",
            Trigger::AddedOrRemoved => "added_or_removed",
            Trigger::Updated => "updated",
        }
    }
}

/// A matcher paired with a [`Trigger`]: "entities joining (or leaving, or
/// updated in) the group of this matcher". Made with [`Matcher::added`](crate::Matcher::added) and
/// friends; one or more make a [`CollectorSpec`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TriggerOnEvent {
    /// The matcher whose group is watched.
    pub matcher: Matcher,
    /// Which of the group's events collect.
    pub trigger: Trigger,
}

impl Matcher {
    /// Collect entities that join this matcher's group, or whose matcher
    /// component is replaced while they are members.
    pub fn added(self) -> TriggerOnEvent {
        self.on(Trigger::Added)
    }

    /// Collect entities that leave this matcher's group (a `replace` is not a
    /// leave).
    pub fn removed(self) -> TriggerOnEvent {
        self.on(Trigger::Removed)
    }

    /// Collect entities that join or leave this matcher's group, or are
    /// updated in it.
    pub fn added_or_removed(self) -> TriggerOnEvent {
        self.on(Trigger::AddedOrRemoved)
    }

    /// Collect entities whose matcher component is replaced while they are
    /// members (joining does not count). A zero-sized component (a tag or
    /// flag) is never replaced: it is only added and removed.
    pub fn updated(self) -> TriggerOnEvent {
        self.on(Trigger::Updated)
    }

    /// Collect the events `trigger` names.
    pub fn on(self, trigger: Trigger) -> TriggerOnEvent {
        TriggerOnEvent { matcher: self, trigger }
    }
}

impl TriggerOnEvent {
    /// This trigger and `other`, for one collector over two groups.
    pub fn and(self, other: TriggerOnEvent) -> CollectorSpec {
        CollectorSpec::from(self).and(other)
    }

    /// A collector on this trigger that keeps each collected entity's `T`
    /// as it was when the entity left the group. See
    /// [`CollectorSpec::keep_removed`].
    pub fn keep_removed<T: Component + Clone>(self) -> CollectorSpec {
        CollectorSpec::from(self).keep_removed::<T>()
    }
}

impl fmt::Display for TriggerOnEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}()", self.matcher, self.trigger.method())
    }
}

/// What a collector watches: one or more [`TriggerOnEvent`]s, and optionally
/// a component whose removed values it keeps. Give it to
/// [`Context::add_collector`](crate::Context::add_collector).
///
/// Two specs are equal when they have the same triggers in the same order
/// and keep the removed values of the same component (or of none).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CollectorSpec {
    triggers: Vec<TriggerOnEvent>,
    keep: Option<Keep>,
}

/// The component whose removed values a collector keeps, and the maker of
/// their store. Compared, hashed and printed by the component alone.
#[derive(Clone, Copy)]
struct Keep {
    component: &'static ComponentInfo,
    make: fn() -> Box<dyn RemovedStore>,
}

impl PartialEq for Keep {
    fn eq(&self, other: &Self) -> bool {
        self.component.id() == other.component.id()
    }
}

impl Eq for Keep {}

impl std::hash::Hash for Keep {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.component.id().hash(state);
    }
}

impl fmt::Debug for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.component.name())
    }
}

impl CollectorSpec {
    /// Adds a trigger on another group.
    pub fn and(mut self, trigger: TriggerOnEvent) -> Self {
        self.triggers.push(trigger);
        self
    }

    /// Keeps, for each collected entity, the value of its `T` when it last
    /// left a group through a `Removed` (or `AddedOrRemoved`) trigger: the
    /// removed value when removing `T` made it leave, else its `T` at that
    /// moment (on destroy, or when another component's change made it leave).
    /// Read it with [`Collector::removed`](crate::Collector::removed). `T` is cloned at each such event.
    pub fn keep_removed<T: Component + Clone>(mut self) -> Self {
        self.keep = Some(Keep {
            component: T::component_info(),
            make: RemovedValues::<T>::boxed,
        });
        self
    }

    /// The triggers, in order.
    pub fn triggers(&self) -> &[TriggerOnEvent] {
        &self.triggers
    }

    /// The triggers and the maker of the removed-value store, taken apart.
    pub(crate) fn into_parts(self) -> (Vec<TriggerOnEvent>, Option<Box<dyn RemovedStore>>) {
        (self.triggers, self.keep.map(|keep| (keep.make)()))
    }
}

impl From<TriggerOnEvent> for CollectorSpec {
    fn from(trigger: TriggerOnEvent) -> Self {
        CollectorSpec {
            triggers: vec![trigger],
            keep: None,
        }
    }
}

impl<const N: usize> From<[TriggerOnEvent; N]> for CollectorSpec {
    fn from(triggers: [TriggerOnEvent; N]) -> Self {
        CollectorSpec {
            triggers: triggers.into(),
            keep: None,
        }
    }
}

impl From<Vec<TriggerOnEvent>> for CollectorSpec {
    fn from(triggers: Vec<TriggerOnEvent>) -> Self {
        CollectorSpec { triggers, keep: None }
    }
}

/// A read-only view of a collector: the entities collected since it was
/// last cleared, in the order they were first collected, each once.
///
/// A collector watches one or more groups, each with a [`Trigger`]. Every
/// collected entity is retained (AERC) by the collector until it is cleared,
/// so a destroyed entity stays recognisable (`aerc().is_enabled(e) == Ok(false)`)
/// rather than stale. An entity removed and re-added stays collected, once.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Clone, Debug, PartialEq)] struct Position(f32);
/// reactecs::component!(Position);
///
/// let mut game = Context::new();
/// let moved = game.add_collector(Matcher::all_of::<Position>().added());
/// let a = game.create_entity_with(Position(0.0))?;
/// let b = game.create_entity_with(Position(0.0))?;
/// game.replace(b, Position(1.0))?; // a replace is "added" for Added triggers
/// game.replace(a, Position(1.0))?; // already collected: no duplicate
/// assert_eq!(game.collector(moved)?.entities(), [a, b]);
///
/// game.collector_mut(moved)?.clear();
/// assert!(game.collector(moved)?.is_empty());
/// # Ok::<(), reactecs::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Collector<'a> {
    id: CollectorId,
    data: &'a CollectorData,
    membership: &'a Membership,
    entities: &'a SlotTable,
}

impl<'a> Collector<'a> {
    pub(crate) fn new(
        id: CollectorId,
        data: &'a CollectorData,
        membership: &'a Membership,
        entities: &'a SlotTable,
    ) -> Self {
        Collector {
            id,
            data,
            membership,
            entities,
        }
    }

    /// This collector's id.
    pub fn id(&self) -> CollectorId {
        self.id
    }

    /// How many entities are collected.
    pub fn len(&self) -> usize {
        self.data.entities.len()
    }

    /// Whether nothing is collected.
    pub fn is_empty(&self) -> bool {
        self.data.entities.is_empty()
    }

    /// Whether it collects (see [`CollectorMut::deactivate`](crate::CollectorMut::deactivate)).
    pub fn is_active(&self) -> bool {
        self.data.active
    }

    /// Whether `entity` is collected.
    pub fn contains(&self, entity: Entity) -> bool {
        self.data.contains(entity, self.entities)
    }

    /// The collected entities, in the order they were first collected. Some
    /// may be destroyed since (check [`Aerc::is_enabled`](crate::Aerc::is_enabled)).
    pub fn entities(&self) -> &'a [Entity] {
        &self.data.entities
    }

    /// The collected entities, in order.
    pub fn iter(&self) -> std::iter::Copied<std::slice::Iter<'a, Entity>> {
        self.data.entities.iter().copied()
    }

    /// The owner of the retains this collector holds (internal: only the
    /// context retains and releases with it).
    pub fn owner(&self) -> Owner {
        self.data.owner
    }

    /// The groups watched and their triggers, in the order given.
    pub fn triggers(&self) -> impl Iterator<Item = (crate::id::GroupId, Trigger)> + 'a {
        let context = self.id.context;
        self.data
            .triggers
            .iter()
            .map(move |&(index, trigger)| (crate::id::GroupId { context, index }, trigger))
    }

    /// The value of `entity`'s `T` when it last left a watched group, for a
    /// collector made with [`keep_removed::<T>`](CollectorSpec::keep_removed):
    /// for collected entities, and during a reactive system's `execute` for
    /// the entities it executes. `None` if `T` is not the kept type, or no
    /// value was recorded (e.g. the entity was only ever added).
    pub fn removed<T: Component + Clone>(&self) -> RemovedView<'a, T> {
        let values = self
            .data
            .removed
            .as_deref()
            .and_then(|store| store.as_any().downcast_ref::<RemovedValues<T>>());
        RemovedView { values }
    }
}

/// The kept removed values of one component type, from [`Collector::removed`](crate::Collector::removed).
pub struct RemovedView<'a, T> {
    values: Option<&'a RemovedValues<T>>,
}

impl<T> Clone for RemovedView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RemovedView<'_, T> {}

/// The component's name and how many entities have a kept value:
/// `RemovedView<Health> { values: 2 }`.
impl<T> fmt::Debug for RemovedView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = crate::type_name::short_type_name(std::any::type_name::<T>());
        f.debug_struct(&format!("RemovedView<{name}>"))
            .field("values", &self.values.map_or(0, RemovedValues::len))
            .finish()
    }
}

impl<'a, T: Component + Clone> RemovedView<'a, T> {
    /// The value `entity`'s `T` had when it last left a watched group.
    pub fn get(&self, entity: Entity) -> Option<&'a T> {
        self.values?.get(entity)
    }
}

impl<'a> IntoIterator for Collector<'a> {
    type Item = Entity;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, Entity>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Display for Collector<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Collector(")?;
        for (i, &(index, trigger)) in self.data.triggers.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            let matcher = &self.membership.group(index).matcher;
            write!(f, "{matcher}.{}()", trigger.method())?;
        }
        write!(f, ")")?;
        if let Some(store) = &self.data.removed {
            write!(f, " keeping removed {}", store.component())?;
        }
        let len = self.len();
        write!(f, " with {len} {}", if len == 1 { "entity" } else { "entities" })?;
        if !self.is_active() {
            write!(f, ", inactive")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Collector<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Collector")
            .field("id", &self.id)
            .field("active", &self.is_active())
            .field("entities", &self.entities())
            .finish()
    }
}
