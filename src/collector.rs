//! `Collector`: gathers the entities that group events name, until cleared.

use std::fmt;

use smallvec::SmallVec;

use crate::aerc::Owner;
pub use crate::collectors::Trigger;
use crate::collectors::{CollectorData, CollectorKey, RemovedStore, RemovedValues};
use crate::component::Component;
use crate::context::Context;
use crate::entity::Entity;
use crate::error::Error;
use crate::group::GroupId;
use crate::matcher::Matcher;

/// A matcher paired with a [`Trigger`]: "entities joining (or leaving, or
/// updated in) the group of this matcher". Made with [`Matcher::added`] and
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
    /// members (joining does not count).
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
/// [`Context::collector`].
pub struct CollectorSpec {
    triggers: Vec<TriggerOnEvent>,
    keep: Option<fn() -> Box<dyn RemovedStore>>,
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
    /// Read it with [`Collector::removed`]. `T` is cloned at each such event.
    pub fn keep_removed<T: Component + Clone>(mut self) -> Self {
        self.keep = Some(RemovedValues::<T>::boxed);
        self
    }

    /// The triggers, in order.
    pub fn triggers(&self) -> &[TriggerOnEvent] {
        &self.triggers
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

/// Identifies a collector of one context, from [`Context::collector`]. Valid
/// until [`Context::remove_collector`]; it knows its context, so using it
/// with another is [`Error::UnknownCollector`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CollectorId {
    pub(crate) context: u32,
    pub(crate) key: CollectorKey,
}

impl CollectorId {
    /// The context the collector belongs to.
    pub fn context(&self) -> crate::ContextId {
        crate::ContextId(self.context)
    }
}

impl fmt::Display for CollectorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use slotmap::Key;
        let raw = self.key.data().as_ffi();
        write!(f, "collector {}v{}", raw as u32, raw >> 32)
    }
}

/// A read-only view of a collector: the entities collected since it was
/// last cleared, in the order they were first collected, each once.
///
/// A collector watches one or more groups, each with a [`Trigger`]. Every
/// collected entity is retained (AERC) by the collector until it is cleared,
/// so a destroyed entity stays recognisable (`is_enabled == Ok(false)`)
/// rather than stale. An entity removed and re-added stays collected, once.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Clone, Debug, PartialEq)] struct Position(f32);
/// reactecs::component!(Position);
///
/// let mut game = Context::new();
/// let moved = game.collector(Matcher::all_of::<Position>().added());
/// let a = game.create_entity_with(Position(0.0))?;
/// let b = game.create_entity_with(Position(0.0))?;
/// game.replace(b, Position(1.0))?; // a replace is "added" for Added triggers
/// game.replace(a, Position(1.0))?; // already collected: no duplicate
/// assert_eq!(game.get_collector(moved)?.entities(), [a, b]);
///
/// game.clear_collector(moved)?;
/// assert!(game.get_collector(moved)?.is_empty());
/// # Ok::<(), reactecs::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Collector<'a> {
    context: &'a Context,
    id: CollectorId,
    data: &'a CollectorData,
}

impl<'a> Collector<'a> {
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

    /// Whether it collects (see [`Context::deactivate_collector`]).
    pub fn is_active(&self) -> bool {
        self.data.active
    }

    /// Whether `entity` is collected.
    pub fn contains(&self, entity: Entity) -> bool {
        self.data.contains(entity)
    }

    /// The collected entities, in the order they were first collected. Some
    /// may be destroyed since (check [`Context::is_enabled`]).
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
    pub fn triggers(&self) -> impl Iterator<Item = (GroupId, Trigger)> + 'a {
        let groups = &self.context.groups;
        self.data
            .triggers
            .iter()
            .map(move |&(index, trigger)| (groups.id(index), trigger))
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

/// The kept removed values of one component type, from [`Collector::removed`].
pub struct RemovedView<'a, T> {
    values: Option<&'a RemovedValues<T>>,
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
            let matcher = &self.context.groups.get(index).matcher;
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

impl Context {
    /// Makes a collector: from now on it gathers the entities that the
    /// groups of `spec`'s matchers (made if needed) report under each
    /// trigger. It starts active. Each collector is separate (two collectors
    /// on one trigger collect the same entities, and are cleared apart).
    ///
    /// Collectors are plain data in the context, updated directly by group
    /// events; each collected entity is retained by the collector until
    /// cleared.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Debug, PartialEq)] struct Health(u32);
    /// struct Dead;
    /// reactecs::component!(Health, Dead);
    ///
    /// let mut game = Context::new();
    /// // Over two groups; keeping the Health each entity had when it left.
    /// let spec = Matcher::all_of::<Health>().removed().and(Matcher::all_of::<Dead>().added());
    /// let gone = game.collector(spec.keep_removed::<Health>());
    /// let e = game.create_entity_with(Health(3))?;
    /// game.remove::<Health>(e)?;
    /// let collector = game.get_collector(gone)?;
    /// assert_eq!(collector.entities(), [e]);
    /// assert_eq!(collector.removed::<Health>().get(e), Some(&Health(3)));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn collector(&mut self, spec: impl Into<CollectorSpec>) -> CollectorId {
        let spec = spec.into();
        let mut triggers = SmallVec::new();
        for TriggerOnEvent { matcher, trigger } in spec.triggers {
            let group = self.group(matcher);
            triggers.push((group.index, trigger));
        }
        let removed = spec.keep.map(|make| make());
        let key = self
            .collectors
            .insert(triggers.clone(), removed, self.entities.slot_capacity());
        for (index, trigger) in triggers {
            self.groups.attach_collector(index, key, trigger);
        }
        CollectorId {
            context: self.instance(),
            key,
        }
    }

