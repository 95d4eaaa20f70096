"""AlloBench cells resume after their last complete episode and end byte-identical."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.allo.episodes import runner as runner_module
from econbench.allo.episodes.runner import CellSpec
from econbench.cli import app
from econbench.runs.allo.cell import CellResumeError, run_cell
from econbench.runs.resume import ResumeError, resume_run, run_status

SPEC = CellSpec(framing="r1", policy="wait:2", seeds=tuple(range(2000, 2008)))
cli = CliRunner()


class Crash(BaseException):
    """Stands for the process dying mid-episode."""


def crash_in_episode(monkeypatch, n: int) -> None:
    """Die while playing the n-th episode, after a torn half line reached the file."""
    original = runner_module.play_episode
    count = {"n": 0}

    def play_episode(*args, **kwargs):
        count["n"] += 1
        if count["n"] == n:
            raise Crash
        return original(*args, **kwargs)

    monkeypatch.setattr(runner_module, "play_episode", play_episode)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("allo") / "cell"
    run_cell(SPEC, out)
    return out


@pytest.mark.parametrize("n", [1, 4, 8])
def test_a_cell_killed_mid_episode_resumes_identically(tmp_path, monkeypatch, reference, n):
    out = tmp_path / "cell"
    with monkeypatch.context() as m:
        crash_in_episode(m, n)
        with pytest.raises(Crash):
            run_cell(SPEC, out)
    with (out / "episodes.jsonl").open("a") as fh:
        fh.write('{"seed": 20')  # the torn line of the episode in flight
    assert run_status(out) == "interrupted"
    progress = json.loads((out / "progress.json").read_text())
    assert progress == {
        "benchmark": "allo",
        "status": "running",
        "done": n - 1,
        "total": 8,
        "unit": "episode",
        "cost_usd": 0.0,
    }
    summary = resume_run(out)
    assert summary["status"] == "completed"
    for name in ("episodes.jsonl", "summary.json", "config.json", "progress.json"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


def test_a_changed_cell_is_refused_unless_forced(tmp_path, monkeypatch):
    out = tmp_path / "cell"
    with monkeypatch.context() as m:
        crash_in_episode(m, 3)
        with pytest.raises(Crash):
            run_cell(SPEC, out)
    other = replace(SPEC, cost=10.0)
    with pytest.raises(CellResumeError) as err:
        run_cell(other, out, resume=True)
    assert "cost: 0.0 → 10.0" in str(err.value)
    assert "--force" in str(err.value)
    with pytest.raises(CellResumeError, match="not the first seeds"):
        run_cell(replace(SPEC, seeds=(3000, 3001, 3002)), out, resume=True, force=True)


def test_cli_resume_of_a_cell_and_of_a_completed_one(tmp_path, monkeypatch, reference):
    out = tmp_path / "cell"
    with monkeypatch.context() as m:
        crash_in_episode(m, 5)
        with pytest.raises(Crash):
            run_cell(SPEC, out)
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "was interrupted" in result.output
    assert (out / "episodes.jsonl").read_bytes() == (reference / "episodes.jsonl").read_bytes()
    with pytest.raises(ResumeError, match="completed"):
        resume_run(out)
    result = cli.invoke(app, ["resume", str(out)])
    assert result.exit_code == 2 and "completed run" in result.output
