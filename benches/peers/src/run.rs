//! Running the cells: selection, checks, interleaved timing, and memory_1m's
//! child processes.

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use crate::Options;
use crate::cell::{Cell, Column, Kind, WORKLOADS};
use crate::params::Params;
use crate::report::Outcome;

/// The pause before each timed sample, so that the previous column's
/// threads and caches have settled.
const SETTLE: Duration = Duration::from_millis(1);

/// A timed sample lasts about this long: runs shorter than it are repeated
/// within the sample and the per-run time is the sample's mean.
const SAMPLE_TARGET: Duration = Duration::from_millis(5);

/// memory_1m takes at most this many samples per column (it is
/// deterministic up to the allocator's page rounding).
const MEMORY_SAMPLES: usize = 3;

/// Sizes rayon's global pool and bevy's compute task pool.
pub fn init_threads(threads: usize) {
    // The test calls this once per test; a second call finds the pools set.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global();
    bevy_tasks::ComputeTaskPool::get_or_init(|| bevy_tasks::TaskPoolBuilder::new().num_threads(threads).build());
}

/// The columns the options select, in workload order.
pub fn select<'a>(columns: &'a [Column], options: &Options) -> Vec<&'a Column> {
    let wanted_column = |c: &Column| {
        options.columns.is_empty()
            || options
                .columns
                .iter()
                .any(|name| name == c.name || name == c.crate_name())
    };
    WORKLOADS
        .iter()
        .filter(|w| options.workloads.is_empty() || options.workloads.iter().any(|x| x == *w))
        .flat_map(|w| columns.iter().filter(move |c| c.workload == *w))
        .filter(|c| wanted_column(c))
        .collect()
}

/// Runs each cell a few times, checking after the first run and after the
/// last; returns the number of cells that failed.
pub fn verify_all(columns: &[&Column], params: &Params, print: bool) -> usize {
    let mut failures = 0;
    for column in columns {
        let result = verify_one(column, params);
        match &result {
            Ok(()) if print => println!("ok      {:<24} {}", column.workload, column.name),
            Ok(()) => {}
            Err(e) => {
                failures += 1;
                eprintln!("FAILED  {:<24} {}: {e}", column.workload, column.name);
            }
        }
    }
    failures
}

fn verify_one(column: &Column, params: &Params) -> Result<(), String> {
    match column.kind {
        Kind::Timed(make) => {
            let mut cell = make(params);
            // Enough runs to pass fragmented_iter's reset at the small sizes
            // and to wrap reactive_replace_sparse's plan of frames.
            let runs = params.fragment_reset_every + 3;
            for run in 1..=runs {
                cell.prepare();
                cell.run();
                if run == 1 || run == runs {
                    cell.verify().map_err(|e| format!("after run {run}: {e}"))?;
                }
            }
            Ok(())
        }
        Kind::Memory(build) => {
            if params.memory_entities >= 100_000 {
                // At the suite's size, through the child process the timing uses.
                measure_memory_once(column, false).map(|_| ())
            } else {
                build(params).1
            }
        }
    }
}

/// Times every selected cell, workload by workload.
pub fn measure(columns: &[&Column], params: &Params, options: &Options) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for workload in WORKLOADS {
        let of_workload: Vec<&Column> = columns.iter().copied().filter(|c| c.workload == workload).collect();
        if of_workload.is_empty() {
            continue;
        }
        eprintln!("{workload}: {} columns, {} samples", of_workload.len(), options.samples);
        if workload == "memory_1m" {
            outcomes.extend(measure_memory(&of_workload, options));
        } else {
            outcomes.extend(measure_timed(&of_workload, params, options.samples));
        }
    }
    outcomes
}

