#!/usr/bin/env bash
# Builds the Python module (crates/strata-py) as a wheel with maturin, in a
# virtualenv of its own under target/ (nothing installed outside it),
# installs the wheel there and runs the pytest suite. Pass --release for an
# optimized wheel (the benchmark wants one).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-venv
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    "maturin==1.16.0" "pytest==9.2.0" "hypothesis==6.170.17"
rm -rf target/wheels
"$venv/bin/maturin" build --quiet --manifest-path crates/strata-py/Cargo.toml \
    --interpreter "$venv/bin/python" --out target/wheels "$@"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall \
    target/wheels/strata-*.whl
"$venv/bin/python" -m pytest -q -p no:cacheprovider crates/strata-py/tests
