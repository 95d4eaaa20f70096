"""R0 under protocol "paper" renders the paper's urn texts byte for byte; "econbench" keeps
econbench's R0 texts exactly as they were before the protocols split R0.

Fixtures: ``data/r0_paper_prompts.json`` holds the paper's ``render_system`` outputs and the
per-turn prompts of a few stored paper sessions (``data/make_r0_paper_fixture.py``);
``data/r0_econbench_snapshot.json`` holds econbench's R0 texts captured before the change (every
skin, B in {1, 3, 5}, K in {0, 10, 24}, the charge stated or not at K = 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from econbench.allo.episodes.actors import PolicyActorFactory, Reply
from econbench.allo.episodes.runner import play_episode
from econbench.allo.framings import SKIN_NAMES, get_framing
from econbench.allo.framings.urn_paper import (
    PaperUrnReader,
    first_appearance_labels,
    paper_vocab,
)
from econbench.allo.game.stream import Stream, StreamConfig, generate_stream
from econbench.allo.solvers.policies import make_policy
from econbench.allo.solvers.policies import play_episode as play_bare

DATA = Path(__file__).parent / "data"
PAPER = json.loads((DATA / "r0_paper_prompts.json").read_text(encoding="utf-8"))
SNAPSHOT = json.loads((DATA / "r0_econbench_snapshot.json").read_text(encoding="utf-8"))
SKIN_OF_VOCAB = {paper_vocab(s).vocab: s for s in SKIN_NAMES}
PRE_ARTICLE_FIX = {"runs/urn_haiku_n-announced/seed_2000"}
"""Stored sessions run before the paper's ``_art`` fix: they read "a orange ball" where the
paper's code (and econbench) write "an orange ball"."""


class Recorder:
    """Answers with a fixed sequence of KEEP/PASS words and records what it was sent."""

    name = "recorder"

    def __init__(self, words: list[str]) -> None:
        self.words = list(words)
        self.system = ""
        self.turns: list[str] = []

    def start(self, actor_id: str, role: str, tools: Any, **options: Any) -> None:
        self.system = options["system_prompt"]

    def respond(self, inputs: Any) -> Reply:
        self.turns.append("\n".join(i.text for i in inputs))
        word = self.words[len(self.turns) - 1] if len(self.turns) <= len(self.words) else "PASS"
        return Reply(text=f"Thinking it over.\nDECISION: {word}")


def _charge_options(charge: int | None) -> dict[str, Any]:
    """The paper's ``charge`` as econbench's (cost, state_cost): None is K = 0 unstated."""
    return {"cost": float(charge or 0), "state_cost": charge is not None}


# -- protocol "econbench" is unchanged --------------------------------------------------------


def _econbench_texts(skin: str, cost: float, budget: int, state_cost: bool) -> Recorder:
    """Play the snapshot's scripted episode (KEEP on the replies ``keep_at``)."""
    keep_at = set(SNAPSHOT["keep_at"])
    words = ["KEEP" if i + 1 in keep_at else "PASS" for i in range(60)]
    actor = Recorder(words)
    framing = get_framing("r0", skin=skin, protocol="econbench", state_cost=state_cost)
    stream = generate_stream(SNAPSHOT["seed"], StreamConfig())
    play_episode(framing, lambda info: actor, stream, cost=cost, budget=budget)
    return actor


@pytest.mark.parametrize("skin", SKIN_NAMES)
@pytest.mark.parametrize("budget", [1, 3, 5])
def test_econbench_r0_texts_are_the_ones_before_the_change(skin: str, budget: int) -> None:
    for k in (0, 10, 24):
        for stated in (True, False):
            actor = _econbench_texts(skin, float(k), budget, stated)
            key = f"{skin}/B{budget}/K{k}/{'stated' if stated else 'unstated'}"
            assert actor.system == SNAPSHOT["system"][key], key
            assert actor.turns == SNAPSHOT["turns"][f"{skin}/B{budget}"], key


def test_econbench_settings_are_unchanged() -> None:
    settings = get_framing("r0", protocol="econbench").describe()
    assert "announce_n" not in settings  # a saved econbench cell's config reads the same
    with pytest.raises(ValueError, match="protocol 'paper' only"):
        get_framing("r0", protocol="econbench", announce_n=False)


# -- protocol "paper" is the paper's ------------------------------------------------------------


@pytest.mark.parametrize(
    "cell", PAPER["systems"], ids=lambda c: f"{c['vocab']}-B{c['budget']}-K{c['charge']}"
)
def test_system_prompt_is_the_papers(cell: dict[str, Any]) -> None:
    opts = _charge_options(cell["charge"])
    framing = get_framing(
        "r0",
        skin=SKIN_OF_VOCAB[cell["vocab"]],
        state_cost=opts["state_cost"],
        announce_n=cell["announce_n"],
    )
    ep = framing.episode(generate_stream(2000, StreamConfig()), opts["cost"], cell["budget"])
    assert ep.system_prompt() == cell["text"]


def _stored_stream(session: dict[str, Any]) -> Stream:
    return Stream(
        seed=session["seed"],
        config=StreamConfig(),
        hot=tuple(session["hot"]),
        classes=tuple(session["classes"]),
    )


