"""The maze envs of `ringrl env list` in Gymnasium's API (docs/python.md).

* ``MazeEnv``: one env, a ``gymnasium.Env``. ``gymnasium.make("ringrl/AntMaze-v0")`` makes one.
* ``VecMazeEnv``: N envs stepped together in C++ on a oneTBB arena with the GIL released, a
  ``gymnasium.vector.VectorEnv`` with autoreset mode NEXT_STEP. ``make_vec("ant-maze", N)``.

Episodes never terminate; they truncate after ``episode_length`` (500) steps. Rewards are the
task reward -||obs[goal_indices] - target||. ``info`` carries the task's ``target`` (the
context G), the ``distance`` to it and ``success`` (distance < 5), and ``t``.

Seeds: ``reset(seed=s)`` starts episode 0 from seed s; each later ``reset()`` without a seed
(and each autoreset) takes the next seed of that sequence (``_ringrl.episode_seed(s, k)``).
``VecMazeEnv.reset(seed=s)`` seeds env i with s + i, so env i of a vector env and a single env
reset with seed s + i step through the same episodes bit for bit.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from ringrl import _ringrl

_SEED_MAX = 2**63  # seeds drawn for an unseeded first reset lie in [0, 2^63)
_RENDER_PX_PER_CELL = 48  # render(): pixels per maze cell


def env_names() -> list[str]:
    """Every maze env that `ringrl env list` shows, available in this build or not."""
    return [e["name"] for e in _ringrl.env_catalog()]


def available(name: str) -> bool:
    """True when this build has env ``name`` (the MuJoCo envs need MuJoCo)."""
    return any(e["name"] == name and e["available"] for e in _ringrl.env_catalog())


def gym_id(name: str) -> str:
    """The Gymnasium id of a maze env: "ant-maze" -> "ringrl/AntMaze-v0"."""
    return "ringrl/" + "".join(part.capitalize() for part in name.split("-")) + "-v0"


def _options(task: str, compact: bool, observe_block: bool, max_step: float | None):
    if max_step is None:
        return _ringrl.MazeEnvOptions(task=task, compact=compact, observe_block=observe_block)
    return _ringrl.MazeEnvOptions(task=task, compact=compact, observe_block=observe_block, max_step=max_step)


def _spaces(spec: dict) -> tuple[spaces.Box, spaces.Box]:
    obs = spaces.Box(-np.inf, np.inf, shape=(spec["obs_dim"],), dtype=np.float32)
    act = spaces.Box(
        np.asarray(spec["action_low"], dtype=np.float32),
        np.asarray(spec["action_high"], dtype=np.float32),
        dtype=np.float32,
    )
    return obs, act


def _as_actions(actions: Any) -> np.ndarray:
    """Arrays pass as they are (the C++ converts any real dtype and checks shape and
    finiteness); other sequences become arrays."""
    return actions if isinstance(actions, np.ndarray) else np.asarray(actions)


class MazeEnv(gym.Env):
    """One maze env (see the module docstring). ``name`` is one of ``env_names()``;
    ``task`` = "single" (the paper's fixed Push/Fall target) or "multi"; ``compact``,
    ``observe_block`` and ``max_step`` apply to the kinematic envs, as in the C++."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(
        self,
        name: str = "ant-maze",
        *,
        task: str = "single",
        compact: bool = False,
        observe_block: bool = False,
        max_step: float | None = None,
        render_mode: str | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode}: expected None or rgb_array")
        options = _options(task, compact, observe_block, max_step)
        self.name = name
        self.task = task
        self.spec_dict = _ringrl.env_spec(name, options)
        self._env = _ringrl.Env(name, options)
        self.observation_space, self.action_space = _spaces(self.spec_dict)
        self.render_mode = render_mode
        self._xy: list[tuple[float, float]] = []
        self._seeded = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is None and not self._seeded:
            seed = int(self.np_random.integers(_SEED_MAX))  # first reset, unseeded
        obs = self._env.reset(seed)
        self._seeded = True
        if options and "target" in options:  # evaluation: a fixed target instead of a drawn one
            self.target = options["target"]
        self._xy = [(float(obs[0]), float(obs[1]))]
        return obs, self._info(obs, 0)

    def step(self, action):
        obs, reward, terminated, truncated, t, distance, success = self._env.step(_as_actions(action))
        self._xy.append((float(obs[0]), float(obs[1])))
        info = {"target": np.asarray(self._env.context, dtype=np.float32), "distance": distance,
                "success": success, "t": t}
        return obs, reward, terminated, truncated, info

    def _info(self, obs: np.ndarray, t: int) -> dict:
        distance, success = self._env.status()  # the task's own distance and threshold, in C++
        return {"target": np.asarray(self._env.context, dtype=np.float32), "distance": distance,
                "success": success, "t": t}

    @property
    def target(self) -> np.ndarray:
        """The task's target G in force (context_dim floats)."""
        return np.asarray(self._env.context, dtype=np.float32)

    @target.setter
    def target(self, value) -> None:
        self._env.context = [float(v) for v in np.asarray(value, dtype=np.float32).ravel()]

    def render(self):
        """Top-down picture (H, W, 3) uint8 with this episode's path; None without render_mode."""
        if self.render_mode is None:
            gym.logger.warn("render() without render_mode: make the env with render_mode='rgb_array'")
            return None
        xy = np.asarray(self._xy if self._xy else [(0.0, 0.0)], dtype=np.float64)
        return _ringrl.render_rgb(self.name, self.task, xy, _RENDER_PX_PER_CELL)

    def close(self):
        self._env.close()


