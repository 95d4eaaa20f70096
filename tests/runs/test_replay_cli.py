"""``econbench replay``: re-drive a recorded run and compare its log with the original."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.agents.models.base import ModelOutput, Usage
from econbench.agents.models.record import CallRecord
from econbench.agents.models.registry import (
    ModelSettings,
    is_model_name,
    register_scripted,
    unregister_scripted,
)
from econbench.agents.models.wraps import make_provider_wrap
from econbench.agents.tools import ToolCall
from econbench.allo.episodes.runner import CellSpec
from econbench.cli import app
from econbench.coffee.events import MemorySink
from econbench.coffee.sim import CoffeeRun
from econbench.runs.allo.cell import run_cell
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.layout import CONFIG, EPISODES, EVENTS, RECORD
from econbench.runs.replay import first_difference, keyless

runner = CliRunner()
DAYS = 3
COFFEE_MODEL = "scripted/replay-cli-roaster"
ALLO_MODEL = "scripted/replay-cli-allo"


def replay(*args: str):
    return runner.invoke(app, ["replay", *args])


def said(result) -> str:
    return " ".join(result.output.split())


# --------------------------------------------------------------------------- recorded runs


@functools.cache
def heuristic_calls() -> tuple[ToolCall, ...]:
    sink = MemorySink()
    CoffeeRun(RunConfig(days=DAYS), sink=sink).run()
    return tuple(
        ToolCall(e["tool"], e["arguments"])
        for e in sink.events
        if e["type"] == "tool_call" and e["firm"] == "roaster_A"
    )


def roaster_brain():
    queue = list(heuristic_calls())

    def brain(messages, tools):
        return ModelOutput(
            model=COFFEE_MODEL,
            tool_calls=[queue.pop(0)] if queue else [],
            usage=Usage(input_tokens=50 * len(messages), output_tokens=7),
        )

    return brain


@pytest.fixture
def coffee_run(tmp_path) -> Path:
    """A recorded CoffeeBench run whose roaster_A is a scripted model."""
    register_scripted(COFFEE_MODEL, roaster_brain())
    out = tmp_path / "original"
    config = RunConfig(days=DAYS, agents={"default": "scripted", "roaster_A": COFFEE_MODEL})
    run_to_dir(config, out, provider_wrap=make_provider_wrap(record=out / RECORD))
    yield out
    unregister_scripted(COFFEE_MODEL)


def allo_brain(messages, tools):
    """Claim a solver for every new task; after the tool's answer, say so."""
    last = messages[-1]
    usage = Usage(input_tokens=30 * len(messages), output_tokens=4)
    if last.role == "tool":
        return ModelOutput(model=ALLO_MODEL, text="Done.", usage=usage, stop_reason="stop")
    call = ToolCall("claim_solver", {})
    return ModelOutput(model=ALLO_MODEL, tool_calls=[call], usage=usage, stop_reason="tool")


@pytest.fixture
def allo_cell(tmp_path) -> Path:
    """A recorded AlloBench cell (R1) played by a scripted model over three seeds."""
    register_scripted(ALLO_MODEL, allo_brain)
    out = tmp_path / "cell"
    spec = CellSpec(framing="r1", policy=ALLO_MODEL, seeds=(2000, 2001, 2002))
    run_cell(spec, out, provider_wrap=make_provider_wrap(record=out / RECORD))
    yield out
    unregister_scripted(ALLO_MODEL)


# --------------------------------------------------------------------------- CoffeeBench


def test_a_recorded_coffee_run_replays_identically(tmp_path, coffee_run) -> None:
    result = replay(str(coffee_run), "--out", str(tmp_path / "again"))
    assert result.exit_code == 0, result.output
    assert "identical: events.jsonl matches the original" in said(result)
    again = tmp_path / "again"
    assert (again / EVENTS).read_bytes() == (coffee_run / EVENTS).read_bytes()
    with CallRecord(again / RECORD, readonly=True) as record:  # the replay has its own record
        assert record.count_calls("roaster_A") == len(heuristic_calls())


def test_a_replay_needs_neither_the_scripted_model_nor_keys(tmp_path, coffee_run) -> None:
    unregister_scripted(COFFEE_MODEL)  # as in a fresh process that never registered it
    result = replay(str(coffee_run), "--out", str(tmp_path / "again"))
    assert result.exit_code == 0, result.output
    assert not is_model_name(COFFEE_MODEL), "the stand-in is gone after the replay"


