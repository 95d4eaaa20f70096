"""Tool calling for local models whose chat template has no tools section.

The tools go into the system prompt as JSON schemas, with the exact call format and one
worked example; the model answers with ``<tool_call>[{"name": ..., "arguments": {...}}]
</tool_call>``. Small models get that format only roughly right, so ``parse_tool_calls``
reads it leniently — a single object instead of a list, several blocks, a missing closing
tag, code fences, trailing commas, arguments as a JSON string, Python's True/False/None,
a reply cut off mid-call — and never raises: what it cannot read comes back as no calls
plus an ``error``, which the harness counts as an unresolved turn.

This module needs no torch: it is pure text handling, testable on recorded replies.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from econbench.agents.tools import ToolCall, ToolSpec

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"

_OPEN = re.compile(r"<\s*tool_calls?\s*>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*tool_calls?\s*>", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_+-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_ANY_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n.*?```", re.DOTALL)
_OPEN_FENCE = re.compile(r"^\s*```[A-Za-z0-9_+-]*\s*\n?")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_WORD = re.compile(r"[A-Za-z_]+")

EXAMPLE_CALL = '<tool_call>[{"name": "lookup_city", "arguments": {"city": "Lyon"}}]</tool_call>'


@dataclass
class ParsedReply:
    """A reply split into its prose (``text``) and its tool calls.

    ``error`` says why a ``<tool_call>`` block (or the whole reply) could not be read; the
    calls that could be read are still returned.
    """

    text: str
    calls: list[ToolCall] = field(default_factory=list)
    error: str | None = None


# --------------------------------------------------------------------------- prompt


def render_calls(calls: list[ToolCall]) -> str:
    """Calls in the exact format the model is asked to write (history re-rendering)."""
    items = [{"name": c.name, "arguments": c.arguments} for c in calls]
    return f"{OPEN_TAG}{json.dumps(items, ensure_ascii=False)}{CLOSE_TAG}"


def tools_system_prompt(tools: list[ToolSpec]) -> str:
    """The tools section appended to the system prompt: schemas, call format, one example.

    The example uses a made-up tool, not one of the episode's, so that the prompt does not
    nudge the model towards any particular decision.
    """
    schemas = "\n".join(
        json.dumps(
            {"name": t.name, "description": t.description, "parameters": t.parameters},
            ensure_ascii=False,
        )
        for t in tools
    )
    names = ", ".join(t.name for t in tools)
    return (
        "# Tools\n\n"
        "You can call the following tools. Each is given as a JSON schema:\n"
        f"<tools>\n{schemas}\n</tools>\n\n"
        "To call a tool, write one line with a JSON list of calls between <tool_call> and "
        '</tool_call> tags. Each call is an object with "name" (one of: '
        f'{names}) and "arguments" (an object of the tool\'s parameters; {{}} when it has '
        "none):\n"
        '<tool_call>[{"name": "TOOL_NAME", "arguments": {"PARAMETER": VALUE}}]</tool_call>\n\n'
        "Example (with a made-up tool `lookup_city` that is not available to you): to look up "
        "Lyon you would reply\n"
        "I need the facts about Lyon first.\n"
        f"{EXAMPLE_CALL}\n\n"
        "Write any reasoning before the <tool_call> block. Use valid JSON with double quotes. "
        "The result of a call comes back in the next message, inside <tool_response> tags."
    )


def render_tool_result(name: str | None, content: str) -> str:
    """A tool's result as the user turn a template without a tool role accepts."""
    try:
        value: Any = json.loads(content)
    except (json.JSONDecodeError, ValueError):
        value = content
    body = json.dumps({"name": name or "", "result": value}, ensure_ascii=False)
    return f"<tool_response>\n{body}\n</tool_response>"


# --------------------------------------------------------------------------- parsing


def parse_tool_calls(text: str) -> ParsedReply:
    """Split a model's reply into prose and ``<tool_call>`` calls; never raises.

    Without any tag, a reply that is nothing but a call-shaped JSON value, or code fences
    that hold nothing but such values (``{"name": ..., "arguments": ...}``), is read as calls
    too; otherwise it is plain text with no calls.
    """
    try:
        return _parse(text if isinstance(text, str) else str(text))
    except Exception as exc:  # the contract is "never raise"
        return ParsedReply(text=str(text), error=f"could not read the reply: {exc}")


