//! `Transition`: moving a row from one archetype to the one with one
//! component more or less, with its row-move plan computed once.

use super::archetype::{Archetype, ColumnSlot};
use super::location::ArchetypeId;
use crate::id::ComponentId;

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
