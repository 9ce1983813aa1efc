"""The two example scripts run on tiny trained runs."""

import json
import subprocess
import sys

from conftest import REPO


def run_example(name, *args):
    return subprocess.run([sys.executable, str(REPO / "examples" / name), *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=True).stdout


def test_hiro_policy_example(hiro_run):
    out = run_example("hiro_policy.py", hiro_run / "model-rep0.ckpt", "--episodes", "2", "--steps", "50")
    assert "kinematic-maze (hiro_orig): " in out and out.count("final distance") == 2


def test_pqt_sample_example(pqt_run):
    out = run_example("pqt_sample.py", pqt_run / "model-rep0.ckpt", "--programs", "200")
    summary = json.loads(out.splitlines()[-1])
    assert summary["programs"] == 200
    assert "scores" in out and "as results.jsonl records" in out
