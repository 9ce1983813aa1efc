"""Run directories (docs/run-directory.md) from Python.

    run = ringrl.runs.open("runs/hiro-km")
    run.config            # config.json: the resolved config, a dict
    run.metrics           # metrics.csv as NumPy columns: {"step": array, "wall_s": array, ...}
    run.results           # results.jsonl: one dict per finished repetition
    run.evals             # evals.csv (HIRO) as NumPy columns, or None
    run.checkpoints       # checkpoint.bin and model-rep<R>.ckpt paths
    run.dataframe("metrics")   # the same columns as a pandas DataFrame (pandas installed)

Readers follow the writers' durability rules: a torn last CSV row or JSON line (a crash in
the middle of a write) is left out; for evals.csv the last row of each (repetition, env_steps)
counts, as a resumed run may repeat an evaluation.
"""

from __future__ import annotations

import builtins
import csv
import json
import os
import pathlib
import re
from typing import Any

import numpy as np

from ringrl import _ringrl

_FILES = _ringrl.run_files  # the run directory's file names, as the C++ side writes them
_MODEL_FILE = re.compile(
    "^" + re.escape(_FILES["final_model_prefix"]) + r"(\d+)" + re.escape(_FILES["final_model_suffix"]) + "$")


class Columns(dict):
    """Named NumPy columns of a CSV file, in file order (a dict name -> float64 array)."""

    def __repr__(self) -> str:
        rows = len(next(iter(self.values()))) if self else 0
        return f"Columns({rows} rows: {', '.join(self)})"


def read_csv(path: str | os.PathLike) -> Columns:
    """A numeric CSV file with a header line as Columns; a row with another field count than the
    header (a torn last row) is left out; an empty field reads as NaN."""
    with builtins.open(path, newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"{path}: empty file, expected a header line") from None
        rows = [r for r in reader if len(r) == len(header)]
    data = np.array([[float(v) if v != "" else np.nan for v in r] for r in rows], dtype=np.float64)
    data = data.reshape(len(rows), len(header))
    return Columns((name, data[:, k].copy()) for k, name in enumerate(header))


def read_jsonl(path: str | os.PathLike) -> list[dict[str, Any]]:
    """A JSON-lines file; a torn last line is left out, any other bad line raises ValueError."""
    out = []
    with builtins.open(path) as f:
        lines = f.read().split("\n")
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            if k == len(lines) - 1:  # torn by a crash: the writer repairs it on the next append
                break
            raise ValueError(f"{path}: line {k + 1} is not JSON: {e.msg}") from None
    return out


def _last_per_key(cols: Columns, keys: tuple[str, ...]) -> Columns:
    if not cols or any(k not in cols for k in keys):
        return cols
    last: dict[tuple, int] = {}
    for i, key in enumerate(zip(*(cols[k] for k in keys))):
        last[key] = i
    keep = np.array(sorted(last.values()), dtype=np.int64)
    return Columns((name, a[keep]) for name, a in cols.items())


class Run:
    """One run directory (see the module docstring). Files are read when first asked for."""

    def __init__(self, path: str | os.PathLike):
        self.path = pathlib.Path(path)
        if not self.path.is_dir():
            raise FileNotFoundError(f"run directory '{self.path}' does not exist")
        if not (self.path / _FILES["config"]).is_file():
            raise ValueError(f"'{self.path}' is not a run directory: it has no {_FILES['config']}")
        self._cache: dict[str, Any] = {}

    def _get(self, key, load):
        if key not in self._cache:
            self._cache[key] = load()
        return self._cache[key]

    @property
    def config(self) -> dict[str, Any]:
        """config.json: the fully resolved config."""
        return self._get("config", lambda: json.loads((self.path / _FILES["config"]).read_text()))

    @property
    def metrics(self) -> Columns:
        """metrics.csv as NumPy columns (empty Columns when the file is absent)."""
        f = self.path / _FILES["metrics"]
        return self._get("metrics", lambda: read_csv(f) if f.exists() else Columns())

    @property
    def results(self) -> list[dict[str, Any]]:
        """results.jsonl: one object per finished repetition."""
        f = self.path / _FILES["results"]
        return self._get("results", lambda: read_jsonl(f) if f.exists() else [])

    @property
    def solutions(self) -> list[dict[str, Any]]:
        """solutions.txt (PQT): {"code", "reward", "npe"} per logged program."""
        f = self.path / _FILES["solutions"]
        return self._get("solutions", lambda: read_jsonl(f) if f.exists() else [])

    @property
    def evals(self) -> Columns | None:
        """evals.csv (HIRO) as NumPy columns, the last row of each (repetition, env_steps)."""
        f = self.path / _FILES["evals"]
        return self._get(
            "evals", lambda: _last_per_key(read_csv(f), ("repetition", "env_steps")) if f.exists() else None)

    @property
    def checkpoints(self) -> list[pathlib.Path]:
        """checkpoint.bin (if present), then model-rep<R>.ckpt by R."""
        models = sorted((int(m.group(1)), p) for p in self.path.iterdir() if (m := _MODEL_FILE.match(p.name)))
        first = [self.path / _FILES["checkpoint"]] if (self.path / _FILES["checkpoint"]).exists() else []
        return first + [p for _, p in models]

    def dataframe(self, name: str = "metrics"):
        """metrics, evals or results as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Run.dataframe needs pandas: pip install pandas") from None
        if name == "results":
            return pd.DataFrame(self.results)
        if name not in ("metrics", "evals"):
            raise ValueError(f"dataframe {name}: expected metrics, evals or results")
        cols = getattr(self, name)
        return pd.DataFrame(dict(cols) if cols is not None else {})

    def __repr__(self) -> str:
        return f"Run('{self.path}')"


def open(path: str | os.PathLike) -> Run:  # noqa: A001 (ringrl.runs.open, as the issue names it)
    """The run directory at ``path``."""
    return Run(path)
