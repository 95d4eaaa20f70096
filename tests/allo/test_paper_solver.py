"""R1 and R2 under protocol "paper" as a model sees them: the paper's tool schemas, its tool
results (``json.dumps`` as its scripts write them), its rule for several calls in one reply, its
context rules for a reply without a tool call (kept in the frontier runs; pruned and re-asked
under ``--empty-fence-retry``), the options that choose a paper condition, and the runner's
context seams (``keeps_no_call_replies``, ``prunes_last_no_call_reply``) any framing can set.

The conversations are played through the real model actor (``LLMActorFactory`` with a
registered scripted model), so what is asserted is what a provider would be sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from econbench.agents.models.base import ChatMessage
from econbench.agents.models.registry import ModelSettings, register_scripted, unregister_scripted
from econbench.agents.models.scripted import ScriptedModel, ScriptedRequest
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.allo.episodes.runner import Episode, play_episode
from econbench.allo.framings import get_framing
from econbench.allo.framings.base import Framing, render
from econbench.allo.game.stream import StreamConfig, generate_stream
from econbench.runs.allo.llm_actor import LLMActorFactory

CFG = StreamConfig()
SEED = 2000
Brain = Callable[[list[ChatMessage], list[ToolSpec]], Any]

# The paper's tool_schemas(), copied from scripts/ladder/claim_solver_session.py (R1) and
# scripts/ladder/claim_solver_code_session.py (R2) of github:DragonWrangler25/AlloBench.
CLAIM_R1 = (
    "Claim a persistent solver for the problem currently shown. You immediately score this "
    "problem correct AND every remaining problem of the same hidden type presented later in the "
    "session, for free. Uses one of your solver claims."
)
CLAIM_R2 = (
    "Claim a persistent solver for the problem currently shown by providing real solver code. "
    "Immediately scores this problem correct AND every remaining problem of the same hidden type "
    "presented later in the session, for free. Uses one of your solver claims."
)
SKIP = "Skip the problem currently shown without claiming a solver. It scores zero."
EMPTY = {"type": "object", "properties": {}}
CODE = {
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "description": "Python source defining `def solve(inputs: dict) -> float` that "
            "solves problems of this type.",
        }
    },
    "required": ["code"],
}
PAPER_TOOLS = {
    "r1": [
        {"type": "function", "function": {"name": "claim_solver", "description": CLAIM_R1,
                                          "parameters": EMPTY}},
        {"type": "function", "function": {"name": "skip_solver", "description": SKIP,
                                          "parameters": EMPTY}},
    ],
    "r2": [
        {"type": "function", "function": {"name": "claim_solver", "description": CLAIM_R2,
                                          "parameters": CODE}},
        {"type": "function", "function": {"name": "skip_solver", "description": SKIP,
                                          "parameters": EMPTY}},
    ],
}  # fmt: skip


@pytest.fixture
def scripted() -> Iterator[Callable[[Brain], tuple[str, ScriptedModel]]]:
    """Registers a scripted model playing a brain; yields a maker of (name, model)."""
    names: list[str] = []

    def make(brain: Brain) -> tuple[str, ScriptedModel]:
        model = ScriptedModel(f"paper-solver-{len(names)}", brain=brain)
        names.append(register_scripted(model.name, model))
        return names[-1], model

    yield make
    for name in names:
        unregister_scripted(name)


def _problem(messages: list[ChatMessage]) -> int:
    """The number of the last problem the conversation shows."""
    for m in reversed(messages):
        if m.role == "user" and "Problem " in m.content:
            return int(m.content.split("Problem ", 1)[1].split(" of ")[0])
    raise AssertionError("no problem shown")


def _play(
    framing: Framing,
    brain: Brain,
    make: Callable[[Brain], tuple[str, ScriptedModel]],
    settings: ModelSettings | None = None,
) -> tuple[Episode, list[ScriptedRequest]]:
    name, model = make(brain)
    factory = LLMActorFactory(name, settings or ModelSettings())
    try:
        episode = play_episode(framing, factory, generate_stream(SEED, CFG))
    finally:
        factory.close()
    return episode, model.requests


def _tools_then_skip(script: dict[int, list[Any]]) -> Brain:
    """Answers problem n with ``script[n]`` (one item per ask: a text, a call or a list of
    calls), then skips every other problem."""
    queues = {n: list(items) for n, items in script.items()}

    def brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
        queue = queues.get(_problem(messages))
        if queue:
            return queue.pop(0)
        return ToolCall("skip_solver", {})

    return brain


def _shown(request: ScriptedRequest) -> list[tuple[str, str]]:
    """A request's conversation as (role, text) pairs, the system prompt left out."""
    return [(m.role, m.content) for m in request.messages if m.role != "system"]


