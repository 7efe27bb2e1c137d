#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 60), installing cargo-fuzz
# from crates.io if needed. The machine has one stable toolchain, so the nightly
# flags cargo-fuzz needs are unlocked with RUSTC_BOOTSTRAP=1.
# Usage: ./scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi

for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  echo "== fuzzing $t for ${seconds}s" >&2
  (cd fuzz && cargo fuzz run "$t" -- -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536)
done
