"""The rule registry: each tool and event has one owning rule, and the phases run the list."""

from __future__ import annotations

from collections import Counter

from econbench.coffee.rules import RULES
from econbench.coffee.toolkit import CATALOGUE, toolkit_class


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
