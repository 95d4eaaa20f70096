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
- ``cost_usd`` a provider reported: a finite, non-negative number, else unknown.

The check is deterministic and idempotent, so a replayed or resumed run sees the bytes the
first run saw.
"""

from __future__ import annotations

import logging
import math
from dataclasses import fields
from typing import Any

from econbench.agents.models.base import ModelOutput, Usage
from econbench.agents.tools import ToolCall
from econbench.agents.untrusted import bounded_arguments, tool_name, valid_text, valid_value

log = logging.getLogger(__name__)

MAX_TOKENS_PER_CALL = 100_000_000
"""More tokens than any model's window holds (the largest are a few million)."""
INVALID_COUNT = -1
"""What ``token_count`` returns for a count that is there but is not a count."""
_COUNTS = tuple(f.name for f in fields(Usage) if f.name != "invalid")


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
    return output
