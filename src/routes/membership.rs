//! Group membership: which archetypes each group's matcher accepts, which
//! groups accept each archetype, and the per-entity check.
//!
//! Membership is decided here and nowhere else: an archetype filter
//! ([`Member::accepts`]: the matcher's terms on archetype components against
//! the archetype's component set), then a per-entity check
//! ([`Member::admits`]: the whole matcher, asking the sparse sets about the
//! components kept out of archetypes). A group whose matcher names no such
//! component needs no per-entity check: every row of an accepted archetype is
//! a member. For the others, a change's route marks their steps *gated*, and
//! a [`Gate`] tells, per change, whether the entity's membership really
//! changes.

use std::sync::atomic::{AtomicBool, Ordering};

use smallvec::SmallVec;

use crate::entity::Entity;
use crate::id::ComponentId;
use crate::matcher::{Matcher, MatcherChain};
use crate::storage::{Archetype, ArchetypeId, Archetypes, ComponentSet, SparseLend, SparseSets};

/// One group's matcher and the archetypes it accepts.
pub(crate) struct Member {
    pub(crate) matcher: Matcher,
    /// The archetype filter: the matcher's terms on archetype components
    /// (its AnyOf only if that names no sparse component).
    filter: Matcher,
    /// The matcher's components kept out of archetypes: those the
    /// per-entity check asks about (none: the filter decides alone).
    pub(crate) sparse: ComponentSet,
    /// The AnyOf set names a sparse component (so the filter leaves AnyOf
    /// to the per-entity check, and a move may change membership between two
    /// accepted archetypes).
    relaxed: bool,
    /// The matcher's AllOf, AnyOf and NoneOf components as lists, each
    /// with whether it is kept out of archetypes: what the per-entity check
    /// walks (a few entries, rather than the matcher's bitsets).
    terms: [Terms; 3],
    /// Accepted archetypes, in creation order.
    pub(crate) archetypes: Vec<ArchetypeId>,
}

/// Components of one of a matcher's sets, each with whether it is kept out
/// of archetypes.
type Terms = SmallVec<[(ComponentId, bool); 4]>;