# -- tools, results, options ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["r1", "r2"])
def test_the_tools_are_the_papers_byte_for_byte(name: str) -> None:
    ep = get_framing(name).episode(generate_stream(SEED, CFG), 0.0, 3)
    sent = [spec.openai_schema() for spec in ep.tools()]
    assert json.dumps(sent) == json.dumps(PAPER_TOOLS[name])  # key order included


def test_results_are_rendered_as_the_paper_writes_them() -> None:
    result = {"ok": False, "error": "x"}
    for name in ("r1", "r2"):
        assert get_framing(name).render_result(result) == '{"ok": false, "error": "x"}'
        old = get_framing(name, protocol="econbench")
        assert old.render_result(result) == '{"error": "x", "ok": false}'  # as before


def test_the_defaults_are_the_frontier_ladder_and_options_choose_a_condition() -> None:
    for name, tokens in (("r1", 1500), ("r2", 2500)):
        framing = get_framing(name)
        assert (framing.state_cost, framing.no_call_attempts, framing.tool_choice) == (
            False,
            1,
            "auto",
        )
        assert framing.max_tokens == tokens and framing.max_calls_per_turn == 1
        assert not framing.keeps_no_call_replies and not framing.prunes_last_no_call_reply
        surface = get_framing(name, state_cost=True, max_tokens=4000)
        assert surface.max_tokens == 4000 and surface.describe()["max_tokens"] == 4000
        qwen = get_framing(name, no_call_attempts=4, tool_choice="required")
        assert qwen.describe()["tool_choice"] == "required"
        assert qwen.describe()["no_call_attempts"] == 4
        assert get_framing(name, tool_choice=None).tool_choice is None
        assert type(framing).max_tokens == tokens  # an option changes the instance only
        with pytest.raises(ValueError, match="tool_choice must be one of"):
            get_framing(name, tool_choice="any")
        for bad in (0, -1, 2.5, True):
            with pytest.raises(ValueError, match="max_tokens must be a positive integer"):
                get_framing(name, max_tokens=bad)
        for option in ({"max_tokens": 4000}, {"tool_choice": "required"}):
            with pytest.raises(ValueError, match="protocol 'paper' only"):
                get_framing(name, protocol="econbench", **option)
        old = get_framing(name, protocol="econbench")
        assert old.tool_choice is None and "tool_choice" not in old.describe()


# -- what a model is sent ---------------------------------------------------------------------


def test_frontier_results_keep_the_reply_without_a_call_and_answer_every_call(
    scripted: Callable[[Brain], tuple[str, ScriptedModel]],
) -> None:
    """The paper's frontier R1: ``{"ok": true}`` for the decision, its "both" and "no such
    tool" errors for the other calls, and a reply without a call stays before the next problem."""
    claim, skip = ToolCall("claim_solver", {}), ToolCall("skip_solver", {})
    brain = _tools_then_skip(
        {1: ["Let me think."], 2: [[claim, ToolCall("think", {"x": 1}), skip]], 3: [[skip, skip]]}
    )
    episode, requests = _play(get_framing("r1"), brain, scripted)
    assert _problem(requests[1].messages) == 2
    assert _shown(requests[1])[1] == ("assistant", "Let me think.")  # kept, not re-asked
    assert _shown(requests[1])[2][1].startswith("Problem 2 of 60")
    third = requests[2].messages
    results = [m.content for m in third if m.role == "tool"]
    assert results == [
        '{"ok": true}',
        '{"ok": false, "error": "no such tool \'think\'. Available tools: claim_solver, '
        'skip_solver."}',
        '{"ok": false, "error": "both claim_solver and skip_solver called in the same turn; '
        "only the first ('CLAIM_SOLVER') was applied.\"}",
    ]
    fourth = [m.content for m in requests[3].messages if m.role == "tool"][-2:]
    assert fourth[0] == '{"ok": true}' and "('SKIP_SOLVER')" in fourth[1]
    turns = [t for t in episode.record["turns"] if t["kind"] == "decision"]
    assert [t["how"] for t in turns[:3]] == ["default", "both", "both"]
    assert [t["decision"] for t in turns[:3]] == ["pass", "commit", "pass"]
    assert episode.record["unresolved_turns"] >= 3
    assert [c.t for c in episode.result.commits][:1] == [1]
    assert all(r.config.max_tokens == 1500 for r in requests)


def test_r2_names_the_tool_applied_and_refuses_a_claim_without_code(
    scripted: Callable[[Brain], tuple[str, ScriptedModel]],
) -> None:
    claim = ToolCall("claim_solver", {"code": "def solve(inputs): return 1"})
    empty = ToolCall("claim_solver", {"code": "  "})
    skip = ToolCall("skip_solver", {"reason": "ignored"})
    brain = _tools_then_skip({1: [[empty, skip]], 2: [[claim, skip]]})
    episode, requests = _play(get_framing("r2", state_cost=True, max_tokens=4000), brain, scripted)
    results = [m.content for m in requests[1].messages if m.role == "tool"]
    assert results == [
        '{"ok": false, "error": "claim_solver requires a non-empty string `code` argument; '
        'no claim was registered."}',
        '{"ok": false, "error": "both claim_solver and skip_solver called in the same turn; '
        "only the first ('claim_solver') was applied.\"}",
    ]
    turns = [t for t in episode.record["turns"] if t["kind"] == "decision"]
    assert [(t["how"], t["decision"]) for t in turns[:2]] == [
        ("malformed_args", "pass"),
        ("both", "commit"),
    ]
    assert turns[1]["replies"][0]["tool_calls"][0]["result"] == {"ok": True}
    assert "claim_solver also costs 0 point(s)" in requests[0].messages[0].content
    assert all(r.config.max_tokens == 4000 for r in requests)


