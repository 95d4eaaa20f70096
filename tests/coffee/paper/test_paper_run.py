"""A ``paper`` run as a run directory: its files, its determinism, and a stopped run resumed.

The resume plays the run again from day 0 with every model served from ``record.sqlite`` as long
as the requests are the ones recorded; so a run stopped by a model failure and resumed ends with
the same files as one never stopped, and no recorded call is sent to the model again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.coffee.paper_reference.fixture import load_scenario, params
from tests.coffee.paper_reference.server import ScriptedServer

from econbench.agents.models.base import FatalModelError, ModelProvider
from econbench.runs.coffee import paper_run
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import RunStopped, resume_to_dir, run_to_dir

FILES = ("events.jsonl", "daily.jsonl", "summary.json")


def _offline(days: int = 6) -> RunConfig:
    return RunConfig.model_validate(
        {"seed": 3, "days": days, "condition": "paper", "agents": {"roaster_A": "heuristic"}}
    )


def test_an_offline_paper_run_writes_a_run_directory(tmp_path: Path) -> None:
    summary = run_to_dir(_offline(), tmp_path / "run")
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["condition"] == "paper"
    assert config["agents"]["default"] == "passive"  # the reference has no bargaining firms
    assert summary["condition"] == "paper" and summary["status"] == "completed"
    firms = summary["firms"]
    # The reference's score is its audit's true net income; a passive firm makes no call.
    reference = summary["reference_result"]["agents"]
    for firm, row in firms.items():
        assert row["net_income"] == reference[firm]["audit"]["annual"]["true_net_income"]
    assert firms["farmer_A"]["tool_calls"] == 0 and firms["farmer_A"]["idle_days"] == 6
    assert firms["roaster_A"]["tool_calls"] > 0 and firms["roaster_A"]["idle_days"] == 0
    daily = (tmp_path / "run" / "daily.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in daily]
    assert [(r["day"], r["firm"]) for r in rows] == [(d, f) for d in range(6) for f in firms]
    for firm, row in firms.items():
        assert rows[-6:][list(firms).index(firm)]["net_income_cum"] == row["net_income"]


def test_the_same_seed_gives_the_same_files(tmp_path: Path) -> None:
    run_to_dir(_offline(), tmp_path / "a")
    run_to_dir(_offline(), tmp_path / "b")
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    other = _offline().model_copy(update={"seed": 4})
    run_to_dir(other, tmp_path / "c")
    assert (tmp_path / "a" / "daily.jsonl").read_bytes() != (
        tmp_path / "c" / "daily.jsonl"
    ).read_bytes()


class _FailAt(ModelProvider):
    """Fails the ``at``-th call (0-based) as a provider outage would, before it is sent."""

    def __init__(self, inner: ModelProvider, at: int) -> None:
        self.inner, self.at, self.calls = inner, at, 0
        self.name = inner.name
        self.context_window = inner.context_window

    @property
    def settings(self) -> Any:
        return getattr(self.inner, "settings", None)

    async def generate(self, messages: Any, tools: Any, config: Any) -> Any:
        self.calls += 1
        if self.calls - 1 == self.at:
            raise FatalModelError(f"{self.name}: injected outage")
        return await self.inner.generate(messages, tools, config)


def _scripted_config(server: ScriptedServer) -> RunConfig:
    run = params()
    names = {"claude-": "anthropic", "gpt-": "openai"}

    def model(name: str) -> str:
        if name == "passive":
            return name
        return next(f"{p}/{name}" for prefix, p in names.items() if name.startswith(prefix))

    return RunConfig.model_validate(
        {
            "seed": run["seed"],
            "days": run["max_days"],
            "condition": "paper",
            "agents": {firm: model(name) for firm, name in run["models"].items()},
            "models": {
                model(name): {"base_url": server.base_url(firm)}
                for firm, name in run["models"].items()
                if name != "passive"
            },
        }
    )


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-resume")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-resume")


@pytest.mark.usefixtures("keys")
def test_a_stopped_run_resumes_to_the_files_of_one_never_stopped(tmp_path: Path) -> None:
    with ScriptedServer(load_scenario()) as server:
        run_to_dir(_scripted_config(server), tmp_path / "whole")
        whole_requests = {f: len(server.bodies(f)) for f in ("roaster_A", "farmer_A")}

    with ScriptedServer(load_scenario()) as server:
        config = _scripted_config(server)
        out = tmp_path / "stopped"
        recording = paper_run._wrap(config, out, None, False)

        def wrap(provider: ModelProvider, agent: str) -> ModelProvider:
            wrapped = recording(provider, agent)
            return _FailAt(wrapped, 12) if agent == "roaster_A" else wrapped

        wrap.close = recording.close  # type: ignore[attr-defined]
        with pytest.raises(RunStopped, match="injected outage"):
            run_to_dir(config, out, provider_wrap=wrap)
        stopped = json.loads((out / "summary.json").read_text())
        assert stopped["status"] == "stopped"
        sent_before = {f: len(server.bodies(f)) for f in ("roaster_A", "farmer_A")}
        assert sent_before["roaster_A"] == 12

        summary = resume_to_dir(out)
        assert summary["status"] == "completed"
        sent = {f: len(server.bodies(f)) for f in ("roaster_A", "farmer_A")}
        # Every call was sent once: the recorded ones were served from the record.
        assert sent == whole_requests

    for name in FILES:
        assert (out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


def test_the_report_reads_a_paper_runs_idle_days_as_its_summary(tmp_path: Path) -> None:
    from econbench.runs.coffee.reading import idle_flags
    from econbench.runs.frames import load_run

    summary = run_to_dir(_offline(), tmp_path / "run")
    run = load_run(tmp_path / "run")
    flags = idle_flags(run.events, run.daily)
    idle = flags[flags["idle"]].groupby("firm").size().to_dict()
    for firm, row in summary["firms"].items():
        assert idle.get(firm, 0) == row["idle_days"], firm
    assert summary["firms"]["roaster_A"]["idle_days"] == 0  # the heuristic acts every day
