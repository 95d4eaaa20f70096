"""R1, declarative (docs/allobench.md §4): problem families with cover stories; decide by tool.

Under protocol ``"paper"`` (the default) R1 is played as the paper played it: hidden problem
types, a cover drawn per occurrence, the paper's tool schemas, results and turn rules (see
``paper_solver.py``; the options are ``SolverFraming``'s). This module's texts and rules are
protocol ``"econbench"``:

Class ``c`` is the problem family ``FAMILIES[c % 8]`` (``econbench.allo.game.families``); every
occurrence shows the family's title, cover story and a fresh instance statement
(``instance_for(seed, t, cls)``). The agent is told to decide only, not to compute, and has two
argument-free tools, ``claim_solver()`` (COMMIT) and ``skip_solver()`` (PASS).

Choices where the spec is silent:

- A turn ends at the first successful ``claim_solver``/``skip_solver``. A failed call (unknown
  tool, unexpected arguments) returns an error result and the actor may try again, up to
  ``max_calls_per_turn`` = 3 calls; a reply without a tool call, or a third failed call, ends
  the turn as an *unresolved PASS*.
- Automatic turns are batched as one-line notices at the top of the next question (as in R0).
- The system prompt lists the family titles (as R0 lists the colours), in class order.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from econbench.agents.tools import ToolError, Toolkit, tool
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
from econbench.allo.framings.paper_solver import (
    PAPER_NO_CALL_ATTEMPTS,
    PAPER_TOOL_CHOICE,
    TOOL_CHOICES,
    PaperSolverEpisode,
    PaperSolverReader,
)
from econbench.allo.framings.registry import register
from econbench.allo.game import Turn
from econbench.allo.game.families import (
    DEFAULT_MAGNITUDE,
    FAMILIES,
    Family,
    Instance,
    family_for_class,
)
from econbench.allo.game.instances import (
    DEFAULT_PROFILE,
    describe_instance_options,
    framing_instances,
    set_instance_options,
)
from econbench.allo.game.stream import Stream

TASK_HEAD = r"^Task (?P<number>\d+) of (?P<n_tasks>\d+) — "


class DecisionToolkit(Toolkit):
    """Per-turn decision state shared by the R1 and R2 toolkits."""

    def __init__(self) -> None:
        self.decision: bool | None = None

    def reset(self) -> None:
        self.decision = None

    def _decide(self, commit: bool) -> None:
        if self.decision is not None:
            raise ToolError("this task is already decided")
        self.decision = commit


class DeclarativeToolkit(DecisionToolkit):
    """R1's tools: decide without computing anything."""

    @tool("write")
    def claim_solver(self) -> dict[str, Any]:
        """Build a solver for the current task's family.

        The solver solves this task and every later task of the same family automatically.
        It uses up one of your builds and cannot be undone.
        """
        self._decide(True)
        return {"decision": "claimed", "message": "Solver built for this family."}

    @tool("write")
    def skip_solver(self) -> dict[str, Any]:
        """Skip the current task without building a solver; the task stays unsolved."""
        self._decide(False)
        return {"decision": "skipped", "message": "Task skipped."}


class SolverEpisode(FramingEpisode):
    """An episode of a solver framing (R1, R2): family tasks, claim/skip decisions."""

    toolkit: DecisionToolkit
    system_template = "r1_system"
    task_template = "r1_task"

    def __init__(self, framing: Framing, stream: Stream, cost: float, budget: int) -> None:
        super().__init__(framing, stream, cost, budget)
        if stream.config.n_classes > len(FAMILIES):
            raise ValueError(
                f"{framing.name} has {len(FAMILIES)} problem families; too many classes"
            )
        self.toolkit = self.make_toolkit()
        self.instance: Instance | None = None

    def make_toolkit(self) -> DecisionToolkit:
        return DeclarativeToolkit()

    def family(self, cls: int) -> Family:
        return family_for_class(cls)

    def label(self, cls: int) -> str:
        return self.family(cls).title

    def family_list(self) -> str:
        n = self.stream.config.n_classes
        return "\n".join(f"- {self.label(c)}" for c in range(n))

    def cost_rule(self) -> str:
        if self.cost <= 0:
            return ""
        return " " + render("solver_cost_rule", cost=format_cost(self.cost))

    def system_prompt(self) -> str:
        return render(
            self.system_template,
            n_tasks=self.n_tasks,
            n_classes=self.stream.config.n_classes,
            family_list=self.family_list(),
            budget=self.budget,
            build_word="solver" if self.budget == 1 else "solvers",
            cost_rule=self.cost_rule(),
        )

    def task_text(self, turn: Turn, budget_left: int, instance: Instance) -> str:
        family = self.family(turn.cls)
        return render(
            self.task_template,
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            title=family.title,
            cover_story=family.cover_story,
            statement=family.describe(instance.params),
            builds_left=plural(budget_left, "build"),
        )

    def begin_turn(self, turn: Turn, budget_left: int) -> str:
        self.turn = turn
        self.toolkit.reset()
        self.instance = framing_instances(self.framing, self.stream)[turn.t]
        return self.task_text(turn, budget_left, self.instance)

    def auto_turn(self, turn: Turn, told: bool) -> AutoTurn:
        notice = render(
            "solver_auto", number=turn.t + 1, n_tasks=self.n_tasks, title=self.label(turn.cls)
        )
        return AutoTurn(notice=notice)

    def turn_over(self) -> bool:
        return self.toolkit.decision is not None

    def end_turn(self, why: str) -> TurnOutcome:
        record: dict[str, Any] = {}
        if self.instance is not None:
            record["instance"] = self.instance.to_dict()
        decision = self.toolkit.decision
        if decision is None:
            reasons = {
                "no_call": "reply without a tool call",
                "call_limit": f"no valid decision in {self.framing.max_calls_per_turn} calls",
                "token_limit": "episode token limit reached",
            }
            return TurnOutcome(False, False, reasons.get(why, why), record=record)
        return TurnOutcome(decision, True, None, record=record)


