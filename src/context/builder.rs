//! `ContextBuilder`: the options a context is built with.

use super::Context;
use crate::aerc::AercMode;
use crate::context_kind::ContextKind;
use crate::storage::{ComponentSet, registry};

/// The options of a new [`Context`]: its name, its [`AercMode`], and, for a
/// context declared with [`context!`](crate::context!), which components it
/// accepts.
///
/// # Example
/// ```
/// use reactecs::{AercMode, Context};
/// let game = Context::builder().name("Game").aerc(AercMode::Fast).build();
/// assert_eq!(game.name(), "Game");
/// assert_eq!(game.aerc().mode(), AercMode::Fast);
/// ```
#[derive(Clone, Debug)]
pub struct ContextBuilder {
    name: &'static str,
    aerc: AercMode,
    /// The declared context whose components it accepts (`None`: all).
    declared: Option<&'static str>,
}

impl Default for ContextBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextBuilder {
    /// A context named `Context`, in safe AERC mode, accepting every
    /// component.
    pub fn new() -> Self {
        ContextBuilder {
            name: "Context",
            aerc: AercMode::Safe,
            declared: None,
        }
    }

    /// The options of declared context `K`: its name and mode, and it accepts
    /// only components declared for it (or for no context in particular).
    pub fn of<K: ContextKind>() -> Self {
        ContextBuilder {
            name: K::NAME,
            aerc: K::AERC,
            declared: Some(K::NAME),
        }
    }

    /// Sets the name, used in error messages and `Debug`.
    pub fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Sets how retains are counted.
    pub fn aerc(mut self, mode: AercMode) -> Self {
        self.aerc = mode;
        self
    }

    /// Makes it the declared context `name`, accepting only its components.
    pub(crate) fn declared(mut self, name: &'static str) -> Self {
        self.declared = Some(name);
        self
    }

    /// Builds the context.
    pub fn build(self) -> Context {
        let accepts = self.declared.map(|declared| {
            let mut set = ComponentSet::default();
            for info in registry() {
                if info.contexts().is_empty() || info.contexts().contains(&declared) {
                    set.insert(info.id());
                }
            }
            set
        });
        Context::from_parts(self.name, self.aerc, accepts)
    }
}

impl Context {
    /// An empty context declared with [`context!`](crate::context!): named
    /// after `K`, in `K`'s AERC mode, accepting the components declared for
    /// it. Adding another component is [`Error::WrongContext`](crate::Error::WrongContext).
    pub fn of<K: ContextKind>() -> Self {
        ContextBuilder::of::<K>().build()
    }
}
