"""The business day's clock (docs/coffeebench.md §3): the firms' day opens, they wait, it ends.

At 09:00, after the other rules' morning hooks, every live firm's day opens: its clock at
09:00, woken with a morning observation, and its daily capacities (harvest, roasting) fresh.
Each tool call takes ``minutes_per_tool`` of the firm's own clock; waiting takes none and parks
the firm until something happens for it or tomorrow's 09:00 (``World.act`` parks it on this
tool's success, ``World.wake`` wakes it). At 19:00, after the other rules' evening hooks, a
live firm that made no call all day counts an idle day.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.tools import tool
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules.rule import Rule

if TYPE_CHECKING:
    from econbench.coffee.world import World


# ------------------------------------------------------------------ hooks
def open_business(world: World) -> None:
    """09:00: every live firm's day starts: fresh capacities, its clock at 09:00, woken."""
    start = world.econ.day_start_minute
    for firm in world.live_firms():
        firm.produced_today = {}
        firm.roasted_today_kg = 0
        clock = firm.clock
        clock.minute = start
        clock.parked = False
        clock.needs_observation = True
        clock.actions_today = 0
        clock.acted_today = False
        clock.reasons.insert(0, "morning")


def count_idle_days(world: World) -> None:
    """19:00: a live firm that made no call today has had an idle day."""
    for firm in world.live_firms():
        if not firm.clock.acted_today:
            firm.idle_days += 1


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


RULE = Rule(
    name="clock",
    morning=open_business,
    evening=count_idle_days,
    tools=(wait_for_next_day,),
    state=("Firm.clock", "Firm.idle_days"),
)
