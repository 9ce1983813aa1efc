#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds, and runs the main job: a local multi-process
# program-synthesis run (`ringrl train pqt`, priority-queue training) on a default task and
# budget that ends within a few minutes on 2 cores and prints the program it found.
# Extra arguments go to `ringrl train pqt` (e.g. --task reverse --max-npe 20000000).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release ringrl ringrl-torch  # only what the job runs (the tests: scripts/test.sh)
exec build/release/app/ringrl train pqt --task print --mode pqt --repetitions 1 \
  --set timestep_limit=16 --max-npe 5000000 --max-seconds 300 "$@"
