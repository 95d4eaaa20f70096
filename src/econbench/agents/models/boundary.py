"""Where a reply enters the harness: every provider's output passes ``checked_output``.

A server (or a model behind it) can send anything: arguments nested ten thousand levels
deep, text with a lone UTF-16 surrogate, ``prompt_tokens: 1e308``. Each of those once
crashed a run, or its record, or priced a call at ``inf``; and a reply that is cached or
replayed did it again on every resume. Checking here, before the recorder, the cache and
the agent see the reply, means one bad reply costs one tool error or one unpriced call:

- text, reasoning, names, ids and ``provider_data``: valid Unicode (``untrusted.valid_text``);
- tool arguments: bounded (``untrusted.bounded_arguments``), so the toolkit answers a bad one
  with an error the model can read and the state stays as it was;
- usage: each count a whole number from 0 to ``MAX_TOKENS_PER_CALL``; anything else is
  counted 0, named in ``Usage.invalid``, logged as a warning, and leaves the call unpriced;
- ``cost_usd`` a provider reported: a finite, non-negative number, else unknown;
- size: one reply keeps at most ``MAX_REPLY_TEXT_BYTES`` of text and as much of reasoning,
  ``MAX_REPLY_CALLS`` tool calls whose arguments (after the first call's) total at most
  ``MAX_CALL_ARGUMENT_BYTES``, and ``MAX_PROVIDER_DATA_BYTES`` of ``provider_data``
  (``cap_reply``); what was cut is named in ``ModelOutput.truncated``, which the event
  recording the call carries.

The check is deterministic and idempotent, so a replayed or resumed run sees the bytes the
first run saw.

Before a reply gets here it must be read at all: ``reply_guard`` wraps each provider's
call and parse, so that a server trickling bytes meets one deadline for the whole call, and
anything else that goes wrong reading the reply (JSON nested 100,000 deep, a list where the
reply object belongs, no choices, text that is a number) is one ``TransientModelError``:
retried, then a clean stop, like a 5xx.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import fields
from typing import Any

from econbench.agents.models._http import redact
from econbench.agents.models.base import ModelError, ModelOutput, TransientModelError, Usage
from econbench.agents.tools import ToolCall
from econbench.agents.untrusted import (
    bounded_arguments,
    dump_text,
    tool_name,
    valid_text,
    valid_value,
)

log = logging.getLogger(__name__)

MAX_TOKENS_PER_CALL = 100_000_000
"""More tokens than any model's window holds (the largest are a few million)."""
INVALID_COUNT = -1
"""What ``token_count`` returns for a count that is there but is not a count."""
_COUNTS = tuple(f.name for f in fields(Usage) if f.name != "invalid")

MAX_REPLY_TEXT_BYTES = 256 * 1024
"""UTF-8 bytes of a reply's text kept, and as many of its reasoning: about 64,000 tokens, more
than any model writes in one turn when it is working (AlloBench asks for at most 4,096
tokens a turn; CoffeeBench's replies are a tool call and a few sentences). Past it a reply is
a model stuck in a loop, and every copy of it (event log, record, cache, each checkpoint's
conversation, every later request) would carry the whole of it."""
MAX_REPLY_CALLS = 64
"""Tool calls kept from one reply: only the first is carried out, each other one costs a
"not executed" result in the conversation."""
MAX_CALL_ARGUMENT_BYTES = 256 * 1024
"""Bytes of arguments (as JSON) kept over the calls after the first; the first call's own
arguments are already bounded (``untrusted.MAX_ARGUMENT_CHARS``)."""
MAX_PROVIDER_DATA_BYTES = 1024 * 1024
"""Bytes of ``provider_data`` (as JSON) kept: the replay copy of the turn (thinking blocks
with their signatures, encrypted reasoning). Its copies of the reply's text are cut as the
text is; past this size, it is dropped, and the provider rebuilds the turn from the message
(a signed or encrypted value is never cut: it would no longer verify)."""
_READABLE_KEYS = frozenset({"text"})
"""Keys of ``provider_data`` whose strings are the reply's text (cut with it); every other
value may be signed or encrypted and is kept whole or not at all."""
_UNREADABLE = (
    RecursionError,
    ValueError,  # JSON that does not parse, pydantic's validation errors
    TypeError,
    AttributeError,
    KeyError,
    IndexError,
    OverflowError,
)
"""What reading a reply the harness did not expect raises, in an SDK or in a parser."""


class InvalidCount(int):
    """``INVALID_COUNT`` that remembers what the server sent, for the warning."""

    reported: Any

    def __new__(cls, reported: Any) -> InvalidCount:
        count = super().__new__(cls, INVALID_COUNT)
        count.reported = reported
        return count


