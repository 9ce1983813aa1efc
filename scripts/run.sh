#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds, and runs the main job on its defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release
exec build/release/app/ringrl demo "$@"
