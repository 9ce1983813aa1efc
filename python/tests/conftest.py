"""Shared fixtures: the `ringrl` binary of the release build (the CLI the package must agree
with) and the repository root. RINGRL_BINARY overrides the binary's path."""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


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
