//! `Systems`: an ordered list of systems that is itself a system.

use std::any::{Any, TypeId};
use std::fmt;
use std::time::{Duration, Instant};

use super::phase::container_phases;
use super::{AnySystem, Phase, Seal, System, SystemFailed, SystemResult};
use crate::context::Context;

/// An ordered list of systems, run one after another; itself a [`System`], so
/// lists nest.
///
/// Every phase, and each of the reactive-system switches, runs the children in
/// insertion order, depth first: a nested list runs all of its children before
/// the next sibling starts. `teardown` also runs in insertion order (as in
/// Entitas), not in reverse. `initialize` first makes the collectors of every
/// reactive system in the list ([`System::create_collectors`]), then
/// initializes the children.
///
/// The `try_` phases ([`Systems::try_execute`], ...) report a failing child
/// as a [`SystemFailed`]; the plain ones panic with its message (see
/// [Fallible systems](super#fallible-systems)).
///
/// Use [`Feature`](super::Feature) for a named list that times its children.
///
/// Its systems are `Send` ([`with`](Systems::with) and [`add`](Systems::add)
/// ask for it), so a `Systems` is `Send`: a frame can move to another thread
/// with its world. A system that holds an `Rc` (or anything else that is
/// not `Send`) cannot be added; share state through `Arc<Mutex<_>>`.
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// struct Counter(u32);
/// reactecs::component!(unique Counter);
///
/// struct Start;
/// impl System for Start {
///     fn initialize(&mut self, game: &mut Context) {
///         game.set_unique(Counter(0)).expect("the first counter");
///     }
/// }
/// struct Tick;
/// impl System for Tick {
///     fn execute(&mut self, game: &mut Context) {
///         game.get_mut::<Counter>(game.unique_entity::<Counter>().expect("a counter")).expect("a counter").0 += 1;
///     }
/// }
/// struct Double;
/// impl System for Double {
///     fn execute(&mut self, game: &mut Context) {
///         game.get_mut::<Counter>(game.unique_entity::<Counter>().expect("a counter")).expect("a counter").0 *= 2;
///     }
/// }
///
/// let mut game = Context::new();
/// // Tick then Double, every frame: (0 + 1) * 2 = 2, then (2 + 1) * 2 = 6.
/// let mut frame = Systems::new().with(Start).with(Systems::new().with(Tick).with(Double));
/// assert_eq!(frame.len(), 2);
/// frame.initialize(&mut game);
/// frame.execute(&mut game);
/// frame.execute(&mut game);
/// assert_eq!(game.unique::<Counter>().map(|c| c.0), Some(6));
/// ```
pub struct Systems<W = Context> {
    /// Also walked by `Feature`, which times its children one by one.
    pub(super) systems: Vec<Box<dyn AnySystem<W> + Send>>,
}

impl<W: 'static> Systems<W> {
    /// An empty list.
    pub fn new() -> Self {
        Systems { systems: Vec::new() }
    }

    /// This list with `system` appended (for building a list in one
    /// expression).
    #[must_use]
    pub fn with(mut self, system: impl System<W> + Send + 'static) -> Self {
        self.add(system);
        self
    }

    /// Appends `system`; it runs after every system added before it.
    pub fn add(&mut self, system: impl System<W> + Send + 'static) -> &mut Self {
        self.systems.push(Box::new(system));
        self
    }

    /// The number of direct children (a nested list counts as one).
    pub fn len(&self) -> usize {
        self.systems.len()
    }

    /// Whether the list has no children.
    pub fn is_empty(&self) -> bool {
        self.systems.is_empty()
    }

    /// The direct children, in the order they run.
    pub fn iter(&self) -> SystemsIter<'_, W> {
        SystemsIter {
            inner: self.systems.iter(),
        }
    }

    /// The first system of type `T` in this list, searched depth first, in
    /// the order the systems run: each child, then the systems inside it (a
    /// nested [`Systems`] or [`Feature`](super::Feature)), then the next
    /// child. Wrappers are seen through: `system::<Render>()` finds the
    /// `Render` inside a [`Reactive<Render>`](super::Reactive) (as do
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
    /// #[derive(Default)] struct Log(Vec<String>);
    /// impl System for Log {
    ///     fn execute(&mut self, _: &mut Context) { self.0.push("frame".into()); }
    /// }
    ///
    /// let mut game = Context::new();
    /// let mut frame = Systems::new().with(Systems::new().with(Log::default()));
    /// frame.execute(&mut game);
    /// assert_eq!(frame.system::<Log>().map(|log| log.0.len()), Some(1));
    /// frame.system_mut::<Log>().expect("added above").0.clear();
    /// assert!(frame.system::<Log>().is_some_and(|log| log.0.is_empty()));
    /// ```
    pub fn system<T: 'static>(&self) -> Option<&T> {
        self.find(TypeId::of::<T>())?.downcast_ref()
    }

    /// The first system of type `T` in this list, mutably; searched as
    /// [`system`](Systems::system) does.
    pub fn system_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.find_mut(TypeId::of::<T>())?.downcast_mut()
    }

    /// The first system of type `wanted`: each child, then inside it.
    pub(super) fn find(&self, wanted: TypeId) -> Option<&dyn Any> {
        self.systems.iter().find_map(|child| {
            // `**child`: the boxed system, not the box (which is a system too).
            let system: &dyn AnySystem<W> = &**child;
            let any = system.as_any();
            if any.type_id() == wanted {
                Some(any)
            } else {
                system.find_system(Seal(()), wanted)
            }
        })
    }

    /// [`find`](Systems::find), mutably.
    pub(super) fn find_mut(&mut self, wanted: TypeId) -> Option<&mut dyn Any> {
        for child in &mut self.systems {
            let system: &mut dyn AnySystem<W> = &mut **child;
            if system.as_any().type_id() == wanted {
                return Some(system.as_any_mut());
            }
            if let Some(found) = system.find_system_mut(Seal(()), wanted) {
                return Some(found);
            }
        }
        None
    }
}

