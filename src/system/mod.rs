//! Systems: the code that runs every frame, composed in order, timed, and
//! allowed to fail.
//!
//! A system is a value implementing [`System`]. It has four phases:
//!
//! - [`initialize`](System::initialize): once, before the first frame (create
//!   groups, spawn the level, set unique components);
//! - [`execute`](System::execute): every frame, the system's work;
//! - [`cleanup`](System::cleanup): every frame, after every system of the frame
//!   has executed (destroy the entities marked for destruction, clear
//!   one-frame flags);
//! - [`teardown`](System::teardown): once, when the program is done.
//!
//! Three more methods switch reactive systems on and off and empty their
//! collected entities ([`activate_reactive_systems`](System::activate_reactive_systems),
//! [`deactivate_reactive_systems`](System::deactivate_reactive_systems),
//! [`clear_reactive_systems`](System::clear_reactive_systems)); containers
//! pass them to their children, and reactive systems act on them.
//!
//! Every method has a default that does nothing, so a system writes only the
//! phases it needs. All four phases live on one trait rather than on one trait
//! each (as Entitas' `IExecuteSystem`, `ICleanupSystem`, ... do) because Rust
//! has no cheap way to ask a `Box<dyn System>` whether it is "also an execute
//! system": a container would have to keep one list per phase, or downcast.
//! With default methods, a phase a system does not use costs one virtual call
//! to an empty function per frame.
//!
//! Systems compose: [`Systems`] runs a list of systems in insertion order (and
//! is itself a system, so lists nest), and [`Feature`] is a named list that
//! also measures how long each child takes. A system does not have to run on a
//! [`Context`]: `System<W>` is generic over the "world" `W` it
//! is given, any `'static` type; `W` defaults to `Context`.
//!
//! # A frame
//! ```
//! use reactecs::prelude::*;
//! struct Position(f32);
//! struct Velocity(f32);
//! reactecs::component!(Position, Velocity);
//!
//! #[derive(Default)]
//! struct Spawn;
//! impl System for Spawn {
//!     fn initialize(&mut self, game: &mut Context) {
//!         game.create_entity_with((Position(0.0), Velocity(1.5))).expect("a new entity");
//!     }
//! }
//!
//! #[derive(Default)]
//! struct Move;
//! impl System for Move {
//!     fn execute(&mut self, game: &mut Context) {
//!         for (pos, vel) in game.query_mut::<(&mut Position, &Velocity)>().expect("no aliasing").iter() {
//!             pos.0 += vel.0;
//!         }
//!     }
//! }
//!
//! let mut game = Context::new();
//! let mut frame = Feature::new("Game").with(Spawn).with(Move);
//! frame.initialize(&mut game);
//! for _ in 0..2 {
//!     frame.execute(&mut game);
//!     frame.cleanup(&mut game);
//! }
//! frame.teardown(&mut game);
//! assert_eq!(game.query::<&Position>().iter().map(|p| p.0).sum::<f32>(), 3.0);
//! ```
//!
//! # Reaching a system again
//! A system added to a feature stays reachable by its type:
//! [`Feature::system`] and [`Feature::system_mut`] (the same on [`Systems`])
//! give the first system of that type, searched depth first in the order
//! the systems run, through nested features and through the wrappers
//! ([`Reactive`], [`MultiReactive`], [`Deferred`], [`InContext`]): a combat
//! log or a counter kept in a system is read after the frame, without
//! sharing it through an `Arc<Mutex<_>>`.
//!
//! # Timings
//! A [`Feature`] times the `execute` and `cleanup` of each child with
//! [`std::time::Instant`] (on by default; [`Feature::set_timing`] switches it
//! off). [`Feature::timings`] gives a read-only [`Timings`] view: per child,
//! the last, average, minimum and maximum duration over a window of recent
//! frames ([`Feature::with_timing_window`], 60 by default) and the total
//! number of runs. Features nested in a feature appear as subtrees. Printing
//! the view (`Display`) gives an aligned table, one line per system:
//!
//! ```
//! # use reactecs::prelude::*;
//! # #[derive(Default)] struct Move;
//! # impl System for Move {}
//! # #[derive(Default)] struct Collide;
//! # impl System for Collide {}
//! # let mut game = Context::new();
//! let mut frame = Feature::new("Game")
//!     .with(Move)
//!     .with(Feature::new("Physics").with(Collide));
//! frame.execute(&mut game);
//! println!("{}", frame.timings());
//! // Game            last      avg      min      max
//! //   Move        850 ns   850 ns   850 ns   850 ns
//! //   Physics    2.31 us  2.31 us  2.31 us  2.31 us
//! //     Collide   412 ns   412 ns   412 ns   412 ns
//!
//! let physics = frame.timings().get("Physics").unwrap();
//! assert_eq!(physics.execute().runs(), 1);
//! let collide = physics.feature().unwrap().get("Collide").unwrap();
//! assert_eq!(collide.execute().runs(), 1);
//! ```
//!
//! Each figure is printed in the unit that fits it (`ns`, `us`, `ms`, `s`).
//!
//! With the `tracing` cargo feature, [`Feature`] and [`Systems`] also run
//! every phase of each child (`initialize`, `execute`, `cleanup`,
//! `teardown`) inside a `tracing` span named `system`, with the fields
//! `name` (the child's [`name`](System::name)) and `phase`; spans of the
//! children of a nested feature nest in its span. Any `tracing` subscriber
//! (a profiler, `tracing-subscriber`'s timing output, Tracy) then shows the
//! frame. Without the feature, no span code is compiled in.
//!
//! # When collection starts
//! A reactive system ([`Reactive`], [`MultiReactive`]) collects the changes
//! made after its collector exists. The collector is made at the first of:
//!
//! 1. its construction with the context: [`Reactive::in_context`],
//!    [`MultiReactive::in_contexts`] (as Entitas makes a collector in the
//!    system's constructor), so even changes made before the feature runs
//!    are collected;
//! 2. the start of the `initialize` of the [`Feature`] or [`Systems`] it was
//!    added to (at any depth): before running any child's `initialize`, a
//!    container makes the collectors of every reactive system in its tree
//!    ([`System::create_collectors`]). So whatever a system does in its
//!    `initialize` (filling the board, spawning the level) is collected for
//!    every reactive system of the feature, whether it comes before or after
//!    the filling system;
//! 3. the system's own `initialize` or first `execute`, when it runs
//!    outside a container.
//!
//! A collector starts empty: entities that already match are not collected
//! until they change (as in Entitas).
//!
//! # Fallible systems
//! Each phase has a `try_` twin that returns a [`SystemResult`]
//! ([`try_initialize`](System::try_initialize),
//! [`try_execute`](System::try_execute), [`try_cleanup`](System::try_cleanup),
//! [`try_teardown`](System::try_teardown); the same for
//! [`ReactiveSystem`], on a context or on [`Contexts`](crate::Contexts)). A system that can fail
//! implements the `try_` phase instead of the plain one and uses `?` on
//! context calls; a system that cannot keeps writing the plain phase,
//! which the default `try_` phase runs. Containers always call the `try_`
//! phases.
//!
//! [`Feature::try_execute`] (and its siblings, and those of [`Systems`])
//! returns a [`SystemFailed`] for the first child that fails: the system's
//! name (as in timings), the [`Phase`], the names of the features around
//! it, and its error. The rest of the phase does not run: later systems
//! usually build on earlier ones (render after move), so running them on a
//! half-done frame would bury the first error under the ones it causes, as
//! an exception in an Entitas frame stops it. The caller chooses what comes
//! next: report and stop, or run `cleanup` and the next frame. `teardown`
//! is the exception: every child's teardown runs, and the first failure is
//! returned, so each system still lets go of what it holds.
//!
//! A failing system leaves every context consistent: each context call is
//! atomic (one that returns an error changed nothing), so after a system
//! stops half-way its earlier calls have taken effect and nothing else has;
//! nothing is rolled back. A failing reactive system's entities of that run
//! are released and not collected again.
//!
//! The plain phases of a container ([`System::execute`] on a [`Feature`],
//! ...) cannot return the error: they panic with the [`SystemFailed`]
//! message. Programs with fallible systems drive their root feature with the
//! `try_` phases.
//!
//! ```
//! use reactecs::prelude::*;
//! use reactecs::system::Phase;
//! #[derive(Debug)] struct Piece;
//! #[derive(Debug)] struct Falling;
//! reactecs::component!(Piece, Falling);
//!
//! /// Starts the given pieces falling; fails on one that already falls.
//! struct Drop(Vec<Entity>);
//! impl System for Drop {
//!     fn try_execute(&mut self, game: &mut Context) -> SystemResult {
//!         for &e in &self.0 {
//!             game.add(e, Falling)?;
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let mut game = Context::with_name("Game");
//! let a = game.create_entity_with(Piece)?;
//! let b = game.create_entity_with((Piece, Falling))?;
//! let mut frame = Feature::new("Board").with(Drop(vec![a, b]));
//! let failure = frame.try_execute(&mut game).unwrap_err();
//! assert_eq!((failure.system(), failure.phase()), ("Drop", Phase::Execute));
//! assert!(matches!(failure.error().downcast_ref(), Some(Error::ComponentAlreadyPresent { .. })));
//! assert!(game.has::<Falling>(a));       // done before the failure: kept
//! game.check_invariants()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Systems of one context among several
//! A `Feature<Contexts>` runs systems written for one [`Context`] with
//! [`Feature::with_in`] (`.with_in(Game, Move)`, wrapping them in
//! [`InContext`]); a system that works across contexts borrows several at
//! once with [`Contexts::get_many_mut`](crate::Contexts::get_many_mut).
//!
//! # Deferred systems
//! A [`DeferredSystem`] reads the context (`&Context`) and records its
//! structural changes into a [`CommandBuffer`](crate::CommandBuffer);
//! wrapped in [`Deferred`] (or added with [`Feature::with_deferred`]), its
//! buffer is played back right after its `execute` and right after its
//! `cleanup`, so the next system sees the changes.
//!
//! # Registered systems
//! [`feature_system!`](crate::feature_system!) declares, anywhere at item
//! level, that a feature contains a system;
//! [`Feature::with_registered`] gathers those declarations (through
//! `inventory`), so a feature can be assembled from systems spread over a
//! program's modules.