@pytest.mark.parametrize("name", ["r1", "r2"])
def test_empty_fence_retry_prunes_the_reasked_replies_and_keeps_the_last(
    name: str, scripted: Callable[[Brain], tuple[str, ScriptedModel]]
) -> None:
    """``--empty-fence-retry 4``: four replies in all; each re-asked one is dropped with the
    reminder before it; the fourth and its reminder stay, then the next problem follows."""
    brain = _tools_then_skip({1: ["a", "b", "c", "d"]})
    framing = get_framing(name, no_call_attempts=4, tool_choice="required")
    episode, requests = _play(framing, brain, scripted)
    first = _shown(requests[0])[0]
    one, two = render(f"{name}_paper_reask_1"), render(f"{name}_paper_reask_2")
    assert [_shown(r) for r in requests[1:4]] == [
        [first, ("user", one)],
        [first, ("user", two)],
        [first, ("user", two)],
    ]
    fifth = _shown(requests[4])
    assert fifth[:3] == [first, ("user", two), ("assistant", "d")]
    assert fifth[3][1].startswith("Problem 2 of 60") and len(fifth) == 4
    turn = episode.record["turns"][0]
    assert turn["how"] == "default" and len(turn["replies"]) == 4
    assert [r.get("retracted") for r in turn["replies"]] == [True, True, True, None]


def test_the_runner_can_keep_reasked_replies_or_prune_the_last(
    scripted: Callable[[Brain], tuple[str, ScriptedModel]],
) -> None:
    """The runner's context seams, set on any framing: ``keeps_no_call_replies`` leaves every
    reply without a call in the context, each followed by its reminder (the paper's R3 without
    ``--empty-fence-retry``); ``prunes_last_no_call_reply`` drops the last one too, with its
    reminder, before the next question (its R3 with the flag)."""
    one, two = render("r1_paper_reask_1"), render("r1_paper_reask_2")

    def next_problem(keeps: bool, prunes: bool) -> list[tuple[str, str]]:
        framing = get_framing("r1", no_call_attempts=3)
        framing.keeps_no_call_replies, framing.prunes_last_no_call_reply = keeps, prunes
        _, requests = _play(framing, _tools_then_skip({1: ["a", "b", "c"]}), scripted)
        shown = _shown(requests[3])
        assert shown[-1][1].startswith("Problem 2 of 60")
        return shown[:-1]

    kept = next_problem(keeps=True, prunes=False)
    assert kept[0][0] == "user" and kept[0][1].startswith("Problem 1 of 60")
    assert kept[1:] == [
        ("assistant", "a"),
        ("user", one),
        ("assistant", "b"),
        ("user", two),
        ("assistant", "c"),
    ]
    assert next_problem(keeps=True, prunes=True)[1:] == kept[1:]  # keeping wins
    assert next_problem(keeps=False, prunes=True) == kept[:1]
    assert next_problem(keeps=False, prunes=False)[1:] == [("user", two), ("assistant", "c")]
    framing = get_framing("r1")
    framing.keeps_no_call_replies = framing.prunes_last_no_call_reply = True
    described = framing.describe()
    assert described["keeps_no_call_replies"] and described["prunes_last_no_call_reply"]
    assert "keeps_no_call_replies" not in get_framing("r1").describe()


def test_the_framings_tool_choice_reaches_the_request_unless_the_model_sets_one(
    scripted: Callable[[Brain], tuple[str, ScriptedModel]],
) -> None:
    brain = _tools_then_skip({})
    _, requests = _play(get_framing("r2"), brain, scripted)
    assert {r.config.tool_choice for r in requests} == {"auto"}
    _, requests = _play(get_framing("r2", tool_choice="required"), brain, scripted)
    assert {r.config.tool_choice for r in requests} == {"required"}
    _, requests = _play(get_framing("r2", tool_choice=None), brain, scripted)
    assert {r.config.tool_choice for r in requests} == {None}
    mine = ModelSettings(tool_choice="required")  # the model's own setting wins
    _, requests = _play(get_framing("r2"), brain, scripted, settings=mine)
    for r in requests:
        assert r.config.tool_choice != "auto"
        assert (r.config.tool_choice or r.config.extra.get("tool_choice")) == "required"
