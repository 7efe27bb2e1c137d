#!/usr/bin/env bash
# Compaction side by side: runs the compaction benchmarks with the same flags
# through strata-bench and RocksDB's db_bench (installed from Debian's
# rocksdb-tools when missing) and prints each engine's compaction stats rows,
# stall line and database size. Usage: ./scripts/compare-compaction.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}

bash scripts/install-rocksdb-tools.sh
cargo build --release -q -p strata-bench

common=(--key_size=16 --value_size=100 --seed=301 --compression_type=none --bloom_bits=10
        --checksum_type=4 --threads=1)
leveled_2m=(--benchmarks=fillrandom,waitforcompaction,stats --num=2000000
            --write_buffer_size=8388608 --target_file_size_base=8388608
            --max_bytes_for_level_base=33554432 --level_compaction_dynamic_level_bytes=true)
fillseq_2m=(--benchmarks=fillseq,waitforcompaction,stats --num=2000000
            --write_buffer_size=8388608 --target_file_size_base=8388608
            --max_bytes_for_level_base=33554432 --level_compaction_dynamic_level_bytes=true)
small=(--benchmarks=fillrandom,overwrite,waitforcompaction,stats --num=1000000
       --write_buffer_size=2097152 --max_bytes_for_level_base=8388608
       --target_file_size_base=2097152 --level_compaction_dynamic_level_bytes=true)

run() {
  local engine=$1 name=$2; shift 2
  local bin=db_bench
  [ "$engine" = strata ] && bin=target/release/strata-bench
  local dir; dir=$(mktemp -d)
  echo "### $engine: $name"
  "$bin" "${common[@]}" "$@" --db="$dir/db" 2>&1 |
    grep -E '^(fillrandom|fillseq|overwrite) |^ *(L[0-9]|Sum) |Cumulative stall' || true
  du -sb "$dir/db" | awk '{print "db size bytes:", $1}'
  rm -rf "$dir"
}

for engine in strata rocksdb; do
  for i in $(seq "$runs"); do run "$engine" "leveled fillrandom 2M, run $i" "${leveled_2m[@]}"; done
  run "$engine" "fillseq 2M" "${fillseq_2m[@]}"
  run "$engine" "fillseq 2M, lz4 from level 2" "${fillseq_2m[@]}" --compression_type=lz4 --min_level_to_compress=2
  for style in 0 1; do run "$engine" "fillrandom,overwrite small, compaction_style=$style" "${small[@]}" --compaction_style=$style; done
done
