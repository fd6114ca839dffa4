//! `SlotTable`: the slim per-slot records behind a context's
//! [`Entity`](crate::Entity) handles.
//!
//! A slot record is 12 bytes: the entity's tag and its location (archetype
//! and row). That is all a lookup reads. Retain counts live in a side table
//! ([`aerc`](crate::aerc)), touched only by retains and releases.
//!
//! Every entity gets a creation number, from its context's counter, which
//! never goes back (not even at `reset`, which only moves the point that
//! counts as creation index 0). Its low 32 bits are the entity's *tag*,
//! which its handle carries beside the slot index; a lookup compares the tag
//! with the slot's. The high bits (the *epoch*, which changes once every
//! 2^32 creations) are kept in a 2-byte side table, read only by
//! `creation_index`. Numbers whose low 32 bits are zero are skipped, so a
//! tag is never zero (which gives `Option<Entity>` its niche) and a freed
//! slot, whose tag is cleared, never matches a handle. Numbers whose low 32
//! bits are all ones (`u32::MAX`) are skipped too: that tag marks the
//! placeholder entities a [`CommandBuffer`](crate::CommandBuffer) hands out
//! (and [`Entity::PLACEHOLDER`](crate::Entity::PLACEHOLDER)), so a placeholder never names a real entity.
//!
//! # Handles of other contexts
//!
//! A context's counter starts where its 64-bit instance id says: the
//! context with instance id `i` (the `i`-th made in the process) numbers
//! its entities from `i * 0x9E37_79B9 mod 2^32` on, a Weyl sequence (the
//! multiplier is 2^32 over the golden ratio), which spreads the starts of
//! consecutive contexts as far apart as 32 bits allow, and with no shared
//! counter (no atomic per creation or per block). A handle used on another
//! context names nothing there unless that context's entity in the same
//! slot has exactly the handle's tag, which needs the two contexts' tag
//! ranges to overlap:
//!
//! - Among any `n` contexts made one after another, the starts are at least
//!   1,946,557 apart for `n` = 1,000, 287,291 for 10,000 and 11,703 for
//!   100,000 (`every_start_is_far_from_the_others` checks the first two).
//!   So a handle is refused by every other of those contexts, always, while
//!   each has created fewer entities than that gap: a test suite, or a
//!   server making a context per request or match, does not come near it.
//! - Past that (contexts far apart in the sequence, or creating millions of
//!   entities), two contexts' ranges overlap for about `(a + b) / 2^32` of
//!   the pairs that created `a` and `b` entities (10^-5 for two contexts of
//!   20,000), and even then a foreign handle is accepted only if the slot
//!   it names holds the one entity whose tag it has.
//!
//! A foreign handle that names nothing is refused as
//! [`Error::ForeignEntity`](crate::Error::ForeignEntity) (its tag is not
//! one this context gave out), for the cost of the tag compare every lookup
//! makes anyway.
//!
//! # Stale handles of the same context
//!
//! Tags repeat once every 2^32 creations, so a slot is reused only by
//! entities of the epoch its first entity was created in: a free slot whose
//! last entity is of an older epoch is *retired* (never used again) instead.
//! Within one epoch tags are distinct, so a handle to a destroyed entity
//! never matches a later entity of its slot: it stays stale however many
//! entities come after (up to 2^48 creations, when the 16-bit epoch record
//! wraps). A retirement costs one 12-byte record per slot free at an epoch
//! change, once per 2^32 creations; the check is one compare per reuse.
//! The numbers are handed out in blocks that end at multiples of 2^20 (so
//! none spans two epochs); the blocks a context used are listed, one
//! 24-byte record per 2^20 creations, to count creation indices and to tell
//! its own stale handles from other contexts' ones.

use std::num::NonZeroU32;

use crate::entity::Entity;
use crate::error::Error;
use crate::storage::{ArchetypeId, Location};

/// `archetype` of a free slot (its `row` links the free list).
const FREE: u32 = u32::MAX;
/// `archetype` of a destroyed entity kept for its retainers.
const DISABLED: u32 = u32::MAX - 1;
/// The end of the free list.
const NO_SLOT: u32 = u32::MAX;

/// One slot: 12 bytes.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// The low 32 bits of the creation number of the entity in the slot (0
    /// once freed).
    tag: u32,
    /// Its archetype, or `FREE` / `DISABLED`.
    archetype: u32,
    /// Its row in the archetype; for a free slot, the next free slot.
    row: u32,
}

