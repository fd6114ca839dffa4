//! `ComponentRef`: a read-only, type-erased view of one component value.

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::component::{ComponentId, ComponentInfo};

/// A read-only view of one component value whose type is known only at run
/// time. Events carry these (the added value, the removed value, the old and the
/// new value of a replace); [`ComponentRef::get`] gives back the typed value.
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
#[derive(Clone, Copy)]
pub struct ComponentRef<'a> {
    info: &'static ComponentInfo,
    ptr: NonNull<u8>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> ComponentRef<'a> {
    /// A view of `value`, described by `info`.
    ///
    /// # Panics
    /// If `info` does not describe `T` (an internal bug, never user input).
    pub(crate) fn new<T: 'static>(info: &'static ComponentInfo, value: &'a T) -> Self {
        assert_eq!(
            info.ty.type_id(),
            TypeId::of::<T>(),
            "ComponentRef built with the info of another type"
        );
        ComponentRef {
            info,
            ptr: NonNull::from(value).cast(),
            _borrow: PhantomData,
        }
    }

    /// A view of `value`, a value of the same component type as `self`'s
    /// (e.g. the old value beside a new one); `None` if `T` is another type.
    #[inline]
    pub(crate) fn sibling<'b, T: 'static>(&self, value: &'b T) -> Option<ComponentRef<'b>> {
        (self.info.ty.type_id() == TypeId::of::<T>()).then(|| ComponentRef {
            info: self.info,
            ptr: NonNull::from(value).cast(),
            _borrow: PhantomData,
        })
    }

    /// A maker of views of `T` values described by `info`, for many values:
    /// the type check is done here, once.
    ///
    /// # Panics
    /// If `info` does not describe `T`.
    pub(crate) fn maker<T: 'static>(info: &'static ComponentInfo) -> RefMaker<T> {
        assert_eq!(
            info.ty.type_id(),
            TypeId::of::<T>(),
            "ComponentRef built with the info of another type"
        );
        RefMaker {
            info,
            _type: PhantomData,
        }
    }

    /// A view of the value at `ptr`.
    ///
    /// # Safety
    /// `ptr` must point to an initialised value of the type `info` describes,
    /// which stays alive and is not written for the lifetime `'a`.
    pub(super) unsafe fn from_raw(info: &'static ComponentInfo, ptr: NonNull<u8>) -> Self {
        ComponentRef {
            info,
            ptr,
            _borrow: PhantomData,
        }
    }

    /// The value, if it is a `T`.
    #[inline]
    pub fn get<T: 'static>(&self) -> Option<&'a T> {
        if self.info.ty.type_id() == TypeId::of::<T>() {
            // SAFETY: every constructor guarantees `ptr` points to a live value of the
            // type `info` describes for `'a`; we just checked that type is `T`.
            Some(unsafe { self.ptr.cast::<T>().as_ref() })
        } else {
            None
        }
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

impl fmt::Debug for ComponentRef<'_> {
    /// The value's own `Debug` if the type implements it, else `Name(..)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info.debug {
            Some(debug) => debug(self, f),
            None => write!(f, "{}(..)", self.info.name()),
        }
    }
}

/// Makes [`ComponentRef`]s of `T` values without checking the type each time
/// (checked once by [`ComponentRef::maker`]).
#[derive(Clone, Copy)]
pub(crate) struct RefMaker<T> {
    info: &'static ComponentInfo,
    _type: PhantomData<fn(&T)>,
}

impl<T: 'static> RefMaker<T> {
    /// A view of `value`.
    #[inline]
    pub(crate) fn make<'a>(&self, value: &'a T) -> ComponentRef<'a> {
        // `info` describes `T` (checked in `maker`), so `get` reads `value`
        // back only as a `T`.
        ComponentRef {
            info: self.info,
            ptr: NonNull::from(value).cast(),
            _borrow: PhantomData,
        }
    }
}
