//! `Group`: the live set of entities a matcher selects, and its events.
//!
//! On [`Context`](crate::Context): [`add_group`](crate::Context::add_group),
//! [`group`](crate::Context::group) (a read-only [`Group`]),
//! [`groups`](crate::Context::groups) and
//! [`subscribe_group`](crate::Context::subscribe_group); the context's side
//! is in `context/group.rs`.
//!
//! A group is backed by the archetypes its matcher accepts (its membership,
//! kept by the change routes); this module has the public view of a group,
//! its events, and what the context keeps per group besides (`data.rs`: its
//! handlers and its entity list, kept once someone asks for it).

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::component::Component;
use crate::entity::Entity;
use crate::entity_ref::EntityRef;
use crate::error::Error;
use crate::matcher::Matcher;
use crate::routes::{Holding, Member, Membership};
use crate::slot_table::SlotTable;
use crate::storage::{Archetype, ArchetypeId, Archetypes, ComponentRef, SparseSet, SparseSets};

mod data;

pub use crate::id::{GroupId, IntoGroupId};
pub(crate) use data::Groups;

/// A read-only view of a group: the entities its matcher selects, always
/// current.
///
/// A group is backed by the archetypes its matcher accepts, so its length is
/// a sum over its archetypes and its iteration walks chunks; there is no
/// per-entity set. Its order is deterministic: archetypes in creation order,
/// rows in chunk order. The same sequence of operations gives the same order,
/// run after run.
///
/// A matcher that names flag or sparse components adds a check per entity
/// ([`len`](Group::len) counts members then). If its AllOf set names one, the
/// group walks that component's entries instead of its archetypes' rows (the
/// smallest such set, if several): in the order they were added, each
/// removal moving the last entry into the removed one's place.
///
/// # Costs
///
/// Below, *n* is the number of members, *a* the number of archetypes the
/// matcher accepts, and *r* the rows a walk of the group visits: the rows of
/// those archetypes, or, for a matcher whose AllOf names a flag or sparse
/// component, the entries of the smallest such component's set (members and
/// non-members). Each accessor's docs state its own.
///
/// | accessor | cost |
/// |---|---|
/// | [`id`](Group::id), [`matcher`](Group::matcher) | O(1) |
/// | [`contains`](Group::contains) | O(1): a lookup, plus a bit or sparse-set test per flag or sparse component the matcher names |
/// | [`len`](Group::len), [`single_entity`](Group::single_entity) | O(a); O(r) if the matcher names a flag or sparse component |
/// | [`is_empty`](Group::is_empty) | O(a); if the matcher names a flag or sparse component, O(r) at worst (it stops at the first member) |
/// | [`iter`](Group::iter) | O(1) to make; O(r) to go through (O(1) per member when every row is a member) |
/// | [`entities`](Group::entities) | O(1 + changes since the last call); O(r) the first time it is called for this group; O(n) (a copy) if the list the last call handed out is still alive and the group changed since |
/// | `Display`, `Debug` | as `len` |
///
/// Keeping [`entities`](Group::entities)' list current, once it was asked
/// for, adds O(1) to each change that makes an entity join or leave the
/// group. A group nobody asked for its list keeps none and costs nothing per
/// change.
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
    entities: &'a SlotTable,
    sparse: &'a SparseSets,
    groups: &'a Groups,
}

