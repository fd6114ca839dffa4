//! `InContext`: a system of one context, run inside a `Contexts`.

use std::any::{Any, TypeId};
use std::marker::PhantomData;

use crate::context::Context;
use crate::contexts::{ContextKind, Contexts};
use crate::system::{Feature, Seal, System, SystemResult, Systems, Timings, wrapped_if, wrapped_if_mut};

/// Runs a system written for one [`Context`] on context `K` of a
/// [`Contexts`], so single-context systems (plain or
/// [`Reactive`](crate::system::Reactive)) join a `Feature<Contexts>`.
/// [`Feature::with_in`] (and [`Systems::with_in`]) wrap and add in one call.
///
/// Every method, the `try_` phases and
/// [`create_collectors`](System::create_collectors) included, goes to the
/// wrapped system with context `K`.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// reactecs::context!(Game, Input);
///
/// struct Spawn;
/// impl System for Spawn {
///     fn execute(&mut self, game: &mut Context) {
///         game.create_entity();
///     }
/// }
///
/// let mut contexts = Contexts::new();
/// let mut frame = Feature::<Contexts>::new("Frame")
///     .with_in(Game, Spawn)                     // short for `.with(InContext::new(Game, Spawn))`
///     .with(InContext::new(Input, Spawn));
/// frame.execute(&mut contexts);
/// assert_eq!(contexts.context::<Game>().len(), 1);
/// assert_eq!(contexts.context::<Input>().len(), 1);
/// ```
pub struct InContext<K, S> {
    system: S,
    _context: PhantomData<fn() -> K>,
}

/// The context and the system's name: `InContext { context: "Game", system:
/// "Move" }`.
impl<K: ContextKind, S: System<Context>> std::fmt::Debug for InContext<K, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InContext")
            .field("context", &K::NAME)
            .field("system", &self.system.name())
            .finish()
    }
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

    /// The wrapped system if it is of type `wanted`, else the first of that
    /// type inside it.
    fn find_system(&self, seal: Seal, wanted: TypeId) -> Option<&dyn Any>
    where
        Self: 'static,
    {
        wrapped_if(&self.system, wanted).or_else(|| self.system.find_system(seal, wanted))
    }

    fn find_system_mut(&mut self, seal: Seal, wanted: TypeId) -> Option<&mut dyn Any>
    where
        Self: 'static,
    {
        if TypeId::of::<S>() == wanted {
            return wrapped_if_mut(&mut self.system, wanted);
        }
        self.system.find_system_mut(seal, wanted)
    }

    fn initialize(&mut self, contexts: &mut Contexts) {
        self.system.initialize(contexts.context_mut::<K>());
    }

    fn execute(&mut self, contexts: &mut Contexts) {
        self.system.execute(contexts.context_mut::<K>());
    }

    fn cleanup(&mut self, contexts: &mut Contexts) {
        self.system.cleanup(contexts.context_mut::<K>());
    }

    fn teardown(&mut self, contexts: &mut Contexts) {
        self.system.teardown(contexts.context_mut::<K>());
    }

    fn try_initialize(&mut self, contexts: &mut Contexts) -> SystemResult {
        self.system.try_initialize(contexts.context_mut::<K>())
    }

    fn try_execute(&mut self, contexts: &mut Contexts) -> SystemResult {
        self.system.try_execute(contexts.context_mut::<K>())
    }

    fn try_cleanup(&mut self, contexts: &mut Contexts) -> SystemResult {
        self.system.try_cleanup(contexts.context_mut::<K>())
    }

    fn try_teardown(&mut self, contexts: &mut Contexts) -> SystemResult {
        self.system.try_teardown(contexts.context_mut::<K>())
    }

    fn create_collectors(&mut self, contexts: &mut Contexts) {
        self.system.create_collectors(contexts.context_mut::<K>());
    }

    fn activate_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.system.activate_reactive_systems(contexts.context_mut::<K>());
    }

    fn deactivate_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.system.deactivate_reactive_systems(contexts.context_mut::<K>());
    }

    fn clear_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.system.clear_reactive_systems(contexts.context_mut::<K>());
    }

    fn timings(&self) -> Option<Timings<'_>> {
        self.system.timings()
    }
}

impl Feature<Contexts> {
    /// This feature with `system`, written for one [`Context`], appended to
    /// run on context `K`: short for `.with(InContext::new(context, system))`.
    ///
    /// ```
    /// use reactecs::prelude::*;
    /// struct Piece;
    /// reactecs::context!(Game);
    /// reactecs::component!(Game: Piece);
    ///
    /// struct Render;
    /// impl ReactiveSystem for Render {
    ///     fn trigger(&mut self, game: &mut Context) -> CollectorId {
    ///         game.add_collector(Matcher::all_of::<Piece>().added())
    ///     }
    /// }
    /// struct Fill;
    /// impl System for Fill {
    ///     fn try_initialize(&mut self, game: &mut Context) -> SystemResult {
    ///         game.create_entity_with(Piece)?;
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let mut contexts = Contexts::new();
    /// let mut frame = Feature::new("Frame").with_in(Game, Fill).with_in(Game, Reactive::new(Render));
    /// frame.try_initialize(&mut contexts)?;
    /// # Ok::<(), reactecs::system::SystemFailed>(())
    /// ```
    #[must_use]
    pub fn with_in<K: ContextKind>(self, context: K, system: impl System<Context> + Send + 'static) -> Self {
        self.with(InContext::new(context, system))
    }

    /// Appends `system`, written for one [`Context`], to run on context `K`:
    /// short for `.add(InContext::new(context, system))`.
    pub fn add_in<K: ContextKind>(&mut self, context: K, system: impl System<Context> + Send + 'static) -> &mut Self {
        self.add(InContext::new(context, system))
    }
}

impl Systems<Contexts> {
    /// This list with `system`, written for one [`Context`], appended to run
    /// on context `K` (see [`Feature::with_in`]).
    #[must_use]
    pub fn with_in<K: ContextKind>(self, context: K, system: impl System<Context> + Send + 'static) -> Self {
        self.with(InContext::new(context, system))
    }

    /// Appends `system`, written for one [`Context`], to run on context `K`
    /// (see [`Feature::add_in`]).
    pub fn add_in<K: ContextKind>(&mut self, context: K, system: impl System<Context> + Send + 'static) -> &mut Self {
        self.add(InContext::new(context, system))
    }
}
