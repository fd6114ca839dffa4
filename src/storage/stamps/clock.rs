//! The clock of a context's change time (`Clock`: the tick writes stamp
//! now) and the floor under its stamps (`Floor`), with their rules: when
//! the ticks are rebased and by how much, and where the floor stands.
//! Which consumers look when is the context's business; given their looks,
//! the rules here say what the clock and the floor do.

use std::sync::Arc;

use super::tick::{AtomicTick, Tick};

/// The change tick at or below which no stamp matters any more: every
/// consumer that compares stamps (the active collectors) has looked at or
/// after it, so a stamp at or below it reads as "unchanged" to each of
/// them, whatever its exact value. The [`Clock`] keeps it (the context
/// raises it as its oldest collector looks); the stamps of every column and
/// sparse set of the context share it. A mark lets rows that leave their
/// block's mask at a tick at or below it keep no entry of their own (their
/// old entries, lower still, stand for it): a scattered write, which moves
/// most blocks' ticks every frame, then writes no entries at all.
#[derive(Clone, Default)]
pub(crate) struct Floor(Arc<AtomicTick>);

impl Floor {
    /// The floor now.
    #[inline(always)]
    pub(crate) fn get(&self) -> Tick {
        self.0.load()
    }

    /// Moves the floor to `tick` (never past an active consumer's last
    /// look: see [`Clock::raise_floor`]).
    pub(super) fn set(&self, tick: Tick) {
        self.0.store(tick);
    }

    /// Whether `self` and `other` are the same floor (shared).
    pub(crate) fn is(&self, other: &Floor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A context's change clock: the tick every mutable access stamps now
/// (`now`, at least [`Tick::FIRST`]), ended each time a consumer looks, and
/// the [`Floor`] under the stamps.
pub(crate) struct Clock {
    now: Tick,
    floor: Floor,
}

impl Clock {
    /// At this tick, ticks are rebased before the next one is ended (see
    /// [`needs_rebase`](Clock::needs_rebase)): every stamp and tick stays
    /// below 2^31, which the scans rely on (they compare stamps as signed
    /// numbers, four at a time).
    pub(crate) const REBASE_AT: Tick = Tick::new(1 << 30);

    /// A consumer that has not looked for this many ticks when ticks are
    /// rebased looks first ([`is_stale`](Clock::is_stale)), so the oldest
    /// look, by which every tick drops, is recent and the rebase frees
    /// many ticks.
    pub(crate) const KEEP: u32 = 1 << 29;

    /// A new context's clock: the first tick, the floor below it.
    pub(crate) fn new() -> Self {
        Clock {
            now: Tick::FIRST,
            floor: Floor::default(),
        }
    }

    /// The tick mutable accesses stamp now.
    #[inline(always)]
    pub(crate) fn now(&self) -> Tick {
        self.now
    }

    /// The floor (shared with every stamped column and sparse set).
    #[inline(always)]
    pub(crate) fn floor(&self) -> &Floor {
        &self.floor
    }

    /// Ends the current tick and gives it: a consumer that looked now
    /// remembers it, and every later write stamps a larger one. The caller
    /// rebases when [`needs_rebase`](Clock::needs_rebase) says, long before
    /// the tick could wrap.
    pub(crate) fn end_tick(&mut self) -> Tick {
        let ended = self.now;
        self.now = Tick::new(
            self.now
                .get()
                .checked_add(1)
                .expect("change ticks are rebased long before they wrap: `Context::end_change_tick` does it at 2^30"),
        );
        ended
    }

    /// Whether the ticks must be rebased before the next one is ended:
    /// `now` reached [`REBASE_AT`](Clock::REBASE_AT).
    #[inline]
    pub(crate) fn needs_rebase(&self) -> bool {
        !Self::REBASE_AT.is_newer_than(self.now)
    }

    /// Whether a consumer whose last look was `look` must look before the
    /// ticks are rebased: it has not for [`KEEP`](Clock::KEEP) ticks.
    pub(crate) fn is_stale(&self, look: Tick) -> bool {
        self.now.before(Self::KEEP).is_newer_than(look)
    }

    /// By how much a rebase lowers every tick, given the oldest last look
    /// of an active consumer (once the stale ones looked): that look (so
    /// it becomes [`Tick::NEVER`] and no newer stamp does), and at most the
    /// last tick ended (the current one stays at least 1).
    pub(crate) fn rebase_base(&self, oldest_look: Option<Tick>) -> Tick {
        oldest_look.unwrap_or(self.now).older(self.now.before(1))
    }

    /// Lowers `now` and the floor by `base` (below `now`), as every stamp
    /// of the context is lowered with it.
    pub(in crate::storage) fn rebase(&mut self, base: Tick) {
        debug_assert!(self.now.is_newer_than(base));
        self.now = self.now.rebased(base);
        self.floor.set(self.floor.get().rebased(base));
    }

    /// Moves the floor to the oldest last look of an active consumer, or
    /// to the last tick ended if none is active: a stamp at or below it is
    /// old news to every consumer. The context calls it whenever a consumer
    /// starts, stops, or was the one holding the floor (see
    /// [`rests_on`](Clock::rests_on)), so the floor is always the oldest
    /// look.
    pub(crate) fn raise_floor(&self, oldest_look: Option<Tick>) {
        self.floor.set(oldest_look.unwrap_or(self.now.before(1)));
    }

    /// Whether the floor may rest on a consumer whose last look was `look`
    /// (the look is at or below the floor): when that consumer looks again
    /// the floor may rise, else it stays where it is.
    #[inline]
    pub(crate) fn rests_on(&self, look: Tick) -> bool {
        !look.is_newer_than(self.floor.get())
    }

    /// Checks invariants 1 and 3 of the module docs (as far as the clock
    /// knows them): `now` between [`Tick::FIRST`] and
    /// [`REBASE_AT`](Clock::REBASE_AT), the floor before it.
    pub(crate) fn check(&self) -> Result<(), String> {
        let (now, floor) = (self.now, self.floor.get());
        if Tick::FIRST.is_newer_than(now) || now.is_newer_than(Self::REBASE_AT) {
            return Err(format!("the change tick {now} is not in 1..={}", Self::REBASE_AT));
        }
        if !now.is_newer_than(floor) {
            return Err(format!(
                "the stamps' floor {floor} is not before the current tick {now}"
            ));
        }
        Ok(())
    }

    /// Moves the current tick on to `tick` (tests of the rebase).
    #[cfg(test)]
    pub(crate) fn jump(&mut self, tick: Tick) {
        assert!(!self.now.is_newer_than(tick), "ticks only grow");
        self.now = tick;
    }
}
