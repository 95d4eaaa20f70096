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
- The cost sentence is R2's economic-surface sentence (the paper's R1 never had a charge; R1
  uses the same one). It is stated at K = 0 too unless ``state_cost`` is False, as R0 does.

Turn rules (the paper's resolvers ``urn_common.resolve_zero_arg_decision`` and
``resolve_code_claim_decision``, and its ``--empty-fence-retry`` loop):

- One tool call decides the turn. A reply that calls both tools, or a decision tool twice, is
  unresolved (a PASS) and neither call runs — the paper counts such a turn as unresolved
  ("multiple decisive calls ... default to the non-commit action"). Calls to unknown tools
  beside exactly one decision call are answered with an error and the decision stands; a reply
  with only unknown tools, or a claim without usable code, is an unresolved PASS. No retry
  follows a failed call.
- A reply without any tool call (plain text or an empty reply) is re-asked: it is dropped from
  the actor's context when the actor can forget it (the paper prunes it), and the paper's
  reminder follows (first the format reminder, then the empty-fence reminder). The paper's
  setting ``--empty-fence-retry 4`` allows four replies in all (three re-asks; its stored runs
  agree); ``no_call_attempts`` is that number. After the last one the turn is an unresolved PASS.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from econbench.agents.tools import ToolCall, ToolError, Toolkit, tool
from econbench.allo.families import FAMILIES, Instance, family_for_class, instance_for
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
from econbench.allo.framings.covers import cover_index, recognise, render_cover
from econbench.allo.game import Turn
from econbench.allo.stream import Stream

PAPER_NO_CALL_ATTEMPTS = 4
"""Replies without a tool call a paper-protocol turn takes (the paper's empty-fence retries)."""

DECISION_TOOLS = ("claim_solver", "skip_solver")

SEVERAL_DECISIONS = {
    "status": "error",
    "error": (
        "more than one decision (claim_solver / skip_solver) in one reply; none was applied "
        "and this problem counts as skipped"
    ),
}


class PaperToolkit(Toolkit):
    """Per-turn decision state of the paper's two tools."""

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
    argument_free: ClassVar[tuple[str, ...]] = DECISION_TOOLS
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

    def make_toolkit(self) -> PaperToolkit:
        return PaperClaimToolkit()

    def label(self, cls: int) -> str:
        """The family's title: for records only, the texts never name it."""
        return family_for_class(cls).title

    def cost_rule(self) -> str:
        if self.cost <= 0 and not getattr(self.framing, "state_cost", True):
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
        self.instance = instance_for(self.stream.seed, turn.t, turn.cls)
        self.cover = cover_index(self.stream.seed, turn.t, turn.cls)
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
        decisions = [i for i, call in enumerate(calls) if call.name in DECISION_TOOLS]
        if len(decisions) > 1:
            return CallPlan(None, dict.fromkeys(range(len(calls)), SEVERAL_DECISIONS), "both")
        run = decisions[0] if decisions else 0
        refusals = {
            i: self.toolkit.call(call.name, call.arguments)  # unknown names: an error, no effect
            for i, call in enumerate(calls)
            if i != run
        }
        return CallPlan(run, refusals)

    def execute(self, call: ToolCall) -> dict[str, Any]:
        arguments = {} if call.name in self.argument_free else call.arguments
        result = self.toolkit.call(call.name, arguments)
        if result.get("status") != "success":
            self._failure = str(result.get("error"))
        return result

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
            return TurnOutcome(decision, True, None, record={**record, "how": "tool"})
        failure = self._failure or ""
        if why == "no_call":
            how, reason = "default", "reply without a tool call"
        elif why == "both":
            how, reason = "both", "more than one decision in one reply"
        elif why == "token_limit":
            how, reason = "default", "episode token limit reached"
        elif failure.startswith("unknown tool"):
            how, reason = "unknown", f"tool call failed: {failure}"
        else:
            how, reason = "malformed_args", f"tool call failed: {failure}"
        return TurnOutcome(False, False, reason, record={**record, "how": how})


class PaperCodeEpisode(PaperSolverEpisode):
    """An R2 episode under the paper protocol."""

    rung = "r2"
    argument_free = ("skip_solver",)

    def make_toolkit(self) -> PaperToolkit:
        return PaperCodeToolkit()


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
