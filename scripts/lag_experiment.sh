#!/usr/bin/env bash
# The policy-lag table (docs/results/lag-1M): the same learning cells at several max_lag
# settings, one scripts/learning_experiment.sh invocation per setting, run serially.
#   scripts/lag_experiment.sh [BUDGET] [SEEDS] [OUT]
# Environment: LAGS ("0 1 4"), TASKS ("print-hello reverse"), MODES ("pg+pqt"), RINGRL_BIN.
# Each setting's cells land in OUT/max_lag-L/MODE/TASK (resumable, as learning_experiment.sh);
# at the end OUT/summary.md has one row per setting and cell: solved/SEEDS, mean best reward,
# the NPE/s of the runs, and the most lag any trained episode had.
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=${1:-1000000}
SEEDS=${2:-5}
OUT=${3:-runs/lag-$(date +%Y%m%d-%H%M%S)}
LAGS=${LAGS:-"0 1 4"}
export TASKS=${TASKS:-"print-hello reverse"}
export MODES=${MODES:-"pg+pqt"}
mkdir -p "$OUT"
for lag in $LAGS; do
  EXTRA_SETS="--set max_lag=$lag" bash scripts/learning_experiment.sh "$BUDGET" "$SEEDS" "$OUT/max_lag-$lag"
done
python3 - "$OUT" "$SEEDS" <<'EOF'
import json, pathlib, statistics, sys
out, seeds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
rows = ["| max_lag | mode | task | solved | mean best reward | best reward per seed | NPE/s (mean of runs) | most lag trained on |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |"]
for setting in sorted(out.glob("max_lag-*"), key=lambda p: int(p.name.split("-")[1])):
    for res in sorted(setting.glob("*/*/results.jsonl")):
        lines = [json.loads(l) for l in res.read_text().splitlines() if l.strip()]
        lines = sorted({l["global_rep"]: l for l in lines if l["global_rep"] < seeds}.values(), key=lambda l: l["global_rep"])
        if not lines:
            continue
        best = [l["best_reward"] for l in lines]
        rate = statistics.mean(l["npe"] / l["seconds"] for l in lines if l["seconds"] > 0)
        rows.append(f"| {setting.name.split('-')[1]} | {res.parent.parent.name} | {res.parent.name} | "
                    f"{sum(l['found_solution'] for l in lines)}/{len(lines)} | {statistics.mean(best):.4f} | "
                    f"{', '.join(f'{b:.3f}' for b in best)} | {rate:,.0f} | {max(l.get('train_lag_max', -1) for l in lines)} |")
(out / "summary.md").write_text("\n".join(rows) + "\n")
print("\n".join(rows))
EOF
