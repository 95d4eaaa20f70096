"""The framing ladder: prompts, skins, tools and the rung-specific rules (R2 code, R3 build)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from econbench.agents.tools import ToolCall
from econbench.allo.episodes.actors import (
    FunctionActor,
    Input,
    PolicyActorFactory,
    Reply,
    ToolResult,
)
from econbench.allo.episodes.runner import Episode, play_episode
from econbench.allo.framings import (
    FRAMINGS,
    PROTOCOLS,
    SKIN_NAMES,
    check_solver_code,
    get_framing,
)
from econbench.allo.framings.base import Framing
from econbench.allo.framings.build import BuildFraming, is_exact
from econbench.allo.framings.urn import get_skin, skins
from econbench.allo.game import Game
from econbench.allo.game.families import FAMILIES, family_for_class, instance_for
from econbench.allo.game.stream import StreamConfig, generate_stream
from econbench.allo.sandbox.core import Sandbox
from econbench.allo.solvers.policies import make_policy
from econbench.allo.solvers.policies import play_episode as play_bare

CFG = StreamConfig()
SMALL = StreamConfig(n_classes=6, n_tasks=40, budget=2)  # bayes solves fast here


def _episode(name: str, seed: int = 2000, cost: float = 0.0, budget: int = 3, **kw: Any) -> Any:
    framing = get_framing(name, **kw)
    return framing, framing.episode(generate_stream(seed, CFG), cost, budget)


# -- registry ---------------------------------------------------------------------------------


def test_registry_names_and_token_limits() -> None:
    assert list(FRAMINGS) == ["r0", "r1", "r2", "r3", "r0-tool"]
    limits = {name: get_framing(name).max_tokens for name in FRAMINGS}
    assert limits == {"r0": 512, "r1": 1500, "r2": 2500, "r3": 4096, "r0-tool": 512}
    assert get_framing("r3").episode_max_tokens == 300_000
    assert get_framing("R1").name == "r1"


@pytest.mark.parametrize(
    ("name", "kw", "message"),
    [
        ("r9", {}, "unknown framing"),
        ("r0", {"skin": "casino"}, "unknown skin"),
        ("r2", {"skin": "chest"}, r"urn \(r0, r0-tool\) only"),
    ],
)
def test_get_framing_rejects_bad_names(name: str, kw: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_framing(name, **kw)


# -- R0 prompt and skins ----------------------------------------------------------------------
# The R0 text tests pin protocol "econbench" (its texts are kept byte for byte); the paper's R0
# texts are checked in tests/allo/test_r0_paper.py.


def test_r0_system_prompt_states_the_rules() -> None:
    _, ep = _episode("r0", protocol="econbench")
    text = ep.system_prompt()
    assert "exactly 8 colours" in text
    assert "red, blue, green, yellow, purple, orange, white, black" in text
    assert "Some colours are common and some are rare; you are not told which" in text
    assert "60 balls are drawn" in text and "You have 3 keeps" in text
    assert "every later ball of the same colour" in text
    assert "DECISION: KEEP" in text and "DECISION: PASS" in text
    # The paper's economic-surface prompt (urn_common.render_system, charge=0) states the
    # charge at K = 0 too, so every charge cell has the same prompt structure.
    sentence = "Keeping also costs 0 points, deducted once when you keep; passing costs nothing."
    assert sentence in text
    assert "When a ball is drawn" in text


def test_r0_cost_sentence_can_be_left_out_at_k0() -> None:
    """``state_cost=False``: the paper's K = 0 framing-ladder prompt (charge=None) has none."""
    framing, ep = _episode("r0", protocol="econbench", state_cost=False)
    assert "costs" not in ep.system_prompt()
    assert framing.describe()["state_cost"] is False
    _, ep = _episode("r0", protocol="econbench", cost=10, state_cost=False)
    assert "costs 10 points" in ep.system_prompt()  # a charge is always stated


def test_r0_quiver_articles() -> None:
    """The paper's 2026-07-09 fix (urn_common._art): "an arrow", never "a arrow"."""
    _, ep = _episode("r0", protocol="econbench", skin="quiver")
    text = ep.system_prompt()
    assert "When an arrow is drawn" in text and "a arrow" not in text
    assert "a quiver of arrows" in text


