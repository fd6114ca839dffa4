//! Systems: the code that runs every frame, composed in order and timed.
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
//! // Game             last       avg       min       max
//! //   Move       0.001 ms  0.001 ms  0.001 ms  0.001 ms
//! //   Physics    0.002 ms  0.002 ms  0.002 ms  0.002 ms
//! //     Collide  0.000 ms  0.000 ms  0.000 ms  0.000 ms
//!
//! let physics = frame.timings().get("Physics").unwrap();
//! assert_eq!(physics.execute().runs(), 1);
//! let collide = physics.feature().unwrap().get("Collide").unwrap();
//! assert_eq!(collide.execute().runs(), 1);
//! ```
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

use crate::Context;

mod deferred;
mod feature;
mod in_context;
mod multi_reactive;
mod reactive;
mod registry;
mod systems;
mod timings;

pub use deferred::{Deferred, DeferredSystem};
pub use feature::Feature;
pub use in_context::InContext;
pub use multi_reactive::{ContextEntity, MultiReactive, MultiReactiveSystem};
pub use reactive::{Reactive, ReactiveSystem};
#[doc(hidden)]
pub use registry::SystemRegistration;
pub use systems::{Systems, SystemsIter};
pub use timings::{PhaseStats, SystemTimings, Timings, TimingsIter};

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
}

/// `type_name` without the module path in front of the type's own name:
/// everything up to the last `::` before the first `<` is dropped.
pub(crate) fn short_type_name(full: &str) -> &str {
    let head = full.find('<').map_or(full, |generics| &full[..generics]);
    match head.rfind("::") {
        Some(separator) => &full[separator + 2..],
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_type_name_drops_the_module_path_before_generics() {
        assert_eq!(short_type_name("game::Move"), "Move");
        assert_eq!(short_type_name("Move"), "Move");
        assert_eq!(
            short_type_name("reactecs::system::Reactive<game::Render>"),
            "Reactive<game::Render>"
        );
        assert_eq!(
            short_type_name("a::b::Pair<x::A, y::B<z::C>>"),
            "Pair<x::A, y::B<z::C>>"
        );
    }
}
