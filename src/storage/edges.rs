//! The archetype graph: each archetype's cached edges (A, +c) -> B and
//! (A, -c) -> B, and the `Transition` each edge leads to, with its row-move
//! plan computed once.

use std::any::TypeId;

use super::archetype::Archetype;
use super::archetypes::Archetypes;
use super::location::ArchetypeId;
use crate::component::ComponentId;

const UNKNOWN: u32 = u32::MAX;

/// The transitions out of one archetype that have been taken so far, indexed
/// by component id, so a structural change costs one array read after its
/// first time (no set hashing, no lookup).
#[derive(Default)]
pub(crate) struct Edges {
    add: Vec<u32>,
    remove: Vec<u32>,
}

/// Identifies a [`Transition`] of one `Archetypes`, in creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TransitionId(pub(super) u32);

impl TransitionId {
    /// The position of this transition in creation order.
    #[inline]
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

impl Edges {
    /// The transition for adding `id`, if known.
    #[inline]
    pub(super) fn add(&self, id: ComponentId) -> Option<TransitionId> {
        lookup(&self.add, id)
    }

    /// The transition for removing `id`, if known.
    #[inline]
    pub(super) fn remove(&self, id: ComponentId) -> Option<TransitionId> {
        lookup(&self.remove, id)
    }

    pub(super) fn set_add(&mut self, id: ComponentId, to: TransitionId) {
        store(&mut self.add, id, to);
    }

    pub(super) fn set_remove(&mut self, id: ComponentId, to: TransitionId) {
        store(&mut self.remove, id, to);
    }
}

#[inline]
fn lookup(table: &[u32], id: ComponentId) -> Option<TransitionId> {
    match table.get(id.index()) {
        Some(&to) if to != UNKNOWN => Some(TransitionId(to)),
        _ => None,
    }
}

fn store(table: &mut Vec<u32>, id: ComponentId, to: TransitionId) {
    if table.len() <= id.index() {
        table.resize(id.index() + 1, UNKNOWN);
    }
    table[id.index()] = to.0;
}

/// Moving a row from archetype `from` to `to`, which has one component more
/// (`added`) or less. Its plan says where each shared column's value goes, so
/// a move does no per-column lookups. Archetypes never change their columns or
/// chunk layout after creation, so a plan stays valid for the program's life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Transition {
    pub(crate) from: ArchetypeId,
    pub(crate) to: ArchetypeId,
    /// The component added or removed.
    pub(crate) component: ComponentId,
    /// Whether `component` is added (else removed).
    pub(crate) added: bool,
    /// One entry per column the two archetypes share.
    pub(super) moves: Box<[ColumnMove]>,
    /// The added component's column in `to`, or the removed one's in `from`.
    pub(super) changed: ColumnSlot,
}

/// Where one shared column's value moves: byte offsets of the column array in
/// a chunk of `from` and of `to`, and the value's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ColumnMove {
    pub(super) from_offset: usize,
    pub(super) to_offset: usize,
    pub(super) size: usize,
}

/// One column of one archetype: index, byte offset in a chunk, value size,
/// and the type it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ColumnSlot {
    pub(super) col: usize,
    pub(super) offset: usize,
    pub(super) size: usize,
    pub(super) ty: TypeId,
}

impl ColumnSlot {
    pub(super) fn of(archetype: &Archetype, col: usize) -> Self {
        let (offset, size) = archetype.column_geometry(col);
        ColumnSlot {
            col,
            offset,
            size,
            ty: archetype.columns[col].info.ty.type_id(),
        }
    }
}

impl Transition {
    /// The transition from `from` to `to`, whose component sets must differ by
    /// exactly `component` (added if `to` has it).
    pub(super) fn new(from: &Archetype, to: &Archetype, component: ComponentId) -> Self {
        let added = to.set().contains(component);
        let (bigger, smaller) = if added { (to, from) } else { (from, to) };
        debug_assert_eq!(*smaller.set(), bigger.set().without(component));
        let moves = smaller
            .component_infos()
            .enumerate()
            .map(|(small_col, info)| {
                let big_col = bigger
                    .column_index(info.id())
                    .expect("the bigger set has every column of the smaller: the sets differ by `component` only");
                let (small_offset, size) = smaller.column_geometry(small_col);
                let (big_offset, _) = bigger.column_geometry(big_col);
                let (from_offset, to_offset) = if added {
                    (small_offset, big_offset)
                } else {
                    (big_offset, small_offset)
                };
                ColumnMove {
                    from_offset,
                    to_offset,
                    size,
                }
            })
            .collect();
        let changed_col = bigger
            .column_index(component)
            .expect("the bigger set has the component: the sets differ by it");
        Transition {
            from: from.id(),
            to: to.id(),
            component,
            added,
            moves,
            changed: ColumnSlot::of(bigger, changed_col),
        }
    }
}

impl Archetypes {
    /// The transition from `from` adding `id`; `None` if `from` already has
    /// it. Cached on the edge after the first time.
    #[inline]
    pub(crate) fn add_transition(&mut self, from: ArchetypeId, id: ComponentId) -> Option<TransitionId> {
        match self.get(from).edges.add(id) {
            Some(known) => Some(known),
            None => self.new_transition(from, id, true),
        }
    }

    /// The transition from `from` removing `id`; `None` if `from` lacks it.
    #[inline]
    pub(crate) fn remove_transition(&mut self, from: ArchetypeId, id: ComponentId) -> Option<TransitionId> {
        match self.get(from).edges.remove(id) {
            Some(known) => Some(known),
            None => self.new_transition(from, id, false),
        }
    }

    /// The transition with id `id`.
    #[inline(always)]
    pub(crate) fn transition(&self, id: TransitionId) -> &Transition {
        &self.transitions[id.0 as usize]
    }

    /// The number of transitions taken so far (ids are `0..count`).
    pub(crate) fn transition_count(&self) -> usize {
        self.transitions.len()
    }

    #[cold]
    fn new_transition(&mut self, from: ArchetypeId, id: ComponentId, add: bool) -> Option<TransitionId> {
        let source = self.get(from).set();
        if source.contains(id) == add {
            return None;
        }
        let set = if add { source.with(id) } else { source.without(id) };
        let to = self.find_or_create(&set);
        let index = TransitionId(
            u32::try_from(self.transitions.len())
                .expect("fewer than 2^32 transitions: each costs memory, which runs out first"),
        );
        let transition = Transition::new(self.get(from), self.get(to), id);
        self.transitions.push(transition);
        let edges = &mut self.archetype_mut(from).edges;
        if add {
            edges.set_add(id, index);
        } else {
            edges.set_remove(id, index);
        }
        Some(index)
    }

    /// Checks the graph: each transition leads to the archetype with exactly
    /// one component more or less, with the right plan.
    pub(super) fn check_transitions(&self) -> Result<(), String> {
        for transition in &self.transitions {
            let (from, to) = (self.get(transition.from), self.get(transition.to));
            let expected = if transition.added {
                from.set().with(transition.component)
            } else {
                from.set().without(transition.component)
            };
            if *to.set() != expected
                || *from.set() == expected
                || Transition::new(from, to, transition.component) != *transition
            {
                return Err(format!(
                    "the transition {:?} -> {:?} for component {} is wrong",
                    transition.from,
                    transition.to,
                    transition.component.index()
                ));
            }
        }
        Ok(())
    }
}