def token_count(value: Any) -> int:
    """A token count from a server's usage field: 0 when absent, ``INVALID_COUNT`` (an
    ``InvalidCount``) when it is not a whole number from 0 to ``MAX_TOKENS_PER_CALL``, for
    ``checked_usage`` to flag."""
    if value is None or isinstance(value, InvalidCount):
        return 0 if value is None else value
    number: Any = value
    text = value.strip() if isinstance(value, str) else ""
    if text.isascii() and text.isdigit():
        number = int(text) if len(text) <= 12 else None
    elif isinstance(value, float) and math.isfinite(value) and value == int(value):
        number = int(value)
    whole = isinstance(number, int) and not isinstance(number, bool)
    return number if whole and 0 <= number <= MAX_TOKENS_PER_CALL else InvalidCount(value)


def total_count(*counts: int) -> int:
    """A sum of token counts, or the first invalid one among them (the sum is unknown)."""
    invalid = [c for c in counts if c == INVALID_COUNT]
    return invalid[0] if invalid else sum(counts)


def checked_usage(usage: Usage, source: str) -> Usage:
    """``usage`` with each count out of range set to 0 and named in ``invalid``; ``source``
    (the provider's name) goes into the warning."""
    reported = {name: getattr(usage, name) for name in _COUNTS}
    values = {name: token_count(v) for name, v in reported.items()}
    bad = [name for name, v in values.items() if v == INVALID_COUNT]
    if not bad:
        same = all(type(reported[n]) is int and values[n] == reported[n] for n in _COUNTS)
        return usage if same else Usage(**values, invalid=usage.invalid)
    shown = ", ".join(f"{name}={_short(values[name])}" for name in bad)
    log.warning(
        "%s: the server reported impossible usage (%s); counted as 0 and the call left unpriced",
        source,
        shown,
    )
    for name in bad:
        values[name] = 0
    return Usage(**values, invalid=tuple(dict.fromkeys(usage.invalid + tuple(bad))))


def _short(value: Any) -> str:
    """A reported value as a short text (``1e+308``, not 309 digits)."""
    value = value.reported if isinstance(value, InvalidCount) else value
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**12:
        return f"{float(value):.3g}" if abs(value) < 10**308 else "an integer too large to show"
    return valid_text(repr(value))[:40]


def _cost(value: Any, source: str) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    ):
        return float(value)
    log.warning("%s: ignoring a reported cost of %s; the call is left unpriced", source, value)
    return None


def checked_output(output: ModelOutput, source: str | None = None) -> ModelOutput:
    """``output`` made safe to keep (see the module docstring); changed in place and
    returned. ``source`` names the provider in warnings. Calling it again changes nothing."""
    output.model = valid_text(output.model) if isinstance(output.model, str) else ""
    label = valid_text(source or output.model or "model")
    output.text = valid_text(output.text) if isinstance(output.text, str) else ""
    if output.reasoning is not None:
        output.reasoning = valid_text(str(output.reasoning))
    if output.stop_reason is not None:
        output.stop_reason = valid_text(str(output.stop_reason))
    output.tool_calls = [
        ToolCall(
            tool_name(call.name),
            bounded_arguments(call.arguments),
            None if call.call_id is None else valid_text(str(call.call_id)),
        )
        for call in output.tool_calls
    ]
    if output.provider_data is not None:
        output.provider_data = valid_value(output.provider_data)
    output.usage = checked_usage(output.usage, label)
    output.cost_usd = _cost(output.cost_usd, label)
    if output.usage.invalid:
        output.cost_usd = None
    return cap_reply(output, label)


# --------------------------------------------------------------------------- reading
def unreadable(source: str, problem: str) -> TransientModelError:
    """The error for a reply that is not one: transient (a retry usually gets a sound reply;
    one that never comes stops the run cleanly once the retries are spent). One line."""
    line = valid_text(problem).strip().splitlines()[0] if problem.strip() else "no details"
    if len(line) > 300:
        line = line[:300] + "…"
    return TransientModelError(f"{source}: unreadable reply: {line}")


@asynccontextmanager
async def reply_guard(
    source: str,
    timeout_s: float | None,
    clean: Callable[[str], str] = redact,
) -> AsyncIterator[None]:
    """Wrap one provider call and the parsing of its reply.

    ``timeout_s`` bounds the whole block: an SDK's own timeout applies to each read, so a
    server sending a byte a second would hold it forever. What the block raises becomes a
    ``ModelError`` (those pass as they are): the deadline a ``TransientModelError`` saying so,
    and whatever reading a malformed reply raises (``_UNREADABLE``) an ``unreadable`` one,
    its message passed through ``clean`` (the provider's key redaction).
    """
    try:
        async with asyncio.timeout(timeout_s):
            yield
    except ModelError:
        raise
    except TimeoutError:
        limit = f" after {timeout_s:g}s" if timeout_s is not None else ""
        raise TransientModelError(
            f"{source}: request timed out{limit} (no complete reply)"
        ) from None
    except _UNREADABLE as exc:
        log.debug("%s: reply not readable", source, exc_info=True)
        raise unreadable(source, clean(f"{type(exc).__name__}: {exc}")) from None


