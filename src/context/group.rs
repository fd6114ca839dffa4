//! The context's side of groups: making them, reading them, subscribing to
//! their events.

use super::Context;
use crate::error::Error;
use crate::event::ContextEvent;
use crate::group::{Group, GroupEvent, GroupId, GroupSource, IntoGroupId};
use crate::id::SubscriptionId;
use crate::matcher::Matcher;

impl Context {
    /// The id of the group of entities `matcher` selects, created (with a
    /// `GroupCreated` event) the first time this matcher, or an equal one, is
    /// asked for; later calls return the same id. A new group holds the
    /// entities that match already, and stays current from then on. Read it
    /// with [`group`](Context::group).
    ///
    /// Returning an id, not a view, leaves the context free to change: keep
    /// the id (in a system, say) and read the group whenever needed.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// struct Position; struct Velocity;
    /// reactecs::component!(Position, Velocity);
    ///
    /// let mut game = Context::new();
    /// let movers = game.add_group(Matcher::all_of::<(Position, Velocity)>());
    /// assert_eq!(movers, game.add_group(Matcher::all_of::<(Velocity, Position)>()));
    /// game.create_entity_with((Position, Velocity))?;
    /// assert_eq!(game.group(movers)?.len(), 1);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn add_group(&mut self, matcher: Matcher) -> GroupId {
        let index = match self.groups.find(&matcher) {
            Some(index) => index,
            None => {
                let index = self.routes.add_group(matcher.clone(), &self.archetypes);
                self.groups.push(index, matcher);
                self.invalidate_routes();
                if !self.subscribers.is_empty() {
                    let group = self.groups.id(index);
                    let matcher = &self.routes.membership().group(index).matcher;
                    self.subscribers.emit(&ContextEvent::GroupCreated { group, matcher });
                }
                index
            }
        };
        self.groups.id(index)
    }

    /// The group with id `id`.
    ///
    /// `id` is a [`GroupId`] from [`add_group`](Context::add_group): passing
    /// a [`Matcher`] here is a compile error whose note names `add_group`
    /// (see [`IntoGroupId`]).
    ///
    /// # Errors
    /// [`Error::UnknownGroup`] if `id` is not one of this context's groups.
    pub fn group(&self, id: impl IntoGroupId) -> Result<Group<'_>, Error> {
        let id = id.into_group_id();
        self.groups.lookup(id, self.name)?;
        Ok(self.group_view(id))
    }

    /// Every group, in creation order.
    pub fn groups(&self) -> impl Iterator<Item = Group<'_>> + '_ {
        (0..self.groups.len() as u32).map(|index| self.group_view(self.groups.id(index)))
    }

    /// The view of group `id`, which is one of this context's.
    pub(crate) fn group_view(&self, id: GroupId) -> Group<'_> {
        let source = GroupSource {
            membership: self.routes.membership(),
            archetypes: &self.archetypes,
            entities: &self.entities,
            sparse: &self.sparse,
            groups: &self.groups,
        };
        Group::new(id, self.name, source)
    }

    /// Calls `handler` with every event of group `id` from now on: entities
    /// joining, leaving, and updated (see [`GroupEvent`]). Stop it with
    /// [`unsubscribe`](Context::unsubscribe).
    ///
    /// # Errors
    /// [`Error::UnknownGroup`] if `id` is not one of this context's groups.
    ///
    /// # Example
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use reactecs::prelude::*;
    /// #[derive(Debug)] struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let mut game = Context::new();
    /// let living = game.add_group(Matcher::all_of::<Health>());
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let sink = log.clone();
    /// game.subscribe_group(living, move |event: &GroupEvent<'_>| {
    ///     let line = match event {
    ///         GroupEvent::Added { .. } => "added".to_string(),
    ///         GroupEvent::Updated { old, new, .. } => format!("{old:?} -> {new:?}"),
    ///         GroupEvent::Removed { removed, .. } => format!("removed {removed:?}"),
    ///         _ => unreachable!(),
    ///     };
    ///     sink.lock().unwrap().push(line);
    /// })?;
    /// let e = game.create_entity_with(Health(3))?;
    /// game.replace(e, Health(2))?;
    /// game.remove::<Health>(e)?;
    /// assert_eq!(*log.lock().unwrap(), ["added", "Health(3) -> Health(2)", "removed Some(Health(2))"]);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn subscribe_group(
        &mut self,
        id: GroupId,
        handler: impl FnMut(&GroupEvent<'_>) + Send + Sync + 'static,
    ) -> Result<SubscriptionId, Error> {
        let index = self.groups.lookup(id, self.name)?;
        let subscription = self.next_subscription_id();
        self.groups.subscribe(index, subscription, Box::new(handler));
        self.invalidate_routes();
        Ok(subscription)
    }

    /// Checks the entity list of each group that keeps one against the
    /// group's iteration (for the invariant walker).
    pub(super) fn check_group_lists(&self) -> Result<(), String> {
        for group in self.groups() {
            let data = self.groups.get(group.id().index);
            data.check_listing(group.iter())
                .map_err(|error| format!("group {}: {error}", group.matcher()))?;
        }
        Ok(())
    }

    /// The next subscription id.
    pub(crate) fn next_subscription_id(&mut self) -> SubscriptionId {
        let id = SubscriptionId {
            context: self.instance,
            number: self.next_subscription,
        };
        self.next_subscription += 1;
        id
    }
}
