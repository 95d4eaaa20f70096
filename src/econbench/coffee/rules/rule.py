"""What a rule declares (``Rule``): its phase hooks, the state it owns, its events, its tools.

Each module of ``coffee/rules/`` ends with one ``RULE = Rule(...)`` record; the world runs the
``morning`` and ``evening`` hooks of its list of rules in order (``coffee/rules/__init__.py``
gives the list), and ``coffee/toolkit.py`` gives each firm the ``tools`` of its role.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from econbench.coffee.events import Event
    from econbench.coffee.world import World

Hook = Callable[["World"], None]
Tool = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Rule:
    """One rule of the economy, as the world and the toolkits see it."""

    name: str
    morning: Hook | None = None
    """Applied at 09:00, before the firms wake, in the order of the list of rules."""
    evening: Hook | None = None
    """Applied at 19:00, after the firms are parked, in the order of the list of rules."""
    tools: tuple[Tool, ...] = ()
    """Tools every firm has, in the order the catalogue shows them."""
    role_tools: Mapping[str, tuple[Tool, ...]] = field(default_factory=dict)
    """Tools only one role has (role → tools)."""
    events: tuple[type[Event], ...] = ()
    """The event types this rule emits (each is declared by one rule only)."""
    state: tuple[str, ...] = ()
    """The parts of the state it owns (``WorldState`` or ``Firm`` fields)."""

    def all_tools(self) -> tuple[Tool, ...]:
        return self.tools + tuple(t for tools in self.role_tools.values() for t in tools)
