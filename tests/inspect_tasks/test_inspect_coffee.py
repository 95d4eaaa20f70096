"""``inspect eval econbench/coffeebench`` against a loopback model: the same scores as
``econbench coffee run`` on the same seeds and decisions, every call in the ``.eval`` log, the
run directory kept beside it, and Inspect's limits and retries continuing the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval_retry
from inspect_ai.log import EvalLog, EvalSample
from tests.fakes.common import Fault
from tests.fakes.openai_server import FakeOpenAIServer
from tests.inspect_tasks.conftest import ECONBENCH_MODEL, run_inspect
from typer.testing import CliRunner

from econbench.cli import app
from econbench.inspect_tasks.coffee import coffeebench
from econbench.inspect_tasks.options import TaskArgumentError
from econbench.runs.frames import load_run

DAYS = 3
SEEDS = [1, 2]


def coffee_run(out: Path, seed: int, *extra: str) -> dict[str, Any]:
    """``econbench coffee run`` with the fake model playing roaster_A; its summary."""
    args = ["coffee", "run", "--days", str(DAYS), "--seed", str(seed), "--out", str(out)]
    args += ["--actor", f"roaster_A={ECONBENCH_MODEL}", "--quiet", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "summary.json").read_text())


def sample_of(log: EvalLog, seed: int) -> EvalSample:
    assert log.samples is not None
    return next(s for s in log.samples if s.id == seed)


def events_of(sample: EvalSample, kind: str) -> list[Any]:
    return [e for e in sample.events if e.event == kind]


def test_scores_match_coffee_run_and_every_call_is_logged(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    log = run_inspect(
        "econbench/coffeebench", tmp_path / "logs", task_args={"days": DAYS, "seeds": SEEDS}
    )
    assert log.status == "success"
    for seed in SEEDS:
        expected = coffee_run(tmp_path / f"coffee-{seed}", seed)["firms"]["roaster_A"]
        sample = sample_of(log, seed)
        score = sample.scores["net_income"]
        assert score.value == expected["net_income"]
        for field in ("revenue", "idle_days", "messages_sent", "closing_writedown"):
            assert score.metadata[field] == expected[field]
        assert expected["messages_sent"] > 0  # the script's messages went out both ways
        assert len(events_of(sample, "model")) == expected["llm_calls"]
        tools = events_of(sample, "tool")
        assert len(tools) == expected["tool_calls"]
        assert [t.function for t in tools[:4]] == [name for name, _ in _script()]
        run_dir = Path(score.metadata["run_dir"])
        assert run_dir.is_relative_to(tmp_path / "logs" / "econbench" / "coffeebench")
        frames = load_run(run_dir)  # what `econbench report` and `view` read
        assert frames.config["agents"]["roaster_A"] == "scripted/inspect/openai/fake-model"
    metrics = log.results.scores[0].metrics  # type: ignore[union-attr]
    mean = sum(sample_of(log, s).scores["net_income"].value for s in SEEDS) / len(SEEDS)
    assert metrics["mean"].value == pytest.approx(mean)


def _script() -> list[tuple[str, dict[str, Any]]]:
    from tests.inspect_tasks.conftest import COFFEE_SCRIPT

    return COFFEE_SCRIPT


def test_the_inspect_command_finds_the_task_by_its_entry_point(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """The command line, as a user runs it: -T values parsed, the log and runs written."""
    command = [
        str(Path(sys.executable).with_name("inspect")),
        "eval",
        "econbench/coffeebench",
        "--model",
        "openai/fake-model",
        "-T",
        "days=2",
        "-T",
        "seeds=1",
        "--log-dir",
        str(tmp_path / "logs"),
        "--display",
        "none",
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((tmp_path / "logs").glob("*coffeebench*.eval"))
    summaries = list((tmp_path / "logs" / "econbench").rglob("summary.json"))
    assert len(summaries) == 1
    assert json.loads(summaries[0].read_text())["days_run"] == 2


def test_background_model_role_plays_the_other_firms(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    log = run_inspect(
        "econbench/coffeebench",
        tmp_path / "logs",
        task_args={"days": 2, "seeds": 1},
        model_roles={"background": "openai/fake-model"},
    )
    sample = sample_of(log, 1)
    run_dir = Path(sample.scores["net_income"].metadata["run_dir"])
    agents = json.loads((run_dir / "config.json").read_text())["agents"]
    assert agents["roaster_A"] == "scripted/inspect/openai/fake-model"
    assert agents["farmer_B"] == "scripted/inspect-background/openai/fake-model"
    expected = coffee_run(
        tmp_path / "coffee", 1, "--days", "2", "--actor", f"default={ECONBENCH_MODEL}"
    )
    assert sample.scores["net_income"].value == expected["firms"]["roaster_A"]["net_income"]
    calls = sum(row["llm_calls"] for row in expected["firms"].values())
    assert len(events_of(sample, "model")) == calls


def fail_once(server: FakeOpenAIServer, after: int) -> None:
    """The request ``after`` requests from now fails with a 400, which Inspect does not
    retry: the sample fails there."""
    fail_at = len(server.brain_requests) + after - 1
    script = server.brain

    def failing(request: Any) -> Any:
        if len(server.brain_requests) == fail_at:
            server.faults.append(Fault("status", status=400, message="bad request"))
        return script(request)

    server.brain = failing


def test_an_errored_sample_continues_from_its_checkpoint_on_eval_retry(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """A provider error mid-run fails the sample; `eval_retry` (a new eval) continues the same
    run from its checkpoint (fewer calls than a whole run) to the uninterrupted score."""
    expected = coffee_run(tmp_path / "coffee", 1)["firms"]["roaster_A"]
    fail_once(fake_openai, 7)
    first = run_inspect(
        "econbench/coffeebench", tmp_path / "logs", task_args={"days": DAYS, "seeds": 1}
    )
    assert first.status == "error"
    stopped = list((tmp_path / "logs" / "econbench").rglob("summary.json"))
    assert [json.loads(p.read_text())["status"] for p in stopped] == ["stopped"]
    [second] = eval_retry(first, log_dir=str(tmp_path / "logs"), display="none")
    assert second.status == "success"
    sample = sample_of(second, 1)
    assert sample.scores["net_income"].value == expected["net_income"]
    assert Path(sample.scores["net_income"].metadata["run_dir"]) == stopped[0].parent
    assert 0 < len(events_of(sample, "model")) < expected["llm_calls"]


def test_retry_on_error_continues_the_run_within_the_eval(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    expected = coffee_run(tmp_path / "coffee", 1)["firms"]["roaster_A"]
    fail_once(fake_openai, 7)
    log = run_inspect(
        "econbench/coffeebench",
        tmp_path / "logs",
        task_args={"days": DAYS, "seeds": 1},
        retry_on_error=1,
    )
    assert log.status == "success"
    sample = sample_of(log, 1)
    assert sample.error_retries and len(sample.error_retries) == 1
    assert sample.scores["net_income"].value == expected["net_income"]
    runs = list((tmp_path / "logs" / "econbench").rglob("summary.json"))
    assert len(runs) == 1  # continued where it stopped, not played again elsewhere
    assert 0 < len(events_of(sample, "model")) < expected["llm_calls"]


def test_a_token_limit_stops_the_run_cleanly_and_it_is_scored(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    log = run_inspect(
        "econbench/coffeebench",
        tmp_path / "logs",
        task_args={"days": DAYS, "seeds": 1},
        token_limit=8000,
    )
    sample = sample_of(log, 1)
    assert sample.limit is not None and sample.limit.type == "token"
    score = sample.scores["net_income"]
    assert score.metadata["status"] == "stopped"
    assert score.metadata["days_run"] < DAYS
    assert (Path(score.metadata["run_dir"]) / "checkpoint.json").is_file()


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"firm": "roaster_C"}, "firm='roaster_C' is not one of"),
        ({"background": "openai/gpt-5.5"}, "--model-role background="),
        ({"background": "bargainer"}, "background:"),
        ({"seeds": "3-1"}, "descending seed range"),
        ({"days": 0}, "days: expected a whole number"),
        ({"condition": "papr"}, "unknown condition"),
        ({"condition": "paper"}, "under Inspect play 'hardened'"),
    ],
)
def test_bad_task_arguments_are_one_line_errors(arguments: dict[str, Any], words: str) -> None:
    with pytest.raises(TaskArgumentError, match=None) as caught:
        coffeebench(**arguments)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_time_limit_stops_the_run_at_its_next_call_and_it_is_scored(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """Inspect cancels the sample while a call hangs: the call is abandoned, econbench stops
    the run cleanly (checkpoint kept, summary written) before the scorer reads it."""
    slow_at = len(fake_openai.brain_requests) + 3
    script = fake_openai.brain

    def slow(request: Any) -> Any:
        if len(fake_openai.brain_requests) == slow_at:
            fake_openai.faults.append(Fault("delay", seconds=20))
        return script(request)

    fake_openai.brain = slow
    log = run_inspect(
        "econbench/coffeebench",
        tmp_path / "logs",
        task_args={"days": DAYS, "seeds": 1},
        time_limit=3,
    )
    sample = sample_of(log, 1)
    assert sample.limit is not None and sample.limit.type == "time"
    score = sample.scores["net_income"]
    assert score.metadata["status"] == "stopped"
    run_dir = Path(score.metadata["run_dir"])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert "cancelled" in summary["stopped"]["error"]
    assert (run_dir / "checkpoint.json").is_file()


def test_a_small_context_window_compacts_through_the_inspect_model(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """Per-model settings reach the bridge (a run config's ``[models]`` under the name the
    run records): the agent compacts, its summaries are Inspect calls, no call is lost."""
    config = tmp_path / "small.toml"
    config.write_text('[models."scripted/inspect/openai/fake-model"]\ncontext_window = 3000\n')
    log = run_inspect(
        "econbench/coffeebench",
        tmp_path / "logs",
        task_args={"days": 8, "seeds": 1, "config": str(config)},
    )
    sample = sample_of(log, 1)
    run_dir = Path(sample.scores["net_income"].metadata["run_dir"])
    row = json.loads((run_dir / "summary.json").read_text())["firms"]["roaster_A"]
    assert row["compactions"] > 0
    assert len(events_of(sample, "model")) == row["llm_calls"]
    assert len(events_of(sample, "tool")) == row["tool_calls"]
