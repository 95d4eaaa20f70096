"""R1 and R2 under the paper protocol: hidden problem types and the paper's turn rules.

What a model sees is what the paper's harness showed (``scripts/ladder/claim_solver_session.py``
for R1, ``claim_solver_code_session.py`` for R2; texts in ``prompts/r1_paper_*``,
``prompts/r2_paper_*``, ``prompts/solver_paper_*``):

- The system prompt says each problem has a *hidden type* and that exactly N types occur; it
  names no family. A task shows only the problem, worded by a cover drawn for the occurrence
  (``covers.py``): no title, no business story, no inputs line, no "exact integer".
- R1 restates "decide only -- do NOT compute an answer" in every task; its tools take no
  arguments (arguments a model passes anyway are ignored, as the paper's resolver ignores them).
- R2's ``claim_solver(code)`` accepts any non-empty code string: it is not parsed, run or
  checked, and nothing says so. The prompt asks for "a real, correct Python function
  ``def solve(inputs: dict) -> float``" (the paper's words).
- Automatic turns are told as the paper tells them, in one parenthesis before the next problem:
  "(Since your last choice: problem 7: another problem of an already-claimed type (auto-solved,
  +1 correct).)": the paper does not say which claimed type recurred.
- The cost sentence is the economic surface's (``run_economic_surface.py`` passes
  ``charge=K`` at every K, 0 included); the ladder's R1 and R2 state none. It is stated when
  K > 0, and at K = 0 too where ``state_cost`` (the surface); the default (the ladder) states
  none at K = 0. (The paper's R1 never had a charge; a charged R1 uses R2's sentence.)

Turn rules (the paper's resolvers ``urn_common.resolve_zero_arg_decision`` for R1 and
``claim_solver_code_session.resolve_code_claim_decision`` for R2, and their
``--empty-fence-retry`` loop):

- The first call to ``claim_solver`` or ``skip_solver`` in a reply decides the turn and is
  answered ``{"ok": true}``. Every other call to either of them (the other tool, or the same one
  again) is answered ``{"ok": false, "error": "both claim_solver and skip_solver called in the
  same turn; only the first ('CLAIM_SOLVER') was applied."}`` (R1 names the decision in upper
  case, R2 names the tool as called), and the turn, though decided, is unresolved (the paper's
  ``how = "both"`` counts among its unparsed decisions). A call to any other name is answered
  ``{"ok": false, "error": "no such tool 'x'. Available tools: claim_solver, skip_solver."}``;
  a reply with only such calls is an unresolved PASS.
- R1's tools take no arguments (arguments a model passes anyway are ignored, as the paper's
  resolver ignores them). R2's ``claim_solver`` needs a non-empty string ``code`` (it is not
  parsed, run or checked); without one the claim is answered ``{"ok": false, "error":
  "claim_solver requires a non-empty string `code` argument; no claim was registered."}`` and the
  turn is an unresolved PASS. No retry follows a call.
- A reply without any tool call (plain text or an empty reply) ends the turn as an unresolved
  PASS and stays in the context (the paper's frontier runs, ``no_call_attempts`` = 1, the
  default). With ``--empty-fence-retry N`` (its Qwen runs: ``no_call_attempts`` = N) the turn
  takes N replies in all: each re-asked reply is dropped from the actor's context when the actor
  can forget it (the paper prunes it, and the reminder before it), and the paper's reminder
  follows (first the format reminder, then the empty-fence one); the last reply and its reminder
  stay.
- Tool results are sent as the paper's ``json.dumps`` writes them (``render_result``), and the
  tool schemas are the paper's, byte for byte.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from econbench.agents.tools import ToolCall, ToolError, Toolkit, ToolSpec, tool
from econbench.allo.framings.base import (
    AutoTurn,
    CallPlan,
    Framing,
    FramingEpisode,
    ObservationReader,
    ReaderEvent,
    TurnOutcome,
    format_cost,
    render,
)
from econbench.allo.framings.covers import recognise, render_cover
from econbench.allo.framings.decision_calls import EMPTY_SCHEMA, OK, plan_decision
from econbench.allo.game import Turn
from econbench.allo.game.families import FAMILIES, Instance, family_for_class
from econbench.allo.game.instances import framing_instances
from econbench.allo.game.stream import Stream

PAPER_NO_CALL_ATTEMPTS = 1
"""Replies without a tool call a paper-protocol turn takes by default: one, as in the paper's
frontier runs (``--empty-fence-retry`` 0); its Qwen runs' ``--empty-fence-retry 4`` is 4."""

PAPER_TOOL_CHOICE = "auto"
"""The paper's tool choice for R1 and R2 (its scripts' default for Claude, the flag its GPT runs
passed; its local models ran with ``"required"``)."""
TOOL_CHOICES = ("auto", "required", None)

