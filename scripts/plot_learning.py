"""Summary table and learning curves of a scripts/learning_experiment.sh output directory.

    python3 scripts/plot_learning.py OUT [--budget N --seeds N --tasks "T ..." --modes "M ..."]

Expects the `python3` on PATH (3.8+) with matplotlib and numpy; without matplotlib it still
writes the summary and skips the figure. Writes:
  OUT/summary.md    per-metric tables (task rows, method columns): solved/SEEDS, mean NPE to
                    solve (solved repetitions only), mean best reward, wall seconds (sum of the
                    repetitions' "seconds"); planned cells without results say "not run".
  OUT/summary.json  [{task, method, solved, reps, mean_npe_to_solve, mean_best_reward, wall_s}]
                    (reps = completed repetitions; null where there is nothing to average).
  OUT/learning.png  best reward against NPE, one subplot per task, one line per method: the
                    mean over repetitions of the running best reward, shaded min-max.
The plan (budget, seeds, tasks, methods) is kept in OUT/experiment.json; the options given
here are merged into it (tasks and methods accumulate), so a standalone call reuses it.
Data: each cell OUT/METHOD/TASK holds results.jsonl (one line per completed repetition, keyed
by global_rep) and solutions.txt (one line per new best program with the exact NPE at which
it was scored: the end of its batch or generation). Every curve is drawn from solutions.txt,
whatever the method, so all are at exact NPE (metrics.csv, sampled every metrics_every_s and
up to thousands of programs late, is not used). solutions.txt has no repetition column; see
solution_runs() for how its lines are split into repetitions and matched to results.jsonl.
Only completed repetitions are plotted; each curve ends at the repetition's final (npe,
best_reward) from results.jsonl, which also carries forward to the budget for a repetition
that stopped early on success. A repetition whose lines cannot be identified is left out of
its cell's curve, with a note on stdout.
`train random` writes no solutions.txt, only results.jsonl: random search is drawn as one
marker per task at the budget (mean final best reward, bar min-max), not as a curve.
"""
import argparse
import json
import math
import os

METHODS = ["pqt", "pg+pqt", "pg", "ga", "random"]  # display order; other names go after
COLORS = {"pqt": "tab:blue", "pg+pqt": "tab:purple", "pg": "tab:orange", "ga": "tab:green", "random": "tab:gray"}


def load_plan(out, args):
    path = os.path.join(out, "experiment.json")
    plan = json.load(open(path)) if os.path.exists(path) else {"tasks": [], "modes": []}
    if args.budget is not None:
        plan["budget"] = args.budget
    if args.seeds is not None:
        plan["seeds"] = args.seeds
    for key, given in (("tasks", args.tasks), ("modes", args.modes)):
        plan[key] += [x for x in (given or "").split() if x not in plan[key]]
    if args.budget is not None or args.seeds is not None or args.tasks or args.modes:
        json.dump(plan, open(path, "w"), indent=1)
    # Cells found on disk count too (an OUT from before experiment.json existed): a cell is a
    # directory METHOD/TASK with a results.jsonl (another experiment kept inside OUT is not).
    for m in sorted(os.listdir(out)):
        if not os.path.isdir(os.path.join(out, m)):
            continue
        tasks = [t for t in sorted(os.listdir(os.path.join(out, m)))
                 if os.path.exists(os.path.join(out, m, t, "results.jsonl"))]
        if tasks and m not in plan["modes"]:
            plan["modes"].append(m)
        plan["tasks"] += [t for t in tasks if t not in plan["tasks"]]
    plan["modes"] = sorted(plan["modes"], key=lambda m: (METHODS.index(m) if m in METHODS else len(METHODS), m))
    return plan


def read_results(cell, seeds):
    """{global_rep: result line} of the completed repetitions (the last line of a repetition wins)."""
    path = os.path.join(cell, "results.jsonl")
    if not os.path.exists(path):
        return {}
    reps = {}
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            if seeds is None or r.get("global_rep", 0) < seeds:
                reps[r.get("global_rep", 0)] = r
    return reps


def npe_to_solve(r):
    return r.get("solution_npe") or r["npe"]


def cell_stats(task, method, reps):
    solved = [r for r in reps.values() if r["found_solution"]]
    mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
    return {"task": task, "method": method, "solved": len(solved), "reps": len(reps),
            "mean_npe_to_solve": mean([npe_to_solve(r) for r in solved]),
            "mean_best_reward": mean([r["best_reward"] for r in reps.values()]),
            "wall_s": sum(r.get("seconds", 0.0) for r in reps.values()) if reps else None}