impl Slot {
    #[inline(always)]
    fn tag(&self) -> u32 {
        self.tag
    }
}

/// What a handle names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// A live entity, at this location.
    Alive(Location),
    /// A destroyed entity whose slot is kept for its retainers.
    Disabled,
    /// Nothing: the slot was freed (and maybe reused), or never existed.
    Stale,
}

/// The entity slots of a context: live entities, destroyed ones kept for
/// their retainers (disabled), and free slots, reused last freed first.
pub(crate) struct SlotTable {
    slots: Vec<Slot>,
    /// Per slot, the high bits of its entity's creation number (which wrap
    /// after 2^48 creations, long after any handle is stale). Kept only up
    /// to the last slot whose epoch is not 0: a context that never reaches
    /// 2^32 creations (nearly every one) keeps none, 2 bytes an entity saved.
    epochs: Vec<u16>,
    /// The most recently freed slot (`NO_SLOT`: none).
    free: u32,
    /// Free slots retired (see the module docs): `FREE`, but never reused.
    retired: usize,
    /// Live entities.
    len: usize,
    /// Disabled entities.
    disabled: usize,
    /// The creation number the next entity gets (if below `block_end`).
    next_creation: u64,
    /// The end of the block of creation numbers being used: at it, the
    /// next entity takes a new block.
    block_end: u64,
    /// Where the next block starts.
    next_block: u64,
    /// The blocks used, in order (so by first number too).
    blocks: Vec<Block>,
    /// How many entities were created, ever.
    created: u64,
    /// The count of `created` that counts as creation index 0.
    base: u64,
}

/// Blocks of creation numbers end at multiples of this (a power of two
/// that divides 2^32, so a block never spans two epochs).
const BLOCK: u64 = 1 << 20;

/// The multiplier that spreads the starts of contexts' creation numbers:
/// 2^32 over the golden ratio, odd (so instance ids below 2^32 get
/// distinct starts).
const SPREAD: u32 = 0x9E37_79B9;

/// The first creation number of the context with instance id `instance`.
fn first_creation(instance: u64) -> u64 {
    u64::from((instance as u32).wrapping_mul(SPREAD))
}

/// The numbers given out from the block `start..end`: all but one with
/// tag 0 (at an epoch's start) and one with tag `u32::MAX` (at its end).
fn block_range(start: u64, end: u64) -> (u64, u64) {
    let first = if start as u32 == 0 { start + 1 } else { start };
    (first, if end as u32 == 0 { end - 1 } else { end })
}

/// A block of creation numbers a context used.
#[derive(Clone, Copy, Debug)]
struct Block {
    /// The first number given out from it.
    first: u64,
    /// The end of the numbers given out from it.
    end: u64,
    /// The context's creation count when it was started.
    count: u64,
}

impl SlotTable {
    /// The records of a new context with instance id `instance` (see the
    /// module docs: it says where the creation numbers start).
    pub(crate) fn new(instance: u64) -> Self {
        SlotTable {
            slots: Vec::new(),
            epochs: Vec::new(),
            free: NO_SLOT,
            retired: 0,
            len: 0,
            disabled: 0,
            next_creation: 0,
            block_end: 0,
            next_block: first_creation(instance),
            blocks: Vec::new(),
            created: 0,
            base: 0,
        }
    }
}

impl SlotTable {
    /// Where a live entity is; `None` if it is disabled or stale.
    #[inline(always)]
    pub(crate) fn location(&self, entity: Entity) -> Option<Location> {
        let slot = self.slots.get(entity.index as usize)?;
        if slot.tag() == entity.tag.get() && slot.archetype < DISABLED {
            Some(Location {
                archetype: ArchetypeId(slot.archetype),
                row: slot.row,
            })
        } else {
            None
        }
    }

    /// The raw archetype id and row of the entity in `entity`'s slot, if the
    /// handle names it: a live entity's location, or (for a disabled one) a
    /// raw archetype id no archetype has. For reads that look the archetype up
    /// anyway: one comparison fewer than [`location`](SlotTable::location).
    #[inline(always)]
    pub(crate) fn raw_location(&self, entity: Entity) -> Option<(u32, u32)> {
        let slot = self.slots.get(entity.index as usize)?;
        (slot.tag() == entity.tag.get()).then_some((slot.archetype, slot.row))
    }

