"""R3 as the paper ran it (protocol ``"paper"``): one long session of real scripts, no feedback.

The paper's R3 harness (``scripts/session/driver.py``, ``session_state.py``, ``prompts.py``,
run by ``scripts/ladder/arm_a1_announce.py``) shows every problem of the stream as
``PROBLEM k of N``, untitled (its wording is one of the family's covers, drawn per occurrence,
``covers.py``), with its named values and the answer's digit count as "significant figures".
The model may write, run, list and read scripts and must ``submit_answer`` to move on. Its
rules, reproduced here:

- ``write_script(name, code)``: any non-empty name and code; every successful write, a new name
  or a replacement, spends one unit of the session's budget, and binds the script to the hidden
  type of the problem on screen (rewriting a name on another type's problem rebinds it). A write
  with no budget left is refused. The result says ``writes_remaining``.
- ``run_script(name, inputs)`` runs only a script bound to the current problem's type (else it
  is refused, nothing charged) in the sandbox and returns its ``return_value``; free.
- ``submit_answer(value)`` answers ``Recorded answer for problem i. n problem(s) remaining.``
  (``i`` is 0-based, as the paper prints it): no word about correctness.
- Every tool result carries ``tokens_remaining``: the session's 300,000-token cap minus every
  input and output token so far (``Framing.token_cap_counts``; cached prompt tokens count, as
  the paper's cap counted them for the OpenAI models whose sessions reached it). The session
  is cut off when fewer than 256 tokens remain (the paper's ``MIN_CALL_BUDGET``), after
  ``max(60, 15 T)`` replies, or right after the reply whose write spends the budget (the
  paper's ``stop_on_budget_exhausted``, its default for R3).
- A reply without a tool call is answered once with the paper's reminder; a second one in a
  row leaves the problem unanswered (``Framing.no_call_attempts`` = 2, the paper's default; its
  Qwen runs allowed four, ``no_call_attempts=4``, with a sharper second reminder).
- The paper's R3 never had a build charge. The charge sentence used here (``r3_paper_cost_rule``,
  worded after the paper's R2 one) is stated at K > 0, and at K = 0 too unless the framing's
  ``state_cost`` is False, as R0–R2 do; ``state_cost=False`` at K = 0 is the paper's R3 prompt.

How this maps onto the game (``econbench.allo.game``), and the choices the paper leaves open:

- *Commit.* The first write while a problem of a type is on screen is that type's build, at
  that problem's sighting, exactly as the paper's scorer (``skirental_scorer.
  actions_from_session``) attributes builds; so the game's first-sight flags and hazard mean
  what they mean in R0–R2. Every further write for the type (the same problem or later) is a
  rebuild: ``Game.charge_rebuild``, one budget unit and K again.
- *Later occurrences* of a type with a build are asked too (``asks_tooled_turns``): the model
  runs its script and submits. The game still collects them (the allocation score, as in every
  rung); ``realised_utility`` credits a problem only for an exactly right ``submit_answer``.
- *Session end.* When the session is cut off, every remaining problem is scored without asking:
  the game collects the remaining occurrences of built types, and for ``realised_utility`` each
  unanswered occurrence of a type that still has a script bound to it (the problem on screen at
  the cut-off included) is run through that script (its latest) and credited when the output is
  exactly right — the paper values this tail analytically ("reuse the rest if built"); here it
  is measured. These runs are the record's ``auto_runs``/``auto_correct``.
- *Resolution.* A problem that ends with a write or an answer is resolved; one that ends
  unanswered without a write (silence, the token cap) is an unresolved PASS, as the paper's
  validity appendix counts R3 turns without a tool call. Later occurrences of built types are
  never unresolved (they carry no allocation decision).
- The model's ``solve`` may return any JSON value; a submitted answer is exact when it is an
  integer (or an integral float) equal to the answer, as the paper's ``as_exact_int`` grades.
"""

from __future__ import annotations

