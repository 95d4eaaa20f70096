"""The scripted conversation behind the ``coffee_paper`` wire tests (stdlib only).

The same scenario drives both sides: ``tests/agents/data/coffee_paper/record_reference.py``
runs the CoffeeBench reference's own ``Agent`` / ``ContextCompactor`` / model classes (under
the SDK versions of its lock file) against econbench's fake servers and stores every request
body they send; ``test_reference_agent.py`` runs ``ReferenceAgent`` through econbench's
providers against the same fake servers and the same brain, and compares the bodies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.common import BrainReply, BrainRequest

DATA = Path(__file__).parent / "data" / "coffee_paper"
SCENARIO: dict[str, Any] = json.loads((DATA / "scenario.json").read_text(encoding="utf-8"))


def scripted_replies() -> list[dict[str, Any]]:
    """The replies in request order: each step's reply, a step's summary just before it."""
    replies: list[dict[str, Any]] = []
    for step in SCENARIO["steps"]:
        if step.get("summary") is not None:
            replies.append(step["summary"])
        replies.append(step["reply"])
    return replies


class ScriptedBrain:
    """Answers the k-th request with the k-th scripted reply (ids fixed for Anthropic)."""

    def __init__(self) -> None:
        self.replies = scripted_replies()
        self.calls = 0

    def __call__(self, request: BrainRequest) -> BrainReply:
        k = self.calls
        self.calls += 1
        spec = self.replies[k]
        calls = [
            {"name": c["name"], "arguments": c["arguments"], "id": f"toolu_{k:02d}_{j}"}
            for j, c in enumerate(spec.get("tool_calls", []))
        ]
        return BrainReply(
            text=spec.get("text", ""),
            tool_calls=calls,
            reasoning=spec.get("reasoning"),
            input_tokens=spec.get("input_tokens", 1000 + k),
            cached_input_tokens=0,
            output_tokens=50,
            reasoning_tokens=0,
        )


def tool_result(name: str) -> dict[str, Any]:
    """What the scenario's tools return (the same for every call of a tool)."""
    return dict(SCENARIO["results"][name])
