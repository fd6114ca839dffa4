//! Fallible systems: what a phase returns, and the report a container gives
//! when one of its systems fails.

use std::error::Error as StdError;
use std::fmt;

use super::Phase;

/// What a fallible phase returns ([`System::try_execute`](super::System::try_execute)
/// and its siblings): `Ok(())`, or any error, boxed.
///
/// Any error type converts with `?` (a [`reactecs::Error`](crate::Error)
/// from a context call, an `std::io::Error`, ...), and so do strings:
/// `Err("the board is full".into())`.
pub type SystemResult = Result<(), Box<dyn StdError + Send + Sync + 'static>>;

/// A system failed: which one (its [`name`](super::System::name), as in
/// timings), in which [`Phase`], inside which features, and why.
///
/// Returned by the `try_` phases of [`Feature`](super::Feature) and
/// [`Systems`](super::Systems). `Display` gives the whole story, e.g.
/// ``system `Fill` failed in `initialize` (feature `Game` > `Board`): entity 3v1
/// in context `Game` already has component `Piece`: ...``; [`error`](Self::error)
/// is the system's own error, to downcast (also given as the
/// [`source`](std::error::Error::source)).
///
/// # Example
/// ```
/// use reactecs::prelude::*;
/// use reactecs::system::Phase;
/// struct Piece;
/// reactecs::component!(Piece);
///
/// /// Adds a second `Piece` to an entity that has one: the `add` fails.
/// struct Fill;
/// impl System for Fill {
///     fn try_initialize(&mut self, game: &mut Context) -> SystemResult {
///         let e = game.create_entity_with(Piece)?;
///         game.add(e, Piece)?;
///         Ok(())
///     }
/// }
///
/// let mut game = Context::with_name("Game");
/// let mut frame = Feature::new("Game").with(Feature::new("Board").with(Fill));
/// let failure = frame.try_initialize(&mut game).unwrap_err();
/// assert_eq!((failure.system(), failure.phase()), ("Fill", Phase::Initialize));
/// assert_eq!(failure.features(), ["Game", "Board"]);
/// assert!(matches!(
///     failure.error().downcast_ref::<Error>(),
///     Some(Error::ComponentAlreadyPresent { component: "Piece", .. })
/// ));
/// assert!(failure.to_string().starts_with("system `Fill` failed in `initialize` (feature `Game` > `Board`): "));
/// ```
pub struct SystemFailed {
    system: String,
    phase: Phase,
    /// The features around the system, outermost first.
    features: Vec<String>,
    error: Box<dyn StdError + Send + Sync + 'static>,
}

impl SystemFailed {
    /// `system` failed in `phase` with `error`, outside any feature.
    pub fn new(system: impl Into<String>, phase: Phase, error: Box<dyn StdError + Send + Sync + 'static>) -> Self {
        SystemFailed {
            system: system.into(),
            phase,
            features: Vec::new(),
            error,
        }
    }

    /// The report for child `child` of a container (named `container`, or
    /// unnamed as [`Systems`](super::Systems) is) that returned `error` in
    /// `phase`: a failure the child reported itself (a nested container) gets
    /// `container` in front of its features; any other error makes a new
    /// report naming `child`.
    pub(crate) fn from_child(
        container: Option<&str>,
        child: &str,
        phase: Phase,
        error: Box<dyn StdError + Send + Sync + 'static>,
    ) -> Self {
        let mut failure = match error.downcast::<SystemFailed>() {
            Ok(nested) => *nested,
            Err(error) => SystemFailed::new(child, phase, error),
        };
        if let Some(container) = container {
            failure.features.insert(0, container.to_owned());
        }
        failure
    }

    /// The name of the system that failed.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// The phase it failed in.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The names of the features it runs in, outermost first (empty when it
    /// ran in an unnamed [`Systems`](super::Systems) or on its own).
    pub fn features(&self) -> &[String] {
        &self.features
    }

    /// The error the system returned (downcast it to its type, e.g. with
    /// `failure.error().downcast_ref::<reactecs::Error>()`).
    pub fn error(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.error
    }

    /// The error the system returned, owned.
    pub fn into_error(self) -> Box<dyn StdError + Send + Sync + 'static> {
        self.error
    }
}

impl fmt::Display for SystemFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "system `{}` failed in `{}`", self.system, self.phase)?;
        if let Some((first, rest)) = self.features.split_first() {
            write!(f, " (feature `{first}`")?;
            for feature in rest {
                write!(f, " > `{feature}`")?;
            }
            f.write_str(")")?;
        }
        write!(f, ": {}", self.error)
    }
}

impl fmt::Debug for SystemFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemFailed")
            .field("system", &self.system)
            .field("phase", &self.phase)
            .field("features", &self.features)
            .field("error", &self.error)
            .finish()
    }
}

impl StdError for SystemFailed {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.error)
    }
}

/// Unwraps the result of a `try_` phase for the plain phase that cannot
/// return it.
///
/// # Panics
/// With the failure's message, if there is one.
#[track_caller]
pub(crate) fn or_panic(result: Result<(), SystemFailed>) {
    if let Err(failure) = result {
        panic!("{failure} (run the `try_` phase to get the error instead of a panic)");
    }
}
