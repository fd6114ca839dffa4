#!/bin/sh
# Builds the peer benchmark (release, its own target directory) and runs it.
# Every argument goes to the binary, e.g.:
#   benches/peers/run.sh --samples 30 --out peers.csv
#   benches/peers/run.sh --workloads reactive_replace --columns reactecs,bevy
#   benches/peers/run.sh --verify-only
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cargo build --release --manifest-path "$here/Cargo.toml"
exec "$here/target/release/reactecs-peers" "$@"