impl<W: 'static> Default for Systems<W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<W> fmt::Debug for Systems<W> {
    /// The children's names, e.g. `Systems["Move", "Render"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Systems")?;
        f.debug_list().entries(self.systems.iter().map(|s| s.name())).finish()
    }
}

impl<'a, W: 'static> IntoIterator for &'a Systems<W> {
    type Item = &'a dyn System<W>;
    type IntoIter = SystemsIter<'a, W>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The children of a [`Systems`] or a [`Feature`](super::Feature), in the
/// order they run.
pub struct SystemsIter<'a, W> {
    pub(super) inner: std::slice::Iter<'a, Box<dyn AnySystem<W> + Send>>,
}

impl<'a, W> Iterator for SystemsIter<'a, W> {
    type Item = &'a dyn System<W>;

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|system| &**system as &dyn System<W>)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<W> ExactSizeIterator for SystemsIter<'_, W> {}

impl<W> DoubleEndedIterator for SystemsIter<'_, W> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|system| &**system as &dyn System<W>)
    }
}

impl<W> Clone for SystemsIter<'_, W> {
    fn clone(&self) -> Self {
        SystemsIter {
            inner: self.inner.clone(),
        }
    }
}

impl<W> fmt::Debug for SystemsIter<'_, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.inner.clone().map(|s| s.name())).finish()
    }
}

impl<W: 'static> Systems<W> {
    /// Runs `initialize` of every child in order, after making every
    /// reactive child's collectors ([`create_collectors`](System::create_collectors)),
    /// so what one child's `initialize` does is collected for the reactive
    /// systems after it (and before it).
    ///
    /// # Errors
    /// [`SystemFailed`] for the first child that fails; the children after
    /// it are not initialized.
    pub fn try_initialize(&mut self, world: &mut W) -> Result<(), SystemFailed> {
        self.create_collectors(world);
        self.run(Phase::Initialize, world)
    }

    /// Runs `execute` of every child in order.
    ///
    /// # Errors
    /// [`SystemFailed`] for the first child that fails; the children after
    /// it do not run in this call.
    pub fn try_execute(&mut self, world: &mut W) -> Result<(), SystemFailed> {
        self.run(Phase::Execute, world)
    }

    /// Runs `cleanup` of every child in order.
    ///
    /// # Errors
    /// [`SystemFailed`] for the first child that fails; the children after
    /// it do not run in this call.
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

    /// Runs `phase` of each child, stopping at the first failure except in
    /// `teardown`.
    fn run(&mut self, phase: Phase, world: &mut W) -> Result<(), SystemFailed> {
        self.run_children(phase, world, None, None)
    }

    /// Runs `phase` of each child in order, stopping at the first failure
    /// except in `teardown` (then every child runs and the first failure is
    /// returned); a failure names `feature` when given. With `timed`, each
    /// child is timed and its duration goes to `timed(child index, duration)`.
    pub(super) fn run_children(
        &mut self,
        phase: Phase,
        world: &mut W,
        feature: Option<&str>,
        mut timed: Option<&mut dyn FnMut(usize, Duration)>,
    ) -> Result<(), SystemFailed> {
        let mut first = None;
        for (index, system) in self.systems.iter_mut().enumerate() {
            let start = timed.is_some().then(Instant::now);
            let result = run(&mut **system, phase, world);
            if let (Some(record), Some(start)) = (timed.as_mut(), start) {
                record(index, start.elapsed());
            }
            if let Err(error) = result {
                let failure = SystemFailed::from_child(feature, system.name(), phase, error);
                if phase != Phase::Teardown {
                    return Err(failure);
                }
                first.get_or_insert(failure);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// The plain phases run the `try_` ones.
///
/// # Panics
/// The plain phases panic with the [`SystemFailed`] message if a child
/// fails; call the `try_` phases to get the error instead.
impl<W: 'static> System<W> for Systems<W> {
    /// `Systems`.
    fn name(&self) -> &str {
        "Systems"
    }

    container_phases!(Systems);

    fn create_collectors(&mut self, world: &mut W) {
        for system in &mut self.systems {
            system.create_collectors(world);
        }
    }

    fn activate_reactive_systems(&mut self, world: &mut W) {
        for system in &mut self.systems {
            system.activate_reactive_systems(world);
        }
    }

    fn deactivate_reactive_systems(&mut self, world: &mut W) {
        for system in &mut self.systems {
            system.deactivate_reactive_systems(world);
        }
    }

    fn clear_reactive_systems(&mut self, world: &mut W) {
        for system in &mut self.systems {
            system.clear_reactive_systems(world);
        }
    }

    fn find_system(&self, _seal: Seal, wanted: TypeId) -> Option<&dyn Any> {
        self.find(wanted)
    }

    fn find_system_mut(&mut self, _seal: Seal, wanted: TypeId) -> Option<&mut dyn Any> {
        self.find_mut(wanted)
    }
}

/// Runs `phase` of `system` (its `try_` method). With the `tracing` feature,
/// inside a span `system` with fields `name` (the system's name) and `phase`.
#[inline]
fn run<W>(system: &mut dyn System<W>, phase: Phase, world: &mut W) -> SystemResult {
    #[cfg(feature = "tracing")]
    let _span = tracing::info_span!("system", name = system.name(), phase = phase.name()).entered();
    match phase {
        Phase::Initialize => system.try_initialize(world),
        Phase::Execute => system.try_execute(world),
        Phase::Cleanup => system.try_cleanup(world),
        Phase::Teardown => system.try_teardown(world),
    }
}
