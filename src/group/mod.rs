//! `Group`: the live set of entities a matcher selects, and its events.
//!
//! A group is backed by the archetypes its matcher accepts (its membership,
//! kept by the change routes); this module has the public view of a group,
//! its events, and what the context keeps per group besides (`data.rs`: its
//! handlers and its cached entity list).

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::component::Component;
use crate::entities::Entities;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::matcher::Matcher;
use crate::routes::{Holding, Member, Membership};
use crate::storage::{Archetype, ArchetypeId, Archetypes, ComponentRef, SparseSet, SparseSets};

mod data;

pub use crate::id::GroupId;
pub(crate) use data::Groups;

/// A read-only view of a group: the entities its matcher selects, always
/// current.
///
/// A group is backed by the archetypes its matcher accepts, so its length is
/// a counter and its iteration walks chunks; there is no per-entity set. Its
/// order is deterministic: archetypes in creation order, rows in chunk order.
/// The same sequence of operations gives the same order, run after run.
///
/// A matcher that names flag or sparse components adds a check per entity
/// ([`len`](Group::len) counts members then). If its AllOf set names one, the
/// group walks that component's entries instead of its archetypes' rows (the
/// smallest such set, if several): in the order they were added, each
/// removal moving the last entry into the removed one's place.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// struct Position(f32); struct Velocity(f32);
/// reactecs::component!(Position, Velocity);
///
/// let mut game = Context::new();
/// let still = game.create_entity_with(Position(0.0))?;
/// let moving = game.create_entity_with((Position(0.0), Velocity(1.0)))?;
/// let movers = game.add_group(Matcher::all_of::<(Position, Velocity)>());
///
/// let group = game.group(movers)?;
/// assert_eq!(group.len(), 1);
/// assert!(group.contains(moving) && !group.contains(still));
/// assert_eq!(group.single_entity()?, Some(moving));
///
/// game.add(still, Velocity(2.0))?; // the group is live
/// assert_eq!(game.group(movers)?.len(), 2);
/// # Ok::<(), reactecs::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Group<'a> {
    id: GroupId,
    /// The context's name, for errors.
    context: &'static str,
    member: &'a Member,
    membership: &'a Membership,
    archetypes: &'a Archetypes,
    entities: &'a Entities,
    sparse: &'a SparseSets,
    groups: &'a Groups,
}

/// What a group is read from: the context's membership and storage.
pub(crate) struct GroupSource<'a> {
    pub(crate) membership: &'a Membership,
    pub(crate) archetypes: &'a Archetypes,
    pub(crate) entities: &'a Entities,
    pub(crate) sparse: &'a SparseSets,
    pub(crate) groups: &'a Groups,
}

impl<'a> Group<'a> {
    pub(crate) fn new(id: GroupId, context: &'static str, source: GroupSource<'a>) -> Self {
        Group {
            id,
            context,
            member: source.membership.group(id.index),
            membership: source.membership,
            archetypes: source.archetypes,
            entities: source.entities,
            sparse: source.sparse,
            groups: source.groups,
        }
    }

    /// This group's id, to keep and use later with [`Context::group`](crate::Context::group),
    /// [`Context::subscribe_group`](crate::Context::subscribe_group) or a query's
    /// [`in_group`](crate::Query::in_group).
    pub fn id(&self) -> GroupId {
        self.id
    }

