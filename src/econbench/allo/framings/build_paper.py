"""R3 as the paper ran it (protocol ``"paper"``): one long session of real scripts, no feedback.

The paper's R3 harness (``scripts/session/driver.py`` ``run_session``, ``session_state.py``,
``sandbox_exec.py``, ``prompts.py``, run by ``scripts/ladder/arm_a1_announce.py``) shows every
problem of the stream as ``PROBLEM k of N``, untitled (its wording is one of the family's
covers, ``covers.py``), with its named values under the paper's own key names (``X, A, B, C,
K`` …) and the answer's digit count as "significant figures". The model may write, run, list
and read scripts and must ``submit_answer`` to move on. Its rules, reproduced here:

- Every tool call of a reply runs, in order (``plan_calls``), each answered with the paper's
  result dict, keys in the paper's order, as ``json.dumps`` writes it (``BuildFraming.
  render_result``), plus ``tokens_remaining``. Arguments the model sent as malformed JSON get
  the paper's ``malformed JSON in tool arguments …`` error, an unknown tool its ``no such tool
  …`` error; otherwise the tool reads its arguments as the paper's ``SessionState.call`` does
  (``args.get(...)``: a missing argument is ``None``, unknown ones are ignored).
- ``write_script(name, code)``: any non-empty name and code; every successful write, a new name
  or a replacement, spends one unit of the session's budget (``this used one write``) and
  binds the script to the hidden type of the problem on screen (rewriting a name on another
  type's problem rebinds it). A write with no budget left is refused. The result says
  ``writes_remaining``; a script without ``def solve`` gets the paper's warning.
- ``run_script(name, inputs)`` runs only a script bound to the current problem's type (else it
  is refused, nothing charged). It runs what the paper's harness runs, the script followed by
  ``print('ANSWER:', solve(<inputs as a Python literal>))``, in econbench's sandbox
  (``run_harness``), and answers as the paper does: ``return_value`` is the number the paper's
  ``_parse_answer`` reads from the output (the last ``ANSWER:`` line, so always a float, e.g.
  ``87.0``), ``stdout`` the output stripped and cut to 1,000 characters (``ANSWER: 87``); a
  failed run is ``exit <code>: <last line of stderr>`` or ``timeout`` with the paper's hints
  (``paper_run_error``) and an empty ``stdout``. Free.
- ``submit_answer(value)`` answers ``Recorded answer for problem i. n problem(s) remaining.``
  (``i`` is 0-based, as the paper prints it): no word about correctness. The paper's pointer
  moves on at once: later calls of the same reply act on the next problem (a write binds to
  its type and counts as its build; a run is checked against its type).
- Every tool result carries ``tokens_remaining``: the session's 300,000-token cap minus the
  input and output tokens of every reply so far (``Framing.token_cap_counts``). The session is
  cut off when fewer than 256 tokens remain (the paper's ``MIN_CALL_BUDGET``), after
  ``max(60, 15 T)`` replies, or, unless ``full_stream``, right after the reply whose write
  spends the budget (the paper's ``stop_on_budget_exhausted``, its default; ``--full-stream``
  runs on, writes refused).
- A reply without a tool call: the paper's frontier runs keep it in the conversation, follow it
  with the paper's reminder and, at the second in a row, move to the next problem leaving this
  one unanswered (``no_call_attempts`` = 2, ``keeps_no_call_replies``). Its
  ``--empty-fence-retry N`` runs (the Qwen runs, N = 4) prune such a reply, and the reminder
  before it, from the conversation, re-ask up to N replies in all (first reminder, then the
  sharper second one) and prune the last too before moving on (``BuildFraming(empty_fence_retry
  =N)``: ``no_call_attempts`` = N, ``keeps_no_call_replies`` off, ``prunes_last_no_call_reply``).
- The paper's R3 never had a build charge. The charge sentence used here (``r3_paper_cost_rule``,
  worded after the paper's R2 one) is stated at K > 0, and at K = 0 only with
  ``state_cost=True``; the default (``state_cost=False``) at K = 0 is the paper's R3 prompt.

How this maps onto the game (``econbench.allo.game.core``), and the choices the paper leaves open:

- *Commit.* The first write while a problem of a type is current is that type's build, at
  that problem's sighting, exactly as the paper's scorer (``skirental_scorer.
  actions_from_session``) attributes builds; so the game's first-sight flags and hazard mean
  what they mean in R0–R2. Every further write for the type (the same problem or later) is a
  rebuild: ``Game.charge_rebuild``, one budget unit and K again.
- *Later occurrences* of a type with a build are asked too (``asks_tooled_turns``): the model
  runs its script and submits. The game still collects them (the allocation score, as in every
  rung); ``realised_utility`` credits a problem only for an exactly right ``submit_answer``
  (an integer, an integral float or an integral numeric string, as the paper's
  ``as_exact_int`` grades).
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
- *Two answers in one reply.* As in the paper, a second ``submit_answer`` in one reply
  answers the next problem before it is shown (the pointer has moved on); that problem is
  never shown and the conversation goes on with the one after it (``answered_unseen``). It
  is resolved (answered), a PASS unless its type was built.
"""

