"""The CoffeeBench tool catalogue (docs/coffeebench.md §4): 17 common tools and 4 role tools.

Each tool lives beside the rule it belongs to (``coffee/rules/``), on the shared base
``FirmToolkit`` (``coffee/firm_toolkit.py``: the world, the firm, the argument checks). This
module only assembles them: which tools each role gets, in the order of ``CATALOGUE`` — the
order models are shown them and runs record, so a change of it changes every request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules import (
    clock,
    consumer_sales,
    exchange,
    invoices,
    ledger,
    messages,
    production,
    returns,
    roasting,
)
from econbench.coffee.rules.rule import Rule, Tool

if TYPE_CHECKING:
    from econbench.coffee.world import World

CATALOGUE: tuple[Rule, ...] = (
    exchange.RULE,  # listings, offers, deals
    messages.RULE,
    invoices.RULE,
    returns.RULE,
    ledger.RULE,  # the trial balance
    consumer_sales.RULE,  # the market aggregate; the retailer's prices and sales
    clock.RULE,  # waiting
    production.RULE,  # the farmer's harvests
    roasting.RULE,  # the roaster's roasts
)
"""The rules whose tools firms have, in the order the catalogue shows them: every firm's
tools first, rule by rule, then its role's."""


def _toolkit(name: str, base: type[FirmToolkit], tools: tuple[Tool, ...]) -> type[FirmToolkit]:
    """A toolkit class with ``tools`` as its methods, in this order."""
    return type(name, (base,), {"__doc__": base.__doc__, **{t.__name__: t for t in tools}})


FirmTools = _toolkit("FirmTools", FirmToolkit, tuple(t for r in CATALOGUE for t in r.tools))
"""The 17 tools every firm has."""

_ROLE_TOOLKITS: dict[str, type[FirmToolkit]] = {
    role: _toolkit(
        f"{role.title()}Tools",
        FirmTools,
        tuple(t for r in CATALOGUE for t in r.role_tools.get(role, ())),
    )
    for role in ("farmer", "roaster", "retailer")
}


def toolkit_for(world: World, firm_id: str) -> FirmToolkit:
    return _ROLE_TOOLKITS[world.firm(firm_id).role](world, firm_id)


def toolkit_class(role: str) -> type[FirmToolkit]:
    return _ROLE_TOOLKITS[role]
