//! Every column, one module per crate. To add a column, write a module with
//! a `columns()` listing a [`Column`] per workload it runs, and add it to
//! [`all`].

use crate::cell::Column;

mod baseline;
mod bevy;
mod hecs;
mod reactecs;
mod shipyard;
mod specs;

/// Every column of every workload.
pub fn all() -> Vec<Column> {
    let mut columns = reactecs::columns();
    columns.extend(bevy::columns());
    columns.extend(hecs::columns());
    columns.extend(shipyard::columns());
    columns.extend(specs::columns());
    columns.extend(baseline::columns());
    columns
}
