//! Component pools: the removed values of pooled component types, kept for
//! reuse so that churning heap-owning components (`Vec`s, `String`s,
//! buffers) allocates nothing once warmed up.
//!
//! On [`Context`](crate::Context): [`pool::<T>()`](crate::Context::pool)
//! gives `T`'s pool as a [`PoolMut`]: [`take`](PoolMut::take) a value
//! (Entitas' `CreateComponent`), [`recycle`](PoolMut::recycle) one,
//! [`len`](PoolMut::len), [`capacity`](PoolMut::capacity),
//! [`set_capacity`](PoolMut::set_capacity), [`clear`](PoolMut::clear).
//! Over all pools: [`StorageStats::pooled_values`](crate::StorageStats::pooled_values)
//! counts the values, and [`Context::shrink_to_fit`](crate::Context::shrink_to_fit)
//! drops them. The context's side is in `context/pool.rs`.
//!
//! A type opts in when it is declared (`component!(pooled Path)`) and says
//! how a used value is made ready for reuse by implementing [`Recycle`].
//! Each context keeps one bounded pool per pooled type, made on first use.
//! A value of a pooled type goes back to its pool, instead of being
//! dropped, when the context lets go of it:
//!
//! - [`remove`](crate::Context::remove), and a played back
//!   [`CommandBuffer::remove_unique`](crate::CommandBuffer::remove_unique);
//! - the old value of a [`replace`](crate::Context::replace) (and of
//!   [`set_unique`](crate::Context::set_unique) on a held unique);
//! - every pooled value of a destroyed entity
//!   ([`destroy_entity`](crate::Context::destroy_entity),
//!   [`destroy_all_entities`](crate::Context::destroy_all_entities));
//! - a value handed back with [`PoolMut::recycle`], e.g. one got from
//!   [`take`](crate::Context::take).
//!
//! Each happens after the events of the change: handlers, collectors that
//! keep removed values (they keep a clone) and entity indices see the value
//! as it was. The value is [recycled](Recycle::recycle) as it enters the
//! pool, so a pool holds no stale data; a pool that is full drops it.
//! [`PoolMut::take`] hands out a pooled value, or a new one (`Default`) when
//! the pool is empty.
//!
//! A value a call refuses (an `add` to an entity that has the component, a
//! bundle with a duplicate) never belonged to the context: it is dropped,
//! not pooled. Pools belong to their context, so a value never passes from
//! one context to another; [`reset`](crate::Context::reset) empties them, and
//! dropping the context drops what they hold, each value once.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;

use crate::component::Component;
use crate::id::ComponentId;
use crate::recycle::{AnyPool, Pool, Recycle};

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
            self.by_id[index] = Some(make.make());
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
        self.typed::<T>()?.take()
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

    /// Drops the values in component `id`'s pool (it keeps its bound).
    fn clear_of(&mut self, id: ComponentId) {
        if let Some(Some(pool)) = self.by_id.get_mut(id.index()) {
            pool.clear();
        }
    }

    /// Drops every pooled value (the pools keep their bounds).
    pub(crate) fn clear(&mut self) {
        for pool in self.by_id.iter_mut().flatten() {
            pool.clear();
        }
    }
}

/// One pooled component type's pool in a context, from
/// [`Context::pool`](crate::Context::pool).
///
/// # Example
/// ```
/// use reactecs::prelude::*;
///
/// #[derive(Default)]
/// struct Log(String);
/// impl Recycle for Log {
///     fn recycle(&mut self) {
///         self.0.clear();
///     }
/// }
/// reactecs::component!(pooled Log);
///
/// let mut game = Context::new();
/// let e = game.create_entity();
/// for turn in 0..3 {
///     let mut log = game.pool::<Log>().take(); // from the pool, or `Log::default()`
///     log.0.push_str("turn ");
///     log.0.push_str(&turn.to_string());
///     game.replace(e, log)?; // the replaced value goes back to the pool
/// }
/// assert_eq!(game.get::<Log>(e)?.0, "turn 2");
/// assert_eq!(game.pool::<Log>().len(), 1);
///
/// let taken = game.take::<Log>(e)?;
/// game.pool::<Log>().recycle(taken); // handed back by hand
/// assert_eq!(game.pool::<Log>().len(), 2);
/// game.pool::<Log>().set_capacity(1); // values above the bound are dropped
/// assert_eq!(game.pool::<Log>().len(), 1);
/// game.pool::<Log>().clear();
/// assert!(game.pool::<Log>().is_empty());
/// # Ok::<(), reactecs::Error>(())
/// ```
pub struct PoolMut<'a, T> {
    pools: &'a mut Pools,
    component: PhantomData<fn() -> T>,
}

impl<'a, T: Component + Recycle> PoolMut<'a, T> {
    /// `T`'s pool in `pools` (`T` is pooled: the caller checked).
    pub(crate) fn new(pools: &'a mut Pools) -> Self {
        PoolMut {
            pools,
            component: PhantomData,
        }
    }

    /// A value to add or replace with: one from the pool (already
    /// [recycled](Recycle::recycle)) if it has one, else `T::default()`
    /// (Entitas' `CreateComponent`).
    pub fn take(&mut self) -> T {
        self.pools.take::<T>().unwrap_or_default()
    }

    /// Hands `value` back to the pool (recycled; dropped if the pool is
    /// full): for a value the context gave out with
    /// [`take`](crate::Context::take), [`take_unique`](crate::Context::take_unique)
    /// or [`PoolMut::take`] and that is no longer needed.
    pub fn recycle(&mut self, value: T) {
        self.pools.put(value);
    }

    /// The number of values in the pool.
    pub fn len(&self) -> usize {
        self.pools.len_of(T::component_id())
    }

    /// Whether the pool holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many values the pool keeps at most: [`Recycle::POOL_CAPACITY`]
    /// unless set with [`set_capacity`](PoolMut::set_capacity).
    pub fn capacity(&self) -> usize {
        self.pools.capacity::<T>()
    }

    /// Sets how many values the pool keeps at most (0: none, every value
    /// let go is dropped); values above the new bound are dropped now.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.pools.set_capacity(T::component_id(), capacity);
    }

    /// Drops every value in the pool (it keeps its bound).
    pub fn clear(&mut self) {
        self.pools.clear_of(T::component_id());
    }
}

impl<T: Component + Recycle> fmt::Debug for PoolMut<'_, T> {
    /// The component's name, the number of values and the bound:
    /// `PoolMut<Log> { len: 1, capacity: 64 }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(&format!("PoolMut<{}>", T::component_info().name()))
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}