def write_summary(out, plan, stats):
    seeds, tasks, modes = plan.get("seeds"), plan["tasks"], plan["modes"]
    by = {(s["task"], s["method"]): s for s in stats}
    fmt_solved = lambda s: f"{s['solved']}/{seeds}" + (f" ({s['reps']} reps run)" if s["reps"] != seeds else "")
    metrics = [("Solved repetitions", fmt_solved),
               ("Mean NPE to solve (solved repetitions only)",
                lambda s: "–" if s["mean_npe_to_solve"] is None else f"{s['mean_npe_to_solve']:.0f}"),
               ("Mean best reward", lambda s: f"{s['mean_best_reward']:.3f}"),
               ("Wall seconds (sum over repetitions)", lambda s: f"{s['wall_s']:.1f}")]
    lines = [f"# Learning experiment: {out}", "",
             f"NPE budget {plan.get('budget')} per repetition, {seeds} repetitions per task and method.", ""]
    for title, fmt in metrics:
        lines += [f"## {title}", "", "| task | " + " | ".join(modes) + " |", "|---" * (len(modes) + 1) + "|"]
        for t in tasks:
            cells = [fmt(by[t, m]) if by[t, m]["reps"] else "not run" for m in modes]
            lines.append(f"| {t} | " + " | ".join(cells) + " |")
        if title.startswith("Solved"):
            tot = [f"{sum(by[t, m]['solved'] for t in tasks)}/{n}" if (n := sum(by[t, m]["reps"] for t in tasks))
                   else "not run" for m in modes]
            lines.append("| **total solved / reps run** | " + " | ".join(tot) + " |")
        if title.startswith("Wall"):
            tot = [f"{sum(by[t, m]['wall_s'] or 0 for t in tasks):.1f}" if any(by[t, m]["reps"] for t in tasks)
                   else "not run" for m in modes]
            lines.append("| **total** | " + " | ".join(tot) + " |")
        lines.append("")
    text = "\n".join(lines)
    open(os.path.join(out, "summary.md"), "w").write(text)
    json.dump(stats, open(os.path.join(out, "summary.json"), "w"), indent=1)
    print(text)


def solution_runs(path):
    """The lines of a solutions.txt, [(npe, reward), ...] per started repetition, in file order.
    Repetitions run in order, and each one's first batch (or generation) always logs a line, at
    the NPE of that first batch, since the best starts at -10. So a fall in NPE to at most the
    file's first NPE starts a repetition (as does, at that same NPE, a reward that is no new
    best). A fall to a larger NPE is a resume from a checkpoint inside the repetition: the lines
    the interrupted process logged after the checkpoint are dropped (those at or above the
    resumed line's NPE, and those whose reward it does not beat, which must postdate the
    checkpoint). Lines logged between the checkpoint and the resumed line's NPE with a lower
    reward cannot be told apart and stay."""
    runs, first, last, last_reward = [], None, math.inf, math.inf
    for line in open(path):
        try:
            s = json.loads(line)
            npe, reward = float(s["npe"]), float(s["reward"])
        except (ValueError, KeyError, TypeError):
            continue  # a blank or torn line
        if first is None:
            first = npe
        if not runs or (npe <= first and (npe < last or reward <= last_reward)):
            runs.append([])
        elif npe < last:
            runs[-1] = [(n, r) for n, r in runs[-1] if n < npe and r < reward]
        runs[-1].append((npe, reward))
        last, last_reward = npe, reward
    return runs


def solution_points(cell, reps):
    """{rep: [(npe, reward), ...]} of the completed repetitions that solutions.txt's runs can be
    matched to: in repetition order, the next run that ends at the repetition's best_reward at
    no more than its final NPE (a run that does not, e.g. one a restart from scratch
    abandoned, is skipped). None when the cell has no solutions.txt."""
    path = os.path.join(cell, "solutions.txt")
    if not os.path.exists(path):
        return None
    runs, points, j = solution_runs(path), {}, 0
    for rep in sorted(reps):
        r = reps[rep]
        ends_here = lambda run: (abs(run[-1][1] - r["best_reward"]) <= 1e-9 * max(1.0, abs(r["best_reward"]))  # noqa: E731
                                 and run[-1][0] <= r["npe"])
        i = next((i for i in range(j, len(runs)) if ends_here(runs[i])), None)
        if i is not None:
            points[rep], j = runs[i], i + 1
    return points