def _parse(text: str) -> ParsedReply:
    blocks, prose = _split_blocks(text)
    if not blocks:
        bare = _bare_calls(text)
        if bare is not None:
            return ParsedReply(text="", calls=bare)
        return _fenced_calls(prose) or ParsedReply(text=prose)
    calls: list[ToolCall] = []
    errors: list[str] = []
    leftovers: list[str] = []
    for index, body in enumerate(blocks, 1):
        found, rest, error = _read_block(body)
        calls.extend(found)
        if rest:
            leftovers.append(rest)
        if error:
            label = f"tool_call block {index}" if len(blocks) > 1 else "the tool_call block"
            errors.append(f"{label}: {error}")
    reply_text = "\n".join(p for p in [prose, *leftovers] if p).strip()
    if errors and not calls:
        # Keep the whole reply: nothing was read, and the record should show what was said.
        return ParsedReply(text=text.strip(), error="; ".join(errors))
    return ParsedReply(text=reply_text, calls=calls, error="; ".join(errors) or None)


def _split_blocks(text: str) -> tuple[list[str], str]:
    """The bodies of the ``<tool_call>`` blocks and the text outside them. An unclosed last
    block runs to the end of the text; a stray closing tag is dropped."""
    blocks: list[str] = []
    prose: list[str] = []
    pos = 0
    while True:
        opened = _OPEN.search(text, pos)
        if opened is None:
            prose.append(_CLOSE.sub("", text[pos:]))
            break
        prose.append(_CLOSE.sub("", text[pos : opened.start()]))
        closed = _CLOSE.search(text, opened.end())
        following = _OPEN.search(text, opened.end())
        if closed is not None and (following is None or closed.start() < following.start()):
            blocks.append(text[opened.end() : closed.start()])
            pos = closed.end()
        elif following is not None:  # unclosed, but another block starts: end it there
            blocks.append(text[opened.end() : following.start()])
            pos = following.start()
        else:
            blocks.append(text[opened.end() :])
            break
    joined = "\n".join(p.strip() for p in prose if p.strip())
    return blocks, joined


def _read_block(body: str) -> tuple[list[ToolCall], str, str | None]:
    """The calls in one block, any text left after the JSON, and an error if unreadable."""
    source = _unfence(body).strip()
    if not source:
        return [], "", "it is empty"
    values, rest = _decode_values(source)
    rest = rest.strip("`").strip()
    if not values:
        written = _python_calls(source)
        if written:
            return written, "", None
        return [], "", f"not valid JSON: {_clip(source)}"
    calls: list[ToolCall] = []
    for value in values:
        items = value if isinstance(value, list) else [value]
        for item in items:
            call = _as_call(item)
            if call is None:
                return calls, rest, f'not a call with a "name": {_clip(json.dumps(item))}'
            calls.append(call)
    if not calls:
        return [], rest, "it holds an empty list"
    return calls, rest, None


def _fenced_calls(text: str) -> ParsedReply | None:
    """Calls from Markdown code fences that hold nothing but call-shaped JSON (prose around
    them is the reply text); ``None`` when no fence does."""
    calls: list[ToolCall] = []
    kept: list[str] = []
    pos = 0
    for fence in _ANY_FENCE.finditer(text):
        found = _bare_calls(fence.group(0))
        if found is None:
            continue
        kept.append(text[pos : fence.start()])
        calls.extend(found)
        pos = fence.end()
    if not calls:
        return None
    kept.append(text[pos:])
    prose = "\n".join(p.strip() for p in kept if p.strip())
    return ParsedReply(text=prose, calls=calls)


