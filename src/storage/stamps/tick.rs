//! `Tick`, a point in a context's change time, and `AtomicTick`, one kept
//! where a mark through a shared borrow may write it.

use std::sync::atomic::{AtomicU32, Ordering};

/// A change tick: when a value was last written (a stamp), or when a
/// consumer last looked (what it has seen). Ticks only grow between
/// rebases, which keep them below 2^31 (see
/// [`Clock::REBASE_AT`](super::Clock::REBASE_AT)), so they never wrap and
/// compare as plain numbers; [`NEVER`](Tick::NEVER) (0) is before every
/// write.
///
/// The comparisons the stamps need are written here once:
/// [`is_newer_than`](Tick::is_newer_than) and the two it gives,
/// [`newer`](Tick::newer) and [`older`](Tick::older).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub(crate) struct Tick(u32);

impl Tick {
    /// Never changed: the stamp of a new row, below every tick a write
    /// stamps; as a stamp's tick, "do not stamp".
    pub(crate) const NEVER: Tick = Tick(0);

    /// The tick a new context's first writes stamp.
    pub(crate) const FIRST: Tick = Tick(1);

    /// The tick numbered `n`.
    #[inline(always)]
    pub(crate) const fn new(n: u32) -> Self {
        Tick(n)
    }

    /// Its number.
    #[inline(always)]
    pub(crate) const fn get(self) -> u32 {
        self.0
    }

    /// Whether this is [`NEVER`](Tick::NEVER).
    #[inline(always)]
    pub(crate) const fn is_never(self) -> bool {
        self.0 == 0
    }

    /// Whether this tick comes after `since`: a value stamped `self` is a
    /// change to a consumer that looked at `since`.
    #[inline(always)]
    pub(crate) const fn is_newer_than(self, since: Tick) -> bool {
        self.0 > since.0
    }

    /// The later of the two.
    #[inline(always)]
    pub(crate) fn newer(self, other: Tick) -> Tick {
        if other.is_newer_than(self) { other } else { self }
    }

    /// The earlier of the two.
    #[inline(always)]
    pub(crate) fn older(self, other: Tick) -> Tick {
        if other.is_newer_than(self) { self } else { other }
    }

    /// `count` ticks earlier (`NEVER` if that is before the first).
    #[inline(always)]
    pub(crate) const fn before(self, count: u32) -> Tick {
        Tick(self.0.saturating_sub(count))
    }

    /// The same tick after every tick is rebased by `base`: `base` earlier,
    /// [`NEVER`](Tick::NEVER) for those at or before it.
    #[inline(always)]
    pub(crate) const fn rebased(self, base: Tick) -> Tick {
        self.before(base.0)
    }
}

impl std::fmt::Display for Tick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A [`Tick`] that a mark through a shared borrow may write: relaxed loads
/// and stores (plain ones on every target; see the module docs for why
/// that is enough), and plain access under `&mut`. The same layout as
/// `AtomicU32`, and so as `u32`.
#[derive(Default)]
#[repr(transparent)]
pub(super) struct AtomicTick(AtomicU32);

impl AtomicTick {
    /// The tick now.
    #[inline(always)]
    pub(super) fn load(&self) -> Tick {
        Tick(self.0.load(Ordering::Relaxed))
    }

    /// Sets it to `tick`.
    #[inline(always)]
    pub(super) fn store(&self, tick: Tick) {
        self.0.store(tick.0, Ordering::Relaxed);
    }

    /// The tick, under an exclusive borrow.
    #[inline(always)]
    pub(super) fn read(&mut self) -> Tick {
        Tick(*self.0.get_mut())
    }

    /// Sets it to `tick`, under an exclusive borrow.
    #[inline(always)]
    pub(super) fn write(&mut self, tick: Tick) {
        *self.0.get_mut() = tick.0;
    }

    /// Raises it to `tick` if `tick` is newer (a load, and a store only
    /// then: marks are never concurrent, see the module docs).
    #[inline(always)]
    pub(super) fn raise(&self, tick: Tick) {
        if tick.is_newer_than(self.load()) {
            self.store(tick);
        }
    }
}
