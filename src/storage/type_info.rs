//! `TypeInfo`: what storage must know to hold values of a type it cannot name.

use std::alloc::Layout;
use std::any::TypeId;

/// Drops `count` contiguous values starting at the pointer.
type DropFn = unsafe fn(*mut u8, usize);

/// The layout, identity and drop glue of one component type, type-erased.
///
/// A `TypeInfo` can only be built by [`TypeInfo::of`], so its three parts
/// always describe the same Rust type: this is the invariant every cast in
/// `storage` relies on (a column whose `TypeInfo` says `T` holds `T` values).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TypeInfo {
    type_id: TypeId,
    type_name: &'static str,
    layout: Layout,
    drop: Option<DropFn>,
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
        TypeInfo {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            layout: Layout::new::<T>(),
            drop: if std::mem::needs_drop::<T>() {
                Some(drop_values::<T> as DropFn)
            } else {
                None
            },
        }
    }

    /// The `TypeId` of the described type.
    pub(crate) fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The full Rust name of the described type.
    pub(crate) fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Size and alignment of one value.
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