def _expected_prompts(session: dict[str, Any]) -> list[str]:
    prompts = [e["prompt"] for e in session["transcript"]]
    if session["source"] not in PRE_ARTICLE_FIX:
        return prompts
    fixed = [p.replace(" a orange ball", " an orange ball") for p in prompts]
    assert fixed != prompts  # the known difference is really there
    return fixed


@pytest.mark.parametrize("session", PAPER["sessions"], ids=lambda s: s["source"][5:])
def test_stored_sessions_replay_prompt_for_prompt(session: dict[str, Any]) -> None:
    """The paper's stored decisions, replayed through econbench's R0, get the very prompts the
    paper's harness sent (notices of automatic draws included, nothing after the last keep),
    and end with the paper's keeps and collections."""
    opts = _charge_options(session["charge"])
    framing = get_framing("r0", skin=session["skin"], state_cost=opts["state_cost"])
    actor = Recorder([e["decision"] for e in session["transcript"]])
    stream = _stored_stream(session)
    ep = play_episode(
        framing, lambda info: actor, stream, cost=opts["cost"], budget=session["budget"]
    )
    assert actor.turns == _expected_prompts(session)
    decisions = [t for t in ep.record["turns"] if t["kind"] == "decision"]
    assert [t["t"] for t in decisions] == [e["slot"] for e in session["transcript"]]
    kept = {t["cls"]: t["sighting"] for t in decisions if t["decision"] == "commit"}
    assert kept == {int(c): p for c, p in session["kept"].items()}
    assert ep.result.collected == session["collected"]
    labels = ep.record["stream"]["labels"]
    assert {str(c): labels[c] for c in set(stream.classes)} == session["color_of_class"]


def test_notices_share_the_line_of_the_next_question() -> None:
    session = next(s for s in PAPER["sessions"] if "K_10" in s["source"])
    prompts = [e["prompt"] for e in session["transcript"]]
    led = [p for p in prompts if p.startswith("(Since your last choice: draw ")]
    assert led and all("\n" not in p for p in prompts)
    assert "(already kept -> auto-collected, +1); draw " in led[0]


def test_labels_follow_first_appearance() -> None:
    palette = paper_vocab("default").palette
    names = first_appearance_labels([6, 0, 6, 4, 0], 8, palette)
    assert names[6] == "red" and names[0] == "blue" and names[4] == "green"
    assert [names[c] for c in (1, 2, 3, 5, 7)] == ["yellow", "purple", "orange", "black", "white"]
    with pytest.raises(ValueError, match="palette has 8"):
        first_appearance_labels([0], 9, palette)
    with pytest.raises(ValueError, match="8 labels"):
        get_framing("r0").episode(generate_stream(1, StreamConfig(n_classes=9)), 0.0, 3)


def test_reader_learns_the_names_from_the_draws() -> None:
    reader = PaperUrnReader("arrow")
    text = (
        "(Since your last choice: draw 7: another owl arrow (already kept -> auto-collected, +1);"
        " draw 8: another hawk arrow (already kept -> auto-collected, +1).) Draw 9 of 60: an eagle"
        " arrow appears. You have 1 keep(s) left. KEEP or PASS?"
    )
    events = reader.read(text)
    assert [(e.number, e.label, e.auto) for e in events] == [
        (7, "owl", True),
        (8, "hawk", True),
        (9, "eagle", False),
    ]
    assert events[-1].budget_left == 1 and {e.n_tasks for e in events} == {60}
    assert reader.labels == ["owl", "hawk", "eagle"]
    assert reader.read("Draw 1 of 60: a red ball appears.") == []  # another skin's item


@pytest.mark.parametrize("skin", SKIN_NAMES)
@pytest.mark.parametrize("policy", ["bayes", "wait:2", "posterior:0.2", "hindsight"])
def test_reference_policies_read_the_papers_texts(skin: str, policy: str) -> None:
    """The actors learn the names from the draws and score the bare game's results, with the
    charge stated or not."""
    cfg = StreamConfig()
    for cost, state_cost in ((0.0, False), (10.0, True)):
        framing = get_framing("r0", skin=skin, state_cost=state_cost)
        factory = PolicyActorFactory(policy, cfg, cost=cost)
        for seed in (2000, 2003):
            stream = generate_stream(seed, cfg)
            ep = play_episode(framing, factory, stream, cost=cost)
            bare = play_bare(make_policy(policy, cfg, cost=cost), stream, cost)
            assert ep.result.to_dict() == bare.to_dict(), (skin, policy, seed)
            assert ep.record["unresolved_turns"] == 0


def test_paper_settings_are_recorded() -> None:
    settings = get_framing("r0", announce_n=False).describe()
    assert settings["protocol"] == "paper" and settings["announce_n"] is False
    assert settings["skin"] == "default" and settings["state_cost"] is False
    # the frontier urn states no charge at K = 0; the economic surface and econbench's texts do
    assert get_framing("r0", state_cost=True).describe()["state_cost"] is True
    assert get_framing("r0", protocol="econbench").describe()["state_cost"] is True