use std::any::{Any, TypeId};

use crate::context::Context;
use crate::type_name::short_type_name;

/// The [`System`] methods a wrapper of one system (in its field `system`)
/// writes the same way, written once. `find`: its name and
/// [`find_system`](System::find_system) are the wrapped system's. `phases
/// W`: its plain phases on world `W` run its `try_` ones, and panic with
/// the error (see [`run_or_panic`]).
macro_rules! wrapper_methods {
    (find) => {
        fn name(&self) -> &str {
            self.system.name()
        }

        fn find_system(&self, _seal: crate::system::Seal, wanted: std::any::TypeId) -> Option<&dyn std::any::Any>
        where
            Self: 'static,
        {
            crate::system::wrapped_if(&self.system, wanted)
        }

        fn find_system_mut(
            &mut self,
            _seal: crate::system::Seal,
            wanted: std::any::TypeId,
        ) -> Option<&mut dyn std::any::Any>
        where
            Self: 'static,
        {
            crate::system::wrapped_if_mut(&mut self.system, wanted)
        }
    };
    (phases $world:ty) => {
        fn initialize(&mut self, world: &mut $world) {
            crate::system::run_or_panic(self, crate::system::Phase::Initialize, world);
        }

        fn execute(&mut self, world: &mut $world) {
            crate::system::run_or_panic(self, crate::system::Phase::Execute, world);
        }

        fn cleanup(&mut self, world: &mut $world) {
            crate::system::run_or_panic(self, crate::system::Phase::Cleanup, world);
        }

        fn teardown(&mut self, world: &mut $world) {
            crate::system::run_or_panic(self, crate::system::Phase::Teardown, world);
        }
    };
}