def test_a_changed_environment_shows_the_first_differing_line(tmp_path, coffee_run) -> None:
    lines = (coffee_run / EVENTS).read_text().splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if '"type":"tool_call"' in line)
    lines[n] = lines[n].replace('"firm"', '"firm_x"', 1)
    (coffee_run / EVENTS).write_text("".join(lines))
    result = replay(str(coffee_run), "--out", str(tmp_path / "again"))
    assert result.exit_code == 1
    text = said(result)
    assert f"events.jsonl differs from the original at line {n + 1}" in text
    assert '"firm_x"' in text and "original:" in text and "replay:" in text


def test_a_replay_under_a_changed_config_stops_at_the_divergence(tmp_path, coffee_run) -> None:
    config = json.loads((coffee_run / CONFIG).read_text())
    config["prompts"] = {"roaster_A": "revenue_pressure"}
    (coffee_run / CONFIG).write_text(json.dumps(config))
    result = replay(str(coffee_run), "--out", str(tmp_path / "strict"))
    assert result.exit_code == 1
    text = said(result)
    assert "the replay stopped: FatalModelError: replay diverged: agent roaster_A, call 0" in text
    assert "first difference at message 0" in text
    lenient = replay(str(coffee_run), "--out", str(tmp_path / "lenient"), "--lenient")
    assert lenient.exit_code == 0, lenient.output
    assert "identical" in said(lenient)


def test_bad_input_is_one_error_line(tmp_path, coffee_run) -> None:
    scripted_only = tmp_path / "scripted"
    run_to_dir(RunConfig(days=1), scripted_only)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x.txt").write_text("x")
    cases = {
        "does not exist": [str(tmp_path / "nowhere"), "--out", str(tmp_path / "a")],
        "has no record.sqlite": [str(scripted_only), "--out", str(tmp_path / "b")],
        "not an empty directory": [str(coffee_run), "--out", str(busy)],
        "not the run being replayed": [str(coffee_run), "--out", str(coffee_run)],
    }
    for expected, args in cases.items():
        result = replay(*args)
        assert result.exit_code == 2, (expected, result.output)
        assert result.output.startswith("error:") and expected in said(result)
        assert "Traceback" not in result.output


# --------------------------------------------------------------------------- AlloBench


def test_a_recorded_allo_cell_replays_identically(tmp_path, allo_cell) -> None:
    with CallRecord(allo_cell / RECORD, readonly=True) as record:
        assert record.agents() == ["seed-2000", "seed-2001", "seed-2002"]
    unregister_scripted(ALLO_MODEL)
    result = replay(str(allo_cell), "--out", str(tmp_path / "again"))
    assert result.exit_code == 0, result.output
    assert "identical: episodes.jsonl matches the original" in said(result)
    assert "wall_s" not in result.output  # R1 has no sandbox timings to leave out
    assert (tmp_path / "again" / EPISODES).read_bytes() == (allo_cell / EPISODES).read_bytes()


def test_sandbox_timings_are_left_out_of_the_comparison(tmp_path) -> None:
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text('{"t":1,"sandbox":[{"ok":true,"wall_s":0.12}]}\n{"t":2}\n')
    new.write_text('{"t":1,"sandbox":[{"ok":true,"wall_s":0.31}]}\n{"t":3}\n')
    assert first_difference(old, new, frozenset({"wall_s"})).line == 2  # type: ignore[union-attr]
    assert first_difference(old, new).line == 1  # type: ignore[union-attr]
    new.write_text('{"t":1,"sandbox":[{"ok":true,"wall_s":0.31}]}\n')
    gap = first_difference(old, new, frozenset({"wall_s"}))
    assert gap is not None and gap.line == 2 and gap.replayed is None


def test_keyless_gives_placeholders_only_for_what_is_missing(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no developer's .env file found from here
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    models = {
        "anthropic/claude-sonnet-4-6": ModelSettings(),
        "openai-compatible/local": ModelSettings(),
    }
    with keyless(models):
        assert os.environ["ANTHROPIC_API_KEY"] == "replay-without-a-key"
        assert os.environ["OPENAI_API_KEY"] == "sk-real"
        assert os.environ["OPENAI_BASE_URL"] == "http://replay.invalid/v1"
    assert "ANTHROPIC_API_KEY" not in os.environ and "OPENAI_BASE_URL" not in os.environ
    assert os.environ["OPENAI_API_KEY"] == "sk-real"
