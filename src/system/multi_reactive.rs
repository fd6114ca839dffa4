//! Reactive systems over several contexts.

use std::collections::HashSet;

use crate::aerc::Owner;
use crate::collector::CollectorId;
use crate::context::Context;
use crate::contexts::{ContextId, Contexts};
use crate::entity::Entity;
use crate::system::{System, short_type_name};

/// An entity and the context it lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContextEntity {
    /// The entity's context ([`Contexts::by_id`] finds it).
    pub context: ContextId,
    /// The entity.
    pub entity: Entity,
}

/// A reactive system whose collectors live in several contexts of a
/// [`Contexts`]: Entitas' `MultiReactiveSystem`. Wrap it in
/// [`MultiReactive`] to get a `System<Contexts>`. Works as
/// [`ReactiveSystem`](crate::system::ReactiveSystem) does, with every
/// collector drained into one list, collector by collector.
///
/// # Example
/// ```
/// use std::sync::{Arc, Mutex};
/// use reactecs::prelude::*;
/// use reactecs::system::{ContextEntity, MultiReactive, MultiReactiveSystem};
/// struct Sprite(u32);
/// reactecs::context!(Game, Ui);
/// reactecs::component!(Game, Ui: Sprite);
///
/// struct Draw(Arc<Mutex<Vec<&'static str>>>);
/// impl MultiReactiveSystem for Draw {
///     fn trigger(&mut self, contexts: &mut Contexts) -> Vec<CollectorId> {
///         let added = || Matcher::all_of::<Sprite>().added();
///         vec![contexts.get_mut::<Game>().collector(added()), contexts.get_mut::<Ui>().collector(added())]
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
/// contexts.get_mut::<Ui>().create_entity_with(Sprite(1))?;
/// contexts.get_mut::<Game>().create_entity_with(Sprite(2))?;
/// draw.execute(&mut contexts);
/// assert_eq!(*drawn.lock().unwrap(), ["Game", "Ui"]); // in trigger order
/// # Ok::<(), reactecs::Error>(())
/// ```
pub trait MultiReactiveSystem {
    /// Makes the collectors this system drains, in any of the contexts.
    fn trigger(&mut self, contexts: &mut Contexts) -> Vec<CollectorId>;

    /// Whether to execute for `entity` of `context` (default: yes).
    fn filter(&self, context: &Context, entity: Entity) -> bool {
        let _ = (context, entity);
        true
    }

    /// Whether destroyed entities go to `filter` and `execute` too (default:
    /// no).
    fn include_destroyed(&self) -> bool {
        false
    }

    /// Runs for the collected entities that passed the filter: the first
    /// collector's, then the second's, and so on. Not called when there are
    /// none.
    fn execute(&mut self, contexts: &mut Contexts, entities: &[ContextEntity]);

    /// Runs once before the first frame, after the collectors are made.
    fn initialize(&mut self, contexts: &mut Contexts) {
        let _ = contexts;
    }

    /// Runs every frame after every system's `execute`.
    fn cleanup(&mut self, contexts: &mut Contexts) {
        let _ = contexts;
    }

    /// Runs once at the end.
    fn teardown(&mut self, contexts: &mut Contexts) {
        let _ = contexts;
    }

    /// The name shown in timings (default: the type's name).
    fn name(&self) -> &str {
        short_type_name(std::any::type_name::<Self>())
    }
}

/// Runs a [`MultiReactiveSystem`] as a `System<Contexts>`.
/// `teardown` removes its collectors; a later run makes new ones. A collector
/// the user removes is skipped from then on. An entity gathered by two of
/// its collectors is executed once.
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

impl<S: MultiReactiveSystem> MultiReactive<S> {
    /// Wraps `system`. Its collectors are made at `initialize` (or the first
    /// `execute`).
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
    fn each_collector(&mut self, contexts: &mut Contexts, f: impl Fn(&mut Context, CollectorId)) {
        self.release_buffer(contexts);
        self.ensure_collectors(contexts);
        for &id in self.collectors() {
            if let Some(context) = contexts.by_id_mut(id.context()) {
                f(context, id);
            }
        }
    }
}

impl<S: MultiReactiveSystem> System<Contexts> for MultiReactive<S> {
    fn name(&self) -> &str {
        self.system.name()
    }

    fn initialize(&mut self, contexts: &mut Contexts) {
        self.ensure_collectors(contexts);
        self.system.initialize(contexts);
    }

    fn execute(&mut self, contexts: &mut Contexts) {
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
        for &id in collectors.as_deref().unwrap_or_default() {
            let Some(context) = contexts.by_id_mut(id.context()) else {
                continue;
            };
            *scratch_context = Some(id.context());
            // An unknown (removed) collector drains nothing.
            let _ = context.drain_collector(id, *owner, include_destroyed, scratch, |context, entity| {
                system.filter(context, entity)
            });
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
        if !self.buffer.is_empty() {
            self.system.execute(contexts, &self.buffer);
            self.release_buffer(contexts);
        }
        self.each_collector(contexts, |context, id| {
            let _ = context.finish_batch(id);
        });
    }

    fn cleanup(&mut self, contexts: &mut Contexts) {
        self.system.cleanup(contexts);
    }

    fn teardown(&mut self, contexts: &mut Contexts) {
        self.system.teardown(contexts);
        self.release_buffer(contexts);
        for id in self.collectors.take().unwrap_or_default() {
            if let Some(context) = contexts.by_id_mut(id.context()) {
                let _ = context.remove_collector(id);
            }
        }
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
