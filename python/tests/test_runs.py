"""ringrl.runs: a run directory's files as the writers left them (docs/run-directory.md),
and the readers' rules for torn last rows and repeated evaluations."""

import json

import numpy as np
import pytest

import ringrl
from conftest import HIRO_STEPS


def test_hiro_run(hiro_run):
    run = ringrl.runs.open(hiro_run)
    assert run.config == json.loads((hiro_run / "config.json").read_text())
    header = (hiro_run / "metrics.csv").read_text().splitlines()[0].split(",")
    assert list(run.metrics) == header
    assert len(run.metrics["step"]) >= 1 and run.metrics["env_steps"].dtype == np.float64
    assert len(run.results) == 1 and run.results[0]["env_steps"] == HIRO_STEPS
    assert run.evals is not None and list(run.evals)[:2] == ["repetition", "env_steps"]
    assert len(run.evals["env_steps"]) >= 1
    assert run.checkpoints[-1].name == "model-rep0.ckpt"


def test_pqt_run(pqt_run):
    run = ringrl.runs.open(pqt_run)
    assert run.config["task"] == "reverse"
    assert run.results[0]["npe"] >= 2000
    assert run.evals is None


def test_torn_rows_and_repeated_evaluations(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "metrics.csv").write_text("step,wall_s,x\n1,0.5,2\n2,1.0,\n3,1.5")  # torn last row
    (tmp_path / "results.jsonl").write_text('{"a": 1}\n{"a": 2}\n{"a": ')  # torn last line
    (tmp_path / "evals.csv").write_text(
        "repetition,env_steps,success\n0,100,0.1\n0,200,0.2\n0,200,0.3\n1,100,0.5\n")  # 200 repeated on resume
    run = ringrl.runs.open(tmp_path)
    np.testing.assert_array_equal(run.metrics["step"], [1, 2])
    assert np.isnan(run.metrics["x"][1])
    assert run.results == [{"a": 1}, {"a": 2}]
    np.testing.assert_array_equal(run.evals["success"], [0.1, 0.3, 0.5])
    (tmp_path / "results.jsonl").write_text('{"a": 1}\nnot json\n{"a": 2}\n')
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        ringrl.runs.open(tmp_path).results


def test_not_a_run_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        ringrl.runs.open(tmp_path / "none")
    with pytest.raises(ValueError, match="no config.json"):
        ringrl.runs.open(tmp_path)


def test_dataframe_needs_pandas(hiro_run):
    run = ringrl.runs.open(hiro_run)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            run.dataframe()
        return
    df = run.dataframe("metrics")
    assert list(df.columns) == list(run.metrics)
