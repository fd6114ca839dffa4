//! What a column provides: per workload, a constructor for a timed cell (or,
//! for memory_1m, a world builder run in a child process), with the choices
//! it makes written in one line.

use crate::params::Params;

/// One column's state for one workload: a world set up to run the workload
/// again and again, and what it has seen so far.
pub trait Cell {
    /// Untimed, before each run: whatever a run needs that the workload does
    /// not measure (simple_insert drops the previous world here).
    fn prepare(&mut self) {}

    /// One run of the workload: the timed part.
    fn run(&mut self);

    /// Checks every run so far, against a prediction made without the
    /// column's crate.
    fn verify(&mut self) -> Result<(), String>;
}

/// A world kept alive while its memory is measured.
pub type Held = Box<dyn std::any::Any>;

/// How a column takes part in a workload.
pub enum Kind {
    /// Timed runs of a cell.
    Timed(fn(&Params) -> Box<dyn Cell>),
    /// memory_1m: builds `memory_entities` entities, checks them, and keeps
    /// the world alive until it is dropped.
    Memory(fn(&Params) -> (Held, Result<(), String>)),
}

/// One column of one workload.
pub struct Column {
    /// The workload's name, as on the command line.
    pub workload: &'static str,
    /// The column's name: the crate, then `:` and the way of writing it when
    /// a crate has several (`reactecs:modify_each`).
    pub name: &'static str,
    /// The choices this column makes, in one line.
    pub choices: &'static str,
    /// How it runs.
    pub kind: Kind,
}

impl Column {
    /// A timed column.
    pub fn timed(
        workload: &'static str,
        name: &'static str,
        choices: &'static str,
        make: fn(&Params) -> Box<dyn Cell>,
    ) -> Self {
        Column {
            workload,
            name,
            choices,
            kind: Kind::Timed(make),
        }
    }

    /// A memory_1m column.
    pub fn memory(name: &'static str, choices: &'static str, build: fn(&Params) -> (Held, Result<(), String>)) -> Self {
        Column {
            workload: "memory_1m",
            name,
            choices,
            kind: Kind::Memory(build),
        }
    }

    /// The crate this column measures (`reactecs` for `reactecs:modify_each`).
    pub fn crate_name(&self) -> &'static str {
        self.name.split(':').next().unwrap_or(self.name)
    }
}

/// The workloads, in the table's order.
pub const WORKLOADS: [&str; 11] = [
    "simple_insert",
    "simple_iter",
    "fragmented_iter",
    "heavy_compute",
    "add_remove",
    "reactive_replace",
    "reactive_replace_sparse",
    "reactive_add_remove",
    "index_lookup",
    "boids",
    "memory_1m",
];

/// The crates (and the baseline) with a column in `workload`: every one,
/// except in boids, a whole simulation written for reactecs (the example),
/// by hand (the example's twin) and for bevy_ecs only. The test checks
/// that each has its column.
#[cfg(test)]
pub fn crates_of(workload: &str) -> &'static [&'static str] {
    match workload {
        "boids" => &["reactecs", "bevy", "baseline"],
        _ => &["reactecs", "bevy", "hecs", "shipyard", "specs", "baseline"],
    }
}
