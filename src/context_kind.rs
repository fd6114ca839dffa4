//! `ContextKind`: the marker type of a context declared with
//! [`context!`](crate::context!), which names it and sets its mode. It
//! stands below `Context`, whose builder reads it, and below `Contexts`,
//! which finds contexts by it.

use crate::aerc::AercMode;

/// A context declared with [`context!`](crate::context!): a marker type naming it. Components
/// name the contexts they belong to (`component!(Game: Position)`), and
/// [`Contexts::context::<Game>()`](crate::Contexts::context) finds it.
pub trait ContextKind: 'static {
    /// The context's name (the marker type's name).
    const NAME: &'static str;
    /// How the context counts retains.
    const AERC: AercMode;
}
