//! Components: the `Component` trait, component ids and infos, the global
//! registry built from `inventory`, and the `component!` declaration macro.

use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::recycle::PoolMaker;
use crate::storage::{ErasedRef, TypeInfo};

/// The id of a component type: a small dense integer, the same for a type in
/// every context of the program. Ids are given to all declared components at
/// once, in the order of their full type names, so they do not depend on which
/// type is used first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ComponentId(u32);

impl ComponentId {
    /// The id of the declared component with the given index (for runtime
    /// matchers and sets): `0..ComponentInfo::all().len()`.
    ///
    /// # Errors
    /// [`Error::UnknownComponent`](crate::Error::UnknownComponent) for an
    /// index no declared component has. (So a [`Matcher`](crate::Matcher) or
    /// [`ComponentSet`](crate::ComponentSet) only ever holds declared ids,
    /// and stays a few words long.)
    ///
    /// # Example
    /// ```
    /// use reactecs::{Component, ComponentId, ComponentInfo, Error};
    /// struct Health(u32);
    /// reactecs::component!(Health);
    /// let id = Health::component_id();
    /// assert_eq!(ComponentId::from_index(id.index()), Ok(id));
    /// let past = ComponentInfo::all().len();
    /// assert!(matches!(ComponentId::from_index(past), Err(Error::UnknownComponent { .. })));
    /// assert!(ComponentId::from_index(usize::MAX).is_err());
    /// ```
    pub fn from_index(index: usize) -> Result<Self, crate::Error> {
        let declared = registry().len();
        if index < declared {
            Ok(ComponentId::at(index))
        } else {
            Err(crate::Error::UnknownComponent { index, declared })
        }
    }

    /// The id with the given index, declared or not (storage and sets work
    /// on indices they were given by ids).
    #[inline]
    pub(crate) fn at(index: usize) -> Self {
        ComponentId(u32::try_from(index).expect("an index of the registry or of a u32 id fits in u32"))
    }

    /// This id as an index, `0..ComponentInfo::all().len()` for declared types.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The declared component with this id, if any.
    pub fn info(self) -> Option<&'static ComponentInfo> {
        registry().get(self.index())
    }

    /// The declared name of the component, `?` for an unknown id (what
    /// errors name).
    pub(crate) fn name(self) -> &'static str {
        self.info().map_or("?", ComponentInfo::name)
    }
}

impl fmt::Display for ComponentId {
    /// The component's declared name, or `#index` for an unknown id.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Some(info) => f.write_str(info.name()),
            None => write!(f, "#{}", self.0),
        }
    }
}

/// Where a component type's values live, chosen when it is declared (see
/// [`component!`](crate::component!) and "Flags and sparse components" in
/// the crate docs, which has the measured costs).
///
/// | kind | declared | add or remove | in queries | choose it for |
/// |---|---|---|---|---|
/// | `Archetype` | `component!(T)` | moves the entity's row | fetched, in dense chunk slices | data read in bulk |
/// | `Flag` | `component!(flag T)`, zero-sized | moves nothing | a per-row filter, or fetched as `&T` | tags toggled often |
/// | `Sparse` | `component!(sparse T)` | moves nothing | fetched as `&T`, `&mut T`, `Option<&T>`, looked up per row | small values that come and go |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StorageKind {
    /// In the columns of the entity's archetype (the default): iteration
    /// walks dense chunks; adding or removing the component moves the
    /// entity's row to another archetype.
    Archetype,
    /// A zero-sized tag kept beside the archetypes (declared `flag T`):
    /// setting or clearing it moves nothing.
    Flag,
    /// A value kept in a sparse set per type (declared `sparse T`): adding or
    /// removing it moves nothing; reading it costs a lookup per entity.
    Sparse,
}

impl StorageKind {
    /// Whether values of this kind stay out of archetypes (so adding or
    /// removing one never moves the entity).
    #[inline(always)]
    pub const fn is_sparse(self) -> bool {
        !matches!(self, StorageKind::Archetype)
    }
}

/// Formats a component value for `Debug` output, given a view of it.
#[doc(hidden)]
pub type DebugFn = fn(&ComponentRef<'_>, &mut fmt::Formatter<'_>) -> fmt::Result;

/// A read-only view of one component value whose type is known only at run
/// time. Events carry these (the added value, the removed value, the old and the
/// new value of a replace); [`ComponentRef::get`](crate::ComponentRef::get) gives back the typed value.
///
/// # Example
/// ```
/// use reactecs::{Context, ContextEvent};
/// # #[derive(Debug, PartialEq)] struct Health(u32);
/// # reactecs::component!(Health);
/// let mut game = Context::new();
/// game.subscribe(|event: &ContextEvent<'_>| {
///     if let ContextEvent::ComponentAdded { component, .. } = event {
///         assert_eq!(component.get::<Health>(), Some(&Health(10)));
///         assert_eq!(component.name(), "Health");
///     }
/// });
/// let e = game.create_entity();
/// game.add(e, Health(10)).unwrap();
/// ```
///
/// Two views are equal when they view the same value: the same component,
/// at the same place in memory. Values are not compared (a component type
/// need not be `PartialEq`): compare what [`get`](ComponentRef::get) gives
/// for that.
#[derive(Clone, Copy)]
pub struct ComponentRef<'a> {
    info: &'static ComponentInfo,
    value: ErasedRef<'a>,
}

