"""Condition ``paper`` sends, byte for byte, what the reference CoffeeBench sends.

The fixture (``tests/coffee/data/paper_reference``, captured from the reference at commit 71442fb
by ``scripts/capture_coffee_reference.py``) holds every request the reference's roaster_A
(gpt-5.5, OpenAI Responses) and farmer_A (claude-sonnet-4-6, Anthropic Messages) sent over four
days of scripted decisions — trades, messages, a delivery, a payment, a return, errors, an
unknown tool, replies without a call, wakes, a forced compaction each — and the reference's
economy at the end. Here econbench plays the same run under ``paper`` against the same scripted
server, through the official SDKs, and must send the same bodies and end with the same books.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.coffee.paper_reference.fixture import economy, load_scenario, params, requests_of
from tests.coffee.paper_reference.server import ScriptedServer

from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir

PROVIDERS = {"claude-": "anthropic", "gpt-": "openai"}


def _model(name: str) -> str:
    if name == "passive":
        return name
    provider = next(p for prefix, p in PROVIDERS.items() if name.startswith(prefix))
    return f"{provider}/{name}"


def models_by_firm(run: dict[str, Any]) -> list[str]:
    return [firm for firm, name in run["models"].items() if name != "passive"]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The fixture's run played by econbench under ``paper``: what each firm sent, and the run."""
    run = params()
    out = tmp_path_factory.mktemp("paper") / "run"
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "sk-test-conformance")
    mp.setenv("ANTHROPIC_API_KEY", "sk-ant-test-conformance")
    try:
        with ScriptedServer(load_scenario()) as server:
            agents = {firm: _model(name) for firm, name in run["models"].items()}
            models = {
                _model(name): {"base_url": server.base_url(firm)}
                for firm, name in run["models"].items()
                if name != "passive"
            }
            config = RunConfig.model_validate(
                {
                    "seed": run["seed"],
                    "days": run["max_days"],
                    "condition": "paper",
                    "agents": agents,
                    "models": models,
                }
            )
            summary = run_to_dir(config, out)
            sent = {firm: server.bodies(firm) for firm in models_by_firm(run)}
            errors = list(server.errors)
    finally:
        mp.undo()
    return {"sent": sent, "errors": errors, "summary": summary, "out": out}


@pytest.mark.parametrize("firm", ["roaster_A", "farmer_A"])
def test_every_request_is_the_references_byte_for_byte(played: dict[str, Any], firm: str) -> None:
    expected = [r.body for r in requests_of(firm)]
    sent = played["sent"][firm]
    assert not played["errors"]
    for index, (ours, theirs) in enumerate(zip(sent, expected, strict=False)):
        if ours != theirs:
            assert json.loads(ours) == json.loads(theirs), f"{firm} request {index} differs"
            pytest.fail(f"{firm} request {index}: same JSON, different bytes")
    assert len(sent) == len(expected)


def test_the_economy_ends_as_the_references_to_the_cent(played: dict[str, Any]) -> None:
    """The reference's whole ``_finish`` result, but its per-agent ``usage`` (model cost and
    token totals by the reference's own price table: econbench accounts for them itself, in
    ``summary.json`` and ``record.sqlite``) — the one allowed difference."""
    reference = economy()["result"]
    ours = played["summary"]["reference_result"]
    for agent in reference["agents"].values():
        agent.pop("usage")
    assert ours == reference


def test_compactions_and_calls_are_the_references(played: dict[str, Any]) -> None:
    events = [
        json.loads(line) for line in Path(played["out"], "events.jsonl").read_text().splitlines()
    ]
    for firm, agent in economy()["result"]["agents"].items():
        usage = agent["usage"]
        if usage["model"] == "passive":
            continue
        ours = [
            {k: e[k] for k in ("triggered_at_tokens", "middle_start", "middle_end")}
            for e in events
            if e["type"] == "compaction" and e["firm"] == firm
        ]
        theirs = [
            {k: c[k] for k in ("triggered_at_tokens", "middle_start", "middle_end")}
            for c in usage["compactions"]
        ]
        assert ours == theirs and ours
        calls = sum(
            1 for e in events if e["type"] in ("model_call", "compaction") and e["firm"] == firm
        )
        assert calls == usage["n_calls"]


def test_the_score_is_the_references_true_net_income(played: dict[str, Any]) -> None:
    reference = economy()["result"]["agents"]
    for firm, row in played["summary"]["firms"].items():
        assert row["net_income"] == reference[firm]["audit"]["annual"]["true_net_income"]


def test_the_daily_snapshots_are_the_references(played: dict[str, Any]) -> None:
    events = [
        json.loads(line) for line in Path(played["out"], "events.jsonl").read_text().splitlines()
    ]
    snapshots = [e["snapshot"] for e in events if e["type"] == "day_end"]
    assert snapshots == economy()["daily_stats"]
    rows = [
        json.loads(line) for line in Path(played["out"], "daily.jsonl").read_text().splitlines()
    ]
    last = {r["firm"]: r for r in rows if r["day"] == snapshots[-1]["day"]}
    for firm, books in snapshots[-1]["per_agent"].items():
        assert (last[firm]["cash"], last[firm]["equity"]) == (books["cash"], books["true_equity"])
