"""Runs a trained HIRO policy on the Python maze env, in NumPy.

    python3 examples/hiro_policy.py runs/hiro-km/model-rep0.ckpt [--episodes 3] [--seed 0]

The checkpoint's acting networks (ringrl.checkpoint.load) drive the env of its run: every
meta_period steps the high level picks a goal g from (obs, target), clipped to the goal box;
between decisions g moves with the goal transition h; the low level acts on (obs, g), with x,y
masked under hiro_orig (the checkpoint's input_mask). Prints each episode's final distance to
the primary evaluation target and whether it is a success (spec hiro.md §10.6).
"""

import argparse
import json
import pathlib

import numpy as np

import ringrl
from ringrl.hiro import actor, goal_space, goal_transition


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint", type=pathlib.Path)
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=0, help="steps per episode (0: the env's 500)")
    a = p.parse_args()

    ck = ringrl.checkpoint.load(a.checkpoint)
    if ck.algorithm != "hiro":
        raise SystemExit(f"{a.checkpoint}: a {ck.algorithm} checkpoint, expected hiro")
    config = json.loads((a.checkpoint.parent / "config.json").read_text())
    env_name, kind = ck.run["env"], ck.run["goal_space"]
    period = int(config.get("meta_period", 10))
    env = ringrl.make(env_name, task=ck.run.get("targets", "single"))
    gs = goal_space(kind, env_name)
    spec = env.spec_dict
    target = np.asarray(spec["eval_targets"][spec["primary_eval"]], np.float32)
    steps = a.steps or spec["episode_length"]
    w = ck.weights

    successes = 0
    for episode in range(a.episodes):
        obs, _ = env.reset(seed=a.seed + episode, options={"target": target})
        g = np.zeros(gs.dim, np.float32)
        for t in range(steps):
            if t % period == 0:  # high-level decision
                g = gs.clip(actor(w, "meta", np.concatenate([obs, target])))
            action = actor(w, "low", np.concatenate([obs, g]))
            next_obs, _, _, _, info = env.step(action)
            g = goal_transition(obs, g, next_obs)
            obs = next_obs
        successes += bool(info["success"])
        print(f"episode {episode}: final distance {info['distance']:.3f} to {target.tolist()}, "
              f"success {bool(info['success'])}")
    print(f"{env_name} ({kind}): {successes}/{a.episodes} successes")


if __name__ == "__main__":
    main()
