#!/usr/bin/env bash
# Strata against the in-process peers: runs strata-bench with --engine=strata,
# rocksdb and fjall in turn, RUNS times each (alternating), each run a fresh
# process on a fresh database, with the same flags, and prints per benchmark
# the median ops/sec, P99, CPU per op, write amplification and size of each
# engine, and each peer's ratio to Strata.
#   ./scripts/compare-engines.sh RUNS [strata-bench flags...]
# ENGINES="strata rocksdb" picks the engines (default: all three);
# CARGO_TARGET_DIR is honoured, so a RocksDB build kept elsewhere is reused.
# Builds the `rocksdb` and `fjall` features (the first build compiles RocksDB:
# 20-40 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true

bash scripts/install-engine-build-deps.sh
cargo build --release -q -p strata-bench --features rocksdb,fjall
bench="${CARGO_TARGET_DIR:-target}/release/strata-bench"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
read -r -a engines <<< "${ENGINES:-strata rocksdb fjall}"
for run in $(seq 1 "$runs"); do
  for engine in "${engines[@]}"; do
    echo "== run $run: $engine" >&2
    "$bench" --engine="$engine" --histogram=1 \
      --report_json="$out/$engine-$run.json" "$@" > "$out/$engine-$run.txt"
  done
done
python3 - "$out" "$runs" "${engines[@]}" <<'PY'
import json, statistics, sys
out, runs, engines = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
results = {
    e: [json.load(open(f"{out}/{e}-{r}.json"))["results"] for r in range(1, runs + 1)]
    for e in engines
}
names = [rec["name"] for rec in results[engines[0]][0]]

def median(engine, name, pick):
    values = []
    for run in results[engine]:
        for rec in run:
            if rec["name"] == name and pick(rec) is not None:
                values.append(pick(rec))
    return statistics.median(values) if values else None

def fmt(x, spec):
    return "-" if x is None else format(x, spec)

picks = {
    "ops/s": (lambda r: r["ops_per_sec"], ",.0f"),
    "P99 us": (lambda r: (r.get("latency_micros") or {}).get("p99"), ".2f"),
    "CPU us/op": (lambda r: r.get("cpu_micros_per_op"), ".3f"),
    "W-Amp": (lambda r: r.get("write_amp"), ".2f"),
    "size MB": (lambda r: r["db_size_bytes"] / 2**20 if "db_size_bytes" in r else None, ".1f"),
}
print(f"medians of {runs} alternated runs per engine; ratio = peer ops/s / strata ops/s")
print("| benchmark | figure | " + " | ".join(engines) + " |")
print("| --- | --- |" + " ---: |" * len(engines))
for name in names:
    for label, (pick, spec) in picks.items():
        cells = [fmt(median(e, name, pick), spec) for e in engines]
        print(f"| {name} | {label} | " + " | ".join(cells) + " |")
    base = median(engines[0], name, picks["ops/s"][0])
    ratios = [fmt(median(e, name, picks["ops/s"][0]) / base if base else None, ".2f") for e in engines]
    print(f"| {name} | ratio | " + " | ".join(ratios) + " |")
PY
