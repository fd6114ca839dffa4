//! Shared test helpers: components, a spy that records events, drop counters.
#![allow(dead_code)]

use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Arc, Mutex};

use reactecs::{Context, ContextEvent};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity {
    pub x: f32,
    pub y: f32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Name(pub String);

/// A zero-sized flag.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frozen;

/// A component without `Debug`.
pub struct Opaque(pub u64);

#[derive(Debug, PartialEq)]
pub struct Score(pub u32);

reactecs::component!(Position, Velocity, Name, Frozen, Opaque);
reactecs::context!(pub Game, pub Ui);
reactecs::component!(Game: unique Score);

/// Records every event of a context as a line of text.
#[derive(Clone, Default)]
pub struct Spy(Arc<Mutex<Vec<String>>>);

impl Spy {
    pub fn attach(context: &mut Context) -> Spy {
        let spy = Spy::default();
        let sink = spy.clone();
        context.subscribe(move |event: &ContextEvent<'_>| sink.0.lock().unwrap().push(describe(event)));
        spy
    }

    /// The events recorded since the last call.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

pub fn describe(event: &ContextEvent<'_>) -> String {
    match event {
        ContextEvent::EntityCreated { entity } => format!("created {entity}"),
        ContextEvent::EntityWillBeDestroyed { entity } => format!("will destroy {entity:?}"),
        ContextEvent::EntityDestroyed { entity } => format!("destroyed {entity}"),
        ContextEvent::EntityReleased { entity } => format!("released {entity}"),
        ContextEvent::ComponentAdded { entity, component } => format!("added {entity} {component:?}"),
        ContextEvent::ComponentRemoved { entity, component } => format!("removed {entity} {component:?}"),
        ContextEvent::ComponentReplaced { entity, old, new } => format!("replaced {entity} {old:?} -> {new:?}"),
        other => format!("{other:?}"),
    }
}

/// A per-test counter of live values: `Counted` instances made with it
/// decrement it when dropped, so a test can assert drops == constructions.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicIsize>);

impl Counter {
    pub fn make(&self, label: &str) -> Counted {
        self.0.fetch_add(1, Ordering::SeqCst);
        Counted {
            label: label.to_owned(),
            counter: self.0.clone(),
        }
    }

    pub fn live(&self) -> isize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A component that owns heap memory and counts itself.
#[derive(Debug)]
pub struct Counted {
    pub label: String,
    counter: Arc<AtomicIsize>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A second counting component, so entities can hold two owned values.
#[derive(Debug)]
pub struct CountedToo(pub Counted);

reactecs::component!(Counted, CountedToo);

/// `full` normally, a small size under Miri (which runs ~1000x slower).
pub const fn scale(full: usize) -> usize {
    if cfg!(miri) { full / 50 + 1 } else { full }
}

/// Asserts the context's invariants hold.
pub fn check(context: &Context) {
    if let Err(broken) = context.check_invariants() {
        panic!("invariant broken: {broken}");
    }
}

/// A `Clone` component for collectors that keep removed values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Health(pub u32);

reactecs::component!(Health);

impl Spy {
    /// The events recorded since the last call whose line starts with
    /// `prefix` (e.g. `"released"`); the others are dropped too.
    pub fn take_starting_with(&self, prefix: &str) -> Vec<String> {
        self.take()
            .into_iter()
            .filter(|line| line.starts_with(prefix))
            .collect()
    }
}

/// The message a panic carried (`panic!` with a literal or with format
/// arguments), or `"<not a string>"`.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<not a string>")
}

/// Runs `f`, which must panic with a message containing `expected`: a test
/// of a panic path checks that it is that panic and not some other one.
#[track_caller]
pub fn assert_panics<R>(expected: &str, f: impl FnOnce() -> R) {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic with {expected:?}, but the call returned"),
        Err(payload) => {
            let message = panic_message(&*payload);
            assert!(
                message.contains(expected),
                "expected a panic with {expected:?}, got {message:?}"
            );
        }
    }
}

/// What a refused call must leave as it was, as lines to compare before and
/// after: every entity with its components and retain count, every group
/// (matcher, members, archetypes, handlers), every collector (with what it
/// holds) and every index (with its key and entity counts).
pub fn whole_state(game: &mut Context) -> Vec<String> {
    // Collectors first: reading them gathers (and retains) what was written.
    let collectors: Vec<String> = game.collectors().map(|collector| format!("{collector:?}")).collect();
    let mut lines: Vec<String> = game
        .entities()
        .map(|e| {
            format!(
                "{:?} created {} retained {}",
                game.entity(e).unwrap(),
                game.creation_index(e).unwrap(),
                game.aerc().retain_count(e).unwrap()
            )
        })
        .collect();
    lines.extend(game.groups().map(|group| format!("{group:?} {:?}", group.entities())));
    lines.extend(collectors);
    lines.extend(game.indices().map(|index| index.to_string()));
    lines
}
