//! `BundlePlan`: how the values of one bundle type are written into a new
//! row, made once per bundle type and kept by `Archetypes` (`spawn.rs`
//! makes and follows them).

use super::archetype::ColumnSlot;
use super::bitset::ComponentSet;
use super::component_info::ComponentInfo;
use super::location::ArchetypeId;

/// Identifies a [`BundlePlan`] of one `Archetypes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BundleId(pub(super) u32);

/// How to write the values of one bundle type into a new row: the archetype of
/// exactly its archetype components, and for each tuple element in order,
/// the column it goes to and the type that column holds, or the sparse set
/// it goes to. The columns are a permutation of the archetype's columns (it
/// is the archetype of exactly the bundle's archetype ids, and a bundle
/// listing an id twice is refused), so a row written by following the plan
/// to its end is complete.
pub(super) struct BundlePlan {
    pub(super) archetype: ArchetypeId,
    pub(super) elements: Box<[Element]>,
    /// The bundle's components kept out of archetypes.
    pub(super) sparse: ComponentSet,
}

/// Where one element of a bundle goes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Element {
    /// To a column of the new row.
    Column(ColumnSlot),
    /// To the sparse set of this component.
    Sparse(&'static ComponentInfo),
}
