#!/usr/bin/env bash
# HIRO learning curve on the kinematic Maze (spec hiro.md §13): trains `ringrl train hiro
# --env kinematic-maze --goal xy` with the paper's settings (configs/hiro.json) until the
# evaluator's success reaches SUCCESS or the env-step budget runs out, then plots eval success
# against env steps from the run's metrics.csv into RUN_DIR/learning_curve.png.
#   scripts/hiro_learning.sh [RUN_DIR] [extra `ringrl train hiro` options, e.g. --set hidden=64]
# Environment: MAX_ENV_STEPS (default 1000000), SUCCESS (0.9), EVAL_EVERY (50000),
# EVAL_EPISODES (50), MAX_SECONDS (0 = none), ACTORS (1), RINGRL_BIN, PYTHON (python3).
set -euo pipefail
cd "$(dirname "$0")/.."
RUN_DIR=${1:-runs/hiro-learning-$(date +%Y%m%d-%H%M%S)}
shift || true
BIN=${RINGRL_BIN:-build/release/app/ringrl}
PY=${PYTHON:-python3}
MAX_ENV_STEPS=${MAX_ENV_STEPS:-1000000}
SUCCESS=${SUCCESS:-0.9}
EVAL_EVERY=${EVAL_EVERY:-50000}
EVAL_EPISODES=${EVAL_EPISODES:-50}
MAX_SECONDS=${MAX_SECONDS:-0}
ACTORS=${ACTORS:-1}

if [[ ! -x $BIN ]]; then
  echo "hiro_learning: $BIN not found; build first (bash scripts/build.sh release) or set RINGRL_BIN" >&2
  exit 1
fi
if ! "$PY" -c "import matplotlib" 2>/dev/null; then
  echo "hiro_learning: installing matplotlib for $PY"
  # Debian's own python refuses system-wide pip installs without the second form's flag.
  "$PY" -m pip install -q matplotlib 2>/dev/null || "$PY" -m pip install -q --break-system-packages matplotlib
fi

mkdir -p "$RUN_DIR"
echo "hiro_learning: training into $RUN_DIR (budget $MAX_ENV_STEPS env steps, stop at eval success >= $SUCCESS)"
status=0
"$BIN" train hiro --env kinematic-maze --goal xy --actors "$ACTORS" --run-dir "$RUN_DIR" \
  --max-env-steps "$MAX_ENV_STEPS" --max-seconds "$MAX_SECONDS" \
  --set stop_on_success=true --set success_threshold="$SUCCESS" \
  --set eval_every="$EVAL_EVERY" --set eval_episodes="$EVAL_EPISODES" "$@" || status=$?
if [[ $status -ne 0 && $status -ne 130 ]]; then
  echo "hiro_learning: training failed (status $status)" >&2
  exit "$status"
fi
"$PY" scripts/plot_hiro.py "$RUN_DIR/metrics.csv" "$RUN_DIR/learning_curve.png"