    /// Why `entity` is not alive here, for a call on context `context`
    /// (about `component`, if one): [`Error::EntityDisabled`],
    /// [`Error::ForeignEntity`] for a handle whose tag this context never
    /// gave out, else [`Error::StaleEntity`].
    #[cold]
    #[inline(never)]
    pub(crate) fn why_dead(&self, context: &'static str, entity: Entity, component: Option<&'static str>) -> Error {
        match self.liveness(entity) {
            Liveness::Disabled => Error::EntityDisabled {
                context,
                entity,
                component,
            },
            _ if entity.placeholder_number().is_none() && !self.took(entity.tag()) => Error::ForeignEntity {
                context,
                entity,
                component,
            },
            _ => Error::StaleEntity {
                context,
                entity,
                component,
            },
        }
    }

    /// What `entity` names.
    pub(crate) fn liveness(&self, entity: Entity) -> Liveness {
        match self.slots.get(entity.index as usize) {
            Some(slot) if slot.tag() == entity.tag.get() => match slot.archetype {
                DISABLED => Liveness::Disabled,
                FREE => Liveness::Stale,
                archetype => Liveness::Alive(Location {
                    archetype: ArchetypeId(archetype),
                    row: slot.row,
                }),
            },
            _ => Liveness::Stale,
        }
    }

    /// Whether `entity` holds its slot (alive or disabled).
    #[inline]
    pub(crate) fn holds_slot(&self, entity: Entity) -> bool {
        self.liveness(entity) != Liveness::Stale
    }

    /// Whether any destroyed entity is kept for its retainers.
    #[inline(always)]
    pub(crate) fn any_disabled(&self) -> bool {
        self.disabled != 0
    }

    /// Records that live `entity` now lives at `location` (after storage
    /// moved its row).
    #[inline(always)]
    pub(crate) fn relocate(&mut self, entity: Entity, location: Location) {
        let slot = &mut self.slots[entity.index as usize];
        debug_assert!(slot.tag() == entity.tag.get() && slot.archetype < DISABLED);
        slot.archetype = location.archetype.0;
        slot.row = location.row;
    }

    /// The slot the next [`alloc`](SlotTable::alloc) gives its entity (so
    /// values can be filed under it before the entity exists).
    #[inline(always)]
    pub(crate) fn next_slot(&mut self) -> u32 {
        if self.next_creation == self.block_end {
            self.take_block();
        }
        let epoch = (self.next_creation >> 32) as u16;
        while self.free != NO_SLOT && self.epoch(self.free as usize) != epoch {
            self.retire_free_head();
        }
        if self.free != NO_SLOT {
            self.free
        } else {
            u32::try_from(self.slots.len())
                .ok()
                .filter(|&i| i != NO_SLOT)
                .expect("more than 2^32 - 1 entity slots")
        }
    }

    /// The live entity in slot `index`, if there is one.
    #[inline]
    pub(crate) fn live_at(&self, index: u32) -> Option<Entity> {
        let slot = self.slots.get(index as usize)?;
        if slot.archetype < DISABLED {
            Some(Entity {
                index,
                tag: NonZeroU32::new(slot.tag())
                    .expect("a held slot has a nonzero tag: blocks of creation numbers skip tag 0"),
            })
        } else {
            None
        }
    }

    /// A new live entity at `location` (which the caller fills right
    /// after), in the most recently freed slot or a new one.
    #[inline(always)]
    pub(crate) fn alloc(&mut self, location: Location) -> Entity {
        if self.next_creation == self.block_end {
            self.take_block();
        }
        let creation = self.next_creation;
        self.next_creation += 1;
        self.created += 1;
        let record = Slot {
            tag: creation as u32,
            archetype: location.archetype.0,
            row: location.row,
        };
        let epoch = (creation >> 32) as u16;
        while self.free != NO_SLOT && self.epoch(self.free as usize) != epoch {
            self.retire_free_head();
        }
        let index = if self.free != NO_SLOT {
            let index = self.free;
            self.free = self.slots[index as usize].row;
            self.slots[index as usize] = record;
            self.set_epoch(index as usize, epoch);
            index
        } else {
            let index = u32::try_from(self.slots.len())
                .ok()
                .filter(|&i| i != NO_SLOT)
                .expect("more than 2^32 - 1 entity slots");
            self.slots.push(record);
            self.set_epoch(index as usize, epoch);
            index
        };
        self.len += 1;
        Entity {
            index,
            tag: NonZeroU32::new(creation as u32).expect("block_range skips the number whose low 32 bits are 0"),
        }
    }

