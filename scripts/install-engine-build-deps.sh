#!/usr/bin/env bash
# Installs what the optional peer engines of strata-bench need to build:
# libclang for the `rocksdb` feature (librocksdb-sys generates its bindings
# with bindgen at build time). The `fjall` feature is pure Rust.
set -euo pipefail
if ! compgen -G '/usr/lib/llvm-*/lib/libclang.so*' >/dev/null; then
  echo "== installing libclang-dev (bindgen for librocksdb-sys)" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q libclang-dev
fi
