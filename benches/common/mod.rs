//! Bench helpers: the ecs_bench_suite components, and a ratio report that reads
//! criterion's estimates after a run and prints each measurement relative to
//! the plain-Rust baseline measured in the same run.
#![allow(dead_code)]

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

/// Prints `name: X ns (R x baseline)` for each measured function of `group`.
pub fn report_ratios(group: &str, baseline: &str, others: &[&str]) {
    let Some(base) = mean_ns(group, baseline) else {
        println!("{group}: no estimates (run `cargo bench --bench {group}` for ratios)");
        return;
    };
    println!(
        "\n{group}: ratios to `{baseline}` ({:.1} us) measured in the same run",
        base / 1000.0
    );
    for name in others {
        if let Some(mean) = mean_ns(group, name) {
            println!(
                "  {name:<24} {:>10.1} us  {:>5.2}x baseline",
                mean / 1000.0,
                mean / base
            );
        }
    }
}
