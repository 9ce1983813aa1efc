"""The vector env: N envs stepped together equal N single envs stepped alone, bit for bit; the
NEXT_STEP autoreset; close(); Gymnasium's make_vec entry point; bad input."""

import gymnasium as gym
import numpy as np
import pytest

import ringrl

EPISODE = 500
STEPS = EPISODE + 40  # crosses one autoreset


def random_actions(env, steps, seed):
    rng = np.random.default_rng(seed)
    low, high = env.single_action_space.low, env.single_action_space.high
    return rng.uniform(low, high, size=(steps, env.num_envs, low.shape[0])).astype(np.float32)


def rollout_vector(name, n, seed, actions, threads):
    env = ringrl.make_vec(name, num_envs=n, threads=threads)
    obs0, _ = env.reset(seed=seed)
    trace = [(obs0, np.zeros(n), np.zeros(n, bool), np.zeros(n, bool))]
    for a in actions:
        obs, reward, terminated, truncated, _ = env.step(a)
        trace.append((obs, reward, terminated, truncated))
    env.close()
    return trace


def rollout_single(name, seed, actions):
    """One env stepped alone, following NEXT_STEP by hand: the step after an episode's end is
    a reset (no seed: the next of the sequence) with reward 0."""
    env = ringrl.make(name)
    obs, _ = env.reset(seed=seed)
    trace = [(obs, 0.0, False, False)]
    done = False
    for a in actions:
        if done:
            obs, _ = env.reset()
            trace.append((obs, 0.0, False, False))
            done = False
            continue
        obs, reward, terminated, truncated, _ = env.step(a)
        trace.append((obs, reward, terminated, truncated))
        done = terminated or truncated
    env.close()
    return trace


@pytest.mark.parametrize("name,n,threads", [("kinematic-maze", 3, 2), ("ant-maze", 3, 2), ("point-maze", 2, 1)])
def test_vector_equals_singles_bit_for_bit(name, n, threads):
    if name not in ringrl.env_names() or not ringrl.envs.available(name):
        pytest.skip(f"{name} is not built")
    seed = 11
    probe = ringrl.make_vec(name, num_envs=n)
    actions = random_actions(probe, STEPS, seed=5)
    probe.close()
    vec = rollout_vector(name, n, seed, actions, threads)
    for i in range(n):
        single = rollout_single(name, seed + i, actions[:, i])
        for k, ((vo, vr, vt, vtr), (so, sr, st, s_tr)) in enumerate(zip(vec, single)):
            assert vo[i].tobytes() == so.tobytes(), f"env {i}, step {k}: observations differ"
            assert vr[i] == sr and vt[i] == st and vtr[i] == s_tr, f"env {i}, step {k}"


def test_thread_count_does_not_change_results():
    actions = random_actions(ringrl.make_vec("kinematic-maze", num_envs=4), 60, seed=2)
    one = rollout_vector("kinematic-maze", 4, 3, actions, threads=1)
    two = rollout_vector("kinematic-maze", 4, 3, actions, threads=2)
    for (a, *_), (b, *_) in zip(one, two):
        assert a.tobytes() == b.tobytes()


def test_autoreset_is_next_step():
    env = ringrl.make_vec("kinematic-maze", num_envs=2, threads=1)
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    env.reset(seed=4)
    zero = np.zeros((2, 8), np.float32)
    for _ in range(EPISODE - 1):
        _, _, _, truncated, info = env.step(zero)
        assert not truncated.any()
    obs_end, _, terminated, truncated, info = env.step(zero)
    assert truncated.all() and not terminated.any() and (info["t"] == EPISODE).all()
    # The next step resets both envs, ignores the actions, reports reward 0 and no end.
    push = np.full((2, 8), 0.5, np.float32)
    obs, reward, terminated, truncated, info = env.step(push)
    assert (reward == 0).all() and not terminated.any() and not truncated.any() and (info["t"] == 0).all()
    assert not np.array_equal(obs, obs_end)
    again = ringrl.make_vec("kinematic-maze", num_envs=2, threads=1)
    again.reset(seed=4)
    for _ in range(EPISODE):
        again.step(zero)
    obs_other, *_ = again.step(zero)  # other actions at the reset step: the same reset
    assert obs.tobytes() == obs_other.tobytes()
    # Then stepping resumes: t = 1.
    _, _, _, _, info = env.step(push)
    assert (info["t"] == 1).all()


def test_seed_list_and_unseeded_reset_continue_the_sequence():
    env = ringrl.make_vec("kinematic-maze", num_envs=2, threads=1)
    a, _ = env.reset(seed=[9, 10])
    b, _ = env.reset(seed=9)
    np.testing.assert_array_equal(a, b)
    c, _ = env.reset()  # next episode of each env: differs from the first
    assert not np.array_equal(b, c)
    single = ringrl.make("kinematic-maze")
    single.reset(seed=10)
    d, _ = single.reset()
    assert d.tobytes() == c[1].tobytes()


def test_copy_false_returns_the_preallocated_buffer():
    env = ringrl.make_vec("kinematic-maze", num_envs=2, copy=False)
    obs0, _ = env.reset(seed=1)
    obs1, *_ = env.step(np.ones((2, 8), np.float32))
    assert obs0 is obs1 and obs1.shape == (2, 30) and obs1.dtype == np.float32
    copied = ringrl.make_vec("kinematic-maze", num_envs=2)
    first, _ = copied.reset(seed=1)
    second, *_ = copied.step(np.ones((2, 8), np.float32))
    assert first is not second


def test_close_frees_and_refuses_to_step():
    env = ringrl.make_vec("kinematic-maze", num_envs=2, copy=False)
    obs, _ = env.reset(seed=0)
    env.close()
    assert env.closed and env._core.closed
    with pytest.raises(RuntimeError, match="^step: the env is closed$"):
        env.step(np.zeros((2, 8), np.float32))
    with pytest.raises(RuntimeError, match="^reset: the env is closed$"):
        env.reset(seed=0)
    env.close()  # twice is fine
    assert obs.sum() == obs.sum()  # arrays handed out stay valid after close()


def test_gymnasium_make_vec_entry_point():
    env = gym.make_vec("ringrl/KinematicMaze-v0", num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(env, ringrl.VecMazeEnv)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3, 30)
    env.close()


def test_float64_and_strided_actions_step_like_float32():
    rng = np.random.default_rng(5)
    actions = rng.uniform(-1, 1, size=(4, 2, 8)).astype(np.float32)
    runs = []
    for convert in (lambda a: a, lambda a: a.astype(np.float64), lambda a: np.asfortranarray(a)):
        env = ringrl.make_vec("kinematic-maze", num_envs=2)
        env.reset(seed=9)
        runs.append(np.stack([env.step(convert(a))[0].copy() for a in actions]))
        env.close()
    np.testing.assert_array_equal(runs[1], runs[0])
    np.testing.assert_array_equal(runs[2], runs[0])


def test_bad_actions_raise():
    env = ringrl.make_vec("kinematic-maze", num_envs=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"^actions of shape \(3, 8\): expected \(2, 8\)$"):
        env.step(np.zeros((3, 8), np.float32))
    with pytest.raises(ValueError, match=r"^actions of dtype complex128: expected real numbers"):
        env.step(np.zeros((2, 8), np.complex128))
    bad = np.zeros((2, 8), np.float32)
    bad[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"^actions\[1, 2\] is inf: expected a finite number$"):
        env.step(bad)
    with pytest.raises(ValueError, match="^num_envs 0: expected 1 to"):
        ringrl.make_vec("kinematic-maze", num_envs=0)
