"""Task arguments (``-T name=value``) read the way econbench's own commands read them.

Inspect parses each ``-T`` value as YAML, so ``-T seeds=3`` arrives as an integer,
``-T seeds=[1,2]`` as a list and ``-T seeds=0-4`` as a string. A value that cannot be used is a
``TaskArgumentError``: one line naming the argument and what it accepts, raised when the task
is built, before any model is asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai._util.error import PrerequisiteError

from econbench.runs.experiment import seed_list


class TaskArgumentError(PrerequisiteError, ValueError):
    """A ``-T`` argument that cannot be used; the message says which and why. Inspect's
    command line prints a ``PrerequisiteError`` as its message alone, without a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        ValueError.__init__(self, message)


def seeds_of(value: Any, benchmark: str, *, count_from: Sequence[int] | None = None) -> list[int]:
    """Seeds from ``-T seeds=``: a list, a text like ``"0-4"`` or ``"1,5,9-12"``, or an integer
    — with ``count_from`` the first that many of those seeds (AlloBench's evaluation seeds, as
    ``econbench.api.run_allo(seeds=N)``), else that one seed."""
    if isinstance(value, bool):
        raise TaskArgumentError(f"seeds: expected seeds, got {value!r}")
    if isinstance(value, int):
        if count_from is None:
            return [_non_negative("seeds", value)]
        if not 1 <= value <= len(count_from):
            raise TaskArgumentError(
                f"seeds={value}: an integer is how many of the {len(count_from)} evaluation "
                f"seeds to play (1–{len(count_from)}); give others as a list or a range text"
            )
        return list(count_from[:value])
    try:
        seeds = seed_list(list(value) if isinstance(value, tuple) else value, benchmark)
    except ValueError as exc:
        raise TaskArgumentError(f"seeds={value!r}: {exc}") from None
    assert seeds is not None  # None is not a value Inspect passes
    return list(seeds)


def positive(name: str, value: Any) -> int:
    """A whole number ≥ 1 (``days``, ``budget``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TaskArgumentError(f"{name}: expected a whole number of at least 1, got {value!r}")
    return value


def _non_negative(name: str, value: int) -> int:
    if value < 0:
        raise TaskArgumentError(f"{name}: expected a non-negative number, got {value}")
    return value


def choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """One of ``choices``, with a did-you-mean for a near miss."""
    from econbench.suggest import did_you_mean

    if not isinstance(value, str) or value not in choices:
        hint = did_you_mean(str(value), list(choices))
        raise TaskArgumentError(f"{name}={value!r} is not one of {', '.join(choices)}{hint}")
    return value
