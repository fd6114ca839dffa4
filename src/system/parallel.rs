//! `Parallel`: deferred systems run side by side, their commands played back
//! afterwards in declaration order.

use std::any::{Any, TypeId};
use std::fmt;
use std::time::{Duration, Instant};

use crate::context::Context;
use crate::system::timings::TimedChildren;
use crate::system::{Deferred, DeferredSystem, PhaseStats, Seal, System, SystemTimings, Timings};

/// [`DeferredSystem`]s that run side by side: each phase (`execute`,
/// `cleanup`) runs every member at once on rayon's thread pool (with the
/// `parallel` feature; one after another without it), each reading the
/// context as it was when the phase began and recording into its own
/// [`CommandBuffer`](crate::CommandBuffer); then the buffers are played back
/// one by one, in the order the members were added. So the result is
/// exactly that of running the members one after another against the same
/// context and playing their buffers back in that order, whatever the
/// threads did: the same entities, values, events and collector batches.
/// (Unlike members added to a [`Feature`](crate::Feature) one by one with
/// [`with_deferred`](crate::Feature::with_deferred), a member does not see
/// what an earlier member's commands did in the same phase.)
///
/// `initialize` and `teardown` run the members one after another. A
/// playback failure is kept by the member's [`Deferred`], as for a lone
/// deferred system. Timings: a feature shows a `Parallel` as one child (the
/// phase's wall time, playback included), and, below it, each member's own
/// time (recording, which overlaps the others', plus its playback).
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// use reactecs::system::Parallel;
/// #[derive(Debug)] struct Health(i32);
/// #[derive(Debug)] struct Hungry;
/// reactecs::component!(Health, Hungry);
///
/// /// Destroys the dead.
/// struct Reap;
/// impl DeferredSystem for Reap {
///     fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
///         for (e, h) in game.query::<(Entity, &Health)>().iter() {
///             if h.0 <= 0 {
///                 commands.destroy_entity(e);
///             }
///         }
///     }
/// }
///
/// /// Makes the weak hungry (reading the same context as `Reap`).
/// struct Starve;
/// impl DeferredSystem for Starve {
///     fn execute(&mut self, game: &Context, commands: &mut CommandBuffer) {
///         for (e, h) in game.query::<(Entity, &Health)>().iter() {
///             if h.0 < 5 {
///                 commands.add(e, Hungry);
///             }
///         }
///     }
/// }
///
/// let mut game = Context::new();
/// game.create_entities_with([(Health(0),), (Health(3),), (Health(9),)])?;
/// let mut frame = Feature::new("Frame").with(Parallel::new("Sense").with(Reap).with(Starve));
/// frame.execute(&mut game);
/// // `Reap`'s commands played first: the dead entity is gone, so `Starve`'s
/// // add to it failed (kept by its `Deferred`); the weak one is hungry.
/// assert_eq!(game.len(), 2);
/// assert_eq!(game.query::<&Hungry>().iter().count(), 1);
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct Parallel {
    name: String,
    members: Vec<Member>,
    window: usize,
}

/// One member, with the time it took in the phase running now.
struct Member {
    system: Box<dyn Recording>,
    execute: PhaseStats,
    cleanup: PhaseStats,
    spent: Duration,
}

/// What a [`Parallel`] needs of a member: a [`Deferred`] system, seen
/// through a trait object so members of different types share one list.
trait Recording: Send {
    fn name(&self) -> &str;
    fn initialize(&mut self, context: &mut Context);
    /// Runs the phase (`cleanup` or `execute`), recording into the buffer.
    fn record(&mut self, cleanup: bool, context: &Context);
    fn play_back(&mut self, context: &mut Context);
    fn teardown(&mut self, context: &mut Context);
    fn find(&self, wanted: TypeId) -> Option<&dyn Any>;
    fn find_mut(&mut self, wanted: TypeId) -> Option<&mut dyn Any>;
}

