//! What storage knows of every declared component type: its
//! [`ComponentInfo`] (name, layout, drop glue, storage kind), the registry
//! of all of them built once from `inventory`, and [`ComponentRef`], a view
//! of one value described by its info. The `Component` trait and the
//! `component!` declaration that feed the registry stand above storage, in
//! `component.rs`.

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use super::type_info::{ErasedRef, TypeInfo};
use crate::error::Error;
use crate::id::ComponentId;
use crate::recycle::PoolMaker;

/// What the registry knows of an id.
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
    pub fn from_index(index: usize) -> Result<Self, Error> {
        let declared = registry().len();
        if index < declared {
            Ok(ComponentId::at(index))
        } else {
            Err(Error::UnknownComponent { index, declared })
        }
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
    pub(crate) fn new<T: Send + Sync + 'static>(info: &'static ComponentInfo, value: &'a T) -> Self {
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
    pub(crate) fn sibling<'b, T: Send + Sync + 'static>(&self, value: &'b T) -> ComponentRef<'b> {
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
    /// The info of `T` as declared; the id is assigned when the registry is
    /// built.
    pub(crate) fn describe<T: Send + Sync + 'static>(
        name: &'static str,
        unique: bool,
        storage: StorageKind,
        contexts: &'static [&'static str],
        debug: Option<DebugFn>,
        pool: Option<PoolMaker>,
    ) -> Self {
        ComponentInfo {
            id: ComponentId(UNASSIGNED),
            name,
            ty: TypeInfo::of::<T>(),
            unique,
            storage,
            contexts,
            debug,
            pool,
        }
    }

    /// The info of `T` with a fixed id, for storage tests that run without the
    /// registry (and under Miri).
    #[cfg(test)]
    pub(crate) fn for_test<T: Send + Sync + 'static>(index: usize, name: &'static str, debug: Option<DebugFn>) -> Self {
        ComponentInfo {
            id: ComponentId::at(index),
            ..Self::describe::<T>(name, false, StorageKind::Archetype, &[], debug, None)
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
            ..Self::describe::<T>(name, false, storage, &[], None, None)
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

    /// Whether a value can differ from another of its type: false for a
    /// zero-sized component (a tag or flag), which is only ever added or
    /// removed, never updated. Such a component carries no change stamps,
    /// and replacing it where present changes nothing (see
    /// [`Context::replace`](crate::Context::replace)).
    #[inline]
    pub fn is_tag(&self) -> bool {
        self.ty.layout().size() == 0
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

/// The id of a component not yet given one by the registry.
pub(crate) const UNASSIGNED: u32 = u32::MAX;

/// A component id that names type `T`: made only by [`IdCell::get`], from
/// an id the registry gave an info of type `T` (or, in storage tests, by
/// [`TypedId::for_test`]). Ids and types correspond one to one, so the
/// column or sparse set an archetype keeps for this id holds `T`s, and
/// storage reads it as `T`s without comparing types. (A hand-written
/// `Component::component_id` may return any id: it is never made into a
/// `TypedId`.)
pub(crate) struct TypedId<T> {
    id: ComponentId,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for TypedId<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for TypedId<T> {}

impl<T> TypedId<T> {
    /// The id.
    #[inline(always)]
    pub(crate) fn id(self) -> ComponentId {
        self.id
    }

    /// `T`'s id in a storage test, whose infos (`ComponentInfo::for_test`)
    /// the test numbers by hand: the test keeps index and type together.
    #[cfg(test)]
    pub(crate) fn for_test(index: usize) -> Self {
        TypedId {
            id: ComponentId::at(index),
            _type: PhantomData,
        }
    }
}

/// Where a declaration of component type `T` keeps the id the registry
/// gave it (`UNASSIGNED` until then).
pub(crate) struct IdCell<T> {
    id: AtomicU32,
    _type: PhantomData<fn() -> T>,
}

impl<T: 'static> IdCell<T> {
    /// A cell without an id.
    pub(crate) const fn new() -> Self {
        IdCell {
            id: AtomicU32::new(UNASSIGNED),
            _type: PhantomData,
        }
    }

    /// The id, once assigned.
    #[inline(always)]
    pub(crate) fn get(&self) -> Option<TypedId<T>> {
        match self.id.load(Ordering::Relaxed) {
            UNASSIGNED => None,
            id => Some(TypedId {
                id: ComponentId(id),
                _type: PhantomData,
            }),
        }
    }

    /// Takes the id of `info`, if `info` is of type `T` and has one (the
    /// registry's): the one way an id gets into the cell.
    pub(crate) fn assign(&self, info: &ComponentInfo) {
        let id = info.id().0;
        if info.ty.type_id() == TypeId::of::<T>() && id != UNASSIGNED {
            self.id.store(id, Ordering::Relaxed);
        }
    }
}

/// A component declaration of any type, as the registry sees it (the
/// `component!` macro's `ComponentRegistration<T>`).
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