    /// The matcher that defines the group.
    pub fn matcher(&self) -> &'a Matcher {
        &self.member.matcher
    }

    /// The archetypes of the group, in creation order.
    fn archetypes(&self) -> impl Iterator<Item = &'a Archetype> + use<'a> {
        let archetypes = self.archetypes;
        self.member.archetypes.iter().map(move |&a| archetypes.get(a))
    }

    /// The number of entities: the rows of the group's archetypes (a sum
    /// over its archetypes, not over its entities), or, for a matcher that
    /// names a flag or sparse component, a count of its members.
    pub fn len(&self) -> usize {
        if self.member.is_gated() {
            return self.iter().count();
        }
        self.archetypes().map(Archetype::len).sum()
    }

    /// Whether the group is empty.
    pub fn is_empty(&self) -> bool {
        if self.member.is_gated() {
            return self.iter().next().is_none();
        }
        self.archetypes().all(Archetype::is_empty)
    }

    /// Whether `entity` is alive and in the group.
    pub fn contains(&self, entity: Entity) -> bool {
        self.entities.location(entity).is_some_and(|at| {
            self.membership
                .contains(self.id.index, self.archetypes.get(at.archetype), entity, self.sparse)
        })
    }

    /// The entities, archetype by archetype, chunk by chunk. Borrows the
    /// context; to change entities while going through a group, use
    /// [`entities`](Group::entities) instead.
    pub fn iter(&self) -> GroupIter<'a> {
        let gate = self.member.is_gated().then_some((self.member, self.sparse));
        // A group that needs some sparse component goes through the smallest
        // such set's entries: its members only, not every row of its
        // archetypes.
        let driver = self
            .member
            .matcher
            .all()
            .iter()
            .filter(|&id| self.member.sparse.contains(id))
            .map(|id| self.sparse.set(id).map_or(&[][..], SparseSet::slots))
            .min_by_key(|slots| slots.len());
        GroupIter {
            archetypes: self.archetypes,
            ids: if driver.is_some() {
                [].iter()
            } else {
                self.member.archetypes.iter()
            },
            current: None,
            chunk: 0,
            rows: [].iter(),
            gate,
            driver: driver.map(|slots| (slots.iter(), self.entities)),
        }
    }

    /// The entities as a shared list that does not borrow the context, so a
    /// program can change the entities while going through it (Entitas'
    /// `GetEntities`). The list is built once and handed out again, without
    /// allocating, until the group's entities change; its memory is reused
    /// for the next build when no earlier list is still held.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// struct Health(u32);
    /// reactecs::component!(Health);
    ///
    /// let mut game = Context::new();
    /// game.create_entities_with([Health(0), Health(5)])?;
    /// let alive = game.add_group(Matcher::all_of::<Health>());
    /// let list = game.group(alive)?.entities();
    /// for &e in list.iter() {
    ///     if game.get::<Health>(e)?.0 == 0 {
    ///         game.destroy_entity(e)?;
    ///     }
    /// }
    /// assert_eq!(game.group(alive)?.len(), 1);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn entities(&self) -> EntityList {
        let sparse = self.member.sparse.iter().filter_map(|id| self.sparse.set(id));
        let version =
            self.archetypes().map(Archetype::version).sum::<u64>() + sparse.map(SparseSet::version).sum::<u64>();
        let data = self.groups.get(self.id.index);
        EntityList(data.cached_entities(version, self.len(), |list| list.extend(self.iter())))
    }

    /// The group's one entity: `None` when empty.
    ///
    /// # Errors
    /// [`Error::NotSingleEntity`](crate::Error::NotSingleEntity) when the group holds more than one.
    pub fn single_entity(&self) -> Result<Option<Entity>, Error> {
        match self.len() {
            0 => Ok(None),
            1 => Ok(self.iter().next()),
            count => Err(Error::NotSingleEntity {
                context: self.context,
                group: self.member.matcher.to_string(),
                count,
            }),
        }
    }

    /// The number of handlers subscribed to the group.
    pub(crate) fn handler_count(&self) -> usize {
        self.groups.get(self.id.index).handler_count()
    }
}

impl<'a> IntoIterator for Group<'a> {
    type Item = Entity;
    type IntoIter = GroupIter<'a>;

    fn into_iter(self) -> GroupIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Group<'a> {
    type Item = Entity;
    type IntoIter = GroupIter<'a>;

    fn into_iter(self) -> GroupIter<'a> {
        self.iter()
    }
}

/// The entities of a group, archetype by archetype, chunk by chunk: see
/// [`Group::iter`](crate::Group::iter). A clone goes on from the same place
/// on its own.
#[derive(Clone)]
pub struct GroupIter<'a> {
    archetypes: &'a Archetypes,
    ids: std::slice::Iter<'a, ArchetypeId>,
    current: Option<&'a Archetype>,
    chunk: usize,
    rows: std::slice::Iter<'a, Entity>,
    /// For a group with a per-entity check: its membership, and where the
    /// sparse components are.
    gate: Option<(&'a Member, &'a SparseSets)>,
    /// For a group that needs a sparse component: the slots of its
    /// smallest set, walked instead of the archetypes' rows.
    driver: Option<(std::slice::Iter<'a, u32>, &'a Entities)>,
}

/// Whether `entity`, a row of `archetype`, passes a group's per-entity
/// check (`gate`, if it has one).
#[inline]
fn admits(gate: Option<(&Member, &SparseSets)>, archetype: &Archetype, entity: Entity) -> bool {
    gate.is_none_or(|(member, sparse)| member.admits(archetype.set(), Holding::Slot(sparse, entity.index()), None))
}

