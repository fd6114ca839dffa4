//! Reactive systems over several contexts.

use std::collections::HashSet;

use crate::aerc::Owner;
use crate::collector::CollectorId;
use crate::context::Context;
use crate::contexts::{ContextId, Contexts};
use crate::entity::Entity;
use crate::system::reactive::{ReactiveSystem, ReactiveWorld};
use crate::system::{SealedWorld, System, SystemResult};

/// An entity and the context it lives in. Ordered by context, then entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextEntity {
    /// The entity's context ([`Contexts::by_id`] finds it).
    pub context: ContextId,
    /// The entity.
    pub entity: Entity,
}

/// Contexts are a world reactive systems run on: a
/// `ReactiveSystem<Contexts>` (Entitas' `MultiReactiveSystem`) makes
/// collectors in any of them, and [`MultiReactive`] runs it.
impl ReactiveWorld for Contexts {
    type Collectors = Vec<CollectorId>;
    type Entity = ContextEntity;
}

impl SealedWorld for Contexts {}

/// Runs a [`ReactiveSystem<Contexts>`](ReactiveSystem) as a `System<Contexts>`.
/// `teardown` removes its collectors; a later run makes new ones. A collector
/// the user removes ([`CollectorMut::remove`](crate::CollectorMut::remove))
/// makes every later run fail with
/// [`Error::UnknownCollector`](crate::Error::UnknownCollector), after the
/// entities its other collectors gathered are executed. An entity gathered
/// by two of its collectors is executed once.
///
/// # Example
/// ```
/// use std::sync::{Arc, Mutex};
/// use reactecs::prelude::*;
/// struct Sprite(u32);
/// reactecs::context!(Game, Ui);
/// reactecs::component!(Game, Ui: Sprite);
///
/// struct Draw(Arc<Mutex<Vec<&'static str>>>);
/// impl ReactiveSystem<Contexts> for Draw {
///     fn trigger(&mut self, contexts: &mut Contexts) -> Vec<CollectorId> {
///         let added = || Matcher::all_of::<Sprite>().added();
///         vec![contexts.context_mut::<Game>().add_collector(added()), contexts.context_mut::<Ui>().add_collector(added())]
///     }
///     fn execute(&mut self, contexts: &mut Contexts, entities: &[ContextEntity]) {
///         for e in entities {
///             self.0.lock().unwrap().push(contexts.by_id(e.context).unwrap().name());
///         }
///     }
/// }
///
/// let drawn = Arc::new(Mutex::new(Vec::new()));
/// let mut contexts = Contexts::new();
/// let mut draw = MultiReactive::new(Draw(drawn.clone()));
/// draw.initialize(&mut contexts);
/// contexts.context_mut::<Ui>().create_entity_with(Sprite(1))?;
/// contexts.context_mut::<Game>().create_entity_with(Sprite(2))?;
/// draw.execute(&mut contexts);
/// assert_eq!(*drawn.lock().unwrap(), ["Game", "Ui"]); // in trigger order
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct MultiReactive<S> {
    system: S,
    collectors: Option<Vec<CollectorId>>,
    owner: Owner,
    /// One collector's entities while it is drained, and their context.
    scratch: Vec<Entity>,
    scratch_context: Option<ContextId>,
    buffer: Vec<ContextEntity>,
    /// For dropping an entity that two collectors gathered (reused).
    seen: HashSet<ContextEntity>,
}

/// The system's name and its collectors: `MultiReactive { system: "Sync",
/// collectors: Some([CollectorId { .. }, ..]) }`.
impl<S: ReactiveSystem<Contexts>> std::fmt::Debug for MultiReactive<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiReactive")
            .field("system", &self.system.name())
            .field("collectors", &self.collectors)
            .finish()
    }
}

impl<S: ReactiveSystem<Contexts>> MultiReactive<S> {
    /// Makes `system`'s collectors in `contexts` now and wraps it: every
    /// change from here on is collected (see
    /// [`Reactive::in_context`](crate::system::Reactive::in_context)).
    pub fn in_contexts(contexts: &mut Contexts, system: S) -> Self {
        let mut multi = MultiReactive::new(system);
        multi.ensure_collectors(contexts);
        multi
    }

