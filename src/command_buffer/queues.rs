//! The values a command buffer holds: one FIFO queue per value type.
//!
//! A command that carries a value (an `add`, a `replace`, a bundle to create
//! an entity with) pushes it onto the queue of its type and keeps the queue's
//! slot; playback pops it from there. Every command that pushes a value of
//! type `T` pops one when it is played back, in recorded order, so each
//! queue hands its values out in the order they came in. Queues keep their
//! capacity when emptied, so a buffer refilled with the same mix of commands
//! does not allocate. No raw-memory code: a queue is a `VecDeque<T>` behind a
//! `dyn ValueQueue`, found by slot and downcast with `Any`.

use std::any::{Any, TypeId};
use std::collections::{HashMap, VecDeque};

use crate::context::Context;
use crate::entity::Entity;

/// A slot no queue has: for commands without a value.
pub(super) const NO_QUEUE: u32 = u32::MAX;

/// A queue of values of one type, type-erased.
trait ValueQueue: Any + Send + Sync {
    /// Drops every value, keeping the capacity.
    fn clear(&mut self);

    /// How many values it holds.
    fn len(&self) -> usize;

    /// An empty queue of the same type.
    fn empty_like(&self) -> Box<dyn ValueQueue>;

    /// Moves every value to the back of `to` (a queue of the same type),
    /// keeping their order; this queue is left empty, with its capacity.
    fn move_into(&mut self, to: &mut dyn ValueQueue);
}

impl<T: Send + Sync + 'static> ValueQueue for VecDeque<T> {
    fn clear(&mut self) {
        VecDeque::clear(self);
    }

    fn len(&self) -> usize {
        VecDeque::len(self)
    }

    fn empty_like(&self) -> Box<dyn ValueQueue> {
        Box::new(VecDeque::<T>::new())
    }

    fn move_into(&mut self, to: &mut dyn ValueQueue) {
        let to: &mut dyn Any = to;
        to.downcast_mut::<VecDeque<T>>()
            .expect("queues are matched by value type: `slot_like` finds or makes the queue of `ty`")
            .append(self);
    }
}

/// Carries out a run of `count` consecutive `CreateWith` commands of one
/// bundle type, whose values wait in queue `queue`, as one batch, pushing
/// the entities made to `created`; `false`, having done nothing, unless
/// that is exactly what the commands one by one would do (see
/// [`Context::create_quietly`]).
pub(super) type CreateRun = fn(&mut Queues, u32, usize, &mut Context, &mut Vec<Entity>) -> bool;

/// The value queues of one command buffer.
#[derive(Default)]
pub(super) struct Queues {
    /// The queues, by slot.
    queues: Vec<Box<dyn ValueQueue>>,
    /// The value type of each queue, by slot.
    types: Vec<TypeId>,
    /// For a queue of bundles, by slot: how to play a run of creates with
    /// them at once.
    create_runs: Vec<Option<CreateRun>>,
    /// The slot of each value type's queue.
    slots: HashMap<TypeId, u32, foldhash::fast::RandomState>,
}

