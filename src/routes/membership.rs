//! Group membership: which archetypes each group's matcher accepts, and
//! which groups accept each archetype.
//!
//! Membership is decided here and nowhere else: an archetype filter
//! ([`Membership::accepts`]: the matcher against the archetype's component
//! set), then a per-entity check ([`Membership::contains`]). Every component
//! lives in archetype columns today, so the per-entity check passes every
//! row of an accepted archetype; a storage kind that does not move entities
//! (a flag, say) would keep its components out of the archetype's set and
//! answer in that check, per entity.

use smallvec::SmallVec;

use crate::entity::Entity;
use crate::matcher::Matcher;
use crate::storage::{Archetype, ArchetypeId, Archetypes, ComponentSet};

/// One group's matcher and the archetypes it accepts.
pub(crate) struct Member {
    pub(crate) matcher: Matcher,
    /// Accepted archetypes, in creation order.
    pub(crate) archetypes: Vec<ArchetypeId>,
}

/// The membership of every group of a context.
#[derive(Default)]
pub(crate) struct Membership {
    groups: Vec<Member>,
    /// Per archetype, the groups accepting it, ascending.
    by_archetype: Vec<SmallVec<[u32; 4]>>,
}

impl Membership {
    /// Whether an archetype with component set `set` can hold members of
    /// `matcher`'s group: the archetype filter.
    #[inline]
    pub(crate) fn accepts(matcher: &Matcher, set: &ComponentSet) -> bool {
        matcher.matches_components(set)
    }

    /// Whether live `entity`, a row of `archetype`, is a member of `group`:
    /// the archetype filter, then the per-entity check (which every row of an
    /// accepted archetype passes, while all components live in columns).
    pub(crate) fn contains(&self, group: u32, archetype: &Archetype, entity: Entity) -> bool {
        debug_assert!(!entity.is_null());
        Self::accepts(&self.group(group).matcher, archetype.set())
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
                if Self::accepts(&group.matcher, archetype.set()) {
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
        let index = u32::try_from(self.groups.len()).expect("more than 2^32 groups");
        let mut accepted = Vec::new();
        for archetype in archetypes.iter() {
            if Self::accepts(&matcher, archetype.set()) {
                accepted.push(archetype.id());
                self.by_archetype[archetype.id().index()].push(index);
            }
        }
        self.groups.push(Member {
            matcher,
            archetypes: accepted,
        });
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
                .filter(|a| group.matcher.matches_components(a.set()))
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
