"""The CoffeeBench tool catalogue (docs/coffeebench.md §4): 17 common tools and 4 role tools.

Each tool lives beside the rule it belongs to (``coffee/rules/``), on the shared base
``FirmToolkit`` (``coffee/firm_toolkit.py``: the world, the firm, the argument checks). This
module only assembles them: a firm has the tools of the rules its world runs (``World.rules``),
every firm's tools first, then its role's, rule by rule in the order of ``TOOL_ORDER`` — the
order models are shown them and runs record, so a change of it changes every request. A rule
that is not in ``TOOL_ORDER`` (a new one) shows its tools after those, in the list's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules import RULES
from econbench.coffee.rules.rule import Rule, Tool

if TYPE_CHECKING:
    from econbench.coffee.world import World

ROLES = ("farmer", "roaster", "retailer")
TOOL_ORDER: tuple[str, ...] = (
    "exchange",  # listings, offers, deals
    "messages",
    "invoices",
    "returns",
    "ledger",  # the trial balance
    "consumer_sales",  # the market aggregate; the retailer's prices and sales
    "clock",  # waiting
    "production",  # the farmer's harvests
    "roasting",  # the roaster's roasts
)
"""The rules whose tools firms have, by name, in the order the catalogue shows them."""


def catalogue(rules: Sequence[Rule]) -> tuple[Rule, ...]:
    """The rules of ``rules`` that have tools, in the order the catalogue shows them."""
    with_tools = [rule for rule in rules if rule.all_tools()]
    rank = {name: index for index, name in enumerate(TOOL_ORDER)}
    return tuple(sorted(with_tools, key=lambda rule: rank.get(rule.name, len(rank))))


CATALOGUE: tuple[Rule, ...] = catalogue(RULES)
"""The catalogue of the economy the world runs by default (``rules.RULES``)."""


def _toolkit(name: str, base: type[FirmToolkit], tools: tuple[Tool, ...]) -> type[FirmToolkit]:
    """A toolkit class with ``tools`` as its methods, in this order."""
    taken = set(base.tool_specs())
    for tool in tools:
        if tool.__name__ in taken:
            raise ValueError(f"two rules declare the tool {tool.__name__!r}")
        taken.add(tool.__name__)
    return type(name, (base,), {"__doc__": base.__doc__, **{t.__name__: t for t in tools}})


def _common_toolkit(rules: Sequence[Rule]) -> type[FirmToolkit]:
    """The tools every firm has under a list of rules."""
    return _toolkit("FirmTools", FirmToolkit, tuple(t for r in catalogue(rules) for t in r.tools))


def _role_toolkits(
    rules: Sequence[Rule], common: type[FirmToolkit]
) -> dict[str, type[FirmToolkit]]:
    """Each role's toolkit class under a list of rules: the common tools, then the role's."""
    shown = catalogue(rules)
    return {
        role: _toolkit(
            f"{role.title()}Tools",
            common,
            tuple(t for r in shown for t in r.role_tools.get(role, ())),
        )
        for role in ROLES
    }


FirmTools = _common_toolkit(RULES)
"""The 17 tools every firm of the default economy has."""
_DEFAULT = _role_toolkits(RULES, FirmTools)
_BUILT: dict[tuple[int, ...], tuple[tuple[Rule, ...], dict[str, type[FirmToolkit]]]] = {
    tuple(map(id, RULES)): (RULES, _DEFAULT)
}


def toolkit_for(world: World, firm_id: str) -> FirmToolkit:
    """The firm's tools: those of its role under the rules its world runs."""
    key = tuple(map(id, world.rules))
    if key not in _BUILT:  # the rules are kept with their classes, so their ids stay theirs
        rules = tuple(world.rules)
        _BUILT[key] = (rules, _role_toolkits(rules, _common_toolkit(rules)))
    return _BUILT[key][1][world.firm(firm_id).role](world, firm_id)


def toolkit_class(role: str) -> type[FirmToolkit]:
    """A role's toolkit class in the default economy."""
    return _DEFAULT[role]
