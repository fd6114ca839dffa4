//! `ComponentSet`: a set of component ids as a bitset.

use std::fmt;

use smallvec::SmallVec;

use crate::id::ComponentId;

/// A set of component ids, stored as a bitset (one bit per registered component).
///
/// Archetypes are keyed by their `ComponentSet`, and matchers compare sets, so
/// equality and hashing do not depend on the order in which ids were inserted.
/// Trailing zero words are never stored, so equal sets have equal words.
///
/// # Example
/// ```
/// use reactecs::{Component, ComponentSet};
/// struct Position(f32, f32);
/// struct Velocity(f32, f32);
/// reactecs::component!(Position, Velocity);
/// let mut set = ComponentSet::new();
/// set.insert(Velocity::component_id());
/// set.insert(Position::component_id());
/// assert!(set.contains(Position::component_id()));
/// assert_eq!(set.len(), 2);
/// let mut expected = [Position::component_id(), Velocity::component_id()];
/// expected.sort();
/// assert_eq!(set.iter().collect::<Vec<_>>(), expected, "in id order");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ComponentSet {
    words: SmallVec<[u64; 2]>,
}

impl ComponentSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `id`; returns `true` if it was not already present.
    pub fn insert(&mut self, id: ComponentId) -> bool {
        let (word, bit) = split(id);
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        let was = self.words[word] & bit != 0;
        self.words[word] |= bit;
        !was
    }

    /// Removes `id`; returns `true` if it was present.
    pub fn remove(&mut self, id: ComponentId) -> bool {
        let (word, bit) = split(id);
        match self.words.get_mut(word) {
            Some(w) if *w & bit != 0 => {
                *w &= !bit;
                while self.words.last() == Some(&0) {
                    self.words.pop();
                }
                true
            }
            _ => false,
        }
    }

    /// Whether `id` is in the set.
    #[inline]
    pub fn contains(&self, id: ComponentId) -> bool {
        let (word, bit) = split(id);
        self.words.get(word).is_some_and(|w| w & bit != 0)
    }

    /// A copy of this set with `id` added.
    pub fn with(&self, id: ComponentId) -> Self {
        let mut set = self.clone();
        set.insert(id);
        set
    }

    /// A copy of this set with `id` removed.
    pub fn without(&self, id: ComponentId) -> Self {
        let mut set = self.clone();
        set.remove(id);
        set
    }

    /// Whether every id of `other` is in `self`.
    #[inline]
    pub fn is_superset(&self, other: &ComponentSet) -> bool {
        other.words.iter().enumerate().all(|(i, &w)| {
            let mine = self.words.get(i).copied().unwrap_or(0);
            mine & w == w
        })
    }

    /// Whether `self` and `other` share at least one id.
    #[inline]
    pub fn intersects(&self, other: &ComponentSet) -> bool {
        self.words.iter().zip(other.words.iter()).any(|(a, b)| a & b != 0)
    }

    /// The number of ids in the set.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has no ids.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The ids in the set, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = ComponentId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(ComponentId::at(i * 64 + bit))
            })
        })
    }
}

impl FromIterator<ComponentId> for ComponentSet {
    fn from_iter<I: IntoIterator<Item = ComponentId>>(iter: I) -> Self {
        let mut set = ComponentSet::new();
        for id in iter {
            set.insert(id);
        }
        set
    }
}

impl fmt::Debug for ComponentSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(|id| id.index())).finish()
    }
}

#[inline]
fn split(id: ComponentId) -> (usize, u64) {
    let index = id.index();
    (index / 64, 1u64 << (index % 64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(i: usize) -> ComponentId {
        ComponentId::at(i)
    }

    #[test]
    fn equal_sets_compare_and_hash_equal_whatever_the_insertion_order() {
        use std::hash::{BuildHasher, RandomState};
        let a: ComponentSet = [id(1), id(100), id(5)].into_iter().collect();
        let mut b: ComponentSet = [id(5), id(1)].into_iter().collect();
        b.insert(id(130));
        b.insert(id(100));
        b.remove(id(130));
        assert_eq!(a, b);
        let state = RandomState::new();
        assert_eq!(state.hash_one(&a), state.hash_one(&b));
    }

    #[test]
    fn superset_and_intersection() {
        let big: ComponentSet = [id(1), id(2), id(65)].into_iter().collect();
        let small: ComponentSet = [id(2), id(65)].into_iter().collect();
        let other: ComponentSet = [id(3)].into_iter().collect();
        assert!(big.is_superset(&small));
        assert!(!small.is_superset(&big));
        assert!(big.is_superset(&ComponentSet::new()));
        assert!(big.intersects(&small));
        assert!(!big.intersects(&other));
    }

    #[test]
    fn insert_and_remove_report_change() {
        let mut set = ComponentSet::new();
        assert!(set.insert(id(7)));
        assert!(!set.insert(id(7)));
        assert!(set.remove(id(7)));
        assert!(!set.remove(id(7)));
        assert!(set.is_empty());
    }
}
