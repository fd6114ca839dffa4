//! `Feature`: a named list of systems that times each child.

use std::any::{Any, TypeId};
use std::fmt;

use super::phase::container_phases;
use super::registry;
use super::systems::{Systems, SystemsIter};
use super::timings::{PhaseStats, SystemTimings, TimedChildren, Timings};
use super::{AnySystem, Phase, Seal, System, SystemFailed};
use crate::context::Context;

/// The timing window when none is given: 60 frames (a second at 60 fps).
pub(super) const DEFAULT_WINDOW: usize = 60;

/// A named, ordered list of systems that measures each child.
///
/// A feature runs its children like [`Systems`](super::Systems) does (and,
/// like it, is `Send`: its systems must be, see [`Systems`]): every
/// phase in insertion order, depth first, and `initialize` makes every
/// reactive system's collectors before any child's `initialize` runs. The
/// `try_` phases ([`Feature::try_execute`], ...) report a failing child as a
/// [`SystemFailed`] naming it, the phase and the features around it; the
/// plain phases panic with that message (see
/// [Fallible systems](super#fallible-systems)). While timing is on (the default), it
/// also measures each child's `execute` and `cleanup` with
/// [`Instant`](std::time::Instant); `initialize`, `teardown` and the
/// reactive-system switches run untimed. [`timings`](Feature::timings) shows
/// the figures: last run, and average, minimum and maximum over a window of
/// recent runs (see [`Timings`] for the printed table). Recording a run does
/// not allocate: each child's window is a ring buffer allocated when the child
/// is added or the window changes.
///
/// Features nest (a feature is a [`System`]); a nested feature measures its
/// own children, and its parent measures it as a whole. Switching timing,
/// changing the window and resetting apply to this feature's own figures, not
/// to those of the features nested in it: configure those before adding them.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use reactecs::prelude::*;
/// struct Position(f32);
/// reactecs::component!(Position);
///
/// struct Spawn;
/// impl System for Spawn {
///     fn execute(&mut self, game: &mut Context) {
///         game.create_entity_with((Position(0.0),)).expect("a new entity");
///     }
/// }
/// struct Slow;
/// impl System for Slow {
///     fn execute(&mut self, _game: &mut Context) {
///         std::thread::sleep(Duration::from_millis(1));
///     }
/// }
///
/// let mut game = Context::new();
/// let mut frame = Feature::new("Game").with(Spawn).with(Feature::new("Render").with(Slow));
/// for _ in 0..3 {
///     frame.execute(&mut game);
///     frame.cleanup(&mut game);
/// }
/// assert_eq!(game.len(), 3);
///
/// let timings = frame.timings();
/// assert_eq!(timings.get("Spawn").unwrap().execute().runs(), 3);
/// let render = timings.get("Render").unwrap();
/// assert!(render.execute().min() >= Duration::from_millis(1));
/// let slow = render.feature().unwrap().get("Slow").unwrap();
/// assert!(slow.execute().average() >= Duration::from_millis(1));
/// println!("{timings}");
/// ```
pub struct Feature<W = Context> {
    name: String,
    /// The children; the phases that are not timed run through `Systems`.
    systems: Systems<W>,
    /// One entry per system, at the same index.
    stats: Vec<ChildStats>,
    timing: bool,
    window: usize,
}

/// What a feature measured for one child.
struct ChildStats {
    execute: PhaseStats,
    cleanup: PhaseStats,
}

impl ChildStats {
    fn new(window: usize) -> Self {
        ChildStats {
            execute: PhaseStats::new(window),
            cleanup: PhaseStats::new(window),
        }
    }
}