DECISION_TOOLS = ("claim_solver", "skip_solver")

NO_CODE = {
    "ok": False,
    "error": "claim_solver requires a non-empty string `code` argument; no claim was registered.",
}

CODE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "description": (
                "Python source defining `def solve(inputs: dict) -> float` that solves problems "
                "of this type."
            ),
        }
    },
    "required": ["code"],
}
"""The paper's tool schemas (``tool_schemas`` of its two scripts), key order included."""


class PaperToolkit(Toolkit):
    """Per-turn decision state of the paper's two tools; ``schemas`` are the schemas the paper
    sends (its descriptions are the methods' docstrings)."""

    schemas: ClassVar[dict[str, dict[str, Any]]] = {
        "claim_solver": EMPTY_SCHEMA,
        "skip_solver": EMPTY_SCHEMA,
    }

    def __init__(self) -> None:
        self.decision: bool | None = None
        self.code: str | None = None

    def reset(self) -> None:
        self.decision, self.code = None, None

    def _decide(self, commit: bool) -> dict[str, Any]:
        if self.decision is not None:
            raise ToolError("this problem is already decided")
        self.decision = commit
        return {}


class PaperClaimToolkit(PaperToolkit):
    """R1's tools, as the paper describes them."""

    @tool("write")
    def claim_solver(self) -> dict[str, Any]:
        """Claim a persistent solver for the problem currently shown. You immediately score
        this problem correct AND every remaining problem of the same hidden type presented
        later in the session, for free. Uses one of your solver claims."""
        return self._decide(True)

    @tool("write")
    def skip_solver(self) -> dict[str, Any]:
        """Skip the problem currently shown without claiming a solver. It scores zero."""
        return self._decide(False)


class PaperCodeToolkit(PaperToolkit):
    """R2's tools, as the paper describes them: a claim carries code, any non-empty code."""

    schemas: ClassVar[dict[str, dict[str, Any]]] = {
        "claim_solver": CODE_SCHEMA,
        "skip_solver": EMPTY_SCHEMA,
    }

    @tool("write")
    def claim_solver(self, code: str) -> dict[str, Any]:
        """Claim a persistent solver for the problem currently shown by providing real solver
        code. Immediately scores this problem correct AND every remaining problem of the same
        hidden type presented later in the session, for free. Uses one of your solver claims.

        Args:
            code: Python source defining `def solve(inputs: dict) -> float` that solves
                problems of this type.
        """
        if not code.strip():
            raise ToolError(
                "claim_solver requires a non-empty string `code` argument; no claim was registered."
            )
        result = self._decide(True)
        self.code = code
        return result

    @tool("write")
    def skip_solver(self) -> dict[str, Any]:
        """Skip the problem currently shown without claiming a solver. It scores zero."""
        return self._decide(False)