def test_r0_cost_sentence_when_charged() -> None:
    _, ep = _episode("r0", protocol="econbench", cost=10, budget=1)
    text = ep.system_prompt()
    assert (
        "Keeping also costs 10 points, deducted once when you keep; passing costs nothing." in text
    )
    assert "You have 1 keep." in text
    _, ep = _episode("r0", protocol="econbench", cost=2.5)
    assert "costs 2.5 points" in ep.system_prompt()
    _, ep = _episode("r0", protocol="econbench", cost=1)
    assert "costs 1 point," in ep.system_prompt()


def test_r0_turn_texts() -> None:
    _framing, ep = _episode("r0", protocol="econbench")
    game = Game(generate_stream(2000, CFG))
    turn = game.turn()
    label = ep.label(turn.cls)
    text = ep.begin_turn(turn, 2)
    assert text.startswith(f"Draw 1 of 60: a{'n' if label[0] in 'aeiou' else ''} {label} ball")
    assert text.endswith("You have 2 keeps left. KEEP or PASS?")
    assert "1 keep left" in ep.begin_turn(turn, 1)
    notice = ep.auto_turn(turn, True).notice
    assert notice.endswith(f"you already keep {label}: collected.")


def test_skin_table() -> None:
    table = skins()
    assert tuple(table) == SKIN_NAMES
    words = {
        "default": ("bag", "ball", "colour"),
        "chest": ("treasure chest", "coin", "crest"),
        "quiver": ("quiver", "arrow", "feather"),
        "cauldron": ("cauldron", "potion", "label"),
    }
    for name, (container, item, kind) in words.items():
        skin = table[name]
        assert (skin.container, skin.item, skin.label_kind) == (container, item, kind)
        assert len(skin.labels) == 8 and len(set(skin.labels)) == 8


@pytest.mark.parametrize("skin", SKIN_NAMES)
def test_reader_recovers_every_label_of_every_skin(skin: str) -> None:
    """A draw line names exactly its own label, so a reader can tell the class from it."""
    framing, ep = _episode("r0", skin=skin, protocol="econbench")
    reader = framing.reader()
    stream = generate_stream(2000, CFG)
    game = Game(stream)
    turn = game.turn()
    for c in range(8):
        t = type(turn)(turn.t, c, 1, False, True)
        question = reader.read(ep.begin_turn(t, 3))
        notice = reader.read(ep.auto_turn(t, True).notice)
        assert [e.label for e in question] == [get_skin(skin).labels[c]]
        assert question[0].budget_left == 3 and not question[0].auto
        assert [e.label for e in notice] == [get_skin(skin).labels[c]] and notice[0].auto
        others = [x for x in get_skin(skin).labels if x != get_skin(skin).labels[c]]
        assert not any(f" {x} " in f" {ep.begin_turn(t, 3)} " for x in others)


def _decisions(ep: Episode) -> list[tuple[int, str]]:
    return [(t["t"], t["decision"]) for t in ep.record["turns"] if t["kind"] == "decision"]


@pytest.mark.parametrize(
    ("framing", "protocol"), [("r0", p) for p in PROTOCOLS] + [("r0-tool", "paper")]
)
def test_skins_change_words_not_decisions(framing: str, protocol: str) -> None:
    factory = PolicyActorFactory("bayes", SMALL)
    for seed in (2000, 2001):
        stream = generate_stream(seed, SMALL)
        runs = {
            s: play_episode(get_framing(framing, skin=s, protocol=protocol), factory, stream)
            for s in SKIN_NAMES
        }
        reference = _decisions(runs["default"])
        assert any(d == "commit" for _, d in reference)
        for skin, ep in runs.items():
            assert _decisions(ep) == reference
            assert ep.result.to_dict() == runs["default"].result.to_dict()
            first = ep.record["turns"][0]["observation"]
            assert get_skin(skin).item in first
            if skin != "default":
                assert "ball" not in first


# -- R1 ---------------------------------------------------------------------------------------
# These pin protocol "econbench" (today's texts and rules); tests/allo/test_paper_protocol.py
# checks the paper protocol's.


def test_r1_tools_and_prompt() -> None:
    _framing, ep = _episode("r1", cost=20, protocol="econbench")
    specs = {s.name: s for s in ep.tools()}
    assert set(specs) == {"claim_solver", "skip_solver"}
    assert all(s.parameters["properties"] == {} for s in specs.values())
    text = ep.system_prompt()
    assert "Decide only; do not compute any answers." in text
    assert "exactly 8 problem families" in text
    for family in FAMILIES:
        assert f"- {family.title}" in text
    assert "costs 20 points, deducted once when you build; skipping costs nothing" in text
    game = Game(generate_stream(2000, CFG))
    turn = game.turn()
    task = ep.begin_turn(turn, 3)
    family = family_for_class(turn.cls)
    instance = instance_for(2000, 0, turn.cls)
    assert task.startswith(f"Task 1 of 60 — {family.title}\n{family.cover_story}")
    assert family.describe(instance.params) in task


