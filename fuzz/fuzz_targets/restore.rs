//! Fuzz target `restore`: each input is a snapshot from a stranger (its
//! first byte picks JSON or postcard, through the registry or typed), restored
//! with the default `RestoreLimits` into a context with a group and a
//! collector. It must be refused with `InvalidSnapshot`, leaving the target
//! empty and usable, or restored whole with the invariants holding; any
//! other outcome, or a crash, panics. The decoder and the checks are the
//! ones `tests/snapshot_hostile.rs` runs (`tests/snapshot_fixture/hostile.rs`).
//!
//! `cargo +nightly fuzz run restore` (from the crate's root).
#![no_main]

#[path = "../../tests/snapshot_fixture/mod.rs"]
mod snapshot_fixture;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    snapshot_fixture::hostile::restore_fuzzed(data);
});
