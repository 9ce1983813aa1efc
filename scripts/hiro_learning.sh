#!/usr/bin/env bash
# HIRO learning curves (spec hiro.md §13): trains `ringrl train hiro` with the paper's settings
# (configs/hiro.json), one run per seed, each until the evaluator's success reaches SUCCESS or
# the env-step budget runs out, then plots eval success against env steps of every seed into
# RUN_DIR/learning_curve.png (scripts/plot_hiro.py, from each run's evals.csv).
#   scripts/hiro_learning.sh [RUN_DIR] [extra `ringrl train hiro` options, e.g. --set hidden=64]
# Environment: ENV (kinematic-maze), GOAL (xy; "auto" = the config's choice for ENV), SEEDS ("0";
# e.g. "0 1 2"), MAX_ENV_STEPS (1000000), SUCCESS (0.9), EVAL_EVERY (50000), EVAL_EPISODES (50),
# MAX_SECONDS (0 = none, per seed), ACTORS (1), RINGRL_BIN, PYTHON (python3).
# Runs resume: a seed whose run directory exists continues (or reports that it is done).
set -euo pipefail
cd "$(dirname "$0")/.."
RUN_DIR=${1:-runs/hiro-learning-$(date +%Y%m%d-%H%M%S)}
shift || true
BIN=${RINGRL_BIN:-build/release/app/ringrl}
PY=${PYTHON:-python3}
ENV_NAME=${ENV:-kinematic-maze}
GOAL=${GOAL:-xy}
SEEDS=${SEEDS:-0}
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
goal_args=()
[[ $GOAL != auto ]] && goal_args=(--goal "$GOAL")
runs=()
for seed in $SEEDS; do
  dir="$RUN_DIR/seed-$seed"
  resume=()
  [[ -d $dir ]] && resume=(--resume)
  echo "hiro_learning: $ENV_NAME seed $seed into $dir (budget $MAX_ENV_STEPS env steps, stop at eval success >= $SUCCESS)"
  status=0
  "$BIN" train hiro --env "$ENV_NAME" "${goal_args[@]}" --actors "$ACTORS" --seed "$seed" --run-dir "$dir" \
    --max-env-steps "$MAX_ENV_STEPS" --max-seconds "$MAX_SECONDS" \
    --set stop_on_success=true --set success_threshold="$SUCCESS" \
    --set eval_every="$EVAL_EVERY" --set eval_episodes="$EVAL_EPISODES" "${resume[@]}" "$@" || status=$?
  if [[ $status -ne 0 && $status -ne 130 ]]; then
    echo "hiro_learning: training failed (status $status)" >&2
    exit "$status"
  fi
  runs+=("$dir")
  [[ $status -eq 130 ]] && break
done
"$PY" scripts/plot_hiro.py "$RUN_DIR/learning_curve.png" "${runs[@]}" --threshold "$SUCCESS" \
  --title "HIRO, $ENV_NAME ($( [[ $GOAL == auto ]] && echo "goal space from the config" || echo "hiro_$GOAL"))"
