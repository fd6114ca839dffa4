//! Component pools: the removed values of pooled component types, kept for
//! reuse so that churning heap-owning components (`Vec`s, `String`s,
//! buffers) allocates nothing once warmed up.
//!
//! A type opts in when it is declared (`component!(pooled Path)`) and says
//! how a used value is made ready for reuse by implementing [`Recycle`].
//! Each context keeps one bounded pool per pooled type, made on first use.
//! A value of a pooled type goes back to its pool, instead of being
//! dropped, when the context lets go of it:
//!
//! - [`remove`](crate::Context::remove) and
//!   [`remove_unique`](crate::Context::remove_unique);
//! - the old value of a [`replace`](crate::Context::replace) (and of
//!   [`set_unique`](crate::Context::set_unique) on a held unique);
//! - every pooled value of a destroyed entity
//!   ([`destroy_entity`](crate::Context::destroy_entity),
//!   [`destroy_all_entities`](crate::Context::destroy_all_entities));
//! - a value handed back with [`Context::recycle`](crate::Context::recycle),
//!   e.g. one got from [`take`](crate::Context::take).
//!
//! Each happens after the events of the change: handlers, collectors that
//! keep removed values (they keep a clone) and entity indices see the value
//! as it was. The value is [recycled](Recycle::recycle) as it enters the
//! pool, so a pool holds no stale data; a pool that is full drops it.
//! [`Context::create_component`](crate::Context::create_component) hands out
//! a pooled value, or a new one (`Default`) when the pool is empty.
//!
//! A value a call refuses (an `add` to an entity that has the component, a
//! bundle with a duplicate) never belonged to the context: it is dropped,
//! not pooled. Pools belong to their context, so a value never passes from
//! one context to another; [`reset`](crate::Context::reset) empties them, and
//! dropping the context drops what they hold, each value once.

use std::any::Any;

use crate::component::{Component, ComponentId};

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
/// let mut path = game.create_component::<Path>(); // the pool is empty: `Path::default()`
/// path.0.extend([(0, 0), (0, 1), (1, 1)]);
/// game.add(walker, path)?;
///
/// game.remove::<Path>(walker)?; // into the pool, cleared
/// assert_eq!(game.pool_len::<Path>(), 1);
/// let reused = game.create_component::<Path>();
/// assert!(reused.0.is_empty() && reused.0.capacity() >= 3);
/// # Ok::<(), reactecs::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared `pooled` but does not implement `reactecs::Recycle`",
    note = "implement `Recycle` (how a used value is emptied for reuse), or declare the component without `pooled`"
)]
pub trait Recycle: Default + Send + Sync + 'static {
    /// How many values a context keeps for reuse, unless set otherwise with
    /// [`Context::set_pool_capacity`](crate::Context::set_pool_capacity).
    const POOL_CAPACITY: usize = 128;

    /// Empties the value for its next user, keeping what it allocated.
    fn recycle(&mut self);
}

/// The bounded pool of one component type.
struct Pool<T> {
    values: Vec<T>,
    capacity: usize,
    /// `T::recycle`, kept here so that code generic over any component can
    /// put values back without naming `Recycle`.
    recycle: fn(&mut T),
}

impl<T: Component> Pool<T> {
    /// Recycles `value` and keeps it, if there is room; else drops it.
    fn put(&mut self, mut value: T) {
        if self.values.len() < self.capacity {
            (self.recycle)(&mut value);
            self.values.push(value);
        }
    }
}

/// A [`Pool`] of any type.
trait AnyPool: Send + Sync {
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

impl<T: Component> AnyPool for Pool<T> {
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
    pub const fn of<T: Component + Recycle>() -> Self {
        fn make<T: Component + Recycle>() -> Box<dyn AnyPool> {
            Box::new(Pool::<T> {
                values: Vec::new(),
                capacity: T::POOL_CAPACITY,
                recycle: T::recycle,
            })
        }
        PoolMaker(make::<T>)
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

/// A context's pools, by component id; each made when first needed.
#[derive(Default)]
pub(crate) struct Pools {
    by_id: Vec<Option<Box<dyn AnyPool>>>,
}

impl Pools {
    /// The pool of component `id`, made if it is pooled and has none yet;
    /// `None` for a component that is not pooled.
    fn pool(&mut self, id: ComponentId) -> Option<&mut (dyn AnyPool + 'static)> {
        let index = id.index();
        if self.by_id.get(index).is_none_or(Option::is_none) {
            let make = id.info()?.pool_maker()?;
            if self.by_id.len() <= index {
                self.by_id.resize_with(index + 1, || None);
            }
            self.by_id[index] = Some((make.0)());
        }
        self.by_id[index].as_deref_mut()
    }

    /// The pool of `T`, typed.
    #[inline]
    fn typed<T: Component>(&mut self) -> Option<&mut Pool<T>> {
        self.pool(T::component_id())?.as_any_mut().downcast_mut::<Pool<T>>()
    }

    /// Lets go of `value`: into `T`'s pool if `T` is pooled (and the pool
    /// has room), else dropped.
    #[inline(always)]
    pub(crate) fn put<T: Component>(&mut self, value: T) {
        if T::POOLED
            && let Some(pool) = self.typed::<T>()
        {
            pool.put(value);
        }
    }

    /// Lets go of the value in `value`, an `Option<T>` of component `id`'s
    /// type (what storage lends out of a destroyed entity): into the pool,
    /// or left for the caller to drop.
    pub(crate) fn put_any(&mut self, id: ComponentId, value: &mut dyn Any) {
        if let Some(pool) = self.pool(id) {
            pool.put_any(value);
        }
    }

    /// A clone of `value`: into a value from `T`'s pool (`clone_from`, which
    /// reuses its allocations) when `T` is pooled and the pool has one.
    #[inline(always)]
    pub(crate) fn clone_of<T: Component + Clone>(&mut self, value: &T) -> T {
        if T::POOLED
            && let Some(mut clone) = self.take::<T>()
        {
            clone.clone_from(value);
            return clone;
        }
        value.clone()
    }

    /// A value from `T`'s pool, if it has one.
    pub(crate) fn take<T: Component>(&mut self) -> Option<T> {
        self.typed::<T>()?.values.pop()
    }

    /// The number of values in `T`'s pool.
    pub(crate) fn len_of(&self, id: ComponentId) -> usize {
        match self.by_id.get(id.index()) {
            Some(Some(pool)) => pool.len(),
            _ => 0,
        }
    }

    /// The bound of `T`'s pool.
    pub(crate) fn capacity<T: Component + Recycle>(&self) -> usize {
        match self.by_id.get(T::component_id().index()) {
            Some(Some(pool)) => pool.capacity(),
            _ => T::POOL_CAPACITY,
        }
    }

    /// Sets the bound of component `id`'s pool (which is pooled).
    pub(crate) fn set_capacity(&mut self, id: ComponentId, capacity: usize) {
        if let Some(pool) = self.pool(id) {
            pool.set_capacity(capacity);
        }
    }

    /// The number of values over every pool.
    pub(crate) fn total(&self) -> usize {
        self.by_id.iter().flatten().map(|pool| pool.len()).sum()
    }

    /// Drops every pooled value (the pools keep their bounds).
    pub(crate) fn clear(&mut self) {
        for pool in self.by_id.iter_mut().flatten() {
            pool.clear();
        }
    }
}