    /// Wraps `system`. Its collectors are made when the feature it is added
    /// to starts its `initialize`, before any system of it is initialized;
    /// run on its own, at its `initialize` (or first `execute`). See
    /// [when collection starts](crate::system#when-collection-starts).
    pub fn new(system: S) -> Self {
        MultiReactive {
            system,
            collectors: None,
            owner: Owner::internal(),
            scratch: Vec::new(),
            scratch_context: None,
            buffer: Vec::new(),
            seen: HashSet::new(),
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

    /// The collectors, once made.
    pub fn collectors(&self) -> &[CollectorId] {
        self.collectors.as_deref().unwrap_or_default()
    }

    fn ensure_collectors(&mut self, contexts: &mut Contexts) {
        if self.collectors.is_none() {
            self.collectors = Some(self.system.trigger(contexts));
        }
    }

    /// Releases what is held: after `execute`, or what a panicking
    /// `filter` or `execute` left (in `scratch` or `buffer`), each in its own
    /// context.
    fn release_buffer(&mut self, contexts: &mut Contexts) {
        if let Some(id) = self.scratch_context.take()
            && let Some(context) = contexts.by_id_mut(id)
        {
            context.release_all(&mut self.scratch);
        }
        self.scratch.clear();
        for held in self.buffer.drain(..) {
            if let Some(context) = contexts.by_id_mut(held.context) {
                context.release_own(held.entity);
            }
        }
        for context in contexts.iter_mut() {
            context.fire_released();
        }
    }

    /// Releases what is held, then applies `f` to each collector in its
    /// context.
    fn each_collector(&mut self, contexts: &mut Contexts, mut f: impl FnMut(&mut Context, CollectorId)) {
        self.release_buffer(contexts);
        self.ensure_collectors(contexts);
        for &id in self.collectors() {
            if let Some(context) = contexts.by_id_mut(id.context()) {
                f(context, id);
            }
        }
    }
}

/// The plain phases run the `try_` ones.
///
/// # Panics
/// The plain phases panic with the message of the system's error, if it
/// returns one; call the `try_` phases (or run it in a
/// [`Feature`](crate::system::Feature)'s) to get the error instead.
impl<S: ReactiveSystem<Contexts>> System<Contexts> for MultiReactive<S> {
    wrapper_methods!(find);
    wrapper_methods!(phases Contexts);

    fn try_initialize(&mut self, contexts: &mut Contexts) -> SystemResult {
        self.ensure_collectors(contexts);
        self.system.try_initialize(contexts)
    }

    fn try_execute(&mut self, contexts: &mut Contexts) -> SystemResult {
        self.release_buffer(contexts);
        self.ensure_collectors(contexts);
        let MultiReactive {
            system,
            collectors,
            owner,
            scratch,
            scratch_context,
            buffer,
            seen,
        } = self;
        let include_destroyed = system.include_destroyed();
        // A removed collector drains nothing; the run fails with the error
        // once the others' entities are executed.
        let mut gone = None;
        for &id in collectors.as_deref().unwrap_or_default() {
            let Some(context) = contexts.by_id_mut(id.context()) else {
                continue;
            };
            *scratch_context = Some(id.context());
            let drained = context.drain_collector(id, *owner, include_destroyed, scratch, |context, entity| {
                system.filter(context, entity)
            });
            if let Err(error) = drained {
                gone.get_or_insert(error);
            }
            let context = id.context();
            buffer.extend(scratch.drain(..).map(|entity| ContextEntity { context, entity }));
            *scratch_context = None;
        }
        // Two collectors of one context may gather the same entity: keep the
        // first, and release the second's retain (never the last one).
        if collectors.as_ref().is_some_and(|c| c.len() > 1) {
            buffer.retain(|&held| {
                let first = seen.insert(held);
                if !first && let Some(context) = contexts.by_id_mut(held.context) {
                    context.release_own(held.entity);
                }
                first
            });
            seen.clear();
        }
        let mut result = Ok(());
        if !self.buffer.is_empty() {
            result = self.system.try_execute(contexts, &self.buffer);
            self.release_buffer(contexts);
        }
        self.each_collector(contexts, |context, id| {
            if let Err(error) = context.finish_batch(id) {
                gone.get_or_insert(error);
            }
        });
        result.and(gone.map_or(Ok(()), |error| Err(error.into())))
    }

    fn try_cleanup(&mut self, contexts: &mut Contexts) -> SystemResult {
        self.system.try_cleanup(contexts)
    }

    fn try_teardown(&mut self, contexts: &mut Contexts) -> SystemResult {
        let result = self.system.try_teardown(contexts);
        self.release_buffer(contexts);
        for id in self.collectors.take().unwrap_or_default() {
            if let Some(context) = contexts.by_id_mut(id.context()) {
                let _ = context.remove_collector(id);
            }
        }
        result
    }

    fn create_collectors(&mut self, contexts: &mut Contexts) {
        self.ensure_collectors(contexts);
    }

    fn activate_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.each_collector(contexts, |context, id| {
            let _ = context.activate_collector(id);
        });
    }

    fn deactivate_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.each_collector(contexts, |context, id| {
            let _ = context.deactivate_collector(id);
        });
    }

    fn clear_reactive_systems(&mut self, contexts: &mut Contexts) {
        self.each_collector(contexts, |context, id| {
            let _ = context.clear_collector(id);
        });
    }
}
