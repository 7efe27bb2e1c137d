#!/usr/bin/env bash
# The web view as a person sees it: starts a fillrandom run with
# --http_addr, opens the LSM page and the plots page in Debian's headless
# chromium (installed if missing) while it runs, saves a screenshot of each,
# and checks the pages' elements in the DOM chromium built.
# Usage: bash scripts/web-screenshot.sh [OUT_DIR]   (default target/web-screenshots)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/web-screenshots}
mkdir -p "$out"
if ! command -v chromium >/dev/null; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q chromium
fi
cargo build --release -q -p strata-bench
addr=127.0.0.1:18931
target/release/strata-bench --benchmarks=fillrandom --num=10000000 --value_size=200 \
  --write_buffer_size=4194304 --statistics=1 --http_addr="$addr" > "$out/bench.log" 2>&1 &
bench=$!
trap 'kill $bench 2>/dev/null || true' EXIT
# Let compactions start and the plots gather points.
sleep 10
shot() {
  local page=$1 name=$2
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,900 \
    --screenshot="$out/$name.png" "http://$addr$page" 2>/dev/null
  chromium --headless --no-sandbox --disable-gpu --dump-dom "http://$addr$page" 2>/dev/null > "$out/$name.html"
}
shot / lsm
shot /plots plots
for mark in 'class="lsm"' 'class="table' 'class="levels"'; do
  grep -q "$mark" "$out/lsm.html" || { echo "LSM page lacks $mark"; exit 1; }
done
for id in plot-writes plot-wamp plot-stalls plot-cache; do
  grep -q "id=\"$id\"" "$out/plots.html" || { echo "plots page lacks $id"; exit 1; }
done
grep -q "<polyline" "$out/plots.html" || { echo "plots page draws no line"; exit 1; }
echo "screenshots: $out/lsm.png $out/plots.png"