/// What a group is read from: the context's membership and storage.
pub(crate) struct GroupSource<'a> {
    pub(crate) membership: &'a Membership,
    pub(crate) archetypes: &'a Archetypes,
    pub(crate) entities: &'a SlotTable,
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
    /// [`in_group`](crate::Query::in_group). O(1).
    pub fn id(&self) -> GroupId {
        self.id
    }

    /// The matcher that defines the group. O(1).
    pub fn matcher(&self) -> &'a Matcher {
        &self.member.matcher
    }

    /// The archetypes of the group, in creation order.
    fn archetypes(&self) -> impl Iterator<Item = &'a Archetype> + use<'a> {
        let archetypes = self.archetypes;
        self.member.archetypes.iter().map(move |&a| archetypes.get(a))
    }

    /// The number of entities: the rows of the group's archetypes (a sum
    /// over its archetypes, not over its entities: O(archetypes)), or, for a
    /// matcher that names a flag or sparse component, a count of its members
    /// (a walk of the group, as [`iter`](Group::iter): O(rows visited)).
    /// To keep a length that many calls read, read
    /// [`entities`](Group::entities)`().len()` (O(1) once listed).
    pub fn len(&self) -> usize {
        if self.member.is_gated() {
            return self.iter().count();
        }
        self.archetypes().map(Archetype::len).sum()
    }

    /// Whether the group is empty: O(archetypes), or, for a matcher that
    /// names a flag or sparse component, a walk of the group up to its first
    /// member (O(rows visited) at worst).
    pub fn is_empty(&self) -> bool {
        if self.member.is_gated() {
            return self.iter().next().is_none();
        }
        self.archetypes().all(Archetype::is_empty)
    }

    /// Whether `entity` is alive and in the group: O(1) (the entity's
    /// location, the group's archetype filter, and a bit or sparse-set test
    /// per flag or sparse component the matcher names).
    pub fn contains(&self, entity: Entity) -> bool {
        self.entities.location(entity).is_some_and(|at| {
            self.membership
                .contains(self.id.index, self.archetypes.get(at.archetype), entity, self.sparse)
        })
    }

    /// The entities, archetype by archetype, chunk by chunk (see the
    /// [type's docs](Group) for the order). Borrows the context; to change
    /// entities while going through a group, use
    /// [`entities`](Group::entities) instead.
    ///
    /// O(1) to make (for a matcher whose AllOf names flag or sparse
    /// components, a look at each such set's length), and allocates
    /// nothing; going through it visits every row of the group's
    /// archetypes, or every entry of the smallest sparse set its AllOf
    /// names, checking each against the matcher if it names a flag or
    /// sparse component: O(1) per member when every row is one.
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
    /// `GetEntities`). The list handed out does not change: it is the group
    /// as it was at the call.
    ///
    /// # Cost
    ///
    /// Cheap whatever the call pattern. The first call for a group walks it,
    /// as [`iter`](Group::iter) does, and from then on the group keeps its
    /// list current: each entity that joins or leaves costs O(1) more. A
    /// later call costs a lock, a reference count, and O(1) per entity that
    /// joined or left since the previous call (the places they changed are
    /// written into the list, in place); no walk of the group, and no
    /// allocation once the list has grown to the group's size. Holding the
    /// list while changing entities (a `for` loop over it that destroys,
    /// adds, removes) costs nothing more, as long as it is dropped before
    /// the next call: only a call made while the list of the previous call
    /// is still alive, after the group changed, copies the list (n handles,
    /// not a walk of the group), since that list must stay as it was. A
    /// group nobody asked for its list keeps none and costs nothing per
    /// change.
    ///
    /// # Order
    ///
    /// Deterministic, and not [`iter`](Group::iter)'s: at the first call, the
    /// order of `iter`; from then on, an entity that joins goes at the end,
    /// and one that leaves gives its place to the last entry (an entity that
    /// moves between archetypes of the group keeps its place). The same
    /// operations, the first `entities()` call among them, give the same
    /// order, run after run.
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
        let data = self.groups.get(self.id.index);
        let (list, first) = data.entities(|list| {
            if !self.member.is_gated() {
                list.reserve(self.len());
            }
            list.extend(self.iter());
        });
        if first {
            // From the next structural change on, the routes keep the list.
            self.membership.request_listing();
        }
        EntityList(list)
    }

    /// The group's one entity: `None` when empty. As [`len`](Group::len):
    /// O(archetypes), or O(rows visited) for a matcher that names a flag or
    /// sparse component.
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
    driver: Option<(std::slice::Iter<'a, u32>, &'a SlotTable)>,
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
