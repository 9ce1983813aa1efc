#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds, and runs the whole test suite through ctest:
#   1. release build (LibTorch from PyPI when available), every test;
#   2. ThreadSanitizer build of the concurrency tests only (rings, broadcast, segment), run;
#   3. AddressSanitizer + UBSan build of the torch-free tests and the CLI they run, run.
# Between 1 and 2: `pip install .` of the Python package and its pytest suite (python/tests).
# The sanitizer builds leave out the torch parts and keep asserts on (docs/testing.md).
# Prints each phase's wall time; RINGRL_SKIP_SANITIZERS=1 stops after phase 1.
set -euo pipefail
cd "$(dirname "$0")/.."
phases=()
t_all=$SECONDS
phase() {  # phase NAME COMMAND...: runs the command and records its wall time
  local name=$1 t0=$SECONDS
  shift
  echo "test.sh: == $name"
  "$@"
  phases+=("$(printf '%-16s %5d s' "$name" $((SECONDS - t0)))")
}
report() {
  echo "test.sh: phase times"
  for p in "${phases[@]}"; do echo "  $p"; done
  echo "  $(printf '%-16s %5d s' total $((SECONDS - t_all)))"
}
trap report EXIT

# Build jobs: every core. (`nproc` would obey the OMP_NUM_THREADS=1 below and build serially.)
jobs=${RINGRL_JOBS:-$(getconf _NPROCESSORS_ONLN)}
export RINGRL_JOBS=$jobs
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
phase setup bash scripts/setup.sh
phase "release build" bash scripts/build.sh release
phase "release tests" ctest --preset release -j "${RINGRL_TEST_JOBS:-2}"
# The Python package: build it into build/python (incremental) and run its tests (docs/python.md).
# Debian's own python3 refuses a system-wide install without --break-system-packages (as in
# setup.sh); a python of one's own takes it plainly.
phase "python" bash -c "{ python3 -m pip install -q --no-build-isolation . 2>/dev/null ||
  python3 -m pip install -q --no-build-isolation --break-system-packages .; } && python3 -m pytest -q python/tests"
phase "gpu check" env RINGRL_GPU_BUILD_DIR=build/release bash scripts/gpu_check.sh  # no GPU: one JSON line
if [[ "${RINGRL_SKIP_SANITIZERS:-0}" != 1 ]]; then
  phase "tsan build" bash -c "cmake --preset tsan >/dev/null && cmake --build --preset tsan -j $jobs --target ringrl_concurrency_tests"
  phase "tsan tests" env TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --preset tsan -j 2
  phase "asan build" bash -c "cmake --preset asan >/dev/null && cmake --build --preset asan -j $jobs --target ringrl_tests"
  phase "asan tests" env ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" ctest --preset asan -j 2
fi
echo "test.sh: all suites passed"
