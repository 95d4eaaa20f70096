"""Roast output in whole kg, rounded on the firm's running total (docs/coffeebench.md §2).

Rounding each roast on its own would let a roaster beat the yield by roasting in small
lots (1 kg of green at 85 % rounds to 1 kg roasted). Rounding the cumulative output of
each green item instead keeps the total within half a kg of green × yield, however the
roasts are split: the first roast of a run gives exactly what ``round(qty × yield)`` gives.

A roast pays its labour in cash at once and takes the green out of stock at average cost; the
roasted kg wait in a pending batch (``rules/production.py``) worth green cost + labour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.tools import ToolError, tool
from econbench.coffee import events
from econbench.coffee.config import GREEN_ITEMS, ROAST_OUTPUT
from econbench.coffee.demand import round_half_up
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules.production import new_batch
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import (
    Batch,
    Cents,
    Firm,
    dollars,
    to_cents,
)

if TYPE_CHECKING:
    from econbench.coffee.world import World


def labour_cost(world: World, green_item: str, qty: int) -> Cents:
    return to_cents(qty * world.econ.roasting[green_item].labour_per_kg)


def roast_output(firm: Firm, green_item: str, qty: int, yield_: float) -> int:
    """Whole kg of roasted coffee that roasting ``qty`` more kg of ``green_item`` yields."""
    before = firm.roasted_green_by_item.get(green_item, 0)
    return round_half_up((before + qty) * yield_) - round_half_up(before * yield_)


def record_roast(firm: Firm, green_item: str, qty: int) -> None:
    firm.roasted_green_by_item[green_item] = firm.roasted_green_by_item.get(green_item, 0) + qty
    firm.roasted_green_kg += qty


def start_roast(world: World, roaster: Firm, green_item: str, qty: int, out_qty: int) -> Batch:
    """Roast ``qty`` kg of green into ``out_qty`` kg (from ``roast_output``), paying labour
    now; the caller checked capacity, stock, cash and a positive output."""
    econ = world.econ
    labour = labour_cost(world, green_item, qty)
    green_value = world.remove_stock(roaster, green_item, qty)
    roaster.cash -= labour
    roaster.roasted_today_kg += qty
    record_roast(roaster, green_item, qty)
    out_item = ROAST_OUTPUT[green_item]
    batch = new_batch(
        world, roaster, "roast", out_item, out_qty, green_value + labour, econ.roast_lag_days
    )
    world.log(
        events.RoastStarted(
            firm=roaster.id,
            batch_id=batch.id,
            green_item=green_item,
            green_qty=qty,
            item=out_item,
            qty=out_qty,
            labour=dollars(labour),
            ready_day=batch.ready_day,
        )
    )
    return batch


# ------------------------------------------------------------------ tools
@tool("write")
def roast(self: FirmToolkit, green_item_id: str, qty_kg: int) -> dict[str, Any]:
    """Convert green beans from your inventory into roasted beans.
    Roaster-role only. One unified action covers BOTH product
    lines via `green_item_id`: `green_coffee_kg` →
    `roasted_coffee_kg` (commodity) and `green_specialty_kg` →
    `roasted_specialty_kg` (premium); your system prompt gives each
    recipe's labor per kg, yield and lag.

    Both recipes SHARE one daily total green-input cap (same
    physical equipment). Cash + green leave immediately; the
    roasted output lands in inventory after the recipe's lag.
    Output is whole kg, rounded on your running total of green
    roasted, so splitting a roast never yields more. Effective COGS
    per roasted kg = (green WAVG + labor) / yield, blended into the
    output's WAVG cost basis at materialize time.

    Args:
        green_item_id: input item id (`green_coffee_kg` or
            `green_specialty_kg`).
        qty_kg: integer kg of green beans to roast. Must be > 0,
            ≤ today's remaining shared cap, ≤ green inventory you
            hold of that item, and your cash must cover labor; a
            roast that would add 0 kg of output is refused.
    """
    world, me, econ = self.world, self.me, self.world.econ
    item = self._item(green_item_id, GREEN_ITEMS, name="green_item_id")
    qty = self._qty(qty_kg, "qty_kg")
    left = econ.roast_daily_cap_kg - me.roasted_today_kg
    if qty > left:
        raise ToolError(f"roasting capacity: {left} kg of green left today")
    held = me.stock[item].qty
    if qty > held:
        raise ToolError(f"you hold only {held} kg of {item}")
    spec = econ.roasting[item]
    labour = labour_cost(world, item, qty)
    if me.cash < labour:
        raise ToolError(f"not enough cash for labour: ${dollars(labour):,.2f}")
    out_qty = roast_output(me, item, qty, spec.yield_)
    if out_qty <= 0:
        raise ToolError(
            f"{qty} kg of green adds 0 kg to your roasted output (output is rounded on "
            "your running total of green roasted); roast more at once"
        )
    batch = start_roast(world, me, item, qty, out_qty)
    return {
        "batch_id": batch.id,
        "roasted_item_id": batch.item,
        "roasted_qty": out_qty,
        "labour": dollars(labour),
        "ready_day": batch.ready_day,
        "cash": dollars(me.cash),
    }


RULE = Rule(
    name="roasting",
    role_tools={"roaster": (roast,)},
    events=(events.RoastStarted,),
    state=("Firm.roasted_today_kg",),
)
