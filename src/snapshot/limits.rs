//! `RestoreLimits`: what a restore may read and create, so that input from
//! a stranger cannot make it take more memory than its size warrants; and
//! the byte budget a restore charges as it reads.

use std::cell::Cell;

use super::MAX_ENTITIES;
use crate::storage::CHUNK_BYTES;

/// Bounds on what [`Context::restore`](crate::Context::restore) (and
/// [`restore_of`](crate::Context::restore_of)) reads and creates, given
/// with the input: `RestoreLimits::default()` for your own saves. A
/// snapshot past a limit is refused with
/// [`Error::InvalidSnapshot`](crate::Error::InvalidSnapshot) naming the
/// limit, before any entity is created (the target stays empty).
///
/// # Untrusted input
///
/// A save made by another program, a player's upload or a peer's message
/// can hold anything. What a hostile snapshot can and cannot do to a
/// restore:
///
/// - It cannot crash the process, corrupt the target or leave it half
///   made: every malformed, truncated or inconsistent input is refused with
///   [`Error::InvalidSnapshot`](crate::Error::InvalidSnapshot), with the
///   target empty and usable (the tests feed every truncation and every bit
///   flip of valid snapshots, crafted claims and random mutations, through
///   both paths and both formats; a fuzz target, `restore`, does the same).
/// - It cannot make the restore reserve memory for what it only claims.
///   Lists grow as values arrive (whatever length the input announces, at
///   most 1,024 entries are reserved before the first value, and a list
///   grows to at most 16 times the values that arrived), and the entity
///   count is
///   checked against the values behind it: an entity that holds no value
///   costs the input nothing but the count, so `RestoreLimits` allows
///   65,536 of those by default (`{"entities":4294967293,"components":[]}`,
///   39 bytes, is refused at once). Allocations that fail are refused as
///   errors (`try_reserve`), not aborts. What a restore takes is then at
///   most a fixed multiple of the input's size (a value's size plus 4 bytes
///   per value, about 32 bytes per entity: the tests hold all a restore asks
///   the allocator for to 64 times the input and 1 MiB), plus 16 KiB for each component set it meets first (an
///   archetype's first chunk; at most 2^n for n listed types), plus the
///   entities without values.
/// - It can make a restore as large as its input warrants: a 100 MB save
///   of real values is restored. Bound what you accept, from untrusted
///   sources, with the limits given to [`Context::restore`](crate::Context::restore):
///   [`max_entities`](RestoreLimits::max_entities),
///   [`max_empty_entities`](RestoreLimits::max_empty_entities) and
///   [`max_bytes`](RestoreLimits::max_bytes) (the bytes the values, the
///   entities' records and the new archetypes take, checked while reading,
///   so reading stops at the bound).
/// - It cannot reach past the types listed in
///   [`snapshot!`](crate::snapshot!), name entities outside the snapshot
///   (references are positions, checked), or touch the target's other
///   state: the target's groups, collectors and indices see creations, as
///   from any other code.
/// - It can nest as deep as a component's own types allow: serde_json stops
///   at 128 levels, but postcard has no depth limit, so a component type
///   that is recursive (`enum Tree { Leaf, Node(Box<Tree>) }`) can be made to
///   overflow the stack from postcard input. That is serde's and the
///   format's matter: keep recursive types out of snapshots read from
///   strangers, or give them a `Deserialize` that counts depth.
///
/// # Example
/// ```
/// use reactecs::{Context, Error, RestoreLimits};
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Hp(u32);
/// reactecs::component!(Hp);
/// reactecs::snapshot!(Hp);
///
/// // A save from a stranger: at most 10,000 entities, 64 times its size.
/// let bytes = b"{\"entities\":4000000000,\"components\":[]}";
/// let limits = RestoreLimits::default().max_entities(10_000).max_bytes(64 * bytes.len());
/// let mut game = Context::new();
/// let input = &mut serde_json::Deserializer::from_slice(bytes);
/// let err = game.restore(input, limits).unwrap_err();
/// assert!(matches!(err, Error::InvalidSnapshot { .. }));
/// assert!(game.is_empty());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RestoreLimits {
    pub(crate) max_entities: u32,
    pub(crate) max_empty_entities: u32,
    pub(crate) max_bytes: usize,
}

impl RestoreLimits {
    /// What one entity's records take in a restore, as
    /// [`max_bytes`](RestoreLimits::max_bytes) counts them: its slot record,
    /// its row's handle, the restore's own list of handles and its holdings.
    pub const ENTITY_BYTES: usize = 32;

    /// The defaults: as many entities as a snapshot can hold (`u32::MAX -
    /// 2`), at most 65,536 of them holding no value, and no byte bound.
    pub const fn new() -> Self {
        RestoreLimits {
            max_entities: MAX_ENTITIES,
            max_empty_entities: 1 << 16,
            max_bytes: usize::MAX,
        }
    }

    /// The most entities the snapshot may hold.
    #[must_use]
    pub const fn max_entities(mut self, max: u32) -> Self {
        self.max_entities = max;
        self
    }

    /// The most entities that hold no value in the snapshot (default
    /// 65,536): an entity none of whose components are listed in
    /// [`snapshot!`](crate::snapshot!) is written as nothing but a count, so
    /// this bounds what a few bytes claiming billions of entities can ask
    /// for. Raise it to restore contexts with many such entities.
    #[must_use]
    pub const fn max_empty_entities(mut self, max: u32) -> Self {
        self.max_empty_entities = max;
        self
    }

    /// The most bytes the restore's values (the room reserved for them:
    /// each a value's size and 4 bytes), entity records and new archetypes
    /// may take (what a value's own
    /// `Deserialize` allocates, such as a `String`'s text, follows the
    /// input's size and is the format's matter). Checked as the values are
    /// read, so reading stops at the bound.
    #[must_use]
    pub const fn max_bytes(mut self, max: usize) -> Self {
        self.max_bytes = max;
        self
    }
}

impl Default for RestoreLimits {
    fn default() -> Self {
        Self::new()
    }
}

/// The bytes a restore may still take, charged as it reads and before it
/// creates.
#[doc(hidden)]
pub struct Budget {
    left: Cell<usize>,
    limit: usize,
    /// Whether a charge was refused (formats such as postcard drop the
    /// message of the error that stopped the read).
    exceeded: Cell<bool>,
}

/// What an archetype met for the first time takes: its first chunk, and
/// about as much again for its records.
pub(crate) const ARCHETYPE_BYTES: usize = 2 * CHUNK_BYTES;

impl Budget {
    pub(crate) fn new(limits: &RestoreLimits) -> Self {
        Budget {
            left: Cell::new(limits.max_bytes),
            limit: limits.max_bytes,
            exceeded: Cell::new(false),
        }
    }

    /// The bound it started with.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Takes `bytes` from the budget; `false` (and nothing taken) if fewer
    /// are left.
    #[inline]
    pub(crate) fn charge(&self, bytes: usize) -> bool {
        match self.left.get().checked_sub(bytes) {
            Some(left) => {
                self.left.set(left);
                true
            }
            None => {
                self.exceeded.set(true);
                false
            }
        }
    }

    /// Whether a charge was refused.
    pub(crate) fn exceeded(&self) -> bool {
        self.exceeded.get()
    }
}