class SolverFraming(Framing):
    """What R1 and R2 share: the protocol, the episode and reader of each, the turn limits.

    ``protocol="paper"`` (the defaults are the paper's framing ladder as its frontier models
    ran it): one tool call per turn; ``no_call_attempts`` replies without a tool call (default
    1: no re-ask, as the frontier runs; the Qwen runs' ``--empty-fence-retry 4`` is 4);
    ``state_cost`` states the charge at K = 0 too (the economic surface; default False, as the
    ladder); ``tool_choice`` is what the model is asked with (default ``"auto"``; the paper's
    local models ran with ``"required"``; ``None`` sends none); ``max_tokens`` the per-reply
    limit (default the rung's: R1 1,500, R2 2,500; the surface's R2 ran with 4,000). Tool
    results are sent as the paper's ``json.dumps`` writes them.
    ``protocol="econbench"``: the class limits below, unchanged.
    """

    max_calls_per_turn = 3
    episode_class: ClassVar[type[FramingEpisode]]
    paper_episode_class: ClassVar[type[PaperSolverEpisode]] = PaperSolverEpisode

    def __init__(
        self,
        protocol: str = "paper",
        *,
        state_cost: bool = False,
        no_call_attempts: int | None = None,
        tool_choice: str | None = PAPER_TOOL_CHOICE,
        max_tokens: int | None = None,
        instances: str | None = None,
        instance_profile: str = DEFAULT_PROFILE,
        magnitude: int = DEFAULT_MAGNITUDE,
    ) -> None:
        self.protocol = check_protocol(protocol)
        self.state_cost = bool(state_cost)
        set_instance_options(self, protocol, instances, instance_profile, magnitude)
        if protocol == "paper":
            self.max_calls_per_turn = 1
            attempts = PAPER_NO_CALL_ATTEMPTS if no_call_attempts is None else no_call_attempts
            if attempts < 1:
                raise ValueError(f"no_call_attempts must be at least 1, got {attempts}")
            self.no_call_attempts = int(attempts)
            if tool_choice not in TOOL_CHOICES:
                choices = ", ".join(repr(c) for c in TOOL_CHOICES)
                raise ValueError(f"tool_choice must be one of {choices}, got {tool_choice!r}")
            self.tool_choice = tool_choice
            if max_tokens is not None:
                if type(max_tokens) is not int or max_tokens < 1:
                    raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
                self.max_tokens = max_tokens
        else:
            given = {
                "no_call_attempts": no_call_attempts is not None,
                "tool_choice": tool_choice != PAPER_TOOL_CHOICE,
                "max_tokens": max_tokens is not None,
            }
            for option, set_ in given.items():
                if set_:
                    raise ValueError(f"{option} applies to protocol 'paper' only")

    def episode(self, stream: Stream, cost: float, budget: int) -> FramingEpisode:
        cls = self.paper_episode_class if self.protocol == "paper" else self.episode_class
        return cls(self, stream, cost, budget)

    def reader(self) -> ObservationReader:
        if self.protocol == "paper":
            return PaperSolverReader()
        return ObservationReader([f.title for f in FAMILIES], TASK_HEAD)

    def render_result(self, result: dict[str, Any]) -> str:
        """Under the paper's protocol the paper's ``json.dumps(result)`` (its key order, its
        separators); under econbench's the sorted JSON it always sent."""
        if self.protocol == "paper":
            return json.dumps(result)
        return super().render_result(result)

    def describe(self) -> dict[str, Any]:
        settings = {**super().describe(), **describe_instance_options(self)}
        if self.protocol == "paper":
            settings["state_cost"] = self.state_cost
            settings["tool_choice"] = self.tool_choice
        return settings


@register
class DeclarativeFraming(SolverFraming):
    """R1: decide-only tools over problem families."""

    name = "r1"
    order = 1
    title = "declarative (claim_solver / skip_solver)"
    label = "R1 declarative"
    max_tokens = 1500
    reply_style = "claim"
    episode_class = SolverEpisode
