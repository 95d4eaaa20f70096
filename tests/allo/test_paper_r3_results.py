"""R3's tools answer as the paper's own session does, call for call (issue 24).

``data/paper_r3_results.json`` holds what the paper's ``SessionState.call`` (class-bound, its
sandbox) answered to scripted sessions of tool calls — failing and exiting scripts, refused
and rebinding writes, cross-type runs, odd inputs, answers in every form — written by
``data/make_paper_r3_results.py`` from the paper's code. The same calls through econbench's
R3 tools must give the same result, key order included (``tokens_remaining``, which the
paper's driver adds after the session answers, aside).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from econbench.allo.framings.build import BuildFraming
from econbench.allo.game import Game
from econbench.allo.game.stream import generate_stream
from econbench.allo.sandbox.core import Sandbox

DATA = Path(__file__).parent / "data" / "paper_r3_results.json"
CASES = json.loads(DATA.read_text())["cases"]


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox()


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed']}-b{c['budget']}")
def test_every_call_is_answered_as_the_papers_session_answered(
    case: dict[str, Any], sandbox: Sandbox
) -> None:
    stream = generate_stream(case["seed"])
    ep = BuildFraming(sandbox=sandbox).episode(stream, 0.0, case["budget"])
    ep.begin_turn(Game(stream, budget=case["budget"]).turn(), case["budget"])
    for i, step in enumerate(case["steps"]):
        got = ep.toolkit.call(step["tool"], step["arguments"])
        got.pop("tokens_remaining", None)
        assert json.dumps(got) == json.dumps(step["result"]), f"step {i}: {step}"


def test_the_sessions_cover_what_they_claim() -> None:
    results = [s["result"] for c in CASES for s in c["steps"]]
    errors = " ".join(r.get("error", "") for r in results)
    for fragment in (
        "exit 1: ZeroDivisionError",
        "exit 3: ",
        "bound to a different hidden",
        "write budget exhausted",
        "inputs must be a JSON object",
        "does not define",
        "all problems" if False else "no script named",
    ):
        assert fragment in errors, fragment
    assert any(
        r.get("stdout", "").startswith("ANSWER: 1000000000000000000000000000007") for r in results
    )
