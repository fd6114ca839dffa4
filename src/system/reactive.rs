//! Reactive systems: run only for the entities that changed.

use crate::aerc::Owner;
use crate::collector::CollectorId;
use crate::context::Context;
use crate::entity::Entity;
use crate::error::Error;
use crate::system::{SealedWorld, System, SystemResult};
use crate::type_name::short_type_name;

/// A system that runs for the entities a collector gathered since its last
/// run: Entitas' `ReactiveSystem`. Wrap it in [`Reactive`] to get a
/// [`System`].
///
/// `W`, the world it runs on, defaults to [`Context`]. A
/// `ReactiveSystem<Contexts>` is Entitas' `MultiReactiveSystem`: its
/// collectors live in several contexts of a [`Contexts`](crate::Contexts),
/// and [`MultiReactive`](super::MultiReactive) runs it, every collector
/// drained into one list, collector by collector.
///
/// Each frame, [`Reactive`] takes the collector's entities (so changes made
/// during `execute` are collected for the next run), keeps those that are
/// still enabled and pass [`filter`](ReactiveSystem::filter), and calls
/// [`execute`](ReactiveSystem::execute) with them, if there are any. The
/// entities are retained during `execute` and released after: one destroyed
/// meanwhile is disabled, not stale, and its slot is not reused until then.
///
/// # Example
/// ```
/// use std::sync::{Arc, Mutex};
/// use reactecs::prelude::*;
/// use reactecs::system::{Reactive, ReactiveSystem};
/// #[derive(Clone, Copy, Debug, PartialEq)] struct Position(f32);
/// reactecs::component!(Position);
///
/// struct Render(Arc<Mutex<Vec<f32>>>);
/// impl ReactiveSystem for Render {
///     fn trigger(&mut self, game: &mut Context) -> CollectorId {
///         game.add_collector(Matcher::all_of::<Position>().added())
///     }
///     fn execute(&mut self, game: &mut Context, moved: &[Entity]) {
///         for &e in moved {
///             self.0.lock().unwrap().push(game.get::<Position>(e).unwrap().0);
///         }
///     }
/// }
///
/// let drawn = Arc::new(Mutex::new(Vec::new()));
/// let mut game = Context::new();
/// let mut render = Reactive::in_context(&mut game, Render(drawn.clone())); // collects from now on
/// let e = game.create_entity_with(Position(0.0))?;
/// render.execute(&mut game);                    // runs for `e`
/// render.execute(&mut game);                    // nothing changed: does not run
/// game.replace(e, Position(2.0))?;
/// render.execute(&mut game);                    // runs for `e` again
/// assert_eq!(*drawn.lock().unwrap(), [0.0, 2.0]);
/// # Ok::<(), reactecs::Error>(())
/// ```
pub trait ReactiveSystem<W: ReactiveWorld = Context> {
    /// Makes the collector this system drains (called once: at
    /// [`Reactive::in_context`], or when the containing feature starts its
    /// `initialize`, or at the system's own `initialize` or first `execute`,
    /// whichever comes first; see
    /// [when collection starts](crate::system#when-collection-starts)).
    /// Usually `context.add_collector(Matcher::all_of::<T>().added())`.
    ///
    /// On [`Contexts`](crate::Contexts), the collectors, in any of its
    /// contexts ([`MultiReactive::in_contexts`](super::MultiReactive::in_contexts)
    /// calls it at construction).
    fn trigger(&mut self, world: &mut W) -> W::Collectors;

    /// Whether to execute for `entity` of `context` (default: yes). Called
    /// at the start of each run, for every collected entity that is
    /// enabled; for destroyed ones too when the trigger collects removals (a
    /// `removed()` or `added_or_removed()` trigger, as Entitas hands them to
    /// its filter) or
    /// [`include_destroyed`](ReactiveSystem::include_destroyed) says so. To
    /// leave destroyed entities out there, filter with
    /// [`Aerc::is_enabled`](crate::Aerc::is_enabled).
    fn filter(&self, context: &Context, entity: Entity) -> bool {
        let _ = (context, entity);
        true
    }

    /// Whether entities destroyed since they were collected go to
    /// [`filter`](ReactiveSystem::filter) (and `execute`) even when the
    /// trigger does not collect removals (default: no, they are dropped: an
    /// `added()` or `updated()` system is not handed entities that lost
    /// every component). A trigger that collects removals hands them over
    /// whatever this says; their components are gone, but a collector made
    /// with [`keep_removed`](crate::CollectorSpec::keep_removed) still has
    /// the removed values.
    fn include_destroyed(&self) -> bool {
        false
    }

    /// Runs for the collected entities that passed the filter, in the order
    /// they were first collected (on [`Contexts`](crate::Contexts): the first
    /// collector's, then the second's, and so on). Not called when there are
    /// none.
    ///
    /// Implement this or [`try_execute`](ReactiveSystem::try_execute) (the
    /// default does nothing).
    fn execute(&mut self, world: &mut W, entities: &[W::Entity]) {
        let _ = (world, entities);
    }