def test_r1_decisions_through_the_toolkit() -> None:
    _, ep = _episode("r1", protocol="econbench")
    turn = Game(generate_stream(2000, CFG)).turn()
    ep.begin_turn(turn, 3)
    bad = ep.toolkit.call("claim_solver", {"code": "x"})
    assert bad["status"] == "error" and "unexpected argument" in bad["error"]
    assert not ep.turn_over()
    assert ep.toolkit.call("skip_solver", {})["status"] == "success"
    assert ep.turn_over() and ep.end_turn("tool").commit is False
    ep.begin_turn(turn, 3)
    assert ep.toolkit.call("claim_solver", {})["status"] == "success"
    outcome = ep.end_turn("tool")
    assert outcome.commit and outcome.resolved
    ep.begin_turn(turn, 3)
    outcome = ep.end_turn("no_call")
    assert not outcome.commit and not outcome.resolved


# -- R2 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("def solve(inputs:\n    return 1", "does not parse"),
        ("print('hello')", "must define"),
        ("def solver(inputs):\n    return 1", "must define"),
        ("class A:\n    def solve(self, inputs):\n        return 1", "must define"),
        ("async def solve(inputs):\n    return 1", "must define"),
        ("solve = lambda inputs: 1", "must define"),
        ("def solve():\n    return 1", "exactly one argument"),
        ("def solve(a, b):\n    return 1", "exactly one argument"),
        ("def solve(a, *, key):\n    return 1", "exactly one argument"),
        ("x = 1\x00", "does not parse"),
    ],
)
def test_r2_rejects_bad_code(code: str, problem: str) -> None:
    reason = check_solver_code(code)
    assert reason is not None and problem in reason
    _, ep = _episode("r2", protocol="econbench")
    ep.begin_turn(Game(generate_stream(2000, CFG)).turn(), 3)
    result = ep.toolkit.call("claim_solver", {"code": code})
    assert result["status"] == "error" and problem in result["error"]
    assert not ep.turn_over()


@pytest.mark.parametrize(
    "code",
    [
        "def solve(inputs: dict) -> float:\n    return 0.0",
        "def solve(inputs):\n    pass",
        "import math\n\ndef solve(x, scale=2):\n    return math.pi",
        "def solve(*args):\n    return 1",
        "def solve(inputs):\n    return wrong_on_purpose()",  # correctness is never checked
    ],
)
def test_r2_accepts_any_well_formed_solver(code: str) -> None:
    assert check_solver_code(code) is None
    _, ep = _episode("r2", protocol="econbench")
    ep.begin_turn(Game(generate_stream(2000, CFG)).turn(), 3)
    assert ep.toolkit.call("claim_solver", {"code": code})["status"] == "success"
    assert ep.turn_over() and ep.end_turn("tool").commit


def test_r2_prompt_never_says_correctness_is_unchecked() -> None:
    _, ep = _episode("r2", protocol="econbench")
    text = ep.system_prompt().lower()
    assert "def solve(inputs: dict) -> float" in text
    assert "not checked" not in text and "never run" not in text and "correct" not in text
    assert {s.name for s in ep.tools()} == {"claim_solver", "skip_solver"}
    code_param = next(s for s in ep.tools() if s.name == "claim_solver").parameters
    assert code_param["required"] == ["code"]


def _script(
    plan: Callable[[Sequence[Input], list[Input]], Reply],
) -> Callable[[Any], FunctionActor]:
    return lambda info: FunctionActor(plan)


def _first_question_actor(calls: list[ToolCall]) -> Callable[[Any], FunctionActor]:
    """Plays ``calls`` one per reply on the first question, then stops calling tools."""
    queue = list(calls)

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        return Reply(tool_calls=[queue.pop(0)] if queue else [])

    return _script(plan)


