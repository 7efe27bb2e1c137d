#!/usr/bin/env bash
# Strata's main job: build a table from generated data with `strata sst`, dump its
# properties and verify it, on a temporary directory that is removed afterwards.
# Usage: ./scripts/run.sh [NUM_KEYS]   (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
num=${1:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cargo build --release -q -p strata-cli
strata=target/release/strata

echo "== generating $num keys (16-byte keys, 100-byte values)" >&2
awk -v n="$num" 'BEGIN { for (i = 0; i < n; i++) printf "%016d ==> value-%016d-%074d\n", i, i, i }' \
  > "$tmp/input.txt"

echo "== strata sst build" >&2
time_start=$(date +%s.%N)
"$strata" sst build --output "$tmp/data.sst" --compression lz4 --checksum xxh3 < "$tmp/input.txt"
time_end=$(date +%s.%N)
awk -v a="$time_start" -v b="$time_end" -v n="$num" \
  'BEGIN { printf "build: %.2f s, %.0f keys/s\n", b - a, n / (b - a) }' >&2

echo "== strata sst dump --show_properties" >&2
"$strata" sst dump --file "$tmp/data.sst" --show_properties

echo "== strata sst dump --scan (first 3 keys)" >&2
"$strata" sst dump --file "$tmp/data.sst" --scan --to 0000000000000003

echo "== strata sst verify" >&2
"$strata" sst verify --file "$tmp/data.sst"
