"""The rules of the CoffeeBench economy, one small module per rule.

Each module applies one rule of docs/coffeebench.md to the world (``coffee/world.py``) and
ends with a ``RULE`` record (``rules/rule.py``) declaring what it contributes: its morning or
evening hook, the state it owns, the events it emits and its tools. Rules book into the
firms' ``Books`` and emit events; they never decide anything for an agent.

``RULES`` is the economy the world runs: each phase applies its rules' hooks in this order,
and firms have the tools of these rules (``coffee/toolkit.py`` orders them for the catalogue).
A world can be given another list (``World(config, rules=...)``): it runs those hooks and its
firms have those tools.
"""

from __future__ import annotations

from econbench.coffee.rules import (
    bankruptcy,
    clock,
    closing,
    consumer_sales,
    exchange,
    invoices,
    late_fees,
    ledger,
    lots,
    messages,
    production,
    returns,
    roasting,
    shipping,
    spoilage,
)
from econbench.coffee.rules.rule import Rule

RULES: tuple[Rule, ...] = (
    # 09:00, before the firms wake
    ledger.RULE,  # opex
    bankruptcy.RULE,
    production.RULE,  # batches land
    shipping.RULE,  # deliveries, delays, losses
    # 19:00, after the firms are parked
    consumer_sales.RULE,
    spoilage.RULE,
    late_fees.RULE,
    lots.RULE,  # return windows close
    closing.RULE,  # the run's last evening
    # tools only
    exchange.RULE,
    messages.RULE,
    invoices.RULE,
    returns.RULE,
    roasting.RULE,
    # last in both phases: the firms' day opens at 09:00; idle days are counted at 19:00
    clock.RULE,
)

__all__ = ["RULES", "Rule"]
