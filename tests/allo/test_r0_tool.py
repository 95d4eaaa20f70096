"""The keep/pass tool-call probe (framing ``r0-tool``): the paper's ``urn_tool_session``
rules, texts and tools (``test_r0_requests`` replays the paper's captured requests)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from econbench.agents.policy import Input, Reply, ToolResult, UserText
from econbench.agents.tools import ToolCall
from econbench.allo.episodes.runner import play_episode
from econbench.allo.framings import FRAMINGS, get_framing
from econbench.allo.framings.urn_paper import PaperUrnReader
from econbench.allo.framings.urn_tool import (
    EMPTY_SCHEMA,
    UrnToolFraming,
    both_error,
    unknown_error,
)
from econbench.allo.game import Game
from econbench.allo.game.stream import StreamConfig, generate_stream
from econbench.allo.solvers.policies import make_policy
from econbench.allo.solvers.policies import play_episode as play_bare

CFG = StreamConfig()


def test_the_tools_and_texts() -> None:
    framing = get_framing("r0-tool", skin="quiver")
    assert "r0-tool" in FRAMINGS and isinstance(framing, UrnToolFraming)
    ep = framing.episode(generate_stream(2000, CFG), 0.0, 3)
    keep, skip = ep.tools()
    assert (keep.name, skip.name) == ("keep", "pass")
    assert keep.parameters == skip.parameters == EMPTY_SCHEMA
    assert list(keep.openai_schema()["function"]["parameters"]) == ["type", "properties"]
    assert keep.description.startswith("Keep the arrow currently shown.")
    assert "of the same feather drawn later" in keep.description
    assert skip.description == "Pass on the arrow currently shown. It is gone; it scores nothing."
    system = ep.system_prompt()
    assert system.endswith("but you must still call keep or pass.")
    assert "DECISION: KEEP" not in system and "also costs" not in system
    assert "There are exactly 8 distinct feathers in the quiver" in system
    text = ep.begin_turn(Game(generate_stream(2000, CFG)).turn(), 3)
    assert text.endswith("You have 3 keep(s) left. Call the keep tool or the pass tool to decide.")
    assert text.startswith("Draw 1 of 60: a hawk arrow appears.")
    no_n = get_framing("r0-tool", announce_n=False).episode(generate_stream(2000, CFG), 0.0, 3)
    assert "You do not know in advance how many colors" in no_n.system_prompt()
    charged = get_framing("r0-tool").episode(generate_stream(2000, CFG), 10.0, 3)
    assert "also costs 10 point(s)" in charged.system_prompt()
    settings = framing.describe()
    assert settings["framing"] == "r0-tool" and settings["tool_choice"] == "auto"
    assert settings["skin"] == "quiver" and settings["state_cost"] is False
    assert get_framing("r0-tool", tool_choice="required").describe()["tool_choice"] == "required"
    assert "tool_choice" not in get_framing("r0-tool", tool_choice=None).describe()


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="protocol 'paper' only"):
        get_framing("r0-tool", protocol="econbench")
    with pytest.raises(ValueError, match="tool_choice"):
        get_framing("r0-tool", tool_choice="any")
    with pytest.raises(ValueError, match="unknown skin"):
        get_framing("r0-tool", skin="casino")


def _play(replies: list[Reply], seed: int = 2000) -> tuple[Any, list[list[Input]]]:
    """Play an episode whose actor answers ``replies`` in turn (then passes)."""
    got: list[list[Input]] = []

    class Scripted:
        name = "scripted"

        def start(self, *args: Any, **kw: Any) -> None:
            pass

        def respond(self, inputs: Sequence[Input]) -> Reply:
            got.append(list(inputs))
            k = len(got) - 1
            if k < len(replies):
                return replies[k]
            return Reply(text="", tool_calls=[ToolCall("pass", {}, f"p{k}")])

    framing = get_framing("r0-tool")
    ep = play_episode(framing, lambda info: Scripted(), generate_stream(seed, CFG))
    return ep, got


def _results(inputs: list[Input]) -> list[dict[str, Any]]:
    return [item.result for item in inputs if isinstance(item, ToolResult)]


def test_decision_rules_are_the_papers() -> None:
    """One call decides; both: the first applies but the turn is unresolved; unknown tools are
    answered and, alone, an unresolved PASS; no call: an unresolved PASS, no re-ask."""
    replies = [
        Reply(text="", tool_calls=[ToolCall("keep", {"x": 1}, "a"), ToolCall("pass", {}, "b")]),
        Reply(text="hm", tool_calls=[ToolCall("look", {}, "c")]),
        Reply(text="Just thinking."),
        Reply(text="", tool_calls=[ToolCall("dance", {}, "d"), ToolCall("keep", {}, "e")]),
    ]
    ep, got = _play(replies)
    decisions = [t for t in ep.record["turns"] if t["kind"] == "decision"]
    first, second, third, fourth = decisions[:4]
    assert (first["commit"], first["resolved"], first["how"]) == (True, False, "both")
    assert (second["commit"], second["resolved"], second["how"]) == (False, False, "unknown")
    assert (third["commit"], third["resolved"], third["how"]) == (False, False, "default")
    assert (fourth["commit"], fourth["resolved"], fourth["how"]) == (True, True, "tool")
    assert all(len(t["replies"]) == 1 for t in decisions)  # never re-asked
    assert _results(got[1]) == [{"ok": True}, both_error("keep")]
    assert both_error("keep")["error"] == (
        "both keep and pass called in the same turn; only the first ('KEEP') was applied."
    )
    assert _results(got[2]) == [unknown_error("look")]
    assert unknown_error("look") == {
        "ok": False,
        "error": "no such tool 'look'. Available tools: keep, pass.",
    }
    assert _results(got[3]) == []  # a reply without a call leaves nothing owed
    assert _results(got[4]) == [unknown_error("dance"), {"ok": True}]
    assert [c["sighting"] for c in ep.record["commits"]] == [first["sighting"], fourth["sighting"]]
    assert ep.record["unresolved_turns"] == 3


def test_results_read_as_the_paper_writes_them() -> None:
    framing = get_framing("r0-tool")
    assert framing.render_result({"ok": True}) == '{"ok": true}'
    assert framing.render_result(both_error("pass")).startswith('{"ok": false, "error": "both')


def test_the_session_ends_at_the_last_keep() -> None:
    keeps = [Reply(text="", tool_calls=[ToolCall("keep", {}, f"k{i}")]) for i in range(3)]
    ep, got = _play(keeps)
    assert len(got) == 3 and len(ep.result.commits) == 3
    assert [t["kind"] for t in ep.record["turns"]].count("decision") == 3


@pytest.mark.parametrize("policy", ["eager", "wait:2", "bayes", "hindsight"])
def test_a_reader_driven_actor_scores_the_bare_game(policy: str) -> None:
    """The reader recovers every draw from the texts (notices of automatic draws included),
    so a policy that decides from them makes the bare game's decisions."""

    class ReaderActor:
        name = policy

        def __init__(self, stream: Any) -> None:
            self.reader = PaperUrnReader("ball")
            self.policy = make_policy(policy, CFG)
            self.policy.reset(stream)
            self.game = Game(stream)
            self.names: dict[str, int] = {}
            self.n = 0

        def start(self, *args: Any, **kw: Any) -> None:
            pass

        def respond(self, inputs: Sequence[Input]) -> Reply:
            texts = [i.text for i in inputs if isinstance(i, UserText)]
            events = [e for text in texts for e in self.reader.read(text)]
            for event in events:  # replay the draws the text tells into a private game
                assert event.number == self.game.t + 1
                cls = self.game.turn().cls  # one name per class, always the same
                assert self.names.setdefault(event.label, cls) == cls
                if event.auto:
                    self.game.step(False)
            decision = events[-1]
            assert not decision.auto and decision.budget_left == self.game.budget_left
            commit = bool(self.policy.decide(self.game.view()))
            self.game.step(commit)
            self.n += 1
            return Reply(
                text="", tool_calls=[ToolCall("keep" if commit else "pass", {}, str(self.n))]
            )

    framing = get_framing("r0-tool")
    for seed in (2000, 2003, 5001):
        stream = generate_stream(seed, CFG)
        ep = play_episode(framing, lambda info, s=stream: ReaderActor(s), stream)
        bare = play_bare(make_policy(policy, CFG), stream)
        assert ep.result.to_dict() == bare.to_dict(), (policy, seed)
        assert ep.record["unresolved_turns"] == 0