impl Iterator for GroupIter<'_> {
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        if let Some((slots, entities)) = &mut self.driver {
            let entities = *entities;
            loop {
                let slot = *slots.next()?;
                let Some(entity) = entities.live_at(slot) else {
                    continue;
                };
                let at = entities
                    .location(entity)
                    .expect("`live_at` gives only live entities, which have locations");
                if admits(self.gate, self.archetypes.get(at.archetype), entity) {
                    return Some(entity);
                }
            }
        }
        loop {
            if let Some(&entity) = self.rows.next() {
                let archetype = self
                    .current
                    .expect("`rows` is filled only from the chunks of `current`");
                if admits(self.gate, archetype, entity) {
                    return Some(entity);
                }
                continue;
            }
            match self.current {
                Some(archetype) if self.chunk < archetype.chunk_count() => {
                    self.rows = archetype.chunk_entities(self.chunk).iter();
                    self.chunk += 1;
                }
                _ => {
                    self.current = Some(self.archetypes.get(*self.ids.next()?));
                    self.chunk = 0;
                }
            }
        }
    }
}

/// How many entities are left: `GroupIter { remaining: 3 }` (counted on a
/// clone, so printing does not advance the iterator).
impl fmt::Debug for GroupIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupIter")
            .field("remaining", &self.clone().count())
            .finish()
    }
}

impl fmt::Display for Group<'_> {
    /// `Group(AllOf(Position, Velocity)): 3 entities`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Group({}): {} entities", self.member.matcher, self.len())
    }
}

impl fmt::Debug for Group<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("id", &self.id.index)
            .field("matcher", &self.member.matcher)
            .field("len", &self.len())
            .field("archetypes", &self.member.archetypes.len())
            .field("subscribers", &self.handler_count())
            .finish()
    }
}

/// A group's entities, collected: see [`Group::entities`](crate::Group::entities). Cheap to clone
/// (shared); dereferences to `[Entity]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EntityList(Arc<Vec<Entity>>);

impl Deref for EntityList {
    type Target = [Entity];

    fn deref(&self) -> &[Entity] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a EntityList {
    type Item = &'a Entity;
    type IntoIter = std::slice::Iter<'a, Entity>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Something that happened to a group's membership, told to the group's
/// subscribers ([`Context::subscribe_group`](crate::Context::subscribe_group)).
///
/// Every group's membership is updated before any group event fires, and the
/// events of one change go to groups in their creation order. Group events
/// fire after `EntityCreated` / `EntityWillBeDestroyed` and before the
/// context's component events (`ComponentAdded`, `ComponentRemoved`,
/// `ComponentReplaced`) for the same change: see the table in the
/// [`event`](crate::event) module.
///
/// Events compare as [`ContextEvent`](crate::ContextEvent)s do: same
/// variant, same group and entity, views of the same values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupEvent<'a> {
    /// The entity now matches: it was created, or gained or lost a component.
    Added {
        /// The group.
        group: GroupId,
        /// The entity and its components now.
        entity: EntityRef<'a>,
    },
    /// The entity no longer matches: it lost or gained a component, or it is
    /// being destroyed.
    Removed {
        /// The group.
        group: GroupId,
        /// The entity and its components: now, or (when it is being destroyed)
        /// all of them, still readable.
        entity: EntityRef<'a>,
        /// The removed value, when a removal caused this.
        removed: Option<ComponentRef<'a>>,
    },
    /// A component of the group's matcher (AllOf or AnyOf) was replaced on a
    /// member, with `replace` or `modify_each`.
    Updated {
        /// The group.
        group: GroupId,
        /// The entity.
        entity: Entity,
        /// The value before.
        old: ComponentRef<'a>,
        /// The value now.
        new: ComponentRef<'a>,
    },
}

impl<'a> GroupEvent<'a> {
    /// The group the event is about.
    pub fn group(&self) -> GroupId {
        match *self {
            GroupEvent::Added { group, .. } | GroupEvent::Removed { group, .. } | GroupEvent::Updated { group, .. } => {
                group
            }
        }
    }

    /// The entity the event is about.
    pub fn entity(&self) -> Entity {
        match *self {
            GroupEvent::Added { entity, .. } | GroupEvent::Removed { entity, .. } => entity.entity(),
            GroupEvent::Updated { entity, .. } => entity,
        }
    }

    /// The entity's `T` as the event sees it: for `Added`, the current value;
    /// for `Removed`, the removed value if it is a `T`, else the current one;
    /// for `Updated`, the new value if the replaced component is a `T` (other
    /// components are not carried: `None`).
    pub fn component<T: Component>(&self) -> Option<&'a T> {
        match *self {
            GroupEvent::Added { entity, .. } => entity.get::<T>(),
            GroupEvent::Removed { entity, removed, .. } => removed.and_then(|r| r.get::<T>()).or_else(|| entity.get()),
            GroupEvent::Updated { new, .. } => new.get::<T>(),
        }
    }
}
