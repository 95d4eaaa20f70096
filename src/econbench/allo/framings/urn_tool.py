"""R0 as a tool call (framing ``r0-tool``): the paper's keep/pass tool-call probe.

The paper's ``scripts/ladder/urn_tool_session.py`` plays R0's urn — the same streams, the same
B, the same scoring, one decision per draw — but the decision is a call of one of two
argument-free tools, ``keep`` or ``pass``, instead of a ``DECISION:`` line. It isolates the
decision *modality* (text vs tool call) from the vocabulary (the reskins compose with it). The
texts are ``urn_paper``'s with two changes (``prompts/r0_tool_*.md``):

- the system prompt's closing paragraph is the paper's ``TOOL_RESPONSE_INSTRUCTION`` ("For each
  draw, decide by calling EXACTLY ONE tool: keep or pass. …");
- a draw ends "Call the keep tool or the pass tool to decide." instead of "KEEP or PASS?".

The tools (``urn_tool_session.tool_schemas``): ``keep`` and ``pass``, schema exactly
``{"type": "object", "properties": {}}``, their descriptions in the skin's words ("Keep the coin
currently shown. …"). ``tool_choice`` is the paper's per-model default: ``"auto"`` (its Claude
runs, the frontier condition) or ``"required"`` (its local Qwen runs); the framing carries it
for the model client (``Framing.tool_choice``).

Turn rules (the paper's ``urn_common.resolve_zero_arg_decision``, ``decision_calls``: single
pass, no re-ask):

- exactly one of ``keep``/``pass`` (other calls aside) decides the draw; its result is
  ``{"ok": true}``;
- both called: the *first* one in call order is applied, the other is answered ``{"ok": false,
  "error": "both keep and pass called in the same turn; only the first ('KEEP') was applied."}``
  and the turn counts as unresolved (the paper's ``unparsed``, ``how="both"``) although its
  decision stands;
- a call of any other name is answered ``{"ok": false, "error": "no such tool 'x'. Available
  tools: keep, pass."}``; only such calls: an unresolved PASS (``how="unknown"``);
- no tool call at all: an unresolved PASS (``how="default"``); the reply stays in the
  conversation and the next draw follows, as the paper's messages do.

Every call gets its result, in call order (``render_result``: ``json.dumps`` as the paper writes
it). The session ends at the last keep, as in R0. Protocol "paper" only: econbench's earlier
protocol has no tool-call urn.
"""

from __future__ import annotations

import json
from typing import Any

from econbench.agents.tools import ToolCall, ToolSpec
from econbench.allo.framings.base import (
    CallPlan,
    Framing,
    FramingEpisode,
    ObservationReader,
    TurnOutcome,
    check_protocol,
    render,
)
from econbench.allo.framings.decision_calls import (
    EMPTY_SCHEMA,
    OK,
    no_such_tool,
    plan_decision,
    several_decisions,
)
from econbench.allo.framings.registry import register
from econbench.allo.framings.urn import default_state_cost, get_skin
from econbench.allo.framings.urn_paper import (
    PaperUrnEpisode,
    PaperUrnReader,
    PaperVocab,
    paper_vocab,
)
from econbench.allo.game.stream import Stream

TOOL_NAMES = ("keep", "pass")
"""``(commit, decline)``: the paper's ``valid_names``; the decline side is the default."""
TOOL_CHOICES = ("auto", "required")


def _not_executed(**_: Any) -> dict[str, Any]:  # pragma: no cover - the episode answers calls
    raise RuntimeError("the r0-tool episode answers keep/pass itself")


def tool_specs(vocab: PaperVocab) -> list[ToolSpec]:
    """``keep`` and ``pass`` in ``vocab``'s words, each with the paper's empty schema."""
    words = {"item": vocab.item, "attr": vocab.attr}
    return [
        ToolSpec(
            name=name,
            kind="write",
            description=render(f"r0_tool_{name}", **words),
            undocumented=[],
            fn=_not_executed,
        ).with_schema(dict(EMPTY_SCHEMA))
        for name in TOOL_NAMES
    ]


def both_error(decision: str) -> dict[str, Any]:
    """The result of a second decision call in one reply (``decision``: the applied one)."""
    return several_decisions(decision.upper(), TOOL_NAMES)


def unknown_error(name: str) -> dict[str, Any]:
    """The result of a call of a tool that does not exist."""
    return no_such_tool(name, TOOL_NAMES)