    /// Starts the next block of this context's creation numbers: up to the
    /// next multiple of [`BLOCK`]. Tags run 1..=u32::MAX - 1: a block
    /// starting an epoch skips its first number (tag 0, a freed slot's), one
    /// ending an epoch its last (tag `u32::MAX`, a placeholder's).
    #[cold]
    fn take_block(&mut self) {
        loop {
            let start = self.next_block;
            self.next_block = (start / BLOCK + 1) * BLOCK;
            let (first, end) = block_range(start, self.next_block);
            // A block of one number with tag `u32::MAX` gives out nothing.
            if first < end {
                self.next_creation = first;
                self.block_end = end;
                self.blocks.push(Block {
                    first,
                    end,
                    count: self.created,
                });
                return;
            }
        }
    }

    /// Whether `tag` is one this context gave out (a handle with another
    /// tag is another context's).
    pub(crate) fn took(&self, tag: u32) -> bool {
        // A block lies in one epoch: its tags are its numbers' low bits, in
        // order. The last block is given out up to the next number.
        let given = self.blocks.iter().enumerate().map(|(at, block)| {
            let end = if at + 1 == self.blocks.len() {
                self.next_creation
            } else {
                block.end
            };
            (block.first, end)
        });
        given
            .filter(|&(first, end)| first < end)
            .any(|(first, end)| (first as u32..=(end - 1) as u32).contains(&tag))
    }

    /// Ends live `entity`'s life: frees its slot if nothing `retained` it
    /// (true), else keeps it, disabled, for its retainers (false).
    pub(crate) fn disable(&mut self, entity: Entity, retained: bool) -> bool {
        debug_assert!(self.location(entity).is_some());
        self.len -= 1;
        if retained {
            self.slots[entity.index as usize].archetype = DISABLED;
            self.disabled += 1;
            false
        } else {
            self.release_slot(entity.index);
            true
        }
    }

    /// Frees the slot of disabled `entity`, whose last retain went.
    pub(crate) fn free_disabled(&mut self, entity: Entity) {
        debug_assert_eq!(self.liveness(entity), Liveness::Disabled);
        self.disabled -= 1;
        self.release_slot(entity.index);
    }

    /// Takes the most recently freed slot off the free list for good: its
    /// last entity is of an older epoch, so a new one there could get the tag
    /// a stale handle to it holds.
    #[cold]
    fn retire_free_head(&mut self) {
        let index = self.free as usize;
        self.free = self.slots[index].row;
        self.slots[index].row = NO_SLOT;
        self.retired += 1;
    }

    fn release_slot(&mut self, index: u32) {
        self.slots[index as usize] = Slot {
            tag: 0,
            archetype: FREE,
            row: self.free,
        };
        self.free = index;
    }

    /// The creation index of live `entity`: its position in creation order
    /// since the context was made or last reset.
    pub(crate) fn creation_index(&self, entity: Entity) -> u64 {
        self.relative(self.creation(entity.index as usize))
    }

    /// The epoch of slot `index`'s entity (0 past the epochs kept).
    #[inline(always)]
    fn epoch(&self, index: usize) -> u16 {
        self.epochs.get(index).copied().unwrap_or(0)
    }

    /// Records slot `index`'s epoch, keeping epochs only as far as needed.
    #[inline(always)]
    fn set_epoch(&mut self, index: usize, epoch: u16) {
        if let Some(kept) = self.epochs.get_mut(index) {
            *kept = epoch;
        } else if epoch != 0 {
            self.epochs.resize(index, 0);
            self.epochs.push(epoch);
        }
    }

    /// The creation number of the entity in slot `index` (which holds one).
    fn creation(&self, index: usize) -> u64 {
        let (tag, epoch) = (self.slots[index].tag, self.epoch(index));
        // The stored epoch is the low 16 bits of the high half: the entity's
        // is the latest epoch with those bits, up to the next creation's.
        let next_epoch = self.next_creation >> 32;
        let epoch = next_epoch - (next_epoch.wrapping_sub(u64::from(epoch)) & 0xFFFF);
        (epoch << 32) | u64::from(tag)
    }