import ast
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from econbench.agents.tools import ToolCall, ToolError, Toolkit, ToolSpec, tool
from econbench.allo.families import FAMILIES, Instance, family_for_class, instance_for
from econbench.allo.framings.base import (
    AutoTurn,
    CallPlan,
    FramingEpisode,
    ObservationReader,
    ReaderEvent,
    TurnOutcome,
    format_cost,
    plural,
    render,
)
from econbench.allo.framings.covers import problem_text, recognise
from econbench.allo.framings.script_runs import clip, is_exact, sandbox_record, shown
from econbench.allo.game import Turn
from econbench.allo.sandbox import REASON_CPU, REASON_TIMEOUT, SandboxResult
from econbench.allo.stream import Stream

if TYPE_CHECKING:
    from econbench.allo.framings.build import BuildFraming

MIN_CALL_TOKENS = 256
"""The paper's ``MIN_CALL_BUDGET``: the session ends when fewer tokens than this remain."""
REPLIES_PER_TASK = 15
"""The paper's session limit is ``max(60, 15 N)`` model replies."""
PAPER_NO_CALL_ATTEMPTS = 2
"""Replies without a tool call a problem takes: the paper's driver reminds once, then moves on."""
_SHOWN = 1000  # characters of a run's stdout shown to the model, as the paper shows them
_IGNORED = "ignored: only the first tool call of a reply is executed; call one tool at a time"


def defines_solve(code: str) -> bool:
    """Whether ``code`` parses and defines a function called ``solve`` (the paper's check)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == "solve" for n in ast.walk(tree))


def sig_figs(answer: int) -> int:
    """The "significant figures" the paper asks for: the answer's digit count (exact match)."""
    return max(1, len(str(abs(answer))))


def _memory_text(memory_mb: int) -> str:
    return f"{memory_mb // 1024}GiB" if memory_mb % 1024 == 0 else f"{memory_mb}MiB"


def _friendly(message: str) -> str:
    """A failed run's error with the paper's hints for the usual mistakes."""
    low = message.lower()
    if "eoferror" in low:
        return (
            f"{message} -- the sandbox has NO stdin; never call input(). Read every value "
            "from the inputs dict, e.g. inputs['X']."
        )
    if "nameerror" in low:
        return (
            f"{message} -- all inputs live in the inputs dict (e.g. inputs['X']); there are "
            "no bare top-level variables."
        )
    return message


def _run_error(result: SandboxResult, cpu_s: int) -> str:
    """A failed run as the model reads it: why, the error's last line, the paper's hint."""
    lines = (result.stderr or "").strip().splitlines()
    detail = (result.error or "").strip() or (lines[-1] if lines else "")
    message = f"{result.reason or 'error'}: {detail}" if detail else (result.reason or "error")
    if result.reason in (REASON_TIMEOUT, REASON_CPU):
        return f"{message} -- your code ran too long ({cpu_s}s CPU limit)."
    return _friendly(message)


@dataclass
class PaperScript:
    """A saved script, the type it is bound to, and when it was last written."""

    code: str
    cls: int
    written: int  # the session's write count when it was (last) written
    writes: int = 1


