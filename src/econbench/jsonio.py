"""One JSON line for an append-only log, whatever a model put into the data.

Model replies can carry values strict JSON cannot hold — NaN, infinities, lone UTF-16
surrogates from a truncated escape, nesting too deep to serialise — and one such value must
not crash an 8-hour run. (Replies are bounded and cleaned where they enter the harness,
``econbench.agents.models.boundary``; this is the last line of defence for anything else.)
The fast path writes the data as it is; only a line that fails is cleaned: non-finite
numbers become strings, unencodable characters become backslash escapes, and whatever lies
more than ``MAX_DEPTH`` levels deep becomes a string saying it was cut.
"""

from __future__ import annotations

import json
import math
from typing import Any

_SEPARATORS = (",", ":")
MAX_DEPTH = 64
"""Levels kept when a line has to be cleaned (no log row of the harness needs more)."""
_ENCODERS = {
    sort_keys: json.JSONEncoder(
        separators=_SEPARATORS,
        ensure_ascii=False,
        allow_nan=False,
        sort_keys=sort_keys,
        check_circular=False,
    )
    for sort_keys in (False, True)
}
"""What ``json.dumps`` builds anew at every call with these options, built once (an
encoder keeps no state between calls); a run writes a line per event. Without the check
for circular references (an id table of every container, a sixth of the encoding time) a
cycle fails as a ``RecursionError`` instead of a ``ValueError``, and is cleaned the same way."""


def json_line(obj: Any, *, sort_keys: bool = False) -> str:
    """``obj`` as one strict-JSON line (no newline), valid UTF-8."""
    encode = _ENCODERS[bool(sort_keys)].encode
    try:
        text = encode(obj)
        if not text.isascii():  # only a non-ASCII text can hold a lone surrogate
            text.encode("utf-8")
        return text
    except (ValueError, UnicodeEncodeError, TypeError, RecursionError):
        return encode(_clean(obj))


def _clean(value: Any, depth: int = 0) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= MAX_DEPTH:
        return f"[cut: nested more than {MAX_DEPTH} levels deep]"
    if isinstance(value, dict):
        return {_clean(str(k)): _clean(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v, depth + 1) for v in value]
    return _clean(repr(value))
