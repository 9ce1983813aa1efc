#!/usr/bin/env bash
# The paper's three ant tasks (spec hiro.md §11 Table 1), as far as the machine allows, with
# `hiro_orig` and configs/hiro.json unchanged (random training targets on AntMaze, the paper's
# fixed ones on AntPush and AntFall; evaluation every 50,000 env steps, 50 episodes at the
# task's paper target, success = final-step distance < 5):
#   1. AntMaze seeds 1 and 2, side by side (one learner thread each; docs/hiro.md: 1.24x the
#      throughput of one seed on two threads), until eval success >= 0.9 or 3M env steps;
#   2. AntPush seed 0 and AntFall seed 0, side by side, to 3M env steps;
#   3. more seeds: AntPush seed 1 and AntFall seed 1, side by side, to 3M env steps.
# Every run resumes: run the script again after any interruption (Ctrl-C writes checkpoints).
#   scripts/hiro_ant_runs.sh [RUN_ROOT]      (default runs/hiro-ant)
# Environment: RINGRL_BIN (build/release/app/ringrl), MAX_ENV_STEPS (3000000).
# Then: python3 scripts/hiro_ant_table.py RUN_ROOT (the table) and scripts/plot_hiro.py (curves).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${1:-runs/hiro-ant}
BIN=${RINGRL_BIN:-build/release/app/ringrl}
MAX=${MAX_ENV_STEPS:-3000000}
export OMP_NUM_THREADS=1
mkdir -p "$ROOT"

# train DIR ARGS...: one `train hiro` that resumes DIR when it exists; 0 when done or stopped.
train() {
  local dir=$1 status=0
  shift
  local resume=()
  [[ -d $dir ]] && resume=(--resume)
  "$BIN" train hiro "$@" --set learner_threads=1 --max-env-steps "$MAX" --set eval_every=50000 \
    --set eval_episodes=50 --run-dir "$dir" "${resume[@]}" || status=$?
  [[ $status -eq 0 || $status -eq 130 ]] || { echo "hiro_ant_runs: $dir failed (status $status)" >&2; return "$status"; }
  return 0
}

train "$ROOT/ant-maze-s1s2" --env ant-maze --seed 1 --repetitions 2 --parallel 2 \
  --set stop_on_success=true --set success_threshold=0.9
# pair SEED: AntPush and AntFall with that seed, side by side.
pair() {
  local push fall
  train "$ROOT/ant-push-s$1" --env ant-push --seed "$1" &
  push=$!
  train "$ROOT/ant-fall-s$1" --env ant-fall --seed "$1" &
  fall=$!
  wait "$push"
  wait "$fall"
}
pair 0
pair 1
