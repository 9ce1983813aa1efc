#!/usr/bin/env python3
"""Speed of ringrl from Python against its own C++ and against EnvPool (docs/python.md).

    python3 scripts/bench_python.py [--json] [--env ant-maze] [--seconds 3] [--cli build/release/app/ringrl]

In one run, on this machine:
  1. `ringrl bench env --env ENV` (the C++ env alone on one core, and bare mj_step of the same
     model), then ringrl.make_vec(ENV, N) stepped from Python with random actions, N = 1 .. cores:
     steps/s (all envs together, wall clock), and at N = 1 the ratio to the C++ rate on each
     side's own clock (thread CPU time, as `bench env` measures; wall clock too).
  2. EnvPool's Ant-v4 (envpool.make(..., num_envs=N), N = 1 and 2) with random actions, its bare
     mj_step rate (the `mujoco` module on EnvPool's own ant.xml, frame skip 5), and for both
     libraries the efficiency = env steps/s x frame skip / bare mj_step/s (1.0 = no overhead over
     the physics). Skipped with a message when envpool or mujoco is not installed.
  3. ringrl.bf.score from Python (one thread) against `ringrl bench bf`'s in-process rate on the
     same kind of programs (random, 100 tokens, task reverse), both on thread CPU time.
The ant-maze has walls and a different model than Ant-v4, so raw steps/s are not the same work;
compare efficiencies. A benchmark, not a test: figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

import ringrl

REPO = pathlib.Path(__file__).resolve().parents[1]
ACTION_TABLE = 4096  # pre-drawn random action batches, cycled (as bench env does)
BF_TOKENS = "><+-[].,"  # the eight BF commands (programs as `bench bf` draws them)
BF_LENGTH = 100  # the paper's T
BF_PROGRAMS = 100_000
ENVPOOL_FRAME_SKIP = 5  # Gymnasium Ant-v4


def cli_json(cli: str, *args: str) -> dict:
    out = subprocess.run([cli, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def step_rate(step, actions: np.ndarray, seconds: float, clock) -> float:
    """Calls step(actions[k]) for `seconds` of `clock`; returns calls per second."""
    k = 0
    t0 = clock()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for _ in range(64):
            step(actions[k % len(actions)])
            k += 1
    return k / (clock() - t0)


def bench_ringrl(name: str, n: int, seconds: float, clock) -> float:
    env = ringrl.make_vec(name, num_envs=n, copy=False, threads=0)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    low, high = env.single_action_space.low, env.single_action_space.high
    actions = rng.uniform(low, high, size=(ACTION_TABLE, n, low.shape[0])).astype(np.float32)
    step_rate(env.step, actions, 0.2 * seconds, clock)  # warm up
    rate = step_rate(env.step, actions, seconds, clock) * n
    env.close()
    return rate


def bench_envpool(n: int, seconds: float) -> float:
    import envpool

    env = envpool.make("Ant-v4", env_type="gymnasium", num_envs=n, seed=1, num_threads=n)
    env.reset()
    rng = np.random.default_rng(1)
    space = env.action_space
    actions = rng.uniform(space.low, space.high, size=(ACTION_TABLE, n, space.shape[0])).astype(np.float32)
    step_rate(env.step, actions, 0.2 * seconds, time.perf_counter)
    rate = step_rate(env.step, actions, seconds, time.perf_counter) * n
    env.close()
    return rate


def envpool_bare_mj_step(seconds: float) -> float:
    """mj_step/s of EnvPool's own Ant-v4 model (assets_gym/ant.xml), from Python's mujoco module
    (its MuJoCo version may differ from the one built into EnvPool; the report names both)."""
    import envpool
    import mujoco

    roots = [pathlib.Path(envpool.__file__).parent]
    try:
        import envpool_assets  # EnvPool >= 1.2 keeps its MuJoCo models in a separate package

        roots.append(pathlib.Path(envpool_assets.__file__).parent)
    except ImportError:
        pass
    xml = next(x for root in roots for x in root.rglob("ant.xml") if x.parent.name == "assets_gym")
    model = mujoco.MjModel.from_xml_path(str(xml))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(1)
    ctrl = rng.uniform(-1, 1, size=(ACTION_TABLE, model.nu))
    k, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        data.ctrl[:] = ctrl[k % ACTION_TABLE]
        for _ in range(ENVPOOL_FRAME_SKIP):
            mujoco.mj_step(model, data)
        k += 1
        if k % 1000 == 0:
            mujoco.mj_resetData(model, data)
    return k * ENVPOOL_FRAME_SKIP / (time.perf_counter() - t0)


def bench_bf(cli: str, seconds: float) -> dict:
    rng = np.random.default_rng(2018)
    letters = np.frombuffer(BF_TOKENS.encode(), dtype=np.uint8)
    table = letters[rng.integers(0, len(BF_TOKENS), size=(BF_PROGRAMS, BF_LENGTH))]
    programs = [row.tobytes().decode() for row in table]
    ringrl.bf.score(programs[:1000], "reverse", threads=1)  # warm up
    # threads=1 scores on the calling thread, so its CPU time is the whole cost, measured as
    # `bench bf` measures its own (thread CPU time: robust to other processes on the core).
    best = 0.0
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        t0 = time.thread_time()
        ringrl.bf.score(programs, "reverse", threads=1)
        best = max(best, len(programs) / (time.thread_time() - t0))
    cpp = cli_json(cli, "bench", "bf", "--programs", str(BF_PROGRAMS), "--no-cli")
    return {"python_programs_per_s": best, "cpp_programs_per_s": cpp["programs_per_s"],
            "ratio": best / cpp["programs_per_s"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--env", default="ant-maze")
    p.add_argument("--seconds", type=float, default=3.0, help="measuring time per cell")
    p.add_argument("--cli", default=str(REPO / "build" / "release" / "app" / "ringrl"))
    p.add_argument("--max-envs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args()
    report: dict = {"bench": "python", "env": a.env, "cores": os.cpu_count(), "seconds_per_cell": a.seconds}

    # 1. ringrl from Python against ringrl bench env.
    cpu = cli_json(a.cli, "bench", "env", "--env", a.env, "--seconds", str(a.seconds))
    wall = cli_json(a.cli, "bench", "env", "--env", a.env, "--seconds", str(a.seconds), "--clock", "wall")
    vec = {}
    n = 1
    while n <= max(1, a.max_envs):
        vec[n] = bench_ringrl(a.env, n, a.seconds, time.perf_counter)
        n *= 2
    py_cpu_1 = bench_ringrl(a.env, 1, a.seconds, time.thread_time)
    frame_skip = cpu.get("frame_skip") or 1
    bare = cpu.get("bare_physics_steps_per_s")
    report["ringrl"] = {
        "cpp_env_steps_per_s_cpu": cpu["env_steps_per_s"],
        "cpp_env_steps_per_s_wall": wall["env_steps_per_s"],
        "python_env_steps_per_s_cpu_n1": py_cpu_1,
        "ratio_n1_cpu": py_cpu_1 / cpu["env_steps_per_s"],
        "ratio_n1_wall": vec[1] / wall["env_steps_per_s"],
        "python_env_steps_per_s_wall": {str(k): v for k, v in vec.items()},
        "bare_mj_step_per_s": bare,
        "frame_skip": frame_skip,
        "efficiency": {str(k): v * frame_skip / bare / k for k, v in vec.items()} if bare else None,
    }

    # 2. EnvPool.
    try:
        import envpool  # noqa: F401
        import mujoco
    except ImportError as e:
        report["envpool"] = {"skipped": f"{e.name} is not installed (pip install envpool==1.2.5 mujoco; "
                                        "the benchmark only, not a dependency)"}
    else:
        ep = {k: bench_envpool(k, a.seconds) for k in (1, 2)}
        ep_bare = envpool_bare_mj_step(a.seconds)
        ours = {k: bench_ringrl(a.env, k, a.seconds, time.perf_counter) for k in (1, 2)}
        report["envpool"] = {
            "version": envpool.__version__,
            "mujoco_python_version": mujoco.__version__,
            "env": "Ant-v4",
            "envpool_steps_per_s": {str(k): v for k, v in ep.items()},
            "envpool_bare_mj_step_per_s": ep_bare,
            "envpool_efficiency": {str(k): v * ENVPOOL_FRAME_SKIP / ep_bare / k for k, v in ep.items()},
            "ringrl_steps_per_s": {str(k): v for k, v in ours.items()},
            "ringrl_efficiency": {str(k): v * frame_skip / bare / k for k, v in ours.items()} if bare else None,
        }

    # 3. The BF scorer.
    report["bf"] = bench_bf(a.cli, a.seconds)

    if a.json:
        print(json.dumps(report))
        return
    r = report["ringrl"]
    print(f"{a.env}: C++ {r['cpp_env_steps_per_s_cpu']:.0f} steps/s (thread CPU), from Python at N=1 "
          f"{r['python_env_steps_per_s_cpu_n1']:.0f} ({r['ratio_n1_cpu']:.2f}x); wall clock ratio {r['ratio_n1_wall']:.2f}x")
    for k, v in r["python_env_steps_per_s_wall"].items():
        print(f"  N={k}: {v:.0f} steps/s (wall)")
    print(json.dumps(report["envpool"]))
    b = report["bf"]
    print(f"bf.score {b['python_programs_per_s']:.0f} programs/s, bench bf {b['cpp_programs_per_s']:.0f} "
          f"({b['ratio']:.2f}x)")


if __name__ == "__main__":
    sys.exit(main())
