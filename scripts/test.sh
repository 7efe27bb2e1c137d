#!/usr/bin/env bash
# Runs Strata's test suite (every crate, unit and integration tests, doc tests).
# Needs only the Rust toolchain; the C parts of the codecs build with the system cc.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-targets
cargo test --workspace --doc
# The Python module: its wheel built with maturin in a virtualenv under
# target/, installed there, and its pytest suite (a hypothesis model test
# against a dict among it).
bash scripts/python-test.sh
# The CLI against RocksDB's ldb, command for command, on two seeds (one of
# them with 0x00 bytes in keys and values).
if command -v ldb >/dev/null; then
  bash scripts/ldb-diff.sh 1 2
else
  echo "ldb-diff: skipped, ldb is not on PATH (scripts/install-rocksdb-tools.sh installs it)"
fi
# The memtable's and the clock cache's concurrency, model-checked with
# shuttle's randomized scheduler.
cargo test -p strata --features shuttle --lib -- memtable:: cache::clock:: db::snapshot:: write::publish::
# Crash testing, counted in cycles: 2,000 simulated crashes and power losses
# across four option sets (universal and leveled, WAL on and off, both
# caches), with full disks, damaged WALs and deleted or damaged CURRENT files
# among them; then 50 SIGKILLs of a writer process on the real file system
# while a second process tries to open, destroy and check the database.
for seed in 101 102 103 108; do
  cargo run -q -p strata-stress -- --mode=sim --cycles=500 --seed="$seed"
done
for seed in 102 107; do
  cargo run -q -p strata-stress -- --mode=kill --cycles=25 --seed="$seed"
done
# Reads racing nonstop flushes and compactions, every answer checked.
cargo run -q -p strata-stress -- --mode=race --cycles=1 --threads=4 --seed=301
# 300 crashes at the engine's 31 named crash points (each fires at least
# three times), every other one followed by a second crash during recovery.
cargo run -q -p strata-stress --features failpoints -- --mode=crashpoints --cycles=300 --seed=207