class PaperSolverEpisode(FramingEpisode):
    """An R1/R2 episode under the paper protocol (see the module docstring)."""

    rung: ClassVar[str] = "r1"
    claim_takes_code: ClassVar[bool] = False
    toolkit: PaperToolkit

    def __init__(self, framing: Framing, stream: Stream, cost: float, budget: int) -> None:
        super().__init__(framing, stream, cost, budget)
        if stream.config.n_classes > len(FAMILIES):
            raise ValueError(
                f"{framing.name} has {len(FAMILIES)} problem families; too many classes"
            )
        self.toolkit = self.make_toolkit()
        self.instance: Instance | None = None
        self.cover: int | None = None
        self._failure: str | None = None
        self._several = False

    def make_toolkit(self) -> PaperToolkit:
        return PaperClaimToolkit()

    def tools(self) -> list[ToolSpec]:
        """The two tools with the paper's own schemas."""
        return [spec.with_schema(self.toolkit.schemas[spec.name]) for spec in self.toolkit.specs()]

    def applied_name(self, name: str) -> str:
        """How the "both" answer names the decision applied: R1 writes it upper case."""
        return name.upper()

    def label(self, cls: int) -> str:
        """The family's title: for records only, the texts never name it."""
        return family_for_class(cls).title

    def cost_rule(self) -> str:
        if self.cost <= 0 and not getattr(self.framing, "state_cost", False):
            return ""
        return " " + render("solver_paper_cost_rule", cost=format_cost(self.cost))

    def system_prompt(self) -> str:
        return render(
            f"{self.rung}_paper_system",
            n_tasks=self.n_tasks,
            n_classes=self.stream.config.n_classes,
            budget=self.budget,
            cost_rule=self.cost_rule(),
        )

    def begin_turn(self, turn: Turn, budget_left: int) -> str:
        self.turn = turn
        self.toolkit.reset()
        self._failure = None
        self._several = False
        self.instance = framing_instances(self.framing, self.stream)[turn.t]
        self.cover = self.instance.cover
        return render(
            f"{self.rung}_paper_task",
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            problem=render_cover(self.instance.family, self.instance.params, self.cover),
            budget_left=budget_left,
        )

    def auto_turn(self, turn: Turn, told: bool) -> AutoTurn:
        return AutoTurn(notice=render("solver_paper_auto", number=turn.t + 1))

    def observation(self, notices: list[str], text: str) -> str:
        if not notices:
            return text
        return render("solver_paper_since", events="; ".join(notices)) + " " + text

    def plan_calls(self, calls: list[ToolCall]) -> CallPlan:
        """The paper's resolution: the first decision call runs; later decision calls and calls
        of unknown tools are answered with the paper's errors and change nothing."""
        plan, how = plan_decision(calls, DECISION_TOOLS, self.applied_name)
        self._several = how == "both"
        if how == "unknown":
            self._failure = str(plan.refusals[0]["error"])
        return plan

    def execute(self, call: ToolCall) -> dict[str, Any]:
        """Apply the decision call ``plan_calls`` picked (R2: a claim needs non-empty code)."""
        commit = call.name == "claim_solver"
        if commit and self.claim_takes_code:
            arguments = call.arguments if isinstance(call.arguments, dict) else {}
            code = arguments.get("code")
            if not isinstance(code, str) or not code.strip():
                self._failure = str(NO_CODE["error"])
                return dict(NO_CODE)
            self.toolkit.code = code
        self.toolkit.decision = commit
        return dict(OK)

    def reask_text(self, attempt: int) -> str:
        return render(f"{self.rung}_paper_reask_{min(attempt, 2)}")

    def turn_over(self) -> bool:
        return self.toolkit.decision is not None

    def end_turn(self, why: str) -> TurnOutcome:
        record: dict[str, Any] = {}
        if self.instance is not None:
            record.update(instance=self.instance.to_dict(), cover=self.cover)
        decision = self.toolkit.decision
        if decision is not None:
            if self._several:  # decided by the first call, yet unresolved (the paper's "both")
                reason = "more than one decision in one reply; the first was applied"
                return TurnOutcome(decision, False, reason, record={**record, "how": "both"})
            return TurnOutcome(decision, True, None, record={**record, "how": "tool"})
        if why == "no_call":
            how, reason = "default", "reply without a tool call"
        elif why == "token_limit":
            how, reason = "default", "episode token limit reached"
        else:  # "unknown": only unknown tools; else R2's claim without code
            how = "unknown" if why == "unknown" else "malformed_args"
            reason = f"tool call failed: {self._failure}"
        return TurnOutcome(False, False, reason, record={**record, "how": how})


class PaperCodeEpisode(PaperSolverEpisode):
    """An R2 episode under the paper protocol."""

    rung = "r2"
    claim_takes_code = True

    def make_toolkit(self) -> PaperToolkit:
        return PaperCodeToolkit()

    def applied_name(self, name: str) -> str:
        """R2's "both" answer names the first decision tool as called."""
        return name


_NOTE = (
    r"decide only -- do NOT compute an answer"
    r"|put solving logic ONLY in the code argument, not this message"
)
_QUESTION = re.compile(
    r"(?:\(Since your last choice: (?P<since>.*?)\.\) )?"
    rf"Problem (?P<number>\d+) of (?P<n_tasks>\d+) \((?:{_NOTE})\): (?P<problem>.*?)\n"
    r"You have (?P<left>\d+) solver claim\(s\) left\.",
    re.DOTALL,
)
_AUTO = re.compile(r"problem (\d+): another problem of an already-claimed type")


class PaperSolverReader(ObservationReader):
    """Reads paper-protocol R1/R2 texts: the family of a problem is recognised from its wording
    (``covers.recognise``), and the event's label is the family's name; an automatic turn's
    notice does not say which claimed type it was, so its event has no label."""

    def __init__(self) -> None:
        self.labels = [f.name for f in FAMILIES]

    def read(self, text: str) -> list[ReaderEvent]:
        events: list[ReaderEvent] = []
        for m in _QUESTION.finditer(text):
            n_tasks = int(m.group("n_tasks"))
            for number in _AUTO.findall(m.group("since") or ""):
                events.append(ReaderEvent(int(number), n_tasks, None, auto=True))
            family = recognise(m.group("problem"))
            if family is None:
                raise ValueError(f"no family fits the problem {m.group('problem')!r}")
            events.append(
                ReaderEvent(
                    number=int(m.group("number")),
                    n_tasks=n_tasks,
                    label=family,
                    auto=False,
                    budget_left=int(m.group("left")),
                )
            )
        return events
