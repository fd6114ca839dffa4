//! Components: the `Component` trait, the typed declaration each type
//! registers with `inventory`, and the `component!` declaration macro. What
//! the registry built from the declarations knows of each type
//! (`ComponentInfo`, `ComponentRef`) stands below, in storage; the ids in
//! `id.rs`.

use std::fmt;
use std::marker::PhantomData;

pub use crate::id::ComponentId;
use crate::query_param::FetchKind;
use crate::recycle::PoolMaker;
use crate::storage::{ComponentInfo, ComponentRef, DebugFn, IdCell, Registration, StorageKind, TypedId, registry};

/// A component: plain data attached to entities.
///
/// Implement it only through [`component!`](crate::component!), which also
/// registers the type (with `inventory`) and gives it a cached id, so typed
/// access never hashes. Components are `Send + Sync + 'static` so contexts can
/// be moved to and shared between threads.
///
/// # Example
/// ```
/// use reactecs::Component;
/// #[derive(Debug)]
/// struct Position { x: f32, y: f32 }
/// reactecs::component!(Position);
///
/// assert_eq!(Position::component_info().name(), "Position");
/// assert_eq!(Position::component_id(), Position::component_id());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component",
    label = "not declared as a component",
    note = "declare it with `reactecs::component!({Self})` (components are `Send + Sync + 'static`)"
)]
pub trait Component: Send + Sync + 'static {
    /// Where values of this type live; set by the declaration
    /// (`component!(flag T)`, `component!(sparse T)`), never by hand.
    #[doc(hidden)]
    const STORAGE: StorageKind = StorageKind::Archetype;

    /// Whether removed values go back to a pool (`component!(pooled T)`);
    /// set by the declaration, never by hand.
    #[doc(hidden)]
    const POOLED: bool = false;

    /// How queries fetch this type: from archetype columns, or from its
    /// sparse set; set by the declaration to match `STORAGE`.
    #[doc(hidden)]
    type Fetch: FetchKind<Self>;

    /// The static registration the declaration macro made for this type. It is
    /// typed, so an implementation can only hand out a registration of its own
    /// type: ids and types correspond one to one.
    #[doc(hidden)]
    fn registration() -> &'static ComponentRegistration<Self>
    where
        Self: Sized;

    /// This type's component id (cached: one atomic load after the first call).
    #[inline]
    fn component_id() -> ComponentId
    where
        Self: Sized,
    {
        Self::registration().id()
    }

    /// This type's registry entry.
    fn component_info() -> &'static ComponentInfo
    where
        Self: Sized,
    {
        &registry()[Self::component_id().index()]
    }
}

/// `T`'s id as storage trusts it: from `T`'s registration (typed, its id
/// set by the registry only), never from [`Component::component_id`],
/// which an implementation could override.
#[inline(always)]
pub(crate) fn typed_id<T: Component>() -> TypedId<T> {
    T::registration().typed_id()
}

/// The declaration of component type `T`: its cached id, and what the
/// registry needs to describe it.
#[doc(hidden)]
pub struct ComponentRegistration<T> {
    id: IdCell<T>,
    name: &'static str,
    unique: bool,
    storage: StorageKind,
    contexts: &'static [&'static str],
    debug: fn() -> Option<DebugFn>,
    pool: Option<PoolMaker>,
    _type: PhantomData<fn() -> T>,
}

impl<T: Component> ComponentRegistration<T> {
    /// Used by [`component!`](crate::component!).
    pub const fn new(
        name: &'static str,
        unique: bool,
        storage: StorageKind,
        contexts: &'static [&'static str],
        debug: fn() -> Option<DebugFn>,
        pool: Option<PoolMaker>,
    ) -> Self {
        ComponentRegistration {
            id: IdCell::new(),
            name,
            unique,
            storage,
            contexts,
            debug,
            pool,
            _type: PhantomData,
        }
    }

    /// Whether the type was declared `unique` (no registry lookup).
    #[inline]
    pub(crate) fn is_unique(&self) -> bool {
        self.unique
    }

    #[inline]
    fn id(&'static self) -> ComponentId {
        self.typed_id().id()
    }

    /// The id, as storage trusts it to name `T`'s columns.
    #[inline(always)]
    pub(crate) fn typed_id(&'static self) -> TypedId<T> {
        match self.id.get() {
            Some(id) => id,
            None => self.assign(),
        }
    }

    #[cold]
    fn assign(&'static self) -> TypedId<T> {
        registry();
        match self.id.get() {
            None => panic!(
                "component `{}` was not collected by `inventory`: implement `Component` only \
                 through `reactecs::component!`, on a platform `inventory` supports",
                std::any::type_name::<T>()
            ),
            Some(id) => id,
        }
    }
}

