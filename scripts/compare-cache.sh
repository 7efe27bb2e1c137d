#!/usr/bin/env bash
# strata-cache-bench against RocksDB's cache_bench: LRU against lru_cache and
# clock against hyper_clock_cache, 1 and 2 threads, runs alternated between
# the engines, medians and ratios of "Rough parallel ops/sec".
# Usage: ./scripts/compare-cache.sh [RUNS] [extra cache_bench flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
bash scripts/install-rocksdb-tools.sh
cargo build --release -q -p strata-bench

common=(-ops_per_thread=1000000 -cache_size=1073741824 -value_bytes=8192 "$@")
ops() { "$@" 2>&1 | sed -n 's/.*Rough parallel ops\/sec = \([0-9]*\).*/\1/p'; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-7s %-8s %12s %12s %7s\n' threads type strata rocksdb ratio
for threads in 1 2; do
  for pair in lru_cache:lru_cache clock_cache:hyper_clock_cache; do
    ours=${pair%%:*} theirs=${pair##*:}
    s=() r=()
    for _ in $(seq "$runs"); do
      s+=("$(ops ./target/release/strata-cache-bench -threads="$threads" -cache_type="$ours" "${common[@]}")")
      r+=("$(ops cache_bench -threads="$threads" -cache_type="$theirs" "${common[@]}")")
    done
    sm=$(median "${s[@]}") rm=$(median "${r[@]}")
    printf '%-7s %-8s %12s %12s %7.2f   (strata %s; rocksdb %s)\n' "$threads" "${ours%_cache}" \
      "$sm" "$rm" "$(awk -v a="$sm" -v b="$rm" 'BEGIN {print a / b}')" "${s[*]}" "${r[*]}"
  done
done
