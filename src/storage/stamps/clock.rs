//! The floor: the tick at or below which no stamp matters any more.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// The change tick at or below which no stamp matters any more: every
/// consumer that compares stamps (the active collectors) has looked at or
/// after it, so a stamp at or below it reads as "unchanged" to each of
/// them, whatever its exact value. The context keeps it (raising it as its
/// oldest collector looks); the stamps of its columns and sparse sets
/// share it. A mark lets rows that leave their block's mask at a tick at or
/// below it keep no entry of their own (their old entries, lower still,
/// stand for it): a scattered write, which moves most blocks' ticks every
/// frame, then writes no entries at all.
#[derive(Clone, Default)]
pub(crate) struct Floor(Arc<AtomicU32>);

impl Floor {
    /// The floor now.
    #[inline(always)]
    pub(crate) fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    /// Moves the floor to `tick` (never past an active consumer's last look).
    pub(crate) fn set(&self, tick: u32) {
        self.0.store(tick, Ordering::Relaxed);
    }
}