mod deferred;
mod failure;
mod feature;
mod in_context;
mod multi_reactive;
mod parallel;
mod phase;
mod reactive;
mod registry;
mod systems;
mod timings;

pub use deferred::{Deferred, DeferredSystem};
pub(crate) use failure::or_panic;
pub use failure::{SystemFailed, SystemResult};
pub use feature::Feature;
pub use in_context::InContext;
pub use multi_reactive::{ContextEntity, MultiReactive};
pub use parallel::Parallel;
pub use phase::Phase;
pub use reactive::{Reactive, ReactiveSystem, ReactiveWorld};
#[doc(hidden)]
pub use registry::SystemRegistration;
pub use systems::{Systems, SystemsIter};
pub use timings::{PhaseStats, SystemTimings, Timings, TimingsIter};

/// The argument that seals [`System::find_system`] and
/// [`System::find_system_mut`]: only this crate can make one, so only its
/// wrappers and containers implement those methods.
mod sealed {
    /// Made only inside [`crate::system`].
    #[derive(Clone, Copy, Debug)]
    pub struct Seal(pub(in crate::system) ());

    /// Implemented by the worlds a reactive system runs on only.
    pub trait SealedWorld {}
}
pub(crate) use sealed::{Seal, SealedWorld};

/// A [`System`] that can be told apart by its type: every
/// `System<W> + 'static` is one (a blanket implementation; there is nothing
/// to implement). [`Systems`] and [`Feature`] hold their children as these,
/// for [`Feature::system`].
#[doc(hidden)]
pub trait AnySystem<W>: System<W> {
    /// The system, as `Any`.
    fn as_any(&self) -> &dyn Any;
    /// The system, as `Any`, mutably.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<W, S: System<W> + 'static> AnySystem<W> for S {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A system: code run on a world `W` in four phases (see the
/// [module docs](self)).
///
/// Every method has an empty default; implement the phases you need. `W`, the
/// world a system works on, defaults to [`Context`].
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// struct Health(u32);
/// reactecs::component!(Health);
///
/// /// Heals every entity by one point per frame.
/// struct Regenerate;
/// impl System for Regenerate {
///     fn execute(&mut self, game: &mut Context) {
///         for health in game.query_mut::<&mut Health>().expect("no aliasing").iter() {
///             health.0 += 1;
///         }
///     }
/// }
///
/// let mut game = Context::new();
/// let e = game.create_entity_with((Health(1),))?;
/// let mut regenerate = Regenerate;
/// assert_eq!(regenerate.name(), "Regenerate");
/// regenerate.execute(&mut game);
/// assert_eq!(game.get::<Health>(e)?.0, 2);
/// # Ok::<(), reactecs::Error>(())
/// ```
///
/// A system can work on any world, e.g. a struct of several contexts:
/// ```
/// use reactecs::prelude::*;
/// struct Worlds { game: Context, ui: Context }
///
/// struct Mirror;
/// impl System<Worlds> for Mirror {
///     fn execute(&mut self, worlds: &mut Worlds) {
///         while worlds.ui.len() < worlds.game.len() {
///             worlds.ui.create_entity();
///         }
///     }
/// }
///
/// let mut worlds = Worlds { game: Context::new(), ui: Context::new() };
/// worlds.game.create_entity();
/// let mut frame = Systems::new().with(Mirror);
/// frame.execute(&mut worlds);
/// assert_eq!(worlds.ui.len(), 1);
/// ```
pub trait System<W = Context> {
    /// The name shown in timings and `Debug` output.
    ///
    /// Defaults to the type's name without its module path: `game::Move` is
    /// `Move`, and `reactecs::system::Feature<game::World>` is
    /// `Feature<game::World>` (only the path before the first `<` is trimmed).
    fn name(&self) -> &str {
        short_type_name(std::any::type_name::<Self>())
    }

