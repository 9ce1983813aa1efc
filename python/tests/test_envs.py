"""The maze envs in Gymnasium's API: Gymnasium's own checker on every registered env, the
spaces and info against `ringrl env list`, render(), and bad input as one-line errors."""

import json
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import ringrl
from ringrl import _ringrl
from conftest import run_cli

AVAILABLE = [e["name"] for e in _ringrl.env_catalog() if e["available"]]
START_COLOUR = (40, 160, 60)  # envs/maze/render.h kStartColour


@pytest.mark.parametrize("name", AVAILABLE)
def test_check_env_passes(name):
    env = gym.make(ringrl.envs.gym_id(name), render_mode="rgb_array").unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning is a failure too, but for
        # two pieces of advice: to normalise the action box (the ant's is the paper's +-30, spec
        # hiro.md §10) and to bound the observation box (velocities are unbounded; Gymnasium's
        # own MuJoCo envs declare +-inf as well)
        warnings.filterwarnings("ignore", message=".*symmetric and normalized space")
        warnings.filterwarnings("ignore", message=".*observation space (minimum|maximum) value is -?infinity")
        check_env(env)
    env.close()


def test_every_listed_env_is_registered(cli):
    listed = json.loads(run_cli(cli, "env", "list", "--json").stdout)
    for e in listed:
        if not e["available"]:
            continue
        env = gym.make(ringrl.envs.gym_id(e["env"]))
        assert env.observation_space.shape == (e["obs_dim"],)
        assert env.action_space.shape == (e["action_dim"],)
        env.close()
    assert sorted(ringrl.env_names()) == sorted(e["env"] for e in listed)


def test_reset_is_deterministic_and_info_has_target_and_success():
    env = ringrl.make("kinematic-maze")
    a, info_a = env.reset(seed=7)
    b, info_b = env.reset(seed=7)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(info_a["target"], info_b["target"])
    assert info_a["target"].shape == (2,)
    assert info_a["t"] == 0
    env.target = [0.0, 0.0]  # at the start: within the success radius
    _, reward, terminated, truncated, info = env.step(np.zeros(8, np.float32))
    assert info["success"] and not terminated and not truncated
    assert reward == pytest.approx(-info["distance"])
    np.testing.assert_array_equal(info["target"], [0.0, 0.0])


def test_episode_truncates_after_500_steps():
    env = ringrl.make("kinematic-maze")
    env.reset(seed=1)
    zero = np.zeros(8, np.float32)
    for t in range(1, 501):
        _, _, terminated, truncated, info = env.step(zero)
        assert not terminated
        assert truncated == (t == 500) and info["t"] == t


def test_render_draws_the_maze_and_the_start():
    env = ringrl.make("kinematic-maze", render_mode="rgb_array")
    env.reset(seed=3)
    picture = env.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    colours = {tuple(c) for c in picture.reshape(-1, 3)[:: 7]}
    assert START_COLOUR in colours


def test_bad_actions_raise_one_line_errors():
    env = ringrl.make("kinematic-maze")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"^action of shape \(3,\): expected \(8,\)$"):
        env.step(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"^action of dtype bool: expected real numbers \(float32, float64 or an "
                                         r"integer type\) of shape \(8,\)$"):
        env.step(np.zeros(8, bool))
    bad = np.zeros(8, np.float32)
    bad[5] = np.nan
    with pytest.raises(ValueError, match=r"^action\[5\] is nan: expected a finite number$"):
        env.step(bad)


def test_actions_of_any_real_dtype_step_as_their_float32_values():
    """np.zeros(8) is float64: the first call most users make. Any real dtype and any strides
    convert; the envs see the float32 values."""
    rng = np.random.default_rng(3)
    actions = rng.uniform(-1, 1, size=(5, 8)).astype(np.float32)
    ref = ringrl.make("kinematic-maze")
    ref.reset(seed=4)
    want = [ref.step(a)[0] for a in actions]
    for convert in (lambda a: a.astype(np.float64), lambda a: np.asfortranarray(np.stack([a, a]))[0],
                    lambda a: a.tolist()):
        env = ringrl.make("kinematic-maze")
        env.reset(seed=4)
        got = [env.step(convert(a))[0] for a in actions]
        np.testing.assert_array_equal(np.stack(got), np.stack(want))
    env = ringrl.make("kinematic-maze")
    env.reset(seed=4)
    obs = env.step(np.zeros(8))[0]  # float64 zeros
    ref.reset(seed=4)
    np.testing.assert_array_equal(obs, ref.step(np.zeros(8, np.float32))[0])
    ints = ringrl.make("kinematic-maze")
    ints.reset(seed=4)
    ref.reset(seed=4)
    np.testing.assert_array_equal(ints.step(np.ones(8, np.int16))[0], ref.step(np.ones(8, np.float32))[0])


def test_unknown_env_raises_the_cli_message(cli):
    out = run_cli(cli, "env", "rollout", "--env", "nope", "--steps", "1", "--policy", "zero", check=False)
    message = out.stderr.strip().removeprefix("ringrl: error: ")
    with pytest.raises(ValueError) as e:
        ringrl.make("nope")
    assert str(e.value) == message


def test_step_before_reset_and_after_close_raise():
    env = ringrl.make("kinematic-maze")
    with pytest.raises(ValueError, match="reset"):
        env.step(np.zeros(8, np.float32))
    env.reset(seed=0)
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros(8, np.float32))
