//! `Groups`: what a context keeps per group beyond its membership (which
//! lives in the routes): the group's handlers and its entity list (kept
//! current once someone asked for it), and the lookup from matcher to group.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::entity::Entity;
use crate::error::Error;
use crate::group::GroupEvent;
use crate::id::{GroupId, SubscriptionId};
use crate::matcher::Matcher;

pub(crate) type GroupHandler = Box<dyn FnMut(&GroupEvent<'_>) + Send + Sync>;

/// One group's handlers and entity list.
#[derive(Default)]
pub(crate) struct GroupData {
    /// Behind a lock because the first [`Group::entities`](crate::Group::entities)
    /// builds it through a shared view of the context; the context's own
    /// changes reach it through `&mut` (no locking).
    listing: Mutex<Listing>,
    handlers: Vec<(SubscriptionId, GroupHandler)>,
}

/// Marks a slot with no place in a group's entity list.
const UNLISTED: u32 = u32::MAX;

/// A group's entities as a list, kept from the first time someone asks for
/// it: built then from the group's iteration, then kept current by the
/// group's routes, each entity that joins going at the end, each that leaves
/// giving its place to the last entry (swap-remove). Until someone asks, it
/// is empty and nothing keeps it.
#[derive(Default)]
struct Listing {
    /// Whether the list is kept.
    listed: bool,
    /// The entities, shared with the lists handed out: changed in place while
    /// no handed-out list is alive, copied first otherwise.
    list: Arc<Vec<Entity>>,
    /// By entity slot, its place in `list` (or `UNLISTED`).
    places: Vec<u32>,
}

impl Listing {
    /// The list, to change: copied first if a list handed out is still alive
    /// (with room to grow, so the next joins do not copy it again).
    fn list_mut(&mut self) -> &mut Vec<Entity> {
        if Arc::get_mut(&mut self.list).is_none() {
            let mut copy = Vec::with_capacity(self.list.len() + self.list.len() / 8 + 8);
            copy.extend_from_slice(&self.list);
            self.list = Arc::new(copy);
        }
        // Not shared (any more): no copy here.
        Arc::make_mut(&mut self.list)
    }

    /// `entity` joined the group: it goes at the end.
    fn join(&mut self, entity: Entity) {
        let slot = entity.index() as usize;
        if self.places.len() <= slot {
            self.places.resize(slot + 1, UNLISTED);
        }
        debug_assert_eq!(self.places[slot], UNLISTED, "{entity} joins a group it is listed in");
        let list = self.list_mut();
        let place = list.len() as u32;
        list.push(entity);
        self.places[slot] = place;
    }

    /// `entity` left the group: the last entry takes its place.
    fn leave(&mut self, entity: Entity) {
        let place = self
            .places
            .get_mut(entity.index() as usize)
            .map_or(UNLISTED, |place| std::mem::replace(place, UNLISTED)) as usize;
        debug_assert!(place < self.list.len(), "{entity} leaves a group it is not listed in");
        if place >= self.list.len() {
            return;
        }
        let list = self.list_mut();
        list.swap_remove(place);
        if let Some(&moved) = list.get(place) {
            self.places[moved.index() as usize] = place as u32;
        }
    }
}

/// The groups of a context, by creation order.
pub(crate) struct Groups {
    context: u64,
    list: Vec<GroupData>,
    by_matcher: HashMap<Matcher, u32>,
}

impl Groups {
    /// The groups of the context with instance id `context` (none yet).
    pub(crate) fn new(context: u64) -> Self {
        Groups {
            context,
            list: Vec::new(),
            by_matcher: HashMap::new(),
        }
    }

    /// The number of groups.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// The public id of group `index`.
    #[inline]
    pub(crate) fn id(&self, index: u32) -> GroupId {
        GroupId {
            context: self.context,
            index,
        }
    }

    /// The index of group `id`; [`Error::UnknownGroup`] (naming `context`)
    /// if it is not one of these groups.
    pub(crate) fn lookup(&self, id: GroupId, context: &'static str) -> Result<u32, Error> {
        if id.context == self.context && (id.index as usize) < self.list.len() {
            Ok(id.index)
        } else {
            Err(Error::UnknownGroup { context, group: id })
        }
    }

    #[inline]
    pub(crate) fn get(&self, index: u32) -> &GroupData {
        &self.list[index as usize]
    }

    /// The group of an equal matcher, if there is one.
    pub(crate) fn find(&self, matcher: &Matcher) -> Option<u32> {
        self.by_matcher.get(matcher).copied()
    }

    /// Records group `index` (the next one) for `matcher`.
    pub(crate) fn push(&mut self, index: u32, matcher: Matcher) {
        debug_assert_eq!(index as usize, self.list.len());
        self.list.push(GroupData::default());
        self.by_matcher.insert(matcher, index);
    }

    /// Whether group `index` has handlers.
    #[inline]
    pub(crate) fn has_handlers(&self, index: u32) -> bool {
        !self.list[index as usize].handlers.is_empty()
    }

    /// Whether group `index` keeps its entity list.
    pub(crate) fn is_listed(&self, index: u32) -> bool {
        self.list[index as usize].lock().listed
    }

    /// `entity` joined (`joined`) or left group `index`, which keeps its
    /// entity list: the list follows. O(1), plus one copy of the list if a
    /// list handed out before is still alive.
    #[inline]
    pub(crate) fn list(&mut self, index: u32, entity: Entity, joined: bool) {
        let listing = self.list[index as usize]
            .listing
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if joined {
            listing.join(entity);
        } else {
            listing.leave(entity);
        }
    }

    /// Calls group `index`'s handlers with `event`.
    #[inline]
    pub(crate) fn emit(&mut self, index: u32, event: &GroupEvent<'_>) {
        for (_, handler) in &mut self.list[index as usize].handlers {
            handler(event);
        }
    }

    /// Subscribes `handler` to group `index`.
    pub(crate) fn subscribe(&mut self, index: u32, id: SubscriptionId, handler: GroupHandler) {
        self.list[index as usize].handlers.push((id, handler));
    }

    /// Removes a group subscription; `false` if no group has it.
    pub(crate) fn unsubscribe(&mut self, id: SubscriptionId) -> bool {
        for group in &mut self.list {
            if let Some(at) = group.handlers.iter().position(|(have, _)| *have == id) {
                drop(group.handlers.remove(at));
                return true;
            }
        }
        false
    }
}

impl GroupData {
    fn lock(&self) -> MutexGuard<'_, Listing> {
        self.listing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The group's entities as a shared list. The first call builds it with
    /// `fill` (the group's iteration) and returns `true` with it: the caller
    /// must then have the routes keep it current. Later calls share the kept
    /// list.
    pub(crate) fn entities(&self, fill: impl FnOnce(&mut Vec<Entity>)) -> (Arc<Vec<Entity>>, bool) {
        let mut listing = self.lock();
        if listing.listed {
            return (Arc::clone(&listing.list), false);
        }
        let Listing { list, places, .. } = &mut *listing;
        if Arc::get_mut(list).is_none() {
            *list = Arc::new(Vec::new());
        }
        // Not shared: no copy here.
        let list = Arc::make_mut(list);
        list.clear();
        fill(list);
        places.clear();
        for (place, entity) in list.iter().enumerate() {
            let slot = entity.index() as usize;
            if places.len() <= slot {
                places.resize(slot + 1, UNLISTED);
            }
            places[slot] = place as u32;
        }
        listing.listed = true;
        (Arc::clone(&listing.list), true)
    }

    /// If the group keeps its entity list: whether it holds `members` (the
    /// group's iteration), each once, and knows each one's place.
    pub(crate) fn check_listing(&self, members: impl Iterator<Item = Entity>) -> Result<(), String> {
        let listing = self.lock();
        if !listing.listed {
            return Ok(());
        }
        let mut members: Vec<Entity> = members.collect();
        let mut listed = listing.list.to_vec();
        for (place, entity) in listed.iter().enumerate() {
            if listing.places.get(entity.index() as usize) != Some(&(place as u32)) {
                return Err(format!(
                    "the entity list has {entity} at {place}, but not its record of places"
                ));
            }
        }
        let placed = listing.places.iter().filter(|&&place| place != UNLISTED).count();
        if placed != listed.len() {
            return Err(format!(
                "the entity list holds {} entities but places {placed}",
                listed.len()
            ));
        }
        members.sort_unstable();
        listed.sort_unstable();
        if members != listed {
            return Err(format!("the entity list holds {listed:?}, the group {members:?}"));
        }
        Ok(())
    }

    /// The number of handlers subscribed to this group.
    pub(crate) fn handler_count(&self) -> usize {
        self.handlers.len()
    }
}
