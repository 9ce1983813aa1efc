"""Threads: vector envs stepped from several Python threads at once, beside a pure-Python
thread, give the same bits as alone; and step() releases the GIL (other Python code runs
while one call is inside the C++)."""

import sys
import threading
import time

import numpy as np

import ringrl

STEPS = 120


def run(name, n, seed, threads, actions):
    env = ringrl.make_vec(name, num_envs=n, threads=threads)
    out = [env.reset(seed=seed)[0]]
    for a in actions:
        out.append(env.step(a)[0])
    env.close()
    return np.stack(out)


def test_concurrent_vector_envs_match_sequential_runs():
    rng = np.random.default_rng(0)
    jobs = [("kinematic-maze", 4, 1, 2), ("kinematic-push", 3, 2, 2), ("kinematic-maze", 2, 3, 1)]
    actions = [rng.uniform(-1, 1, size=(STEPS, n, 8)).astype(np.float32) for _, n, _, _ in jobs]
    expected = [run(name, n, seed, t, a) for (name, n, seed, t), a in zip(jobs, actions)]

    results = [None] * len(jobs)
    stop = threading.Event()
    spins = [0]

    def python_work():  # holds the GIL whenever it runs
        while not stop.is_set():
            spins[0] += sum(range(100))

    def worker(k):
        name, n, seed, t = jobs[k]
        results[k] = run(name, n, seed, t, actions[k])

    busy = threading.Thread(target=python_work)
    busy.start()
    workers = [threading.Thread(target=worker, args=(k,)) for k in range(len(jobs))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    busy.join()
    assert spins[0] > 0
    for k, (got, want) in enumerate(zip(results, expected)):
        assert got.tobytes() == want.tobytes(), f"job {k} differs when run beside others"


def test_step_releases_the_gil():
    env = ringrl.make_vec("ant-maze" if ringrl.envs.available("ant-maze") else "kinematic-maze", num_envs=256,
                          threads=1, copy=False)
    env.reset(seed=0)
    actions = np.zeros((256, 8), np.float32)
    calls = []
    ticks = []
    stop = threading.Event()

    def ticker():  # Python code: it can only record a time while it holds the GIL
        while not stop.is_set():
            ticks.append(time.perf_counter())

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        t = threading.Thread(target=ticker)
        t.start()
        time.sleep(0.01)
        for _ in range(10):
            t0 = time.perf_counter()
            env.step(actions)
            calls.append((t0, time.perf_counter()))
        stop.set()
        t.join()
    finally:
        sys.setswitchinterval(old)
    env.close()
    inside = 0
    for t0, t1 in calls:
        margin = 0.1 * (t1 - t0)
        inside += sum(1 for x in ticks if t0 + margin < x < t1 - margin)
    assert inside > 0, "no Python code ran while step() was in C++: the GIL was held"