impl<W: 'static> Feature<W> {
    /// An empty feature named `name`, timing its children over a window of 60
    /// runs.
    pub fn new(name: impl Into<String>) -> Self {
        Feature {
            name: name.into(),
            systems: Systems::new(),
            stats: Vec::new(),
            timing: true,
            window: DEFAULT_WINDOW,
        }
    }

    /// This feature with `system` appended (for building a feature in one
    /// expression).
    #[must_use]
    pub fn with(mut self, system: impl System<W> + Send + 'static) -> Self {
        self.add(system);
        self
    }

    /// Appends `system`; it runs after every system added before it.
    pub fn add(&mut self, system: impl System<W> + Send + 'static) -> &mut Self {
        self.push(Box::new(system));
        self
    }

    fn push(&mut self, system: Box<dyn AnySystem<W> + Send>) {
        self.systems.systems.push(system);
        self.stats.push(ChildStats::new(self.window));
    }

    /// This feature with the systems registered for it appended: those
    /// declared with [`feature_system!`](crate::feature_system!) for a feature
    /// of this name and for world type `W`.
    ///
    /// They are added by ascending priority; systems of equal priority are
    /// ordered by [`name`](System::name) (registration order cannot break ties:
    /// `inventory` does not keep the order of declarations), and systems of
    /// equal priority and name in an unspecified order. Each call builds and
    /// appends a fresh set of systems.
    ///
    /// Name the world when nothing else tells the compiler which it is
    /// (`Feature::<Context>::new(..)`): `W` defaults to `Context` in types,
    /// not in expressions.
    ///
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Default)] struct Move;
    /// impl System for Move {}
    /// #[derive(Default)] struct Input;
    /// impl System for Input {}
    ///
    /// reactecs::feature_system!("Frame", 20, Move::default());
    /// reactecs::feature_system!("Frame", 10, Input::default());
    ///
    /// let frame = Feature::<Context>::new("Frame").with_registered();
    /// let names: Vec<&str> = frame.iter().map(|system| system.name()).collect();
    /// assert_eq!(names, ["Input", "Move"]);
    /// ```
    #[must_use]
    pub fn with_registered(mut self) -> Self {
        for system in registry::registered::<W>(&self.name) {
            self.push(system);
        }
        self
    }

    /// The feature's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of direct children (a nested feature counts as one).
    pub fn len(&self) -> usize {
        self.systems.len()
    }

    /// Whether the feature has no children.
    pub fn is_empty(&self) -> bool {
        self.systems.is_empty()
    }

    /// The direct children, in the order they run.
    pub fn iter(&self) -> SystemsIter<'_, W> {
        self.systems.iter()
    }

    /// The first system of type `T` in this feature, searched depth first,
    /// in the order the systems run: each child, then the systems inside it
    /// (a nested feature or [`Systems`]), then the next child. Wrappers are
    /// seen through: `system::<Render>()` finds the `Render` inside a
    /// [`Reactive<Render>`](super::Reactive) (as do
    /// [`Deferred`](super::Deferred), [`InContext`](super::InContext) and
    /// [`MultiReactive`](super::MultiReactive)), and
    /// `system::<Reactive<Render>>()` finds the wrapper. `None` when no
    /// system of that type was added (absence is an ordinary answer). A
    /// system added already boxed (a `Box<dyn System<W> + Send>`) is found
    /// as that box type only, unless it is a wrapper or a container.
    ///
    /// Cost: a type comparison per system until the first match.
    ///
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug)] struct Hit(u32);
    /// reactecs::component!(Hit);
    ///
    /// /// Counts the hits it sees: read back after the frame.
    /// #[derive(Default)] struct CombatLog { hits: u32 }
    /// impl ReactiveSystem for CombatLog {
    ///     fn trigger(&mut self, game: &mut Context) -> CollectorId {
    ///         game.add_collector(Matcher::all_of::<Hit>().added())
    ///     }
    ///     fn execute(&mut self, _: &mut Context, hits: &[Entity]) {
    ///         self.hits += hits.len() as u32;
    ///     }
    /// }
    ///
    /// let mut game = Context::new();
    /// let mut frame = Feature::new("Game")
    ///     .with(Feature::new("Combat").with(Reactive::new(CombatLog::default())));
    /// frame.initialize(&mut game);
    /// game.create_entity_with(Hit(3))?;
    /// frame.execute(&mut game);
    /// assert_eq!(frame.system::<CombatLog>().map(|log| log.hits), Some(1));
    /// frame.system_mut::<CombatLog>().expect("added above").hits = 0;
    /// assert!(frame.system::<Reactive<CombatLog>>().is_some());
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn system<T: 'static>(&self) -> Option<&T> {
        self.systems.system()
    }

    /// The first system of type `T` in this feature, mutably; searched as
    /// [`system`](Feature::system) does.
    pub fn system_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.systems.system_mut()
    }

    /// Switches measuring on or off. While off, children run unmeasured and
    /// the figures already recorded stay as they are.
    pub fn set_timing(&mut self, timing: bool) -> &mut Self {
        self.timing = timing;
        self
    }

    /// Whether the feature measures its children.
    pub fn is_timing(&self) -> bool {
        self.timing
    }

    /// This feature with its `average`, `min` and `max` covering the last
    /// `runs` runs of each child (60 by default). A window below 1 is taken
    /// as 1. Changing the window forgets the samples recorded so far (each
    /// child's `last` and `runs` are kept).
    #[must_use]
    pub fn with_timing_window(mut self, runs: usize) -> Self {
        self.set_timing_window(runs);
        self
    }

    /// Sets the window, as [`with_timing_window`](Self::with_timing_window)
    /// does.
    pub fn set_timing_window(&mut self, runs: usize) -> &mut Self {
        self.window = runs.max(1);
        for stats in &mut self.stats {
            stats.execute.set_window(self.window);
            stats.cleanup.set_window(self.window);
        }
        self
    }

    /// How many recent runs the windowed figures cover.
    pub fn timing_window(&self) -> usize {
        self.window
    }

    /// Forgets every figure this feature recorded (not those of nested
    /// features).
    pub fn reset_timings(&mut self) {
        for stats in &mut self.stats {
            stats.execute.reset();
            stats.cleanup.reset();
        }
    }

    /// The figures recorded for each child, as a tree through nested
    /// features; print it for a table.
    pub fn timings(&self) -> Timings<'_> {
        Timings {
            name: &self.name,
            timing: self.timing,
            window: self.window,
            children: self,
        }
    }
}