    /// The collector with id `id`.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`] if it was removed or belongs to another
    /// context.
    pub fn get_collector(&self, id: CollectorId) -> Result<Collector<'_>, Error> {
        let data = self.collector_data(id)?;
        Ok(Collector {
            context: self,
            id,
            data,
        })
    }

    /// Every collector, in slot order (creation order, except that a new
    /// collector may take the slot of a removed one).
    pub fn collectors(&self) -> impl Iterator<Item = Collector<'_>> + '_ {
        let context = self.instance();
        self.collectors.iter().map(move |(key, data)| Collector {
            context: self,
            id: CollectorId { context, key },
            data,
        })
    }

    /// Lets the collector collect again (events since its deactivation are
    /// not replayed). Activating an active collector does nothing.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn activate_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        self.collector_mut(id)?.active = true;
        Ok(())
    }

    /// Stops the collector, clearing it (releasing what it held). It
    /// collects nothing until activated.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn deactivate_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        self.collector_mut(id)?.active = false;
        self.clear_collector(id)
    }

    /// Empties the collector, releasing each entity it held (a destroyed
    /// entity whose last retain this was is freed:
    /// [`ContextEvent::EntityReleased`](crate::ContextEvent::EntityReleased)).
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn clear_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        let collector = self.collector_mut(id)?;
        let owner = collector.owner;
        let mut batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.clear();
        }
        self.release_all(&mut batch, owner);
        self.collector_mut(id)?.return_batch(batch);
        Ok(())
    }

    /// Removes the collector, releasing what it held. Its id is then unknown.
    ///
    /// # Errors
    /// [`Error::UnknownCollector`].
    pub fn remove_collector(&mut self, id: CollectorId) -> Result<(), Error> {
        self.clear_collector(id)?;
        let data = self.collectors.remove(id.key).expect("found by clear_collector");
        for &(index, _) in &data.triggers {
            self.groups.detach_collector(index, id.key);
        }
        Ok(())
    }

    fn collector_data(&self, id: CollectorId) -> Result<&CollectorData, Error> {
        let found = (id.context == self.instance())
            .then(|| self.collectors.get(id.key))
            .flatten();
        found.ok_or(Error::UnknownCollector {
            context: self.name,
            collector: id,
        })
    }

    fn collector_mut(&mut self, id: CollectorId) -> Result<&mut CollectorData, Error> {
        let context = self.name;
        let found = (id.context == self.instance())
            .then(|| self.collectors.get_mut(id.key))
            .flatten();
        found.ok_or(Error::UnknownCollector { context, collector: id })
    }

    /// Moves the collector's entities into `out` for a reactive system that
    /// holds retains as `to` (an internal owner): entities that pass `filter`
    /// (and are enabled, unless `include_destroyed`) are handed over from the
    /// collector's retain to `to`'s; the rest are released. The collector is empty
    /// afterwards, and its kept removed values become the batch's until
    /// [`finish_batch`](Context::finish_batch).
    pub(crate) fn drain_collector(
        &mut self,
        id: CollectorId,
        to: Owner,
        include_destroyed: bool,
        out: &mut Vec<Entity>,
        mut filter: impl FnMut(&Context, Entity) -> bool,
    ) -> Result<(), Error> {
        debug_assert!(out.is_empty(), "a reactive system drains into an empty buffer");
        let collector = self.collector_mut(id)?;
        debug_assert!(collector.owner.is_internal() && to.is_internal());
        let batch = collector.take_batch();
        if let Some(store) = &mut collector.removed {
            store.start_batch();
        }
        // Internal owners are only counted, so handing every retain from the
        // collector to `to` changes nothing. Filtering afterwards, in place,
        // keeps a panicking filter from leaking retains: what it did not reach
        // stays in `out`, held by `to`, for the caller to release.
        out.extend_from_slice(&batch);
        self.collector_mut(id)?.return_batch(batch);
        // With no destroyed entity kept anywhere, every collected one is enabled.
        let all_enabled = self.entities.disabled_len() == 0;
        out.retain(|&entity| {
            let enabled = all_enabled || self.entities.get(entity).is_some();
            let keep = (enabled || include_destroyed) && filter(self, entity);
            if !keep {
                self.release_own(entity, to);
            }
            keep
        });
        self.fire_released();
        Ok(())
    }

    /// Ends the batch that [`drain_collector`](Context::drain_collector)
    /// started: forgets its kept removed values.
    pub(crate) fn finish_batch(&mut self, id: CollectorId) -> Result<(), Error> {
        if let Some(store) = &mut self.collector_mut(id)?.removed {
            store.end_batch();
        }
        Ok(())
    }
}
