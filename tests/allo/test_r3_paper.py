"""R3 under the paper's protocol: its texts, its tools' answers, and when its session ends."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
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
from econbench.allo.episodes.runner import Episode, _Session, play_episode
from econbench.allo.framings import get_framing
from econbench.allo.framings.base import render
from econbench.allo.framings.build import BuildFraming
from econbench.allo.framings.build_paper import PaperProblemReader
from econbench.allo.game import Game
from econbench.allo.game.families import FAMILIES, family_for_class, instance_for
from econbench.allo.game.instances import episode_instances
from econbench.allo.game.stream import StreamConfig, generate_stream
from econbench.allo.sandbox.core import Sandbox
from econbench.runs.allo.llm_actor import anthropic_input_tokens

CFG = StreamConfig()
SMALL = StreamConfig(n_classes=6, n_tasks=40, budget=2)  # bayes solves fast here
SNAPSHOT = Path(__file__).parent / "data" / "r3_econbench_snapshot.json"
NAMES = re.compile(
    "|".join(re.escape(x) for f in FAMILIES for x in (f.title, f.name)), re.IGNORECASE
)


@pytest.fixture(scope="module")
def paper() -> BuildFraming:
    return BuildFraming(sandbox=Sandbox(), workers=4)


def _actor(plan: Callable[[Sequence[Input], list[Input]], Reply]) -> Any:
    return lambda info: FunctionActor(plan)


def _problem(history: list[Input]) -> str:
    return next(i.text for i in reversed(history) if not isinstance(i, ToolResult))


def _inputs(text: str) -> dict[str, Any]:
    line = next(x for x in text.splitlines() if x.startswith("The named values"))
    return ast.literal_eval(line.split(": ", 1)[1].rsplit(" (keys:", 1)[0])


def _calls(ep: Episode, t: int) -> list[dict[str, Any]]:
    turn = next(rec for rec in ep.record["turns"] if rec["t"] == t)
    return [c for r in turn.get("replies", []) for c in r["tool_calls"]]


def _answering(value: int = -1, usage: dict[str, int] | None = None) -> Any:
    """Answers every problem at once with ``value`` (reporting ``usage`` per reply)."""

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        call = ToolCall("submit_answer", {"value": value}, "c")
        return Reply(tool_calls=[call], usage=dict(usage or {}))

    return _actor(plan)


# -- texts ------------------------------------------------------------------------------------


def test_no_text_names_a_problem_type(paper: BuildFraming) -> None:
    seen: dict[int, set[str]] = {}
    for seed in range(2000, 2006):
        stream = generate_stream(seed, CFG)
        ep = paper.episode(stream, 10.0, 3)
        texts = [ep.system_prompt(), ep.reask_text(1), ep.reask_text(2)]
        texts += [t.description for t in ep.tools()]
        texts += [json.dumps(t.parameters) for t in ep.tools()]
        game = Game(stream, budget=3)
        for t, cls in enumerate(stream.classes):
            turn = game.turn()
            text = ep.begin_turn(turn, 3)
            texts.append(text)
            seen.setdefault(cls, set()).add(text.splitlines()[1].split(" ")[0])
            assert text.startswith(f"PROBLEM {t + 1} of 60:\n")
            game.step(False)
        for text in texts:
            assert NAMES.search(text) is None, NAMES.search(text)
    # The wording is drawn per occurrence: some class shows more than one opening.
    assert any(len(openings) > 1 for openings in seen.values())


def test_system_prompt_and_task_are_the_papers() -> None:
    framing = BuildFraming(sandbox=Sandbox(), state_cost=False)
    stream = generate_stream(2000, CFG)
    ep = framing.episode(stream, 0.0, 3)
    text = ep.system_prompt()
    assert text.startswith("You will answer 60 numeric word problems, ONE AT A TIME.")
    assert "You may write at most 3 scripts for the WHOLE session" in text
    assert "HARD cap of 300,000 total tokens (input + output, summed across all turns)" in text
    assert "Every tool result shows tokens_remaining." in text
    assert "Problem types remain hidden and unlabeled." in text
    assert "exactly 8 distinct underlying TYPES" in text
    assert "cost" not in text
    turn = Game(stream).turn()
    task = ep.begin_turn(turn, 3)
    instance = episode_instances(stream)[0]
    # The paper's own first problem of seed 2000, named as the paper names its values.
    assert instance.inputs == {"X": 32586213, "A": 11, "B": 9, "C": 17, "K": 14}
    assert "A 32-bit register holds X = 32586213. Repeat 14 times:" in task
    assert f"are: {instance.inputs!r} (keys: [X, A, B, C, K])." in task
    digits = len(str(instance.answer))
    assert task.endswith(
        f"Give your final answer to {digits} significant figures, then call submit_answer "
        "with that number."
    )
    described = {t.name: t.description for t in ep.tools()}
    assert "\n    def solve(inputs: dict) -> float:\n" in described["write_script"]
    assert "5s CPU, 1GiB RAM" in described["write_script"]


def test_charge_sentence() -> None:
    stream = generate_stream(2000, CFG)
    charged = get_framing("r3").episode(stream, 10.0, 3).system_prompt()
    assert "Each successful write_script call also costs 10 point(s)" in charged
    # At K = 0 the paper's R3 prompt states no charge; state_cost=True states it anyway.
    assert "cost" not in get_framing("r3").episode(stream, 0.0, 3).system_prompt()
    stated = get_framing("r3", state_cost=True).episode(stream, 0.0, 3).system_prompt()
    assert "costs 0 point(s)" in stated


def test_the_reader_recovers_family_and_inputs(paper: BuildFraming) -> None:
    reader = paper.reader()
    assert isinstance(reader, PaperProblemReader)
    for seed in (2000, 2001):
        stream = generate_stream(seed, CFG)
        ep = paper.episode(stream, 0.0, 3)
        game = Game(stream, budget=3)
        for t, cls in enumerate(stream.classes):
            (event,) = reader.read(ep.begin_turn(game.turn(), 3))
            assert (event.number, event.label) == (t + 1, family_for_class(cls).name)
            assert not event.auto and event.budget_left is None  # the paper never says it
            assert event.inputs == episode_instances(stream)[t].inputs
            game.step(False)


def test_econbench_r3_is_unchanged() -> None:
    snapshot = json.loads(SNAPSHOT.read_text())
    framing = BuildFraming(sandbox=Sandbox(), protocol="econbench")
    for key, cost in (("k0", 0.0), ("k10", 10.0)):
        stream = generate_stream(2000, CFG)
        ep = framing.episode(stream, cost, 3)
        assert ep.system_prompt() == snapshot[key]["system"]
        assert ep.begin_turn(Game(stream, cost=cost, budget=3).turn(), 3) == snapshot[key]["task"]
        assert [t.openai_schema() for t in ep.tools()] == snapshot[key]["tools"]
    assert framing.max_calls_per_turn == 12 and framing.no_call_attempts == 1
    assert framing.token_cap_counts == "output" and framing.min_call_tokens == 0


# -- tools ------------------------------------------------------------------------------------


def test_submit_answer_says_only_recorded(paper: BuildFraming) -> None:
    stream = generate_stream(2000, CFG)
    turn = Game(stream).turn()
    answer = instance_for(2000, 0, turn.cls).answer
    results = []
    for value in (answer, answer + 1):
        ep = paper.episode(stream, 0.0, 3)
        ep.note_reply(299_000, False)
        ep.begin_turn(turn, 3)
        results.append(ep.toolkit.call("submit_answer", {"value": value}))
        assert ep.turn_over()
    right, wrong = results
    assert right == wrong
    assert right == {
        "ok": True,
        "message": "Recorded answer for problem 0. 59 problem(s) remaining.",
        "problems_remaining": 59,
        "tokens_remaining": 299_000,
    }
    last = Game(stream)
    while last.t < 59:
        last.step(False)
    ep = paper.episode(stream, 0.0, 3)
    ep.begin_turn(last.turn(), 3)
    said = ep.toolkit.call("submit_answer", {"value": 1})["message"]
    assert said == "Recorded answer for problem 59. That was the last problem."


def test_script_tools_answer_as_the_paper(paper: BuildFraming) -> None:
    stream = generate_stream(2000, CFG)
    ep = paper.episode(stream, 0.0, 3)
    game = Game(stream)
    first = game.turn()
    family = family_for_class(first.cls)
    ep.begin_turn(first, 3)
    call = ep.toolkit.call
    assert call("run_script", {"name": "x"}) == {
        "ok": False,
        "error": "no script named 'x'. Available: (none)",
    }
    assert call("write_script", {"name": "", "code": "x"})["error"] == (
        "name must be a non-empty string"
    )
    written = call("write_script", {"name": "mine", "code": "print(1)"})
    assert written["ok"] and written["writes_remaining"] == 2
    assert "does not define `def solve(inputs):`" in written["message"]
    replaced = call("write_script", {"name": "mine", "code": family.reference_code})
    assert replaced["message"].startswith("Replaced script 'mine'")
    assert replaced["writes_remaining"] == 1 and replaced["scripts"] == ["mine"]
    params = instance_for(2000, 0, first.cls).params
    ran = call("run_script", {"name": "mine", "inputs": params})
    assert ran["ok"] and ran["return_value"] == instance_for(2000, 0, first.cls).answer
    assert call("list_scripts", {}) == {"ok": True, "scripts": ["mine"], "writes_remaining": 1}
    assert call("read_script", {"name": "mine"})["code"] == family.reference_code
    assert call("nope", {})["error"].startswith("no such tool 'nope'")
    nan = call("run_script", {"name": "mine", "inputs": {"x": float("nan")}})
    # The paper's harness writes the inputs as a Python literal: a NaN is the name ``nan``.
    assert nan == {
        "ok": False,
        "error": "exit 1: NameError: name 'nan' is not defined -- all inputs live in the inputs "
        "dict (e.g. inputs['X']); there are no bare top-level variables.",
        "stdout": "",
    }
    listed = call("run_script", {"name": "mine", "inputs": [1, 2]})
    assert listed["ok"] is False and "inputs must be a JSON object" in listed["error"]
    assert "tokens_remaining" not in ran  # no reply seen yet: nothing to show
    outcome = ep.end_turn("no_call")  # one build and one rebuild on this problem
    assert outcome.commit and outcome.rebuilds == 1 and outcome.resolved


def _scripted(steps_for: Callable[[int, str], list[Any]]) -> Any:
    """Per problem ``q`` (1-based, by order asked) with text ``text``: the tool calls to make,
    one per reply (``"run"`` runs script ``s`` on the problem's inputs, ``"submit"`` submits
    the last run's output); then it answers -1."""
    state: dict[str, Any] = {"q": 0, "steps": []}

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        fresh = [i for i in inputs if not isinstance(i, ToolResult)]
        if fresh and fresh[-1].text.startswith("PROBLEM"):
            state["q"] += 1
            state["steps"] = [*steps_for(state["q"], fresh[-1].text), "answer"]
        step = state["steps"].pop(0) if state["steps"] else "answer"
        if step == "run":
            call = ToolCall("run_script", {"name": "s", "inputs": _inputs(_problem(history))})
        elif step == "submit":
            out = next(i for i in reversed(inputs) if isinstance(i, ToolResult))
            call = ToolCall("submit_answer", {"value": out.result.get("return_value", -1)})
            state["steps"] = []
        elif step == "answer":
            call = ToolCall("submit_answer", {"value": -1})
        else:
            call = step
        return Reply(tool_calls=[call])

    return _actor(plan)


def _stream_with_repeat() -> Any:
    """A stream whose first class recurs and whose second problem is another class."""
    for seed in range(2000, 2050):
        s = generate_stream(seed, CFG)
        if s.classes.count(s.classes[0]) >= 3 and s.classes[1] != s.classes[0]:
            return s
    raise AssertionError("no suitable stream")


def test_a_rewrite_later_spends_budget_and_k(paper: BuildFraming) -> None:
    stream = _stream_with_repeat()
    c0 = stream.classes[0]
    again = stream.classes.index(c0, 1)
    good = family_for_class(c0).reference_code
    bad = "def solve(inputs):\n    return 7\n"

    def steps(q: int, text: str) -> list[Any]:
        if q == 1:
            return [ToolCall("write_script", {"name": "s", "code": bad}), "run", "submit"]
        if q == again + 1:
            return [ToolCall("write_script", {"name": "s", "code": good}), "run", "submit"]
        return []

    ep = play_episode(paper, _scripted(steps), stream, cost=2.0)
    assert [(c.t, c.cls, c.first_sight) for c in ep.result.commits] == [(0, c0, True)]
    assert ep.result.rebuilds == 1 and ep.result.unused_budget == 1
    assert ep.result.utility == ep.result.collected - 2 * 2.0
    later = next(t for t in ep.record["turns"] if t["t"] == again)
    assert later["kind"] == "reuse" and later["rebuilds"] == 1 and later["resolved"]
    assert [w["build"] for w in later["writes"]] == ["rebuild"]
    write = _calls(ep, again)[0]["result"]
    assert write["ok"] and write["writes_remaining"] == 1
    r3 = ep.record["r3"]
    assert r3["writes"] == 2 and r3["rebuilds"] == 1 and r3["session_end"] == "stream_end"
    # The rewritten script is right: the later occurrence is credited, the first is not.
    assert r3["submits_correct"] == 1
    assert r3["realised_utility"] == 1 - 2 * 2.0


def test_a_script_runs_only_on_its_type_and_a_rewrite_rebinds_it(paper: BuildFraming) -> None:
    stream = _stream_with_repeat()
    c0, c1 = stream.classes[0], stream.classes[1]
    again = stream.classes.index(c0, 1)
    code = family_for_class(c0).reference_code

    def steps(q: int, text: str) -> list[Any]:
        if q == 1:
            return [ToolCall("write_script", {"name": "s", "code": code})]
        if q == 2:  # another type: the run is refused, then the name is rebound here
            return ["run", ToolCall("write_script", {"name": "s", "code": code})]
        if q == again + 1:
            return ["run"]
        return []

    ep = play_episode(paper, _scripted(steps), stream)
    refused = _calls(ep, 1)[0]["result"]
    assert refused["ok"] is False and "bound to a different hidden problem type" in refused["error"]
    assert [(c.t, c.cls) for c in ep.result.commits] == [(0, c0), (1, c1)]
    assert _calls(ep, again)[0]["result"]["ok"] is False  # "s" now belongs to c1's type
    assert ep.record["r3"]["cross_type_refused"] == 2
    assert ep.record["r3"]["scripts"] == {"s": {"family": family_for_class(c1).name, "writes": 2}}


# -- session end ------------------------------------------------------------------------------


def test_the_session_ends_when_the_budget_is_spent(paper: BuildFraming) -> None:
    stream = generate_stream(2000, CFG)
    factory = PolicyActorFactory("eager", CFG)
    actors: list[Any] = []

    def make(info: Any) -> Any:
        actors.append(factory(info))
        return actors[-1]

    ep = play_episode(paper, make, stream)
    last = ep.result.commits[-1].t
    assert len(ep.result.commits) == 3 and ep.result.unused_budget == 0
    # The third write's reply is the last thing the model is asked for.
    assert [c["name"] for c in _calls(ep, last)] == ["write_script"]
    assert all(t["kind"] == "after_end" for t in ep.record["turns"] if t["t"] > last)
    assert all("replies" not in t for t in ep.record["turns"] if t["t"] > last)
    r3 = ep.record["r3"]
    assert r3["session_end"] == "budget"
    # The problem on screen and the later ones of built types are valued by running the
    # scripts: the reference scripts are right, so every collected one is credited.
    assert r3["auto_runs"] == r3["auto_correct"] == ep.result.collected - 2
    assert r3["realised_utility"] == ep.result.collected


def test_a_second_answer_in_one_reply_answers_the_next_problem_unseen(paper: BuildFraming) -> None:
    """As the paper's driver does: both answers are recorded, the problem between is never
    shown, and the next observation is the problem after it, behind both results."""
    stream = generate_stream(2000, CFG)
    answers = [inst.answer for inst in episode_instances(stream)]
    shown: list[str] = []

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        text = _problem(history)
        shown.append(text.split(":", 1)[0])
        if text.startswith("PROBLEM 1 of"):  # answer problem 1, then (unseen) problem 2
            calls = [
                ToolCall("submit_answer", {"value": answers[0]}, "a"),
                ToolCall("submit_answer", {"value": answers[1]}, "b"),
            ]
            return Reply(tool_calls=calls)
        return Reply(tool_calls=[ToolCall("submit_answer", {"value": -1}, "c")])

    ep = play_episode(paper, _actor(plan), stream)
    assert shown[:2] == ["PROBLEM 1 of 60", "PROBLEM 3 of 60"]
    first, second, third = ep.record["turns"][:3]
    results = [c["result"] for c in first["replies"][0]["tool_calls"]]
    assert [r["message"] for r in results] == [
        "Recorded answer for problem 0. 59 problem(s) remaining.",
        "Recorded answer for problem 1. 58 problem(s) remaining.",
    ]
    assert second["observation"] is None and second["replies"] == []
    assert second["submitted"] == {"answer": answers[1], "credited": True}
    assert second["resolved"] is True and second["decision"] == "pass"
    assert third["observation"].startswith("PROBLEM 3 of 60")
    assert ep.record["r3"]["submits_correct"] == 2


def test_silence_is_reminded_once_then_unanswered(paper: BuildFraming) -> None:
    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        return Reply(text="Let me think about this by hand.")

    ep = play_episode(paper, _actor(plan), generate_stream(2000, CFG))
    first = ep.record["turns"][0]
    assert len(first["replies"]) == 2 and first["replies"][0]["reasked"] == render(
        "r3_paper_reask_1"
    )
    assert first["decision"] == "pass" and first["resolved"] is False
    assert "no tool call" in first["reason"]
    assert ep.record["unresolved_turns"] == 60 and ep.result.commits == []


def test_the_token_cap_counts_input_and_output(paper: BuildFraming) -> None:
    stream = generate_stream(2000, CFG)
    usage = {"input_tokens": 1000, "cached_input_tokens": 900, "output_tokens": 100}
    for protocol, counted in (("paper", 1100), ("econbench", 100)):
        framing = BuildFraming(sandbox=Sandbox(), protocol=protocol)
        s = _Session(framing, framing.episode(stream, 0.0, 3), Game(stream), None)
        s.count(usage)
        assert s.tokens_used() == counted and s.tokens_left() == 300_000 - counted
    # An Anthropic reply's input as its API counts it: cache reads and writes left out, as the
    # paper's client added it up (OpenAI's prompt count includes its cached part).
    anthropic = {**usage, "cache_write_tokens": 50}
    assert anthropic_input_tokens(anthropic) == 50
    s = _Session(paper, paper.episode(stream, 0.0, 3), Game(stream), None)
    s.count({**anthropic, "api_input_tokens": anthropic_input_tokens(anthropic)})
    assert s.tokens_used() == 150
    capped = BuildFraming(sandbox=Sandbox())
    capped.episode_max_tokens = 5000  # five replies of 1,100 tokens pass it
    calls: list[int] = []

    def make(info: Any) -> Any:
        def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
            calls.append(1)
            return Reply(tool_calls=[ToolCall("submit_answer", {"value": -1})], usage=usage)

        return FunctionActor(plan)

    ep = play_episode(capped, make, stream)
    assert len(calls) == 5
    shown = [_calls(ep, t)[0]["result"]["tokens_remaining"] for t in range(5)]
    assert shown == [3900, 2800, 1700, 600, 0]
    assert ep.record["r3"]["session_end"] == "token_cap"
    assert all(t["kind"] == "after_end" and "replies" not in t for t in ep.record["turns"][5:])
    assert ep.record["unresolved_turns"] == 0  # answered problems are resolved, the rest unasked


def test_a_reply_s_limit_shrinks_to_what_is_left_of_the_cap(paper: BuildFraming) -> None:
    """The paper's driver asks for max(64, min(max_tokens, tokens left)) a reply."""
    usage = {"input_tokens": 99_000, "output_tokens": 100}
    limits: list[int] = []

    class Limited(FunctionActor):
        def limit_reply(self, tokens: int) -> None:
            limits.append(tokens)

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        return Reply(tool_calls=[ToolCall("submit_answer", {"value": -1})], usage=usage)

    play_episode(paper, lambda info: Limited(plan), generate_stream(2000, CFG))
    assert limits == [300_000, 200_900, 101_800, 2_700]


def test_a_model_s_reply_limit_is_the_smaller_of_its_own_and_what_is_left() -> None:
    from econbench.agents.models.registry import ModelSettings, register_scripted
    from econbench.allo.episodes.actors import EpisodeInfo
    from econbench.runs.allo.llm_actor import LLMActorFactory

    model = register_scripted("r3-limits", lambda messages, tools: "ok")
    stream = generate_stream(2000, CFG)
    framing = BuildFraming(sandbox=Sandbox())
    for settings, wanted in (
        (ModelSettings(), [4096, 2700]),
        (ModelSettings(max_tokens=1000), [1000, 1000]),
    ):
        factory = LLMActorFactory(model, settings)
        try:
            actor = factory(EpisodeInfo(stream.seed, framing, 0.0, 3, stream))
            actor.start("allo", "allo", [], system_prompt="s", max_tokens=framing.max_tokens)
            got = []
            for left in (300_000, 2_700):
                actor.limit_reply(left)
                got.append(actor.agent.config.max_tokens)
            assert got == wanted
        finally:
            factory.close()


def test_the_cap_stops_a_problem_mid_way(paper: BuildFraming) -> None:
    capped = BuildFraming(sandbox=Sandbox())
    capped.episode_max_tokens = 2000
    usage = {"input_tokens": 900, "output_tokens": 100}

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        return Reply(tool_calls=[ToolCall("list_scripts", {})], usage=usage)

    ep = play_episode(capped, _actor(plan), generate_stream(2000, CFG))
    first = ep.record["turns"][0]
    assert len(first["replies"]) == 2 and first["resolved"] is False
    assert first["reason"] == "episode token limit reached"
    assert [c["result"]["tokens_remaining"] for c in _calls(ep, 0)] == [1000, 0]
    assert len([t for t in ep.record["turns"] if "replies" in t]) == 1


# -- reference policies -----------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["eager", "wait:2", "bayes"])
def test_reference_policies_play_the_same_game_under_both_protocols(spec: str) -> None:
    stream = generate_stream(2003, SMALL)
    factory = PolicyActorFactory(spec, SMALL)
    played = {
        protocol: play_episode(BuildFraming(sandbox=Sandbox(), protocol=protocol), factory, stream)
        for protocol in ("paper", "econbench")
    }
    paper, econbench = played["paper"], played["econbench"]
    assert paper.result.to_dict() == econbench.result.to_dict()
    assert paper.record["unresolved_turns"] == econbench.record["unresolved_turns"] == 0
    assert paper.record["r3"]["realised_utility"] == econbench.record["r3"]["realised_utility"]
    assert paper.record["r3"]["realised_utility"] > 0
    asked = [
        [(t["t"], t["commit"]) for t in e.record["turns"] if t["kind"] == "decision"]
        for e in (paper, econbench)
    ]
    assert asked[0] == asked[1]
