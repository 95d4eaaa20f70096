"""What a model sends, bounded and made valid before the harness keeps any of it.

A reply travels far: into the conversation that is re-sent with every request, the run's
record and the response cache (SQLite, UTF-8), the event log and the checkpoints (strict
JSON). Three kinds of reply broke those stores, and a reply that is cached or replayed
breaks them again on every resume:

- tool arguments nested so deeply that serialising them again raises ``RecursionError``;
- text with a lone UTF-16 surrogate (a truncated ``\\ud83d`` escape), which UTF-8 cannot hold;
- numbers JSON does not have (``NaN``, ``Infinity``, ``1e400``).

So every provider passes what it parsed through here. Arguments that are a JSON object
within ``MAX_ARGUMENT_DEPTH`` levels and ``MAX_ARGUMENT_CHARS`` characters are kept as a
dict; anything else is kept as its JSON text (cut at the size limit), which the toolkit
answers with an error naming the problem (``argument_problem``), leaving the state as it
was. Lone surrogates become U+FFFD (a valid pair is joined), always the same way, so a
replayed or resumed run sees exactly the bytes the first run saw.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_ARGUMENT_DEPTH = 32
"""Nesting levels of a tool call's arguments (the object itself is level 1). Every tool of
both benchmarks needs 3 at most."""
MAX_ARGUMENT_CHARS = 256 * 1024
"""Characters of a tool call's arguments as JSON text (an R3 script fits many times over)."""
MAX_NAME_CHARS = 256
"""Characters of a tool name kept (tool names are short identifiers)."""
CUT_MARK = f"…[cut by econbench: longer than {MAX_ARGUMENT_CHARS:,} characters]"


