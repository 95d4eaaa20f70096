"""What every framing (docs/allobench.md §4) shares: prompt templates, turn outcomes, episode API.

A *framing* renders the same game (``econbench.allo.game.Game``) in some language — balls in a
bag, problem families with a decide-only tool, code, real scripts. The runner
(``econbench.allo.episodes.runner``) owns the game and the actor; a framing only

- writes the system prompt and the observation text of every turn,
- exposes its tools (a ``Toolkit``) and says when a decision turn is over and what was decided,
- describes the automatic turns (a class that already has a tool) as one-line notices.

Prompt text lives in ``econbench/allo/prompts/*.md`` (``string.Template`` syntax, ``$name``), so
researchers can read and diff it without reading code.

Each framing also ships an :class:`ObservationReader`, the parser a scripted actor uses to read
the observation texts: reference policies see exactly what a model sees and nothing else.

Every framing is built for one *protocol* (:data:`PROTOCOLS`): ``"paper"`` (the default) renders
the texts and turn rules of the AlloBench paper's own harness, ``"econbench"`` the texts and rules
econbench used before (kept byte for byte so earlier runs stay comparable). A protocol's turn
limits live on the framing object (``max_calls_per_turn``, ``no_call_attempts``,
``keeps_no_call_replies``, ``prunes_last_no_call_reply``), how a model is asked and how it reads a
tool result on the framing too (``tool_choice``, ``render_result``), and its reply handling on the
episode (``plan_calls``, ``execute``, ``reask_text``, ``observation``), so the runner and the model
actor apply whatever the framing says without knowing protocol names.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from string import Template
from typing import Any, ClassVar

from econbench.agents.tools import ToolCall, Toolkit, ToolSpec
from econbench.allo.framings.registry import ReplyStyle
from econbench.allo.game import Turn
from econbench.allo.game.stream import Stream

PROTOCOLS: tuple[str, ...] = ("paper", "econbench")
"""``paper``: the AlloBench paper's texts and turn rules (default); ``econbench``: econbench's
earlier texts and rules, unchanged."""

IGNORED = {
    "status": "error",
    "error": "ignored: only the first tool call of a reply is executed; call one tool at a time",
}


def check_protocol(protocol: str) -> str:
    """``protocol`` if it names a protocol; otherwise ``ValueError`` listing the choices."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    return protocol


@cache
def prompt(name: str) -> Template:
    """The prompt template ``prompts/<name>.md`` (trailing whitespace stripped)."""
    text = resources.files("econbench.allo").joinpath("prompts", f"{name}.md").read_text("utf-8")
    return Template(text.rstrip())


def render(template: str, **values: Any) -> str:
    """Fill the prompt template ``template``; a missing value is a bug and raises ``KeyError``."""
    return prompt(template).substitute(**{k: str(v) for k, v in values.items()})


def plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 keep"``, ``"2 keeps"``."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def format_cost(cost: float) -> str:
    """A charge as people write it: ``10`` not ``10.0``, ``2.5`` stays."""
    return str(int(cost)) if float(cost).is_integer() else repr(float(cost))


@dataclass
class TurnOutcome:
    """How a decision turn ended.

    ``commit`` is what the game is told; ``resolved`` is False when the actor's reply could not
    be read as a decision (it then counts as PASS); ``rebuilds`` are R3 overwrites to charge
    after the commit; ``record`` holds framing-specific fields for the per-turn log.
    """

    commit: bool
    resolved: bool = True
    reason: str | None = None
    rebuilds: int = 0
    record: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallPlan:
    """Which tool call of a reply runs: ``run`` (an index, or None for none) and the results
    the other calls get. When none runs, the turn ends with ``end_turn(why)``."""

    run: int | None
    refusals: dict[int, dict[str, Any]] = field(default_factory=dict)
    why: str = "call_limit"


@dataclass
class AutoTurn:
    """An automatic turn (the class already has a tool): its notice and log fields."""

    notice: str
    record: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReaderEvent:
    """One turn as a reader recovers it from observation text."""

    number: int  # 1-based turn number as printed ("Draw 5 of 60" -> 5)
    n_tasks: int
    label: str | None  # the class as the text names or shows it; None: the text does not say
    auto: bool  # a notice about an automatic turn, not a question
    budget_left: int | None = None  # on decision turns
    inputs: dict[str, Any] | None = None  # R2/R3: the instance inputs


