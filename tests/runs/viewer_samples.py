"""Small runs for the viewer's tests: a CoffeeBench run whose roaster_A is a scripted model
that writes hostile HTML, an AlloBench cell, and a way to replay a run's last day as if it
were being written now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from econbench.agents.compaction import is_summary_request
from econbench.agents.models.base import ChatMessage, ModelOutput, Usage
from econbench.agents.models.registry import register_scripted, unregister_scripted
from econbench.agents.models.scripted import ScriptedModel
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.allo.episodes.runner import CellSpec
from econbench.runs import layout
from econbench.runs.allo.cell import run_cell
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir

HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
MODEL = "viewer-roaster"


def hostile_brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> ModelOutput:
    """Look at the books, write hostile HTML to farmer_A once, then wait for the next day."""
    calls = sum(1 for m in messages if m.role == "assistant")
    if calls == 1:
        call = ToolCall("send_message", {"recipient": "farmer_A", "title": "hi", "body": HOSTILE})
    elif calls % 2 == 0:
        call = ToolCall("view_trial_balance", {})
    else:
        call = ToolCall("wait_for_next_day", {})
    return ModelOutput(
        model=f"scripted/{MODEL}",
        text=f"Plan {calls}: {HOSTILE}",
        reasoning=f"Thinking about <b>prices</b> at step {calls}.",
        tool_calls=[call],
        usage=Usage(input_tokens=1200, output_tokens=30),
    )


def coffee_run(
    out: Path, days: int = 5, seed: int = 1, economy: dict[str, Any] | None = None
) -> Path:
    """A finished run with roaster_A played by ``hostile_brain`` (``economy``: settings that
    differ from the default economy's, such as ``festival_days`` inside a short run)."""
    name = register_scripted(MODEL, hostile_brain)
    try:
        config = RunConfig(
            seed=seed,
            days=days,
            agents={"default": "scripted", "roaster_A": name},
            economy=economy or {},
        )
        run_to_dir(config, out)
    finally:
        unregister_scripted(name)
    return out


SUMMARY = "SUMMARY: the books so far, in brief."


def compacting_brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> ModelOutput:
    """Alternate books and waiting, reporting a prompt that grows 150 tokens a message, so a
    small context window makes the agent compact; the summariser (``is_summary_request``) answers
    ``SUMMARY`` — except the first request for a summary at the end of the conversation,
    answered with a tool call and no text, so that compaction asks again over a transcript
    and makes two recorded calls."""
    first = not any(m.content.startswith("[Summary of earlier history") for m in messages)
    if is_summary_request(messages) and tools and first:
        usage = Usage(input_tokens=150 * len(messages), output_tokens=5)
        call = ToolCall("wait_for_next_day", {})
        return ModelOutput(model="scripted/compacting", tool_calls=[call], usage=usage)
    if is_summary_request(messages):
        usage = Usage(input_tokens=500, output_tokens=10)
        return ModelOutput(model="scripted/compacting", text=SUMMARY, usage=usage)
    calls = sum(1 for m in messages if m.role == "assistant")
    name = "view_trial_balance" if calls % 2 == 0 else "wait_for_next_day"
    return ModelOutput(
        model="scripted/compacting",
        text=f"step {calls}",
        tool_calls=[ToolCall(name, {})],
        usage=Usage(
            input_tokens=150 * len(messages),
            cached_input_tokens=100 * len(messages),
            output_tokens=5,
        ),
    )


def compacting_run(out: Path, days: int = 8) -> Path:
    """A finished run whose roaster_A (a 6,000-token window) compacts its history twice."""
    name = register_scripted(
        "viewer-compacting",
        ScriptedModel(name="viewer-compacting", brain=compacting_brain, context_window=6000),
    )
    try:
        config = RunConfig(seed=1, days=days, agents={"default": "scripted", "roaster_A": name})
        run_to_dir(config, out)
    finally:
        unregister_scripted(name)
    return out


def allo_cell(out: Path, framing: str = "r0", episodes: int = 2, policy: str = "wait:2") -> Path:
    """A played cell (``eager`` commits at first sight, ``wait:2`` at the second)."""
    spec = CellSpec(framing=framing, policy=policy, seeds=tuple(range(2000, 2000 + episodes)))
    run_cell(spec, out)
    return out


def hold_back_last_day(run_dir: Path) -> dict[str, list[str]]:
    """Make a finished run look like one in progress: remove its summary and cut the last
    day (and the run's end) from the logs. Returns the lines cut, per file, to append later."""
    (run_dir / layout.SUMMARY).unlink()
    last = max(json.loads(line)["day"] for line in _lines(run_dir / layout.DAILY))
    held: dict[str, list[str]] = {}
    for name in (layout.EVENTS, layout.DAILY):
        lines = _lines(run_dir / name)
        keep = [line for line in lines if json.loads(line)["day"] < last]
        held[name] = lines[len(keep) :]
        (run_dir / name).write_text("".join(keep), encoding="utf-8")
    return held


def append(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(lines))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def event_line(**fields: Any) -> str:
    return json.dumps(fields) + "\n"