impl<'a> ComponentRef<'a> {
    /// A view of `value`, described by `info`.
    #[inline]
    pub(crate) fn new<T: Component>(info: &'static ComponentInfo, value: &'a T) -> Self {
        debug_assert_eq!(
            info.ty.type_id(),
            std::any::TypeId::of::<T>(),
            "the info of another type"
        );
        ComponentRef {
            info,
            value: ErasedRef::of(value),
        }
    }

    /// A view of a stored value, described by `info`.
    #[inline]
    pub(crate) fn from_erased(info: &'static ComponentInfo, value: ErasedRef<'a>) -> Self {
        debug_assert_eq!(info.ty.type_id(), value.type_id(), "the info of another type");
        ComponentRef { info, value }
    }

    /// A view of `value`, a value of the same component type as `self`'s
    /// (e.g. the old value beside a new one).
    #[inline]
    pub(crate) fn sibling<'b, T: Component>(&self, value: &'b T) -> ComponentRef<'b> {
        ComponentRef::new(self.info, value)
    }

    /// The value, if it is a `T`.
    #[inline]
    pub fn get<T: 'static>(&self) -> Option<&'a T> {
        self.value.get::<T>()
    }

    /// The component's id.
    pub fn id(&self) -> ComponentId {
        self.info.id()
    }

    /// The component's name as declared (for example `Position`).
    pub fn name(&self) -> &'static str {
        self.info.name()
    }

    /// Everything known about the component type.
    pub fn info(&self) -> &'static ComponentInfo {
        self.info
    }
}

impl PartialEq for ComponentRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.info.id() == other.info.id() && self.value == other.value
    }
}

impl Eq for ComponentRef<'_> {}

impl fmt::Debug for ComponentRef<'_> {
    /// The value's own `Debug` if the type implements it, else `Name(..)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info.debug {
            Some(debug) => debug(self, f),
            None => write!(f, "{}(..)", self.info.name()),
        }
    }
}

/// Everything reactecs knows about one declared component type.
pub struct ComponentInfo {
    id: ComponentId,
    name: &'static str,
    pub(crate) ty: TypeInfo,
    unique: bool,
    storage: StorageKind,
    contexts: &'static [&'static str],
    pub(crate) debug: Option<DebugFn>,
    pool: Option<PoolMaker>,
}

impl ComponentInfo {
    /// The info of `T`; the id is assigned when the registry is built.
    fn describe<T: Send + Sync + 'static>(
        name: &'static str,
        unique: bool,
        storage: StorageKind,
        contexts: &'static [&'static str],
        debug: Option<DebugFn>,
    ) -> Self {
        ComponentInfo {
            id: ComponentId(UNASSIGNED),
            name,
            ty: TypeInfo::of::<T>(),
            unique,
            storage,
            contexts,
            debug,
            pool: None,
        }
    }

    /// The info of `T` with a fixed id, for storage tests that run without the
    /// registry (and under Miri).
    #[cfg(test)]
    pub(crate) fn for_test<T: Send + Sync + 'static>(index: usize, name: &'static str, debug: Option<DebugFn>) -> Self {
        ComponentInfo {
            id: ComponentId::at(index),
            ..Self::describe::<T>(name, false, StorageKind::Archetype, &[], debug)
        }
    }

    /// As [`for_test`](ComponentInfo::for_test), of storage kind `storage`.
    #[cfg(test)]
    pub(crate) fn for_test_kind<T: Send + Sync + 'static>(
        index: usize,
        name: &'static str,
        storage: StorageKind,
    ) -> Self {
        ComponentInfo {
            id: ComponentId::at(index),
            ..Self::describe::<T>(name, false, storage, &[], None)
        }
    }

    /// As [`for_test_kind`](ComponentInfo::for_test_kind), declared `pooled`
    /// (storage hands its values to a recycler; no pool is made).
    #[cfg(test)]
    pub(crate) fn for_test_pooled<T: Send + Sync + 'static>(
        index: usize,
        name: &'static str,
        storage: StorageKind,
    ) -> Self {
        ComponentInfo {
            pool: Some(PoolMaker::unused()),
            ..Self::for_test_kind::<T>(index, name, storage)
        }
    }

    /// Every declared component of the program, indexed by id.
    pub fn all() -> &'static [ComponentInfo] {
        registry()
    }

    /// The component's id.
    pub fn id(&self) -> ComponentId {
        self.id
    }

    /// The name as written in the declaration, e.g. `Position`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The full Rust type name, e.g. `my_game::Position`.
    pub fn type_name(&self) -> &'static str {
        self.ty.type_name()
    }

    /// Size and alignment of one value.
    pub fn layout(&self) -> std::alloc::Layout {
        self.ty.layout()
    }

    /// Whether the component was declared `unique` (a singleton).
    pub fn is_unique(&self) -> bool {
        self.unique
    }

    /// Where the component's values live, as declared.
    pub fn storage(&self) -> StorageKind {
        self.storage
    }

    /// Whether the component was declared `pooled` (see [`Recycle`](crate::Recycle)).
    pub fn is_pooled(&self) -> bool {
        self.pool.is_some()
    }

    /// What makes the type's pool, if it is pooled.
    pub(crate) fn pool_maker(&self) -> Option<PoolMaker> {
        self.pool
    }

    /// The contexts named in the declaration (empty: any context).
    pub fn contexts(&self) -> &'static [&'static str] {
        self.contexts
    }
}