from __future__ import annotations

import ast
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, ClassVar

from econbench.agents.tools import ToolCall, Toolkit, ToolSpec, tool
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
from econbench.allo.framings.covers import instance_text, recognise
from econbench.allo.framings.script_runs import is_exact, sandbox_record
from econbench.allo.game import Turn
from econbench.allo.game.families import FAMILIES, family_for_class
from econbench.allo.game.instances import framing_instances
from econbench.allo.game.stream import Stream
from econbench.allo.sandbox.core import (
    REASON_CPU,
    REASON_CRASHED,
    REASON_EXCEPTION,
    REASON_FORBIDDEN,
    REASON_KILLED,
    REASON_MEMORY,
    REASON_SYNTAX,
    REASON_TIMEOUT,
    SandboxResult,
)

if TYPE_CHECKING:
    from econbench.allo.framings.build import BuildFraming

MIN_CALL_TOKENS = 256
"""The paper's ``MIN_CALL_BUDGET``: the session ends when fewer tokens than this remain."""
REPLY_LIMIT_FLOOR = 64
"""The paper's driver asks for ``max(64, min(max_tokens, tokens left of the cap))`` a reply."""
REPLIES_PER_TASK = 15
"""The paper's session limit is ``max(60, 15 N)`` model replies."""
PAPER_NO_CALL_ATTEMPTS = 2
"""Replies without a tool call a problem takes: the paper's driver reminds once, then moves on."""
STDOUT_SHOWN = 1000
"""Characters of a run's (stripped) output the paper shows."""
TOOL_NAMES = ("write_script", "run_script", "list_scripts", "read_script", "submit_answer")
MALFORMED = "malformed JSON in tool arguments — resend valid JSON matching the tool schema."
HARNESS_ENTRY = "_econbench_paper_harness_done"
"""The sandbox entry the paper's harness text ends with (the harness does its work at module
level, as ``python -c`` runs it; the entry only returns)."""

PAPER_SCHEMAS: dict[str, dict[str, Any]] = {
    "write_script": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "a short name for the script"},
            "code": {"type": "string", "description": "Python source defining solve(inputs)"},
        },
        "required": ["name", "code"],
    },
    "run_script": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "name of a script you saved"},
            "inputs": {
                "type": "object",
                "description": "object mapping your script's input names to numbers (omit for "
                "an empty dict)",
            },
        },
        "required": ["name"],
    },
    "list_scripts": {"type": "object", "properties": {}},
    "read_script": {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "name of a saved script"}},
        "required": ["name"],
    },
    "submit_answer": {
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "the numeric answer for this problem"}
        },
        "required": ["value"],
    },
}
"""The paper's ``TOOL_SCHEMAS(class_bound=True)`` parameters, key for key and in its order."""


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


# -- the paper's harness around a run ---------------------------------------------------------

_NUM = re.compile(r"-?\$?\s*\d[\d,]*(?:\.\d+)?")
_ANSWER_LINE = re.compile(r"ANSWER:\s*(.+)", re.IGNORECASE)
_SYSTEM_EXIT = re.compile(r"^SystemExit: the script called exit\((.*)\)$", re.S)
_SYNTAX_WHERE = re.compile(r" \(script\.py, line \d+\)$")


def _to_float(token: str) -> float | None:
    try:
        return float(token.replace("$", "").replace(",", "").strip())
    except ValueError:
        return None


