#!/usr/bin/env bash
# The experiment RocksDB ran for its bottom cache priority: NUM keys of
# 1 KiB values with blob files on, then readrandom through one block cache of
# 256 MiB that is the blob cache too, index and filter blocks in it at high
# priority (10% high pool), with the low-priority pool at 0 and at 0.4. Per
# engine, thread count (1, 2) and low pool: data-block cache misses, blob
# cache misses and ops/s, medians of RUNS runs alternated between the
# engines. RocksDB is Debian's db_bench (7.8.3, built with assertions): its
# misses compare, its speed does not. The fill and the reads take fixed,
# different seeds in both engines (db_bench's seed 0 is the clock, strata-bench's
# a constant), so reads draw fresh keys, about 63% of them present.
# Usage: [CACHE_SIZE=bytes] ./scripts/compare-blob-cache.sh [RUNS] [NUM] [READS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
num=${2:-1000000}
reads=${3:-500000}
cache=${CACHE_SIZE:-268435456}
bash scripts/install-rocksdb-tools.sh
cargo build --release -q -p strata-bench
work=$(mktemp -d /tmp/blob-cache.XXXXXX)
trap 'rm -rf "$work"' EXIT
strata=./target/release/strata-bench

data=(--num="$num" --value_size=1024 --enable_blob_files=1 --min_blob_size=512)
echo "== filling $num keys into each engine" >&2
"$strata" --benchmarks=fillrandom --seed=1 --db="$work/strata" "${data[@]}" > "$work/fill-strata.txt"
db_bench --benchmarks=fillrandom --seed=1 --db="$work/rocksdb" "${data[@]}" > "$work/fill-rocksdb.txt" 2>&1
du -sh "$work/strata" "$work/rocksdb" >&2

# One run: prints "data_misses blob_misses ops_per_sec".
run() {
  local bin=$1 db=$2 threads=$3 low=$4
  "$bin" --benchmarks=readrandom --use_existing_db=1 --db="$db" "${data[@]}" \
    --reads="$reads" --threads="$threads" --statistics=1 --seed=2 \
    --cache_size="$cache" --use_blob_cache=1 --use_shared_block_and_blob_cache=1 \
    --cache_index_and_filter_blocks=1 --cache_high_pri_pool_ratio=0.1 \
    --cache_low_pri_pool_ratio="$low" 2>&1 | awk '
      /\.block\.cache\.data\.miss COUNT/ { data = $NF }
      /\.blobdb\.cache\.miss COUNT/ { blob = $NF }
      /^readrandom/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "ops/sec") ops = $i }
      END { print data + 0, blob + 0, ops + 0 }'
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "cache_size=$cache reads=$reads per thread, medians of $runs runs"
printf '%-8s %-7s %-5s %14s %14s %10s\n' engine threads low data_misses blob_misses ops/s
for threads in 1 2; do
  for low in 0.0 0.4; do
    declare -A d=() b=() o=()
    for i in $(seq "$runs"); do
      for engine in strata rocksdb; do
        if [ "$engine" = strata ]; then bin=$strata; else bin=db_bench; fi
        read -r dm bm ops < <(run "$bin" "$work/$engine" "$threads" "$low")
        d[$engine]+="$dm " b[$engine]+="$bm " o[$engine]+="$ops "
      done
    done
    for engine in strata rocksdb; do
      # shellcheck disable=SC2086
      printf '%-8s %-7s %-5s %14s %14s %10s   (ops/s runs: %s)\n' "$engine" "$threads" "$low" \
        "$(median ${d[$engine]})" "$(median ${b[$engine]})" "$(median ${o[$engine]})" "${o[$engine]}"
    done
    unset d b o
  done
done
