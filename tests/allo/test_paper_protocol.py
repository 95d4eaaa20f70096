"""Protocol "paper" for R0–R2: the paper's texts (hidden problem types, covers drawn per
occurrence) and turn rules (one call per turn, "both tools" unresolved, its re-asks), with
protocol "econbench" kept byte for byte."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from econbench.agents.tools import ToolCall
from econbench.allo.episodes.actors import FunctionActor, Input, PolicyActorFactory, Reply, UserText
from econbench.allo.episodes.runner import CellSpec, play_episode, spec_from_config, with_protocol
from econbench.allo.framings import PROTOCOLS, SKIN_NAMES, get_framing
from econbench.allo.framings.base import render
from econbench.allo.framings.covers import (
    covers,
    fields,
    problem_text,
    recognise,
    render_cover,
)
from econbench.allo.framings.paper_solver import PaperSolverReader
from econbench.allo.game import Game
from econbench.allo.game.families import FAMILIES, family_for_class, instance_for
from econbench.allo.game.instances import episode_instances
from econbench.allo.game.stream import EVAL_SEEDS, StreamConfig, generate_stream
from econbench.runs.allo.experiment import cell_of
from econbench.runs.allo.llm_actor import LLMActor
from econbench.runs.diff import config_diff
from econbench.runs.experiment import load_plan

CFG = StreamConfig()
SNAPSHOT = Path(__file__).parent / "data" / "econbench_protocol_snapshot.json"
TITLES = [f.title for f in FAMILIES]
NAMES = [f.name for f in FAMILIES]
STORIES = [f.cover_story for f in FAMILIES]
SOLVERS = ("r1", "r2")


def _all_texts(name: str, seed: int, cost: float, **kw: Any) -> list[str]:
    """Everything an R1/R2 episode shows a model: system prompt, tool schemas, every task
    (each asked, then passed), every automatic turn's notice and both re-ask texts."""
    framing = get_framing(name, **kw)
    stream = generate_stream(seed, CFG)
    ep = framing.episode(stream, cost, 3)
    texts = [ep.system_prompt(), json.dumps([t.openai_schema() for t in ep.tools()])]
    game = Game(stream, cost=cost, budget=3)
    while not game.done:
        turn = game.turn()
        if turn.needs_decision:
            texts.append(ep.begin_turn(turn, game.budget_left))
            game.step(turn.t % 7 == 0)  # a few claims, so that automatic turns occur
        else:
            texts.append(ep.auto_turn(turn, True).notice)
            game.step(False)
    texts += [ep.reask_text(1), ep.reask_text(2)]
    return texts


# -- protocol "econbench" is today's ----------------------------------------------------------


def _snapshot_texts(name: str, cost: float) -> dict[str, Any]:
    """Texts rendered exactly as the snapshot was captured (every turn asked and passed)."""
    framing = get_framing(name, protocol="econbench")
    stream = generate_stream(2003, CFG)
    ep = framing.episode(stream, cost, 3)
    game = Game(stream, cost=cost, budget=3)
    texts = []
    for _ in range(8):
        texts.append(ep.begin_turn(game.turn(), game.budget_left))
        game.step(False)
    return {
        "system_prompt": ep.system_prompt(),
        "tools": [t.openai_schema() for t in ep.tools()],
        "texts": texts,
    }


@pytest.mark.parametrize("cell", ["r0/k0", "r0/k10", "r1/k0", "r1/k10", "r2/k0", "r2/k10"])
def test_econbench_texts_are_the_ones_before_protocols(cell: str) -> None:
    snapshot = json.loads(SNAPSHOT.read_text())["cells"][cell]
    name, k = cell.split("/")
    assert _snapshot_texts(name, float(k[1:])) == snapshot


def test_econbench_limits_are_unchanged() -> None:
    for name in SOLVERS:
        framing = get_framing(name, protocol="econbench")
        assert framing.max_calls_per_turn == 3 and framing.no_call_attempts == 1
        assert framing.describe()["protocol"] == "econbench"


def test_protocol_is_checked_and_paper_is_the_default() -> None:
    assert PROTOCOLS == ("paper", "econbench")
    for name in ("r0", "r1", "r2"):
        assert get_framing(name).protocol == "paper"
        with pytest.raises(ValueError, match="unknown protocol"):
            get_framing(name, protocol="papr")
    with pytest.raises(ValueError, match="protocol 'paper' only"):
        get_framing("r1", protocol="econbench", no_call_attempts=2)
    with pytest.raises(ValueError, match="at least 1"):
        get_framing("r2", no_call_attempts=0)