def test_r2_retries_then_unresolved_pass_after_three_bad_calls() -> None:
    stream = generate_stream(2000, CFG)
    bad = ToolCall("claim_solver", {"code": ""})
    good = ToolCall("claim_solver", {"code": "def solve(inputs):\n    return 1"})
    r2 = get_framing("r2", protocol="econbench")
    ep = play_episode(r2, _first_question_actor([bad, bad, good]), stream)
    first = ep.record["turns"][0]
    assert first["decision"] == "commit" and first["resolved"]
    assert [c["result"]["status"] for r in first["replies"] for c in r["tool_calls"]] == [
        "error",
        "error",
        "success",
    ]
    ep = play_episode(r2, _first_question_actor([bad, bad, bad, good]), stream)
    first = ep.record["turns"][0]
    assert first["decision"] == "pass" and not first["resolved"]
    assert "3 calls" in first["reason"]
    assert len(first["replies"]) == 3
    assert ep.result.commits == [] or ep.result.commits[0].t != 0


# -- R3 ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def r3() -> BuildFraming:
    """Today's R3 rules, on purpose (the paper's are in test_r3_paper.py)."""
    return BuildFraming(sandbox=Sandbox(), workers=4, protocol="econbench")


def test_is_exact() -> None:
    assert is_exact(12, 12) and is_exact(12.0, 12)
    assert not is_exact(12.5, 12) and not is_exact("12", 12) and not is_exact(None, 12)
    assert not is_exact(True, 1) and not is_exact(11, 12)


def test_r3_tools_and_prompt(r3: BuildFraming) -> None:
    ep = r3.episode(generate_stream(2000, CFG), 10.0, 3)
    assert [s.name for s in ep.tools()] == [
        "write_script",
        "run_script",
        "list_scripts",
        "read_script",
        "submit_answer",
    ]
    text = ep.system_prompt()
    assert "one point for every task answered exactly right" in text
    assert "costs 10 points, deducted once per write" in text
    assert "after 12 tool calls" in text


def _builder(
    first_code: str, *, overwrite: str | None = None, cross_run: bool = False
) -> Callable[[Any], FunctionActor]:
    """Writes ``first_code`` at the first question (optionally rewrites it), submits the
    script's output; on the second question optionally tries to run that script (another
    family's), then skips every later question."""
    state: dict[str, Any] = {"q": 0, "steps": []}

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        texts = [i for i in inputs if not isinstance(i, ToolResult)]
        if texts:
            state["q"] += 1
            state["steps"] = []
            if state["q"] == 1:
                state["steps"] = [ToolCall("write_script", {"name": "s1", "code": first_code})]
                if overwrite:
                    state["steps"].append(
                        ToolCall("write_script", {"name": "s1", "code": overwrite})
                    )
                state["steps"].append("run")
            elif state["q"] == 2 and cross_run:
                state["steps"] = [ToolCall("run_script", {"name": "s1", "inputs": {}})]
        results = [i for i in inputs if isinstance(i, ToolResult)]
        if not state["steps"]:
            return Reply(text="skip")
        step = state["steps"].pop(0)
        if step == "run":
            text = next(i for i in reversed(history) if not isinstance(i, ToolResult)).text
            inputs_line = next(x for x in text.splitlines() if x.startswith("Inputs ("))
            params = json.loads(inputs_line.split(": ", 1)[1])
            state["steps"].append("submit")
            return Reply(tool_calls=[ToolCall("run_script", {"name": "s1", "inputs": params})])
        if step == "submit":
            output = results[-1].result.get("output")
            return Reply(tool_calls=[ToolCall("submit_answer", {"answer": int(output or 0)})])
        return Reply(tool_calls=[step])

    return _script(plan)


def _first_class_stream(seed_from: int = 2000) -> Any:
    """A stream whose first class recurs at least twice more and whose second question is
    about another class (so the cross-class run has a target)."""
    for seed in range(seed_from, seed_from + 50):
        s = generate_stream(seed, CFG)
        if s.classes.count(s.classes[0]) >= 3 and s.classes[1] != s.classes[0]:
            return s
    raise AssertionError("no suitable stream")


def test_r3_credits_only_exact_outputs(r3: BuildFraming) -> None:
    stream = _first_class_stream()
    family = family_for_class(stream.classes[0])
    right = play_episode(r3, _builder(family.reference_code), stream)
    wrong = play_episode(r3, _builder("def solve(inputs):\n    return 7"), stream)
    n_later = stream.classes.count(stream.classes[0]) - 1
    for ep in (right, wrong):
        # The allocation game does not look at correctness: same score either way.
        assert ep.result.collected == n_later + 1 and ep.result.commits[0].t == 0
    assert right.record["r3"]["auto_correct"] == n_later == right.record["r3"]["auto_runs"]
    assert right.record["r3"]["submits_correct"] == 1
    assert right.record["r3"]["realised_utility"] == n_later + 1
    assert wrong.record["r3"]["auto_runs"] == n_later
    assert wrong.record["r3"]["auto_correct"] == 0
    assert wrong.record["r3"]["realised_utility"] == 0
    later = [t for t in wrong.record["turns"] if t["kind"] != "decision" and t["collected"]]
    assert later and all(not t["credited"] for t in later)
    assert all(t["sandbox"][0]["backend"] == r3.sandbox.backend for t in later)
    assert all(t["sandbox"][0]["ok"] and t["sandbox"][0]["value"] == 7 for t in later)


