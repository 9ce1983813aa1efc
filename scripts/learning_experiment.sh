#!/usr/bin/env bash
# Success counts of pqt, pg+pqt, pg and uniform random search on the paper's settings (spec §6.2),
# the same NPE budget for every method, SEEDS repetitions per task. Runs serially (2 cores:
# one actor + the learner). Writes OUT/summary.md.
#   scripts/learning_experiment.sh [BUDGET] [SEEDS] [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=${1:-200000}
SEEDS=${2:-5}
OUT=${3:-runs/learning-$(date +%Y%m%d-%H%M%S)}
BIN=${RINGRL_BIN:-build/release/app/ringrl}
TASKS=${TASKS:-"reverse remove-char count-char add print-hello"}
MODES=${MODES:-"pqt pg+pqt pg random"}
mkdir -p "$OUT"
for task in $TASKS; do
  for mode in $MODES; do
    dir="$OUT/$mode/$task"
    mkdir -p "$OUT/$mode"
    if [[ $mode == random ]]; then
      "$BIN" train random --task "$task" --max-npe "$BUDGET" --repetitions "$SEEDS" --run-dir "$dir" >/dev/null
    else
      "$BIN" train pqt --task "$task" --mode "$mode" --max-npe "$BUDGET" --repetitions "$SEEDS" \
        --run-dir "$dir" --resume ${EXTRA_SETS:-} >"$dir.log" 2>&1 || { echo "failed: $mode $task (see $dir.log)"; exit 1; }
    fi
  done
done
python3 - "$OUT" "$BUDGET" "$SEEDS" <<'PY'
import json, os, sys
out, budget, seeds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
modes = [m for m in ["pqt", "pg+pqt", "pg", "random"] if os.path.isdir(os.path.join(out, m))]
tasks = sorted({t for m in modes for t in os.listdir(os.path.join(out, m)) if os.path.isdir(os.path.join(out, m, t))})
lines = [f"NPE budget {budget} per repetition, {seeds} repetitions per task and method", "",
         "| task | " + " | ".join(modes) + " |", "|---" * (len(modes) + 1) + "|"]
totals = {m: 0 for m in modes}
for t in tasks:
    row = []
    for m in modes:
        f = os.path.join(out, m, t, "results.jsonl")
        rs = [json.loads(l) for l in open(f)] if os.path.exists(f) else []
        ok = sum(1 for r in rs if r["found_solution"])
        totals[m] += ok
        npe = sum(r["npe"] for r in rs) / max(1, len(rs))
        best = sum(r["best_reward"] for r in rs) / max(1, len(rs))
        row.append(f"{ok}/{len(rs)} (avg NPE {npe:.0f}, mean best reward {best:.3f})")
    lines.append(f"| {t} | " + " | ".join(row) + " |")
lines.append("| **total** | " + " | ".join(str(totals[m]) for m in modes) + " |")
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