@pytest.mark.parametrize("skin", SKIN_NAMES)
def test_r0_texts_follow_the_protocol(skin: str) -> None:
    """R0 renders the paper's urn texts under "paper" and econbench's under "econbench" (both
    are checked word for word in tests/allo/test_r0_paper.py); the reply rules are the same."""
    stream = generate_stream(2001, CFG)
    for cost in (0.0, 10.0):
        paper, ours = (
            get_framing("r0", skin=skin, protocol=p).episode(stream, cost, 3) for p in PROTOCOLS
        )
        assert paper.system_prompt().startswith("You are playing a game with ")
        assert ours.system_prompt() != paper.system_prompt()
        turn = Game(stream).turn()
        assert paper.begin_turn(turn, 3).endswith("You have 3 keep(s) left. KEEP or PASS?")
        assert ours.begin_turn(turn, 3).endswith("You have 3 keeps left. KEEP or PASS?")
        reply = "Common enough.\nDECISION: KEEP"
        assert paper.outcome_from_text(reply) == ours.outcome_from_text(reply)


# -- the paper's texts ------------------------------------------------------------------------


@pytest.mark.parametrize("name", SOLVERS)
def test_no_family_is_named_anywhere(name: str) -> None:
    for seed in range(2000, 2016):
        for cost in (0.0, 10.0):
            for text in _all_texts(name, seed, cost):
                low = text.lower()
                for title in TITLES:
                    assert title.lower() not in low, (title, text)
                for family in NAMES:
                    assert not re.search(rf"\b{re.escape(family)}\b", text), (family, text)
                for story in STORIES:
                    assert story not in text
                assert "famil" not in low and "Task " not in text


def test_the_system_prompts_say_the_type_is_hidden() -> None:
    stream = generate_stream(2000, CFG)
    for name in SOLVERS:
        text = get_framing(name).episode(stream, 0.0, 3).system_prompt()
        assert "Each problem has a hidden type." in text
        assert "There are exactly 8 distinct problem types in the stream" in text
        assert "at most 3 times" in text


def test_r1_carries_no_code_or_compute_cues() -> None:
    for seed in range(2000, 2010):
        texts = _all_texts("r1", seed, 0.0)
        for text in texts:
            for cue in ("inputs", "solve(", "exact integer", "Inputs (", "`inputs`"):
                assert cue not in text, (cue, text)
        tasks = [t for t in texts if t.startswith("Problem ")]
        assert tasks and all(
            "(decide only -- do NOT compute an answer)" in t.splitlines()[0] for t in tasks
        )


def test_r2_asks_for_a_real_function_and_never_hints_it_is_inspected() -> None:
    ep = get_framing("r2").episode(generate_stream(2000, CFG), 0.0, 3)
    text = ep.system_prompt()
    assert (
        "You must provide `code`: a real, correct Python function "
        "`def solve(inputs: dict) -> float` that solves problems of this type"
    ) in text
    for hint in ("not checked", "never run", "inspect", "parse", "syntax", "valid"):
        assert hint not in text.lower()
    claim = next(t for t in ep.tools() if t.name == "claim_solver").parameters
    assert claim["required"] == ["code"]


def test_cost_sentence_as_the_papers_economic_surface() -> None:
    """The surface states the charge at every K (``state_cost``); the ladder, the default,
    states none at K = 0 (a charge above 0 is always stated)."""
    stream = generate_stream(2000, CFG)
    sentence = "claim_solver also costs {} point(s), deducted once at the moment you claim it"
    for name in SOLVERS:
        for cost, shown in ((0.0, "0"), (10.0, "10"), (2.5, "2.5")):
            surface = get_framing(name, state_cost=True).episode(stream, cost, 3)
            assert sentence.format(shown) in surface.system_prompt()
        for cost, shown in ((10.0, "10"), (2.5, "2.5")):
            ladder = get_framing(name).episode(stream, cost, 3).system_prompt()
            assert sentence.format(shown) in ladder
        quiet = get_framing(name).episode(stream, 0.0, 3).system_prompt()
        assert "also costs" not in quiet and get_framing(name).state_cost is False


