//! The context's side of component pools: handing out recycled values,
//! taking values back, and the pools' bounds (see the `pool` module).

use super::Context;
use crate::component::Component;
use crate::recycle::Recycle;

/// `T` must be declared `pooled` for the pool calls (checked when the call
/// is compiled).
const fn assert_pooled<T: Component>() {
    assert!(
        T::POOLED,
        "the component is not declared `pooled`: declare it with `reactecs::component!(pooled T)`"
    );
}

impl Context {
    /// A value of pooled component `T` to add or replace with: one from the
    /// context's pool (already [recycled](Recycle::recycle)) if it has one,
    /// else `T::default()`. Calling it for a component not declared `pooled`
    /// is a compile error.
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
    ///     let mut log = game.create_component::<Log>();
    ///     log.0.push_str("turn ");
    ///     log.0.push_str(&turn.to_string());
    ///     game.replace(e, log)?; // the replaced value goes back to the pool
    /// }
    /// assert_eq!(game.get::<Log>(e)?.0, "turn 2");
    /// assert_eq!(game.pool_len::<Log>(), 1);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn create_component<T: Component + Recycle>(&mut self) -> T {
        const { assert_pooled::<T>() };
        self.pools.take::<T>().unwrap_or_default()
    }

    /// Hands `value` back to `T`'s pool (recycled; dropped if the pool is
    /// full): for a value the context gave out with
    /// [`take`](Context::take), [`take_unique`](Context::take_unique) or
    /// [`create_component`](Context::create_component) and that is no
    /// longer needed.
    pub fn recycle<T: Component + Recycle>(&mut self, value: T) {
        const { assert_pooled::<T>() };
        self.pools.put(value);
    }

    /// The number of values in `T`'s pool.
    pub fn pool_len<T: Component + Recycle>(&self) -> usize {
        const { assert_pooled::<T>() };
        self.pools.len_of(T::component_id())
    }

    /// How many values `T`'s pool keeps at most: [`Recycle::POOL_CAPACITY`]
    /// unless set with [`set_pool_capacity`](Context::set_pool_capacity).
    pub fn pool_capacity<T: Component + Recycle>(&self) -> usize {
        const { assert_pooled::<T>() };
        self.pools.capacity::<T>()
    }

    /// Sets how many values `T`'s pool keeps at most (0: none, every value
    /// let go is dropped); values above the new bound are dropped now.
    pub fn set_pool_capacity<T: Component + Recycle>(&mut self, capacity: usize) {
        const { assert_pooled::<T>() };
        self.pools.set_capacity(T::component_id(), capacity);
    }

    /// The number of values over all of the context's pools.
    pub fn pooled_values(&self) -> usize {
        self.pools.total()
    }

    /// Drops every pooled value (the pools keep their bounds).
    pub fn clear_pools(&mut self) {
        self.pools.clear();
    }
}
