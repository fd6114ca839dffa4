//! `InContext`: a system of one context, run inside a `Contexts`.

use std::marker::PhantomData;

use crate::context::Context;
use crate::contexts::{ContextKind, Contexts};
use crate::system::{System, Timings};

/// Runs a system written for one [`Context`] on context `K` of a
/// [`Contexts`], so single-context systems (plain or
/// [`Reactive`](crate::system::Reactive)) join a `Feature<Contexts>`.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// use reactecs::system::InContext;
/// reactecs::context!(Game);
///
/// struct Spawn;
/// impl System for Spawn {
///     fn execute(&mut self, game: &mut Context) {
///         game.create_entity();
///     }
/// }
///
/// let mut contexts = Contexts::new();
/// let mut frame = Feature::<Contexts>::new("Frame").with(InContext::new(Game, Spawn));
/// frame.execute(&mut contexts);
/// assert_eq!(contexts.get::<Game>().len(), 1);
/// ```
pub struct InContext<K, S> {
    system: S,
    _context: PhantomData<fn() -> K>,
}

impl<K: ContextKind, S: System<Context>> InContext<K, S> {
    /// Runs `system` on context `K` (pass the marker value `context!`
    /// declared, e.g. `InContext::new(Game, Move)`).
    pub fn new(_context: K, system: S) -> Self {
        InContext {
            system,
            _context: PhantomData,
        }
    }

    /// The wrapped system.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// The wrapped system, mutably.
    pub fn system_mut(&mut self) -> &mut S {
        &mut self.system
    }
}

impl<K: ContextKind, S: System<Context>> System<Contexts> for InContext<K, S> {
    fn name(&self) -> &str {
        self.system.name()
    }

    fn initialize(&mut self, contexts: &mut Contexts) {
        self.system.initialize(contexts.get_mut::<K>());
    }

    fn execute(&mut self, contexts: &mut Contexts) {
        self.system.execute(contexts.get_mut::<K>());
    }

    fn cleanup(&mut self, contexts: &mut Contexts) {
        self.system.cleanup(contexts.get_mut::<K>());
    }

    fn teardown(&mut self, contexts: &mut Contexts) {
        self.system.teardown(contexts.get_mut::<K>());
    }

    fn activate_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.system.activate_reactive_systems(contexts.get_mut::<K>());
    }

    fn deactivate_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.system.deactivate_reactive_systems(contexts.get_mut::<K>());
    }

    fn clear_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.system.clear_reactive_systems(contexts.get_mut::<K>());
    }

    fn timings(&self) -> Option<Timings<'_>> {
        self.system.timings()
    }
}