    /// Runs once, before the first frame.
    fn initialize(&mut self, _world: &mut W) {}

    /// Runs every frame.
    fn execute(&mut self, _world: &mut W) {}

    /// Runs every frame, after `execute` (of every system of the frame, when
    /// the frame calls `execute` then `cleanup` on its root).
    fn cleanup(&mut self, _world: &mut W) {}

    /// Runs once, at the end.
    fn teardown(&mut self, _world: &mut W) {}

    /// `initialize`, for a system that can fail: return an error (`?` on a
    /// context call) and the containing [`Feature`] reports it, naming this
    /// system (see [Fallible systems](self#fallible-systems)).
    ///
    /// Containers call this method, not `initialize`; the default runs
    /// [`initialize`](System::initialize) and succeeds. Implement either
    /// one. A system that implements only this method does nothing when its
    /// plain `initialize` is called.
    ///
    /// # Errors
    /// Whatever error the system returns.
    fn try_initialize(&mut self, world: &mut W) -> SystemResult {
        self.initialize(world);
        Ok(())
    }

    /// `execute`, for a system that can fail; see
    /// [`try_initialize`](System::try_initialize).
    ///
    /// # Errors
    /// Whatever error the system returns.
    fn try_execute(&mut self, world: &mut W) -> SystemResult {
        self.execute(world);
        Ok(())
    }

    /// `cleanup`, for a system that can fail; see
    /// [`try_initialize`](System::try_initialize).
    ///
    /// # Errors
    /// Whatever error the system returns.
    fn try_cleanup(&mut self, world: &mut W) -> SystemResult {
        self.cleanup(world);
        Ok(())
    }

    /// `teardown`, for a system that can fail; see
    /// [`try_initialize`](System::try_initialize).
    ///
    /// # Errors
    /// Whatever error the system returns.
    fn try_teardown(&mut self, world: &mut W) -> SystemResult {
        self.teardown(world);
        Ok(())
    }

    /// Makes the collectors of reactive systems, so they collect from now
    /// on. [`Feature`] and [`Systems`] call it on every child (depth first)
    /// at the start of their `initialize`, before any child's `initialize`
    /// runs; containers pass it on, [`Reactive`] and [`MultiReactive`] make
    /// their collectors if they have none. Calling it again does nothing.
    /// See [when collection starts](self#when-collection-starts).
    fn create_collectors(&mut self, _world: &mut W) {}

    /// Switches reactive systems on: they collect changes again.
    fn activate_reactive_systems(&mut self, _world: &mut W) {}

