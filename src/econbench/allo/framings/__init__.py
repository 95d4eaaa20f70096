"""The framing ladder (docs/allobench.md §4): one game in four renderings, from balls to real code.

``get_framing("r0", skin="chest")`` builds a framing; ``FRAMINGS`` (``registry.py``) maps each
rung's key to its class, in ladder order: each framing declares its key, order, title, reply
style and report label on its class and registers with ``@register``. Every framing plays
the same stream with the same seeds; see ``base.py`` for the interface the runner uses and each
module for its rung's rules. ``protocol`` (``PROTOCOLS``)
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

# Importing a framing's module registers it (``@register``).
from econbench.allo.framings.build import BuildFraming  # noqa: F401
from econbench.allo.framings.code import CodeFraming, check_solver_code  # noqa: F401
from econbench.allo.framings.declarative import DeclarativeFraming  # noqa: F401
from econbench.allo.framings.registry import (
    FRAMINGS,
    framing_class,
    framing_label,
    ladder_order,
    register,
    takes_skin,
)
from econbench.allo.framings.urn import (  # noqa: F401
    SKIN_NAMES,
    UrnFraming,
    get_skin,
    parse_decision,
)
from econbench.allo.framings.urn_tool import UrnToolFraming  # noqa: F401


def get_framing(
    name: str, *, skin: str = "default", protocol: str = "paper", **options: Any
) -> Framing:
    """The framing registered as ``name`` ("r0".."r3", "r0-tool") under ``protocol``; ``skin``
    applies to the framings that take one (R0 and its tool-call probe) only.

    R3 accepts ``sandbox=`` (a ``Sandbox``) and ``workers=`` (parallel automatic runs); R1 and
    R2 accept ``state_cost=`` and ``no_call_attempts=``. Raises ``ValueError`` for an unknown
    name, skin or protocol, or a skin given to another rung.
    """
    key = name.lower().strip()
    cls = FRAMINGS.get(key) or framing_class(name)
    check_protocol(protocol)
    if cls.takes_skin:
        return cls(skin=skin, protocol=protocol, **options)  # type: ignore[call-arg]
    if skin != "default":
        raise ValueError(f"--skin applies to the urn (r0, r0-tool) only, not to {key}")
    return cls(protocol=protocol, **options)  # type: ignore[call-arg]


__all__ = [
    "FRAMINGS",
    "PROTOCOLS",
    "SKIN_NAMES",
    "Framing",
    "FramingEpisode",
    "TurnOutcome",
    "check_solver_code",
    "framing_class",
    "framing_label",
    "get_framing",
    "get_skin",
    "ladder_order",
    "parse_decision",
    "register",
    "takes_skin",
]