fn measure_timed(columns: &[&Column], params: &Params, samples: usize) -> Vec<Outcome> {
    let mut cells: Vec<Box<dyn Cell>> = columns
        .iter()
        .map(|c| match c.kind {
            Kind::Timed(make) => make(params),
            Kind::Memory(_) => unreachable!("memory_1m is measured in child processes"),
        })
        .collect();
    // How many runs make a sample: from the fastest of three runs.
    let repeats: Vec<usize> = cells
        .iter_mut()
        .map(|cell| {
            let fastest = (0..3).map(|_| time_run(cell.as_mut())).min().expect("three runs");
            let per_sample = SAMPLE_TARGET.as_nanos() / fastest.as_nanos().max(1);
            per_sample.clamp(1, 10_000) as usize
        })
        .collect();
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(samples); cells.len()];
    for round in 0..samples {
        for k in 0..cells.len() {
            let i = (round + k) % cells.len();
            let cell = cells[i].as_mut();
            std::thread::sleep(SETTLE);
            cell.prepare();
            cell.run();
            let total: Duration = (0..repeats[i]).map(|_| time_run(cell)).sum();
            times[i].push(total.as_nanos() as f64 / repeats[i] as f64);
        }
    }
    columns
        .iter()
        .zip(cells.iter_mut())
        .zip(times)
        .map(|((column, cell), samples)| Outcome::new(column, "ns", samples, cell.verify().err()))
        .collect()
}

fn time_run(cell: &mut dyn Cell) -> Duration {
    cell.prepare();
    let start = Instant::now();
    cell.run();
    start.elapsed()
}

fn measure_memory(columns: &[&Column], options: &Options) -> Vec<Outcome> {
    let samples = options.samples.min(MEMORY_SAMPLES);
    let mut bytes: Vec<Vec<f64>> = vec![Vec::new(); columns.len()];
    let mut errors: Vec<Option<String>> = vec![None; columns.len()];
    for round in 0..samples {
        for k in 0..columns.len() {
            let i = (round + k) % columns.len();
            match measure_memory_once(columns[i], options.small) {
                Ok(per_entity) => bytes[i].push(per_entity),
                Err(e) => errors[i] = Some(e),
            }
        }
    }
    columns
        .iter()
        .zip(bytes)
        .zip(errors)
        .map(|((column, samples), error)| Outcome::new(column, "B/entity", samples, error))
        .collect()
}

/// Runs memory_1m's column `column` in a child process of this binary;
/// returns the resident growth per entity in bytes.
fn measure_memory_once(column: &Column, small: bool) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding this binary: {e}"))?;
    let mut command = Command::new(exe);
    command.args(["--memory-child", column.name]);
    if small {
        command.arg("--small");
    }
    let output = command.output().map_err(|e| format!("starting the child: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "the child failed: {}{}",
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    stdout
        .trim()
        .strip_prefix("bytes-per-entity ")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("the child said {stdout:?}"))
}

/// Resident memory of this process, in bytes, from `/proc/self/statm` (its
/// second field counts resident pages; pages are 4 KiB on the x86-64 and
/// aarch64 Linux this runs on).
fn resident_bytes() -> Result<u64, String> {
    let statm = std::fs::read_to_string("/proc/self/statm").map_err(|e| format!("/proc/self/statm: {e}"))?;
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("/proc/self/statm: {statm:?}"))?;
    Ok(pages * 4096)
}

/// In the child: builds column `name`'s memory_1m world, checks it and
/// prints its resident growth per entity.
pub fn memory_child(name: &str, params: &Params) -> ExitCode {
    let columns = crate::columns::all();
    let Some(Kind::Memory(build)) = columns
        .iter()
        .find(|c| c.workload == "memory_1m" && c.name == name)
        .map(|c| &c.kind)
    else {
        println!("no memory_1m column {name:?}");
        return ExitCode::FAILURE;
    };
    let measured = (|| {
        let before = resident_bytes()?;
        let (world, check) = build(params);
        let after = resident_bytes()?;
        check?;
        drop(world);
        Ok::<f64, String>(after.saturating_sub(before) as f64 / params.memory_entities as f64)
    })();
    match measured {
        Ok(per_entity) => {
            println!("bytes-per-entity {per_entity}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{e}");
            ExitCode::FAILURE
        }
    }
}
