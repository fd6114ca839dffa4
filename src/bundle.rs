//! Component tuples: `ComponentTuple` (a list of component types) and
//! `Bundle` (a tuple of component values, to create an entity with).

use crate::component::Component;
use crate::id::ComponentId;
use crate::storage::{ComponentRef, RowValues, RowWriter};

mod sealed {
    pub trait Sealed {}
}

/// A tuple of component types, e.g. `(Position, Velocity)`, or a single
/// component type; used by [`EntityRef::has_all`](crate::EntityRef::has_all) and
/// [`EntityRef::has_any`](crate::EntityRef::has_any). Implemented for tuples of up
/// to 12 components.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component or a tuple of components",
    label = "expected a component type, or a tuple such as `(Position, Velocity)`",
    note = "declare component types with `reactecs::component!(MyType)`"
)]
pub trait ComponentTuple: sealed::Sealed + 'static {
    /// Calls `f` with each type's id, in tuple order.
    fn for_each_id(f: impl FnMut(ComponentId));
}

/// A tuple of component values, e.g. `(Position { .. }, Velocity { .. })`, or
/// a single component value, written into an entity in one step by
/// [`Context::create_entity_with`](crate::Context::create_entity_with).
/// Implemented for tuples of up to 12 components.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component or a tuple of components",
    label = "expected a component value, or a tuple such as `(Position {{ .. }}, Velocity {{ .. }})`",
    note = "declare component types with `reactecs::component!(MyType)`"
)]
pub trait Bundle: ComponentTuple + Send + Sync {
    /// The bundle as a batch of new rows writes it: a tuple of its values.
    #[doc(hidden)]
    type Row: RowValues;

    /// The values as a tuple (a single component: a tuple of one).
    #[doc(hidden)]
    fn into_row(self) -> Self::Row;

    /// The bundle back from [`into_row`](Bundle::into_row)'s tuple.
    #[doc(hidden)]
    fn from_row(row: Self::Row) -> Self;

    /// Writes each value into the row, in tuple order. Every value is either
    /// written or, if `put` refuses it, dropped here.
    #[doc(hidden)]
    fn write_into(self, row: &mut RowWriter<'_>);

    /// A view of the value of component `id`, if the bundle has one (for
    /// checks made before the entity is created).
    #[doc(hidden)]
    fn component_ref(&self, id: ComponentId) -> Option<ComponentRef<'_>>;
}

macro_rules! tuples {
    ($($name:ident),*) => {
        impl<$($name: Component),*> sealed::Sealed for ($($name,)*) {}

        impl<$($name: Component),*> ComponentTuple for ($($name,)*) {
            #[allow(unused_variables, unused_mut)]
            #[inline]
            fn for_each_id(mut f: impl FnMut(ComponentId)) {
                $(f($name::component_id());)*
            }
        }

        impl<$($name: Component),*> Bundle for ($($name,)*) {
            type Row = Self;

            #[inline(always)]
            fn into_row(self) -> Self {
                self
            }

            #[inline(always)]
            fn from_row(row: Self) -> Self {
                row
            }

            #[allow(unused_variables, non_snake_case)]
            #[inline]
            fn write_into(self, row: &mut RowWriter<'_>) {
                let ($($name,)*) = self;
                $(let _refused = row.put($name);)*
            }

            #[allow(unused_variables, non_snake_case)]
            fn component_ref(&self, id: ComponentId) -> Option<ComponentRef<'_>> {
                let ($($name,)*) = self;
                $(if $name::component_id() == id {
                    return Some(ComponentRef::new($name::component_info(), $name));
                })*
                None
            }
        }
    };
}

impl<C: Component> sealed::Sealed for C {}

/// A single component is a bundle of one: `create_entity_with(Position { .. })`.
impl<C: Component> ComponentTuple for C {
    #[inline]
    fn for_each_id(mut f: impl FnMut(ComponentId)) {
        f(C::component_id());
    }
}

impl<C: Component> Bundle for C {
    type Row = (C,);

    #[inline(always)]
    fn into_row(self) -> (C,) {
        (self,)
    }

    #[inline(always)]
    fn from_row((value,): (C,)) -> Self {
        value
    }

    #[inline]
    fn write_into(self, row: &mut RowWriter<'_>) {
        let _refused = row.put(self);
    }

    fn component_ref(&self, id: ComponentId) -> Option<ComponentRef<'_>> {
        (C::component_id() == id).then(|| ComponentRef::new(C::component_info(), self))
    }
}

tuples!();
tuples!(A);
tuples!(A, B);
tuples!(A, B, C);
tuples!(A, B, C, D);
tuples!(A, B, C, D, E);
tuples!(A, B, C, D, E, F);
tuples!(A, B, C, D, E, F, G);
tuples!(A, B, C, D, E, F, G, H);
tuples!(A, B, C, D, E, F, G, H, I);
tuples!(A, B, C, D, E, F, G, H, I, J);
tuples!(A, B, C, D, E, F, G, H, I, J, K);
tuples!(A, B, C, D, E, F, G, H, I, J, K, L);