class UrnToolEpisode(PaperUrnEpisode):
    """One episode of the keep/pass tool-call probe (see the module docstring)."""

    response_prompt = "r0_tool_response"
    decision_prompt = "r0_tool_decision"

    def __init__(self, framing: Framing, stream: Stream, cost: float, budget: int, **kw: Any):
        super().__init__(framing, stream, cost, budget, **kw)
        self._specs = tool_specs(self.vocab)
        self._decision: bool | None = None
        self._how = "default"

    def tools(self) -> list[ToolSpec]:
        return list(self._specs)

    def begin_turn(self, turn: Any, budget_left: int) -> str:
        self._decision, self._how = None, "default"
        return super().begin_turn(turn, budget_left)

    def plan_calls(self, calls: list[ToolCall]) -> CallPlan:
        plan, self._how = plan_decision(calls, TOOL_NAMES)
        return plan

    def execute(self, call: ToolCall) -> dict[str, Any]:
        """The deciding call: arguments are ignored (the tools take none), as the paper's are."""
        self._decision = call.name == TOOL_NAMES[0]
        return dict(OK)

    def turn_over(self) -> bool:
        return self._decision is not None

    def end_turn(self, why: str) -> TurnOutcome:
        if self._decision is not None:
            commit = self._decision
            how = self._how
            reason = None if how == "tool" else "both keep and pass called in one reply"
            return TurnOutcome(
                commit,
                how == "tool",
                reason,
                record={"parsed": "KEEP" if commit else "PASS", "how": how},
            )
        if why == "unknown":
            how, reason = "unknown", "only unknown tools called"
        elif why == "token_limit":
            how, reason = "default", "episode token limit reached"
        else:
            how, reason = "default", "reply without a tool call"
        return TurnOutcome(False, False, reason, record={"parsed": "PASS", "how": how})


@register
class UrnToolFraming(Framing):
    """``r0-tool``: R0's urn decided by a ``keep`` or ``pass`` tool call (the paper's probe)."""

    name = "r0-tool"
    order = 9  # a probe of R0, listed after the ladder (as reports always have)
    title = "urn (keep/pass tool call)"
    label = "R0 keep/pass tool call"
    takes_skin = True
    uses_tools = True
    max_tokens = 512
    max_calls_per_turn = 1
    no_call_attempts = 1
    reply_style = "keep"

    def __init__(
        self,
        skin: str = "default",
        state_cost: bool | None = None,
        protocol: str = "paper",
        announce_n: bool = True,
        tool_choice: str | None = "auto",
    ) -> None:
        """``skin``, ``state_cost`` and ``announce_n`` as R0's (``UrnFraming``; the paper's
        probe ran with ``--announce-n`` and no charge). ``tool_choice``: what the model client
        is told (``"auto"``: the paper's Claude runs; ``"required"``: its local Qwen runs;
        ``None``: nothing sent)."""
        if check_protocol(protocol) != "paper":
            raise ValueError("r0-tool is the paper's probe: protocol 'paper' only")
        if tool_choice is not None and tool_choice not in TOOL_CHOICES:
            raise ValueError(f"tool_choice must be one of {', '.join(TOOL_CHOICES)} or None")
        self.skin = get_skin(skin)
        self.protocol = protocol
        self.state_cost = bool(default_state_cost(protocol) if state_cost is None else state_cost)
        self.announce_n = bool(announce_n)
        self.tool_choice = tool_choice
        self.vocab = paper_vocab(self.skin.name)

    def episode(self, stream: Stream, cost: float, budget: int) -> FramingEpisode:
        n = stream.config.n_classes
        if n > len(self.vocab.palette):
            raise ValueError(
                f"the {self.skin.name} skin has {len(self.vocab.palette)} labels; {n=}"
            )
        return UrnToolEpisode(
            self,
            stream,
            cost,
            budget,
            vocab=self.vocab,
            state_cost=self.state_cost,
            announce_n=self.announce_n,
        )

    def reader(self) -> ObservationReader:
        """The paper's R0 reader: a draw reads as in R0 up to "You have n keep(s) left."."""
        return PaperUrnReader(self.vocab.item)

    def render_result(self, result: dict[str, Any]) -> str:
        """A tool result as the paper sends it: ``json.dumps``, keys in the order built."""
        return json.dumps(result)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "skin": self.skin.name,
            "state_cost": self.state_cost,
            "announce_n": self.announce_n,
        }