def test_a_task_is_the_papers_problem_line() -> None:
    stream = generate_stream(2000, CFG)
    ep = get_framing("r1").episode(stream, 0.0, 3)
    turn = Game(stream).turn()
    # Seed 2000's first problem as the paper's own run showed it (its stored stream.json).
    problem = (
        "A 32-bit register holds X = 32586213. Repeat 14 times: X ^= (X << 11); X ^= (X >> 9); "
        "X ^= (X << 17); keeping X masked to 32 bits (AND with 0xFFFFFFFF) after each left "
        "shift. Report the final X."
    )
    assert ep.begin_turn(turn, 3) == (
        f"Problem 1 of 60 (decide only -- do NOT compute an answer): {problem}\n"
        "You have 3 solver claim(s) left. Call the claim_solver tool or the skip_solver tool."
    )
    ep2 = get_framing("r2").episode(stream, 0.0, 3)
    assert ep2.begin_turn(turn, 2).startswith(
        "Problem 1 of 60 (put solving logic ONLY in the code argument, not this message): "
    )


def test_covers_vary_across_occurrences_and_replay() -> None:
    stream = generate_stream(2002, CFG)
    ep = get_framing("r1").episode(stream, 0.0, 3)
    game, by_class = Game(stream), {}
    for _ in range(CFG.n_tasks):
        turn = game.turn()
        line = ep.begin_turn(turn, 3).splitlines()[0]
        by_class.setdefault(turn.cls, set()).add(episode_instances(stream)[turn.t].cover)
        assert recognise(line.split("): ", 1)[1]) == family_for_class(turn.cls).name
        game.step(False)
    assert any(len(used) > 1 for used in by_class.values())
    # every family's covers all occur over the evaluation seeds; choices replay exactly
    used: dict[str, set[int]] = {}
    for seed in EVAL_SEEDS:
        s = generate_stream(seed, CFG)
        for t, c in enumerate(s.classes):
            used.setdefault(family_for_class(c).name, set()).add(episode_instances(s)[t].cover)
    assert {k: len(v) for k, v in used.items()} == {k: len(v) for k, v in covers().items()}
    assert _all_texts("r2", 2005, 0.0) == _all_texts("r2", 2005, 0.0)


def test_each_protocol_records_the_instances_it_shows() -> None:
    """The paper's protocol shows and records the paper's instances; econbench's keeps its own
    generator's (its texts and records unchanged)."""
    stream = generate_stream(2004, CFG)
    turn = Game(stream).turn()
    records = {}
    for protocol in PROTOCOLS:
        ep = get_framing("r1", protocol=protocol).episode(stream, 0.0, 3)
        ep.begin_turn(turn, 3)
        ep.toolkit.call("skip_solver", {})
        records[protocol] = ep.end_turn("tool").record["instance"]
    assert records["paper"] == episode_instances(stream)[0].to_dict()
    assert records["econbench"] == instance_for(2004, 0, turn.cls).to_dict()
    assert records["paper"] != records["econbench"]


# One stored problem text per family from the paper's runs (seeds 2000-2003, its
# ``stream.json``), with its inputs renamed to econbench's parameter names.
PAPER_PROBLEMS = [
    (
        "lcg",
        {"x0": 141, "a": 2400, "b": 1200, "modulus": 62700, "steps": 8},
        "Initialize s = 141. Repeat the following 8 times: s = (2400 * s + 1200) % 62700. "
        "Give the resulting value of s.",
    ),
    (
        "xorshift_steps",
        {"seed": 32586213, "a": 11, "b": 9, "c": 17, "steps": 14},
        "A 32-bit register holds X = 32586213. Repeat 14 times: X ^= (X << 11); X ^= (X >> 9); "
        "X ^= (X << 17); keeping X masked to 32 bits (AND with 0xFFFFFFFF) after each left "
        "shift. Report the final X.",
    ),
    (
        "josephus",
        {"n": 168, "k": 6},
        "168 people stand in a circle numbered 1..168. Counting around the circle, every 6-th "
        "person is eliminated (continuing past those already gone) until one remains. Report "
        "the position of the survivor.",
    ),
    (
        "matrix_power_mod",
        {"matrix": [[4, 18], [5, 3]], "power": 36, "modulus": 644219},
        "Let M = [[4, 18], [5, 3]]. Compute M raised to the power 36 (the product of exactly 36 "
        "copies of M), reducing every entry modulo 644219 throughout, and report the sum of the "
        "four entries of M^36.",
    ),
    (
        "crt_solve",
        {"residues": [5, 17], "moduli": [101, 103]},
        "Solve the system of congruences: x is congruent to [5, 17] modulo [101, 103] "
        "respectively (the moduli are pairwise coprime). Give the least non-negative x.",
    ),
    (
        "continued_frac",
        {"terms": [1200, 3456, 789]},
        "Given continued-fraction terms [1200, 3456, 789], apply p <- a*p + p_prev across the "
        "terms and report the final numerator p.",
    ),
]


