"""Shared fixtures: the `ringrl` binary of the release build (the CLI the package must agree
with) and the repository root. RINGRL_BINARY overrides the binary's path."""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
HIRO_STEPS = 4000  # env steps of the tiny HIRO run


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("RINGRL_BINARY", str(REPO / "build" / "release" / "app" / "ringrl"))
    if not os.access(path, os.X_OK):
        pytest.skip(f"no ringrl binary at {path}: build the release preset first (scripts/build.sh release)")
    return path


def run_cli(cli: str, *args: str, input: str | None = None, check: bool = True, timeout: float = 120):
    """Runs `ringrl ARGS`; returns the CompletedProcess (text)."""
    return subprocess.run([cli, *args], input=input, capture_output=True, text=True, check=check, timeout=timeout)


def _train(cli: str, run_dir, *args: str):
    out = run_cli(cli, "train", *args, "--run-dir", str(run_dir), check=False, timeout=300)
    if out.returncode != 0 and "torch" in (out.stderr + out.stdout).lower() and "not" in out.stderr.lower():
        pytest.skip(f"this ringrl has no training commands: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr
    return run_dir


@pytest.fixture(scope="session")
def hiro_run(cli, tmp_path_factory):
    """A tiny HIRO run (kinematic-maze, hiro_orig, 4000 env steps, 16-unit networks, an
    evaluation every 500 steps: the evaluator answers asynchronously, so a run this short
    records most of them, not all): config.json, metrics.csv, results.jsonl, evals.csv,
    model-rep0.ckpt."""
    return _train(cli, tmp_path_factory.mktemp("hiro") / "run", "hiro", "--env", "kinematic-maze", "--goal", "orig",
                  "--actors", "1", "--max-env-steps", str(HIRO_STEPS), "--set", "hidden=16", "--set", "eval_every=500",
                  "--set", "eval_episodes=2", "--set", "metrics_every_s=0.05", "--set", "batch_size=32")


@pytest.fixture(scope="session")
def pqt_run(cli, tmp_path_factory):
    """A tiny PQT run (reverse, 2000 programs, one repetition)."""
    return _train(cli, tmp_path_factory.mktemp("pqt") / "run", "pqt", "--task", "reverse", "--actors", "1",
                  "--max-npe", "2000", "--repetitions", "1", "--set", "metrics_every_s=0.05")
