//! Bench helpers: the ecs_bench_suite components, and a ratio report that reads
//! criterion's estimates after a run and prints each measurement relative to
//! the plain-Rust baseline measured in the same run.
#![allow(dead_code)]

pub mod frame;

use std::path::PathBuf;

/// A 4x4 f32 matrix (ecs_bench_suite's `Transform`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform(pub [[f32; 4]; 4]);

/// 3 x f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position(pub [f32; 3]);

/// 3 x f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rotation(pub [f32; 3]);

/// 3 x f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity(pub [f32; 3]);

reactecs::component!(Transform, Position, Rotation, Velocity);

pub const IDENTITY: Transform = Transform([
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
]);

/// The time (slope, else mean) criterion estimated for `group/name` in this run, in ns.
fn mean_ns(group: &str, name: &str) -> Option<f64> {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
    let path = target
        .join("criterion")
        .join(group)
        .join(name)
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    // {"mean":{...,"point_estimate":123.4,...},...,"slope":{...}} or "slope":null.
    // Criterion reports the slope when it has one (linear sampling): use the same.
    let point = |key: &str| -> Option<f64> {
        let section = &text[text.find(&format!("\"{key}\":{{"))?..];
        let estimate = &section[section.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
        estimate[..estimate.find([',', '}'])?].trim().parse().ok()
    };
    point("slope").or_else(|| point("mean"))
}

/// Prints `name: X (R x baseline)` for each measured function of `group`, in
/// ns or us as fits the baseline. Only under `cargo bench` (criterion's test
/// mode, `cargo test --benches`, writes no estimates, so any found would be an
/// earlier run's).
pub fn report_ratios(group: &str, baseline: &str, others: &[&str]) {
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let Some(base) = mean_ns(group, baseline) else {
        println!("{group}: no estimates (run `cargo bench --bench {group}` for ratios)");
        return;
    };
    let (unit, scale) = if base < 10_000.0 { ("ns", 1.0) } else { ("us", 1000.0) };
    println!(
        "\n{group}: ratios to `{baseline}` ({:.1} {unit}) measured in the same run",
        base / scale
    );
    for name in others {
        if let Some(mean) = mean_ns(group, name) {
            println!(
                "  {name:<24} {:>10.1} {unit}  {:>5.2}x baseline",
                mean / scale,
                mean / base
            );
        }
    }
}

/// `Vector3::unit_x()`, ecs_bench_suite's starting Position, Rotation and Velocity.
pub const UNIT_X: [f32; 3] = [1.0, 0.0, 0.0];

/// One entity of the ecs_bench_suite workloads as a plain struct: the row type
/// of the Vec-of-struct baselines.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SuiteRow {
    pub transform: Transform,
    pub position: Position,
    pub rotation: Rotation,
    pub velocity: Velocity,
}

impl SuiteRow {
    /// A row with `transform` and the three vectors at [`UNIT_X`].
    pub fn new(transform: Transform) -> Self {
        SuiteRow {
            transform,
            position: Position(UNIT_X),
            rotation: Rotation(UNIT_X),
            velocity: Velocity(UNIT_X),
        }
    }

    /// The same data as a bundle for `create_entity_with`/`create_entities_with`.
    pub fn bundle(self) -> (Transform, Position, Rotation, Velocity) {
        (self.transform, self.position, self.rotation, self.velocity)
    }
}
