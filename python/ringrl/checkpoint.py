"""Checkpoint files (docs/checkpoints.md) from Python.

    ck = ringrl.checkpoint.load("runs/r/model-rep0.ckpt")
    ck.algorithm, ck.format_version, ck.sections   # what `ringrl checkpoint show` lists
    ck.run                                          # the driver's run metadata (dict)
    ck.weights["low.fc1.weight"]                    # named float32 NumPy arrays

load() verifies the whole file first, as `ringrl checkpoint show` does (magic, format version,
end record, checksum, section table); a damaged file raises ringrl.CorruptDataError (a
RuntimeError) with the CLI's one-line message, a missing one FileNotFoundError.

Weights, by algorithm, under the names of their blob layouts:
  pqt:  embedding [vocab, emb], lstm<l>/kernel [in + h, 4h], lstm<l>/bias [4h], output [h, vocab]
        (common/pqt/policy_layout.h; the shape comes from the run's config.json next to the file,
        else the defaults, and must match the fingerprint stored in the file).
  hiro: the acting networks as common/hiro/actor_blob.h names them, meta.* (high level) and
        low.*: fc1.weight [h1, in], fc1.bias [h1], fc2.weight, fc2.bias, out.weight, out.bias,
        input_mask [in], and mid / half_range [out] (the level's output box, made in C++ from
        the run's env, targets and goal space as the learner made it) when the run names them; and
        the critics and target networks as <level>.critic1.*, <level>.actor_target.*, ...
"""

from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ringrl import _ringrl



@dataclass
class Checkpoint:
    path: pathlib.Path
    algorithm: str
    format_version: int
    sections: dict[str, int]  # section name -> payload bytes, in file order
    run: dict[str, Any] | None
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # pqt: version; hiro: shapes, env_steps


def _config_next_to(path: pathlib.Path) -> dict[str, Any] | None:
    f = path.parent / _ringrl.run_files["config"]
    return json.loads(f.read_text()) if f.is_file() else None


def load(path: str | os.PathLike, *, weights: bool = True) -> Checkpoint:
    """Verifies and reads the checkpoint at ``path`` (see the module docstring). With
    ``weights=False`` only the verification and the section list."""
    p = pathlib.Path(path)
    info = _ringrl.checkpoint_info(str(p))
    run = json.loads(info["run"]) if "run" in info else None
    ck = Checkpoint(p, info["algorithm"], info["format_version"], dict(info["sections"]), run)
    if not weights or ck.algorithm not in ("pqt", "hiro"):
        return ck
    config = _config_next_to(p)
    lstm = (config or {}).get("policy_lstm_sizes")  # absent: the policy's defaults, in C++
    emb = (config or {}).get("obs_embedding_size")
    out = _ringrl.checkpoint_weights(str(p), None if lstm is None else list(lstm), None if emb is None else int(emb))
    ck.weights = dict(out.pop("weights"))  # hiro: <level>.mid / half_range from the run's env, made in C++
    ck.extra = dict(out)
    return ck


def show(path: str | os.PathLike) -> dict[str, Any]:
    """What `ringrl checkpoint show --json` prints for a file (without the PQT model load)."""
    ck = load(path, weights=False)
    out: dict[str, Any] = {"file": str(path), "algorithm": ck.algorithm, "format_version": ck.format_version,
                           "sections": ck.sections}
    if ck.run is not None:
        out["run"] = ck.run
    return out
