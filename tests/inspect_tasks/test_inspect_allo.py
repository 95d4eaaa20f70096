"""``inspect eval econbench/allobench`` against a loopback model: its pooled metrics equal
``econbench allo run`` and ``econbench report`` on the same seeds and decisions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog
from tests.fakes.openai_server import FakeOpenAIServer
from tests.inspect_tasks.conftest import ECONBENCH_MODEL, run_inspect
from typer.testing import CliRunner

from econbench.cli import app
from econbench.inspect_tasks.allo import allobench
from econbench.inspect_tasks.options import TaskArgumentError
from econbench.runs.allo.report import allo_cells, allo_episodes
from econbench.runs.frames import load_run
from econbench.runs.layout import find_runs

SEEDS = "2000-2002"


def allo_run(out: Path, framing: str, seeds: str, *extra: str) -> dict[str, Any]:
    """``econbench allo run`` with the fake model; the cell's summary."""
    args = ["allo", "run", "--framing", framing, "--actor", ECONBENCH_MODEL, "--seeds", seeds]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet", *extra])
    assert result.exit_code == 0, result.output
    return json.loads((out / "summary.json").read_text())


def metric(log: EvalLog, name: str) -> float:
    assert log.results is not None
    return log.results.scores[0].metrics[name].value


def run_dirs(log: EvalLog) -> list[Path]:
    assert log.samples is not None
    return [Path(s.scores["episode"].metadata["run_dir"]) for s in log.samples]


@pytest.mark.parametrize(("framing", "cost"), [("r0", 0), ("r1", 0), ("r2", 2)])
def test_pooled_metrics_match_allo_run_and_the_report(
    fake_openai: FakeOpenAIServer, tmp_path: Path, framing: str, cost: int
) -> None:
    log = run_inspect(
        "econbench/allobench",
        tmp_path / "logs",
        task_args={"framing": framing, "seeds": SEEDS, "cost": cost},
    )
    assert log.status == "success"
    expected = allo_run(tmp_path / "cell", framing, SEEDS, "--cost", str(cost))
    assert expected["episodes"] == 3 and expected["score"] is not None
    assert metric(log, "pooled_score") == pytest.approx(expected["score"], abs=1e-12)
    assert metric(log, "first_sight_rate") == pytest.approx(expected["first_sight_rate"], abs=1e-12)
    cells = allo_cells(allo_episodes([load_run(r.path) for r in find_runs(run_dirs(log))])[0])
    assert len(cells) == 1 and cells.loc[0, "episodes"] == 3
    assert cells.loc[0, "policy"] == "scripted/inspect/openai/fake-model"
    assert cells.loc[0, "score"] == pytest.approx(metric(log, "pooled_score"), abs=1e-12)
    assert cells.loc[0, "first_sight_rate"] == pytest.approx(
        metric(log, "first_sight_rate"), abs=1e-12
    )


def test_every_call_is_in_the_log_and_r3_plays_in_the_sandbox(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    log = run_inspect(
        "econbench/allobench", tmp_path / "logs", task_args={"framing": "r3", "seeds": [2000]}
    )
    assert log.status == "success", log.error
    expected = allo_run(tmp_path / "cell", "r3", "2000")
    assert metric(log, "pooled_score") == pytest.approx(expected["score"], abs=1e-12)
    [sample] = log.samples or []
    record = json.loads((run_dirs(log)[0] / "episodes.jsonl").read_text())
    calls = [c for t in record["turns"] for r in t.get("replies", []) for c in r["tool_calls"]]
    models = [e for e in sample.events if e.event == "model"]
    tools = [e for e in sample.events if e.event == "tool"]
    replies = sum(len(t.get("replies", [])) for t in record["turns"])
    assert len(models) == replies > 0
    assert [t.id for t in tools] == [c["call_id"] for c in calls]
    assert {t.function for t in tools} == {"write_script", "submit_answer"}


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"framing": "r9"}, "unknown framing 'r9'"),
        ({"seeds": 30}, "how many of the 24 evaluation seeds"),
        ({"budget": 0}, "budget: expected a whole number"),
        ({"cost": "free"}, "cost: expected a number"),
        ({"condition": "frontiers"}, "frontier"),
    ],
)
def test_bad_task_arguments_are_one_line_errors(arguments: dict[str, Any], words: str) -> None:
    with pytest.raises(TaskArgumentError) as caught:
        allobench(**arguments)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)