impl fmt::Debug for ComponentInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComponentInfo")
            .field("id", &self.id.0)
            .field("name", &self.name)
            .field("type_name", &self.type_name())
            .field("unique", &self.unique)
            .field("storage", &self.storage)
            .field("pooled", &self.is_pooled())
            .field("contexts", &self.contexts)
            .finish()
    }
}

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
    type Fetch: crate::query::FetchKind;

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

const UNASSIGNED: u32 = u32::MAX;

/// The declaration of component type `T`: its cached id, and what the
/// registry needs to describe it.
#[doc(hidden)]
pub struct ComponentRegistration<T> {
    id: AtomicU32,
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
            id: AtomicU32::new(UNASSIGNED),
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
        match self.id.load(Ordering::Relaxed) {
            UNASSIGNED => self.assign(),
            id => ComponentId(id),
        }
    }

    #[cold]
    fn assign(&'static self) -> ComponentId {
        registry();
        match self.id.load(Ordering::Relaxed) {
            UNASSIGNED => panic!(
                "component `{}` was not collected by `inventory`: implement `Component` only \
                 through `reactecs::component!`, on a platform `inventory` supports",
                std::any::type_name::<T>()
            ),
            id => ComponentId(id),
        }
    }
}

/// A [`ComponentRegistration`] of any type, as the registry sees it.
#[doc(hidden)]
pub trait Registration: Sync {
    /// The registered type's info (with a placeholder id).
    fn describe(&self) -> ComponentInfo;
    /// Records the id the registry gave the type, from its info. Ignores the
    /// info of another type, and one without an id (from `describe`), so ids
    /// and types correspond one to one whoever calls it (the trait is
    /// reachable through [`RegisteredComponent`]): a type's id always names
    /// columns and a sparse set of that type.
    fn assign_id(&self, info: &ComponentInfo);
}

impl<T: Component> Registration for ComponentRegistration<T> {
    fn describe(&self) -> ComponentInfo {
        ComponentInfo {
            pool: self.pool,
            ..ComponentInfo::describe::<T>(self.name, self.unique, self.storage, self.contexts, (self.debug)())
        }
    }

    fn assign_id(&self, info: &ComponentInfo) {
        if info.ty.type_id() == std::any::TypeId::of::<T>() && info.id.0 != UNASSIGNED {
            self.id.store(info.id.0, Ordering::Relaxed);
        }
    }
}

/// What [`component!`](crate::component!) submits to `inventory`.
#[doc(hidden)]
pub struct RegisteredComponent(pub &'static dyn Registration);

inventory::collect!(RegisteredComponent);

static REGISTRY: OnceLock<Box<[ComponentInfo]>> = OnceLock::new();

/// Every declared component, indexed by id; built once, on first use.
pub(crate) fn registry() -> &'static [ComponentInfo] {
    REGISTRY.get_or_init(|| {
        let mut found: Vec<(ComponentInfo, &'static dyn Registration)> = inventory::iter::<RegisteredComponent>
            .into_iter()
            .map(|r| (r.0.describe(), r.0))
            .collect();
        // By name; `TypeId` breaks ties between same-named types, and puts a type
        // submitted twice next to itself for `dedup_by`.
        found.sort_by(|a, b| (a.0.type_name(), a.0.ty.type_id()).cmp(&(b.0.type_name(), b.0.ty.type_id())));
        // One id per type, even if a registration was submitted twice.
        found.dedup_by(|a, b| a.0.ty.type_id() == b.0.ty.type_id());
        for (index, (info, registration)) in found.iter_mut().enumerate() {
            info.id = ComponentId::at(index);
            registration.assign_id(info);
        }
        found.into_iter().map(|(info, _)| info).collect()
    })
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
///   [`Context::create_component`](crate::Context::create_component) (see
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