impl<T: Component> Registration for ComponentRegistration<T> {
    fn describe(&self) -> ComponentInfo {
        ComponentInfo::describe::<T>(
            self.name,
            self.unique,
            self.storage,
            self.contexts,
            (self.debug)(),
            self.pool,
        )
    }

    fn assign_id(&self, info: &ComponentInfo) {
        self.id.assign(info);
    }
}

/// Picks a [`DebugFn`] for types that implement `Debug` and none for others
/// (autoref specialisation: the macro calls `(&&DebugProbe::<T>::new()).debug_fn()`).
#[doc(hidden)]
pub struct DebugProbe<T>(PhantomData<T>);

impl<T> DebugProbe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        DebugProbe(PhantomData)
    }
}

impl<T> Default for DebugProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when the component implements `Debug`.
#[doc(hidden)]
pub trait ViaDebug {
    /// The formatter for the probed type.
    fn debug_fn(&self) -> Option<DebugFn>;
}

impl<T: fmt::Debug + 'static> ViaDebug for &DebugProbe<T> {
    fn debug_fn(&self) -> Option<DebugFn> {
        fn debug<T: fmt::Debug + 'static>(value: &ComponentRef<'_>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match value.get::<T>() {
                Some(value) => value.fmt(f),
                None => f.write_str("?"),
            }
        }
        Some(debug::<T>)
    }
}

/// Chosen when the component does not implement `Debug`.
#[doc(hidden)]
pub trait ViaName {
    /// No formatter: the value prints as `Name(..)`.
    fn debug_fn(&self) -> Option<DebugFn>;
}

impl<T> ViaName for DebugProbe<T> {
    fn debug_fn(&self) -> Option<DebugFn> {
        None
    }
}

/// Declares component types.
///
/// Each type gets a cached [`ComponentId`], its registration with `inventory`,
/// and an implementation of [`Component`].
///
/// ```
/// # #[derive(Debug)] pub struct Position { pub x: f32, pub y: f32 }
/// # #[derive(Debug)] pub struct Velocity { pub x: f32, pub y: f32 }
/// # pub struct Name(pub String);
/// # pub struct Score(pub u32);
/// # pub struct Frozen;
/// # #[derive(Default)] pub struct Burning;
/// # pub struct Target(pub u32);
/// reactecs::context!(Game);
/// // Plain components, usable in any context:
/// reactecs::component!(Position, Velocity, Frozen);
/// // Components of named contexts; `unique` marks a singleton:
/// reactecs::component!(Game: Name, unique Score);
/// // Kept out of archetypes: adding or removing them moves nothing.
/// reactecs::component!(flag Burning, sparse Target);
/// ```
///
/// - `unique T` marks a singleton component (at most one entity holds it).
/// - `flag T` (zero-sized types only: a compile error otherwise) and
///   `sparse T` keep the component out of archetypes, in a sparse set per
///   type, so adding and removing it never moves the entity's row: for tags
///   and small components that come and go every frame. Every call works
///   the same whatever the kind; a query filters by them (`matching`, a
///   group) or fetches them, looked up row by row. See "Flags and sparse components" in
///   the crate docs for when to choose which. `unique flag T` and
///   `unique sparse T` combine.
/// - `pooled T` (for types implementing [`Recycle`](crate::Recycle), a
///   compile error otherwise) gives the type a pool per context: its removed,
///   replaced and destroyed values are recycled and kept for
///   [`PoolMut::take`](crate::PoolMut::take) (see
///   the [`Recycle`](crate::Recycle) docs). It combines as `unique pooled T`,
///   `pooled sparse T` and `unique pooled sparse T` (flags hold nothing to
///   pool).
/// - One declaration may list hundreds of plain types; each `unique`,
///   `flag`, `sparse` or `pooled` entry costs the macro a level of recursion (the
///   default limit is 128). Write such a type's path as `unique X` or
///   `unique crate::X`, not `unique ::X` (which reads as the path
///   `unique::X`).
/// - `Game, Ui: T` names the contexts the type belongs to: each must be
///   declared with [`context!`](crate::context!) and in scope (the compiler
///   checks). A declared context ([`Context::of`](crate::Context::of),
///   [`Contexts`](crate::Contexts)) accepts only its own components and those
///   declared without contexts; a context made with `Context::new` or
///   `with_name` accepts every component. A type is declared once: list all of
///   its contexts in one declaration.
/// - The type must be `Send + Sync + 'static` and local to the crate (wrap
///   foreign types in a newtype). Generic types are declared per
///   instantiation (`component!(Cell<u8>)`).
#[macro_export]
macro_rules! component {
    ($($context:ident),+ : $($rest:tt)+) => {
        $crate::__component_list!([$(<$context as $crate::ContextKind>::NAME),+] $($rest)+);
    };
    ($($rest:tt)+) => {
        $crate::__component_list!([] $($rest)+);
    };
}

