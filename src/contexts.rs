//! `Contexts`: every context a program declares with [`context!`](crate::context!), built in
//! one call from the `inventory` registrations, lent one at a time by type or
//! several at once ([`Contexts::get_many_mut`]).

use std::fmt;

use crate::aerc::AercMode;
use crate::context::{Context, ContextBuilder};
use crate::error::Error;

pub use crate::context_kind::ContextKind;
pub use crate::id::ContextId;

/// What [`context!`](crate::context!) submits to `inventory`.
#[doc(hidden)]
pub struct ContextRegistration {
    name: &'static str,
    aerc: AercMode,
}

impl ContextRegistration {
    /// Used by [`context!`](crate::context!).
    pub const fn new(name: &'static str, aerc: AercMode) -> Self {
        ContextRegistration { name, aerc }
    }
}

inventory::collect!(ContextRegistration);

/// Declares contexts: for each name, a marker type implementing
/// [`ContextKind`], registered so that [`Contexts::new`] builds it. `fast`
/// before a name picks [`AercMode::Fast`](crate::AercMode::Fast) (default: safe). A visibility may
/// lead each name.
///
/// Components then name their contexts: `component!(Game: Position)`; the
/// compiler checks that the context is declared (and in scope).
///
/// # Example
/// ```
/// use reactecs::{Contexts, Error};
/// pub struct Position(f32, f32);
/// pub struct Key(char);
/// reactecs::context!(pub Game, fast Input);
/// reactecs::component!(Game: Position);
/// reactecs::component!(Input: Key);
///
/// let mut contexts = Contexts::new();
/// let game = contexts.context_mut::<Game>();
/// let e = game.create_entity_with((Position(0.0, 0.0),))?;
/// // `Key` belongs to `Input`, not `Game`:
/// assert!(matches!(game.add(e, Key('w')), Err(Error::WrongContext { .. })));
/// let input = contexts.context_mut::<Input>();
/// input.create_entity_with((Key('w'),))?;
/// assert_eq!(contexts.context::<Input>().len(), 1);
/// # Ok::<(), Error>(())
/// ```
#[macro_export]
macro_rules! context {
    () => {};
    ($vis:vis fast $name:ident $(, $($rest:tt)*)?) => {
        $crate::__context_one!($vis $name Fast);
        $crate::context!($($($rest)*)?);
    };
    ($vis:vis $name:ident $(, $($rest:tt)*)?) => {
        $crate::__context_one!($vis $name Safe);
        $crate::context!($($($rest)*)?);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __context_one {
    ($vis:vis $name:ident $mode:ident) => {
        #[doc = ::core::concat!("The `", ::core::stringify!($name), "` context (declared with `reactecs::context!`).")]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        $vis struct $name;

        impl $crate::ContextKind for $name {
            const NAME: &'static str = ::core::stringify!($name);
            const AERC: $crate::AercMode = $crate::AercMode::$mode;
        }

        $crate::__private::inventory::submit! {
            $crate::__private::ContextRegistration::new(::core::stringify!($name), $crate::AercMode::$mode)
        }
    };
}

/// Every context declared with [`context!`](crate::context!), each built as
/// [`Context::of`](crate::Context::of) builds it, side by side. Systems and features can run on
/// `Contexts` (see [`System`](crate::System)), and reach one context by type.
///
/// # Example
/// ```
/// use reactecs::Contexts;
/// reactecs::context!(Game, Ui);
///
/// let mut contexts = Contexts::new();
/// contexts.context_mut::<Game>().create_entity();
/// assert_eq!(contexts.context::<Game>().len(), 1);
/// assert!(contexts.context::<Ui>().is_empty());
/// assert!(contexts.names().any(|name| name == "Ui"));
/// ```
pub struct Contexts {
    /// By name, so the order is the same on every run.
    list: Vec<Context>,
}

impl Default for Contexts {
    fn default() -> Self {
        Self::new()
    }
}

impl Contexts {
    /// Builds every declared context, empty, ordered by name.
    pub fn new() -> Self {
        let mut found: Vec<&ContextRegistration> = inventory::iter::<ContextRegistration>.into_iter().collect();
        found.sort_by_key(|registration| registration.name);
        found.dedup_by_key(|registration| registration.name);
        let list = found
            .into_iter()
            .map(|registration| {
                ContextBuilder::new()
                    .name(registration.name)
                    .aerc(registration.aerc)
                    .declared(registration.name)
                    .build()
            })
            .collect();
        Contexts { list }
    }

    /// Context `K`: the shorthand for a context declared with
    /// [`context!`](crate::context!), which [`new`](Contexts::new) always
    /// makes. [`get`](Contexts::get) is the same lookup as an `Option`.
    ///
    /// # Panics
    /// If `K` was not collected by `inventory` (a platform `inventory` does
    /// not support); every type made by [`context!`](crate::context!) is
    /// registered, so this is a build problem, not a run-time condition.
    pub fn context<K: ContextKind>(&self) -> &Context {
        self.get::<K>().unwrap_or_else(|| not_collected(K::NAME))
    }

    /// Context `K`, mutably: the shorthand, as [`context`](Contexts::context).
    ///
    /// # Panics
    /// As [`context`](Contexts::context).
    pub fn context_mut<K: ContextKind>(&mut self) -> &mut Context {
        self.get_mut::<K>().unwrap_or_else(|| not_collected(K::NAME))
    }

    /// Context `K`, if it is one of these (as [`by_name`](Contexts::by_name)
    /// and [`by_id`](Contexts::by_id) answer).
    pub fn get<K: ContextKind>(&self) -> Option<&Context> {
        self.by_name(K::NAME)
    }

    /// Context `K`, mutably, if it is one of these.
    pub fn get_mut<K: ContextKind>(&mut self) -> Option<&mut Context> {
        self.by_name_mut(K::NAME)
    }

    /// Several distinct contexts, mutably, at once: `K` is a tuple of two to
    /// four context types, and the result a tuple of `&mut Context` in the
    /// same order. A system that works across contexts borrows them all
    /// instead of copying data out of one before touching the other.
    ///
    /// # Errors
    /// [`Error::ContextRequestedTwice`](Error::ContextRequestedTwice)
    /// if the tuple names a context twice (two `&mut` to one context would
    /// alias); nothing is lent then.
    ///
    /// # Panics
    /// As [`context`](Contexts::context), for a context `inventory` did not collect.
    ///
    /// # Example
    /// ```
    /// use reactecs::{Contexts, Error};
    /// #[derive(Clone, Copy)] struct Cell(i32, i32);
    /// #[derive(Clone, Copy)] struct Click(i32, i32);
    /// reactecs::context!(Game, Input);
    /// reactecs::component!(Game: Cell);
    /// reactecs::component!(Input: Click);
    ///
    /// let mut contexts = Contexts::new();
    /// contexts.context_mut::<Input>().create_entity_with(Click(2, 3))?;
    ///
    /// // Read one context while writing the other, no copying out.
    /// let (game, input) = contexts.get_many_mut::<(Game, Input)>()?;
    /// for click in input.query::<&Click>().iter() {
    ///     game.create_entity_with(Cell(click.0, click.1))?;
    /// }
    /// input.destroy_all_entities();
    /// assert_eq!(contexts.context::<Game>().len(), 1);
    ///
    /// // The same context twice is refused.
    /// assert!(matches!(
    ///     contexts.get_many_mut::<(Game, Game)>(),
    ///     Err(Error::ContextRequestedTwice { context: "Game", .. })
    /// ));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn get_many_mut<K: ContextKinds>(&mut self) -> Result<K::Mut<'_>, Error> {
        K::get_many_mut(self)
    }

    /// The context with instance id `id`, if it is one of these.
    pub fn by_id(&self, id: ContextId) -> Option<&Context> {
        self.list.iter().find(|context| context.id() == id)
    }

    /// The context with instance id `id`, mutably, if it is one of these.
    pub fn by_id_mut(&mut self, id: ContextId) -> Option<&mut Context> {
        self.list.iter_mut().find(|context| context.id() == id)
    }

    /// The context named `name`, if one was declared.
    pub fn by_name(&self, name: &str) -> Option<&Context> {
        self.list.iter().find(|context| context.name() == name)
    }

    /// The context named `name` mutably, if one was declared.
    pub fn by_name_mut(&mut self, name: &str) -> Option<&mut Context> {
        self.list.iter_mut().find(|context| context.name() == name)
    }

    /// The names of the contexts, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.list.iter().map(Context::name)
    }

    /// The contexts, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Context> + '_ {
        self.list.iter()
    }

    /// The contexts by name, mutably.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Context> + '_ {
        self.list.iter_mut()
    }

    /// How many contexts there are.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no context was declared.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Resets every context ([`Context::reset`](crate::Context::reset)), after checking that none
    /// holds a retained entity.
    ///
    /// # Errors
    /// [`Error::EntitiesRetained`](Error::EntitiesRetained) for the
    /// first context with retained entities; then no context has changed.
    pub fn reset(&mut self) -> Result<(), Error> {
        for context in &self.list {
            context.check_resettable()?;
        }
        for context in &mut self.list {
            context.reset()?;
        }
        Ok(())
    }

    /// Where context `name` is in the list.
    fn index_of(&self, name: &'static str) -> usize {
        self.list
            .iter()
            .position(|context| context.name() == name)
            .unwrap_or_else(|| not_collected(name))
    }
}

