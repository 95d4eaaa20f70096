"""The paper protocol's problem texts: several covers per family, one drawn per occurrence.

Under protocol ``"paper"`` a task shows only its problem, worded by one of the family's covers
(``prompts/solver_covers.toml``, the paper's wording, in the paper's order) and filled with
the occurrence's parameters: the family is never named. Which cover an occurrence shows is its
instance's ``cover`` (``econbench.allo.game.instances``): with the paper's instances (the default)
the paper's own draw, ``choice`` over the family's covers right after the sampler's draws;
with econbench's (``instances="econbench"``) :func:`cover_index`, drawn from
``numpy.random.default_rng([seed, t, cls, COVER_SALT])``, a stream of its own.
:func:`instance_text` renders an instance's problem; the text is byte-identical to the paper's
``cover.format(...)`` for the paper's values (lists print as ``[a, b, c]``, as the paper's
``"[" + ", ".join(...) + "]"`` does).

:func:`recognise` is the other direction, for scripted actors: it tells the family from a
problem text alone, by matching it against every cover (numbers and lists of numbers where
the parameters go), as a reader who knows the families' wordings would.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources
from string import Formatter
from typing import Any

import numpy as np

from econbench.allo.game.families import FAMILY_NAMES, Instance, family_for_class

COVER_SALT = 0xC0FE_A110
"""Names the cover-choice stream: ``default_rng([seed, t, cls, COVER_SALT])``."""

_VALUE = r"([-\d\[\], ]+?)"  # an integer or a (nested) list of integers, as str() prints them


@cache
def covers() -> dict[str, tuple[str, ...]]:
    """Every family's covers, by family name (``str.format`` templates over its parameters)."""
    path = resources.files("econbench.allo").joinpath("prompts", "solver_covers.toml")
    table = tomllib.loads(path.read_text("utf-8"))
    missing = set(FAMILY_NAMES) - set(table)
    if missing or set(table) - set(FAMILY_NAMES):
        raise ValueError(f"solver_covers.toml must list exactly the families {FAMILY_NAMES}")
    return {name: tuple(table[name]) for name in FAMILY_NAMES}


def cover_index(seed: int, t: int, cls: int) -> int:
    """Which of its family's covers the occurrence at turn ``t`` of class ``cls`` shows."""
    n = len(covers()[family_for_class(cls).name])
    return int(np.random.default_rng([seed, t, cls, COVER_SALT]).integers(n))


def render_cover(family: str, params: dict[str, Any], index: int) -> str:
    """Cover ``index`` of ``family`` filled with ``params``."""
    return covers()[family][index].format(**params)


def problem_text(seed: int, t: int, cls: int, instance: Instance) -> str:
    """The problem as the paper protocol shows it: the instance's cover, or (an instance
    without one, from ``families.instance_for``) econbench's :func:`cover_index`."""
    if instance.cover is not None:
        return instance_text(instance)
    return render_cover(instance.family, instance.params, cover_index(seed, t, cls))


def instance_text(instance: Instance) -> str:
    """The problem text of ``instance``: its family's cover number ``instance.cover``."""
    if instance.cover is None:
        raise ValueError("this instance has no cover (see econbench.allo.game.instances)")
    return render_cover(instance.family, instance.params, instance.cover)


def fields(template: str) -> list[str]:
    """The parameter fields a cover template uses, in order (``matrix[0][1]`` stays whole)."""
    return [name for _, name, _, _ in Formatter().parse(template) if name is not None]


def _pattern(template: str) -> re.Pattern[str]:
    parts = []
    for literal, name, _, _ in Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is not None:
            parts.append(_VALUE)
    return re.compile("".join(parts), re.DOTALL)


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple(
        (family, _pattern(template)) for family, texts in covers().items() for template in texts
    )


def recognise(text: str) -> str | None:
    """The family whose cover ``text`` is (its name), or None when no cover or several fit."""
    text = text.strip()
    found = {family for family, pattern in _patterns() if pattern.fullmatch(text)}
    return found.pop() if len(found) == 1 else None
