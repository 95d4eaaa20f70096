"""R0 under protocol "paper": the AlloBench paper's urn texts, word for word.

The texts are the paper's harness's (``scripts/ladder/urn_common.py`` ``render_system`` with
``announce_n=True``, its main "n-announced" condition, and the per-draw prompt of
``scripts/ladder/urn_session.py`` ``run_episode``), kept as templates in
``prompts/r0_paper_*.md``; ``tests/allo/test_r0_paper.py`` regenerates the prompts of stored
paper sessions byte for byte. What they say, and how that differs from econbench's own R0 texts:

- The system prompt lists no colours. With ``announce_n`` it states their number ("There are
  exactly 8 distinct colors in the bag"); without it, not even that (the paper's A0 condition).
- Classes are named in order of first appearance in the stream (the paper's ``color_of_class``):
  the first colour drawn is ``palette[0]``, the next new one ``palette[1]``, and so on, so a name
  says nothing about a class's rate. Classes never drawn take the remaining names in id order
  (the paper names only drawn ones; econbench's records name every class).
- Each skin maps onto one of the paper's vocabularies (``prompts/skins.toml``, ``[<skin>.paper]``):
  default → ball (bag, colored balls, color), chest → treasure_chest (coins, crest),
  quiver → quiver (arrows, feather), cauldron → cauldron (potions, label).
- A draw reads "Draw 9 of 60: a red ball appears. You have 2 keep(s) left. KEEP or PASS?".
  Draws of already-kept classes since the last question are reported on the same line in front
  of it: "(Since your last choice: draw 7: another red ball (already kept -> auto-collected,
  +1); draw 8: ….) Draw 9 of 60: …". Nothing is sent after the last keep: once the budget is
  spent the session ends and the rest of the stream is scored unseen (the runner does this for
  every protocol).
- The keep charge is the paper's economic-surface sentence ("KEEPing a ball also costs 10
  point(s), deducted once at the moment you KEEP it -- …"); ``state_cost`` keeps its meaning:
  stated at K = 0 too ("costs 0 point(s)", the economic surface's ``charge=0``) or left out there
  (the framing ladder's ``charge=None``: ``urn_session``, ``urn_tool_session`` and the RL
  rollouts, none of which states a charge). Under protocol "paper" the default is the ladder's
  (no sentence at K = 0); the economic surface passes ``state_cost=True``.
- The closing paragraph is the paper's ``response_instruction``: the DECISION-line instruction
  here (``prompts/r0_paper_response.md``), the tool-call instruction in the keep/pass tool-call
  probe (``urn_tool.py``); everything above it is the same text.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import ClassVar

from econbench.allo.framings.base import (
    AutoTurn,
    Framing,
    FramingEpisode,
    ObservationReader,
    ReaderEvent,
    TurnOutcome,
    format_cost,
    render,
)
from econbench.allo.framings.urn_parser import outcome_of_reply
from econbench.allo.game import Turn
from econbench.allo.game.stream import Stream


def article(word: str) -> str:
    """ "a" or "an" before ``word`` (the paper's ``urn_common._art``: "an arrow", not "a arrow")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


@dataclass(frozen=True)
class PaperVocab:
    """One of the paper's urn vocabularies (``urn_common.VOCAB[vocab]``)."""

    vocab: str
    vessel: str
    item: str
    attr: str
    adj: str
    palette: tuple[str, ...]


@cache
def paper_vocabs() -> dict[str, PaperVocab]:
    """The paper's vocabulary of every econbench skin, by skin name."""
    raw = resources.files("econbench.allo").joinpath("prompts", "skins.toml").read_text("utf-8")
    out: dict[str, PaperVocab] = {}
    for name, fields in tomllib.loads(raw).items():
        paper = fields["paper"]
        out[name] = PaperVocab(**{**paper, "palette": tuple(paper["palette"])})
    return out


def paper_vocab(skin: str) -> PaperVocab:
    """The paper's vocabulary for econbench skin ``skin``."""
    table = paper_vocabs()
    if skin not in table:
        raise ValueError(f"unknown skin {skin!r}; choose one of {', '.join(table)}")
    return table[skin]


def first_appearance_labels(
    classes: Sequence[int], n_classes: int, palette: Sequence[str]
) -> tuple[str, ...]:
    """The name of every class: ``palette`` in order of first appearance in ``classes`` (the
    paper's ``color_of_class``), then the classes never drawn in id order."""
    if n_classes > len(palette):
        raise ValueError(f"the palette has {len(palette)} names; {n_classes=}")
    order = list(dict.fromkeys(classes))
    order += [c for c in range(n_classes) if c not in order]
    names = [""] * n_classes
    for i, c in enumerate(order):
        names[c] = palette[i]
    return tuple(names)


class PaperUrnEpisode(FramingEpisode):
    """One R0 episode in the paper's words: free-text KEEP/PASS, no tools."""

    response_prompt: ClassVar[str] = "r0_paper_response"
    """The system prompt's closing paragraph (how to answer)."""
    decision_prompt: ClassVar[str] = "r0_paper_decision"
    """The per-draw question."""

    def __init__(
        self,
        framing: Framing,
        stream: Stream,
        cost: float,
        budget: int,
        *,
        vocab: PaperVocab,
        state_cost: bool,
        announce_n: bool,
    ) -> None:
        super().__init__(framing, stream, cost, budget)
        self.vocab = vocab
        self.state_cost = state_cost
        self.announce_n = announce_n
        self.names = first_appearance_labels(stream.classes, stream.config.n_classes, vocab.palette)

    def label(self, cls: int) -> str:
        return self.names[cls]

    def _words(self) -> dict[str, str]:
        v = self.vocab
        return {
            "vessel": v.vessel,
            "a_vessel": article(v.vessel),
            "item": v.item,
            "a_item": article(v.item),
            "item_cap": v.item[:1].upper() + v.item[1:],
            "attr": v.attr,
            "a_attr": article(v.attr),
            "adj": v.adj,
        }

    def system_prompt(self) -> str:
        words = self._words()
        cost_rule = ""
        if self.cost > 0 or self.state_cost:
            cost_rule = "\n\n" + render("r0_paper_cost_rule", cost=format_cost(self.cost), **words)
        note = "r0_paper_n_announced" if self.announce_n else "r0_paper_n_unknown"
        n_note = render(note, n_classes=self.stream.config.n_classes, **words)
        return render(
            "r0_paper_system",
            n_tasks=self.n_tasks,
            budget=self.budget,
            cost_rule=cost_rule,
            n_note=n_note,
            response_instruction=render(self.response_prompt),
            **words,
        )

    def begin_turn(self, turn: Turn, budget_left: int) -> str:
        self.turn = turn
        label = self.label(turn.cls)
        return render(
            self.decision_prompt,
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            a_label=article(label),
            label=label,
            item=self.vocab.item,
            keeps_left=budget_left,
        )

    def auto_turn(self, turn: Turn, told: bool) -> AutoTurn:
        notice = render(
            "r0_paper_auto", number=turn.t + 1, label=self.label(turn.cls), item=self.vocab.item
        )
        return AutoTurn(notice=notice)

    def observation(self, notices: list[str], text: str) -> str:
        """The question, led by the draws of kept classes since the last one, on one line."""
        if not notices:
            return text
        return render("r0_paper_since", notices="; ".join(notices), question=text)

    def outcome_from_text(self, text: str) -> TurnOutcome:
        return outcome_of_reply(text)


class PaperUrnReader(ObservationReader):
    """Reads the paper's R0 texts. The system prompt names no class, so the reader learns the
    names from the draws (``labels`` grows in order of first appearance)."""

    def __init__(self, item: str) -> None:
        self.labels: list[str] = []
        it = re.escape(item)
        self._question = re.compile(
            r"(?:\(Since your last choice: (?P<since>.*?)\.\) )?"
            rf"Draw (?P<number>\d+) of (?P<n_tasks>\d+): an? (?P<label>.+?) {it} appears\. "
            r"You have (?P<left>\d+) keep\(s\) left\."
        )
        self._auto = re.compile(
            rf"draw (?P<number>\d+): another (?P<label>.+?) {it} \(already kept -> auto-collected"
        )

    def _learn(self, label: str) -> str:
        if label not in self.labels:
            self.labels.append(label)
        return label

    def read(self, text: str) -> list[ReaderEvent]:
        events: list[ReaderEvent] = []
        for m in self._question.finditer(text):
            n_tasks = int(m.group("n_tasks"))
            for a in self._auto.finditer(m.group("since") or ""):
                label = self._learn(a.group("label"))
                events.append(ReaderEvent(int(a.group("number")), n_tasks, label, auto=True))
            events.append(
                ReaderEvent(
                    number=int(m.group("number")),
                    n_tasks=n_tasks,
                    label=self._learn(m.group("label")),
                    auto=False,
                    budget_left=int(m.group("left")),
                )
            )
        return events