/// The panic of [`Contexts::context`] for a context `inventory` did not
/// collect.
#[cold]
fn not_collected(name: &'static str) -> ! {
    panic!("context `{name}` was not collected by `inventory`: declare it with `reactecs::context!`")
}

impl fmt::Debug for Contexts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.list).finish()
    }
}

/// A tuple of two to four context types (`(Game, Input)`), for
/// [`Contexts::get_many_mut`]: it names the contexts to lend and the tuple
/// of `&mut Context` they are lent as.
///
/// Whether the contexts are distinct is checked when they are asked for
/// (two marker types may name one context), so a repeated context is an
/// [`Error`](Error), not a compile error.
pub trait ContextKinds {
    /// One `&'a mut Context` per context type, in the same order.
    type Mut<'a>;

    /// The contexts' names, in order.
    fn names() -> Vec<&'static str>;

    /// Lends the contexts; see [`Contexts::get_many_mut`].
    ///
    /// # Errors
    /// [`Error::ContextRequestedTwice`](Error::ContextRequestedTwice)
    /// if a context is named twice.
    fn get_many_mut(contexts: &mut Contexts) -> Result<Self::Mut<'_>, Error>;
}

/// The first name of `names` that appears twice (the first one if none
/// does, which the caller rules out).
fn first_repeated(names: &[&'static str]) -> &'static str {
    names
        .iter()
        .enumerate()
        .find(|&(at, name)| names[..at].contains(name))
        .map_or(names[0], |(_, name)| name)
}

macro_rules! context_kinds {
    ($($kind:ident $context:ident),+) => {
        impl<$($kind: ContextKind),+> ContextKinds for ($($kind,)+) {
            type Mut<'a> = ($(context_kinds!(@lend 'a $kind),)+);

            fn names() -> Vec<&'static str> {
                vec![$($kind::NAME),+]
            }

            fn get_many_mut(contexts: &mut Contexts) -> Result<Self::Mut<'_>, Error> {
                let indices = [$(contexts.index_of($kind::NAME)),+];
                // Every index is in bounds (`index_of` found it), so only a
                // repeated index makes the lend fail.
                let Ok([$($context),+]) = contexts.list.get_disjoint_mut(indices) else {
                    let requested = Self::names();
                    return Err(Error::ContextRequestedTwice {
                        context: first_repeated(&requested),
                        requested,
                    });
                };
                Ok(($($context,)+))
            }
        }
    };
    (@lend $lifetime:lifetime $kind:ident) => { &$lifetime mut Context };
}

context_kinds!(A a, B b);
context_kinds!(A a, B b, C c);
context_kinds!(A a, B b, C c, D d);
