#!/usr/bin/env bash
# What scraping /metrics every second costs a writer: fillrandom with the web
# view on, alternately with and without a scraper fetching /metrics once a
# second, RUNS times each; prints each run's ops/sec and the medians.
# Usage: bash scripts/web-metrics-cost.sh [RUNS] [NUM]   (defaults 3, 10000000)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
num=${2:-10000000}
cargo build --release -q -p strata-bench
addr=127.0.0.1:18932
results=$(mktemp)
for run in $(seq 1 "$runs"); do
  for scraper in off on; do
    target/release/strata-bench --benchmarks=fillrandom --num="$num" --statistics=1 \
      --http_addr="$addr" > /tmp/web-cost-bench.txt 2>/dev/null &
    bench=$!
    scrapes=0
    if [ "$scraper" = on ]; then
      sleep 1
      while kill -0 "$bench" 2>/dev/null; do
        curl -s -m 2 "http://$addr/metrics" > /dev/null && scrapes=$((scrapes + 1)) || true
        sleep 1
      done
    fi
    wait "$bench"
    ops=$(awk '/^fillrandom/ {print $5}' /tmp/web-cost-bench.txt)
    echo "run $run scraper=$scraper ops/sec=$ops scrapes=$scrapes"
    echo "$scraper $ops" >> "$results"
  done
done
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {k: statistics.median(float(v) for s, v in rows if s == k) for k in ("off", "on")}
print(f"median ops/sec: without scraper {med['off']:,.0f}, with {med['on']:,.0f}, "
      f"cost {100 * (1 - med['on'] / med['off']):.2f}%")
PY