impl<S: DeferredSystem + Send + 'static> Recording for Deferred<S> {
    fn name(&self) -> &str {
        self.system().name()
    }

    fn initialize(&mut self, context: &mut Context) {
        System::initialize(self, context);
    }

    fn record(&mut self, cleanup: bool, context: &Context) {
        if cleanup {
            self.record_cleanup(context);
        } else {
            self.record_execute(context);
        }
    }

    fn play_back(&mut self, context: &mut Context) {
        Deferred::play_back(self, context);
    }

    fn teardown(&mut self, context: &mut Context) {
        System::teardown(self, context);
    }

    fn find(&self, wanted: TypeId) -> Option<&dyn Any> {
        self.find_system(Seal(()), wanted)
    }

    fn find_mut(&mut self, wanted: TypeId) -> Option<&mut dyn Any> {
        self.find_system_mut(Seal(()), wanted)
    }
}

impl Parallel {
    /// An empty group named `name` (its name in timings and `Debug`).
    pub fn new(name: impl Into<String>) -> Self {
        Parallel {
            name: name.into(),
            members: Vec::new(),
            window: crate::system::feature::DEFAULT_WINDOW,
        }
    }

    /// This group with `system` added after the others.
    #[must_use]
    pub fn with(mut self, system: impl DeferredSystem + Send + 'static) -> Self {
        self.add(system);
        self
    }

    /// Adds `system` after the others.
    pub fn add(&mut self, system: impl DeferredSystem + Send + 'static) -> &mut Self {
        self.members.push(Member {
            system: Box::new(Deferred::new(system)),
            execute: PhaseStats::new(self.window),
            cleanup: PhaseStats::new(self.window),
            spent: Duration::ZERO,
        });
        self
    }

    /// How many members it has.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether it has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Each member's time in each phase, as a feature's timings show them.
    pub fn timings(&self) -> Timings<'_> {
        Timings {
            name: &self.name,
            timing: true,
            window: self.window,
            children: self,
        }
    }

    /// Runs one phase: every member records at once, then each buffer is
    /// played back in order.
    fn run(&mut self, cleanup: bool, context: &mut Context) {
        let shared: &Context = context;
        let record = |member: &mut Member| {
            let start = Instant::now();
            member.system.record(cleanup, shared);
            member.spent = start.elapsed();
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::iter::{IntoParallelRefMutIterator, ParallelIterator};
            self.members.par_iter_mut().for_each(record);
        }
        #[cfg(not(feature = "parallel"))]
        self.members.iter_mut().for_each(record);
        for member in &mut self.members {
            let start = Instant::now();
            member.system.play_back(context);
            let spent = member.spent + start.elapsed();
            if cleanup {
                member.cleanup.record(spent);
            } else {
                member.execute.record(spent);
            }
        }
    }
}

impl System<Context> for Parallel {
    fn name(&self) -> &str {
        &self.name
    }

    fn initialize(&mut self, context: &mut Context) {
        for member in &mut self.members {
            member.system.initialize(context);
        }
    }

    fn execute(&mut self, context: &mut Context) {
        self.run(false, context);
    }

    fn cleanup(&mut self, context: &mut Context) {
        self.run(true, context);
    }

    fn teardown(&mut self, context: &mut Context) {
        for member in &mut self.members {
            member.system.teardown(context);
        }
    }

    fn timings(&self) -> Option<Timings<'_>> {
        Some(Parallel::timings(self))
    }

    fn find_system(&self, _seal: Seal, wanted: TypeId) -> Option<&dyn Any> {
        self.members.iter().find_map(|member| member.system.find(wanted))
    }

    fn find_system_mut(&mut self, _seal: Seal, wanted: TypeId) -> Option<&mut dyn Any> {
        self.members
            .iter_mut()
            .find_map(|member| member.system.find_mut(wanted))
    }
}

impl TimedChildren for Parallel {
    fn count(&self) -> usize {
        self.members.len()
    }

    fn child(&self, index: usize) -> SystemTimings<'_> {
        let member = &self.members[index];
        SystemTimings {
            name: member.system.name(),
            execute: &member.execute,
            cleanup: &member.cleanup,
            feature: None,
        }
    }
}

/// The name and the members' names: `Parallel("Sense")["Reap", "Starve"]`.
impl fmt::Debug for Parallel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Parallel({:?})", self.name)?;
        f.debug_list()
            .entries(self.members.iter().map(|member| member.system.name()))
            .finish()
    }
}
