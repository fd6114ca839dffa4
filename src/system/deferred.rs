//! Deferred systems: systems that read the context and record structural
//! changes into a command buffer, played back right after them.

use crate::command_buffer::CommandBuffer;
use crate::context::Context;
use crate::error::Error;
use crate::system::{Feature, System};
use crate::type_name::short_type_name;

/// A system that reads the context and records its changes into a
/// [`CommandBuffer`] instead of making them: it can destroy, create, add and
/// remove while iterating a query or a group, without holding
/// `&mut Context`. Wrap it in [`Deferred`] (or add it with
/// [`Feature::with_deferred`]) to get a [`System`].
///
/// `Deferred` plays the buffer back right after this system's
/// [`execute`](DeferredSystem::execute), and again right after its
/// [`cleanup`](DeferredSystem::cleanup), before the next system of the
/// feature runs: the next system sees the changes, with their events fired
/// (and collected by reactive systems) at that point.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// #[derive(Debug, PartialEq)] struct Health(u32);
/// #[derive(Debug, PartialEq)] struct Corpse;
/// reactecs::component!(Health, Corpse);
///
/// /// Replaces every entity out of health with a corpse.
/// struct Reap;
/// impl DeferredSystem for Reap {
///     fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
///         for (e, health) in game.query::<(Entity, &Health)>().iter() {
///             if health.0 == 0 {
///                 commands.destroy_entity(e);
///                 commands.create_entity_with(Corpse);
///             }
///         }
///     }
/// }
///
/// /// Runs after `Reap`'s commands were played back, and sees their effect.
/// struct Check;
/// impl System for Check {
///     fn execute(&mut self, game: &mut Context) {
///         assert_eq!(game.query::<&Corpse>().iter().count(), 1);
///     }
/// }
///
/// let mut game = Context::new();
/// game.create_entity_with(Health(0))?;
/// game.create_entity_with(Health(5))?;
/// let mut frame = Feature::new("Frame").with_deferred(Reap).with(Check);
/// frame.execute(&mut game);
/// assert_eq!(game.len(), 2);
/// assert_eq!(game.query::<&Corpse>().iter().count(), 1);
/// # Ok::<(), reactecs::Error>(())
/// ```
pub trait DeferredSystem {
    /// The name shown in timings and `Debug` output (as
    /// [`System::name`]: the type's name without its module path).
    fn name(&self) -> &str {
        short_type_name(std::any::type_name::<Self>())
    }

    /// Runs once, before the first frame, with the context itself (make
    /// groups and collectors here).
    fn initialize(&mut self, _context: &mut Context) {}

    /// Runs every frame: reads `context`, records changes into `commands`
    /// (empty when called), which are played back as soon as it returns.
    fn execute(&mut self, context: &Context, commands: &mut CommandBuffer);

    /// Runs every frame, after `execute` (see [`System::cleanup`]); what it
    /// records is played back as soon as it returns.
    fn cleanup(&mut self, _context: &Context, _commands: &mut CommandBuffer) {}

    /// Runs once, at the end, with the context itself.
    fn teardown(&mut self, _context: &mut Context) {}
}

/// Runs a [`DeferredSystem`] as a [`System`]: owns its [`CommandBuffer`],
/// and plays it back right after the system's `execute` and right after its
/// `cleanup`.
///
/// A playback error does not panic and does not stop the frame: the
/// commands that could be applied were, and the error is kept for
/// [`last_error`](Deferred::last_error). The buffer is reused frame after
/// frame, so it allocates nothing once it has held a frame's commands.
pub struct Deferred<S> {
    system: S,
    commands: CommandBuffer,
    last_error: Option<Error>,
}

/// The system's name, how many commands wait for playback, and the last
/// playback error: `Deferred { system: "Spawn", commands: 0, last_error: None }`.
impl<S: DeferredSystem> std::fmt::Debug for Deferred<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred")
            .field("system", &self.system.name())
            .field("commands", &self.commands.len())
            .field("last_error", &self.last_error)
            .finish()
    }
}

impl<S: DeferredSystem> Deferred<S> {
    /// Wraps `system`, with an empty buffer.
    pub fn new(system: S) -> Self {
        Deferred {
            system,
            commands: CommandBuffer::new(),
            last_error: None,
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

    /// The buffer, as the last playback left it: empty, with
    /// [`resolve`](CommandBuffer::resolve) telling which entity each
    /// placeholder became.
    pub fn commands(&self) -> &CommandBuffer {
        &self.commands
    }

    /// Why commands failed in the current frame: the error
    /// ([`Error::CommandsFailed`]) of the latest failed playback since
    /// `execute` last started (which clears it); `None` if every command
    /// recorded since was applied.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// use reactecs::system::Deferred;
    ///
    /// /// Destroys the entity it was given, every frame.
    /// struct DestroyTwice(Entity);
    /// impl DeferredSystem for DestroyTwice {
    ///     fn execute(&mut self, _game: &Context, commands: &mut CommandBuffer) {
    ///         commands.destroy_entity(self.0);
    ///     }
    /// }
    ///
    /// let mut game = Context::new();
    /// let e = game.create_entity();
    /// let mut system = Deferred::new(DestroyTwice(e));
    /// system.execute(&mut game);
    /// assert!(system.last_error().is_none());
    /// system.execute(&mut game); // `e` is stale by now
    /// let Some(Error::CommandsFailed { failures, .. }) = system.last_error() else {
    ///     panic!("the second destroy fails");
    /// };
    /// assert!(matches!(*failures[0].error, Error::StaleEntity { .. }));
    /// ```
    pub fn last_error(&self) -> Option<&Error> {
        self.last_error.as_ref()
    }

    /// Runs the system's `execute`, recording into the buffer (playback is
    /// the caller's: see [`Parallel`](crate::system::Parallel)).
    pub(crate) fn record_execute(&mut self, context: &Context) {
        self.last_error = None;
        self.system.execute(context, &mut self.commands);
    }

    /// Runs the system's `cleanup`, recording into the buffer.
    pub(crate) fn record_cleanup(&mut self, context: &Context) {
        self.system.cleanup(context, &mut self.commands);
    }

    /// Plays back what the system recorded, keeping a failure.
    pub(crate) fn play_back(&mut self, context: &mut Context) {
        if self.commands.is_empty() {
            return;
        }
        if let Err(error) = self.commands.playback(context) {
            self.last_error = Some(error);
        }
    }
}

impl<S: DeferredSystem> System<Context> for Deferred<S> {
    wrapper_methods!(find);

    fn initialize(&mut self, context: &mut Context) {
        self.system.initialize(context);
    }

    fn execute(&mut self, context: &mut Context) {
        self.record_execute(context);
        self.play_back(context);
    }

    fn cleanup(&mut self, context: &mut Context) {
        self.record_cleanup(context);
        self.play_back(context);
    }

    fn teardown(&mut self, context: &mut Context) {
        self.system.teardown(context);
    }
}

impl Feature<Context> {
    /// This feature with deferred `system` appended, wrapped in
    /// [`Deferred`]: its commands are played back right after its `execute`
    /// (and its `cleanup`), before the next system runs.
    #[must_use]
    pub fn with_deferred(self, system: impl DeferredSystem + Send + 'static) -> Self {
        self.with(Deferred::new(system))
    }
}
