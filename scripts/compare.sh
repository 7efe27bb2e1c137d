#!/usr/bin/env bash
# Strata against RocksDB on this machine: installs RocksDB's db_bench (Debian's
# rocksdb-tools) if it is missing, builds strata-bench, and runs
# scripts/compare.py (alternated runs, medians, ratios). Arguments go to it, e.g.
#   ./scripts/compare.sh --num 1000000 --runs 3 --groups fillseq readrandom
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v db_bench >/dev/null; then
  echo "== installing rocksdb-tools (RocksDB's db_bench)" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q rocksdb-tools
fi

cargo build --release -q -p strata-bench
exec python3 scripts/compare.py "$@"
