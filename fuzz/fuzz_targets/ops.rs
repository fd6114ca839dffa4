//! Fuzz target `ops`: each input is a program in the model's operation
//! language (create, destroy, add, remove, replace and modify of a small, an
//! over-aligned, a zero-sized, a heap-owning and a unique component; batches,
//! retain and release in both AERC modes, groups and their handlers,
//! collectors, entity and primary indices, reset, subscribers), run on a
//! context and on the naive model side by side. Any divergence, broken
//! invariant or unbalanced drop count panics. The decoder and the model are
//! the ones `tests/model.rs` runs (`tests/model/world.rs`).
//!
//! `cargo +nightly fuzz run ops` (from the crate's root); see the README's
//! contributing section for the stable-toolchain run.
#![no_main]

#[path = "../../tests/common/mod.rs"]
mod common;
#[path = "../../tests/model/world.rs"]
mod world;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    world::run_bytes(data, 512);
});
