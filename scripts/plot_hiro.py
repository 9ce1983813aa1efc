"""Learning curve of a HIRO run: eval success (and mean final distance) against env steps.

    python3 scripts/plot_hiro.py RUN_DIR/metrics.csv OUT.png

Reads the columns env_steps, eval_success and eval_distance of the run's metrics.csv (one row
per metrics tick; the eval columns hold the latest evaluation, and eval_distance is 0 until
the first one). Each evaluation is plotted once, at the first row that shows it. The last
evaluation of each repetition comes from results.jsonl beside metrics.csv (final_eval_*), since
a run that stops on success ends before another metrics row is written.
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def eval_every(metrics_path):
    """eval_every of the run's config.json (0 when unknown)."""
    path = os.path.join(os.path.dirname(os.path.abspath(metrics_path)), "config.json")
    try:
        with open(path) as f:
            return int(json.load(f).get("eval_every", 0))
    except (OSError, ValueError):
        return 0


def evaluations(path):
    """(env_steps, success, distance) at each new evaluation, in order; the env steps are
    those of the evaluation (the multiple of eval_every before the row) when known."""
    every = eval_every(path)
    points, last = [], None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                steps = float(row["env_steps"])
                success = float(row["eval_success"])
                distance = float(row["eval_distance"])
            except (KeyError, ValueError):
                continue
            if distance <= 0:
                continue  # no evaluation yet
            if (success, distance) != last:
                points.append((steps // every * every if every > 0 else steps, success, distance))
                last = (success, distance)
    return points


def final_evaluations(metrics_path):
    """(env_steps, success, distance) of each repetition's last evaluation, from results.jsonl."""
    path = os.path.join(os.path.dirname(os.path.abspath(metrics_path)), "results.jsonl")
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("evals", 0) > 0:
                out.append((float(r["final_eval_env_steps"]), float(r["final_eval_success"]),
                            float(r["final_eval_distance"])))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_hiro.py METRICS_CSV OUT_PNG")
    metrics, out = sys.argv[1], sys.argv[2]
    points = evaluations(metrics)
    for final in final_evaluations(metrics):
        if not points or (final[1], final[2]) != points[-1][1:]:
            points.append(final)
    points.sort(key=lambda p: p[0])
    fig, ax = plt.subplots(figsize=(7, 4))
    if points:
        steps = [p[0] for p in points]
        ax.plot(steps, [p[1] for p in points], "o-", color="tab:blue", label="eval success")
        ax2 = ax.twinx()
        ax2.plot(steps, [p[2] for p in points], "s--", color="tab:orange", label="mean final distance")
        ax2.set_ylabel("mean final distance to the target")
        ax2.set_ylim(bottom=0)
    else:
        ax.text(0.5, 0.5, "no evaluation yet", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("env steps")
    ax.set_ylabel("eval success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("HIRO, kinematic-maze (hiro_xy)")
    ax.grid(alpha=0.3)
    fig.legend(loc="center left", bbox_to_anchor=(0.12, 0.55))
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"plot_hiro: {len(points)} evaluations -> {out}")


if __name__ == "__main__":
    main()