class ObservationReader:
    """Parses observation texts of one framing into :class:`ReaderEvent`s.

    ``labels`` are the class labels the system prompt lists; a turn line starts with
    ``head`` (a regex with groups ``number`` and ``n_tasks``) followed by text naming exactly
    one label. Lines that are not turn lines are ignored.
    """

    _BUDGET = re.compile(r"You have (\d+) \w+ left")
    _INPUTS = re.compile(r"^Inputs \([^)]*\): (\{.*\})\s*$", re.M)

    def __init__(self, labels: list[str], head: str, whole_word: bool = True) -> None:
        self.labels = list(labels)
        self._head = re.compile(head)
        by_length = sorted(self.labels, key=len, reverse=True)
        alternatives = "|".join(re.escape(x) for x in by_length)
        pattern = rf"\b({alternatives})\b" if whole_word else rf"({alternatives})"
        self._label = re.compile(pattern)

    def read(self, text: str) -> list[ReaderEvent]:
        lines = text.splitlines()
        heads = [(i, m) for i, line in enumerate(lines) if (m := self._head.match(line))]
        events: list[ReaderEvent] = []
        for k, (i, m) in enumerate(heads):
            end = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
            block = "\n".join(lines[i:end])
            rest = lines[i][m.end() :]
            found = self._label.search(rest)
            if found is None:
                raise ValueError(f"no class label in turn line {lines[i]!r}")
            budget = self._BUDGET.search(block)
            inputs = self._INPUTS.search(block)
            events.append(
                ReaderEvent(
                    number=int(m.group("number")),
                    n_tasks=int(m.group("n_tasks")),
                    label=found.group(1),
                    auto=budget is None,
                    budget_left=int(budget.group(1)) if budget else None,
                    inputs=json.loads(inputs.group(1)) if inputs else None,
                )
            )
        return events


class FramingEpisode(ABC):
    """One episode of one framing: its prompt, tools and per-turn state.

    The runner calls ``begin_turn`` for every decision turn, then either ``outcome_from_text``
    (framings without tools) or the toolkit and ``turn_over``/``end_turn``; it calls
    ``auto_turn`` for every automatic turn, with ``told=False`` once the session is over.
    """

    toolkit: Toolkit | None = None
    asks_tooled_turns: ClassVar[bool] = False
    """Whether a class that already has a tool is still asked about (the paper's R3: the model
    runs its own script on later problems) instead of being collected with a notice."""
    asks_after_budget: bool = False
    """Whether the turns after the budget is spent are asked too (the paper's R3 with
    ``--full-stream``: the model keeps running its scripts and answering, writes refused)
    instead of being scored unasked."""

    def __init__(self, framing: Framing, stream: Stream, cost: float, budget: int) -> None:
        self.framing = framing
        self.stream = stream
        self.cost = float(cost)
        self.budget = budget
        self.turn: Turn | None = None

    @property
    def n_tasks(self) -> int:
        return self.stream.config.n_tasks

    @abstractmethod
    def system_prompt(self) -> str: ...

    def tools(self) -> list[ToolSpec]:
        return self.toolkit.specs() if self.toolkit is not None else []

    @abstractmethod
    def label(self, cls: int) -> str:
        """The name of class ``cls`` in records (and in the texts, where the framing names it)."""

    @abstractmethod
    def begin_turn(self, turn: Turn, budget_left: int) -> str:
        """Start a decision turn; return its observation text."""

    @abstractmethod
    def auto_turn(self, turn: Turn, told: bool) -> AutoTurn:
        """Handle an automatic turn; ``told`` is False after the session has ended."""

    def auto_turns(self, turns: list[Turn], told: bool) -> list[AutoTurn]:
        """Several consecutive automatic turns (a framing may batch or parallelise them)."""
        return [self.auto_turn(turn, told) for turn in turns]

    def observation(self, notices: list[str], text: str) -> str:
        """The user turn of a decision: the automatic turns' notices, then the question."""
        return "\n".join([*notices, text])

    def plan_calls(self, calls: list[ToolCall]) -> CallPlan:
        """Which call of a reply to execute: the first; the others are ignored."""
        return CallPlan(0, {i: IGNORED for i in range(1, len(calls))})

    def execute(self, call: ToolCall) -> dict[str, Any]:
        """Run one tool call through the toolkit."""
        assert self.toolkit is not None
        return self.toolkit.call(call.name, call.arguments)

    def reask_text(self, attempt: int) -> str:  # pragma: no cover - framings that re-ask
        """What to send after the ``attempt``-th reply without a tool call (1-based), when the
        framing allows another attempt (``Framing.no_call_attempts``)."""
        raise NotImplementedError(f"{self.framing.name} does not re-ask")

    def outcome_from_text(self, text: str) -> TurnOutcome:  # pragma: no cover - tool framings
        raise NotImplementedError(f"{self.framing.name} decides through tools")

    def turn_over(self) -> bool:
        """Whether the tool calls so far have ended the current turn."""
        return False

    def end_turn(self, why: str) -> TurnOutcome:  # pragma: no cover - text framings
        """Close the turn: ``why`` is "tool", "no_call", "call_limit", "token_limit" or a
        ``CallPlan.why``."""
        raise NotImplementedError

    def note_reply(self, tokens_left: int | None, over_cap: bool) -> None:  # noqa: B027 - optional hook
        """Told after every reply: the episode's tokens left under ``episode_max_tokens``
        (None without a cap) and whether the cap is reached (the paper's R3 shows the first in
        every tool result and ends the session at the second)."""

    def answered_unseen(self, turn: Turn) -> bool:
        """Whether ``turn`` was answered before it was shown (the paper's R3: a second
        ``submit_answer`` in one reply answers the next problem); the runner then closes it
        with ``end_unseen`` instead of asking it."""
        return False

    def end_unseen(self, turn: Turn) -> TurnOutcome:
        """Close a turn that ``answered_unseen`` says was answered before it was shown."""
        raise NotImplementedError

    def session_over(self) -> bool:
        """Whether the framing has ended the session early (the paper's R3: budget spent, token
        cap, reply limit); the runner then scores every remaining turn without asking."""
        return False

    def episode_record(self) -> dict[str, Any]:
        """Framing-specific fields of the episode record (R3 adds its scores)."""
        return {}