impl<W: 'static> TimedChildren for Feature<W> {
    fn count(&self) -> usize {
        self.systems.len()
    }

    fn child(&self, index: usize) -> SystemTimings<'_> {
        let stats = &self.stats[index];
        let system = &self.systems.systems[index];
        SystemTimings {
            name: system.name(),
            execute: &stats.execute,
            cleanup: &stats.cleanup,
            feature: system.timings(),
        }
    }
}

impl<W> fmt::Debug for Feature<W> {
    /// The name and the children's names, e.g. `Feature("Game")["Move", "Render"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Feature({:?})", self.name)?;
        f.debug_list()
            .entries(self.systems.systems.iter().map(|s| s.name()))
            .finish()
    }
}

impl<W: 'static> Feature<W> {
    /// Runs `initialize` of every child in order, after making every
    /// reactive system's collectors in the whole tree
    /// ([`create_collectors`](System::create_collectors)): what one child's
    /// `initialize` does is collected for every reactive system of the
    /// feature, wherever it stands.
    ///
    /// # Errors
    /// [`SystemFailed`] for the first child that fails, naming it and this
    /// feature; the children after it are not initialized.
    pub fn try_initialize(&mut self, world: &mut W) -> Result<(), SystemFailed> {
        self.systems.create_collectors(world);
        self.run(Phase::Initialize, world)
    }

    /// Runs (and times) `execute` of every child in order.
    ///
    /// # Errors
    /// [`SystemFailed`] for the first child that fails, naming it and this
    /// feature; the children after it do not run in this call (the failed
    /// child's time is recorded).
    pub fn try_execute(&mut self, world: &mut W) -> Result<(), SystemFailed> {
        self.run(Phase::Execute, world)
    }

    /// Runs (and times) `cleanup` of every child in order.
    ///
    /// # Errors
    /// As [`try_execute`](Self::try_execute).
    pub fn try_cleanup(&mut self, world: &mut W) -> Result<(), SystemFailed> {
        self.run(Phase::Cleanup, world)
    }

    /// Runs `teardown` of every child in order, all of them even when one
    /// fails (each child lets go of what it holds).
    ///
    /// # Errors
    /// [`SystemFailed`] for the first child that failed.
    pub fn try_teardown(&mut self, world: &mut W) -> Result<(), SystemFailed> {
        self.run(Phase::Teardown, world)
    }

    /// Runs `phase` of each child, timing `execute` and `cleanup` while
    /// timing is on; stops at the first failure except in `teardown`.
    fn run(&mut self, phase: Phase, world: &mut W) -> Result<(), SystemFailed> {
        let Feature {
            name,
            systems,
            stats,
            timing,
            ..
        } = self;
        let mut record = |index: usize, took| {
            let stats: &mut ChildStats = &mut stats[index];
            match phase {
                Phase::Execute => stats.execute.record(took),
                _ => stats.cleanup.record(took),
            }
        };
        let timed = *timing && matches!(phase, Phase::Execute | Phase::Cleanup);
        systems.run_children(phase, world, Some(name), timed.then_some(&mut record as _))
    }
}

/// The plain phases run the `try_` ones.
///
/// # Panics
/// The plain phases panic with the [`SystemFailed`] message if a child
/// fails; call the `try_` phases to get the error instead.
impl<W: 'static> System<W> for Feature<W> {
    /// The feature's name.
    fn name(&self) -> &str {
        &self.name
    }

    container_phases!(Feature);

    fn create_collectors(&mut self, world: &mut W) {
        self.systems.create_collectors(world);
    }

    fn activate_reactive_systems(&mut self, world: &mut W) {
        self.systems.activate_reactive_systems(world);
    }

    fn deactivate_reactive_systems(&mut self, world: &mut W) {
        self.systems.deactivate_reactive_systems(world);
    }

    fn clear_reactive_systems(&mut self, world: &mut W) {
        self.systems.clear_reactive_systems(world);
    }

    fn timings(&self) -> Option<Timings<'_>> {
        Some(Feature::timings(self))
    }

    fn find_system(&self, _seal: Seal, wanted: TypeId) -> Option<&dyn Any> {
        self.systems.find(wanted)
    }

    fn find_system_mut(&mut self, _seal: Seal, wanted: TypeId) -> Option<&mut dyn Any> {
        self.systems.find_mut(wanted)
    }
}
