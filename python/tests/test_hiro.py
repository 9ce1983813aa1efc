"""ringrl.hiro: the goal spaces, the intrinsic reward and the goal transition of the C++
learner (spec hiro.md §6), and the wrapper that puts them on an env."""

import gymnasium as gym
import numpy as np
import pytest

import ringrl
from ringrl import hiro


def test_goal_spaces():
    xy = hiro.goal_space("hiro_xy", "ant-maze" if ringrl.envs.available("ant-maze") else "kinematic-maze")
    assert xy.dim == 2 and not xy.mask_xy
    np.testing.assert_array_equal(xy.high, [10, 10])
    orig = hiro.goal_space("orig", "kinematic-maze")
    assert orig.kind == "hiro_orig" and orig.dim == 15 and orig.mask_xy
    with pytest.raises(ValueError, match="point-maze|full-state|15"):
        hiro.goal_space("hiro_orig", "point-maze")


def test_intrinsic_reward_and_goal_transition_match_the_formulas():
    rng = np.random.default_rng(0)
    s, s_next = rng.normal(size=(2, 5, 30)).astype(np.float32)
    g = rng.normal(size=(5, 2)).astype(np.float32)
    r = hiro.intrinsic_reward(s, g, s_next)
    want = -np.sqrt(np.sum((s[:, :2] + g - s_next[:, :2]) ** 2, axis=1, dtype=np.float32) + 1e-10)
    np.testing.assert_allclose(r, want, rtol=1e-6)
    assert hiro.intrinsic_reward(s[0], g[0], s_next[0]) == pytest.approx(float(r[0]))
    np.testing.assert_array_equal(hiro.goal_transition(s, g, s_next), s[:, :2] + g - s_next[:, :2])


def test_goal_wrapper():
    env = hiro.GoalWrapper(gym.make("ringrl/KinematicMaze-v0"), "hiro_xy")
    assert env.observation_space.shape == (32,)
    obs, _ = env.reset(seed=0, options={"goal": [3.0, -20.0]})
    np.testing.assert_array_equal(obs[30:], [3.0, -10.0])  # clipped to the +-10 box
    prev = obs
    obs, reward, _, _, info = env.step(np.full(8, 0.3, np.float32))
    want_goal = prev[:2] + prev[30:] - obs[:2]
    np.testing.assert_allclose(obs[30:], want_goal, rtol=1e-6)
    assert info["intrinsic_reward"] == pytest.approx(
        -np.sqrt(np.sum((prev[:2] + prev[30:] - obs[:2]) ** 2) + 1e-10), rel=1e-6)
    assert reward == pytest.approx(-info["distance"])