def parse_answer(stdout: str) -> float | None:
    """The paper's ``_parse_answer``: the last number of the last ``ANSWER:`` line that has
    one, else the last number anywhere in the output, as a float; None without a number."""
    for raw in reversed(_ANSWER_LINE.findall(stdout or "")):
        nums = _NUM.findall(raw)
        if nums:
            value = _to_float(nums[-1])
            if value is not None:
                return value
    nums = _NUM.findall(stdout or "")
    return _to_float(nums[-1]) if nums else None


def run_harness(code: str, inputs: dict[str, Any]) -> str:
    """The program the paper runs for ``run_script``: the script, then a line printing
    ``ANSWER:`` and ``solve`` of the inputs written as a Python literal; then an entry that
    only returns (econbench's sandbox calls one after running the module)."""
    return (
        f"{code}\n\nprint('ANSWER:', solve({inputs!r}))\n"
        f"\n\ndef {HARNESS_ENTRY}(inputs):\n    return None\n"
    )


def _last_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""


def _exit_status(code: Any) -> tuple[int, str]:
    """How ``python -c`` ends on ``SystemExit(code)``: its exit status and what it prints."""
    if code is None:
        return 0, ""
    if isinstance(code, int):
        return code % 256, ""
    return 1, str(code)


def paper_outcome(result: SandboxResult) -> tuple[str | None, str | None]:
    """A sandbox run as the paper's ``_run`` reports it: ``(stdout, None)`` after a clean exit,
    else ``(None, error)``: ``timeout``, or ``exit <status>: <last line of stderr>``. Outcomes
    the paper's bare subprocess cannot have (a sandbox refusal, the output cap) keep the
    sandbox's own reason and message."""
    if result.ok:
        return result.stdout or "", None
    reason, error = result.reason, (result.error or "").strip()
    if reason in (REASON_TIMEOUT, REASON_CPU):
        return None, "timeout"
    if reason == REASON_EXCEPTION and (found := _SYSTEM_EXIT.match(error)):
        try:
            code = ast.literal_eval(found.group(1))
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            code = found.group(1)
        status, said = _exit_status(code)
        if status == 0:
            return result.stdout or "", None
        return None, f"exit {status}: {_last_line(said)}"
    if reason == REASON_SYNTAX:
        return None, f"exit 1: {_SYNTAX_WHERE.sub('', _last_line(error))}"
    if reason in (REASON_EXCEPTION, REASON_FORBIDDEN):
        return None, f"exit 1: {_last_line(result.stderr) or _last_line(error)}"
    if reason == REASON_MEMORY:
        return None, f"exit 1: {_last_line(result.stderr) or 'MemoryError'}"
    if reason in (REASON_KILLED, REASON_CRASHED):
        status = result.exit_code if isinstance(result.exit_code, int) else 1
        return None, f"exit {status}: {_last_line(result.stderr)}"
    return None, f"{reason or 'error'}: {error}" if error else (reason or "error")


def paper_run_error(error: str, cpu_s: int) -> str:
    """The paper's ``_friendly_error``: a failed run with its hint for the usual mistakes."""
    low = error.lower()
    if "eoferror" in low:
        return (
            f"{error} -- the sandbox has NO stdin; never call input(). Read every value "
            "from the inputs dict, e.g. inputs['X']."
        )
    if "nameerror" in low:
        return (
            f"{error} -- all inputs live in the inputs dict (e.g. inputs['X']); there are "
            "no bare top-level variables."
        )
    if "timeout" in low:
        return f"{error} -- your code ran too long ({cpu_s}s CPU limit)."
    return error


