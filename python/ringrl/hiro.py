"""HIRO's goal spaces for Python, from the C++ that the learner uses (common/hiro/goal_space.h,
spec hiro.md §2, §6).

    gs = ringrl.hiro.goal_space("hiro_xy", "ant-maze")      # kind, dim k, low, high, mask_xy
    ringrl.hiro.intrinsic_reward(s, g, s_next)               # -sqrt(sum (s + g - s')^2 + 1e-10)
    ringrl.hiro.goal_transition(s, g, s_next)                # h: s[:k] + g - s'[:k]
    env = ringrl.hiro.GoalWrapper(gym.make("ringrl/AntMaze-v0"), "hiro_xy")
    policy = ringrl.hiro.load_policy("ant.policy")            # `ringrl checkpoint export --policy`
    action = policy(obs, target)                             # both levels, noise-free

GoalWrapper appends the goal g (k floats, relative: the intended state is s[:k] + g) to the
observation, moves it with the goal transition at every step, and reports the low level's
intrinsic reward for it in info["intrinsic_reward"]; the env's own (task) reward is unchanged.
Set the goal with reset(options={"goal": g}) or wrapper.goal = g (a high-level decision).
"""

from __future__ import annotations

import os

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ringrl import _ringrl


@dataclass(frozen=True)
class GoalSpace:
    kind: str  # "hiro_orig" or "hiro_xy"
    dim: int  # k
    low: np.ndarray  # goal box, k floats (also the high level's action box)
    high: np.ndarray
    mask_xy: bool  # ZERO_OBS: the low level's inputs x, y are multiplied by 0

    def clip(self, g: np.ndarray) -> np.ndarray:
        return np.clip(g, self.low, self.high).astype(np.float32)


def goal_space(kind: str, env: str, *, task: str = "single") -> GoalSpace:
    """The goal space ``kind`` ("hiro_orig"/"orig" or "hiro_xy"/"xy") of env ``env``."""
    d = _ringrl.goal_space(kind, env, _ringrl.MazeEnvOptions(task=task))
    return GoalSpace(d["kind"], d["dim"], np.asarray(d["low"], np.float32), np.asarray(d["high"], np.float32),
                     d["mask_xy"])


def _f32(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32)


def intrinsic_reward(s, g, s_next):
    """r_lo (spec §6.3) for one transition (1-D arrays: a float) or a batch ([B, *]: [B])."""
    s, g, s_next = _f32(s), _f32(g), _f32(s_next)
    out = _ringrl.intrinsic_reward(s, g, s_next)
    return float(out[0]) if s.ndim == 1 else out


def goal_transition(s, g, s_next) -> np.ndarray:
    """h (spec §6.2): the goal in force after the step s -> s_next."""
    return _ringrl.goal_transition(_f32(s), _f32(g), _f32(s_next))


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


def actor(weights: dict, level: str, x: np.ndarray) -> np.ndarray:
    """One acting network of a HIRO checkpoint in NumPy (common/hiro/actor_blob.h):
    a = mid + half_range * tanh(out(relu(fc2(relu(fc1(x * input_mask))))))."""
    w = lambda name: weights[f"{level}.{name}"]  # noqa: E731
    h = relu((x * w("input_mask")) @ w("fc1.weight").T + w("fc1.bias"))
    h = relu(h @ w("fc2.weight").T + w("fc2.bias"))
    return (w("mid") + w("half_range") * np.tanh(h @ w("out.weight").T + w("out.bias"))).astype(np.float32)


class GoalWrapper(gym.Wrapper):
    """Adds a HIRO goal to a maze env's observation (see the module docstring)."""

    def __init__(self, env: gym.Env, kind: str = "hiro_xy"):
        super().__init__(env)
        base = env.unwrapped
        self.goal_space = goal_space(kind, base.name, task=getattr(base, "task", "single"))
        obs_dim = env.observation_space.shape[0]
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(obs_dim + self.goal_space.dim,), dtype=np.float32)
        self.goal = np.zeros(self.goal_space.dim, np.float32)
        self._obs = None

    def _with_goal(self, obs: np.ndarray) -> np.ndarray:
        return np.concatenate([obs, self.goal]).astype(np.float32)

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        goal = (options or {}).get("goal")
        self.goal = self.goal_space.clip(goal) if goal is not None else np.zeros(self.goal_space.dim, np.float32)
        self._obs = obs
        return self._with_goal(obs), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = dict(info)
        info["intrinsic_reward"] = intrinsic_reward(self._obs, self.goal, obs)
        self.goal = goal_transition(self._obs, self.goal, obs)
        self._obs = obs
        return self._with_goal(obs), reward, terminated, truncated, info


class Policy:
    """A HIRO policy file (``ringrl checkpoint export --policy CKPT --out FILE``) as a callable
    ``policy(observation, target) -> action``: the C++ HiroPolicy (actors/hiro/hiro_policy.h),
    the noise-free two-level step the evaluator and ``ringrl env render --policy`` run. Call it
    once per env step; every ``meta_period`` calls the high level picks the goal from
    (observation, target), clipped to the goal box, and in between the goal moves with the goal
    transition; the low level acts on (observation, goal), clipped to the action box.
    ``reset()`` starts a new episode; ``goal`` is the goal in force (relative: the intended
    state is observation[:k] + goal). ``weights`` are both networks' tensors."""

    def __init__(self, path: str | os.PathLike):
        d = _ringrl.policy_file(os.fspath(path))
        self.path = os.fspath(path)
        self.env: str = d["env"]
        self.task: str = d["task"]
        self.meta_period: int = d["meta_period"]
        self.env_steps: int = d["env_steps"]
        self.weights: dict = d["weights"]
        self.goal_space = goal_space(d["goal_space"], self.env, task=self.task)
        self.env_options = {"task": self.task, "compact": d["compact"], "observe_block": d["observe_block"],
                            "max_step": d["max_step"]}
        self._policy = _ringrl.HiroPolicy(self.path)

    def reset(self) -> None:
        self._policy.reset()

    @property
    def goal(self) -> np.ndarray:
        return np.asarray(self._policy.goal, np.float32)

    def __call__(self, observation, target) -> np.ndarray:
        return self._policy.act(_f32(observation), _f32(target))


def load_policy(path: str | os.PathLike) -> Policy:
    """Reads and verifies a policy file (a damaged one raises CorruptDataError); see Policy."""
    return Policy(path)
