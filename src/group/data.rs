//! `Groups`: what a context keeps per group beyond its membership (which
//! lives in the routes): the group's handlers and its cached entity list,
//! and the lookup from matcher to group.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::entity::Entity;
use crate::error::Error;
use crate::group::GroupEvent;
use crate::id::{GroupId, SubscriptionId};
use crate::matcher::Matcher;

pub(crate) type GroupHandler = Box<dyn FnMut(&GroupEvent<'_>) + Send + Sync>;

/// One group's handlers and cached entity list.
#[derive(Default)]
pub(crate) struct GroupData {
    cache: Mutex<EntityCache>,
    handlers: Vec<(SubscriptionId, GroupHandler)>,
}

/// A group's entities collected into a list, and the sum of its archetypes'
/// versions when it was built: rebuilt only once they changed.
#[derive(Default)]
struct EntityCache {
    built: Option<u64>,
    list: Arc<Vec<Entity>>,
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
    /// The group's entities as a shared list, rebuilt by `fill` only if its
    /// archetypes changed (their versions add up to `version`) since the last
    /// call. The list's memory is reused when no earlier list is still held.
    pub(crate) fn cached_entities(
        &self,
        version: u64,
        len: usize,
        fill: impl FnOnce(&mut Vec<Entity>),
    ) -> Arc<Vec<Entity>> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.built != Some(version) {
            match Arc::get_mut(&mut cache.list) {
                Some(list) => {
                    list.clear();
                    fill(list);
                }
                None => {
                    let mut list = Vec::with_capacity(len);
                    fill(&mut list);
                    cache.list = Arc::new(list);
                }
            }
            cache.built = Some(version);
        }
        Arc::clone(&cache.list)
    }

    /// The number of handlers subscribed to this group.
    pub(crate) fn handler_count(&self) -> usize {
        self.handlers.len()
    }
}