    /// `execute`, for a system that can fail: [`Reactive`] calls this
    /// method, whose default runs [`execute`](ReactiveSystem::execute) and
    /// succeeds. On an error, the entities of this run are released all the
    /// same and not collected again: the error goes to the caller (see
    /// [`System::try_execute`]).
    ///
    /// # Errors
    /// Whatever error the system returns.
    fn try_execute(&mut self, world: &mut W, entities: &[W::Entity]) -> SystemResult {
        self.execute(world, entities);
        Ok(())
    }

    /// Runs once before the first frame, after the collector is made.
    fn initialize(&mut self, world: &mut W) {
        let _ = world;
    }

    /// `initialize`, for a system that can fail (the default runs
    /// [`initialize`](ReactiveSystem::initialize) and succeeds).
    ///
    /// # Errors
    /// Whatever error the system returns.
    fn try_initialize(&mut self, world: &mut W) -> SystemResult {
        self.initialize(world);
        Ok(())
    }

    /// Runs every frame after every system's `execute`.
    fn cleanup(&mut self, world: &mut W) {
        let _ = world;
    }

    /// `cleanup`, for a system that can fail (the default runs
    /// [`cleanup`](ReactiveSystem::cleanup) and succeeds).
    ///
    /// # Errors
    /// Whatever error the system returns.
    fn try_cleanup(&mut self, world: &mut W) -> SystemResult {
        self.cleanup(world);
        Ok(())
    }

    /// Runs once at the end.
    fn teardown(&mut self, world: &mut W) {
        let _ = world;
    }

    /// `teardown`, for a system that can fail (the default runs
    /// [`teardown`](ReactiveSystem::teardown) and succeeds). The collector is
    /// removed even when it fails.
    ///
    /// # Errors
    /// Whatever error the system returns.
    fn try_teardown(&mut self, world: &mut W) -> SystemResult {
        self.teardown(world);
        Ok(())
    }

    /// The name shown in timings (default: the type's name).
    fn name(&self) -> &str {
        short_type_name(std::any::type_name::<Self>())
    }
}

/// What a [`ReactiveSystem`] runs on: a [`Context`] (run by [`Reactive`],
/// its one collector lives there) or [`Contexts`](crate::Contexts) (run by
/// [`MultiReactive`](super::MultiReactive), its collectors live in any of
/// them). Sealed: implemented for these two only.
pub trait ReactiveWorld: SealedWorld {
    /// What [`trigger`](ReactiveSystem::trigger) makes: a [`CollectorId`]
    /// on a `Context`, a `Vec<CollectorId>` on `Contexts`.
    type Collectors;
    /// What [`execute`](ReactiveSystem::execute) is handed: an [`Entity`]
    /// on a `Context`, a [`ContextEntity`](super::ContextEntity) (the entity
    /// and its context) on `Contexts`.
    type Entity;
}

impl SealedWorld for Context {}

impl ReactiveWorld for Context {
    type Collectors = CollectorId;
    type Entity = Entity;
}

/// Runs a [`ReactiveSystem`] as a [`System`] of a [`Context`]: owns the
/// system's collector id, the buffer of entities being executed (reused, so
/// a steady frame allocates nothing), and the [`Owner`] of their retains.
///
/// The collector belongs to the context it was made in (see
/// [`in_context`](Reactive::in_context) and
/// [when collection starts](crate::system#when-collection-starts)); on
/// another context the system does nothing. `teardown` removes the collector
/// (releasing what it held); a later run makes a new one. A collector
/// removed otherwise ([`CollectorMut::remove`](crate::CollectorMut::remove)) makes the next run fail
/// with [`Error::UnknownCollector`] (the changes it held are gone); the run
/// after that makes a new collector. Entities a
/// panicking `filter` or `execute` left retained are released by the next
/// `execute`, `teardown` or switch (`activate_reactive_systems`, ...).
pub struct Reactive<S> {
    system: S,
    collector: Option<CollectorId>,
    owner: Owner,
    buffer: Vec<Entity>,
}

/// The system's name and its collector: `Reactive { system: "Render",
/// collector: Some(CollectorId { .. }) }`.
impl<S: ReactiveSystem> std::fmt::Debug for Reactive<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reactive")
            .field("system", &self.system.name())
            .field("collector", &self.collector)
            .finish()
    }
}

impl<S: ReactiveSystem> Reactive<S> {
    /// Wraps `system`. Its collector is made when the feature (or
    /// [`Systems`](super::Systems)) it is added to starts its `initialize`,
    /// before any system of it is initialized; run on its own, at its
    /// `initialize` (or first `execute`). To collect from this moment on, use
    /// [`in_context`](Self::in_context).
    pub fn new(system: S) -> Self {
        Reactive {
            system,
            collector: None,
            owner: Owner::internal(),
            buffer: Vec::new(),
        }
    }