def test_r3_refuses_cross_class_runs_without_charge(r3: BuildFraming) -> None:
    stream = _first_class_stream()
    family = family_for_class(stream.classes[0])
    ep = play_episode(r3, _builder(family.reference_code, cross_run=True), stream, cost=5.0)
    second = next(t for t in ep.record["turns"] if t["kind"] == "decision" and t["t"] > 0)
    call = second["replies"][0]["tool_calls"][0]
    assert call["name"] == "run_script" and call["result"]["status"] == "error"
    assert "belongs to" in call["result"]["error"] and "refused" in call["result"]["error"]
    assert second["decision"] == "pass" and second["sandbox"] == []
    assert len(ep.result.commits) == 1 and ep.result.rebuilds == 0
    assert ep.result.unused_budget == 2
    assert ep.result.utility == ep.result.collected - 5.0


def test_r3_overwrites_spend_budget_and_cost(r3: BuildFraming) -> None:
    stream = _first_class_stream()
    family = family_for_class(stream.classes[0])
    actor = _builder("def solve(inputs):\n    return 7", overwrite=family.reference_code)
    ep = play_episode(r3, actor, stream, cost=2.0)
    first = ep.record["turns"][0]
    assert [w["kind"] for w in first["writes"]] == ["new", "overwrite"]
    assert ep.result.rebuilds == 1 and len(ep.result.commits) == 1
    assert ep.result.unused_budget == 1
    assert ep.result.utility == ep.result.collected - 2 * 2.0
    r3rec = ep.record["r3"]
    assert r3rec["writes"] == 2 and r3rec["rebuilds"] == 1
    # The overwrite is the script that runs later: correct outputs.
    assert r3rec["auto_correct"] == r3rec["auto_runs"] > 0
    assert r3rec["realised_utility"] == r3rec["auto_correct"] + 1 - 2 * 2.0


def test_r3_write_rules(r3: BuildFraming) -> None:
    stream = generate_stream(2000, CFG)
    ep = r3.episode(stream, 0.0, 2)
    game = Game(stream, budget=2)
    turn = game.turn()
    ep.begin_turn(turn, 1)  # one write left
    good = family_for_class(turn.cls).reference_code
    call = ep.toolkit.call
    assert "bad name" in call("write_script", {"name": "../x", "code": good})["error"]
    assert "does not parse" in call("write_script", {"name": "a", "code": "def ("})["error"]
    assert call("write_script", {"name": "a", "code": good})["writes_left"] == 0
    assert "already has" in call("write_script", {"name": "b", "code": good})["error"]
    assert "no writes left" in call("write_script", {"name": "a", "code": good})["error"]
    listed = call("list_scripts", {})["scripts"]
    assert listed == [{"name": "a", "family": family_for_class(turn.cls).title}]
    assert call("read_script", {"name": "a"})["code"] == good
    assert call("read_script", {"name": "zz"})["status"] == "error"
    assert "invalid arguments" in call("submit_answer", {"answer": "12"})["error"]
    answer = instance_for(2000, turn.t, turn.cls).answer
    assert call("submit_answer", {"answer": answer})["credited"] is True
    assert ep.turn_over()
    outcome = ep.end_turn("tool")
    assert outcome.commit and outcome.rebuilds == 0 and outcome.resolved


def test_framing_scores_equal_the_bare_game_in_r3(r3: BuildFraming) -> None:
    """The reference builder in R3 makes the bare game's decisions (1 seed, 2 policies)."""
    stream = generate_stream(2003, SMALL)
    for spec in ("eager", "bayes"):
        ep = play_episode(r3, PolicyActorFactory(spec, SMALL), stream)
        assert ep.result.to_dict() == play_bare(make_policy(spec, SMALL), stream).to_dict()
        assert ep.record["r3"]["auto_correct"] == ep.record["r3"]["auto_runs"] > 0
        assert ep.record["r3"]["submits_correct"] == len(ep.result.commits)


def test_framings_are_framing_instances() -> None:
    for name in FRAMINGS:
        assert isinstance(get_framing(name), Framing)
