//! Systems declared for a feature anywhere in a program, gathered with
//! `inventory`: the `feature_system!` macro and what it registers.

use std::any::{Any, TypeId};

use super::AnySystem;

/// What [`feature_system!`](crate::feature_system!) submits to `inventory`: a
/// system for the feature named `feature`, on the world whose type id `world`
/// returns. `make` builds the system as a `Box<dyn AnySystem<W> + Send>`, boxed again as
/// `Box<dyn Any>` so the registry needs no knowledge of world types.
#[doc(hidden)]
pub struct SystemRegistration {
    /// The name of the feature the system belongs to.
    pub feature: &'static str,
    /// Systems of a feature run by ascending priority.
    pub priority: i32,
    /// The type id of the world `W`.
    pub world: fn() -> TypeId,
    /// Builds `Box::new(Box::new(system) as Box<dyn AnySystem<W> + Send>)`.
    pub make: fn() -> Box<dyn Any>,
}

inventory::collect!(SystemRegistration);

/// Builds the systems registered for `feature` on world `W`, by ascending
/// priority, then by name.
pub(crate) fn registered<W: 'static>(feature: &str) -> Vec<Box<dyn AnySystem<W> + Send>> {
    let world = TypeId::of::<W>();
    let mut found: Vec<(i32, Box<dyn AnySystem<W> + Send>)> = inventory::iter::<SystemRegistration>
        .into_iter()
        .filter(|registration| registration.feature == feature && (registration.world)() == world)
        // `world` matched, so `make` built a `Box<dyn AnySystem<W> + Send>` (the macro
        // pairs them); a registration written by hand that does not is skipped.
        .filter_map(|registration| {
            let system = (registration.make)().downcast::<Box<dyn AnySystem<W> + Send>>().ok()?;
            Some((registration.priority, *system))
        })
        .collect();
    // Stable: systems of equal priority and name keep `inventory`'s order.
    found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name().cmp(b.1.name())));
    found.into_iter().map(|(_, system)| system).collect()
}

/// Declares that a feature contains a system, anywhere at item level;
/// [`Feature::with_registered`](crate::Feature::with_registered) gathers the
/// declarations made for its name.
///
/// ```
/// use reactecs::prelude::*;
/// #[derive(Default)]
/// struct Move;
/// impl System for Move {}
///
/// // A system of the feature "Game", run on a `Context`, at priority 10:
/// reactecs::feature_system!("Game", 10, Move::default());
///
/// // For another world type, name it before `=>`:
/// struct Worlds { game: Context, ui: Context }
/// #[derive(Default)]
/// struct Layout;
/// impl System<Worlds> for Layout {}
/// reactecs::feature_system!(Worlds => "Game", 10, Layout::default());
///
/// let game = Feature::<Context>::new("Game").with_registered();
/// assert_eq!(game.iter().map(|s| s.name()).collect::<Vec<_>>(), ["Move"]);
/// let all = Feature::<Worlds>::new("Game").with_registered();
/// assert_eq!(all.iter().map(|s| s.name()).collect::<Vec<_>>(), ["Layout"]);
/// ```
///
/// - The feature name is a `&'static str` expression (usually a literal) and
///   the priority an `i32` expression; both must be usable in a `static`.
///   Lower priorities run first; equal priorities run in order of the
///   systems' names.
/// - The system expression is evaluated each time a feature gathers its
///   systems, so every feature gets a fresh system. The system must be
///   `Send`, as every system added to a feature is.
/// - The world type must be `'static`; without `World =>` it is
///   [`Context`](crate::Context).
#[macro_export]
macro_rules! feature_system {
    ($world:ty => $feature:expr, $priority:expr, $system:expr $(,)?) => {
        const _: () = {
            fn make() -> ::std::boxed::Box<dyn ::core::any::Any> {
                let system: ::std::boxed::Box<dyn $crate::__private::AnySystem<$world> + ::core::marker::Send> = ::std::boxed::Box::new($system);
                ::std::boxed::Box::new(system)
            }
            $crate::__private::inventory::submit! {
                $crate::__private::SystemRegistration {
                    feature: $feature,
                    priority: $priority,
                    world: ::core::any::TypeId::of::<$world>,
                    make,
                }
            }
        };
    };
    ($feature:expr, $priority:expr, $system:expr $(,)?) => {
        $crate::feature_system!($crate::Context => $feature, $priority, $system);
    };
}
