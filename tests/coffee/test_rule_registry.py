"""The rule registry: each tool and event has one owning rule, and the phases run the list."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from econbench.agents.tools import tool
from econbench.coffee.config import WorldConfig
from econbench.coffee.events import MemorySink
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules import RULES, Rule
from econbench.coffee.toolkit import CATALOGUE, TOOL_ORDER, FirmTools, toolkit_class
from econbench.coffee.world import World


def test_every_tool_is_declared_by_exactly_one_rule() -> None:
    owners = Counter(t.__name__ for rule in RULES for t in rule.all_tools())
    assert all(n == 1 for n in owners.values()), owners
    offered = {
        name
        for role in ("farmer", "roaster", "retailer")
        for name in toolkit_class(role).tool_specs()
    }
    assert offered == set(owners)


def test_the_catalogue_names_every_rule_with_tools() -> None:
    assert {r.name for r in RULES if r.all_tools()} == {r.name for r in CATALOGUE}


def test_no_event_type_is_declared_by_two_rules() -> None:
    owners = Counter(e.TYPE for rule in RULES for e in rule.events)
    assert all(n == 1 for n in owners.values()), owners


def test_rule_names_are_unique() -> None:
    assert len({r.name for r in RULES}) == len(RULES)


def test_the_catalogue_is_in_tool_order() -> None:
    assert [r.name for r in CATALOGUE] == list(TOOL_ORDER)


def _world(rules: tuple[Rule, ...]) -> World:
    return World(WorldConfig(seed=0), sink=MemorySink(), rules=rules)


def _tools_of(*names: str) -> set[str]:
    return {t.__name__ for r in RULES if r.name in names for t in r.all_tools()}


def test_a_world_without_a_rule_has_neither_its_tools_nor_its_hooks() -> None:
    dropped = ("roasting", "consumer_sales")
    world = _world(tuple(r for r in RULES if r.name not in dropped))
    full = _world(RULES)
    for firm in ("roaster_A", "retailer_A", "farmer_A"):
        kept = set(world.toolkit(firm).tool_specs())
        assert kept == set(full.toolkit(firm).tool_specs()) - _tools_of(*dropped), firm
    for each in (world, full):
        each.start_day()
        each.end_day()
    sales = [e for e in full.sink.events if e["type"] == "consumer_sale"]
    assert sales, "the full economy sells to consumers on day 0"
    assert not any(e["type"] == "consumer_sale" for e in world.sink.events), "no hook ran"


def test_a_new_rule_adds_its_tool_last_and_runs_its_hook_in_its_place() -> None:
    ran: list[str] = []

    @tool("read")
    def view_weather(self: FirmToolkit) -> dict[str, Any]:
        """See today's weather."""
        return {"weather": "fair"}

    def evening(world: World) -> None:
        ran.append(f"weather at day {world.day}, idle so far {world.firm('roaster_A').idle_days}")

    weather = Rule(name="weather", evening=evening, tools=(view_weather,))
    rules = (*RULES[:-1], weather, RULES[-1])  # before the clock, as the guide says
    world = _world(rules)
    assert list(world.toolkit("farmer_A").tool_specs())[-1] != "view_weather", "role tools last"
    common = [n for n in world.toolkit("retailer_A").tool_specs() if n in FirmTools.tool_specs()]
    names = list(world.toolkit("retailer_A").tool_specs())
    assert names.index("view_weather") == len(common), "after every common tool, before roles"
    assert world.toolkit("roaster_A").call("view_weather", {})["weather"] == "fair"
    world.start_day()
    world.end_day()
    assert ran == ["weather at day 0, idle so far 0"], "its evening hook runs before the clock's"
    assert world.firm("roaster_A").idle_days == 1


def test_two_rules_cannot_declare_one_tool() -> None:
    twin = Rule(name="twin", tools=RULES[-1].tools)
    with pytest.raises(ValueError, match="two rules declare the tool 'wait_for_next_day'"):
        _world((*RULES, twin)).toolkit("roaster_A")