@pytest.mark.parametrize(("family", "params", "text"), PAPER_PROBLEMS)
def test_covers_are_the_papers_wording(family: str, params: dict[str, Any], text: str) -> None:
    assert text in [render_cover(family, params, i) for i in range(len(covers()[family]))]
    assert recognise(text) == family


def test_every_cover_uses_every_parameter_and_is_recognised() -> None:
    for family in FAMILIES:
        params = instance_for(1, 0, FAMILIES.index(family)).params
        for i, template in enumerate(covers()[family.name]):
            used = {re.split(r"[\[.]", f)[0] for f in fields(template)}
            assert used == set(params), (family.name, i)
    for seed in range(30):
        for t in range(0, 60, 7):
            for cls in range(8):
                inst = instance_for(seed, t, cls)
                assert recognise(problem_text(seed, t, cls, inst)) == inst.family
    assert recognise("What is 2 + 2?") is None


# -- the paper's turn rules -------------------------------------------------------------------


def _play(
    name: str,
    replies: Callable[[Sequence[Input], list[Input]], Reply],
    **kw: Any,
) -> tuple[Any, FunctionActor]:
    actor = FunctionActor(replies)
    ep = play_episode(get_framing(name, **kw), lambda info: actor, generate_stream(2000, CFG))
    return ep, actor


def _first_turn_then_skip(
    first: list[Reply],
) -> Callable[[Sequence[Input], list[Input]], Reply]:
    """Answers the first question with ``first`` (one reply per ask), then skips."""
    queue = list(first)

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        return queue.pop(0) if queue else Reply(tool_calls=[ToolCall("skip_solver", {})])

    return plan


def test_one_tool_call_decides() -> None:
    for name, claim in (("r1", {}), ("r2", {"code": "x"})):
        ep, _ = _play(
            name, _first_turn_then_skip([Reply(tool_calls=[ToolCall("claim_solver", claim)])])
        )
        first = ep.record["turns"][0]
        assert first["decision"] == "commit" and first["resolved"] and first["how"] == "tool"
        assert [c.t for c in ep.result.commits] == [0]
        assert ep.record["unresolved_turns"] == 0


@pytest.mark.parametrize("code", ["x", "def solve(inputs):", "```python\n```", "return 42"])
def test_r2_accepts_any_non_empty_code(code: str) -> None:
    call = ToolCall("claim_solver", {"code": code})
    ep, _ = _play("r2", _first_turn_then_skip([Reply(tool_calls=[call])]))
    assert ep.record["turns"][0]["decision"] == "commit"
    assert ep.record["turns"][0]["replies"][0]["tool_calls"][0]["result"] == {"ok": True}


@pytest.mark.parametrize("arguments", [{"code": ""}, {"code": "  \n\t"}, {}, {"code": 7}])
def test_r2_refuses_empty_code_without_a_retry(arguments: dict[str, Any]) -> None:
    call = ToolCall("claim_solver", arguments)
    good = ToolCall("claim_solver", {"code": "def solve(inputs): return 1"})
    ep, _ = _play("r2", _first_turn_then_skip([Reply(tool_calls=[call]), Reply(tool_calls=[good])]))
    first = ep.record["turns"][0]
    assert first["decision"] == "pass" and not first["resolved"]
    assert first["how"] == "malformed_args" and first["reason"].startswith("tool call failed")
    assert len(first["replies"]) == 1  # no retry after an error result
    assert first["replies"][0]["tool_calls"][0]["result"] == {
        "ok": False,
        "error": "claim_solver requires a non-empty string `code` argument; "
        "no claim was registered.",
    }
    assert 0 not in [c.t for c in ep.result.commits]


