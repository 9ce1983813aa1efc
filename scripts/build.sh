#!/usr/bin/env bash
# Configures and builds one preset (default: release) into build/<preset>.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
cmake --preset "$preset" >/dev/null
# `nproc` obeys OMP_NUM_THREADS (test.sh sets it to 1 for the tests); count the cores instead.
cmake --build --preset "$preset" -j "${RINGRL_JOBS:-$(getconf _NPROCESSORS_ONLN)}"
