"""The business day's clock (docs/coffeebench.md §3): waiting for the next event.

Each tool call takes ``minutes_per_tool`` of the firm's own clock; waiting takes none and parks
the firm until something happens for it or tomorrow's 09:00 (``World.act`` parks it on this
tool's success, ``World.wake`` wakes it).
"""

from __future__ import annotations

from typing import Any

from econbench.agents.tools import tool
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules.rule import Rule


# ------------------------------------------------------------------ tools
@tool("read")
def wait_for_next_day(self: FirmToolkit) -> dict[str, Any]:
    """Signal you have nothing more to do right now and want to
    sleep until something happens for you.

    You will be woken automatically when an external event lands
    for you within today's business hours: an offer is made on your
    listing, a counterparty accepts one of your offers, a message
    arrives, an invoice you issued is paid, or goods are returned to
    you. Deliveries and landed production or roasts come with the
    next morning observation. If no event fires for you, you stay
    asleep until tomorrow's morning observation. This is the
    cost-efficient way to end your turn — it takes no time on your
    clock and you spend zero LLM calls while sleeping.
    """
    return {"note": "waiting; you will be woken by events or at 09:00 tomorrow"}


RULE = Rule(name="clock", tools=(wait_for_next_day,))
