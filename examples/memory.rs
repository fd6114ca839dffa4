//! How much memory an entity takes: creates 1,000,000 entities with two
//! 12-byte components (a position and a velocity), and reports the resident
//! bytes per entity the process gained, next to the same data as a plain
//! `Vec` of structs. Each side is measured in a process of its own (this
//! program runs itself twice), so what one side freed cannot hide what the
//! other allocated.
//!
//! Resident memory is read from `/proc/self/statm`, so the figures need
//! Linux; elsewhere the program says so and stops.
//!
//! ```sh
//! cargo run --release --example memory
//! ```

use std::hint::black_box;
use std::process::{Command, ExitCode};

use reactecs::Context;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Position([f32; 3]);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Velocity([f32; 3]);
reactecs::component!(Position, Velocity);

/// The plain-Rust equivalent: one struct per entity.
#[derive(Clone, Copy)]
struct Row {
    position: Position,
    velocity: Velocity,
}

const ENTITIES: usize = 1_000_000;

/// The resident set size of this process, in bytes (`None` off Linux):
/// `/proc/self/statm`'s resident pages times the page size.
fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size()?)
}

/// The kernel's page size: the `AT_PAGESZ` (6) entry of the auxiliary vector,
/// pairs of native-endian words in `/proc/self/auxv`.
fn page_size() -> Option<usize> {
    const AT_PAGESZ: usize = 6;
    let auxv = std::fs::read("/proc/self/auxv").ok()?;
    let word = size_of::<usize>();
    let read = |at: &[u8]| usize::from_ne_bytes(at.try_into().expect("one word"));
    auxv.chunks_exact(2 * word)
        .find(|pair| read(&pair[..word]) == AT_PAGESZ)
        .map(|pair| read(&pair[word..]))
}

fn start(i: usize) -> (Position, Velocity) {
    (Position([i as f32, 0.0, 0.0]), Velocity([1.0, 0.5, 0.0]))
}

/// Builds one side's data and returns the resident bytes it added.
fn measure(side: &str) -> Option<usize> {
    let before = resident_bytes()?;
    match side {
        "reactecs" => {
            let mut game = Context::new();
            for i in 0..ENTITIES {
                game.create_entity_with(start(i)).expect("a valid bundle");
            }
            let after = resident_bytes()?;
            assert_eq!(game.len(), ENTITIES);
            let total: f32 = game.query::<&Velocity>().iter().map(|v| v.0[0]).sum();
            assert_eq!(total, ENTITIES as f32);
            black_box(&game);
            Some(after - before)
        }
        _ => {
            let rows: Vec<Row> = (0..ENTITIES)
                .map(|i| {
                    let (position, velocity) = start(i);
                    Row { position, velocity }
                })
                .collect();
            let after = resident_bytes()?;
            assert_eq!(rows.iter().map(|r| r.velocity.0[0]).sum::<f32>(), ENTITIES as f32);
            assert_eq!(rows[7].position, Position([7.0, 0.0, 0.0]));
            black_box(&rows);
            Some(after - before)
        }
    }
}

fn main() -> ExitCode {
    if let Some(side) = std::env::args().nth(1) {
        // A child: measure one side, print the bytes.
        return match measure(&side) {
            Some(bytes) => {
                println!("{bytes}");
                ExitCode::SUCCESS
            }
            None => ExitCode::FAILURE,
        };
    }
    if resident_bytes().is_none() {
        println!("memory: resident bytes come from /proc/self/statm, which this system lacks (Linux only)");
        return ExitCode::SUCCESS;
    }
    let me = std::env::current_exe().expect("the running program");
    let run = |side: &str| -> usize {
        let out = Command::new(&me).arg(side).output().expect("run a measuring child");
        assert!(out.status.success(), "the {side} child failed");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("a byte count")
    };
    let (ecs, plain) = (run("reactecs"), run("baseline"));
    let per = |bytes: usize| bytes as f64 / ENTITIES as f64;
    println!("{ENTITIES} entities with two 12-byte components (Position, Velocity):");
    println!("  reactecs                {:>6.2} bytes per entity", per(ecs));
    println!("  Vec of structs          {:>6.2} bytes per entity", per(plain));
    println!("  ratio                   {:>6.2}x", per(ecs) / per(plain));
    ExitCode::SUCCESS
}
