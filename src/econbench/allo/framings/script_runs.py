"""What both R3 protocols share about a script's answer: is it exact, and how a run is recorded."""

from __future__ import annotations

from typing import Any

from econbench.allo.sandbox.core import SandboxResult

TEXT_LIMIT = 2000
"""Characters of a run's stdout/stderr kept in the record (and shown under "econbench")."""


def is_exact(value: Any, answer: int) -> bool:
    """Whether a script output or submitted answer is exactly the right integer: an ``int``,
    or a ``float`` with that integral value; never a ``bool``."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value == answer
    if isinstance(value, float):
        return value.is_integer() and int(value) == answer
    return False


def clip(text: str | None, limit: int = TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, marked when cut."""
    text = text or ""
    return text if len(text) <= limit else text[:limit] + "…[truncated]"


def shown(value: Any) -> Any:
    """A script's return value as JSON can carry it: a scalar as is, anything else as repr."""
    scalar = value is None or isinstance(value, bool | int | float | str)
    return value if scalar else repr(value)


def sandbox_record(result: SandboxResult, kind: str, t: int, **extra: Any) -> dict[str, Any]:
    """A sandbox run as it goes into the episode record."""
    return {
        "kind": kind,
        "t": t,
        "backend": result.backend,
        "ok": result.ok,
        "reason": result.reason,
        "exit_code": result.exit_code,
        "value": shown(result.value),
        "stdout": clip(result.stdout),
        "stderr": clip(result.stderr),
        "wall_s": round(float(result.wall_s), 4),
        **extra,
    }