def exact_int(value: Any) -> int | None:
    """The paper's ``as_exact_int``: an int, an integral float, or a numeric string with an
    integral value (commas and underscores dropped); else None. ``bool`` is never a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip().replace(",", "").replace("_", "")
        try:
            number = Decimal(text)
        except InvalidOperation:
            return None
        if not number.is_finite():
            return None
        return int(number) if number == number.to_integral_value() else None
    return None


def call_arguments(arguments: Any) -> dict[str, Any] | None:
    """A call's arguments as the paper's driver reads them; None when they are malformed."""
    if isinstance(arguments, dict):
        return arguments
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            arguments = json.loads(arguments)
        except (json.JSONDecodeError, RecursionError):
            return None
    if isinstance(arguments, dict):
        return arguments
    return None if arguments is None or arguments else {}  # a truthy non-object: malformed


def _hashable(name: Any) -> bool:
    try:
        hash(name)
    except TypeError:
        return False
    return True


def _memory_text(memory_mb: int) -> str:
    return f"{memory_mb // 1024}GiB" if memory_mb % 1024 == 0 else f"{memory_mb}MiB"


@dataclass
class PaperScript:
    """A saved script, the type it is bound to (None: written after the last problem), and
    when it was last written."""

    code: str
    cls: int | None
    written: int  # the session's write count when it was (last) written
    writes: int = 1


@dataclass
class ProblemState:
    """What the calls did while one problem was current."""

    writes: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    submit: dict[str, Any] | None = None
    commit: bool = False
    rebuilds: int = 0


class PaperBuildToolkit(Toolkit):
    """The paper's five R3 tools: its schemas, descriptions and result dicts."""

    _DESCRIPTIONS: ClassVar[dict[str, str]] = {
        "write_script": "r3_paper_tool_write",
        "run_script": "r3_paper_tool_run",
    }

    def __init__(self, episode: PaperBuildEpisode) -> None:
        self.ep = episode

    def specs(self) -> list[ToolSpec]:
        """The paper's schemas, with its multi-line descriptions of the two script tools."""
        limits = self.ep.sandbox.limits
        values = {"cpu_s": f"{limits.cpu_s}s", "memory": _memory_text(limits.memory_mb)}
        out = []
        for spec in super().specs():
            template = self._DESCRIPTIONS.get(spec.name)
            if template is not None:
                spec = replace(spec, description=render(template, **values))
            out.append(spec.with_schema(PAPER_SCHEMAS[spec.name]))
        return out

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        """One call as the paper's driver answers it (its checks in its order), with
        ``tokens_remaining`` added."""
        args = call_arguments(arguments)
        if args is None:
            result: dict[str, Any] = {"ok": False, "error": MALFORMED}
        elif name not in TOOL_NAMES:
            result = {
                "ok": False,
                "error": f"no such tool '{name}'. Available tools: {sorted(TOOL_NAMES)}.",
            }
        else:
            result = self.ep.dispatch(name, args)
        return self.ep.stamp(result)

    # The tools' signatures and docstrings give the specs their names and descriptions; calls
    # go through ``call`` above, which reads the arguments as the paper does.
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
        return self.ep.run(name, inputs)

    @tool("read")
    def list_scripts(self) -> dict[str, Any]:
        """List the names of all scripts you have saved so far (they persist across every
        problem in the session)."""
        return self.ep.list_scripts()

    @tool("read")
    def read_script(self, name: str) -> dict[str, Any]:
        """Return the source code of a saved script (to recall or adapt prior work).

        Args:
            name: name of a saved script
        """
        return self.ep.read_script(name)

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
    framing: BuildFraming

    def __init__(self, framing: BuildFraming, stream: Stream, cost: float, budget: int) -> None:
        super().__init__(framing, stream, cost, budget)
        if stream.config.n_classes > len(FAMILIES):
            raise ValueError(f"r3 has {len(FAMILIES)} problem families; too many classes")
        self.sandbox = framing.sandbox
        self.workers = framing.workers
        self.stop_on_budget = not framing.full_stream
        # --full-stream: the session runs on after the budget is spent (writes refused), so the
        # runner keeps asking the turns the game has already scored.
        self.asks_after_budget = framing.full_stream
        self.toolkit = PaperBuildToolkit(self)
        self.scripts: dict[str, PaperScript] = {}
        self.authored: set[int] = set()  # types with a build (== the game's tooled classes)
        self.problems: dict[int, ProblemState] = {}
        self.writes = self.rebuilds = self.run_calls = self.cross_refused = 0
        self.refused_writes = 0
        self.submits = self.submits_correct = self.auto_runs = self.auto_correct = 0
        self.replies = 0
        self.max_replies = max(60, REPLIES_PER_TASK * self.n_tasks)
        self.tokens_left: int | None = None
        self.ended: str | None = None  # why the session was cut off
        if self.stop_on_budget and budget <= 0:
            self.ended = "budget"
        self.turn: Turn | None = None
        self.cur = 0  # the paper's pointer: the problem the next call acts on
        self._first: tuple[ToolCall, dict[str, Any]] | None = None

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
        """What every tool result ends with: the session's tokens left (when capped)."""
        if self.tokens_left is not None:
            return {**result, "tokens_remaining": self.tokens_left}
        return result

    def plan_calls(self, calls: list[ToolCall]) -> CallPlan:
        """Every call of the reply runs, in order (the paper's driver runs them all): they run
        here, the first one's result is handed over by ``execute``, the others' with the plan."""
        results = [self.toolkit.call(call.name, call.arguments) for call in calls]
        self._first = (calls[0], results[0])
        return CallPlan(0, dict(enumerate(results[1:], start=1)))

    def execute(self, call: ToolCall) -> dict[str, Any]:
        first, self._first = self._first, None
        if first is not None and first[0] is call:
            return first[1]
        return self.toolkit.call(call.name, call.arguments)

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

    def begin_turn(self, turn: Turn, budget_left: int) -> str:
        self.turn = turn
        self.cur = turn.t
        self.problems.setdefault(turn.t, ProblemState())
        instance = framing_instances(self.framing, self.stream)[turn.t]
        return render(
            "r3_paper_task",
            number=turn.t + 1,
            n_tasks=self.n_tasks,
            question=instance_text(instance),
            inputs=repr(instance.inputs),
            keys=", ".join(instance.inputs),
            sig_figs=sig_figs(instance.answer),
        )

    # -- tool bodies ----------------------------------------------------------------------
    @property
    def writes_left(self) -> int:
        return max(0, self.budget - self.writes)

    def _current_cls(self) -> int | None:
        """The hidden type of the problem the pointer is on (None once all are submitted)."""
        return self.stream.classes[self.cur] if self.cur < self.n_tasks else None

    def _state(self) -> ProblemState | None:
        if self.cur >= self.n_tasks:
            return None
        return self.problems.setdefault(self.cur, ProblemState())

    def dispatch(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """The paper's ``SessionState.call``: each tool reads the arguments it takes."""
        if name == "write_script":
            return self.write(args.get("name"), args.get("code"))
        if name == "run_script":
            return self.run(args.get("name"), args.get("inputs"))
        if name == "list_scripts":
            return self.list_scripts()
        if name == "read_script":
            return self.read_script(args.get("name"))
        return self.submit(args.get("value"))

    def no_script(self, name: Any) -> dict[str, Any]:
        shown = sorted(self.scripts) or "(none)"
        return {"ok": False, "error": f"no script named '{name}'. Available: {shown}"}

    def write(self, name: Any, code: Any) -> dict[str, Any]:
        if self.writes >= self.budget:
            self.refused_writes += 1
            return {
                "ok": False,
                "error": f"write budget exhausted ({self.budget} scripts for the whole session). "
                "write_script is disabled; reuse a saved script with run_script (see "
                "list_scripts) or compute by hand.",
            }
        if not isinstance(name, str) or not name:
            return {"ok": False, "error": "name must be a non-empty string"}
        if not isinstance(code, str) or not code.strip():
            return {"ok": False, "error": "code must be a non-empty string"}
        old = self.scripts.get(name)
        cls = self._current_cls()
        self.writes += 1
        self.scripts[name] = PaperScript(
            code=code, cls=cls, written=self.writes, writes=(old.writes + 1) if old else 1
        )
        state = self._state()
        if state is not None and cls is not None:
            rebuild = cls in self.authored
            if rebuild:
                state.rebuilds += 1
                self.rebuilds += 1
            else:
                self.authored.add(cls)
                state.commit = True
            moved_from = None
            if old is not None and old.cls is not None and old.cls != cls:
                moved_from = self.label(old.cls)
            state.writes.append(
                {
                    "name": name,
                    "kind": "overwrite" if old else "new",
                    "build": "rebuild" if rebuild else "build",
                    "rebinds_from": moved_from,
                }
            )
        if self.stop_on_budget and self.writes_left == 0 and self.ended is None:
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

    def run(self, name: Any, inputs: Any) -> dict[str, Any]:
        script = self.scripts.get(name) if _hashable(name) else None
        if script is None:
            return self.no_script(name)
        if inputs is None:
            inputs = {}
        if not isinstance(inputs, dict):
            return {
                "ok": False,
                "error": "inputs must be a JSON object mapping your script's input names to "
                "numbers",
            }
        self.run_calls += 1
        if script.cls != self._current_cls():
            self.cross_refused += 1
            return {
                "ok": False,
                "error": f"script '{name}' is bound to a different hidden problem type and "
                "cannot be run on the current problem.",
            }
        if not defines_solve(script.code):
            return {"ok": False, "error": "script does not define `def solve(inputs):`."}
        result = self.sandbox.run(run_harness(script.code, inputs), {}, entry=HARNESS_ENTRY)
        stdout, error = paper_outcome(result)
        state = self._state()
        if error is not None:
            if state is not None:
                state.runs.append(
                    sandbox_record(result, "run_script", self.cur, script=name, error=error)
                )
            return {
                "ok": False,
                "error": paper_run_error(error, self.sandbox.limits.cpu_s),
                "stdout": "",
            }
        value = parse_answer(stdout or "")
        if state is not None:
            state.runs.append(
                sandbox_record(result, "run_script", self.cur, script=name, return_value=value)
            )
        return {"ok": True, "return_value": value, "stdout": (stdout or "").strip()[:STDOUT_SHOWN]}

    def list_scripts(self) -> dict[str, Any]:
        return {"ok": True, "scripts": sorted(self.scripts), "writes_remaining": self.writes_left}

    def read_script(self, name: Any) -> dict[str, Any]:
        script = self.scripts.get(name) if _hashable(name) else None
        if script is None:
            return self.no_script(name)
        return {"ok": True, "name": name, "code": script.code}

    def submit(self, value: Any) -> dict[str, Any]:
        if self.cur >= self.n_tasks:
            return {"ok": False, "error": "all problems already submitted; the session is over."}
        state = self._state()
        assert state is not None
        instance = framing_instances(self.framing, self.stream)[self.cur]
        answer = exact_int(value)
        credited = answer is not None and answer == instance.answer
        self.submits += 1
        self.submits_correct += credited
        state.submit = {"answer": value, "credited": credited}
        t = self.cur
        self.cur += 1
        remaining = self.n_tasks - self.cur
        tail = f"{remaining} problem(s) remaining." if remaining else "That was the last problem."
        return {
            "ok": True,
            "message": f"Recorded answer for problem {t}. {tail}",
            "problems_remaining": remaining,
        }

    # -- turn ends ------------------------------------------------------------------------
    def answered_unseen(self, turn: Turn) -> bool:
        return turn.t < self.cur

    def end_unseen(self, turn: Turn) -> TurnOutcome:
        self.turn = turn
        return self.end_turn("answered_unseen")

    def turn_over(self) -> bool:
        return (self.turn is not None and self.cur > self.turn.t) or self.ended is not None

    def end_turn(self, why: str) -> TurnOutcome:
        turn = self.turn
        assert turn is not None
        instance = framing_instances(self.framing, self.stream)[turn.t]
        if why == "token_limit" and self.ended is None:
            self.ended = "token_cap"
        state = self.problems.setdefault(turn.t, ProblemState())
        record: dict[str, Any] = {
            "instance": instance.to_dict(),
            "writes": state.writes,
            "sandbox": state.runs,
            "submitted": state.submit,
        }
        if self.ended is not None and state.submit is None:
            tail = self._tail_run(turn)  # the problem on screen at the cut-off
            if tail is not None:
                record["sandbox"] = [*state.runs, tail]
                record["credited"] = tail["credited"]
        decided = state.commit or state.submit is not None
        if turn.has_tool or decided:
            reason = None
        elif self.ended == "token_cap":
            reason = "episode token limit reached"
        elif why == "no_call":
            reason = "no tool call: the problem was left unanswered"
        else:
            reason = f"the problem was left unanswered ({self.ended or why})"
        self.cur = max(self.cur, turn.t + 1)  # a problem left unanswered: the paper moves on
        return TurnOutcome(
            commit=state.commit,
            resolved=reason is None,
            reason=reason,
            rebuilds=state.rebuilds,
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
        instance = framing_instances(self.framing, self.stream)[turn.t]
        return self.sandbox.run(found[1].code, instance.inputs)

    def _credit(
        self, turn: Turn, found: tuple[str, PaperScript], result: SandboxResult
    ) -> dict[str, Any]:
        answer = framing_instances(self.framing, self.stream)[turn.t].answer
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
                "instance": framing_instances(self.framing, self.stream)[turn.t].to_dict()
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
                "refused_writes": self.refused_writes,
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
                    name: {
                        "family": None if s.cls is None else self.label(s.cls),
                        "writes": s.writes,
                    }
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
