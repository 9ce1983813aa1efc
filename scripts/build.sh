#!/usr/bin/env bash
# Configures and builds one preset (default: release) into build/<preset>: every target, or
# only the targets named after the preset (scripts/build.sh release ringrl ringrl-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
shift || true
targets=()
(($#)) && targets=(--target "$@")
cmake --preset "$preset" >/dev/null
# `nproc` obeys OMP_NUM_THREADS (test.sh sets it to 1 for the tests); count the cores instead.
cmake --build --preset "$preset" -j "${RINGRL_JOBS:-$(getconf _NPROCESSORS_ONLN)}" "${targets[@]}"