    /// How many entities this context created before the one with creation
    /// number `creation` (one it gave out).
    fn count_before(&self, creation: u64) -> Option<u64> {
        let at = self
            .blocks
            .partition_point(|block| block.first <= creation)
            .checked_sub(1)?;
        let block = self.blocks[at];
        (creation < block.end).then(|| block.count + (creation - block.first))
    }

    /// Creation number `creation` as a creation index.
    fn relative(&self, creation: u64) -> u64 {
        self.count_before(creation)
            .expect("a live entity's creation number is one of the context's")
            - self.base
    }

    /// Restarts creation indices at 0 for the next entity. (The blocks
    /// taken so far are kept: they tell this context's stale handles from
    /// other contexts' ones.)
    pub(crate) fn restart_creation_indices(&mut self) {
        self.base = self.created;
    }

    /// Relinks the free slots (every slot, with no entity left) in ascending
    /// order, so that new entities fill slots 0, 1, 2, ... and iterate in
    /// creation order, as in a new context (freed one by one, they would be
    /// reused last freed first). Retired slots stay retired.
    pub(crate) fn relink_free_slots(&mut self) {
        debug_assert_eq!((self.len, self.disabled), (0, 0));
        // A retired slot is free but off the list: find the list's slots.
        let mut listed = vec![false; self.slots.len()];
        let mut at = self.free;
        while at != NO_SLOT {
            listed[at as usize] = true;
            at = self.slots[at as usize].row;
        }
        let mut next = NO_SLOT;
        for index in (0..self.slots.len()).rev().filter(|&index| listed[index]) {
            self.slots[index].row = next;
            next = index as u32;
        }
        self.free = next;
    }

    /// The number of live entities.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The number of destroyed entities kept for their retainers.
    pub(crate) fn disabled_len(&self) -> usize {
        self.disabled
    }

    /// An upper bound on slot indices in use.
    pub(crate) fn slot_capacity(&self) -> usize {
        self.slots.len()
    }