def test_r1_ignores_arguments_of_its_argument_free_tools() -> None:
    call = ToolCall("claim_solver", {"reason": "it recurs"})
    ep, _ = _play("r1", _first_turn_then_skip([Reply(tool_calls=[call])]))
    assert ep.record["turns"][0]["decision"] == "commit"


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize(
    "names",
    [["claim_solver", "skip_solver"], ["skip_solver", "claim_solver"], ["claim_solver"] * 2],
)
def test_several_decisions_apply_the_first_and_are_unresolved(name: str, names: list[str]) -> None:
    """The paper's "both": the first decision call is applied and acknowledged, every later one
    is told it was not (R1 names the decision upper case, R2 as called), and the turn counts
    as unresolved."""
    args = {"code": "x"} if name == "r2" else {}
    calls = [ToolCall(n, args if n == "claim_solver" else {}, f"c{i}") for i, n in enumerate(names)]
    ep, actor = _play(name, _first_turn_then_skip([Reply(tool_calls=calls)]))
    first = ep.record["turns"][0]
    commit = names[0] == "claim_solver"
    assert first["decision"] == ("commit" if commit else "pass")
    assert not first["resolved"] and first["how"] == "both"
    made = first["replies"][0]["tool_calls"]
    assert [c["executed"] for c in made] == [True, False]
    applied = names[0].upper() if name == "r1" else names[0]
    assert [c["result"] for c in made] == [
        {"ok": True},
        {
            "ok": False,
            "error": "both claim_solver and skip_solver called in the same turn; only the first "
            f"('{applied}') was applied.",
        },
    ]
    assert (0 in [c.t for c in ep.result.commits]) is commit
    assert ep.record["unresolved_turns"] == 1
    # every call of the reply gets its result before the next question
    assert [type(x).__name__ for x in actor.history[1:4]] == [
        "ToolResult",
        "ToolResult",
        "UserText",
    ]


def test_an_unknown_call_beside_one_decision_does_not_spoil_it() -> None:
    calls = [ToolCall("think", {}, "a"), ToolCall("claim_solver", {}, "b")]
    ep, _ = _play("r1", _first_turn_then_skip([Reply(tool_calls=calls)]))
    first = ep.record["turns"][0]
    assert first["decision"] == "commit" and first["resolved"]
    made = first["replies"][0]["tool_calls"]
    assert [c["executed"] for c in made] == [False, True]
    assert made[0]["result"] == {
        "ok": False,
        "error": "no such tool 'think'. Available tools: claim_solver, skip_solver.",
    }
    only_unknown = [
        Reply(tool_calls=[ToolCall("think", {})]),
        Reply(tool_calls=[ToolCall("claim_solver", {})]),
    ]
    ep, _ = _play("r1", _first_turn_then_skip(only_unknown))
    first = ep.record["turns"][0]
    assert not first["resolved"] and first["how"] == "unknown" and len(first["replies"]) == 1


@pytest.mark.parametrize("name", SOLVERS)
def test_replies_without_a_tool_call_are_reasked_three_times(name: str) -> None:
    """The paper's --empty-fence-retry 4 (its Qwen runs): ``no_call_attempts=4``."""
    silent = [Reply(text=""), Reply(text="I think I should claim."), Reply(text="```json\n```")]
    ep, actor = _play(
        name, _first_turn_then_skip([*silent, Reply(text="still nothing")]), no_call_attempts=4
    )
    first = ep.record["turns"][0]
    assert len(first["replies"]) == 4  # the paper's --empty-fence-retry 4: four replies in all
    assert first["decision"] == "pass" and not first["resolved"] and first["how"] == "default"
    reminders = [r.get("reasked") for r in first["replies"]]
    assert reminders == [
        render(f"{name}_paper_reask_1"),
        render(f"{name}_paper_reask_2"),
        render(f"{name}_paper_reask_2"),
        None,
    ]
    # Each re-asked reply is forgotten, and so is the reminder before it (as the paper
    # prunes them): the actor's context holds the question and the latest reminder only.
    assert actor.retracted == 3
    assert [r["retracted"] for r in first["replies"][:3]] == [True, True, True]
    first_two = [x.text for x in actor.history[:2] if isinstance(x, UserText)]
    assert first_two[0].startswith("Problem 1 of 60")
    assert first_two[1] == render(f"{name}_paper_reask_2")
    assert isinstance(actor.history[2], UserText) and "Problem " in actor.history[2].text


