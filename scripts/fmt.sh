#!/usr/bin/env bash
# Formats every Rust file of the project; with --check, changes nothing and
# fails if any file is not formatted.
#
# `cargo fmt` alone is not enough: the engine's modules are declared inside a
# macro (`internal_modules!` in crates/strata/src/lib.rs), and rustfmt does not
# follow module declarations made by macros, so it would never see them.
set -euo pipefail
cd "$(dirname "$0")/.."
check=()
if [[ "${1:-}" == "--check" ]]; then
    check=(--check)
fi
cargo fmt --all -- "${check[@]}"
git ls-files -z -- 'crates/*.rs' 'fuzz/*.rs' | xargs -0 rustfmt "${check[@]}"
