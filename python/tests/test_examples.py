"""The two example scripts run on tiny trained runs."""

import json
import subprocess
import sys

from conftest import REPO, run_cli


def run_example(name, *args):
    return subprocess.run([sys.executable, str(REPO / "examples" / name), *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=True).stdout


def test_hiro_policy_example(cli, hiro_run, tmp_path):
    policy = tmp_path / "km.policy"
    run_cli(cli, "checkpoint", "export", "--policy", str(hiro_run / "model-rep0.ckpt"), "--out", str(policy))
    out = run_example("hiro_policy.py", policy, "--episodes", "2", "--steps", "50")
    assert "kinematic-maze (hiro_orig): " in out and out.count("final distance") == 2


def test_pqt_sample_example(pqt_run):
    out = run_example("pqt_sample.py", pqt_run / "model-rep0.ckpt", "--programs", "200")
    summary = json.loads(out.splitlines()[-1])
    assert summary["programs"] == 200
    assert "scores" in out and "as results.jsonl records" in out
