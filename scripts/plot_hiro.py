"""Learning curves of HIRO runs: eval success and mean final distance against env steps.

    python3 scripts/plot_hiro.py OUT.png RUN_DIR [RUN_DIR ...] [--title TEXT] [--threshold 0.9]
        [--dir-labels]

Reads RUN_DIR/evals.csv (one row per evaluation: repetition, env_steps, success, successes,
episodes, mean_final_distance) of every run directory and draws one curve per run and
repetition, labelled with the run's seed (and TD3 kernel), or with the directory's name
(--dir-labels). A resumed run may hold the same evaluation twice;
the last row of each (repetition, env_steps) wins. Prints, per curve, the first env steps at
which success reached the threshold.
"""
import argparse
import csv
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_evals(run_dir):
    """{repetition: [(env_steps, success, distance), ...] sorted by env steps}."""
    rows = {}
    with open(os.path.join(run_dir, "evals.csv"), newline="") as f:
        for r in csv.DictReader(f):
            key = (int(r["repetition"]), int(r["env_steps"]))
            rows[key] = (float(r["success"]), float(r["mean_final_distance"]))
    curves = {}
    for (rep, steps), (success, distance) in sorted(rows.items()):
        curves.setdefault(rep, []).append((steps, success, distance))
    return curves


def label_of(run_dir, rep):
    """"seed S" of repetition `rep` (the config's base seed + rep, as the driver seeds it), and
    the TD3 kernel when the config names one; else the directory."""
    try:
        with open(os.path.join(run_dir, "config.json")) as f:
            cfg = json.load(f)
    except (OSError, ValueError):
        return run_dir + (f", rep {rep}" if rep else "")
    seed = cfg.get("seed")
    label = f"seed {seed + rep}" if isinstance(seed, int) else "seed ?"
    if cfg.get("td3_kernel"):
        label += f", {cfg['td3_kernel']} kernel"
    return label


def first_reaching(points, threshold):
    return next((s for s, success, _ in points if success >= threshold), None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--title", default="HIRO, kinematic-maze (hiro_xy)")
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--dir-labels", action="store_true", help="label each curve with its directory's name")
    a = ap.parse_args()

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    drawn = 0
    for run in a.runs:
        for rep, points in read_evals(run).items():
            if a.dir_labels:
                label = os.path.basename(os.path.normpath(run)) + (f", rep {rep}" if rep else "")
            else:
                label = label_of(run, rep)
            steps = [p[0] for p in points]
            top.plot(steps, [p[1] for p in points], "o-", label=label)
            bottom.plot(steps, [p[2] for p in points], "s--", label=label)
            first = first_reaching(points, a.threshold)
            reached = f"first reaches {a.threshold:g} at {first} env steps" if first is not None else "never reaches it"
            print(f"plot_hiro: {run} rep {rep} ({label}): {len(points)} evaluations, {reached}")
            drawn += 1
    if drawn == 0:
        top.text(0.5, 0.5, "no evaluation yet", ha="center", va="center", transform=top.transAxes)
    top.axhline(a.threshold, color="grey", linewidth=0.8, linestyle=":")
    top.set_ylabel("eval success rate")
    top.set_ylim(-0.02, 1.02)
    top.set_title(a.title)
    top.grid(alpha=0.3)
    top.legend(loc="lower right")
    bottom.set_xlabel("env steps")
    bottom.set_ylabel("mean final distance")
    bottom.set_ylim(bottom=0)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(f"plot_hiro: {drawn} curve(s) -> {a.out}")


if __name__ == "__main__":
    main()
