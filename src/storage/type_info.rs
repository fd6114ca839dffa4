//! `TypeInfo`: what storage must know to hold values of a type it cannot
//! name; `ErasedRef`: a shared reference to a value of such a type that
//! knows the type, so reading it back is checked.

use std::alloc::Layout;
use std::any::{Any, TypeId};
use std::hash::Hasher;
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::id::ComponentId;

/// Drops `count` contiguous values starting at the pointer.
type DropFn = unsafe fn(*mut u8, usize);

/// What may take a value leaving storage instead of letting it drop (a
/// context's pools): it is given the value's component id and the value as
/// an `Option<T>` of its type, which it may `take`; what it leaves is dropped.
pub(crate) type Recycler<'a> = &'a mut dyn FnMut(ComponentId, &mut dyn Any);

/// Moves the value at the pointer into an `Option` and lends it to a
/// [`Recycler`]; drops what the recycler left.
type HandOverFn = unsafe fn(*mut u8, ComponentId, Recycler<'_>);

/// The layout, identity and drop glue of one component type, type-erased.
///
/// A `TypeInfo` can only be built by [`TypeInfo::of`], so its parts always
/// describe the same Rust type: this is the invariant every cast in
/// `storage` relies on (a column whose `TypeInfo` says `T` holds `T` values).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TypeInfo {
    type_id: TypeId,
    type_name: &'static str,
    layout: Layout,
    drop: Option<DropFn>,
    hand_over: HandOverFn,
}

impl TypeInfo {
    /// The info of `T`. Only `Send + Sync` types can be stored, which is what
    /// makes chunks `Send` and `Sync`.
    pub(crate) fn of<T: Send + Sync + 'static>() -> Self {
        /// # Safety
        /// `ptr` must point to `count` initialised, properly aligned `T`s that
        /// are not used again (they are dropped here).
        unsafe fn drop_values<T>(ptr: *mut u8, count: usize) {
            let slice = std::ptr::slice_from_raw_parts_mut(ptr.cast::<T>(), count);
            // SAFETY: the caller promises `count` live, aligned `T`s at `ptr` that are
            // never used again. Dropping a slice keeps dropping the remaining elements if
            // one of them panics, so a panicking `Drop` leaks nothing after it.
            unsafe { std::ptr::drop_in_place(slice) }
        }
        /// # Safety
        /// `ptr` must point to an initialised, properly aligned `T` that is not
        /// used again (it is moved out here).
        unsafe fn hand_over<T: 'static>(ptr: *mut u8, id: ComponentId, to: Recycler<'_>) {
            // SAFETY: the caller promises a live, aligned `T` at `ptr` that is never
            // used again, so reading it moves it: it has exactly one owner, this
            // `Option`, which drops it (also if `to` panics) unless `to` took it.
            let mut value = Some(unsafe { ptr.cast::<T>().read() });
            to(id, &mut value);
        }
        TypeInfo {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            layout: Layout::new::<T>(),
            drop: if std::mem::needs_drop::<T>() {
                Some(drop_values::<T> as DropFn)
            } else {
                None
            },
            hand_over: hand_over::<T>,
        }
    }

    /// The `TypeId` of the described type.
    #[inline]
    pub(crate) fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The full Rust name of the described type.
    pub(crate) fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Size and alignment of one value.
    #[inline]
    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    /// Whether values need dropping at all.
    pub(crate) fn needs_drop(&self) -> bool {
        self.drop.is_some()
    }

    /// Drops `count` values at `ptr`.
    ///
    /// # Safety
    /// `ptr` must point to `count` initialised, aligned values of the described
    /// type, which are dead after this call.
    pub(super) unsafe fn drop_values(&self, ptr: *mut u8, count: usize) {
        if let Some(drop) = self.drop {
            // SAFETY: forwarded from this function's contract; `drop` was built by
            // `TypeInfo::of` for the type this info describes.
            unsafe { drop(ptr, count) }
        }
    }
}

impl TypeInfo {
    /// Moves the value at `ptr` out and hands it to `to` (see [`Recycler`]),
    /// as component `id`.
    ///
    /// # Safety
    /// As [`drop_values`](TypeInfo::drop_values) for one value: `ptr` points
    /// to an initialised, aligned value of the described type, which is dead
    /// (moved out) after this call, whatever `to` does, panics included.
    pub(super) unsafe fn hand_over(&self, ptr: *mut u8, id: ComponentId, to: Recycler<'_>) {
        // SAFETY: forwarded from this function's contract; `hand_over` was built by
        // `TypeInfo::of` for the type this info describes.
        unsafe { (self.hand_over)(ptr, id, to) }
    }
}

/// A shared reference to a value whose type is known only at run time, which
/// carries that type's `TypeId`: [`get`](ErasedRef::get) hands the value back
/// only as its own type. Equal when both point at the same value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct ErasedRef<'a> {
    ptr: NonNull<u8>,
    type_id: TypeId,
    _borrow: PhantomData<&'a ()>,
}

// SAFETY: an `ErasedRef` is a `&'a T` in disguise, and every stored type is
// `Send + Sync` (`TypeInfo::of` requires it; `ErasedRef::of` too).
unsafe impl Send for ErasedRef<'_> {}
// SAFETY: as for `Send`: shared access to a `Sync` value.
unsafe impl Sync for ErasedRef<'_> {}

impl<'a> ErasedRef<'a> {
    /// A reference to `value`.
    #[inline]
    pub(crate) fn of<T: Send + Sync + 'static>(value: &'a T) -> Self {
        ErasedRef {
            ptr: NonNull::from(value).cast(),
            type_id: TypeId::of::<T>(),
            _borrow: PhantomData,
        }
    }

    /// A reference to the value at `ptr`, of the type `ty` describes.
    ///
    /// # Safety
    /// `ptr` must point to an initialised value of that type, which stays
    /// alive and is not written for the lifetime `'a`.
    #[inline]
    pub(super) unsafe fn from_raw(ty: &TypeInfo, ptr: NonNull<u8>) -> Self {
        ErasedRef {
            ptr,
            type_id: ty.type_id,
            _borrow: PhantomData,
        }
    }

    /// The value, if it is a `T`.
    #[inline]
    pub(crate) fn get<T: 'static>(self) -> Option<&'a T> {
        if self.type_id == TypeId::of::<T>() {
            // SAFETY: every constructor makes `ptr` point to a live value of the type
            // `type_id` names, for `'a`; we just checked that type is `T`.
            Some(unsafe { self.ptr.cast::<T>().as_ref() })
        } else {
            None
        }
    }

    /// The `TypeId` of the value's type.
    #[inline]
    pub(crate) fn type_id(self) -> TypeId {
        self.type_id
    }
}

/// `TypeId`s are hashes already: use their bits instead of hashing them again.
#[derive(Default)]
pub(crate) struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }
}
