#!/usr/bin/env bash
# Strata against RocksDB on this machine: installs RocksDB's db_bench (Debian's
# rocksdb-tools) if it is missing, builds strata-bench, and runs its
# --compare_with_rocksdb mode (alternated runs, medians, ratios). Arguments
# are strata-bench's flags, e.g.
#   ./scripts/compare.sh --num=1000000 --repeat=3 --benchmarks=fillseq,readrandom
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-rocksdb-tools.sh

cargo build --release -q -p strata-bench
exec target/release/strata-bench --compare_with_rocksdb "$@"
