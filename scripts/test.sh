#!/usr/bin/env bash
# Runs Strata's test suite (every crate, unit and integration tests, doc tests).
# Needs only the Rust toolchain; the C parts of the codecs build with the system cc.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-targets
cargo test --workspace --doc
# The memtable's and the clock cache's concurrency, model-checked with
# shuttle's randomized scheduler.
cargo test -p strata --features shuttle --lib -- memtable:: cache::clock::
