"""R0, the urn (spec §4): balls of 8 colours, KEEP or PASS in free text.

Class ``c`` is shown as ``skin.labels[c]`` (the stream already shuffles which classes are hot,
so a fixed class→label map hides nothing). Skins change only the vocabulary
(``prompts/skins.toml``): bag/ball/colour, treasure chest/coin/crest, quiver/arrow/feather,
cauldron/potion/label; the numbers, the structure and the decision words stay the same.

Automatic turns are *batched*: the draws of already-kept colours since the last question are
shown as one-line notices ("Draw 7 of 60: a red ball appears — you already keep red:
collected.") at the top of the next question, so a model is asked only when it must decide;
each such draw still gets its own per-turn record.

The reply parser (:func:`parse_decision`) follows the paper's rule
(``scripts/ladder/urn_session.py`` ``parse_decision``), in priority order:

1. ``tag``: the **last** ``DECISION: KEEP|PASS`` anywhere in the reply (case ignored; as in the
   paper no word boundary follows, so "DECISION: KEEPING" reads KEEP and "DECISION: KEEP or PASS"
   reads KEEP). Before matching, markdown emphasis/code marks (``* _ ` # >``) are removed and
   full-width colons normalised, so "**DECISION:** PASS" is a tag too — the only place this parser
   is more lenient than the paper's (the paper would reach the same word through step 3 unless an
   earlier bare KEEP/PASS appears).
2. ``lead``: a KEEP/PASS token leading the reply (after any non-word characters).
3. ``scan``: the first standalone KEEP/PASS token anywhere.

A reply with none of these — no KEEP/PASS token at all, a refusal, an empty reply — counts as
PASS and is flagged unresolved (the paper's ``default``), with the reason recorded.

Protocols: R0 plays the same under ``"paper"`` and ``"econbench"`` — the parser above is the
paper's and, like the paper's urn, an unparseable reply is never re-asked. Its texts are
econbench's own wording of the same game (the paper's ``urn_common.render_system`` differs in
phrasing: it lists no colours, names colours in order of first appearance, words the charge
sentence and the automatic-turn notices differently); the protocol is recorded, the texts do not
change with it.
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
    check_protocol,
    format_cost,
    plural,
    render,
)
from econbench.allo.game import Turn
from econbench.allo.stream import Stream

# -- the reply parser ------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedDecision:
    """A reply read as a decision: ``keep`` (False = PASS), resolved, why not, and how it was read.

    ``how`` is the paper's label: ``tag``, ``lead``, ``scan`` or ``default`` (unresolved).
    """

    keep: bool
    resolved: bool
    reason: str | None = None
    how: str = "default"

    @property
    def word(self) -> str:
        return "KEEP" if self.keep else "PASS"


_MARKUP = re.compile(r"[*_`#>~]")
_TAG = re.compile(r"DECISION:\s*(KEEP|PASS)", re.I)
_LEAD = re.compile(r"[\W]*(KEEP|PASS)\b", re.I)
_SCAN = re.compile(r"\b(KEEP|PASS)\b", re.I)


def parse_decision(text: str | None) -> ParsedDecision:
    """Read a free-text R0 reply as the paper does; unparseable replies are an unresolved PASS."""
    t = (text or "").strip()
    if not t:
        return ParsedDecision(False, False, "empty reply")
    hits = _TAG.findall(_MARKUP.sub("", t).replace("：", ":"))
    if hits:
        return ParsedDecision(hits[-1].lower() == "keep", True, None, "tag")
    lead = _LEAD.match(t)
    if lead:
        return ParsedDecision(lead.group(1).lower() == "keep", True, None, "lead")
    scan = _SCAN.search(t)
    if scan:
        return ParsedDecision(scan.group(1).lower() == "keep", True, None, "scan")
    return ParsedDecision(False, False, "no KEEP/PASS token")


# -- skins -----------------------------------------------------------------------------------


def article(word: str) -> str:
    """ "a" or "an" before ``word`` (the paper's ``urn_common._art``: "an arrow", not "a arrow")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


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
        return Template(self.sighting).substitute(label=label, a=article(label))

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
        if self.cost > 0 or self.framing.state_cost:
            # As the paper's economic surface (urn_common.render_system with charge=0): the
            # sentence is there at K = 0 too ("costs 0 points"), so the prompt's structure is the
            # same in every charge cell.
            amount = format_cost(self.cost)
            cost_rule = " " + render(
                "r0_cost_rule", cost=amount, points="point" if amount == "1" else "points"
            )
        n = self.stream.config.n_classes
        return render(
            "r0_system",
            container=s.container,
            a_container=article(s.container),
            a_label_kind=article(s.label_kind),
            items=s.items,
            items_cap=s.items.capitalize(),
            item=s.item,
            a_item=article(s.item),
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
            record={"parsed": parsed.word, "how": parsed.how},
        )


class UrnFraming(Framing):
    """R0: the urn, in one of the skins."""

    name = "r0"
    title = "urn (free-text KEEP/PASS)"
    uses_tools = False
    max_tokens = 512
    max_calls_per_turn = 1
    reply_style = "text"

    def __init__(
        self, skin: str = "default", state_cost: bool = True, protocol: str = "paper"
    ) -> None:
        """``state_cost``: state the keep charge even at K = 0 (the paper's economic-surface
        prompt); False states it only when K > 0 (the paper's K = 0 framing-ladder prompt,
        ``render_system`` with ``charge=None``, has no cost sentence). ``protocol`` is recorded
        only: R0's texts and rules are the same under both (see the module docstring)."""
        self.skin = get_skin(skin)
        self.state_cost = bool(state_cost)
        self.protocol = check_protocol(protocol)

    def episode(self, stream: Stream, cost: float, budget: int) -> UrnEpisode:
        n = stream.config.n_classes
        if n > len(self.skin.labels):
            raise ValueError(f"the {self.skin.name} skin has {len(self.skin.labels)} labels; {n=}")
        return UrnEpisode(self, stream, cost, budget)

    def reader(self) -> ObservationReader:
        return ObservationReader(list(self.skin.labels), _R0_HEAD)

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "skin": self.skin.name, "state_cost": self.state_cost}
