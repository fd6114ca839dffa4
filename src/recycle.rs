//! Recycling the values of one type: the [`Recycle`] trait, and the bounded
//! pool of one type that the declaration of a `pooled` component names
//! ([`PoolMaker`]). It knows no component ids: a context keeps its pools by
//! component id (`Pools`, in `pool.rs`).

use std::any::Any;

/// How a value of a pooled component is made ready for reuse.
///
/// Implement it for a component type declared `pooled`
/// (`component!(pooled Path)`): `recycle` empties the value while keeping
/// its allocations (`clear()` on its `Vec`s and `String`s), so that the
/// next user finds a value as good as [`Default`] but with capacity.
///
/// Where the context clones a value of a pooled type (for a collector that
/// keeps removed values, or the old value [`modify`](crate::Context::modify)
/// shows to observers), it clones into a value it already holds with
/// [`Clone::clone_from`]. `#[derive(Clone)]` does not forward `clone_from`
/// to the fields (it clones and drops the target), so write `Clone` by hand
/// when such clones should reuse memory too (see the crate's `tests/pool.rs`).
///
/// # Example
/// ```
/// use reactecs::prelude::*;
///
/// #[derive(Default)]
/// struct Path(Vec<(i32, i32)>);
/// impl Recycle for Path {
///     fn recycle(&mut self) {
///         self.0.clear();
///     }
/// }
/// reactecs::component!(pooled Path);
///
/// let mut game = Context::new();
/// let walker = game.create_entity();
/// let mut path = game.pool::<Path>().take(); // the pool is empty: `Path::default()`
/// path.0.extend([(0, 0), (0, 1), (1, 1)]);
/// game.add(walker, path)?;
///
/// game.remove::<Path>(walker)?; // into the pool, cleared
/// assert_eq!(game.pool::<Path>().len(), 1);
/// let reused = game.pool::<Path>().take();
/// assert!(reused.0.is_empty() && reused.0.capacity() >= 3);
/// # Ok::<(), reactecs::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared `pooled` but does not implement `reactecs::Recycle`",
    note = "implement `Recycle` (how a used value is emptied for reuse), or declare the component without `pooled`"
)]
pub trait Recycle: Default + Send + Sync + 'static {
    /// How many values a context keeps for reuse, unless set otherwise with
    /// [`PoolMut::set_capacity`](crate::PoolMut::set_capacity).
    const POOL_CAPACITY: usize = 128;

    /// Empties the value for its next user, keeping what it allocated.
    fn recycle(&mut self);
}

/// The bounded pool of one component type.
pub(crate) struct Pool<T> {
    values: Vec<T>,
    capacity: usize,
    /// `T::recycle`, kept here so that code generic over any component can
    /// put values back without naming `Recycle`.
    recycle: fn(&mut T),
}

impl<T> Pool<T> {
    /// Recycles `value` and keeps it, if there is room; else drops it.
    pub(crate) fn put(&mut self, mut value: T) {
        if self.values.len() < self.capacity {
            (self.recycle)(&mut value);
            self.values.push(value);
        }
    }

    /// A kept value, if there is one.
    pub(crate) fn take(&mut self) -> Option<T> {
        self.values.pop()
    }
}

/// A [`Pool`] of any type.
pub(crate) trait AnyPool: Send + Sync {
    /// Puts back the value in `value`, an `Option<T>` of the pool's type
    /// (left `None`); anything else is left alone.
    fn put_any(&mut self, value: &mut dyn Any);
    fn len(&self) -> usize;
    fn capacity(&self) -> usize;
    /// Sets the bound, dropping the values above it.
    fn set_capacity(&mut self, capacity: usize);
    /// Drops every value.
    fn clear(&mut self);
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Send + Sync + 'static> AnyPool for Pool<T> {
    fn put_any(&mut self, value: &mut dyn Any) {
        if let Some(value) = value.downcast_mut::<Option<T>>().and_then(Option::take) {
            self.put(value);
        }
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        self.values.truncate(capacity);
    }

    fn clear(&mut self) {
        self.values.clear();
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Makes the pool of a pooled component type: what the declaration of a
/// `pooled` component records in its registration.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct PoolMaker(fn() -> Box<dyn AnyPool>);

impl PoolMaker {
    /// The maker of `T`'s pool (used by [`component!`](crate::component!)).
    pub const fn of<T: Recycle>() -> Self {
        fn make<T: Recycle>() -> Box<dyn AnyPool> {
            Box::new(Pool::<T> {
                values: Vec::new(),
                capacity: T::POOL_CAPACITY,
                recycle: T::recycle,
            })
        }
        PoolMaker(make::<T>)
    }

    /// A new, empty pool.
    pub(crate) fn make(self) -> Box<dyn AnyPool> {
        (self.0)()
    }
}

#[cfg(test)]
impl PoolMaker {
    /// A maker for storage tests, which hand pooled values to a recycler of
    /// their own and never make a pool.
    pub(crate) fn unused() -> Self {
        PoolMaker(|| unreachable!("storage tests make no pools"))
    }
}
