"""The BF machine and scorer (`ringrl bf run|score|tasks`) from Python (docs/python.md).

    ringrl.bf.run("+[>,.]", [1, 2, 3])          # {"output": ..., "success": ..., ...}
    s = ringrl.bf.score(programs, "reverse")     # s.reward, s.correct, s.reason: NumPy arrays
    ringrl.bf.tasks()                            # [{"name", "base", "num_cases", ...}, ...]

score() runs in C++ threads with the GIL released; its numbers are those of `ringrl bf score`
(every character of a program counts, as there: characters outside the eight BF commands are
no-ops, not errors).
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

import numpy as np

from ringrl import _ringrl

REASONS = tuple(_ringrl.bf_reason_names())  # reason code -> "correct", "wrong", ...
_DEFAULT_BASE = 256
_DEFAULT_MAX_STEPS = 5000


class Scores(NamedTuple):
    """Results of score(): float64 rewards, bool correctness flags and uint8 reason codes
    (REASONS[code] is the name `ringrl bf score` prints)."""

    reward: np.ndarray
    correct: np.ndarray
    reason: np.ndarray

    def reason_names(self) -> np.ndarray:
        return np.asarray(REASONS, dtype=object)[self.reason]


def run(code: str, input: Iterable[int] = (), *, base: int = _DEFAULT_BASE, max_steps: int | None = _DEFAULT_MAX_STEPS,
        require_correct_syntax: bool = False) -> dict:
    """Runs one program (`ringrl bf run`): output, success, failure_reason, steps, memory."""
    if not isinstance(code, str):
        raise TypeError(f"bf: code must be a str, got {type(code).__name__}")
    return _ringrl.bf_run(code, [int(v) for v in input], int(base), max_steps, bool(require_correct_syntax))


def _programs(programs) -> list[str]:
    if isinstance(programs, str):
        raise TypeError("bf: programs must be a list or array of programs, got one str (wrap it in a list)")
    if isinstance(programs, np.ndarray) and programs.dtype.kind == "S":
        return [p.decode("latin-1") for p in programs.tolist()]
    out = programs.tolist() if isinstance(programs, np.ndarray) else list(programs)
    for k, p in enumerate(out):
        if not isinstance(p, str):
            raise TypeError(f"bf: program {k} is a {type(p).__name__}: expected str")
    return out


def score(programs, task: str, *, variant: str = "paper", threads: int = 0) -> Scores:
    """Scores every program on ``task`` (`ringrl bf score --task TASK --variant VARIANT`).
    ``threads`` = 0: every core."""
    reward, correct, reason = _ringrl.bf_score(_programs(programs), task, variant, int(threads))
    return Scores(reward, correct, reason)


def tasks() -> list[dict]:
    """Every task (`ringrl bf tasks`): name, base, num_cases, description, paper."""
    return _ringrl.bf_tasks()


def cases(task: str) -> list[dict]:
    """The test cases of ``task`` in scoring order (`ringrl bf cases`): input, output."""
    return _ringrl.bf_task_cases(task)
