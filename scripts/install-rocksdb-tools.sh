#!/usr/bin/env bash
# Installs RocksDB's db_bench and cache_bench (Debian's rocksdb-tools) when
# db_bench is not on PATH. Sourced or run by the comparison scripts.
set -euo pipefail
if ! command -v db_bench >/dev/null; then
  echo "== installing rocksdb-tools (RocksDB's db_bench, cache_bench)" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q rocksdb-tools
fi