/// Where the answer "does the entity have sparse component c" comes from.
#[derive(Clone, Copy)]
pub(crate) enum Holding<'a> {
    /// The sparse sets, for the entity in this slot.
    Slot(&'a SparseSets, u32),
    /// This set of components (an entity being created from a bundle).
    Set(&'a ComponentSet),
    /// The sparse sets lent to a query, for the entity in this slot.
    Lent(SparseLend<'a>, u32),
}

impl Holding<'_> {
    #[inline]
    fn has(&self, id: ComponentId) -> bool {
        match *self {
            Holding::Slot(sparse, slot) => sparse.contains(id, slot),
            Holding::Set(set) => set.contains(id),
            Holding::Lent(sparse, slot) => sparse.contains(id, slot),
        }
    }
}

impl Member {
    /// The membership of `matcher` with the archetypes it accepts among
    /// `archetypes` listed: what a group of `matcher` would be, whether or
    /// not one is made.
    pub(crate) fn listed(matcher: Matcher, archetypes: &Archetypes) -> Self {
        let mut member = Member::new(matcher, archetypes);
        let accepted: Vec<_> = archetypes
            .iter()
            .filter(|archetype| member.accepts(archetype.set()))
            .map(|archetype| archetype.id())
            .collect();
        member.archetypes = accepted;
        member
    }

    /// The membership of `matcher`, with no archetype listed yet (`archetypes`
    /// tells which components are kept out of archetypes).
    pub(crate) fn new(matcher: Matcher, archetypes: &Archetypes) -> Self {
        let sparse: ComponentSet = [matcher.all(), matcher.any(), matcher.none()]
            .into_iter()
            .flat_map(ComponentSet::iter)
            .filter(|&id| archetypes.is_sparse(id))
            .collect();
        fn dense<'a>(set: &'a ComponentSet, sparse: &'a ComponentSet) -> impl Iterator<Item = ComponentId> + 'a {
            set.iter().filter(move |&id| !sparse.contains(id))
        }
        let relaxed = matcher.any().intersects(&sparse);
        let mut filter = Matcher::all_of_ids(dense(matcher.all(), &sparse)).none_of_ids(dense(matcher.none(), &sparse));
        if !relaxed {
            filter = filter.any_of_ids(dense(matcher.any(), &sparse));
        }
        let terms = [matcher.all(), matcher.any(), matcher.none()]
            .map(|ids| ids.iter().map(|id| (id, sparse.contains(id))).collect());
        Member {
            matcher,
            filter,
            sparse,
            relaxed,
            terms,
            archetypes: Vec::new(),
        }
    }

    /// Whether an archetype with component set `set` can hold members: the
    /// archetype filter.
    #[inline]
    pub(crate) fn accepts(&self, set: &ComponentSet) -> bool {
        self.filter.matches_components(set)
    }

    /// Whether the group needs the per-entity check.
    #[inline(always)]
    pub(crate) fn is_gated(&self) -> bool {
        !self.sparse.is_empty()
    }

    /// Whether an entity whose archetype components are `set`, and whose
    /// sparse components `holding` tells (but for `known`, a sparse
    /// component taken as present or absent), is a member: the whole
    /// matcher.
    #[inline]
    pub(crate) fn admits(&self, set: &ComponentSet, holding: Holding<'_>, known: Option<(ComponentId, bool)>) -> bool {
        if self.sparse.is_empty() {
            return self.accepts(set);
        }
        // The whole matcher, archetype terms included (so no filter first),
        // as `Matcher::matches_by` evaluates it.
        let has = |&(id, sparse): &(ComponentId, bool)| match known {
            Some((c, present)) if c == id => present,
            _ if sparse => holding.has(id),
            _ => set.contains(id),
        };
        let [all, any, none] = &self.terms;
        all.iter().all(has) && (any.is_empty() || any.iter().any(has)) && !none.iter().any(has)
    }

    /// Membership decided without looking at an entity: for one of an
    /// archetype with components `set`, when the group's only sparse
    /// component (if any) is `known`'s. `None`: it depends on the entity.
    pub(super) fn decide(&self, set: &ComponentSet, known: Option<(ComponentId, bool)>) -> Option<bool> {
        if !self.accepts(set) {
            return Some(false);
        }
        let unknown = self.sparse.iter().any(|id| known.is_none_or(|(c, _)| c != id));
        if unknown {
            return None;
        }
        let none = ComponentSet::new();
        Some(self.admits(set, Holding::Set(&none), known))
    }

    /// Whether adding (`added`) or removing component `id` can only make an
    /// entity join (true) or only leave: the matcher grows with every
    /// component but those of its NoneOf set.
    pub(super) fn joins_on(&self, id: ComponentId, added: bool) -> bool {
        added != self.matcher.none().contains(id)
    }

    /// Whether the AnyOf set is left to the per-entity check.
    #[inline]
    pub(super) fn is_relaxed(&self) -> bool {
        self.relaxed
    }
}

/// What one change does to an entity's components, so a gated step of its
/// route can tell whether the entity's membership of the step's group really
/// changes: membership before and after, each decided by the whole matcher.
#[derive(Clone, Copy)]
pub(crate) struct Gate<'a> {
    membership: &'a Membership,
    /// The entity's archetype components before (`None`: it did not exist).
    before: Option<&'a ComponentSet>,
    /// ...and after (`None`: it no longer exists).
    after: Option<&'a ComponentSet>,
    holding: Holding<'a>,
    /// A sparse component that changes: absent before and present after
    /// (`true`), or the other way round.
    toggled: Option<(ComponentId, bool)>,
}

impl<'a> Gate<'a> {
    /// A move from an archetype with components `from` to one with `to`.
    pub(crate) fn moving(
        membership: &'a Membership,
        from: &'a ComponentSet,
        to: &'a ComponentSet,
        holding: Holding<'a>,
    ) -> Self {
        Gate {
            membership,
            before: Some(from),
            after: Some(to),
            holding,
            toggled: None,
        }
    }

    /// Sparse component `id` added (`added`) or removed on an entity with
    /// archetype components `set`.
    pub(crate) fn toggling(
        membership: &'a Membership,
        set: &'a ComponentSet,
        id: ComponentId,
        added: bool,
        holding: Holding<'a>,
    ) -> Self {
        Gate {
            membership,
            before: Some(set),
            after: Some(set),
            holding,
            toggled: Some((id, added)),
        }
    }

    /// An entity entering storage (`entering`) with archetype components
    /// `set`, or leaving it.
    pub(crate) fn spawning(
        membership: &'a Membership,
        set: &'a ComponentSet,
        entering: bool,
        holding: Holding<'a>,
    ) -> Self {
        Gate {
            membership,
            before: (!entering).then_some(set),
            after: entering.then_some(set),
            holding,
            toggled: None,
        }
    }

    /// An entity that stays where it is (a replacement): a gated group
    /// passes if the entity is a member.
    pub(crate) fn staying(membership: &'a Membership, set: &'a ComponentSet, holding: Holding<'a>) -> Self {
        Gate {
            membership,
            before: None,
            after: Some(set),
            holding,
            toggled: None,
        }
    }

    /// Whether the entity's membership of `group` changes (for a staying
    /// entity: whether it is a member).
    pub(crate) fn passes(&self, group: u32) -> bool {
        let member = self.membership.group(group);
        let before = self
            .before
            .is_some_and(|set| member.admits(set, self.holding, self.toggled.map(|(c, added)| (c, !added))));
        let after = self
            .after
            .is_some_and(|set| member.admits(set, self.holding, self.toggled));
        before != after
    }
}