class PaperBuildToolkit(Toolkit):
    """The paper's five R3 tools; results in its shape (``ok``, ``tokens_remaining``)."""

    _DESCRIPTIONS: ClassVar[dict[str, str]] = {
        "write_script": "r3_paper_tool_write",
        "run_script": "r3_paper_tool_run",
    }

    def __init__(self, episode: PaperBuildEpisode) -> None:
        self.ep = episode

    def specs(self) -> list[ToolSpec]:
        """The schemas, with the paper's multi-line descriptions of the two script tools."""
        limits = self.ep.sandbox.limits
        values = {"cpu_s": f"{limits.cpu_s}s", "memory": _memory_text(limits.memory_mb)}
        out = []
        for spec in super().specs():
            template = self._DESCRIPTIONS.get(spec.name)
            if template is not None:
                spec = replace(spec, description=render(template, **values))
            out.append(spec)
        return out

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        if name not in self.tool_specs():
            known = sorted(self.tool_specs())
            return self.ep.stamp(
                {"ok": False, "error": f"no such tool '{name}'. Available tools: {known}."}
            )
        result = super().call(name, arguments)
        if result.pop("status", None) == "error":
            result = {"ok": False, "error": result["error"]}
        return self.ep.stamp(result)

    @tool("write")
    def write_script(self, name: str, code: str) -> dict[str, Any]:
        """Save a named, reusable Python program.

        Args:
            name: a short name for the script
            code: Python source defining solve(inputs)
        """
        return self.ep.write(name, code)

    @tool("read")
    def run_script(self, name: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        """Execute a saved script by calling solve(inputs) in the sandbox.

        Args:
            name: name of a script you saved
            inputs: object mapping your script's input names to numbers (omit for an empty dict)
        """
        try:
            json.dumps(inputs, allow_nan=False)
        except (ValueError, TypeError, RecursionError):
            raise ToolError(
                "inputs must be a JSON object mapping your script's input names to numbers"
            ) from None
        return self.ep.run(name, inputs or {})

    @tool("read")
    def list_scripts(self) -> dict[str, Any]:
        """List the names of all scripts you have saved so far (they persist across every
        problem in the session)."""
        return {
            "ok": True,
            "scripts": sorted(self.ep.scripts),
            "writes_remaining": self.ep.writes_left,
        }

    @tool("read")
    def read_script(self, name: str) -> dict[str, Any]:
        """Return the source code of a saved script (to recall or adapt prior work).

        Args:
            name: name of a saved script
        """
        script = self.ep.scripts.get(name)
        if script is None:
            return self.ep.no_script(name)
        return {"ok": True, "name": name, "code": script.code}

    @tool("write")
    def submit_answer(self, value: int | float) -> dict[str, Any]:
        """Submit your final numeric answer for the CURRENT problem, rounded to the requested
        number of significant figures. This advances to the next problem (you cannot return to
        a submitted problem).

        Args:
            value: the numeric answer for this problem
        """
        return self.ep.submit(value)


class PaperBuildEpisode(FramingEpisode):
    """An R3 episode under the paper's rules (see the module docstring)."""

    asks_tooled_turns = True
    toolkit: PaperBuildToolkit

    def __init__(self, framing: BuildFraming, stream: Stream, cost: float, budget: int) -> None:
        super().__init__(framing, stream, cost, budget)
        if stream.config.n_classes > len(FAMILIES):
            raise ValueError(f"r3 has {len(FAMILIES)} problem families; too many classes")
        self.sandbox = framing.sandbox
        self.workers = framing.workers
        self.toolkit = PaperBuildToolkit(self)
        self.scripts: dict[str, PaperScript] = {}
        self.authored: set[int] = set()  # types with a build (== the game's tooled classes)
        self.writes = self.rebuilds = self.run_calls = self.cross_refused = 0
        self.submits = self.submits_correct = self.auto_runs = self.auto_correct = 0
        self.replies = 0
        self.max_replies = max(60, REPLIES_PER_TASK * self.n_tasks)
        self.tokens_left: int | None = None
        self.ended: str | None = None  # why the session was cut off
        self.instance: Instance | None = None
        self._start_turn(None, 0)

    # -- the runner's hooks ---------------------------------------------------------------
    def note_reply(self, tokens_left: int | None, over_cap: bool) -> None:
        """After every reply: the tool calls of a reply that reaches a limit still run (as the
        paper runs them); then the session ends."""
        self.replies += 1
        self.tokens_left = tokens_left
        if self.ended is None and over_cap:
            self.ended = "token_cap"
        if self.ended is None and self.replies >= self.max_replies:
            self.ended = "reply_limit"

    def session_over(self) -> bool:
        return self.ended is not None

    def stamp(self, result: dict[str, Any]) -> dict[str, Any]:
        """Add what every tool result shows: the session's tokens left (when capped)."""
        if self.tokens_left is not None:
            result["tokens_remaining"] = self.tokens_left
        return result

    def plan_calls(self, calls: list[ToolCall]) -> CallPlan:
        refusal = {"ok": False, "error": _IGNORED}
        return CallPlan(0, {i: self.stamp(dict(refusal)) for i in range(1, len(calls))})

    def reask_text(self, attempt: int) -> str:
        """The paper's reminder; from the second re-ask on (its pruning retries) the sharper one."""
        return render("r3_paper_reask_1" if attempt <= 1 else "r3_paper_reask_2")

    # -- texts ----------------------------------------------------------------------------
    def label(self, cls: int) -> str:
        return family_for_class(cls).name  # records only: no text names a type

    def system_prompt(self) -> str:
        cost_rule = ""
        if self.cost > 0 or self.framing.state_cost:
            cost_rule = " " + render("r3_paper_cost_rule", cost=format_cost(self.cost))
        cap = self.framing.episode_max_tokens
        token_note = (
            "" if cap is None else "\n\n" + render("r3_paper_token_cap", token_cap=f"{cap:,}")
        )
        return render(
            "r3_paper_system",
            n_tasks=self.n_tasks,
            n_classes=self.stream.config.n_classes,
            budget_scripts=plural(self.budget, "script"),
            token_note=token_note,
            cost_rule=cost_rule,
        )

    def _start_turn(self, turn: Turn | None, budget_left: int) -> None:
        self.turn = turn
        self.budget_at_start = budget_left
        self.turn_writes: list[dict[str, Any]] = []
        self.turn_runs: list[dict[str, Any]] = []
        self.turn_submit: dict[str, Any] | None = None
        self.commit_pending = False
        self.rebuilds_pending = 0

    @property
    def writes_left(self) -> int:
        return max(0, self.budget_at_start - len(self.turn_writes))

    def begin_turn(self, turn: Turn, budget_left: int) -> str:
        self._start_turn(turn, budget_left)
        self.instance = instance = instance_for(self.stream.seed, turn.t, turn.cls)
        return render(
            "r3_paper_task",
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            question=problem_text(self.stream.seed, turn.t, turn.cls, instance),
            inputs=repr(instance.params),
            keys=", ".join(instance.params),
            sig_figs=sig_figs(instance.answer),
        )

    # -- tool bodies ----------------------------------------------------------------------
    def _open(self) -> tuple[Turn, Instance]:
        if self.turn is None or self.instance is None or self.turn_submit is not None:
            raise ToolError("no problem is open")
        return self.turn, self.instance

    def no_script(self, name: str) -> dict[str, Any]:
        shown = sorted(self.scripts) or "(none)"
        return {"ok": False, "error": f"no script named '{name}'. Available: {shown}"}

    def write(self, name: str, code: str) -> dict[str, Any]:
        turn, _ = self._open()
        if self.writes_left <= 0:
            return {
                "ok": False,
                "error": f"write budget exhausted ({self.budget} scripts for the whole session). "
                "write_script is disabled; reuse a saved script with run_script (see "
                "list_scripts) or compute by hand.",
            }
        if not name:
            return {"ok": False, "error": "name must be a non-empty string"}
        if not code.strip():
            return {"ok": False, "error": "code must be a non-empty string"}
        old = self.scripts.get(name)
        self.writes += 1
        self.scripts[name] = PaperScript(
            code=code, cls=turn.cls, written=self.writes, writes=(old.writes + 1) if old else 1
        )
        rebuild = turn.cls in self.authored
        if rebuild:
            self.rebuilds_pending += 1
            self.rebuilds += 1
        else:
            self.authored.add(turn.cls)
            self.commit_pending = True
        self.turn_writes.append(
            {
                "name": name,
                "kind": "overwrite" if old else "new",
                "build": "rebuild" if rebuild else "build",
                "rebinds_from": self.label(old.cls) if old and old.cls != turn.cls else None,
            }
        )
        if self.writes_left == 0:
            self.ended = "budget"
        warn = (
            ""
            if defines_solve(code)
            else " WARNING: this code does not define `def solve(inputs):` — run_script will "
            "fail until it does."
        )
        return {
            "ok": True,
            "message": f"{'Replaced' if old else 'Saved'} script '{name}' ({len(code)} chars); "
            f"this used one write.{warn}",
            "scripts": sorted(self.scripts),
            "writes_remaining": self.writes_left,
        }

    def run(self, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        turn, _ = self._open()
        script = self.scripts.get(name)
        if script is None:
            return self.no_script(name)
        self.run_calls += 1
        if script.cls != turn.cls:
            self.cross_refused += 1
            return {
                "ok": False,
                "error": f"script '{name}' is bound to a different hidden problem type and "
                "cannot be run on the current problem.",
            }
        if not defines_solve(script.code):
            return {"ok": False, "error": "script does not define `def solve(inputs):`."}
        result = self.sandbox.run(script.code, inputs)
        self.turn_runs.append(sandbox_record(result, "run_script", turn.t, script=name))
        stdout = clip((result.stdout or "").strip(), _SHOWN)
        if not result.ok:
            error = _run_error(result, self.sandbox.limits.cpu_s)
            return {"ok": False, "error": error, "stdout": stdout}
        return {"ok": True, "return_value": shown(result.value), "stdout": stdout}

    def submit(self, value: int | float) -> dict[str, Any]:
        turn, instance = self._open()
        credited = is_exact(value, instance.answer)
        self.submits += 1
        self.submits_correct += credited
        self.turn_submit = {"answer": value, "credited": credited}
        remaining = self.n_tasks - (turn.t + 1)
        tail = f"{remaining} problem(s) remaining." if remaining else "That was the last problem."
        return {
            "ok": True,
            "message": f"Recorded answer for problem {turn.t}. {tail}",
            "problems_remaining": remaining,
        }

    # -- turn ends ------------------------------------------------------------------------
    def turn_over(self) -> bool:
        return self.turn_submit is not None or self.ended is not None

    def end_turn(self, why: str) -> TurnOutcome:
        turn, instance = self.turn, self.instance
        assert turn is not None and instance is not None
        if why == "token_limit" and self.ended is None:
            self.ended = "token_cap"
        record: dict[str, Any] = {
            "instance": instance.to_dict(),
            "writes": self.turn_writes,
            "sandbox": self.turn_runs,
            "submitted": self.turn_submit,
        }
        if self.ended is not None and self.turn_submit is None:
            tail = self._tail_run(turn)  # the problem on screen at the cut-off
            if tail is not None:
                record["sandbox"] = [*self.turn_runs, tail]
                record["credited"] = tail["credited"]
        decided = self.commit_pending or self.turn_submit is not None
        if turn.has_tool or decided:
            reason = None
        elif self.ended == "token_cap":
            reason = "episode token limit reached"
        elif why == "no_call":
            reason = "no tool call: the problem was left unanswered"
        else:
            reason = f"the problem was left unanswered ({self.ended or why})"
        return TurnOutcome(
            commit=self.commit_pending,
            resolved=reason is None,
            reason=reason,
            rebuilds=self.rebuilds_pending,
            record=record,
        )

    # -- after the session ----------------------------------------------------------------
    def _script_for(self, cls: int) -> tuple[str, PaperScript] | None:
        bound = [(n, s) for n, s in self.scripts.items() if s.cls == cls]
        return max(bound, key=lambda item: item[1].written) if bound else None

    def _tail_run(self, turn: Turn) -> dict[str, Any] | None:
        found = self._script_for(turn.cls)
        if found is None:
            return None
        return self._credit(turn, found, self._execute(turn, found))

    def _execute(self, turn: Turn, found: tuple[str, PaperScript]) -> SandboxResult:
        instance = instance_for(self.stream.seed, turn.t, turn.cls)
        return self.sandbox.run(found[1].code, instance.params)

    def _credit(
        self, turn: Turn, found: tuple[str, PaperScript], result: SandboxResult
    ) -> dict[str, Any]:
        answer = instance_for(self.stream.seed, turn.t, turn.cls).answer
        credited = result.ok and is_exact(result.value, answer)
        self.auto_runs += 1
        self.auto_correct += credited
        return sandbox_record(result, "after_end", turn.t, script=found[0], credited=credited)

    def auto_turn(self, turn: Turn, told: bool) -> AutoTurn:
        return self.auto_turns([turn], told)[0]

    def auto_turns(self, turns: list[Turn], told: bool) -> list[AutoTurn]:
        """The remaining occurrences of built types after the cut-off: each runs through its
        type's latest script (in parallel threads), credited when exactly right."""
        found = [self._script_for(turn.cls) for turn in turns]
        jobs = [(turn, f) for turn, f in zip(turns, found, strict=True) if f is not None]
        if len(jobs) > 1 and self.workers > 1:
            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                results = list(pool.map(lambda job: self._execute(*job), jobs))
        else:
            results = [self._execute(*job) for job in jobs]
        runs = iter(results)
        out = []
        for turn, f in zip(turns, found, strict=True):
            record: dict[str, Any] = {
                "instance": instance_for(self.stream.seed, turn.t, turn.cls).to_dict()
            }
            if f is None:
                record.update(sandbox=[], credited=False, reason="no script bound to this type")
            else:
                run = self._credit(turn, f, next(runs))
                record.update(sandbox=[run], credited=run["credited"])
            out.append(AutoTurn(notice="", record=record))
        return out

    def episode_record(self) -> dict[str, Any]:
        realised = self.submits_correct + self.auto_correct - self.cost * self.writes
        return {
            "r3": {
                "protocol": "paper",
                "realised_utility": realised,
                "writes": self.writes,
                "rebuilds": self.rebuilds,
                "auto_runs": self.auto_runs,
                "auto_correct": self.auto_correct,
                "submits": self.submits,
                "submits_correct": self.submits_correct,
                "run_calls": self.run_calls,
                "cross_type_refused": self.cross_refused,
                "replies": self.replies,
                "tokens_left": self.tokens_left,
                "session_end": self.ended or "stream_end",
                "sandbox_backend": self.sandbox.backend,
                "scripts": {
                    name: {"family": self.label(s.cls), "writes": s.writes}
                    for name, s in self.scripts.items()
                },
            }
        }


class PaperProblemReader(ObservationReader):
    """Reads the paper's ``PROBLEM k of N`` texts as a scripted actor would: the family from
    the question's wording (``covers.recognise``), the inputs from the named values."""

    _HEAD = re.compile(r"^PROBLEM (\d+) of (\d+):\s*$")
    _VALUES = re.compile(r"^The named values in this problem are: (\{.*\}) \(keys: \[.*\]\)\.$")

    def __init__(self) -> None:
        super().__init__([f.name for f in FAMILIES], self._HEAD.pattern)

    def read(self, text: str) -> list[ReaderEvent]:
        lines = text.splitlines()
        events = []
        for i, line in enumerate(lines):
            head = self._HEAD.match(line)
            if head is None:
                continue
            question = lines[i + 1] if i + 1 < len(lines) else ""
            values = next((m for x in lines[i + 1 :] if (m := self._VALUES.match(x))), None)
            family = recognise(question)
            if family is None or values is None:
                raise ValueError(f"cannot read problem {head.group(1)}: {question!r}")
            events.append(
                ReaderEvent(
                    number=int(head.group(1)),
                    n_tasks=int(head.group(2)),
                    label=family,
                    auto=False,
                    inputs=ast.literal_eval(values.group(1)),
                )
            )
        return events