    /// Room for `additional` more entities.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    /// Room for `additional` more entities, or why it cannot be had.
    #[cfg(feature = "serde")]
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), std::collections::TryReserveError> {
        self.slots.try_reserve(additional)
    }

    /// Live entities, in slot order.
    pub(crate) fn alive(&self) -> impl Iterator<Item = Entity> + '_ {
        self.held().filter(|&(_, disabled)| !disabled).map(|(entity, _)| entity)
    }

    /// Live entities, in creation order. Creation numbers grow with creation
    /// (a context takes its blocks in order), so they order the entities as
    /// creation indices do, for a cheaper key; entities made in a new (or
    /// reset, or restored) context without destructions fill slots in
    /// creation order, which one pass sees, and then nothing is sorted.
    #[cfg(feature = "serde")]
    pub(crate) fn alive_in_creation_order(&self) -> Vec<Entity> {
        let mut alive: Vec<Entity> = Vec::with_capacity(self.len);
        alive.extend(self.alive());
        let creation = |entity: &Entity| self.creation(entity.index as usize);
        if !alive.is_sorted_by_key(creation) {
            alive.sort_by_cached_key(creation);
        }
        alive
    }

    /// Every entity holding a slot, in slot order, with whether it is
    /// disabled.
    pub(crate) fn held(&self) -> impl Iterator<Item = (Entity, bool)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.archetype != FREE)
            .map(|(index, slot)| {
                let entity = Entity {
                    index: index as u32,
                    tag: NonZeroU32::new(slot.tag())
                        .expect("a held slot has a nonzero tag: blocks of creation numbers skip tag 0"),
                };
                (entity, slot.archetype == DISABLED)
            })
    }

    /// Checks the records: counts, the free list, distinct creation numbers.
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut free = vec![false; self.slots.len()];
        let mut at = self.free;
        while at != NO_SLOT {
            let slot = self
                .slots
                .get(at as usize)
                .ok_or(format!("free list reaches slot {at}"))?;
            if slot.archetype != FREE || std::mem::replace(&mut free[at as usize], true) {
                return Err(format!("free list holds slot {at} twice or in use"));
            }
            at = slot.row;
        }
        let (mut live, mut disabled) = (0, 0);
        let mut creations = std::collections::HashSet::new();
        if self.epochs.len() > self.slots.len() {
            return Err(format!("{} slots but {} epochs", self.slots.len(), self.epochs.len()));
        }
        let mut retired = 0;
        for (index, slot) in self.slots.iter().enumerate() {
            match slot.archetype {
                // A free slot off the free list is retired.
                FREE if !free[index] => {
                    retired += 1;
                    continue;
                }
                FREE => continue,
                DISABLED => disabled += 1,
                _ => live += 1,
            }
            let creation = self.creation(index);
            let given = self
                .count_before(creation)
                .is_some_and(|count| count >= self.base && count < self.created);
            if !given || creation >= self.next_creation || slot.tag() == 0 || slot.tag() == u32::MAX {
                return Err(format!("slot {index} has creation number {creation}"));
            }
            if !creations.insert(creation) {
                return Err(format!("creation number {creation} is used twice"));
            }
        }
        if retired != self.retired {
            return Err(format!(
                "{retired} free slots are off the free list, {} retired",
                self.retired
            ));
        }
        if (live, disabled) != (self.len, self.disabled) {
            return Err(format!(
                "{live} live and {disabled} disabled slots, counted {} and {}",
                self.len, self.disabled
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(row: u32) -> Location {
        Location {
            archetype: ArchetypeId(0),
            row,
        }
    }

    #[test]
    fn a_slot_record_is_twelve_bytes() {
        assert_eq!(size_of::<Slot>(), 12);
        assert_eq!(size_of::<Entity>(), 8);
        assert_eq!(size_of::<Option<Entity>>(), 8);
    }

    #[test]
    fn freed_slots_are_reused_last_freed_first_with_a_new_tag() {
        let mut entities = SlotTable::new(0);
        let a = entities.alloc(at(0));
        let b = entities.alloc(at(1));
        assert!(entities.disable(a, false));
        assert!(entities.disable(b, false));
        let c = entities.alloc(at(0));
        assert_eq!(c.index(), b.index());
        assert_ne!(c, b);
        assert_eq!(entities.liveness(b), Liveness::Stale);
        assert_eq!(entities.location(c), Some(at(0)));
        entities.check().unwrap();
    }

    #[test]
    fn a_disabled_entity_is_told_apart_from_a_stale_one() {
        let mut entities = SlotTable::new(0);
        let a = entities.alloc(at(0));
        assert!(!entities.disable(a, true));
        assert_eq!(entities.liveness(a), Liveness::Disabled);
        assert_eq!(entities.location(a), None);
        let b = entities.alloc(at(0));
        assert_ne!(b.index(), a.index(), "a disabled slot is not reused");
        entities.free_disabled(a);
        assert_eq!(entities.liveness(a), Liveness::Stale);
        entities.check().unwrap();
    }

    impl SlotTable {
        /// Gives out numbers from `creation` on next, as if the context had
        /// come that far.
        fn jump_to(&mut self, creation: u64) {
            self.next_block = creation;
            self.take_block();
        }
    }

    #[test]
    fn blocks_skip_the_tags_zero_and_all_ones() {
        let epoch = 1u64 << 32;
        assert_eq!(block_range(epoch, epoch + BLOCK), (epoch + 1, epoch + BLOCK));
        assert_eq!(block_range(epoch - BLOCK, epoch), (epoch - BLOCK, epoch - 1));
        assert_eq!(block_range(3 * BLOCK, 4 * BLOCK), (3 * BLOCK, 4 * BLOCK));
        // A context starting at the last number of an epoch starts at the
        // next one's second.
        let mut entities = SlotTable::new(0);
        entities.jump_to(epoch - 1);
        assert_eq!(entities.alloc(at(0)).tag(), 1);
    }

    #[test]
    fn every_start_is_far_from_the_others() {
        // The starts of any `n` consecutive contexts are as far apart as
        // those of the first `n` (differences depend on instance ids'
        // differences only): the gaps the module docs promise.
        for (n, gap) in [(1_000u64, 1_946_557u64), (10_000, 287_291)] {
            let mut starts: Vec<u64> = (0..n).map(first_creation).collect();
            starts.sort_unstable();
            let around = (1 << 32) - starts[n as usize - 1] + starts[0];
            let least = starts.windows(2).map(|w| w[1] - w[0]).chain([around]).min();
            assert_eq!(least, Some(gap), "{n} contexts");
        }
    }

    #[test]
    fn tags_skip_zero_and_all_ones_and_creation_indices_count_every_entity() {
        let mut entities = SlotTable::new(0);
        entities.jump_to(u64::from(u32::MAX) - 2);
        let made: Vec<Entity> = (0..4).map(|row| entities.alloc(at(row))).collect();
        let tags: Vec<u32> = made.iter().map(|e| e.tag()).collect();
        assert_eq!(tags[..2], [u32::MAX - 2, u32::MAX - 1]);
        assert!(tags.iter().all(|&tag| tag != 0 && tag != u32::MAX), "{tags:?}");
        assert!(made.iter().all(|e| e.placeholder_number().is_none()));
        let indices: Vec<u64> = made.iter().map(|&e| entities.creation_index(e)).collect();
        assert_eq!(indices, [0, 1, 2, 3], "counted across blocks");
        assert_eq!(
            entities.epochs,
            [0, 0, 1, 1],
            "epochs kept from the first that is not 0"
        );
        entities.check().unwrap();
        for &e in &made {
            entities.disable(e, false);
        }
        entities.restart_creation_indices();
        assert!(made.iter().all(|e| entities.took(e.tag())), "still ours, stale");
        let next = entities.alloc(at(4));
        assert_eq!(entities.creation_index(next), 0);
        entities.check().unwrap();
    }

    #[test]
    fn contexts_never_share_a_tag() {
        let (mut game, mut input) = (SlotTable::new(1), SlotTable::new(2));
        let ours: Vec<Entity> = (0..100).map(|row| game.alloc(at(row))).collect();
        let theirs: Vec<Entity> = (0..100).map(|row| input.alloc(at(row))).collect();
        assert!(
            game.epochs.is_empty() && input.epochs.is_empty(),
            "epoch 0 is not stored"
        );
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(a.index(), b.index());
            assert_ne!(a.tag(), b.tag());
            assert_eq!(game.liveness(*b), Liveness::Stale);
            assert!(game.took(a.tag()) && !game.took(b.tag()));
        }
    }

    #[test]
    fn a_placeholder_is_never_null_and_never_names_a_slot() {
        let first = Entity::placeholder(0);
        let last = Entity::placeholder(Entity::PLACEHOLDERS - 1);
        assert_eq!(first.placeholder_number(), Some(0));
        assert_eq!(last.placeholder_number(), Some(u32::MAX - 1));
        assert_eq!(Entity::PLACEHOLDER.placeholder_number(), None);
        assert_ne!(last, Entity::PLACEHOLDER);
        assert_eq!(first.to_string(), "p0");
        let mut entities = SlotTable::new(0);
        let real = entities.alloc(at(0));
        assert_eq!(real.index(), first.index());
        assert_eq!(entities.liveness(first), Liveness::Stale);
    }

    #[test]
    fn a_destroyed_entitys_handle_stays_stale_when_tags_come_round_again() {
        let mut entities = SlotTable::new(0);
        let kept = entities.alloc(at(0));
        let old = entities.alloc(at(1));
        entities.disable(old, false);
        // Skip to 2^32 creations after `old`'s: the next entity gets the tag
        // `old` has, in the next epoch. `old`'s slot, free with an entity of
        // the last epoch, is retired rather than given to it.
        let next_epoch = (entities.next_creation >> 32) + 1;
        entities.jump_to((next_epoch << 32) | u64::from(old.tag()));
        let new = entities.alloc(at(1));
        assert_eq!(new.tag(), old.tag(), "the tag came round");
        assert_ne!(new.index, old.index, "the slot was retired");
        assert_eq!(entities.liveness(old), Liveness::Stale);
        assert_eq!(entities.location(new), Some(at(1)));
        assert_eq!(entities.location(kept), Some(at(0)));
        assert_eq!(entities.retired, 1);
        entities.check().unwrap();
        // Slots freed in this epoch are reused as before; a retired one never.
        entities.disable(new, false);
        let again = entities.alloc(at(1));
        assert_eq!(again.index, new.index);
        assert_eq!(entities.liveness(new), Liveness::Stale);
        entities.check().unwrap();
        assert_eq!(entities.slot_capacity(), 3);
    }
}
