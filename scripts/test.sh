#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds, and runs the whole test suite through ctest:
#   1. release build (LibTorch from PyPI when available), every test;
#   2. ThreadSanitizer build, the concurrency tests (transport: rings, broadcast, segment);
#   3. AddressSanitizer + UBSan build, every other torch-free test.
# The sanitizer builds leave out the torch parts (see docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
bash scripts/build.sh release
ctest --preset release -j "${RINGRL_TEST_JOBS:-2}"
if [[ "${RINGRL_SKIP_SANITIZERS:-0}" != 1 ]]; then
  bash scripts/build.sh tsan
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --preset tsan -j 2
  bash scripts/build.sh asan
  ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" ctest --preset asan -j 2
fi
echo "test.sh: all suites passed"
