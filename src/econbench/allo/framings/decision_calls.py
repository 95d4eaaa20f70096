"""How the paper resolves a reply's decision tool calls. The keep/pass probe (``r0-tool``) and
R1/R2 under the paper's protocol (``paper_solver``) both use it.

This is the paper's ``urn_common.resolve_zero_arg_decision``, which its keep/pass and
claim/skip scripts share. It is a single pass with no re-ask:
- The first call of one of the two decision tools decides the turn and is answered
  ``{"ok": true}``.
- A later decision call in the same reply is answered that only the first was applied (the
  turn then counts as ``both``).
- A call of any other name is answered ``no such tool``. A reply with only such calls decides
  nothing (``unknown``).
Every call gets its result, in call order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from econbench.agents.tools import ToolCall
from econbench.allo.framings.base import CallPlan

OK: dict[str, Any] = {"ok": True}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
"""The paper's schema of an argument-free tool, sent as it is."""


def no_such_tool(name: str, tools: tuple[str, str]) -> dict[str, Any]:
    """The paper's answer to a call of a tool it does not have."""
    return {"ok": False, "error": f"no such tool '{name}'. Available tools: {', '.join(tools)}."}


def several_decisions(applied: str, tools: tuple[str, str]) -> dict[str, Any]:
    """The paper's answer to a decision call after the first one of a reply (``applied``: the
    first, as the script names it)."""
    return {
        "ok": False,
        "error": f"both {tools[0]} and {tools[1]} called in the same turn; only the first "
        f"('{applied}') was applied.",
    }


def plan_decision(
    calls: list[ToolCall], tools: tuple[str, str], applied: Callable[[str], str] = str.upper
) -> tuple[CallPlan, str]:
    """The plan for ``calls`` and how the turn was read.

    ``how`` is ``"tool"``, ``"both"`` or ``"unknown"``. ``tools`` is ``(commit, decline)``.
    ``applied`` names the decision in the ``both`` answer: upper case in the paper's shared
    resolver, as called in its R2 script.
    """
    valid = [i for i, call in enumerate(calls) if call.name in tools]
    if not valid:
        refusals = {i: no_such_tool(call.name, tools) for i, call in enumerate(calls)}
        return CallPlan(None, refusals, "unknown"), "unknown"
    run = valid[0]
    both = several_decisions(applied(calls[run].name), tools)
    refusals = {
        i: dict(both) if i in valid else no_such_tool(call.name, tools)
        for i, call in enumerate(calls)
        if i != run
    }
    return CallPlan(run, refusals), "tool" if len(valid) == 1 else "both"
