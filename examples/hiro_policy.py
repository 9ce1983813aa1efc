"""Runs an exported HIRO policy on the Python maze env, in NumPy.

    ringrl checkpoint export --policy runs/hiro-ant/model-rep0.ckpt --out ant.policy
    python3 examples/hiro_policy.py ant.policy [--episodes 3] [--seed 0]

ringrl.hiro.load_policy gives the policy as a callable from (observation, target) to action:
every meta_period steps the high level picks a goal from (obs, target), clipped to the goal
box; between decisions the goal moves with the goal transition; the low level acts on
(obs, goal). Each episode runs on the policy's env (ringrl/AntMaze-v0 for an AntMaze export)
at the task's primary evaluation target and prints its final distance and whether it is a
success (spec hiro.md §10.6).
"""

import argparse
import pathlib

import gymnasium as gym
import numpy as np

import ringrl


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("policy", type=pathlib.Path)
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=0, help="steps per episode (0: the env's 500)")
    a = p.parse_args()

    policy = ringrl.hiro.load_policy(a.policy)
    env = gym.make(ringrl.envs.gym_id(policy.env), **policy.env_options).unwrapped
    spec = env.spec_dict
    target = np.asarray(spec["eval_targets"][spec["primary_eval"]], np.float32)
    steps = a.steps or spec["episode_length"]

    successes = 0
    for episode in range(a.episodes):
        obs, _ = env.reset(seed=a.seed + episode, options={"target": target})
        policy.reset()
        for _ in range(steps):
            obs, _, _, _, info = env.step(policy(obs, target))
        successes += bool(info["success"])
        print(f"episode {episode}: final distance {info['distance']:.3f} to {target.tolist()}, "
              f"success {bool(info['success'])}")
    print(f"{policy.env} ({policy.goal_space.kind}): {successes}/{a.episodes} successes "
          f"(policy of {policy.env_steps} env steps)")


if __name__ == "__main__":
    main()
