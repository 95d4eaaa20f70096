"""The bounds of what a user may ask for, in one place: the command-line options and the
experiment files read them from here, so ``allo run --tasks`` and an experiment file agree.

Each bound is far beyond any real study and far below what would exhaust a machine: a value
past it is a typo (a zero too many), and it is refused with a one-line error before anything
is read, expanded or written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NoReturn

MAX_ENTRIES = 10_000
"""Runs (CoffeeBench) or cells (AlloBench) one experiment may expand to. Ten thousand runs
are already ten million model calls at the paper's ~1,000 per CoffeeBench run, and ten
thousand cells 240,000 AlloBench episodes; each entry is a directory, a ``sweep.json`` record
and a row of ``--dry-run`` (printed in seconds at this size). A larger study is several
experiment files."""
CONFIRM_ABOVE = 24
"""A sweep of more entries than this asks before it starts (``allo sweep --yes`` answers for
it; off a terminal ``--yes`` is required): a grid is the product of its axes, and a few values
each quickly make hours of runs (3 framings × 3 policies × the default budgets and charges
were 108 cells, 11.5 minutes)."""
MAX_TASKS = 1_000
"""Tasks per AlloBench episode: the paper plays 60; a thousand turns is beyond any model's
context and any scripted study's need (``bayes`` solves tables of tasks × budget)."""
MAX_BUDGET = MAX_TASKS
"""An AlloBench build budget: beyond the longest stream no budget can be spent."""
MAX_COST = 1_000_000.0
"""An AlloBench build charge beyond any possible collection; larger values are a typo."""
MAX_SEED = 2**63 - 1
"""Seeds are stored as 64-bit integers (JSON readers, SQLite)."""

_WHOLE = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = 20
"""More digits than any 64-bit number has: refused before ``int()`` reads them."""


def int_option(low: int | None = None, high: int | None = None) -> dict[str, Any]:
    """Keyword arguments of ``typer.Option`` for an integer option: ``2.0``, ``1e3`` or
    ``true`` is refused, not rounded (typer's own coercion reads ``2.0`` as 2)."""
    return {"parser": whole_number(low, high), "metavar": "<int>"}


def whole_number(low: int | None = None, high: int | None = None) -> Callable[[object], int]:
    """A ``typer.Option(parser=...)`` for an integer option: plain decimal digits only,
    within ``[low, high]`` when given (a ``parser`` replaces typer's ``min`` and ``max``)."""

    def parse(value: object) -> int:
        number = _whole(value)
        problem = range_error(number, low, high)
        if problem:
            _bad(problem)
        return number

    return parse


def range_error(value: int, low: int | None, high: int | None) -> str | None:
    """``"must be at least 1, got 0"`` for a value outside ``[low, high]``, else ``None``."""
    if low is not None and value < low:
        return f"must be at least {low:,}, got {value:,}"
    if high is not None and value > high:
        return f"must be at most {high:,}, got {value:,}"
    return None


def _whole(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):  # a default, already an int
        return value
    text = str(value).strip()
    if not _WHOLE.fullmatch(text):
        _bad(f"{value!r} is not a whole number")
    if len(text.lstrip("+-").lstrip("0")) > _MAX_DIGITS:
        _bad(f"{text[:24]}… is too large")
    return int(text)


def _bad(message: str) -> NoReturn:
    import typer  # only on the error path: experiment files import this module too

    raise typer.BadParameter(message)
