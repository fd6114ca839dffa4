//! The four phases of a system, and the phase methods a container of
//! systems implements by its own `try_` ones.

use std::fmt;

/// One of the four phases of a [`System`](super::System), as named in a
/// [`SystemFailed`](super::SystemFailed) report and in `tracing` spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// [`System::initialize`](super::System::initialize): once, before the first frame.
    Initialize,
    /// [`System::execute`](super::System::execute): every frame.
    Execute,
    /// [`System::cleanup`](super::System::cleanup): every frame, after `execute`.
    Cleanup,
    /// [`System::teardown`](super::System::teardown): once, at the end.
    Teardown,
}

impl Phase {
    /// The phase's method name: `"initialize"`, `"execute"`, `"cleanup"` or
    /// `"teardown"`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Initialize => "initialize",
            Phase::Execute => "execute",
            Phase::Cleanup => "cleanup",
            Phase::Teardown => "teardown",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The eight phase methods of [`System`](super::System) for a container of systems
/// (`Systems`, `Feature`): each is the container's own `try_` phase
/// (`$container::try_execute`, ...), and a plain one panics with its
/// [`SystemFailed`](super::SystemFailed) report. Expanded inside the
/// container's `impl System<W>`.
macro_rules! container_phases {
    ($container:ident) => {
        fn initialize(&mut self, world: &mut W) {
            $crate::system::or_panic($container::try_initialize(self, world));
        }

        fn execute(&mut self, world: &mut W) {
            $crate::system::or_panic($container::try_execute(self, world));
        }

        fn cleanup(&mut self, world: &mut W) {
            $crate::system::or_panic($container::try_cleanup(self, world));
        }

        fn teardown(&mut self, world: &mut W) {
            $crate::system::or_panic($container::try_teardown(self, world));
        }

        fn try_initialize(&mut self, world: &mut W) -> $crate::system::SystemResult {
            Ok($container::try_initialize(self, world)?)
        }

        fn try_execute(&mut self, world: &mut W) -> $crate::system::SystemResult {
            Ok($container::try_execute(self, world)?)
        }

        fn try_cleanup(&mut self, world: &mut W) -> $crate::system::SystemResult {
            Ok($container::try_cleanup(self, world)?)
        }

        fn try_teardown(&mut self, world: &mut W) -> $crate::system::SystemResult {
            Ok($container::try_teardown(self, world)?)
        }
    };
}

pub(super) use container_phases;

#[cfg(all(test, feature = "tracing"))]
mod tests {
    use std::fmt;
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::subscriber::Subscriber;
    use tracing::{Event, Metadata};

    use crate::context::Context;
    use crate::system::{Feature, System, SystemResult};

    /// A span as the subscriber saw it: its name and fields.
    #[derive(Clone, Debug, Default)]
    struct Seen {
        span: &'static str,
        name: String,
        phase: String,
    }

    impl Visit for Seen {
        fn record_str(&mut self, field: &Field, value: &str) {
            match field.name() {
                "name" => self.name = value.to_owned(),
                "phase" => self.phase = value.to_owned(),
                _ => {}
            }
        }

        fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
            self.record_str(field, &format!("{value:?}"));
        }
    }

    /// Records each span entered, with how deep it was entered.
    #[derive(Default)]
    struct Recorder {
        spans: Mutex<Vec<Seen>>,
        depth: Mutex<usize>,
        entered: Arc<Mutex<Vec<(usize, String)>>>,
    }

    impl Subscriber for Recorder {
        fn enabled(&self, _metadata: &Metadata<'_>) -> bool {
            true
        }

        fn new_span(&self, attributes: &Attributes<'_>) -> Id {
            let mut seen = Seen {
                span: attributes.metadata().name(),
                ..Seen::default()
            };
            attributes.record(&mut seen);
            let mut spans = self.spans.lock().unwrap();
            spans.push(seen);
            Id::from_u64(spans.len() as u64)
        }

        fn record(&self, _span: &Id, _values: &Record<'_>) {}

        fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

        fn event(&self, _event: &Event<'_>) {}

        fn enter(&self, span: &Id) {
            let seen = self.spans.lock().unwrap()[span.into_u64() as usize - 1].clone();
            let mut depth = self.depth.lock().unwrap();
            self.entered
                .lock()
                .unwrap()
                .push((*depth, format!("{} {} {}", seen.span, seen.phase, seen.name)));
            *depth += 1;
        }

        fn exit(&self, _span: &Id) {
            *self.depth.lock().unwrap() -= 1;
        }
    }

    struct Move;
    impl System for Move {}

    struct Fails;
    impl System for Fails {
        fn try_cleanup(&mut self, _game: &mut Context) -> SystemResult {
            Err("no".into())
        }
    }

    #[test]
    fn every_phase_of_every_child_runs_in_a_span_named_after_the_system() {
        let recorder = Recorder::default();
        let entered = recorder.entered.clone();
        let mut game = Context::new();
        let mut frame = Feature::new("Game")
            .with(Move)
            .with(Feature::new("Physics").with(Fails));
        tracing::subscriber::with_default(recorder, || {
            frame.try_initialize(&mut game).unwrap();
            frame.try_execute(&mut game).unwrap();
            frame.try_cleanup(&mut game).unwrap_err();
            frame.try_teardown(&mut game).unwrap();
        });
        let entered = entered.lock().unwrap().clone();
        let at = |depth: usize, line: &str| (depth, line.to_owned());
        assert_eq!(
            entered,
            [
                at(0, "system initialize Move"),
                at(0, "system initialize Physics"),
                at(1, "system initialize Fails"),
                at(0, "system execute Move"),
                at(0, "system execute Physics"),
                at(1, "system execute Fails"),
                at(0, "system cleanup Move"),
                at(0, "system cleanup Physics"),
                at(1, "system cleanup Fails"),
                at(0, "system teardown Move"),
                at(0, "system teardown Physics"),
                at(1, "system teardown Fails"),
            ]
        );
    }
}
