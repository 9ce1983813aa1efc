"""ringrl.checkpoint against `ringrl checkpoint show`: the same verification (a damaged,
truncated, missing or non-file path raises the CLI's one-line message), the same sections, and
the networks under their blob layouts' names and shapes."""

import json
import shutil

import numpy as np
import pytest

import ringrl
from conftest import HIRO_STEPS, run_cli

ACTOR_TENSORS = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "out.weight", "out.bias", "input_mask", "mid",
                 "half_range"]  # common/hiro/actor_blob.h, per level


def show(cli, path):
    return json.loads(run_cli(cli, "checkpoint", "show", "--json", str(path)).stdout)


def cli_error(cli, path):
    out = run_cli(cli, "checkpoint", "show", str(path), check=False)
    assert out.returncode != 0
    return out.stderr.strip().removeprefix("ringrl: error: ")


def test_hiro_checkpoint_matches_show(cli, hiro_run):
    path = hiro_run / "model-rep0.ckpt"
    shown = show(cli, path)
    ck = ringrl.checkpoint.load(path)
    assert ck.algorithm == shown["algorithm"] == "hiro"
    assert ck.format_version == shown["format_version"]
    assert ck.sections == shown["sections"]  # the CLI prints them sorted by name, ck in file order
    assert ck.run == shown["run"]
    assert ringrl.checkpoint.show(path) == {"file": str(path), **{k: shown[k] for k in shown if k != "file"}}


def test_hiro_weights_have_the_actor_blob_names_and_shapes(hiro_run):
    ck = ringrl.checkpoint.load(hiro_run / "model-rep0.ckpt")
    shapes = ck.extra["shapes"]
    for level in ("meta", "low"):
        for name in ACTOR_TENSORS:
            assert f"{level}.{name}" in ck.weights, f"{level}.{name}"
        s = shapes[level]
        w = ck.weights
        assert w[f"{level}.fc1.weight"].shape == (s["hidden1"], s["input_dim"]) == (16, s["input_dim"])
        assert w[f"{level}.out.weight"].shape == (s["action_dim"], s["hidden2"])
        assert w[f"{level}.critic1.fc1.weight"].shape == (s["hidden1"], s["input_dim"] + s["action_dim"])
        assert w[f"{level}.critic2_target.out.weight"].shape == (1, s["hidden2"])
        assert all(a.dtype == np.float32 for a in w.values())
    # hiro_orig: the meta level outputs the 15-dim goal; the low level masks x, y (ZERO_OBS).
    assert shapes["meta"]["action_dim"] == 15 and shapes["low"]["masked_inputs"] == 2
    np.testing.assert_array_equal(ck.weights["low.input_mask"][:3], [0, 0, 1])
    gs = ringrl.hiro.goal_space("hiro_orig", "kinematic-maze")
    np.testing.assert_array_equal(ck.weights["meta.mid"], (gs.high + gs.low) / 2)
    assert ck.extra["env_steps"] == HIRO_STEPS and ck.extra["low_replay_rows"] == HIRO_STEPS


def test_pqt_weights_have_the_policy_layout_names(cli, pqt_run):
    path = pqt_run / "model-rep0.ckpt"
    shown = show(cli, path)
    ck = ringrl.checkpoint.load(path)
    assert ck.sections == shown["sections"]  # the CLI prints them sorted by name, ck in file order
    assert list(ck.weights) == ["embedding", "lstm0/kernel", "lstm0/bias", "lstm1/kernel", "lstm1/bias", "output"]
    assert ck.weights["embedding"].shape == (9, 10) and ck.weights["lstm0/kernel"].shape == (45, 140)
    assert sum(a.size for a in ck.weights.values()) == shown["model"]["parameters"]
    assert ck.extra["version"] == shown["model"]["version"]


def test_damaged_files_raise_the_cli_message(cli, hiro_run, tmp_path):
    good = hiro_run / "model-rep0.ckpt"
    flipped = tmp_path / "flipped.ckpt"
    shutil.copy(good, flipped)
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0x40
    flipped.write_bytes(bytes(data))
    cut = tmp_path / "cut.ckpt"
    cut.write_bytes(good.read_bytes()[:4096])
    for path, words in ((flipped, "checksum mismatch"), (cut, "truncated")):
        with pytest.raises(ringrl.CorruptDataError) as e:
            ringrl.checkpoint.load(path)
        assert isinstance(e.value, RuntimeError)
        assert words in str(e.value)
        assert str(e.value) == cli_error(cli, path)
    with pytest.raises(ValueError) as e:
        ringrl.checkpoint.load(tmp_path)
    assert str(e.value) == cli_error(cli, tmp_path)
    with pytest.raises(FileNotFoundError):
        ringrl.checkpoint.load(tmp_path / "none.ckpt")


def export_policy(cli, hiro_run, out):
    res = run_cli(cli, "checkpoint", "export", "--policy", str(hiro_run / "model-rep0.ckpt"), "--out", str(out))
    assert "exported" in res.stdout
    return out


def test_policy_export_acts_as_the_checkpoints_networks(cli, hiro_run, tmp_path):
    path = export_policy(cli, hiro_run, tmp_path / "km.policy")
    ck = ringrl.checkpoint.load(hiro_run / "model-rep0.ckpt")
    policy = ringrl.hiro.load_policy(path)
    assert policy.env == "kinematic-maze" and policy.goal_space.kind == "hiro_orig"
    assert policy.env_steps == ck.extra["env_steps"]
    assert path.stat().st_size < ck.sections["hiro"] / 4  # networks only
    rng = np.random.default_rng(3)
    for level in ("meta", "low"):
        x = rng.normal(0, 3, (100, ck.weights[f"{level}.fc1.weight"].shape[1])).astype(np.float32)
        np.testing.assert_allclose(ringrl.hiro.actor(policy.weights, level, x), ringrl.hiro.actor(ck.weights, level, x),
                                   rtol=0, atol=0)
    # The callable: a goal from the meta level at t = 0, then the goal transition.
    env = ringrl.make("kinematic-maze", task="multi")
    obs, info = env.reset(seed=1)
    target = info["target"]
    a = policy(obs, target)
    g0 = policy.goal_space.clip(ringrl.hiro.actor(ck.weights, "meta", np.concatenate([obs, target])))
    # The policy is the C++ HiroPolicy (Eigen); the reference here is NumPy: float rounding apart.
    np.testing.assert_allclose(policy.goal, g0, atol=1e-5)
    np.testing.assert_allclose(a, np.clip(ringrl.hiro.actor(ck.weights, "low", np.concatenate([obs, g0])),
                                          env.action_space.low, env.action_space.high), atol=1e-5)
    obs2, *_ = env.step(a)
    policy(obs2, target)
    np.testing.assert_allclose(policy.goal, ringrl.hiro.goal_transition(obs, g0, obs2), atol=1e-5)
    with pytest.raises(ValueError, match="observation of 3 floats"):
        policy(np.zeros(3), target)
    policy.reset()
    np.testing.assert_allclose(policy(obs.astype(np.float64), target), a, atol=0)  # any real dtype; a new episode


def test_a_damaged_policy_export_is_refused(cli, hiro_run, tmp_path):
    path = export_policy(cli, hiro_run, tmp_path / "km.policy")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(ringrl.CorruptDataError) as e:
        ringrl.hiro.load_policy(path)
    assert "checksum mismatch" in str(e.value)
    res = run_cli(cli, "checkpoint", "show", str(path), check=False)
    assert res.returncode == 1 and res.stderr.strip().count("\n") == 0 and "checksum mismatch" in res.stderr
