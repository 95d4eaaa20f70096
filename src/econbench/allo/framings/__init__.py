"""The framing ladder (docs/allobench.md §4): one game in four renderings, from balls to real code.

``get_framing("r0", skin="chest")`` builds a framing; ``FRAMINGS`` maps each rung's name to its
class. Every framing plays the same stream with the same seeds; see ``base.py`` for the
interface the runner uses and each module for its rung's rules. ``protocol`` (``PROTOCOLS``)
chooses the paper's texts and turn rules (``"paper"``, the default) or econbench's earlier ones
(``"econbench"``).
"""

from __future__ import annotations

from typing import Any

from econbench.allo.framings.base import (
    PROTOCOLS,
    Framing,
    FramingEpisode,
    TurnOutcome,
    check_protocol,
)
from econbench.allo.framings.build import BuildFraming
from econbench.allo.framings.code import CodeFraming, check_solver_code
from econbench.allo.framings.declarative import DeclarativeFraming
from econbench.allo.framings.urn import SKIN_NAMES, UrnFraming, get_skin, parse_decision
from econbench.allo.framings.urn_tool import UrnToolFraming
from econbench.suggest import did_you_mean

FRAMINGS: dict[str, type[Framing]] = {
    "r0": UrnFraming,
    "r1": DeclarativeFraming,
    "r2": CodeFraming,
    "r3": BuildFraming,
    "r0-tool": UrnToolFraming,  # the paper's keep/pass tool-call probe of R0
}


def get_framing(
    name: str, *, skin: str = "default", protocol: str = "paper", **options: Any
) -> Framing:
    """The framing called ``name`` ("r0".."r3", "r0-tool") under ``protocol``; ``skin``
    applies to R0 (and its tool-call probe) only.

    R3 accepts ``sandbox=`` (a ``Sandbox``) and ``workers=`` (parallel automatic runs); R1 and
    R2 accept ``state_cost=`` and ``no_call_attempts=``. Raises ``ValueError`` for an unknown
    name, skin or protocol, or a skin given to another rung.
    """
    key = name.lower().strip()
    if key not in FRAMINGS:
        raise ValueError(
            f"unknown framing {name!r}{did_you_mean(name, FRAMINGS)}; "
            f"choose one of {', '.join(FRAMINGS)}"
        )
    check_protocol(protocol)
    if key in ("r0", "r0-tool"):
        return FRAMINGS[key](skin=skin, protocol=protocol, **options)  # type: ignore[call-arg]
    if skin != "default":
        raise ValueError(f"--skin applies to the r0 urn only, not to {key}")
    return FRAMINGS[key](protocol=protocol, **options)


__all__ = [
    "FRAMINGS",
    "PROTOCOLS",
    "SKIN_NAMES",
    "Framing",
    "FramingEpisode",
    "TurnOutcome",
    "check_solver_code",
    "get_framing",
    "get_skin",
    "parse_decision",
]
