//! Random operation sequences, checked against a naive model: a map from
//! each live entity to its component values, the destroyed entities kept for
//! their retainers (AERC), the user retains, and what each collector holds.
//! What each entity index must hold is worked out from the live entities'
//! values alone. Invariants are checked after every step, and every value is
//! counted so drops must equal constructions at the end.
//!
//! The operation language and the model live in `model/world.rs`, shared
//! with the fuzz target in `fuzz/`. Here they run three ways: proptest
//! programs (shrunk to a minimal failing one), a long run of random byte
//! programs (ignored by default; see ARCHITECTURE.md, "Testing"),
//! and a few fixed cases.

mod common;
#[path = "model/world.rs"]
mod world;

use std::time::{Duration, Instant};

use proptest::prelude::*;
use reactecs::prelude::*;
use world::{Bytes, Flag, Op, run_bytes};

/// One operation, decoded as the fuzz target decodes it, from eight bytes
/// (enough for the longest); proptest shrinks the bytes towards zero, which
/// is towards `Op::Create`.
fn op() -> impl Strategy<Value = Op> {
    any::<[u8; 8]>().prop_map(|bytes| Op::decode(&mut Bytes(&bytes)))
}

/// Under Miri, a few short programs: enough to drive every unsafe path of
/// the storage through the model's operations.
const CASES: u32 = if cfg!(miri) { 3 } else { 384 };
const MAX_OPS: usize = if cfg!(miri) { 40 } else { 200 };

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        // Under Miri, no file access: no regression file.
        failure_persistence: if cfg!(miri) { None } else { ProptestConfig::default().failure_persistence },
        ..ProptestConfig::default()
    })]

    #[test]
    fn context_matches_a_naive_model(
        ops in proptest::collection::vec(op(), 1..MAX_OPS),
        fast in any::<bool>(),
        spy in any::<bool>(),
    ) {
        let counter = common::Counter::default();
        {
            let mode = if fast { AercMode::Fast } else { AercMode::Safe };
            let mut world = world::World::new(mode, spy, counter.clone());
            for op in &ops {
                world.apply(op);
                world.compare();
            }
        }
        prop_assert_eq!(counter.live(), 0, "dropping the context drops every value");
    }
}

/// Fast mode counts users' retains apart from collectors': a user release
/// without a user retain is `NotRetained` even while a collector holds the
/// entity. (It used to take the collector's retain: the slot was then freed
/// at destroy while the collector still held the handle, the collector missed
/// the next entity in that slot, and clearing it tripped a `debug_assert`.)
#[test]
fn fast_mode_user_release_cannot_take_a_collectors_retain() {
    let mut game = Context::builder().aerc(AercMode::Fast).build();
    let flagged = game.add_collector(Matcher::all_of::<Flag>().added());
    let e = game.create_entity_with((Flag,)).unwrap();
    let release = game.release(e, Owner::new());
    assert!(matches!(release, Err(Error::NotRetained { .. })), "{release:?}");
    assert_eq!(game.aerc().retain_count(e), Ok(1), "the collector's retain");
    game.destroy_entity(e).unwrap();
    assert_eq!(game.aerc().is_enabled(e), Ok(false), "the collector still holds {e}");
    let next = game.create_entity_with((Flag,)).unwrap();
    assert_ne!(next.index(), e.index(), "{e}'s slot is kept");
    assert_eq!(game.collector(flagged).unwrap().entities(), [e, next]);
    game.collector_mut(flagged).unwrap().clear();
    assert!(
        matches!(game.aerc().is_enabled(e), Err(Error::StaleEntity { .. })),
        "released by the clear"
    );
    assert_eq!(game.len(), 1);
}

/// The fuzz target's programs on the stable toolchain: random byte strings
/// through the same decoder, for `REACTECS_FUZZ_SECONDS` seconds (default
/// 10), from seed `REACTECS_FUZZ_SEED` (default: the clock; printed, with the
/// failing program's bytes, if one fails). Not coverage-guided: `cargo fuzz`
/// is, where a nightly toolchain can be had.
#[test]
#[ignore = "long: `cargo test --release --test model -- --ignored --nocapture`"]
fn random_byte_programs_match_the_model_for_a_while() {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let seconds = env("REACTECS_FUZZ_SECONDS").unwrap_or(10);
    let seed = env("REACTECS_FUZZ_SEED").unwrap_or_else(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        now.as_nanos() as u64 | 1
    });
    // xorshift64*: plenty for picking bytes.
    let mut state = seed.max(1);
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let (start, limit) = (Instant::now(), Duration::from_secs(seconds));
    let (mut programs, mut operations) = (0u64, 0u64);
    let mut program = Vec::new();
    while start.elapsed() < limit {
        let len = 1 + (next() % 1024) as usize;
        program.clear();
        program.extend((0..len).map(|_| next() as u8));
        let ran = std::panic::catch_unwind(|| run_bytes(&program, usize::MAX));
        match ran {
            Ok(ran) => operations += ran as u64,
            Err(panic) => {
                eprintln!("seed {seed}, program {programs} diverged; its bytes: {program:02x?}");
                std::panic::resume_unwind(panic);
            }
        }
        programs += 1;
    }
    assert!(programs > 0, "ran no program in {seconds} s");
    println!("{programs} programs, {operations} operations in {seconds} s from seed {seed}: no divergence");
}
