//! Snapshots from strangers (feature `serde`): inputs that claim far more
//! than they hold (billions of entities in a few bytes, lists of 2^40
//! values), every truncation, every single-bit flip and random mutations of
//! valid snapshots, through both restore paths and both formats. Each is
//! refused with `InvalidSnapshot` (the target left empty and usable) or
//! restored whole, and restore never asks the allocator for more than a
//! fixed multiple of the input's size (plus a fixed allowance for the
//! archetypes it meets). `RestoreLimits` bounds entities, entities without
//! values, and bytes.
#![cfg(feature = "serde")]

mod snapshot_fixture;

use reactecs::RestoreLimits;
use reactecs::prelude::*;
use snapshot_fixture::hostile::{WAYS, Way, check_outcome, game, restore_fuzzed, target};
use snapshot_fixture::*;

/// What a restore may ask the allocator for, in all, per byte of input.
const BYTES_PER_INPUT_BYTE: u64 = 64;
/// And once per restore: the context's bookkeeping, the lists' first
/// reservations, a chunk per archetype met (up to 16 here), and the 65,536
/// entities without values `RestoreLimits` allows by default (which cost
/// the input nothing), at 64 bytes each.
const ALLOWANCE: u64 = (1 << 20) + 64 * (1 << 16);

/// Restores `input` the given way into a new target, counting what the
/// restore asks the allocator for (within the bound), and checks the
/// outcome (`check_outcome`).
fn restore_counted(way: Way, input: &[u8], limits: RestoreLimits) -> Result<(), Error> {
    let mut target = target();
    let mut result = Ok(());
    let asked = allocation_counter::measure(|| result = way.restore(&mut target, input, limits)).bytes_total;
    check_outcome(way, &mut target, &result);
    let bound = BYTES_PER_INPUT_BYTE * input.len() as u64 + ALLOWANCE;
    assert!(
        asked <= bound,
        "{way:?}: restoring {} bytes asked for {asked} bytes (bound {bound}): {:?}",
        input.len(),
        String::from_utf8_lossy(&input[..input.len().min(120)])
    );
    result
}

fn refused(way: Way, input: &[u8], limits: RestoreLimits, says: &str) {
    match restore_counted(way, input, limits) {
        Err(Error::InvalidSnapshot { reason, .. }) => {
            assert!(reason.contains(says), "{way:?}: {reason:?} should say {says:?}")
        }
        other => panic!("{way:?}: expected InvalidSnapshot, got {other:?}"),
    }
}

