"""Small helpers the scripted routines share: reading their own tool results."""

from __future__ import annotations

from typing import Any

from econbench.agents.tools import ToolCall


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments)


def ok(result: dict[str, Any]) -> bool:
    return result.get("status") == "success"


def is_morning(observation: dict[str, Any]) -> bool:
    return "morning" in observation.get("wake_reasons", [])