impl Queues {
    /// Puts `value` at the back of its type's queue (made on first use) and
    /// returns the queue's slot.
    #[inline]
    pub(super) fn push<T: Send + Sync + 'static>(&mut self, value: T) -> u32 {
        let slot = match self.slots.get(&TypeId::of::<T>()) {
            Some(&slot) => slot,
            None => self.add_queue(TypeId::of::<T>(), Box::new(VecDeque::<T>::new())),
        };
        let queue: &mut dyn Any = &mut *self.queues[slot as usize];
        queue
            .downcast_mut::<VecDeque<T>>()
            .expect("a slot holds the queue of its type: `slots` maps each type to its own queue")
            .push_back(value);
        slot
    }

    /// Takes the value at the front of the queue in `slot`, of type `T`.
    ///
    /// # Panics
    /// If the queue is not of `T` or is empty: the buffer's commands and
    /// queues went out of step, a bug in this module.
    #[inline]
    pub(super) fn pop<T: 'static>(&mut self, slot: u32) -> T {
        let queue: &mut dyn Any = &mut *self.queues[slot as usize];
        queue
            .downcast_mut::<VecDeque<T>>()
            .and_then(VecDeque::pop_front)
            .expect("each recorded value is taken once, in recorded order")
    }

    /// The next `count` values of the queue in slot `slot`, which holds
    /// `T`s, in recorded order (taken as the iterator is used; those it did
    /// not reach when dropped are dropped).
    ///
    /// # Panics
    /// As [`pop`](Queues::pop), if the queue is not of `T` or holds fewer
    /// than `count` values.
    pub(super) fn drain<T: 'static>(&mut self, slot: u32, count: usize) -> std::collections::vec_deque::Drain<'_, T> {
        let queue: &mut dyn Any = &mut *self.queues[slot as usize];
        queue
            .downcast_mut::<VecDeque<T>>()
            .expect("each recorded value is taken once, in recorded order")
            .drain(..count)
    }

    /// The slot of the queue for values of type `ty`, made like `like` if
    /// there is none.
    fn slot_like(&mut self, ty: TypeId, like: &dyn ValueQueue) -> u32 {
        match self.slots.get(&ty) {
            Some(&slot) => slot,
            None => self.add_queue(ty, like.empty_like()),
        }
    }

    #[cold]
    fn add_queue(&mut self, ty: TypeId, queue: Box<dyn ValueQueue>) -> u32 {
        let slot = u32::try_from(self.queues.len())
            .ok()
            .filter(|&slot| slot != NO_QUEUE)
            .expect("fewer than 2^32 - 1 value types: each queue costs memory, which runs out first");
        self.queues.push(queue);
        self.types.push(ty);
        self.create_runs.push(None);
        self.slots.insert(ty, slot);
        slot
    }

    /// The slot in `self` of the queue whose slot in `other` is `slot`
    /// (made empty if `self` has none).
    pub(super) fn adopt(&mut self, other: &Queues, slot: u32) -> u32 {
        let slot = slot as usize;
        let adopted = self.slot_like(other.types[slot], &*other.queues[slot]);
        if let Some(run) = other.create_runs[slot] {
            self.create_runs[adopted as usize] = Some(run);
        }
        adopted
    }

    /// [`adopt`](Queues::adopt) of every queue of `other`: the slot here of
    /// each of its slots, by its slot.
    pub(super) fn adopt_all(&mut self, other: &Queues) -> smallvec::SmallVec<[u32; 8]> {
        (0..other.queues.len() as u32)
            .map(|slot| self.adopt(other, slot))
            .collect()
    }

    /// The values of the queue in `slot` are bundles, which `run` creates
    /// entities with, a run at a time.
    #[inline]
    pub(super) fn set_create_run(&mut self, slot: u32, run: CreateRun) {
        self.create_runs[slot as usize] = Some(run);
    }

    /// How to play a run of creates with the bundles of the queue in
    /// `slot`, if it holds bundles.
    #[inline]
    pub(super) fn create_run(&self, slot: u32) -> Option<CreateRun> {
        self.create_runs.get(slot as usize).copied().flatten()
    }

    /// Moves every value of `other` to the back of its type's queue here
    /// (made if there is none). `other`'s queues are left empty, with their
    /// capacity.
    pub(super) fn take_all(&mut self, other: &mut Queues) {
        for ((queue, &ty), &run) in other.queues.iter_mut().zip(&other.types).zip(&other.create_runs) {
            if queue.len() > 0 {
                let slot = self.slot_like(ty, &**queue) as usize;
                queue.move_into(&mut *self.queues[slot]);
                if run.is_some() {
                    self.create_runs[slot] = run;
                }
            }
        }
    }

    /// Drops every value, keeping the queues and their capacity.
    pub(super) fn clear(&mut self) {
        for queue in &mut self.queues {
            queue.clear();
        }
    }

    /// How many values are held, over every queue.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.queues.iter().map(|queue| queue.len()).sum()
    }
}