def _bare_calls(text: str) -> list[ToolCall] | None:
    """Calls from a reply that is only a call-shaped JSON value, else ``None``."""
    source = _unfence(text).strip()
    if not source or source[0] not in "[{":
        return None
    value = _load_lenient(source)
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    calls = [_as_call(item) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    if not all(isinstance(i, dict) and ("arguments" in i or "parameters" in i) for i in items):
        return None  # {"name": ...} alone is too weak a sign in free text
    return [c for c in calls if c is not None]


def _python_calls(source: str) -> list[ToolCall]:
    """Calls written as Python, one per line: ``claim_solver()``, ``f(x=1, y="a")``."""
    calls: list[ToolCall] = []
    for line in source.splitlines():
        line = line.strip().rstrip(";")
        if not line:
            continue
        try:
            node = ast.parse(line, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return []
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            return []
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                return []
            try:
                arguments[keyword.arg] = _jsonable(ast.literal_eval(keyword.value))
            except (ValueError, SyntaxError, TypeError, RecursionError):
                return []
        calls.append(ToolCall(node.func.id, arguments))
    return calls


def _unfence(text: str) -> str:
    """Drop a surrounding Markdown code fence (a missing closing fence included)."""
    match = _FENCE.match(text)
    if match:
        return match.group(1)
    stripped = _OPEN_FENCE.sub("", text, count=1) if text.lstrip().startswith("```") else text
    return stripped


def _decode_values(source: str) -> tuple[list[Any], str]:
    """Every JSON value at the start of ``source`` (one after another, separated by blanks
    or commas), leniently; returns them and the text that follows."""
    whole = _load_lenient(source)
    if whole is not None:
        return [whole], ""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos = 0
    while pos < len(source):
        while pos < len(source) and source[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(source) or source[pos] not in "[{":
            break
        try:
            value, end = decoder.raw_decode(source, pos)
        except json.JSONDecodeError:
            end = _value_end(source, pos)
            if end is None:
                value = _load_lenient(source[pos:])
                if value is not None:
                    values.append(value)
                    pos = len(source)
                break
            value = _load_lenient(source[pos:end])
            if value is None:
                break
        values.append(value)
        pos = end
    return values, source[pos:].strip() if values else source


def _value_end(source: str, start: int) -> int | None:
    """Where the bracketed value starting at ``start`` ends (strings respected), if it does."""
    depth = 0
    quote: str | None = None
    escaped = False
    for i in range(start, len(source)):
        ch = source[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _load_lenient(source: str) -> Any | None:
    """JSON, then JSON with repairs (trailing commas, Python literals, missing closing
    brackets), then a Python literal; ``None`` when nothing reads it."""
    for candidate in _repairs(source):
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError, RecursionError):
            pass
    for candidate in (source, _close_brackets(source)):
        if candidate is None:
            continue
        try:
            value = ast.literal_eval(candidate)
            if isinstance(value, dict | list):
                return _jsonable(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _repairs(source: str) -> list[str]:
    fixed = _TRAILING_COMMA.sub(r"\1", _python_literals(source))
    candidates = [source, fixed]
    closed = _close_brackets(fixed)
    if closed is not None:
        candidates.append(_TRAILING_COMMA.sub(r"\1", closed))
    return candidates


def _python_literals(source: str) -> str:
    """``True``/``False``/``None`` outside strings → ``true``/``false``/``null``."""
    out: list[str] = []
    quote: str | None = None
    escaped = False
    i = 0
    while i < len(source):
        ch = source[i]
        if quote:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            i += 1
            continue
        if ch == '"':
            quote = ch
        word = _WORD.match(source, i)
        if word:
            out.append(_PY_LITERALS.get(word.group(0), word.group(0)))
            i = word.end()
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _close_brackets(source: str) -> str | None:
    """Append the closers a reply cut off mid-value is missing; ``None`` if it ends inside a
    string or the brackets do not nest."""
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for ch in source:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch == '"':
            quote = ch
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}" and (not stack or stack.pop() != ch):
            return None
    if quote or not stack:
        return None
    return source.rstrip().rstrip(",") + "".join(reversed(stack))


def _jsonable(value: Any) -> Any:
    """A Python literal as JSON data (tuples → lists, keys → strings); ``ValueError`` for
    what JSON cannot hold (sets, bytes, complex numbers)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise ValueError(f"not JSON data: {type(value).__name__}")


def _as_call(item: Any) -> ToolCall | None:
    """One call from ``{"name", "arguments"}`` (or the OpenAI ``{"function": {...}}`` shape,
    or ``parameters``/``args`` for ``arguments``); ``None`` if it has no name."""
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict) and "name" not in item:
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    raw = next((item[k] for k in ("arguments", "parameters", "args") if k in item), None)
    return ToolCall(name.strip(), _arguments(raw))  # type: ignore[arg-type]


def _arguments(raw: Any) -> dict[str, Any] | str:
    """Arguments as a dict; a JSON string is decoded; anything else stays a raw string so
    the toolkit answers with an error result (as for every other provider)."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        value = _load_lenient(raw)
        if isinstance(value, str):
            value = _load_lenient(value)
        return value if isinstance(value, dict) else raw
    return json.dumps(raw)


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
