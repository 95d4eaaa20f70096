"""``did you mean …?`` for a mistyped name, shared by every layer's error messages.

Standard library only and no econbench import, so the environments, the providers and the
command line can all use it without an arrow pointing up.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the choice closest to ``name``, or ``""`` when none is
    close: appended to an ``unknown …`` message, it names the fix for a one-letter typo."""
    options = [c for c in choices if c]
    lowered = {c.lower(): c for c in options}
    close = difflib.get_close_matches(name.strip().lower(), list(lowered), n=1, cutoff=0.6)
    if not close or lowered[close[0]] == name:
        return ""
    return f" (did you mean '{lowered[close[0]]}'?)"
