"""R0, the urn (docs/allobench.md §4): balls of 8 colours, KEEP or PASS in free text.

Two sets of texts, one game. Protocol ``"paper"`` (the default) renders the AlloBench paper's own
urn texts verbatim (``urn_paper.py``: its system prompt, per-draw prompt, notices of automatic
draws and colour naming by first appearance; its docstring lists what they say). Protocol
``"econbench"`` renders econbench's earlier wording of the same game, kept byte for byte
(``tests/allo/test_r0_paper.py`` checks both); this module holds those texts. Both share the
paper's reply parser (``urn_parser.py``), its no-re-ask rule and its 512-token reply limit, and
in both the session ends at the last keep (nothing more is sent; the rest is scored unseen).

What is left of a difference from the paper under ``"paper"``: none in the texts of the cells the
paper ran (``tests/allo/test_r0_paper.py`` regenerates its stored prompts byte for byte). The
paper's Haiku and Opus urn runs of seeds 2000-2011 (``urn_haiku``, ``urn_haiku_n-announced``,
``urn_opus_n-announced``) were run before its article fix and read "a orange ball"; its code and
every later run read "an orange ball", as econbench does. The reply parser also reads
"**DECISION:** PASS" as a tag (see ``urn_parser``); records name classes the stream never draws
(the paper names only drawn ones).

Which of the paper's urn conditions is played is a matter of options, whose defaults are the
frontier ladder's (``urn_session --announce-n``): ``announce_n`` (True; False is the no-N urn,
the RL pilot's Run 1), ``state_cost`` (no cost sentence at K = 0; the economic surface passes
True) and ``skin`` (the paper's ``--vocab``: default = ``ball``, chest = ``treasure_chest``,
quiver, cauldron). The keep/pass tool-call probe (``urn_tool_session``) is the framing
``r0-tool`` (``urn_tool.py``).

Protocol ``"econbench"``: class ``c`` is shown as ``skin.labels[c]`` (the stream already shuffles
which classes are hot, so a fixed class→label map hides nothing), and the system prompt lists the
labels. Skins change only the vocabulary (``prompts/skins.toml``): bag/ball/colour, treasure
chest/coin/crest, quiver/arrow/feather, cauldron/potion/label; the numbers, the structure and the
decision words stay the same. Automatic turns are *batched*: the draws of already-kept colours
since the last question are shown as one-line notices ("Draw 7 of 60: a red ball appears — you
already keep red: collected.") at the top of the next question, so a model is asked only when it
must decide; each such draw still gets its own per-turn record.
"""

from __future__ import annotations

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
from econbench.allo.framings.registry import register
from econbench.allo.framings.urn_paper import (
    PaperUrnEpisode,
    PaperUrnReader,
    article,
    paper_vocab,
)
from econbench.allo.framings.urn_parser import ParsedDecision, outcome_of_reply, parse_decision
from econbench.allo.game import Turn
from econbench.allo.game.stream import Stream

__all__ = [
    "SKIN_NAMES",
    "ParsedDecision",
    "Skin",
    "UrnEpisode",
    "UrnFraming",
    "article",
    "default_state_cost",
    "get_skin",
    "parse_decision",
    "skins",
]

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
        own = {k: v for k, v in fields.items() if k != "paper"}  # [<skin>.paper]: urn_paper.py
        out[name] = Skin(name=name, **{**own, "labels": tuple(own["labels"])})
    return out


SKIN_NAMES: tuple[str, ...] = ("default", "chest", "quiver", "cauldron")


def get_skin(name: str) -> Skin:
    table = skins()
    if name not in table:
        raise ValueError(f"unknown skin {name!r}; choose one of {', '.join(table)}")
    return table[name]


# -- the framing -----------------------------------------------------------------------------


def default_state_cost(protocol: str) -> bool:
    """Whether R0 states the keep charge at K = 0 when nothing says: not under "paper" (the
    framing ladder's ``charge=None``), yes under "econbench" (its texts as they were)."""
    return check_protocol(protocol) == "econbench"


_R0_HEAD = r"^Draw (?P<number>\d+) of (?P<n_tasks>\d+): "


class UrnEpisode(FramingEpisode):
    """One R0 episode in econbench's words (protocol "econbench"): free-text KEEP/PASS."""

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
        return outcome_of_reply(text)


@register
class UrnFraming(Framing):
    """R0: the urn, in one of the skins."""

    name = "r0"
    order = 0
    title = "urn (free-text KEEP/PASS)"
    label = "R0 urn"
    takes_skin = True
    uses_tools = False
    max_tokens = 512
    max_calls_per_turn = 1
    reply_style = "text"

    def __init__(
        self,
        skin: str = "default",
        state_cost: bool | None = None,
        protocol: str = "paper",
        announce_n: bool = True,
    ) -> None:
        """``state_cost``: state the keep charge even at K = 0 (the paper's economic-surface
        prompt, ``render_system`` with ``charge=0``); False states it only when K > 0 (the
        paper's framing-ladder prompt, ``charge=None``, has no cost sentence). ``None`` (the
        default) is the protocol's own: False under "paper" (the ladder's ``urn_session``, the
        frontier condition), True under "econbench" (its texts as they were). ``protocol``
        chooses the texts (see the module docstring). ``announce_n`` (protocol "paper" only):
        tell the number of colours (the paper's main condition, "n-announced"); False is its
        A0 condition (``urn_session`` without ``--announce-n``, the RL pilot's Run 1)."""
        self.skin = get_skin(skin)
        self.protocol = check_protocol(protocol)
        self.state_cost = bool(default_state_cost(protocol) if state_cost is None else state_cost)
        if not announce_n and self.protocol != "paper":
            raise ValueError("announce_n=False is an option of protocol 'paper' only")
        self.announce_n = bool(announce_n)
        self.vocab = paper_vocab(self.skin.name)

    def episode(self, stream: Stream, cost: float, budget: int) -> FramingEpisode:
        n = stream.config.n_classes
        names = self.vocab.palette if self.protocol == "paper" else self.skin.labels
        if n > len(names):
            raise ValueError(f"the {self.skin.name} skin has {len(names)} labels; {n=}")
        if self.protocol == "paper":
            return PaperUrnEpisode(
                self,
                stream,
                cost,
                budget,
                vocab=self.vocab,
                state_cost=self.state_cost,
                announce_n=self.announce_n,
            )
        return UrnEpisode(self, stream, cost, budget)

    def reader(self) -> ObservationReader:
        if self.protocol == "paper":
            return PaperUrnReader(self.vocab.item)
        return ObservationReader(list(self.skin.labels), _R0_HEAD)

    def describe(self) -> dict[str, object]:
        settings = {**super().describe(), "skin": self.skin.name, "state_cost": self.state_cost}
        if self.protocol == "paper":
            settings["announce_n"] = self.announce_n
        return settings
