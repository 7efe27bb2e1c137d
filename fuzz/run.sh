#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 60), installing cargo-fuzz
# from crates.io if needed. The machine has one stable toolchain, so the nightly
# flags cargo-fuzz needs are unlocked with RUSTC_BOOTSTRAP=1.
# Usage: ./fuzz/run.sh [SECONDS] [TARGET...]
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

# Where cargo puts release binaries (CARGO_TARGET_DIR is honoured).
bin="${CARGO_TARGET_DIR:-target}/release"

# Random bytes almost never pass a table footer's magic and checksum, so the
# table target starts from small valid tables in every codec, with a one-block
# and a two-level index (partitioned filters, small partitions).
seed_tables() {
  local dir=fuzz/corpus/table_open_scan
  mkdir -p "$dir"
  cargo build --release -q -p strata-cli
  for codec in none snappy lz4 zstd; do
    for checksum in crc32c xxh3; do
      for index in kBinarySearch kTwoLevelIndexSearch; do
        awk 'BEGIN { for (i = 0; i < 40; i++) printf "key%03d ==> value%d\n", i, i * 7 }' |
          "$bin/strata" sst build --output "$dir/seed-$codec-$checksum-$index.sst" \
            --compression "$codec" --checksum "$checksum" --block_size 128 --block_restart_interval 4 \
            --index_type "$index" --partition_filters --metadata_block_size 64 2>/dev/null
      done
    done
  done
  # And tables a database ingested, which end in a global seqno tail.
  local db
  db=$(mktemp -d)
  printf 'key001 ==> v\nkey002 ==> w\n' | "$bin/strata" sst build --output "$db/in.sst" 2>/dev/null
  "$bin/strata" --db="$db/db" --create_if_missing put key001 old >/dev/null
  "$bin/strata" --db="$db/db" ingest_extern_sst "$db/in.sst" >/dev/null
  for t in "$db"/db/*.sst; do cp "$t" "$dir/seed-ingested-$(basename "$t")"; done
  rm -rf "$db"
}

# Likewise a MANIFEST: start from those of a small real database, which
# compaction has given several edits.
seed_manifests() {
  local dir=fuzz/corpus/manifest_recover db
  mkdir -p "$dir"
  cargo build --release -q -p strata-bench
  db=$(mktemp -d)
  "$bin/strata-bench" --db="$db" --num=20000 --write_buffer_size=65536 \
    --benchmarks=fillrandom,compact >/dev/null
  for m in "$db"/MANIFEST-*; do cp "$m" "$dir/seed-$(basename "$m")"; done
  rm -rf "$db"
}

# And OPTIONS files: RocksDB's db_bench's (checked in) and one Strata writes,
# each once strict and once ignoring unknown options (the first byte).
seed_options() {
  local dir=fuzz/corpus/options_load db file
  mkdir -p "$dir"
  cargo build --release -q -p strata-bench
  db=$(mktemp -d)
  "$bin/strata-bench" --db="$db" --num=1000 --num_column_families=2 \
    --merge_operator=stringappend --benchmarks=fillrandom >/dev/null
  for file in crates/strata/tests/fixtures/rocksdb-options/OPTIONS-000007 "$db"/OPTIONS-*; do
    { printf '\000'; cat "$file"; } >"$dir/seed-strict-$(basename "$file")"
    { printf '\001'; cat "$file"; } >"$dir/seed-lenient-$(basename "$file")"
  done
  rm -rf "$db"
}

for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  if [ "$t" = table_open_scan ]; then seed_tables; fi
  if [ "$t" = manifest_recover ]; then seed_manifests; fi
  if [ "$t" = options_load ]; then seed_options; fi
  echo "== fuzzing $t for ${seconds}s" >&2
  (cd fuzz && cargo fuzz run "$t" -- -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536)
done
