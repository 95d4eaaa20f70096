"""What both AlloBench seats share: a turn as the person sees it, and their reply as a model's.

A turn is exactly the request a model would be sent (``econbench.agents.models.human.Turn``):
the conversation, the tools with their schemas, the request settings. A seat shows the
messages the person has not seen yet and takes back a text and at most one tool call, which
become the ``ModelOutput`` of that request: a person costs nothing and uses no tokens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from econbench.agents.models.base import ChatMessage, ModelOutput
from econbench.agents.models.human import PlayerLeft, Turn, person_reply
from econbench.agents.tools import ToolCall, ToolSpec

__all__ = [
    "PlayerLeft",
    "ReplyError",
    "ToolView",
    "check_call",
    "message_view",
    "model_output",
    "quick_replies",
    "shared_prefix",
    "tool_views",
    "turn_limits",
    "unseen",
]

MAX_REPLY_CHARS = 200_000
"""The longest reply (text and arguments together) a seat takes: far more than any script."""

_DECISION_LINE = re.compile(r"^\s*(DECISION:\s*[A-Z]+)\s*$", re.M)


class ReplyError(ValueError):
    """A reply the seat cannot send as typed (an unknown tool, arguments that are not an
    object, a missing required argument); the person is told and asked again."""


@dataclass(frozen=True)
class ToolView:
    """A tool as the person sees it: its name, its description and its parameters."""

    name: str
    description: str
    parameters: dict[str, Any]

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> list[str]:
        req = self.parameters.get("required")
        return [str(r) for r in req] if isinstance(req, list) else []

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def tool_views(tools: Sequence[ToolSpec]) -> list[ToolView]:
    """The tools of a turn as the model's request states them (their OpenAI schemas)."""
    views = []
    for tool in tools:
        function = tool.openai_schema().get("function", {})
        views.append(
            ToolView(
                name=str(function.get("name", tool.name)),
                description=str(function.get("description", "")),
                parameters=dict(function.get("parameters") or {}),
            )
        )
    return views


def message_view(message: ChatMessage) -> dict[str, Any]:
    """One message of the conversation as plain data for a page."""
    return {
        "role": message.role,
        "content": message.content,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in message.tool_calls],
        "tool_call_id": message.tool_call_id,
        "name": message.name,
    }


def shared_prefix(shown: Sequence[ChatMessage], messages: Sequence[ChatMessage]) -> int:
    """How many messages ``messages`` begins with that ``shown`` (what the person saw last
    time) began with too."""
    same = 0
    for before, now in zip(shown, messages, strict=False):
        if before is not now and before.to_dict() != now.to_dict():
            break
        same += 1
    return same


def unseen(shown: Sequence[ChatMessage], messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages of ``messages`` after the part it shares with ``shown``, leaving out the
    person's own replies: what is new to them. A reply the game withdrew (the paper's re-ask
    prunes it) shortens the shared part, so what follows it is shown again."""
    return [m for m in messages[shared_prefix(shown, messages) :] if m.role != "assistant"]


def quick_replies(messages: Sequence[ChatMessage]) -> list[str]:
    """The one-line replies a text framing's instructions ask for (R0's ``DECISION: KEEP``
    and ``DECISION: PASS``), to offer as buttons; empty when it names none."""
    system = next((m.content for m in messages if m.role == "system"), "")
    return list(dict.fromkeys(m.group(1) for m in _DECISION_LINE.finditer(system)))


def check_call(name: str, arguments: Any, tools: Sequence[ToolView]) -> dict[str, Any]:
    """The arguments of a call to ``name``, checked against the turn's tools: the tool must
    be offered, the arguments an object holding every required one (their values go to the
    game as given, which judges them as it judges a model's)."""
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        offered = ", ".join(t.name for t in tools) or "none (reply with text)"
        raise ReplyError(f"no tool {name!r} in this turn; the tools are: {offered}")
    if not isinstance(arguments, dict):
        raise ReplyError(f"the arguments of {name} must be a JSON object, not {arguments!r}")
    missing = [p for p in tool.required if p not in arguments]
    if missing:
        raise ReplyError(f"{name} needs {', '.join(missing)}")
    return arguments


def model_output(text: str, call: tuple[str, dict[str, Any]] | None = None) -> ModelOutput:
    """The person's reply as the model's output: their text and their tool call, no tokens,
    no cost. ``ReplyError`` when it is longer than :data:`MAX_REPLY_CHARS`."""
    size = len(text) + (len(json.dumps(call[1])) if call else 0)
    if size > MAX_REPLY_CHARS:
        raise ReplyError(f"the reply is {size:,} characters; at most {MAX_REPLY_CHARS:,}")
    return person_reply(ToolCall(call[0], call[1], None) if call else None, text)


def turn_limits(turn: Turn) -> dict[str, Any]:
    """The request settings a model would be sent with this turn, for the record shown."""
    return {"max_tokens": turn.config.max_tokens, "tool_choice": turn.config.tool_choice}