def json_object(value: Any, source: str, what: str = "the reply") -> dict[str, Any]:
    """``value`` if it is a JSON object, else the ``unreadable`` error naming ``what``."""
    if isinstance(value, dict):
        return value
    raise unreadable(source, f"{what} is {_kind(value)}, not a JSON object")


def json_list(value: Any, source: str, what: str) -> list[Any]:
    """``value`` if it is a JSON array (``None`` counts as empty), else ``unreadable``."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise unreadable(source, f"{what} is {_kind(value)}, not a JSON array")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


# --------------------------------------------------------------------------- size
def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _json_size(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        return _utf8_size(value)
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = dump_text(value, limit=4 * MAX_PROVIDER_DATA_BYTES)
    return _utf8_size(text)


def cut_text(text: str, what: str = "text", limit: int = MAX_REPLY_TEXT_BYTES) -> str:
    """``text`` within ``limit`` UTF-8 bytes, mark included, the mark saying how long it was
    (the model reads its own cut reply later, the mark tells it why). Text within the limit
    is returned as it is, so cutting again changes nothing."""
    if len(text) * 4 <= limit:  # cheap: no character takes more than 4 bytes
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    mark = f"\n…[cut by econbench: the reply's {what} was {len(data):,} bytes, the rest not kept]"
    kept = data[: limit - _utf8_size(mark)].decode("utf-8", "ignore")
    return kept + mark


def _cut_readable(value: Any) -> Any:
    """``provider_data`` with its long ``text`` strings cut (see ``_READABLE_KEYS``)."""
    if isinstance(value, dict):
        return {
            k: cut_text(v) if k in _READABLE_KEYS and isinstance(v, str) else _cut_readable(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_cut_readable(v) for v in value]
    return value


def _kept_calls(calls: list[ToolCall]) -> list[ToolCall]:
    """The first call, then more while within ``MAX_REPLY_CALLS`` and the argument budget."""
    kept = calls[:1]
    budget = MAX_CALL_ARGUMENT_BYTES
    for call in calls[1:MAX_REPLY_CALLS]:
        budget -= _json_size(call.arguments)
        if budget < 0:
            break
        kept.append(call)
    return kept


def _reply_size(output: ModelOutput) -> int:
    return (
        _utf8_size(output.text)
        + _utf8_size(output.reasoning or "")
        + sum(_json_size(c.arguments) for c in output.tool_calls)
        + _json_size(output.provider_data)
    )


def cap_reply(output: ModelOutput, source: str) -> ModelOutput:
    """``output`` within what one reply may store (the module docstring's size rule); what
    was cut is added to ``output.truncated``. Changed in place and returned; idempotent."""
    text = cut_text(output.text)
    reasoning = None if output.reasoning is None else cut_text(output.reasoning, "reasoning")
    calls = _kept_calls(output.tool_calls) if len(output.tool_calls) > 1 else output.tool_calls
    data = output.provider_data
    if data is not None and _json_size(data) > MAX_REPLY_TEXT_BYTES:  # a long text in it?
        cut = _cut_readable(data)
        data = cut if cut != data else data
        if _json_size(data) > MAX_PROVIDER_DATA_BYTES:
            data = None
    parts = [
        name
        for name, cut in (
            ("text", text is not output.text),
            ("reasoning", reasoning is not output.reasoning),
            ("tool_calls", len(calls) < len(output.tool_calls)),
            ("provider_data", data is not output.provider_data),
        )
        if cut
    ]
    if not parts:
        return output
    original = _reply_size(output)
    output.text, output.reasoning, output.tool_calls = text, reasoning, list(calls)
    output.provider_data = data
    kept = _reply_size(output)
    earlier = output.truncated or {}
    output.truncated = {
        "original_bytes": max(original, earlier.get("original_bytes", 0)),
        "kept_bytes": kept,
        "parts": list(dict.fromkeys([*earlier.get("parts", []), *parts])),
    }
    log.warning(
        "%s: a reply of %s bytes is larger than the harness keeps; cut (%s) to %s bytes",
        source,
        f"{original:,}",
        ", ".join(parts),
        f"{kept:,}",
    )
    return output