/// A postcard unsigned varint.
fn varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A postcard snapshot claiming `entities`, with the given columns (name,
/// claimed length, encoded pairs).
fn postcard_claim(entities: u64, columns: &[(&str, u64, &[u8])]) -> Vec<u8> {
    let mut out = varint(entities);
    out.extend(varint(columns.len() as u64));
    for (name, len, pairs) in columns {
        out.extend(varint(name.len() as u64));
        out.extend(name.as_bytes());
        out.extend(varint(*len));
        out.extend(*pairs);
    }
    out
}

#[test]
fn a_few_bytes_claiming_billions_of_entities_are_refused_without_an_allocation_to_match() {
    for claim in [u64::from(u32::MAX - 2), 100_000_000, 70_000] {
        let json = format!(r#"{{"entities":{claim},"components":[]}}"#);
        let bytes = postcard_claim(claim, &[]);
        for way in WAYS {
            let input = if way.is_json() { json.as_bytes() } else { &bytes[..] };
            refused(way, input, RestoreLimits::default(), "hold no value");
        }
    }
    // As many entities without values as the defaults allow: restored,
    // within the bound.
    let json = r#"{"entities":65537,"components":[["Poison",[[65536,1]]]]}"#;
    let mut pair = varint(65_536);
    pair.extend(varint(1));
    let bytes = postcard_claim(65_537, &[("Poison", 1, &pair)]);
    for way in WAYS {
        let input = if way.is_json() { json.as_bytes() } else { &bytes[..] };
        restore_counted(way, input, RestoreLimits::default()).unwrap();
    }
    // One value, at the last position a claim of billions allows.
    let last = u64::from(u32::MAX - 3);
    let json = format!(r#"{{"entities":{},"components":[["Poison",[[{last},1]]]]}}"#, last + 1);
    let mut pair = varint(last);
    pair.extend(varint(1));
    let bytes = postcard_claim(last + 1, &[("Poison", 1, &pair)]);
    for way in WAYS {
        let input = if way.is_json() { json.as_bytes() } else { &bytes[..] };
        refused(way, input, RestoreLimits::default(), "hold no value");
    }
}

#[test]
fn a_list_claiming_two_to_the_forty_values_ends_with_the_input() {
    let mut pair = varint(0);
    pair.extend(varint(7));
    for len in [1u64 << 40, 1 << 62] {
        let bytes = postcard_claim(1, &[("Poison", len, &pair)]);
        for way in [Way::Postcard, Way::PostcardTyped] {
            refused(way, &bytes, RestoreLimits::default(), "");
        }
    }
}

#[test]
fn entities_without_values_are_restored_up_to_the_limit_and_the_limit_can_be_raised() {
    let json = r#"{"entities":70000,"components":[]}"#;
    refused(
        Way::Json,
        json.as_bytes(),
        RestoreLimits::default(),
        "max_empty_entities",
    );
    let raised = RestoreLimits::default().max_empty_entities(70_000);
    let mut target = Context::new();
    target
        .restore(&mut serde_json::Deserializer::from_str(json), raised)
        .unwrap();
    assert_eq!(target.len(), 70_000);
    // Entities holding values do not count against it.
    let mut many = Context::new();
    for i in 0..70_000 {
        many.create_entity_with(Poison(i)).unwrap();
    }
    let bytes = postcard::to_stdvec(&many.snapshot()).unwrap();
    let mut loaded = Context::new();
    loaded
        .restore(
            &mut postcard::Deserializer::from_bytes(&bytes),
            RestoreLimits::default(),
        )
        .unwrap();
    assert_eq!(loaded.len(), 70_000);
}

#[test]
fn max_entities_and_max_bytes_bound_a_valid_snapshot() {
    let game = game();
    for way in WAYS {
        let input = way.snapshot(&game);
        refused(way, &input, RestoreLimits::default().max_entities(10), "max_entities");
        // Reading stops at the bound.
        refused(way, &input, RestoreLimits::default().max_bytes(100), "max_bytes");
        // The entities' records, then the archetypes, count too.
        let values_only = game.len() * 48;
        refused(
            way,
            &input,
            RestoreLimits::default().max_bytes(values_only),
            "max_bytes",
        );
        let fair = RestoreLimits::default()
            .max_entities(60)
            .max_empty_entities(1)
            .max_bytes(1 << 20);
        restore_counted(way, &input, fair).unwrap();
    }
}

#[test]
fn every_truncation_of_a_valid_snapshot_is_refused_within_the_bound() {
    let game = game();
    for way in WAYS {
        let input = way.snapshot(&game);
        restore_counted(way, &input, RestoreLimits::default()).unwrap();
        let step = if way.is_json() { 7 } else { 1 };
        for end in (0..input.len()).step_by(step) {
            let result = restore_counted(way, &input[..end], RestoreLimits::default());
            assert!(
                matches!(result, Err(Error::InvalidSnapshot { .. })),
                "{way:?}: a snapshot cut at {end} of {} gave {result:?}",
                input.len()
            );
        }
    }
}

#[test]
fn every_single_bit_flip_of_a_valid_snapshot_is_refused_or_restored_within_the_bound() {
    let game = game();
    for way in [Way::Postcard, Way::PostcardTyped] {
        let input = way.snapshot(&game);
        let mut flipped = input.clone();
        for bit in 0..input.len() * 8 {
            flipped[bit / 8] ^= 1 << (bit % 8);
            let _ = restore_counted(way, &flipped, RestoreLimits::default());
            flipped[bit / 8] ^= 1 << (bit % 8);
        }
    }
}

/// A small deterministic generator (xorshift), so failures repeat.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn random_mutations_of_valid_snapshots_are_refused_or_restored_within_the_bound() {
    let game = game();
    let mut rng = Rng(0x5eed_2025);
    let rounds = if cfg!(miri) { 5 } else { 600 };
    for way in WAYS {
        let input = way.snapshot(&game);
        for _ in 0..rounds {
            let mut mutated = input.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(mutated.len());
                match rng.below(4) {
                    0 => mutated[at] = rng.below(256) as u8,
                    1 => mutated[at] = [0x00, 0x7f, 0x80, 0xff, b'9', b'-', b'"', b'['][rng.below(8)],
                    2 => {
                        mutated.remove(at);
                    }
                    _ => mutated.insert(at, rng.below(256) as u8),
                }
            }
            let _ = restore_counted(way, &mutated, RestoreLimits::default());
        }
    }
}

/// The `restore` fuzz target's inputs on the stable toolchain: mutations of
/// valid snapshots (and random bytes) through the same decoder
/// (`restore_fuzzed`), for `REACTECS_FUZZ_SECONDS` seconds (default 10),
/// from seed `REACTECS_FUZZ_SEED` (default: the clock; printed, with the
/// failing input, if one fails). Not coverage-guided: `cargo fuzz run
/// restore` is, where a nightly toolchain can be had.
#[test]
#[ignore = "long: `cargo test --release --all-features --test snapshot_hostile -- --ignored --nocapture`"]
fn random_inputs_are_refused_or_restored_for_a_while() {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let seconds = env("REACTECS_FUZZ_SECONDS").unwrap_or(10);
    let seed = env("REACTECS_FUZZ_SEED").unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.map_or(1, |now| now.as_nanos() as u64 | 1)
    });
    let game = game();
    let valid: Vec<Vec<u8>> = WAYS
        .iter()
        .enumerate()
        .map(|(pick, way)| [vec![pick as u8], way.snapshot(&game)].concat())
        .collect();
    let mut rng = Rng(seed);
    let (start, limit) = (std::time::Instant::now(), std::time::Duration::from_secs(seconds));
    let mut inputs = 0u64;
    while start.elapsed() < limit {
        let mut input = if rng.below(8) == 0 {
            (0..1 + rng.below(64)).map(|_| rng.below(256) as u8).collect()
        } else {
            valid[rng.below(valid.len())].clone()
        };
        for _ in 0..rng.below(6) {
            let at = rng.below(input.len());
            match rng.below(3) {
                0 => input[at] = rng.below(256) as u8,
                1 => input.truncate(at.max(1)),
                _ => input.insert(at, rng.below(256) as u8),
            }
        }
        if std::panic::catch_unwind(|| restore_fuzzed(&input)).is_err() {
            panic!("seed {seed}, input {inputs} failed; its bytes: {input:02x?}");
        }
        inputs += 1;
    }
    println!("{inputs} inputs in {seconds} s from seed {seed}");
}