class Framing(ABC):
    """A rung of the ladder: its name, protocol, limits and how to start an episode.

    A concrete framing declares ``name``, ``order``, ``title``, ``label`` and ``reply_style``
    and registers with ``@register`` (``registry.py``): that is all the rest of econbench
    reads of it.

    ``max_tokens`` is the per-reply limit handed to ``Actor.start``; ``episode_max_tokens``
    caps an episode's total usage (R3); ``max_calls_per_turn`` bounds tool calls per turn;
    ``no_call_attempts`` is how many replies without a tool call a turn takes (the turn is
    re-asked with ``reask_text`` until then) before it is an unresolved PASS. A re-asked reply
    is retracted from the actor's context (with the reminder before it), as the paper's
    ``--empty-fence-retry`` prunes it, unless ``keeps_no_call_replies`` (the paper's R3 without
    that flag keeps it and appends the reminder); the last reply without a call stays, unless
    ``prunes_last_no_call_reply`` (the paper's R3 with the flag prunes that one too). A framing
    that sets them per protocol sets them on the instance.
    """

    name: ClassVar[str]
    """The framing's key: what ``--framing`` takes and records store (``"r2"``)."""
    order: ClassVar[int]
    """Its place on the ladder: reports and tables list framings by it (R0 = 0 … R3 = 3)."""
    title: ClassVar[str]
    """What it is, in a few words (stored in every config's ``describe``)."""
    label: ClassVar[str]
    """How tables name it (``"R2 code"``)."""
    reply_style: ClassVar[ReplyStyle]
    """What a scripted actor sends on a decision turn (:data:`registry.ReplyStyle`)."""
    takes_skin: ClassVar[bool] = False
    """Whether ``get_framing`` passes it the R0 ``skin`` (the urn's vocabulary)."""
    uses_tools: ClassVar[bool] = True
    max_tokens: ClassVar[int]
    episode_max_tokens: ClassVar[int | None] = None
    max_calls_per_turn: int = 1
    no_call_attempts: int = 1
    keeps_no_call_replies: bool = False
    """A re-asked reply without a tool call stays in the actor's context (not retracted)."""
    prunes_last_no_call_reply: bool = False
    """The reply that ends a turn without a tool call is retracted too (with its reminder)."""
    tool_choice: str | None = None
    """What a model is asked to do with the tools: ``"auto"``, ``"required"``, or ``None`` (not
    sent: the provider's default). A model's own ``tool_choice`` setting wins."""
    token_cap_counts: str = "output"
    """What ``episode_max_tokens`` counts: ``"output"`` (generated tokens) or
    ``"input+output"`` (the input tokens as each provider's API reports them, plus the
    generated ones: OpenAI's count includes cached prompt tokens, Anthropic's excludes cache
    reads and writes, as the paper's client read them)."""
    min_call_tokens: int = 0
    """The cap is reached when fewer tokens than this (at least 1) remain."""
    reply_limit_floor: int | None = None
    """With an episode cap, each reply's token limit shrinks to what is left of the cap, but
    not below this (the paper's R3 asks for ``max(64, min(max_tokens, remaining))``); None:
    the limit never shrinks."""
    protocol: str = "paper"

    @abstractmethod
    def episode(self, stream: Stream, cost: float, budget: int) -> FramingEpisode: ...

    @abstractmethod
    def reader(self) -> ObservationReader: ...

    def render_result(self, result: dict[str, Any]) -> str:
        """A tool result as the text a model reads (the model actor sends it): JSON with sorted
        keys. The paper's framings send what the paper's harness sent."""
        return json.dumps(result, sort_keys=True, default=repr)

    def describe(self) -> dict[str, Any]:
        """The framing's settings, for configs and summaries (the context rules and the tool
        choice only where they differ from the defaults, so earlier configs read the same)."""
        settings: dict[str, Any] = {
            "framing": self.name,
            "protocol": self.protocol,
            "title": self.title,
            "max_tokens": self.max_tokens,
            "episode_max_tokens": self.episode_max_tokens,
            "max_calls_per_turn": self.max_calls_per_turn,
            "no_call_attempts": self.no_call_attempts,
        }
        if self.keeps_no_call_replies:
            settings["keeps_no_call_replies"] = True
        if self.prunes_last_no_call_reply:
            settings["prunes_last_no_call_reply"] = True
        if self.tool_choice is not None:
            settings["tool_choice"] = self.tool_choice
        return settings
