#!/usr/bin/env bash
# Success counts and learning curves of pqt, pg+pqt, pg, the genetic algorithm and uniform
# random search on the paper's settings (spec §6.2, §6.5): the same NPE budget for every method,
# SEEDS repetitions per task. Runs serially (2 cores: one actor + the learner).
#   scripts/learning_experiment.sh [BUDGET] [SEEDS] [OUT]
# Environment: TASKS ("print-hello reverse remove-char count-char add"), MODES ("pqt pg+pqt pg
# ga random"), EXTRA_SETS (extra `train pqt` options, e.g. "--set batch_size=32"; pqt modes
# only), RINGRL_BIN (build/release/app/ringrl).
# Each cell (method, task) has its run directory OUT/METHOD/TASK and log OUT/METHOD/TASK.log.
# Resumable: a cell whose results.jsonl already holds SEEDS repetitions is skipped; pqt modes and
# ga continue an interrupted repetition from its checkpoint (--resume); random search restarts
# the interrupted repetition (it skips completed ones itself).
# At the end of every invocation (also on failure or Ctrl-C), scripts/plot_learning.py writes
# OUT/summary.md, OUT/summary.json and OUT/learning.png.
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=${1:-200000}
SEEDS=${2:-5}
OUT=${3:-runs/learning-$(date +%Y%m%d-%H%M%S)}
BIN=${RINGRL_BIN:-build/release/app/ringrl}
TASKS=${TASKS:-"print-hello reverse remove-char count-char add"}
MODES=${MODES:-"pqt pg+pqt pg ga random"}
# GA finishes a 1M-NPE repetition in a few seconds: take metrics rows often enough for a curve.
GA_METRICS_EVERY_S=0.05

[[ -x $BIN ]] || { echo "learning_experiment: $BIN not found; build first or set RINGRL_BIN" >&2; exit 1; }
mkdir -p "$OUT"
summarize() {
  python3 scripts/plot_learning.py "$OUT" --budget "$BUDGET" --seeds "$SEEDS" --tasks "$TASKS" --modes "$MODES" ||
    echo "learning_experiment: summary failed" >&2
}
trap summarize EXIT

# Completed repetitions (distinct global_rep < SEEDS) in a run directory's results.jsonl.
done_reps() {
  python3 -c 'import json, sys
try: lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except FileNotFoundError: lines = []
print(len({r.get("global_rep") for r in lines if r.get("global_rep", 0) < int(sys.argv[2])}))' "$1/results.jsonl" "$SEEDS"
}

for task in $TASKS; do
  for mode in $MODES; do
    dir="$OUT/$mode/$task"
    mkdir -p "$OUT/$mode"
    if (( $(done_reps "$dir") >= SEEDS )); then
      echo "done:    $mode $task"
      continue
    fi
    echo "running: $mode $task"
    # shellcheck disable=SC2206  # EXTRA_SETS is split into words on purpose
    case $mode in
      random) cmd=("$BIN" train random --task "$task" --max-npe "$BUDGET" --repetitions "$SEEDS" --run-dir "$dir") ;;
      ga) cmd=("$BIN" train ga --task "$task" --max-npe "$BUDGET" --repetitions "$SEEDS" --run-dir "$dir" --resume
               --set "metrics_every_s=$GA_METRICS_EVERY_S") ;;
      *) cmd=("$BIN" train pqt --task "$task" --mode "$mode" --max-npe "$BUDGET" --repetitions "$SEEDS"
              --run-dir "$dir" --resume ${EXTRA_SETS:-}) ;;
    esac
    "${cmd[@]}" >>"$dir.log" 2>&1 || { echo "failed: $mode $task (see $dir.log)" >&2; exit 1; }
  done
done