    /// Switches reactive systems off: they stop collecting changes (and drop
    /// what they collected).
    fn deactivate_reactive_systems(&mut self, _world: &mut W) {}

    /// Drops what reactive systems have collected, keeping them on.
    fn clear_reactive_systems(&mut self, _world: &mut W) {}

    /// The timings of a [`Feature`], so a feature nested in another shows up
    /// as a subtree of its timings; `None` for every other system.
    fn timings(&self) -> Option<Timings<'_>> {
        None
    }

    /// The first system of type `wanted` inside this one, depth first, in
    /// order; `None` for a plain system. [`Feature`] and [`Systems`] look
    /// through their children, the wrappers ([`Reactive`], [`Deferred`],
    /// [`InContext`], [`MultiReactive`]) at the system they wrap. Sealed:
    /// only this crate's types implement it. Use [`Feature::system`].
    #[doc(hidden)]
    fn find_system(&self, _seal: Seal, _wanted: TypeId) -> Option<&dyn Any>
    where
        Self: 'static,
    {
        None
    }

    /// [`find_system`](System::find_system), mutably. Use
    /// [`Feature::system_mut`].
    #[doc(hidden)]
    fn find_system_mut(&mut self, _seal: Seal, _wanted: TypeId) -> Option<&mut dyn Any>
    where
        Self: 'static,
    {
        None
    }
}

/// A boxed system is a system, so boxed systems nest.
impl<W, S: System<W> + ?Sized> System<W> for Box<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn initialize(&mut self, world: &mut W) {
        (**self).initialize(world);
    }

    fn execute(&mut self, world: &mut W) {
        (**self).execute(world);
    }

    fn cleanup(&mut self, world: &mut W) {
        (**self).cleanup(world);
    }

    fn teardown(&mut self, world: &mut W) {
        (**self).teardown(world);
    }

    fn try_initialize(&mut self, world: &mut W) -> SystemResult {
        (**self).try_initialize(world)
    }

    fn try_execute(&mut self, world: &mut W) -> SystemResult {
        (**self).try_execute(world)
    }

    fn try_cleanup(&mut self, world: &mut W) -> SystemResult {
        (**self).try_cleanup(world)
    }

    fn try_teardown(&mut self, world: &mut W) -> SystemResult {
        (**self).try_teardown(world)
    }

    fn create_collectors(&mut self, world: &mut W) {
        (**self).create_collectors(world);
    }

    fn activate_reactive_systems(&mut self, world: &mut W) {
        (**self).activate_reactive_systems(world);
    }

    fn deactivate_reactive_systems(&mut self, world: &mut W) {
        (**self).deactivate_reactive_systems(world);
    }

    fn clear_reactive_systems(&mut self, world: &mut W) {
        (**self).clear_reactive_systems(world);
    }

    fn timings(&self) -> Option<Timings<'_>> {
        (**self).timings()
    }

    fn find_system(&self, seal: Seal, wanted: TypeId) -> Option<&dyn Any>
    where
        Self: 'static,
    {
        (**self).find_system(seal, wanted)
    }

    fn find_system_mut(&mut self, seal: Seal, wanted: TypeId) -> Option<&mut dyn Any>
    where
        Self: 'static,
    {
        (**self).find_system_mut(seal, wanted)
    }
}

/// Runs `system`'s `try_` method of `phase`, and panics with the error it
/// returns, naming the system: the plain phases of the wrappers whose
/// systems can fail.
///
/// # Panics
/// With the message of the system's error, if it returns one.
#[track_caller]
fn run_or_panic<W, S: System<W>>(system: &mut S, phase: Phase, world: &mut W) {
    let result = match phase {
        Phase::Initialize => system.try_initialize(world),
        Phase::Execute => system.try_execute(world),
        Phase::Cleanup => system.try_cleanup(world),
        Phase::Teardown => system.try_teardown(world),
    };
    or_panic(result.map_err(|error| SystemFailed::new(system.name(), phase, error)));
}

/// `wrapped` if it is of type `wanted` (for the wrappers'
/// [`System::find_system`]).
fn wrapped_if<S: 'static>(wrapped: &S, wanted: TypeId) -> Option<&dyn Any> {
    (TypeId::of::<S>() == wanted).then_some(wrapped as &dyn Any)
}

/// `wrapped` if it is of type `wanted`, mutably.
fn wrapped_if_mut<S: 'static>(wrapped: &mut S, wanted: TypeId) -> Option<&mut dyn Any> {
    (TypeId::of::<S>() == wanted).then_some(wrapped as &mut dyn Any)
}
