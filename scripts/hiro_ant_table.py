"""The HIRO ant table (spec hiro.md §11 Table 1) from run directories' evals.csv: per task and
seed the first evaluation with any success, the best success and when, and the last
evaluation, beside the paper's HIRO numbers. Prints a Markdown table.

    python3 scripts/hiro_ant_table.py RUN_DIR [RUN_DIR ...]

A RUN_DIR is a `train hiro` run directory, or one whose rep-<R>/ children are (a --parallel
spread). The task comes from each config.json, the seed from config seed + repetition.
"""
import csv
import json
import pathlib
import sys

PAPER = {"ant-maze": "0.99 ± 0.01", "ant-push": "0.92 ± 0.04", "ant-fall": "0.66 ± 0.07"}


def runs(path):
    p = pathlib.Path(path)
    children = sorted(c for c in p.glob("rep-*") if (c / "config.json").exists())
    return children or [p]


def evals(run):
    """[(env_steps, success, mean_final_distance)] by env steps; the last row of each wins."""
    rows = {}
    f = run / "evals.csv"
    if f.exists():
        for r in csv.DictReader(f.open()):
            rows[int(r["env_steps"])] = (float(r["success"]), float(r["mean_final_distance"]))
    return sorted((s, *v) for s, v in rows.items())


def main(paths):
    print("| task | seed | evaluations | first success (env steps) | best success (env steps) | last evaluation "
          "(env steps, success, mean final distance) | HIRO, paper |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for path in paths:
        for run in runs(path):
            cfg = json.loads((run / "config.json").read_text())
            rep = int(run.name[4:]) if run.name.startswith("rep-") else 0
            seed = cfg.get("seed", 0) + rep  # common/seeds.h: repetition_seed
            e = evals(run)
            first = next((f"{s:.2f} ({n:,})" for n, s, _ in e if s > 0), "none")
            best = max(e, key=lambda r: (r[1], -r[0])) if e else None
            best_s = f"{best[1]:.2f} ({best[0]:,})" if best else "-"
            last = f"{e[-1][0]:,}, {e[-1][1]:.2f}, {e[-1][2]:.2f}" if e else "-"
            print(f"| {cfg['env']} | {seed} | {len(e)} | {first} | {best_s} | {last} | {PAPER.get(cfg['env'], '-')} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
