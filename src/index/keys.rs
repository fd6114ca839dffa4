//! `KeyFn`: an index's key function over one component type, with the
//! component type erased so an index is generic over its key type only; and
//! `Prepared`: the keys made before a change, waiting for it to be done.

use crate::component::Component;
use crate::storage::ComponentInfo;
use crate::storage::ComponentRef;

type Keys<K> = dyn Fn(ComponentRef<'_>, &mut dyn FnMut(K)) + Send + Sync;

/// The keys of a component value: one (`single`) or any number (`multi`).
pub(crate) struct KeyFn<K> {
    component: &'static ComponentInfo,
    keys: Box<Keys<K>>,
}

impl<K: 'static> KeyFn<K> {
    /// One key per value of `T`.
    pub(crate) fn single<T: Component>(key: impl Fn(&T) -> K + Send + Sync + 'static) -> Self {
        KeyFn {
            component: T::component_info(),
            keys: Box::new(move |value, out| {
                if let Some(value) = value.get::<T>() {
                    out(key(value));
                }
            }),
        }
    }

    /// Any number of keys per value of `T` (e.g. every grid cell a bounding
    /// box covers).
    pub(crate) fn multi<T, I>(keys: impl Fn(&T) -> I + Send + Sync + 'static) -> Self
    where
        T: Component,
        I: IntoIterator<Item = K>,
    {
        KeyFn {
            component: T::component_info(),
            keys: Box::new(move |value, out| {
                if let Some(value) = value.get::<T>() {
                    keys(value).into_iter().for_each(&mut *out);
                }
            }),
        }
    }

    /// The component the keys are made from.
    pub(crate) fn info(&self) -> &'static ComponentInfo {
        self.component
    }

    /// Calls `out` with each key of `value` (none if `value` is not of the
    /// key component's type).
    #[inline]
    pub(crate) fn each(&self, value: ComponentRef<'_>, out: &mut dyn FnMut(K)) {
        (self.keys)(value, out);
    }

    /// The keys of `value` into `into` (emptied first), in the order the key
    /// function gives them, each once. Runs the user's key function before
    /// touching anything else, so a panic in it leaves `into` partly filled
    /// and nothing else changed.
    pub(crate) fn collect(&self, value: ComponentRef<'_>, into: &mut Vec<K>)
    where
        K: Eq,
    {
        into.clear();
        self.each(value, &mut |key| {
            if !into.contains(&key) {
                into.push(key);
            }
        });
    }
}

/// The keys an index made for the entity a change is about, before the
/// change, waiting to be filed once it is done (so that the key function is
/// called once per change, and never while the change is half made).
pub(crate) struct Prepared<K> {
    keys: Vec<K>,
    ready: bool,
}

impl<K> Default for Prepared<K> {
    fn default() -> Self {
        Prepared {
            keys: Vec::new(),
            ready: false,
        }
    }
}

impl<K: Eq + 'static> Prepared<K> {
    /// Makes the keys of `value` with `keys`, each once, and gives them for
    /// checking. If the key function panics, nothing is ready.
    pub(crate) fn make(&mut self, keys: &KeyFn<K>, value: ComponentRef<'_>) -> &[K] {
        self.ready = false;
        keys.collect(value, &mut self.keys);
        self.ready = true;
        &self.keys
    }

    /// Forgets the keys made (they were refused).
    pub(crate) fn cancel(&mut self) {
        self.ready = false;
    }

    /// The keys made, taken out to be filed (empty if none were made, a
    /// bug); give the list back with [`Prepared::give_back`].
    pub(crate) fn take(&mut self) -> Vec<K> {
        debug_assert!(self.ready, "filing without prepared keys");
        let mut keys = std::mem::take(&mut self.keys);
        if !std::mem::take(&mut self.ready) {
            keys.clear();
        }
        keys
    }

    /// Returns the list taken with [`Prepared::take`], for its memory.
    pub(crate) fn give_back(&mut self, mut keys: Vec<K>) {
        keys.clear();
        self.keys = keys;
    }
}