class VecMazeEnv(VectorEnv):
    """N maze envs stepped in C++ (see the module docstring and docs/python.md).

    ``threads`` = 0: one worker per core, at most N. Observations, rewards and flags are written
    into arrays allocated once; with ``copy=True`` (the default, as in Gymnasium's vector envs)
    step() returns copies of them, with ``copy=False`` the arrays themselves, which the next
    step() overwrites."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        name: str = "ant-maze",
        num_envs: int = 1,
        *,
        seed: int | None = None,
        threads: int = 0,
        copy: bool = True,
        task: str = "single",
        compact: bool = False,
        observe_block: bool = False,
        max_step: float | None = None,
    ):
        options = _options(task, compact, observe_block, max_step)
        self.name = name
        self.spec_dict = _ringrl.env_spec(name, options)
        self._core = _ringrl.VecEnv(name, int(num_envs), int(threads), options)
        self.num_envs = int(num_envs)
        self.copy = copy
        self.single_observation_space, self.single_action_space = _spaces(self.spec_dict)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self.closed = False
        self._seed = seed  # used by the first reset() when it gives no seed

    @property
    def threads(self) -> int:
        """Worker threads of the arena (1: the calling thread steps every env)."""
        return self._core.threads

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        if seed is None and self._seed is not None:
            seed, self._seed = self._seed, None
        if seed is None and not getattr(self, "_seeded", False):
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        if isinstance(seed, (int, np.integer)):
            super().reset(seed=int(seed))
            seeds = [int(seed) + i for i in range(self.num_envs)]
        elif seed is None:
            seeds = [None] * self.num_envs
        else:
            seeds = [None if s is None else int(s) for s in seed]
        self._core.reset(seeds)
        self._seeded = True
        return self._out(self._core.obs), self._infos()

    def step(self, actions):
        self._core.step(_as_actions(actions))
        c = self._core
        return (self._out(c.obs), self._out(c.reward), self._out(c.terminated), self._out(c.truncated),
                self._infos())

    def set_target(self, index: int, target) -> None:
        """Replaces env ``index``'s target G for the rest of its episode."""
        self._core.set_target(int(index), [float(v) for v in np.asarray(target, dtype=np.float32).ravel()])

    def _out(self, a: np.ndarray) -> np.ndarray:
        return a.copy() if self.copy else a

    def _infos(self) -> dict:
        c = self._core
        return {"target": self._out(c.target), "distance": self._out(c.distance),
                "success": self._out(c.success), "t": self._out(c.t)}

    def close_extras(self, **kwargs):
        self._core.close()


def make(name: str, **kwargs) -> MazeEnv:
    """One maze env (``MazeEnv(name, **kwargs)``)."""
    return MazeEnv(name, **kwargs)


def make_vec(name: str, num_envs: int = 1, seed: int | None = None, **kwargs) -> VecMazeEnv:
    """``num_envs`` maze envs stepped together (``VecMazeEnv``). ``seed`` seeds the first
    reset() that gives none (env i gets seed + i)."""
    return VecMazeEnv(name, num_envs, seed=seed, **kwargs)


def _vector_entry(num_envs: int = 1, *, name: str, **kwargs) -> VecMazeEnv:
    """gymnasium.make_vec(..., vectorization_mode="vector_entry_point")."""
    kwargs.pop("render_mode", None)
    return VecMazeEnv(name, num_envs, **kwargs)


def register_envs() -> None:
    """Registers every maze env available in this build as ``ringrl/<Name>-v0``."""
    for e in _ringrl.env_catalog():
        if not e["available"] or gym_id(e["name"]) in gym.registry:
            continue
        gym.register(
            id=gym_id(e["name"]),
            entry_point=MazeEnv,
            vector_entry_point=_vector_entry,
            kwargs={"name": e["name"]},
        )


__all__ = ["MazeEnv", "VecMazeEnv", "available", "env_names", "gym_id", "make", "make_vec", "register_envs"]
