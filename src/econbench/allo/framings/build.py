"""R3, full build (docs/allobench.md §4): real scripts, run sandboxed, credited only when exact.

This module holds the ``"econbench"`` protocol's R3 (its rules below) and :class:`BuildFraming`,
which plays either protocol; the paper's R3 (the default) is ``build_paper``.

Tools: ``write_script(name, code)``, ``run_script(name, inputs)``, ``list_scripts()``,
``read_script(name)``, ``submit_answer(answer)``.

Rules (the spec's, plus the choices it leaves open, marked *):

- Every successful ``write_script`` spends budget. The first script written during a task's
  turn is the game's COMMIT for that class; any further successful write in the same turn
  (an overwrite) is a *rebuild*: ``Game.charge_rebuild()``, one more budget unit and K again.
  A write that would need budget when none is left is refused without charge.
- *A script is bound to the class of the turn it was first written in, and each class has at
  most one script. Writing a new name while the class already has a script, or rewriting a
  script that belongs to another class, is refused without charge. Since a class with a
  script is never asked about again, overwrites can only happen within the turn that wrote
  the script.*
- *Code must pass the same form check as R2 (non-empty, parses, defines a one-argument
  ``solve``); otherwise the write is an error result without charge.*
- ``run_script`` on a script bound to another class is refused without charge; on the current
  class it runs the script in the sandbox on the given inputs and returns the output. Free.
- ``submit_answer(answer)`` ends the turn; it is credited only on an exact integer match.
- Later occurrences of a class with a script are solved automatically by running the script
  on the new instance; they are credited only when the output is exactly the right integer
  (*an ``int``, or a ``float`` with an integral value equal to the answer; ``bool`` never*).
- *Automatic turns are batched notices before the next question (as in R0–R2); a notice
  reports the script's output and whether it was credited. After the session ends (budget
  spent) the remaining occurrences of scripted classes are still run, in parallel threads,
  for ``realised_utility``.*
- A turn ends at ``submit_answer``, at a reply without tool calls (a PASS unless a script was
  written), or after ``max_calls_per_turn`` = 12 tool calls. R3 decisions are always
  resolved (whether a script was written is never ambiguous), except when the episode's
  token cap (300k) has been reached, which makes every remaining question an unresolved PASS.

Scores: the primary ``score`` stays the game's allocation score (collected − K·writes over
OPT), so rungs compare. R3 adds ``realised_utility`` = exactly-correct automatic outputs +
exactly-correct submitted answers − K · (all successful writes), with the counts behind it.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

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
from econbench.allo.framings.build_paper import (
    MIN_CALL_TOKENS,
    PAPER_NO_CALL_ATTEMPTS,
    REPLIES_PER_TASK,
    REPLY_LIMIT_FLOOR,
    PaperBuildEpisode,
    PaperProblemReader,
)
from econbench.allo.framings.code import check_solver_code, strip_fences
from econbench.allo.framings.declarative import TASK_HEAD, SolverEpisode
from econbench.allo.framings.registry import register
from econbench.allo.framings.script_runs import clip, is_exact, sandbox_record, shown
from econbench.allo.game import Turn
from econbench.allo.game.families import DEFAULT_MAGNITUDE, FAMILIES, Instance
from econbench.allo.game.instances import (
    DEFAULT_PROFILE,
    describe_instance_options,
    framing_instances,
    set_instance_options,
)
from econbench.allo.game.stream import Stream
from econbench.allo.sandbox.core import Sandbox, SandboxResult

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


@dataclass
class Script:
    """A saved script and the class it is bound to."""

    name: str
    code: str
    cls: int
    written_t: int
    writes: int = 1


class BuildToolkit(Toolkit):
    """R3's tools, bound to one episode."""

    def __init__(self, episode: BuildEpisode) -> None:
        self.ep = episode

    @tool("write")
    def write_script(self, name: str, code: str) -> dict[str, Any]:
        """Save a Python script that solves tasks of the current task's family.

        Every successful write, new or overwrite, uses up one of your writes. The script is
        bound to the current task's family and runs automatically on its later tasks.

        Args:
            name: Script name: letters, digits, '_', '-' or '.', starting with a letter or '_'.
            code: Python source (standard library only) defining
                `def solve(inputs: dict) -> int`.
        """
        return self.ep.write(name, code)

    @tool("read")
    def run_script(self, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """Run a script of the current task's family on an inputs object; free.

        Args:
            name: The script to run; it must belong to the current task's family.
            inputs: The JSON object passed to the script's `solve` function.
        """
        try:
            json.dumps(inputs, allow_nan=False)
        except (ValueError, TypeError, RecursionError):
            raise ToolError(
                "run_script: inputs must be plain JSON (finite numbers, strings, lists, objects)"
            ) from None
        return self.ep.run(name, inputs)

    @tool("read")
    def list_scripts(self) -> dict[str, Any]:
        """List your scripts and the family each one belongs to; free."""
        return {
            "scripts": [
                {"name": s.name, "family": self.ep.label(s.cls)} for s in self.ep.scripts.values()
            ]
        }

    @tool("read")
    def read_script(self, name: str) -> dict[str, Any]:
        """Show the source code of one of your scripts; free.

        Args:
            name: The script's name.
        """
        script = self.ep.scripts.get(name)
        if script is None:
            raise ToolError(f"read_script: no script named {name!r}")
        return {"name": name, "family": self.ep.label(script.cls), "code": script.code}

    @tool("write")
    def submit_answer(self, answer: int) -> dict[str, Any]:
        """Answer the current task with an exact integer; this ends the task.

        Args:
            answer: Your answer to the current task.
        """
        return self.ep.submit(answer)


class BuildEpisode(SolverEpisode):
    """An R3 episode: scripts, sandbox runs and R3's own tallies."""

    framing: BuildFraming
    toolkit: BuildToolkit  # type: ignore[assignment]
    system_template = "r3_system"
    task_template = "r3_task"

    def __init__(self, framing: BuildFraming, stream: Stream, cost: float, budget: int) -> None:
        super().__init__(framing, stream, cost, budget)
        self.sandbox = framing.sandbox
        self.scripts: dict[str, Script] = {}
        self.by_class: dict[int, str] = {}
        self.writes = 0
        self.rebuilds = 0
        self.auto_runs = 0
        self.auto_correct = 0
        self.submits = 0
        self.submits_correct = 0
        self._start_turn(None, 0)

    def make_toolkit(self) -> BuildToolkit:  # type: ignore[override]
        return BuildToolkit(self)

    def _start_turn(self, turn: Turn | None, budget_left: int) -> None:
        self.turn = turn
        self.budget_at_start = budget_left
        self.commit_pending = False
        self.rebuilds_pending = 0
        self.submitted = False
        self.turn_runs: list[dict[str, Any]] = []
        self.turn_writes: list[dict[str, Any]] = []
        self.turn_submit: dict[str, Any] | None = None

    @property
    def writes_left(self) -> int:
        return self.budget_at_start - int(self.commit_pending) - self.rebuilds_pending

    # -- prompts --------------------------------------------------------------------------
    def cost_rule(self) -> str:
        if self.cost <= 0:
            return ""
        return " " + render("r3_cost_rule", cost=format_cost(self.cost))

    def system_prompt(self) -> str:
        limits = self.sandbox.limits
        return render(
            self.system_template,
            n_tasks=self.n_tasks,
            n_classes=self.stream.config.n_classes,
            family_list=self.family_list(),
            budget=self.budget,
            write_word="write" if self.budget == 1 else "writes",
            cost_rule=self.cost_rule(),
            cpu_s=limits.cpu_s,
            memory_mb=limits.memory_mb,
            max_calls=self.framing.max_calls_per_turn,
        )

    # -- turns ----------------------------------------------------------------------------
    def begin_turn(self, turn: Turn, budget_left: int) -> str:
        self._start_turn(turn, budget_left)
        self.instance = framing_instances(self.framing, self.stream)[turn.t]
        family = self.family(turn.cls)
        return render(
            self.task_template,
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            title=family.title,
            cover_story=family.cover_story,
            statement=family.describe(self.instance.params),
            builds_left=plural(budget_left, "write"),
        )

    def _auto_run(self, turn: Turn) -> tuple[Instance, Script, SandboxResult]:
        script = self.scripts[self.by_class[turn.cls]]
        instance = framing_instances(self.framing, self.stream)[turn.t]
        return instance, script, self.sandbox.run(script.code, instance.params)

    def _auto_outcome(
        self, turn: Turn, told: bool, run: tuple[Instance, Script, SandboxResult]
    ) -> AutoTurn:
        instance, script, result = run
        credited = result.ok and is_exact(result.value, instance.answer)
        self.auto_runs += 1
        self.auto_correct += credited
        if result.ok:
            verdict = "credited" if credited else "not credited, the answer is wrong"
            outcome = f"output {result.value!r}, {verdict}"
        else:
            outcome = f"it failed ({result.reason or 'error'}), not credited"
        notice = render(
            "r3_auto",
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            title=self.label(turn.cls),
            name=script.name,
            outcome=outcome,
        )
        run_rec = sandbox_record(result, "auto", turn.t, script=script.name, credited=credited)
        record = {"instance": instance.to_dict(), "sandbox": [run_rec], "credited": credited}
        return AutoTurn(notice=notice, record=record)

    def auto_turn(self, turn: Turn, told: bool) -> AutoTurn:
        return self._auto_outcome(turn, told, self._auto_run(turn))

    def auto_turns(self, turns: list[Turn], told: bool) -> list[AutoTurn]:
        """Many automatic turns: the sandbox runs go in parallel, results stay in order."""
        if len(turns) <= 1 or self.framing.workers <= 1:
            return [self.auto_turn(turn, told) for turn in turns]
        with ThreadPoolExecutor(max_workers=self.framing.workers) as pool:
            runs = list(pool.map(self._auto_run, turns))
        return [self._auto_outcome(t, told, r) for t, r in zip(turns, runs, strict=True)]

    def turn_over(self) -> bool:
        return self.submitted

    def end_turn(self, why: str) -> TurnOutcome:
        record: dict[str, Any] = {
            "instance": self.instance.to_dict() if self.instance else None,
            "writes": self.turn_writes,
            "sandbox": self.turn_runs,
            "submitted": self.turn_submit,
        }
        if why == "token_limit" and not self.commit_pending:
            return TurnOutcome(False, False, "episode token limit reached", record=record)
        return TurnOutcome(
            commit=self.commit_pending,  # a write made before the cap still counts
            resolved=True,
            reason="episode token limit reached" if why == "token_limit" else None,
            rebuilds=self.rebuilds_pending,
            record=record,
        )

    # -- tool bodies ----------------------------------------------------------------------
    def _current(self) -> tuple[Turn, Instance]:
        if self.turn is None or self.instance is None or self.submitted:
            raise ToolError("no task is open")
        return self.turn, self.instance

    def write(self, name: str, code: str) -> dict[str, Any]:
        turn, _ = self._current()
        if not _NAME.match(name):
            raise ToolError(
                f"write_script: bad name {name!r}; use letters, digits, '_', '-' or '.', "
                "starting with a letter or '_' (at most 64 characters)"
            )
        problem = check_solver_code(code)
        if problem is not None:
            raise ToolError(f"write_script: {problem}; nothing was written")
        code = strip_fences(code)
        existing = self.scripts.get(name)
        if existing is not None and existing.cls != turn.cls:
            raise ToolError(
                f"write_script: {name!r} belongs to the {self.label(existing.cls)} family; "
                "it can only be rewritten during a task of that family"
            )
        if existing is None and turn.cls in self.by_class:
            other = self.by_class[turn.cls]
            raise ToolError(
                f"write_script: this family already has the script {other!r}; "
                "rewrite that one instead"
            )
        if self.writes_left <= 0:
            raise ToolError("write_script: no writes left; nothing was written")
        if existing is None:
            self.scripts[name] = Script(name=name, code=code, cls=turn.cls, written_t=turn.t)
            self.by_class[turn.cls] = name
            self.commit_pending = True
            kind = "new"
        else:
            existing.code = code
            existing.writes += 1
            self.rebuilds_pending += 1
            self.rebuilds += 1
            kind = "overwrite"
        self.writes += 1
        self.turn_writes.append({"name": name, "kind": kind})
        return {"name": name, "written": kind, "writes_left": self.writes_left}

    def run(self, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        turn, _ = self._current()
        script = self.scripts.get(name)
        if script is None:
            raise ToolError(f"run_script: no script named {name!r}")
        if script.cls != turn.cls:
            raise ToolError(
                f"run_script: {name!r} belongs to the {self.label(script.cls)} family, not to "
                "the current task's; refused (nothing was charged)"
            )
        result = self.sandbox.run(script.code, inputs)
        self.turn_runs.append(sandbox_record(result, "run_script", turn.t, script=name))
        return {
            "ok": result.ok,
            "output": shown(result.value),
            "reason": result.reason,
            "stdout": clip(result.stdout),
            "stderr": clip(result.stderr),
        }

    def submit(self, answer: int) -> dict[str, Any]:
        _, instance = self._current()
        credited = is_exact(answer, instance.answer)
        self.submitted = True
        self.submits += 1
        self.submits_correct += credited
        self.turn_submit = {"answer": answer, "credited": credited}
        verdict = "credited" if credited else "not credited, the answer is wrong"
        return {"answer": answer, "credited": credited, "message": f"Answer {verdict}."}

    def episode_record(self) -> dict[str, Any]:
        realised = self.auto_correct + self.submits_correct - self.cost * self.writes
        return {
            "r3": {
                "realised_utility": realised,
                "writes": self.writes,
                "rebuilds": self.rebuilds,
                "auto_runs": self.auto_runs,
                "auto_correct": self.auto_correct,
                "submits": self.submits,
                "submits_correct": self.submits_correct,
                "sandbox_backend": self.sandbox.backend,
                "scripts": {
                    s.name: {"family": self.family(s.cls).name, "writes": s.writes}
                    for s in self.scripts.values()
                },
            }
        }


@register
class BuildFraming(Framing):
    """R3: write, run and submit real code under a sandbox.

    ``protocol="paper"`` (the default) plays the paper's R3 (``build_paper``,
    ``scripts/ladder/arm_a1_announce.py``): every problem asked, untitled, every tool call of
    a reply run, results as the paper's ``json.dumps`` writes them, the session cut off when
    the budget is spent (``full_stream=True``: it runs on, writes refused, as ``--full-stream``),
    a 300k cap on input plus output tokens shown in every tool result, no per-problem call
    limit (the paper's session limit of ``max(60, 15 T)`` replies instead), ``tool_choice``
    ``"auto"``. A reply without a tool call stays in the conversation and is followed by the
    paper's reminder; the second in a row leaves the problem unanswered (``no_call_attempts``,
    default 2). ``empty_fence_retry=N`` is the paper's ``--empty-fence-retry N`` (its Qwen
    runs: 4): such replies are pruned, reminders and all, and a problem takes N of them.
    ``state_cost=True`` states the charge at K = 0 too (the paper's R3 never states one;
    default False). ``protocol="econbench"`` plays the rules above, unchanged.
    """

    name = "r3"
    order = 3
    title = "full build (scripts run in a sandbox)"
    label = "R3 full build"
    max_tokens = 4096
    episode_max_tokens = 300_000
    reply_style = "build"

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        workers: int = 4,
        protocol: str = "paper",
        *,
        state_cost: bool = False,
        no_call_attempts: int | None = None,
        empty_fence_retry: int = 0,
        full_stream: bool = False,
        instances: str | None = None,
        instance_profile: str = DEFAULT_PROFILE,
        magnitude: int = DEFAULT_MAGNITUDE,
    ) -> None:
        set_instance_options(self, protocol, instances, instance_profile, magnitude)
        self.sandbox = sandbox if sandbox is not None else Sandbox()
        self.workers = workers
        self.protocol = check_protocol(protocol)
        self.state_cost = bool(state_cost)
        self.empty_fence_retry = int(empty_fence_retry)
        self.full_stream = bool(full_stream)
        if protocol == "paper":
            # The paper has no per-problem limit; its session-wide one (the episode's) is
            # 15 replies per problem of the stream, 900 at T = 60.
            self.max_calls_per_turn = REPLIES_PER_TASK * 60
            if self.empty_fence_retry < 0:
                raise ValueError(f"empty_fence_retry must be >= 0, got {empty_fence_retry}")
            if self.empty_fence_retry and no_call_attempts not in (None, self.empty_fence_retry):
                raise ValueError(
                    "empty_fence_retry=N sets no_call_attempts to N; give one of the two"
                )
            attempts = self.empty_fence_retry or (
                PAPER_NO_CALL_ATTEMPTS if no_call_attempts is None else no_call_attempts
            )
            if attempts < 1:
                raise ValueError(f"no_call_attempts must be at least 1, got {attempts}")
            self.no_call_attempts = int(attempts)
            # The paper's driver keeps a reply without a tool call (and reminds) unless it runs
            # with --empty-fence-retry, which prunes every such reply, the last one included.
            self.keeps_no_call_replies = not self.empty_fence_retry
            self.prunes_last_no_call_reply = bool(self.empty_fence_retry)
            self.tool_choice = "auto"
            self.token_cap_counts = "input+output"
            self.min_call_tokens = MIN_CALL_TOKENS
            self.reply_limit_floor = REPLY_LIMIT_FLOOR
        else:
            if no_call_attempts is not None:
                raise ValueError("no_call_attempts applies to protocol 'paper' only")
            if self.empty_fence_retry or self.full_stream:
                raise ValueError("empty_fence_retry and full_stream apply to protocol 'paper' only")
            self.max_calls_per_turn = 12

    def episode(self, stream: Stream, cost: float, budget: int) -> FramingEpisode:
        if self.protocol == "paper":
            return PaperBuildEpisode(self, stream, cost, budget)
        return BuildEpisode(self, stream, cost, budget)

    def reader(self) -> ObservationReader:
        if self.protocol == "paper":
            return PaperProblemReader()
        return ObservationReader([f.title for f in FAMILIES], TASK_HEAD)

    def render_result(self, result: dict[str, Any]) -> str:
        """Under the paper's protocol a tool result reads as its driver's ``json.dumps(result)``
        wrote it: keys in the order the result was built, default separators, ASCII."""
        if self.protocol == "paper":
            return json.dumps(result)
        return super().render_result(result)

    def describe(self) -> dict[str, Any]:
        settings = {
            **super().describe(),
            "sandbox_backend": self.sandbox.backend,
            **describe_instance_options(self),
        }
        if self.protocol == "paper":
            settings.update(
                state_cost=self.state_cost,
                token_cap_counts=self.token_cap_counts,
                min_call_tokens=self.min_call_tokens,
                empty_fence_retry=self.empty_fence_retry,
                full_stream=self.full_stream,
            )
        return settings
