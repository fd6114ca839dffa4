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
/// it (until then it is empty and nothing keeps it): built then from the
/// group's iteration, then kept current by the group's routes, each entity
/// that joins going at the end, each that leaves giving its place to the
/// last entry (swap-remove).
///
/// Two copies: `live`, always current and never shared, and `shared`, the
/// list last handed out, which the lists made from it share and which must
/// not change while one of them is alive. A change updates `live` and notes
/// the place it wrote; the next call for the list writes the noted places
/// into `shared` (O(changes), in place) if no list handed out is still
/// alive, and copies `live` whole only if one is.
#[derive(Default)]
struct Listing {
    /// Whether the list is kept.
    listed: bool,
    /// The entities, current.
    live: Vec<Entity>,
    /// By entity slot, its place in `live` (or `UNLISTED`).
    places: Vec<u32>,
    /// The list last handed out: `live` as it was then.
    shared: Arc<Vec<Entity>>,
    /// The places of `live` written since `shared` was last brought up to
    /// date (some maybe twice; the places past its length need no note).
    stale: Vec<u32>,
    /// More places were written than are worth noting: `shared` is to be
    /// copied from `live` whole.
    overflow: bool,
}

/// Brings `list`, a copy of `live` that missed the writes at places `stale`
/// (and any change of length), up to date.
fn replay(list: &mut Vec<Entity>, live: &[Entity], stale: &[u32]) {
    list.truncate(live.len());
    for &place in stale {
        if let (Some(old), Some(&new)) = (list.get_mut(place as usize), live.get(place as usize)) {
            *old = new;
        }
    }
    let len = list.len();
    list.extend_from_slice(&live[len..]);
}

impl Listing {
    /// Notes that place `place` of `live` was written.
    #[inline]
    fn note(&mut self, place: u32) {
        if self.overflow {
            return;
        }
        // Past this, replaying costs about what a copy does: stop noting.
        if self.stale.len() > self.live.len() / 2 + 64 {
            self.overflow = true;
            self.stale.clear();
        } else {
            self.stale.push(place);
        }
    }

    /// `entity` joined the group: it goes at the end.
    fn join(&mut self, entity: Entity) {
        let slot = entity.index() as usize;
        if self.places.len() <= slot {
            self.places.resize(slot + 1, UNLISTED);
        }
        debug_assert_eq!(self.places[slot], UNLISTED, "{entity} joins a group it is listed in");
        let place = self.live.len() as u32;
        self.live.push(entity);
        self.places[slot] = place;
        self.note(place);
    }

    /// `entity` left the group: the last entry takes its place.
    fn leave(&mut self, entity: Entity) {
        let place = self
            .places
            .get_mut(entity.index() as usize)
            .map_or(UNLISTED, |place| std::mem::replace(place, UNLISTED));
        debug_assert!(
            (place as usize) < self.live.len(),
            "{entity} leaves a group it is not listed in"
        );
        if place as usize >= self.live.len() {
            return;
        }
        self.live.swap_remove(place as usize);
        if let Some(&moved) = self.live.get(place as usize) {
            self.places[moved.index() as usize] = place;
            self.note(place);
        }
    }

    /// Whether `shared` is `live`.
    fn is_current(&self) -> bool {
        !self.overflow && self.stale.is_empty() && self.shared.len() == self.live.len()
    }

    /// `live`, shared: `shared` brought up to date first, in place if no
    /// list handed out is alive, else as a new copy.
    fn share(&mut self) -> Arc<Vec<Entity>> {
        if !self.is_current() {
            match Arc::get_mut(&mut self.shared) {
                Some(list) if !self.overflow => replay(list, &self.live, &self.stale),
                Some(list) => {
                    list.clear();
                    list.extend_from_slice(&self.live);
                }
                None => {
                    let mut list = Vec::with_capacity(self.live.capacity());
                    list.extend_from_slice(&self.live);
                    self.shared = Arc::new(list);
                }
            }
            self.stale.clear();
            self.overflow = false;
        }
        Arc::clone(&self.shared)
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
    /// entity list: the list follows. O(1).
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
    /// list: O(1), plus O(changes since the last call), plus a copy if the
    /// list handed out last is still alive and the group changed since.
    pub(crate) fn entities(&self, fill: impl FnOnce(&mut Vec<Entity>)) -> (Arc<Vec<Entity>>, bool) {
        let mut listing = self.lock();
        if listing.listed {
            return (listing.share(), false);
        }
        let listing = &mut *listing;
        listing.live.clear();
        fill(&mut listing.live);
        listing.places.clear();
        if let Some(top) = listing.live.iter().map(|entity| entity.index() as usize).max() {
            listing.places.resize(top + 1, UNLISTED);
        }
        for (place, entity) in listing.live.iter().enumerate() {
            listing.places[entity.index() as usize] = place as u32;
        }
        listing.stale.clear();
        listing.overflow = true;
        listing.listed = true;
        (listing.share(), true)
    }

    /// If the group keeps its entity list: whether it holds `members` (the
    /// group's iteration), each once, knows each one's place, and whether
    /// the list handed out last comes up to date from what was noted.
    pub(crate) fn check_listing(&self, members: impl Iterator<Item = Entity>) -> Result<(), String> {
        let listing = self.lock();
        if !listing.listed {
            return Ok(());
        }
        let mut members: Vec<Entity> = members.collect();
        let mut listed = listing.live.clone();
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
        if !listing.overflow {
            let mut shared = listing.shared.to_vec();
            replay(&mut shared, &listing.live, &listing.stale);
            if shared != listing.live {
                return Err(format!(
                    "the list handed out, {:?}, comes to {shared:?} from the places noted, not {:?}",
                    listing.shared, listing.live
                ));
            }
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
