//! The context's side of component pools: `pool::<T>()`, which gives `T`'s
//! pool as a [`PoolMut`] (see the `pool` module).

use super::Context;
use crate::component::Component;
use crate::pool::PoolMut;
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
    /// Pooled component `T`'s pool (made if needed): take values from it,
    /// hand values back, read and set its bound (see [`PoolMut`]). Calling
    /// it for a component not declared `pooled` is a compile error.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
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
    /// let walker = game.create_entity_with(Path(vec![(0, 0), (0, 1)]))?;
    /// game.remove::<Path>(walker)?; // into the pool, emptied
    /// let path = game.pool::<Path>().take();
    /// assert!(path.0.is_empty() && path.0.capacity() >= 2); // its allocation kept
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn pool<T: Component + Recycle>(&mut self) -> PoolMut<'_, T> {
        const { assert_pooled::<T>() };
        PoolMut::new(&mut self.pools)
    }
}