    /// Wraps `system` and makes its collector in `context` now, as Entitas
    /// does in a reactive system's constructor: every change from here on
    /// is collected, including those made before the system is added to a
    /// feature or initialized.
    ///
    /// ```
    /// use reactecs::prelude::*;
    /// struct Piece;
    /// reactecs::component!(Piece);
    ///
    /// struct Render;
    /// impl ReactiveSystem for Render {
    ///     fn trigger(&mut self, game: &mut Context) -> CollectorId {
    ///         game.add_collector(Matcher::all_of::<Piece>().added())
    ///     }
    /// }
    ///
    /// let mut game = Context::new();
    /// let render = Reactive::in_context(&mut game, Render);
    /// let e = game.create_entity_with(Piece)?; // before any feature runs
    /// let collector = render.collector().expect("made at construction");
    /// assert_eq!(game.collector(collector)?.entities(), [e]);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn in_context(context: &mut Context, system: S) -> Self {
        let mut reactive = Reactive::new(system);
        reactive.collector_in(context);
        reactive
    }

    /// The wrapped system.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// The wrapped system, mutably.
    pub fn system_mut(&mut self) -> &mut S {
        &mut self.system
    }

    /// The collector, once made.
    pub fn collector(&self) -> Option<CollectorId> {
        self.collector
    }

    /// The owner of the retains held while executing.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// The collector, made in `context` if there is none yet; `None` if it
    /// lives in another context (then the system does nothing here).
    fn collector_in(&mut self, context: &mut Context) -> Option<CollectorId> {
        let id = match self.collector {
            Some(id) => id,
            None => *self.collector.insert(self.system.trigger(context)),
        };
        (id.context() == context.id()).then_some(id)
    }

    /// Releases what is left retained (after a panic in `filter` or
    /// `execute`), then applies `f` to the collector; forgets an id the
    /// context no longer knows (it was removed), so the next run makes a new
    /// collector.
    fn with_collector(
        &mut self,
        context: &mut Context,
        f: impl FnOnce(&mut Context, CollectorId) -> Result<(), Error>,
    ) {
        let Some(id) = self.collector_in(context) else {
            return;
        };
        context.release_all(&mut self.buffer);
        if let Err(Error::UnknownCollector { .. }) = f(context, id) {
            self.collector = None;
        }
    }
}

/// The plain phases run the `try_` ones.
///
/// # Panics
/// The plain phases panic with the message of the system's error, if it
/// returns one; call the `try_` phases (or run it in a
/// [`Feature`](super::Feature)'s) to get the error instead.
impl<S: ReactiveSystem> System<Context> for Reactive<S> {
    wrapper_methods!(find);
    wrapper_methods!(phases Context);

    fn try_initialize(&mut self, context: &mut Context) -> SystemResult {
        self.collector_in(context);
        self.system.try_initialize(context)
    }

    fn try_execute(&mut self, context: &mut Context) -> SystemResult {
        let Some(id) = self.collector_in(context) else {
            return Ok(());
        };
        // What a panicking `filter` or `execute` left retained goes first.
        context.release_all(&mut self.buffer);
        let Reactive {
            system, owner, buffer, ..
        } = self;
        let include_destroyed = system.include_destroyed();
        let drained = context.drain_collector(id, *owner, include_destroyed, buffer, |context, entity| {
            system.filter(context, entity)
        });
        // A collector removed behind the system's back is an error of this
        // run; the next run makes a new one.
        if let Err(error) = drained {
            self.collector = None;
            return Err(error.into());
        }
        let mut result = Ok(());
        if !self.buffer.is_empty() {
            result = self.system.try_execute(context, &self.buffer);
            context.release_all(&mut self.buffer);
        }
        // Unknown only if `execute` removed the collector.
        if let Err(error) = context.finish_batch(id) {
            self.collector = None;
            result = result.and(Err(error.into()));
        }
        result
    }

    fn try_cleanup(&mut self, context: &mut Context) -> SystemResult {
        self.system.try_cleanup(context)
    }

    fn try_teardown(&mut self, context: &mut Context) -> SystemResult {
        let result = self.system.try_teardown(context);
        self.with_collector(context, Context::remove_collector);
        if self.collector.is_some_and(|id| id.context() == context.id()) {
            self.collector = None;
        }
        result
    }

    fn create_collectors(&mut self, context: &mut Context) {
        self.collector_in(context);
    }

    fn activate_reactive_systems(&mut self, context: &mut Context) {
        self.with_collector(context, Context::activate_collector);
    }

    fn deactivate_reactive_systems(&mut self, context: &mut Context) {
        self.with_collector(context, Context::deactivate_collector);
    }

    fn clear_reactive_systems(&mut self, context: &mut Context) {
        self.with_collector(context, Context::clear_collector);
    }
}
