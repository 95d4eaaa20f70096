"""Limits on B2B trade (docs/coffeebench.md §4, §8): price ceilings and the run's last day.

A B2B price above an item's ceiling — what a kg could at best become at consumer prices —
buys nothing real and only moves paper profit between firms, so listings and offers above
it are refused with an error naming the ceiling. A deal needs a morning to deliver in: on
the run's last day (or whenever the shipping lag would land after the end) no offer can be
made or accepted, rather than a sale that silently never arrives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.agents.tools import ToolError

if TYPE_CHECKING:
    from econbench.coffee.world import World


def check_ceiling(world: World, item: str, price: float, name: str) -> None:
    ceiling = world.econ.writedown_ceiling[item]
    if price > ceiling:
        raise ToolError(
            f"{name} ${price:,.2f} is above the ceiling of ${ceiling:,.2f}/kg for {item} "
            "(what a kg can at best become at consumer prices); B2B prices above it are refused"
        )


def check_deliverable(world: World, action: str) -> None:
    """Refuse a deal that could not be delivered before the run ends."""
    last_day = world.config.days - 1
    arrival = world.day + world.econ.shipping_days
    if arrival > last_day:
        when = "the last day" if world.day >= last_day else "too close to the end"
        raise ToolError(
            f"cannot {action}: day {world.day} is {when} of the run (days 0-{last_day}); "
            f"goods agreed now would arrive on day {arrival}, after it ends"
        )
