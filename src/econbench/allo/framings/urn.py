"""R0, the urn (spec §4): balls of 8 colours, KEEP or PASS in free text.

Class ``c`` is shown as ``skin.labels[c]`` (the stream already shuffles which classes are hot,
so a fixed class→label map hides nothing). Skins change only the vocabulary
(``prompts/skins.toml``): bag/ball/colour, treasure chest/coin/crest, quiver/arrow/feather,
cauldron/potion/label; the numbers, the structure and the decision words stay the same.

Automatic turns are *batched*: the draws of already-kept colours since the last question are
shown as one-line notices ("Draw 7 of 60: a red ball appears — you already keep red:
collected.") at the top of the next question, so a model is asked only when it must decide;
each such draw still gets its own per-turn record.

The reply parser (:func:`parse_decision`) is deliberately strict about *where* the decision is
and lenient about *how* it is typed:

1. Markdown emphasis/code marks (``* _ ` # >``) are removed, full-width colons normalised.
2. The decision is the **last** ``DECISION`` marker in the text, followed by an optional
   separator (``:``, ``=``, ``-``, dashes) and a word; matching ignores case.
3. That word must be KEEP or PASS (brackets and quotes around it are fine).
4. Nothing but punctuation/whitespace may follow it on its line ("DECISION: KEEP or PASS" and
   "DECISION: KEEP/PASS" are ambiguous), and no later line may contain a letter or digit
   (the reply must *end* with the decision).

Anything else — no marker, a refusal, an empty reply — counts as PASS and is flagged
unresolved, with the reason recorded.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

from econbench.allo.framings.base import (
    AutoTurn,
    Framing,
    FramingEpisode,
    ObservationReader,
    TurnOutcome,
    format_cost,
    plural,
    render,
)
from econbench.allo.game import Turn
from econbench.allo.stream import Stream

# -- the reply parser ------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedDecision:
    """A reply read as a decision: ``keep`` (False = PASS), resolved, and why not."""

    keep: bool
    resolved: bool
    reason: str | None = None

    @property
    def word(self) -> str:
        return "KEEP" if self.keep else "PASS"


_MARKUP = re.compile(r"[*_`#>~]")
_MARKER = re.compile(r"\bdecision\b\s*(?:[:=\-–—]+\s*)?[\[\(\"'“‘]*\s*([a-z]*)", re.I)
_ALNUM = re.compile(r"[^\W_]")


def parse_decision(text: str | None) -> ParsedDecision:
    """Read a free-text R0 reply; unparseable replies are an unresolved PASS."""
    if text is None or not text.strip():
        return ParsedDecision(False, False, "empty reply")
    clean = _MARKUP.sub("", text).replace("：", ":")
    matches = list(_MARKER.finditer(clean))
    if not matches:
        return ParsedDecision(False, False, "no DECISION line")
    last = matches[-1]
    word = last.group(1).lower()
    if word not in ("keep", "pass"):
        shown = last.group(1) or "nothing"
        return ParsedDecision(False, False, f"DECISION followed by {shown!r}, not KEEP or PASS")
    line_end = clean.find("\n", last.end())
    rest_of_line = clean[last.end() : None if line_end < 0 else line_end]
    if _ALNUM.search(rest_of_line):
        return ParsedDecision(False, False, f"ambiguous decision line: {rest_of_line.strip()!r}")
    after = "" if line_end < 0 else clean[line_end:]
    if _ALNUM.search(after):
        return ParsedDecision(False, False, "text after the DECISION line")
    return ParsedDecision(word == "keep", True, None)


# -- skins -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Skin:
    """The vocabulary of one urn reskin (see ``prompts/skins.toml``)."""

    name: str
    container: str
    item: str
    items: str
    label_kind: str
    label_kinds: str
    sighting: str
    label_ref: str
    labels: tuple[str, ...]

    def sighting_of(self, label: str) -> str:
        article = "an" if label[:1].lower() in "aeiou" else "a"
        return Template(self.sighting).substitute(label=label, a=article)

    def ref_of(self, label: str) -> str:
        return Template(self.label_ref).substitute(label=label)


@cache
def skins() -> dict[str, Skin]:
    """All skins by name, ``default`` first."""
    raw = resources.files("econbench.allo").joinpath("prompts", "skins.toml").read_text("utf-8")
    data = tomllib.loads(raw)
    out: dict[str, Skin] = {}
    for name, fields in data.items():
        out[name] = Skin(name=name, **{**fields, "labels": tuple(fields["labels"])})
    return out


SKIN_NAMES: tuple[str, ...] = ("default", "chest", "quiver", "cauldron")


def get_skin(name: str) -> Skin:
    table = skins()
    if name not in table:
        raise ValueError(f"unknown skin {name!r}; choose one of {', '.join(table)}")
    return table[name]


# -- the framing -----------------------------------------------------------------------------

_R0_HEAD = r"^Draw (?P<number>\d+) of (?P<n_tasks>\d+): "


class UrnEpisode(FramingEpisode):
    """One R0 episode: free-text KEEP/PASS, no tools."""

    framing: UrnFraming

    @property
    def skin(self) -> Skin:
        return self.framing.skin

    def label(self, cls: int) -> str:
        return self.skin.labels[cls]

    def system_prompt(self) -> str:
        s = self.skin
        cost_rule = ""
        if self.cost > 0:
            cost_rule = " " + render("r0_cost_rule", cost=format_cost(self.cost))
        n = self.stream.config.n_classes
        return render(
            "r0_system",
            container=s.container,
            items=s.items,
            items_cap=s.items.capitalize(),
            item=s.item,
            label_kind=s.label_kind,
            label_kinds=s.label_kinds,
            label_list=", ".join(s.labels[:n]),
            n_classes=n,
            n_tasks=self.n_tasks,
            budget=self.budget,
            keep_word="keep" if self.budget == 1 else "keeps",
            cost_rule=cost_rule,
        )

    def begin_turn(self, turn: Turn, budget_left: int) -> str:
        self.turn = turn
        return render(
            "r0_decision",
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            sighting=self.skin.sighting_of(self.label(turn.cls)),
            keeps_left=plural(budget_left, "keep"),
        )

    def auto_turn(self, turn: Turn, told: bool) -> AutoTurn:
        label = self.label(turn.cls)
        notice = render(
            "r0_auto",
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            sighting=self.skin.sighting_of(label),
            label_ref=self.skin.ref_of(label),
        )
        return AutoTurn(notice=notice)

    def outcome_from_text(self, text: str) -> TurnOutcome:
        parsed = parse_decision(text)
        return TurnOutcome(
            commit=parsed.keep,
            resolved=parsed.resolved,
            reason=parsed.reason,
            record={"parsed": parsed.word},
        )


class UrnFraming(Framing):
    """R0: the urn, in one of the skins."""

    name = "r0"
    title = "urn (free-text KEEP/PASS)"
    uses_tools = False
    max_tokens = 512
    max_calls_per_turn = 1
    reply_style = "text"

    def __init__(self, skin: str = "default") -> None:
        self.skin = get_skin(skin)

    def episode(self, stream: Stream, cost: float, budget: int) -> UrnEpisode:
        n = stream.config.n_classes
        if n > len(self.skin.labels):
            raise ValueError(f"the {self.skin.name} skin has {len(self.skin.labels)} labels; {n=}")
        return UrnEpisode(self, stream, cost, budget)

    def reader(self) -> ObservationReader:
        return ObservationReader(list(self.skin.labels), _R0_HEAD)

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "skin": self.skin.name}