def read_curves(cell, reps):
    """{rep: [(npe, running best reward), ...]} of the completed repetitions, at exact NPE. A cell
    without solutions.txt (random search) gets each repetition's final point only."""
    found = solution_points(cell, reps)
    points = {}
    for rep, r in reps.items():
        if found is not None and rep not in found:
            print(f"plot_learning: {cell} repetition {rep}: no run of solutions.txt ends at its best reward "
                  f"{r['best_reward']}; left out of the curve")
            continue
        points[rep] = (found or {}).get(rep, []) + [(float(r["npe"]), r["best_reward"])]
    curves = {}
    for rep, pts in points.items():
        pts.sort()
        run, best = [], -math.inf
        for npe, b in pts:
            best = max(best, b)
            run.append((npe, best))
        curves[rep] = run
    return curves


def step_values(curve, grid):
    """The running best of a curve [(npe, best), ...] at each grid NPE (held after its end)."""
    import numpy as np

    npes, bests = np.array([p[0] for p in curve]), np.array([p[1] for p in curve])
    return bests[np.clip(np.searchsorted(npes, grid, side="right") - 1, 0, None)]


def plot(out, plan, data):
    try:
        import matplotlib
    except ImportError:
        print("plot_learning: matplotlib missing (python3 -m pip install matplotlib); no learning.png")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    tasks = [t for t in plan["tasks"] if any(data.get((t, m)) for m in plan["modes"])]
    if not tasks:
        return
    ncols = min(3, len(tasks))
    nrows = math.ceil(len(tasks) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 3.6 * nrows), squeeze=False)
    budget = plan.get("budget")
    for ax, task in zip(axes.flat, tasks):
        for m in plan["modes"]:
            curves = data.get((task, m))
            if not curves:
                continue
            color = COLORS.get(m)
            if all(len(c) == 1 for c in curves.values()):  # final results only (random search)
                ys = [c[0][1] for c in curves.values()]
                x = max(c[0][0] for c in curves.values())
                ax.errorbar([x], [np.mean(ys)], yerr=[[np.mean(ys) - min(ys)], [max(ys) - np.mean(ys)]],
                            fmt="s", color=color, capsize=4, label=f"{m} (final best only)")
                continue
            start = max(c[0][0] for c in curves.values())
            end = max(budget or 0, max(c[-1][0] for c in curves.values()))
            grid = np.geomspace(max(start, 1), end, 200)
            ys = np.array([step_values(c, grid) for c in curves.values()])
            ax.plot(grid, ys.mean(axis=0), color=color, label=m)
            ax.fill_between(grid, ys.min(axis=0), ys.max(axis=0), color=color, alpha=0.2, linewidth=0)
        ax.set_xscale("log")
        ax.set_title(task)
        ax.set_xlabel("NPE")
        ax.set_ylabel("best reward")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(tasks):]:
        ax.set_visible(False)
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=len(handles), frameon=False)
    fig.suptitle(f"Running best reward vs NPE (budget {budget}, {plan.get('seeds')} seeds)\n"
                 "mean over seeds, shaded min–max", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    fig.savefig(os.path.join(out, "learning.png"), dpi=110)
    print(f"plot_learning: wrote {os.path.join(out, 'learning.png')}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--budget", type=int)
    p.add_argument("--seeds", type=int)
    p.add_argument("--tasks")
    p.add_argument("--modes")
    args = p.parse_args()
    plan = load_plan(args.out, args)
    stats, data, budgets = [], {}, [0]
    for t in plan["tasks"]:
        for m in plan["modes"]:
            cell = os.path.join(args.out, m, t)
            reps = read_results(cell, plan.get("seeds"))
            stats.append(cell_stats(t, m, reps))
            data[t, m] = read_curves(cell, reps)
            budgets += [r.get("max_npe", 0) for r in reps.values()]
    # Without a plan (a standalone call on an old OUT): what the results say.
    plan.setdefault("seeds", max([s["reps"] for s in stats] or [0]))
    plan.setdefault("budget", max(budgets) or None)
    write_summary(args.out, plan, stats)
    plot(args.out, plan, data)


if __name__ == "__main__":
    main()