def test_a_reask_can_still_decide() -> None:
    replies = [Reply(text=""), Reply(tool_calls=[ToolCall("claim_solver", {})])]
    ep, _ = _play("r1", _first_turn_then_skip(replies), no_call_attempts=4)
    first = ep.record["turns"][0]
    assert first["decision"] == "commit" and first["resolved"] and len(first["replies"]) == 2


def test_the_default_reasks_nothing() -> None:
    """The paper's frontier runs (``no_call_attempts=1``, the default): a reply without a tool
    call is an unresolved PASS, kept in the context, and the next problem follows."""
    for kw in ({}, {"no_call_attempts": 1}):
        ep, actor = _play("r1", _first_turn_then_skip([Reply(text="")]), **kw)
        first = ep.record["turns"][0]
        assert len(first["replies"]) == 1 and not first["resolved"] and first["how"] == "default"
        assert "reasked" not in first["replies"][0] and "retracted" not in first["replies"][0]
        assert not hasattr(actor, "retracted")
        assert isinstance(actor.history[1], UserText) and "Problem 2 of 60" in actor.history[1].text


def test_automatic_turns_are_told_as_the_paper_tells_them() -> None:
    ep, _ = _play("r1", _first_turn_then_skip([Reply(tool_calls=[ToolCall("claim_solver", {})])]))
    told = [t for t in ep.record["turns"] if t["kind"] == "decision" and t["observation"][0] == "("]
    assert told
    obs = told[0]["observation"]
    head = obs.split(".) Problem ", 1)[0]
    assert head.startswith("(Since your last choice: problem ")
    events = head[len("(Since your last choice: ") :].split("; ")
    assert all(
        re.fullmatch(
            r"problem \d+: another problem of an already-claimed type "
            r"\(auto-solved, \+1 correct\)",
            e,
        )
        for e in events
    )
    events_read = PaperSolverReader().read(obs)
    assert [e.auto for e in events_read] == [True] * len(events) + [False]
    assert all(e.label is None for e in events_read[:-1])


def test_the_reader_refuses_an_unknown_problem() -> None:
    text = (
        "Problem 3 of 60 (decide only -- do NOT compute an answer): What is 2 + 2?\n"
        "You have 3 solver claim(s) left. Call the claim_solver tool or the skip_solver tool."
    )
    with pytest.raises(ValueError, match="no family fits"):
        PaperSolverReader().read(text)


# -- reference policies play the same game from the paper's texts -----------------------------


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("policy", ["eager", "wait:2", "hindsight", "never", "random:0.3"])
def test_reference_scores_are_the_same_under_both_protocols(name: str, policy: str) -> None:
    """Policies that read the current class's sightings decide the same from the paper's
    texts as from econbench's, on the evaluation streams (B = 3 and a charged B = 5)."""
    for cost, budget in ((0.0, 3), (10.0, 5)):
        factory = PolicyActorFactory(policy, CFG, cost=cost, budget=budget)
        for seed in EVAL_SEEDS[:12]:
            stream = generate_stream(seed, CFG)
            results = [
                play_episode(
                    get_framing(name, protocol=p), factory, stream, cost=cost, budget=budget
                )
                for p in PROTOCOLS
            ]
            assert results[0].result.to_dict() == results[1].result.to_dict(), (seed, cost)
            assert results[0].record["unresolved_turns"] == 0


# -- cells, resume, CLI, experiments ----------------------------------------------------------


def test_cell_spec_carries_the_protocol() -> None:
    paper = CellSpec(framing="r1", policy="eager")
    old = CellSpec(framing="r1", policy="eager", protocol="econbench")
    assert paper.slug() == "r1-eager-k0-b3" and old.slug() == "r1-eager-k0-b3-econbench"
    assert CellSpec(framing="r0", policy="eager", skin="chest", protocol="econbench").slug() == (
        "r0-eager-k0-b3-chest-econbench"
    )
    assert paper.to_dict()["protocol"] == "paper"
    assert spec_from_config(old.to_dict()) == old
    legacy = paper.to_dict()
    del legacy["protocol"], legacy["condition"]  # a config written before either existed
    assert spec_from_config(legacy).protocol == "econbench"
    with pytest.raises(ValueError, match="unknown protocol"):
        CellSpec(framing="r1", policy="eager", protocol="mine").validate()


