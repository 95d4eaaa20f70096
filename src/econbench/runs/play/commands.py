"""A typed command as a tool call: ``make_offer L2 3.5 20`` or ``make_offer listing_id=L2 …``.

Positional arguments fill the tool's parameters in the order of its JSON schema (the order the
model is shown); ``key=value`` names one (a token is a keyword only when ``key`` is one of the
tool's parameters, so ``body="a=b"`` stays text). Quotes group words (``shlex``). Each value is
read as the schema's type says (integer, number, boolean, ``null`` where allowed, else text);
the arguments are then checked by the tool's own validator, so a mistake is reported in the
words the tool itself would use, before any action is spent.

Besides the tools, a person has a few commands of their own: ``wait`` (or ``next day``) ends
their day the way a model does, by calling the wait tool; ``help [TOOL]``, ``tools``,
``show [PANEL]``, ``prompt`` and ``quit`` are answered by the seat and cost nothing.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from econbench.agents.tools import ToolCall, ToolError, ToolSpec, error_result

WAIT_WORDS = frozenset({"wait", "next", "next day", "sleep"})
"""What a person types to end their day (mapped to the wait tool)."""
CONTROLS = {
    "help": "help [TOOL]: the commands, or one tool's description and arguments",
    "tools": "tools: every tool with its arguments",
    "show": "show [PANEL]: the firm's books, stock, listings, offers, invoices or messages "
    "(free: no action spent)",
    "prompt": "prompt: the system prompt the firm was given",
    "quit": "quit: stop here; `econbench resume RUN_DIR` continues the run later",
}
"""The seat's own commands (they spend no action), with their one-line help."""
ALIASES = {"exit": "quit", "?": "help", "q": "quit"}


@dataclass(frozen=True)
class Control:
    """One of the seat's own commands (``CONTROLS``), with the rest of the line."""

    name: str
    argument: str = ""


@dataclass(frozen=True)
class Refused:
    """A command that cannot be sent: the error result the tool would give for it."""

    result: dict[str, Any]

    @property
    def message(self) -> str:
        return str(self.result.get("error", ""))


Parsed = ToolCall | Control | Refused


def parse_command(line: str, tools: Sequence[ToolSpec], wait_tool: str | None = None) -> Parsed:
    """What ``line`` asks for: a checked tool call, a seat command, or why it is refused.

    ``wait_tool`` is the tool that ends the day (CoffeeBench's ``wait_for_next_day``):
    ``wait`` calls it. An empty line is refused with a hint."""
    text = line.strip()
    if not text:
        return Refused(error_result("type a tool name and its arguments, or `help`"))
    if " ".join(text.lower().split()) in WAIT_WORDS:
        if wait_tool is None or not any(t.name == wait_tool for t in tools):
            return Refused(error_result("there is no tool to wait with here"))
        return ToolCall(wait_tool, {})
    try:
        words = shlex.split(text)
    except ValueError as exc:
        return Refused(error_result(f"cannot read the command: {exc}"))
    head, rest = words[0], words[1:]
    name = ALIASES.get(head.lower(), head.lower())
    if name in CONTROLS and not any(t.name == head for t in tools):
        return Control(name, " ".join(rest))
    spec = next((t for t in tools if t.name == head), None)
    if spec is None:
        known = ", ".join(t.name for t in tools)
        return Refused(error_result(f"unknown tool '{head}'. Available tools: {known}"))
    try:
        arguments = read_arguments(spec, rest)
        spec.validate(arguments)
    except ToolError as exc:
        return Refused(error_result(str(exc)))
    return ToolCall(spec.name, arguments)


def read_arguments(spec: ToolSpec, words: Sequence[str]) -> dict[str, Any]:
    """``words`` as the tool's arguments: positional in schema order, or ``key=value``."""
    properties: dict[str, Any] = spec.parameters.get("properties") or {}
    order = list(properties)
    arguments: dict[str, Any] = {}
    positional = 0
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in properties:
            if key in arguments:
                raise ToolError(f"{spec.name}: '{key}' is given twice")
            arguments[key] = typed_value(value, properties[key])
            continue
        while positional < len(order) and order[positional] in arguments:
            positional += 1
        if positional >= len(order):
            raise ToolError(
                f"{spec.name}: too many arguments; it takes {len(order)}"
                + (f" ({', '.join(order)})" if order else "")
            )
        key = order[positional]
        arguments[key] = typed_value(word, properties[key])
        positional += 1
    return arguments


def typed_value(text: str, schema: dict[str, Any]) -> Any:
    """``text`` as the JSON type ``schema`` asks for; the text itself when it is not one (the
    tool's validator then says what was expected)."""
    types = schema_types(schema)
    if "null" in types and text.lower() in ("null", "none"):
        return None
    for kind in types:
        value = _as(kind, text)
        if value is not _NOT:
            return value
    return text


def schema_types(schema: dict[str, Any]) -> list[str]:
    """The JSON types a property's schema allows, in the order it lists them."""
    kinds: list[str] = []
    for option in schema.get("anyOf") or [schema]:
        kind = option.get("type")
        kinds.extend(kind if isinstance(kind, list) else [kind] if kind else [])
    return kinds or ["string"]


_NOT = object()


def _as(kind: str, text: str) -> Any:
    """``text`` read as JSON type ``kind``, or ``_NOT``."""
    if kind == "string":
        return text
    if kind == "boolean":
        lowered = text.lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        return _NOT
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            return _NOT
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            return _NOT
        return int(number) if number.is_integer() and "." not in text else number
    if kind in ("object", "array"):
        try:
            return json.loads(text)
        except ValueError:
            return _NOT
    return _NOT


def tool_help(spec: ToolSpec) -> str:
    """A tool's description and its arguments (type, default, description), as text."""
    properties: dict[str, Any] = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or [])
    lines = [f"{spec.name} — {spec.description}"]
    if not properties:
        lines.append("  (no arguments)")
    for key, schema in properties.items():
        kinds = "|".join(schema_types(schema))
        if "enum" in schema:
            kinds = "|".join(map(str, schema["enum"]))
        need = "required" if key in required else f"default {json.dumps(schema.get('default'))}"
        lines.append(f"  {key} ({kinds}, {need}): {schema.get('description', '')}")
    return "\n".join(lines)


def usage_line(spec: ToolSpec) -> str:
    """``make_offer listing_id offered_price qty [payment_terms_days] [message]``."""
    properties = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or [])
    words = [key if key in required else f"[{key}]" for key in properties]
    return " ".join([spec.name, *words])
