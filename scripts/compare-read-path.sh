#!/usr/bin/env bash
# Read benchmarks on one filled database per engine, Strata and RocksDB
# alternating: fills a database with each engine once (FILL flags plus
# fillrandom, flush, waitforcompaction), then for every VARIANT runs the READ
# benchmark on each engine's database, RUNS times each, alternating, and prints
# the median ops/sec, P99, CPU per op and peak RSS of each engine and their
# ratio. Variants are extra flags ("" for none); one starting with `strata:`
# applies to Strata only (e.g. `strata:--file_index_prefix_cache=0`).
#   ./scripts/compare-read-path.sh RUNS "FILL flags" "READ flags" [VARIANT...]
# The small-cache matrix of the read-path work, for example:
#   ./scripts/compare-read-path.sh 3 \
#     "--num=1000000 --key_size=16 --value_size=100 --compression_type=none --bloom_bits=10" \
#     "--benchmarks=readrandom --reads=300000 --cache_size=8388608" \
#     "--mmap_read=0 --cache_index_and_filter_blocks=1" "--mmap_read=1 --cache_index_and_filter_blocks=1"
# Builds the `rocksdb` feature (the first build compiles RocksDB: 20-40
# minutes on 2 cores); CARGO_TARGET_DIR is honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:?RUNS}
fill=${2:?FILL flags}
read=${3:?READ flags}
shift 3
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=("")

bash scripts/install-engine-build-deps.sh
cargo build --release -q -p strata-bench --features rocksdb
bin="${CARGO_TARGET_DIR:-target}/release/strata-bench"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
engines=(strata rocksdb)
for engine in "${engines[@]}"; do
  echo "== fill: $engine" >&2
  # shellcheck disable=SC2086 # flag lists split on spaces on purpose
  "$bin" --engine="$engine" $fill --db="$out/db-$engine" \
    --benchmarks=fillrandom,flush,waitforcompaction,levelstats > "$out/fill-$engine.txt"
done
for v in "${!variants[@]}"; do
  for run in $(seq 1 "$runs"); do
    for engine in "${engines[@]}"; do
      extra=${variants[$v]}
      case "$extra" in
        strata:*) [ "$engine" = strata ] && extra=${extra#strata:} || extra="" ;;
      esac
      echo "== variant $v run $run: $engine" >&2
      # shellcheck disable=SC2086
      "$bin" --engine="$engine" $fill $read $extra --histogram=1 --use_existing_db=1 \
        --db="$out/db-$engine" --report_json="$out/$engine-$v-$run.json" > /dev/null
    done
  done
done
python3 - "$out" "$runs" "${variants[@]}" <<'PY'
import json, statistics, sys
out, runs, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:] or [""]

def medians(engine, v):
    recs = [json.load(open(f"{out}/{engine}-{v}-{r}.json"))["results"][-1] for r in range(1, runs + 1)]
    pick = lambda f: statistics.median([f(x) for x in recs if f(x) is not None])
    return {
        "ops": pick(lambda x: x.get("ops_per_sec")),
        "p99": pick(lambda x: (x.get("latency_micros") or {}).get("p99")),
        "cpu": pick(lambda x: x.get("cpu_micros_per_op")),
        "rss": pick(lambda x: x.get("peak_rss_mb")),
    }

print(f"{'variant':58s} {'engine':8s} {'ops/s':>10s} {'P99 us':>8s} {'CPU us/op':>9s} {'RSS MB':>7s}")
for v, flags in enumerate(variants):
    s, r = medians("strata", v), medians("rocksdb", v)
    for name, m in (("strata", s), ("rocksdb", r)):
        print(f"{flags or '(none)':58.58s} {name:8s} {m['ops']:10.0f} {m['p99']:8.1f} {m['cpu']:9.2f} {m['rss']:7.1f}")
    print(f"{'':58s} {'ratio':8s} {s['ops'] / r['ops']:10.2f}")
PY