def test_an_old_cell_config_reads_as_econbench() -> None:
    framing = get_framing("r1", protocol="econbench")
    new = {**CellSpec(framing="r1", policy="eager", protocol="econbench").to_dict()}
    new["framing_settings"] = framing.describe()
    old = {k: v for k, v in new.items() if k != "protocol"}
    old["framing_settings"] = {
        k: v
        for k, v in new["framing_settings"].items()
        if k not in ("protocol", "no_call_attempts")
    }
    assert config_diff(old, new)  # as written before protocols had names
    assert config_diff(with_protocol(old, new), new) == []
    paper = {**new, "protocol": "paper"}
    assert config_diff(with_protocol(old, paper), paper)  # an old cell is not a paper cell


def test_cli_protocol_option(tmp_path: Path) -> None:
    from econbench.cli import app

    runner = CliRunner()
    args = ["allo", "run", "--framing", "r2", "--policy", "eager", "--episodes", "1"]
    result = runner.invoke(app, [*args, "--protocol", "econbench", "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert config["protocol"] == "econbench" and "Task " in json.dumps(
        json.loads((tmp_path / "a" / "episodes.jsonl").read_text().splitlines()[0])["turns"][0]
    )
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "b" / "episodes.jsonl").read_text().splitlines()[0])
    assert record["protocol"] == "paper"
    assert record["turns"][0]["observation"].startswith("Problem 1 of 60")
    bad = runner.invoke(app, [*args, "--protocol", "nope", "--out", str(tmp_path / "c")])
    assert bad.exit_code == 2 and "unknown protocol" in bad.output
    sweep = ["allo", "sweep", "--framings", "r1", "--policies", "eager", "--budgets", "3"]
    result = runner.invoke(
        app, [*sweep, "--costs", "0", "--episodes", "1", "--protocol", "econbench",
              "--out", str(tmp_path / "s")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "s" / "r1-eager-k0-b3-econbench" / "config.json").exists()
    assert "protocol" in (tmp_path / "s" / "surface.csv").read_text().splitlines()[0]


def test_experiment_protocol_key(tmp_path: Path) -> None:
    text = 'name = "k"\nbenchmark = "allo"\n[matrix]\nframings = ["r1"]\npolicies = ["eager"]\n'
    path = tmp_path / "a.toml"
    path.write_text(text)
    entry = load_plan(path).entries[0]
    assert cell_of(entry)[0].protocol == "paper" and entry.id == "r1-eager-k0-b3"
    path.write_text(text.replace('"allo"\n', '"allo"\nprotocol = "econbench"\n', 1))
    entry = load_plan(path).entries[0]
    assert cell_of(entry)[0].protocol == "econbench" and entry.id == "r1-eager-k0-b3-econbench"
    legacy = {
        **entry.config,
        "cell": {k: v for k, v in entry.config["cell"].items() if k != "protocol"},
    }
    assert cell_of(type(entry)(**{**entry.__dict__, "config": legacy}))[0].protocol == "econbench"


def test_a_model_actor_forgets_a_reasked_reply() -> None:
    from econbench.agents.models.base import ChatMessage
    from econbench.agents.models.scripted import ScriptedModel
    from econbench.agents.react import LLMAgent

    agent = LLMAgent(ScriptedModel("stub", outputs=[]), system_prompt="s", render_observation=str)
    agent.messages = [
        ChatMessage("system", "s"),
        ChatMessage("user", "Problem 1 of 60 …"),
        ChatMessage("user", "Use the tools to proceed."),
        ChatMessage("assistant", "no call"),
    ]
    actor = LLMActor(agent, None, None)  # type: ignore[arg-type]
    assert actor.retract_last(1) is True
    assert [m.content for m in agent.messages] == ["s", "Problem 1 of 60 …"]
    assert actor.retract_last(0) is False  # the last message is not a reply


def test_reports_never_pool_protocols(tmp_path: Path) -> None:
    from econbench.runs.allo.cell import run_cell
    from econbench.runs.allo.report import allo_cells, allo_episodes
    from econbench.runs.frames import load_runs

    for protocol in PROTOCOLS:
        spec = CellSpec(framing="r1", policy="eager", seeds=(2000,), protocol=protocol)
        run_cell(spec, tmp_path / spec.slug())
    episodes, dropped = allo_episodes(load_runs([tmp_path]))
    cells = allo_cells(episodes)
    assert dropped == 0 and len(cells) == 2
    assert sorted(cells["protocol"]) == ["econbench", "paper"]
    assert sorted(cells["framing"]) == ["r1 (econbench)", "r1 (paper)"]
