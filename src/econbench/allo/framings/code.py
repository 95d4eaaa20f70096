"""R2, code (docs/allobench.md §4): claiming a solver means handing over its source code.

Under protocol ``"paper"`` (the default) R2 is played as the paper played it: hidden problem
types, any non-empty code accepted without a look at it, the paper's turn rules (see
``paper_solver.py``). This module's texts and rules are protocol ``"econbench"``:

Same tasks as R1, but ``claim_solver(code)`` must carry Python source that defines
``def solve(inputs: dict) -> float``. The code is checked for *form* only and never run:
correctness is never checked, and the prompt does not say so.

What counts as a valid solver (:func:`check_solver_code`, shared with R3's ``write_script``):

- non-empty after stripping whitespace;
- parses with ``ast.parse`` — after removing a Markdown code fence around it (```python …
  ```), which models often add; the fence-free code is what is kept (and, in R3, run);
- defines a top-level (module-level) ``def solve`` — not ``async def``, not a lambda assigned
  to ``solve``, not a method — that can be called with exactly one positional argument
  (at least one positional parameter or ``*args``; at most one without a default).
  Annotations are not required: ``def solve(inputs):`` counts; any body counts.

An invalid claim is an error result and the actor may retry within the turn; the turn allows
``max_calls_per_turn`` = 3 tool calls, after which (or after a reply without a tool call) it
is an unresolved PASS. ``skip_solver()`` is PASS. Automatic turns are batched notices, as in R1.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from econbench.agents.tools import ToolError, tool
from econbench.allo.framings.declarative import DecisionToolkit, SolverEpisode, SolverFraming
from econbench.allo.framings.paper_solver import PaperCodeEpisode
from econbench.allo.framings.registry import register

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_+-]*[ \t]*\n(.*?)\n?[ \t]*```\s*$", re.DOTALL)


def strip_fences(code: str) -> str:
    """The code inside one Markdown fence, or ``code`` unchanged if it has none."""
    match = _FENCE.match(code)
    return match.group(1) if match else code


def check_solver_code(code: str) -> str | None:
    """Why ``code`` (fence removed) is not a valid solver definition, or ``None`` if it is."""
    code = strip_fences(code)
    if not code.strip():
        return "code is empty"
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"code does not parse: {exc.msg}{where}"
    except ValueError as exc:  # e.g. null bytes
        return f"code does not parse: {exc}"
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "solve"]
    if not defs:
        return "code must define a top-level function `def solve(inputs: dict)`"
    args = defs[-1].args
    positional = [*args.posonlyargs, *args.args]
    required = len(positional) - len(args.defaults)
    required_kwonly = sum(d is None for d in args.kw_defaults)
    if (not positional and args.vararg is None) or required > 1 or required_kwonly:
        return "`solve` must take exactly one argument: `def solve(inputs: dict)`"
    return None


class CodeToolkit(DecisionToolkit):
    """R2's tools: a claim carries the solver's source code."""

    @tool("write")
    def claim_solver(self, code: str) -> dict[str, Any]:
        """Build a solver for the current task's family from Python source code.

        The solver solves this task and every later task of the same family automatically.
        It uses up one of your builds and cannot be undone.

        Args:
            code: Python source code defining `def solve(inputs: dict) -> float`, which
                receives a task's inputs and returns its answer.
        """
        problem = check_solver_code(code)
        if problem is not None:
            raise ToolError(f"claim_solver: {problem}; nothing was built")
        self._decide(True)
        self.code = strip_fences(code)
        return {"decision": "claimed", "message": "Solver built for this family."}

    @tool("write")
    def skip_solver(self) -> dict[str, Any]:
        """Skip the current task without building a solver; the task stays unsolved."""
        self._decide(False)
        return {"decision": "skipped", "message": "Task skipped."}

    def reset(self) -> None:
        super().reset()
        self.code: str | None = None


class CodeEpisode(SolverEpisode):
    """An R2 episode."""

    toolkit: CodeToolkit
    system_template = "r2_system"
    task_template = "r2_task"

    def make_toolkit(self) -> CodeToolkit:
        toolkit = CodeToolkit()
        toolkit.reset()
        return toolkit


@register
class CodeFraming(SolverFraming):
    """R2: claim a solver by supplying its code."""

    name = "r2"
    order = 2
    title = "code (claim_solver(code) / skip_solver)"
    label = "R2 code"
    max_tokens = 2500
    reply_style = "code"
    episode_class = CodeEpisode
    paper_episode_class = PaperCodeEpisode
