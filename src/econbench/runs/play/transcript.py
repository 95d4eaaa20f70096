"""A turn's conversation as text for the terminal: what is new since the person last looked.

The observation (a ``user`` message) is printed exactly as the model receives it; a tool's
result is the same JSON the model reads, indented to be read by a person; the person's own
earlier actions (``assistant`` messages) are echoed as the command that makes them, which
matters after a resume, when they were replayed rather than typed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from econbench.agents.models.base import ChatMessage


def first_shown(messages: Sequence[ChatMessage]) -> int:
    """Where a person who just sat down starts reading: after the system prompt in a new
    game; from the last observation in one already under way (a resumed game)."""
    if not any(m.role == "assistant" for m in messages):
        return 1 if messages and messages[0].role == "system" else 0
    last_user = max(i for i, m in enumerate(messages) if m.role == "user" or i == 0)
    return last_user


def message_text(message: ChatMessage) -> str:
    """One message as the terminal shows it."""
    if message.role == "tool":
        return f"<- {message.name or 'result'}: {readable_json(message.content)}"
    if message.role == "assistant":
        calls = [command_text(c.name, c.arguments) for c in message.tool_calls]
        text = message.content.strip()
        return "\n".join([*([text] if text else []), *(f"> {c}" for c in calls)]) or "> (wait)"
    if message.role == "system":
        return message.content
    return message.content


def command_text(name: str, arguments: dict[str, object]) -> str:
    """A tool call as the ``key=value`` command that makes it."""
    parts = [name]
    for key, value in arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        if isinstance(shown, str) and (not shown or any(c.isspace() for c in shown)):
            shown = json.dumps(shown)
        parts.append(f"{key}={shown}")
    return " ".join(parts)


def readable_json(text: str) -> str:
    """``text`` indented when it is JSON; as it is otherwise."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text
