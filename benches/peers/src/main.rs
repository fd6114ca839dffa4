//! reactecs side by side with bevy_ecs, hecs, shipyard, specs and a
//! plain-Rust baseline, on the same workloads, in one process.
//!
//! Every column of a workload runs in the same process, interleaved in
//! rounds whose starting column rotates; each timed sample follows a short
//! settle pause and one untimed warm run, and a column's figure is the
//! median of its per-run times. memory_1m builds each world in a child
//! process of this binary and reads its resident growth from
//! `/proc/self/statm`. Every cell checks its results against a prediction
//! made without the crate under test; a failed check fails the run.
//!
//! See `README.md` beside this project for the options and for how to add
//! a column.

#[allow(dead_code, reason = "the example's modules, of which the boids workload uses a part")]
#[path = "../../../examples/boids/by_hand.rs"]
mod by_hand;
mod cell;
mod columns;
mod data;
#[allow(dead_code, reason = "the example's modules, of which the boids workload uses a part")]
#[path = "../../../examples/boids/flock.rs"]
mod flock;
mod params;
mod report;
mod run;
mod work;

use std::process::ExitCode;

use params::Params;

/// The command line.
#[derive(Debug)]
pub struct Options {
    /// Timed samples per cell.
    pub samples: usize,
    /// The workloads to run (all when empty).
    pub workloads: Vec<String>,
    /// The columns to run: a name (`reactecs:modify_each`) or a crate
    /// (`reactecs`); all when empty.
    pub columns: Vec<String>,
    /// Threads for rayon's global pool and bevy's compute task pool.
    pub threads: usize,
    /// Check every cell and time nothing.
    pub verify_only: bool,
    /// Where to write the results (`.csv` or `.json`).
    pub out: Option<String>,
    /// Use the small sizes of the test.
    pub small: bool,
    /// List the columns and their choices, then stop.
    pub list: bool,
    /// Internal: build one memory_1m world in this (child) process.
    pub memory_child: Option<String>,
}

const USAGE: &str = "\
usage: reactecs-peers [options]
  --samples N         timed samples per cell (default 30)
  --workloads a,b     workloads to run (default: all)
  --columns x,y       columns to run, by name or crate (default: all)
  --threads N         rayon's global pool and bevy's task pool (default: all cores)
  --verify-only       check every cell, time nothing
  --out FILE          also write the results to FILE (.csv or .json)
  --small             the test's small sizes
  --list              list the columns and their choices";

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        samples: 30,
        workloads: Vec::new(),
        columns: Vec::new(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        verify_only: false,
        out: None,
        small: false,
        list: false,
        memory_child: None,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        let list = |text: String| text.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect();
        let number = |name: &str, text: String| -> Result<usize, String> {
            match text.parse() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("{name} wants a positive number, not {text:?}")),
            }
        };
        match arg.as_str() {
            "--samples" => options.samples = number("--samples", value("--samples")?)?,
            "--threads" => options.threads = number("--threads", value("--threads")?)?,
            "--workloads" => options.workloads = list(value("--workloads")?),
            "--columns" => options.columns = list(value("--columns")?),
            "--out" => options.out = Some(value("--out")?),
            "--verify-only" => options.verify_only = true,
            "--small" => options.small = true,
            "--list" => options.list = true,
            "--memory-child" => options.memory_child = Some(value("--memory-child")?),
            // `cargo bench` passes this to every bench binary.
            "--bench" => {}
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown option {other:?}\n{USAGE}")),
        }
    }
    for w in &options.workloads {
        if !cell::WORKLOADS.contains(&w.as_str()) {
            return Err(format!(
                "unknown workload {w:?}; the workloads: {}",
                cell::WORKLOADS.join(", ")
            ));
        }
    }
    if let Some(out) = &options.out
        && !(out.ends_with(".csv") || out.ends_with(".json"))
    {
        return Err(format!("--out {out:?}: the file name must end in .csv or .json"));
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    let params = if options.small {
        Params::small()
    } else {
        Params::suite()
    };
    if let Some(name) = &options.memory_child {
        return run::memory_child(name, &params);
    }
    run::init_threads(options.threads);
    let columns = columns::all();
    let selected = run::select(&columns, &options);
    if options.list {
        for c in &selected {
            println!("{:<24} {:<30} {}", c.workload, c.name, c.choices);
        }
        return ExitCode::SUCCESS;
    }
    if selected.is_empty() {
        eprintln!("no column matches --workloads / --columns");
        return ExitCode::FAILURE;
    }
    if options.verify_only {
        let failures = run::verify_all(&selected, &params, true);
        return if failures == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let results = run::measure(&selected, &params, &options);
    report::print(&results, &options);
    if let Some(out) = &options.out
        && let Err(e) = report::write(out, &results)
    {
        eprintln!("writing {out}: {e}");
        return ExitCode::FAILURE;
    }
    if results.iter().any(|r| r.error.is_some()) {
        eprintln!("some cells failed their checks");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cell of every workload passes the checks `--verify-only` makes,
    /// at the small sizes (memory_1m's worlds are built in this process);
    /// every workload has a column of each crate that runs it.
    #[test]
    fn every_cell_verifies() {
        run::init_threads(2);
        let columns = columns::all();
        let options = parse(std::iter::empty()).unwrap();
        let selected = run::select(&columns, &options);
        for workload in cell::WORKLOADS {
            for crate_name in cell::crates_of(workload) {
                assert!(
                    selected
                        .iter()
                        .any(|c| c.workload == workload && c.crate_name() == *crate_name),
                    "{workload}: a column of {crate_name}"
                );
            }
        }
        assert_eq!(run::verify_all(&selected, &Params::small(), false), 0);
    }

    #[test]
    fn options_parse() {
        let args = "--samples 5 --workloads simple_iter,add_remove --columns reactecs,bevy --threads 1 --out x.json";
        let options = parse(args.split(' ').map(str::to_owned)).unwrap();
        assert_eq!(options.samples, 5);
        assert_eq!(options.workloads, ["simple_iter", "add_remove"]);
        assert_eq!(options.columns, ["reactecs", "bevy"]);
        assert_eq!(options.threads, 1);
        assert!(parse(["--workloads".to_owned(), "nope".to_owned()].into_iter()).is_err());
        assert!(parse(["--out".to_owned(), "x.txt".to_owned()].into_iter()).is_err());
    }
}