/// The membership of every group of a context.
#[derive(Default)]
pub(crate) struct Membership {
    groups: Vec<Member>,
    /// Per archetype, the groups accepting it, ascending.
    by_archetype: Vec<SmallVec<[u32; 4]>>,
    /// A group started keeping its entity list (its first
    /// [`Group::entities`](crate::Group::entities), through a shared view)
    /// since the routes were compiled: they must be compiled again, with a
    /// step for that group, before the next structural change.
    listing: AtomicBool,
}

impl Membership {
    /// Records that a group started keeping its entity list: the routes
    /// compiled so far do not keep it current.
    pub(crate) fn request_listing(&self) {
        self.listing.store(true, Ordering::Relaxed);
    }

    /// Whether a group started keeping its entity list since the last
    /// [`take_listing`](Membership::take_listing). (A relaxed load: the
    /// store was made through a shared view, and whoever asks holds the
    /// context exclusively, which orders it after the store.)
    #[inline(always)]
    pub(crate) fn listing_requested(&self) -> bool {
        self.listing.load(Ordering::Relaxed)
    }

    /// Whether a group started keeping its entity list, and clears that.
    pub(crate) fn take_listing(&mut self) -> bool {
        std::mem::take(self.listing.get_mut())
    }

    /// Whether live `entity` (whose slot is its index), a row of
    /// `archetype`, is a member of `group`: the archetype filter, then the
    /// per-entity check.
    pub(crate) fn contains(&self, group: u32, archetype: &Archetype, entity: Entity, sparse: &SparseSets) -> bool {
        debug_assert!(!entity.is_null());
        self.group(group)
            .admits(archetype.set(), Holding::Slot(sparse, entity.index()), None)
    }

    /// The number of groups.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }

    /// Group `group`'s matcher and archetypes.
    #[inline]
    pub(crate) fn group(&self, group: u32) -> &Member {
        &self.groups[group as usize]
    }

    /// The groups accepting `archetype`, ascending.
    #[inline]
    pub(crate) fn of_archetype(&self, archetype: ArchetypeId) -> &[u32] {
        self.by_archetype.get(archetype.index()).map_or(&[], |groups| groups)
    }

    /// Whether archetypes were created since the last [`sync`](Membership::sync).
    #[inline(always)]
    pub(crate) fn behind(&self, archetypes: &Archetypes) -> bool {
        self.by_archetype.len() < archetypes.len()
    }

    /// Learns about the archetypes created since the last call: records
    /// which groups accept each.
    #[cold]
    pub(crate) fn sync(&mut self, archetypes: &Archetypes) {
        for archetype in archetypes.since(self.by_archetype.len()) {
            let mut accepting = SmallVec::new();
            for (index, group) in self.groups.iter_mut().enumerate() {
                if group.accepts(archetype.set()) {
                    group.archetypes.push(archetype.id());
                    accepting.push(index as u32);
                }
            }
            self.by_archetype.push(accepting);
        }
    }

    /// Adds the group of `matcher` over the current archetypes; returns its
    /// index. The caller has checked that no equal group exists.
    pub(crate) fn add(&mut self, matcher: Matcher, archetypes: &Archetypes) -> u32 {
        if self.behind(archetypes) {
            self.sync(archetypes);
        }
        let index =
            u32::try_from(self.groups.len()).expect("fewer than 2^32 groups: each costs memory, which runs out first");
        let member = Member::listed(matcher, archetypes);
        for archetype in &member.archetypes {
            self.by_archetype[archetype.index()].push(index);
        }
        self.groups.push(member);
        index
    }

    /// Checks each group's archetype list, and the lists per archetype,
    /// against a fresh scan.
    pub(crate) fn check(&self, archetypes: &Archetypes) -> Result<(), String> {
        if self.by_archetype.len() != archetypes.len() {
            return Err(format!(
                "groups know {} archetypes of {}",
                self.by_archetype.len(),
                archetypes.len()
            ));
        }
        for (index, group) in self.groups.iter().enumerate() {
            let expected: Vec<ArchetypeId> = archetypes
                .iter()
                .filter(|a| group.accepts(a.set()))
                .map(Archetype::id)
                .collect();
            if group.archetypes != expected {
                return Err(format!(
                    "group {} has archetypes {:?} (expected {expected:?})",
                    group.matcher, group.archetypes
                ));
            }
            for archetype in archetypes.iter() {
                let listed = self.of_archetype(archetype.id()).contains(&(index as u32));
                if listed != expected.contains(&archetype.id()) {
                    return Err(format!(
                        "archetype {:?} lists group {} wrongly ({listed})",
                        archetype.id(),
                        group.matcher
                    ));
                }
            }
        }
        if let Some(a) = self
            .by_archetype
            .iter()
            .position(|groups| !groups.is_sorted_by(|x, y| x < y))
        {
            return Err(format!("the groups of archetype {a} are not ascending"));
        }
        Ok(())
    }
}