class _Token:
    """A piece of JSON text already spelled out (punctuation, a key), in the dump stack."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


# --------------------------------------------------------------------------- text
def valid_text(text: str) -> str:
    """``text`` as valid Unicode: a surrogate pair becomes its character, a lone surrogate
    U+FFFD. Text that is already valid is returned as it is (the common case, cheaply)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def valid_value(value: Any, _depth: int = 0) -> Any:
    """``value`` with every string (and dict key) passed through ``valid_text``.

    For JSON-like data the harness built from a reply (``provider_data``, bounded
    arguments); anything nested past a sane depth is cut, so this never recurses away.
    """
    if isinstance(value, str):
        return valid_text(value)
    if _depth > 4 * MAX_ARGUMENT_DEPTH:
        return "[cut by econbench: nested too deeply]"
    if isinstance(value, dict):
        return {
            (valid_text(k) if isinstance(k, str) else k): valid_value(v, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [valid_value(v, _depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(valid_value(v, _depth + 1) for v in value)
    return value


def tool_name(name: Any) -> str:
    """A tool call's name as a short, valid string (an unknown name is the toolkit's to
    report; a megabyte of one is not worth keeping)."""
    text = valid_text(name if isinstance(name, str) else str(name or ""))
    return text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS] + "…"


# --------------------------------------------------------------------------- arguments
def _shape_problem(value: Any, *, finite: bool = True) -> str | None:
    """Why parsed arguments cannot be kept as data (too deep, too big, with ``finite`` a
    number JSON cannot spell), or ``None``. Walks without recursion: the value may be
    arbitrarily deep."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    chars = 0
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth > MAX_ARGUMENT_DEPTH:
                return f"they are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
            chars += 2 + len(item)
            if isinstance(item, dict):
                for key, child in item.items():
                    chars += len(key) + 3 if isinstance(key, str) else 8
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str):
            chars += len(item) + 2
        elif finite and isinstance(item, float) and not math.isfinite(item):
            return f"they hold {item!r}, which is not a finite number"
        else:
            chars += 8
        if chars > MAX_ARGUMENT_CHARS:
            return f"they are longer than {MAX_ARGUMENT_CHARS:,} characters"
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is not a finite number")
    return number


def _load(text: str) -> tuple[Any, str | None]:
    """Parse JSON text within the bounds: ``(value, None)`` or ``(None, problem)``."""
    if len(text) > MAX_ARGUMENT_CHARS:
        return None, f"they are longer than {MAX_ARGUMENT_CHARS:,} characters"
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        return None, f"they are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
    except ValueError as exc:  # JSONDecodeError, NaN, 1e400, a 5000-digit integer
        return None, f"they are not valid JSON ({exc})"
    return value, _shape_problem(value)


def _scalar(value: Any) -> str:
    """One value's JSON spelling; ``NaN`` and ``Infinity`` as Python spells them, so the
    text fails to parse for the same reason the value could not be kept."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(repr(value), ensure_ascii=False)


def dump_text(value: Any, limit: int = MAX_ARGUMENT_CHARS) -> str:
    """``value`` as JSON text, however deep, stopping soon after ``limit`` characters.

    No recursion (``json.dumps`` fails on deep data); keys become strings and values JSON
    has no spelling for become the string of their ``repr``.
    """
    parts: list[str] = []
    size = 0
    stack: list[Any] = [value]
    while stack and size <= limit:
        item = stack.pop()
        if isinstance(item, _Token):
            text = item.text
        elif isinstance(item, dict):
            text, sequence = "{", []
            for i, (key, child) in enumerate(item.items()):
                if i:
                    sequence.append(_Token(","))
                sequence.extend((_Token(_scalar(str(key)) + ":"), child))
            sequence.append(_Token("}"))
            stack.extend(reversed(sequence))
        elif isinstance(item, list | tuple):
            text, sequence = "[", []
            for i, child in enumerate(item):
                if i:
                    sequence.append(_Token(","))
                sequence.append(child)
            sequence.append(_Token("]"))
            stack.extend(reversed(sequence))
        else:
            text = _scalar(item)
        parts.append(text)
        size += len(text)
    return "".join(parts)


def _clip(text: str) -> str:
    text = valid_text(text)
    return text if len(text) <= MAX_ARGUMENT_CHARS else text[:MAX_ARGUMENT_CHARS] + CUT_MARK


def bounded_arguments(raw: Any) -> dict[str, Any] | str:
    """A tool call's arguments as the harness keeps them.

    A JSON object (given as text, double-encoded text, or already parsed by an SDK) within
    the bounds comes back as a dict with valid strings; no arguments at all as ``{}``;
    anything else as its JSON text, cut at ``MAX_ARGUMENT_CHARS``, for the toolkit to
    answer with an error (``argument_problem`` says which).
    """
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        value, problem = _load(raw)
        if problem is None and isinstance(value, str):  # double-encoded, as some models emit
            inner, inner_problem = _load(value)
            if inner_problem is None and isinstance(inner, dict | type(None)):
                value = inner
        if problem is None and value is None:
            return {}
        if problem is None and isinstance(value, dict):
            return valid_value(value)
        return _clip(raw)
    if isinstance(raw, dict) and _shape_problem(raw) is None:
        return valid_value(raw)
    return _clip(dump_text(raw))


def kept_arguments(arguments: Any) -> Any:
    """Arguments read back from a run file (checkpoint, record, cache) as they were kept,
    except a dict beyond the bounds (kept before the bounds existed), which becomes text:
    so a run recorded then still resumes, and sound data is untouched byte for byte."""
    if isinstance(arguments, dict) and _shape_problem(arguments, finite=False) is not None:
        return _clip(dump_text(arguments))
    return arguments


def argument_problem(arguments: Any) -> str | None:
    """Why arguments the harness kept cannot be used, as a sentence for the model; ``None``
    only for a dict within the bounds (its values are the tool validator's to judge)."""
    if arguments is None:
        return None
    if isinstance(arguments, dict):  # a NaN among them is the validator's to name
        problem = _shape_problem(arguments, finite=False)
    elif isinstance(arguments, str):  # never used as they are: a kept text is a rejection
        value, problem = _load(arguments)
        if problem is None:
            kind = _json_kind(value) if not isinstance(value, dict) else "object inside a string"
            problem = f"they are a JSON {kind}"
    else:
        problem = f"they are a JSON {_json_kind(arguments)}"
    return None if problem is None else f"arguments must be a JSON object, but {problem}"


def _json_kind(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else type(value).__name__


def is_sendable_json(text: str) -> bool:
    """Whether ``text`` is JSON a server may parse safely (within the bounds)."""
    return _load(text)[1] is None


def excerpt(text: str, limit: int = 200) -> str:
    """The start of ``text`` as a quoted one-line literal, for an error message."""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return json.dumps(valid_text(cut), ensure_ascii=False)