// Plain types are declared by repetition, without recursion; the list is
// munched entry by entry only around keyword entries (`unique`, `flag`,
// `sparse`), eight plain types at a time, so a declaration of hundreds of
// types stays far below the recursion limit. (`unique Foo` never matches a
// `$ty:ty, ` entry: the type parsed is `unique`, and `Foo` is not a comma.)
#[doc(hidden)]
#[macro_export]
macro_rules! __component_list {
    ($contexts:tt $(,)?) => {};
    ($contexts:tt $($ty:ty),+ $(,)?) => {
        $($crate::__component_one!($contexts false Archetype plain $ty);)+
    };
    ($contexts:tt unique flag $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts true Flag plain $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt unique pooled sparse $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts true Sparse pooled $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt unique sparse $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts true Sparse plain $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt unique pooled $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts true Archetype pooled $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt unique $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts true Archetype plain $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt flag $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts false Flag plain $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt pooled sparse $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts false Sparse pooled $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt sparse $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts false Sparse plain $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt pooled $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__component_one!($contexts false Archetype pooled $ty);
        $crate::__component_list!($contexts $($($rest)*)?);
    };
    ($contexts:tt $t0:ty, $t1:ty, $t2:ty, $t3:ty, $t4:ty, $t5:ty, $t6:ty, $t7:ty, $($rest:tt)+) => {
        $crate::__component_list!($contexts $t0, $t1, $t2, $t3, $t4, $t5, $t6, $t7);
        $crate::__component_list!($contexts $($rest)+);
    };
    ($contexts:tt $ty:ty, $($rest:tt)+) => {
        $crate::__component_one!($contexts false Archetype plain $ty);
        $crate::__component_list!($contexts $($rest)+);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __pool_maker {
    (plain $ty:ty) => {
        ::core::option::Option::None
    };
    (pooled $ty:ty) => {
        ::core::option::Option::Some($crate::__private::PoolMaker::of::<$ty>())
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __pooled {
    (plain) => {
        false
    };
    (pooled) => {
        true
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __fetch_kind {
    (Archetype) => {
        $crate::__private::InColumns
    };
    (Flag) => {
        $crate::__private::InSparseSets
    };
    (Sparse) => {
        $crate::__private::InSparseSets
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __component_one {
    (@declare $contexts:tt $unique:literal $kind:ident $pool:ident $ty:ty) => {
        const _: () = {
            fn debug() -> ::core::option::Option<$crate::__private::DebugFn> {
                #[allow(unused_imports)]
                use $crate::__private::{ViaDebug as _, ViaName as _};
                (&&$crate::__private::DebugProbe::<$ty>::new()).debug_fn()
            }
            static REGISTRATION: $crate::__private::ComponentRegistration<$ty> =
                $crate::__private::ComponentRegistration::new(
                    ::core::stringify!($ty),
                    $unique,
                    $crate::StorageKind::$kind,
                    &$contexts,
                    debug,
                    $crate::__pool_maker!($pool $ty),
                );
            impl $crate::Component for $ty {
                const STORAGE: $crate::StorageKind = $crate::StorageKind::$kind;
                const POOLED: bool = $crate::__pooled!($pool);
                type Fetch = $crate::__fetch_kind!($kind);

                #[inline]
                fn registration() -> &'static $crate::__private::ComponentRegistration<Self> {
                    &REGISTRATION
                }
            }
            $crate::__private::inventory::submit! {
                $crate::__private::RegisteredComponent(&REGISTRATION)
            }
        };
    };
    ($contexts:tt $unique:literal Flag $pool:ident $ty:ty) => {
        const _: () = ::core::assert!(
            ::core::mem::size_of::<$ty>() == 0,
            "a `flag` component must be zero-sized: declare a component with data `sparse` instead"
        );
        $crate::__component_one!(@declare $contexts $unique Flag $pool $ty);
    };
    ($contexts:tt $unique:literal $kind:ident $pool:ident $ty:ty) => {
        $crate::__component_one!(@declare $contexts $unique $kind $pool $ty);
    };
}
