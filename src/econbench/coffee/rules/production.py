"""Production (docs/coffeebench.md §2): farms grow green coffee, batches land after a lag.

A farm pays a harvest's cost in cash when it starts it; the kg sit in a pending batch (work
in process on its balance sheet) until the batch's ready day, when they land in stock at that
cost. Roasts (``rules/roasting.py``) use the same batches. Batches do not spoil; a bankrupt
firm's pending batches are written off (docs/coffeebench.md §9).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.tools import ToolError, tool
from econbench.coffee import events
from econbench.coffee.config import GREEN_ITEMS
from econbench.coffee.firm_toolkit import FirmToolkit
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


def new_batch(
    world: World, firm: Firm, kind: str, item: str, qty: int, value: Cents, lag: int
) -> Batch:
    """Put ``qty`` kg worth ``value`` into a pending batch that lands in ``lag`` days."""
    batch = Batch(
        id=world.next_id("batch", "B"),
        firm=firm.id,
        kind=kind,  # type: ignore[arg-type]
        item=item,
        qty=qty,
        value=value,
        ready_day=world.day + lag,
    )
    world.state.batches[batch.id] = batch
    return batch


def harvest_cost(world: World, item: str, qty: int) -> Cents:
    return to_cents(qty * world.econ.production[item].unit_cost)


def produce(world: World, farm: Firm, item: str, qty: int) -> Batch:
    """Start a harvest of ``qty`` kg, paid now; the caller checked cap, cash and room."""
    prod = world.econ.production[item]
    cost = harvest_cost(world, item, qty)
    farm.cash -= cost
    farm.produced_today[item] = farm.produced_today.get(item, 0) + qty
    batch = new_batch(world, farm, "production", item, qty, cost, prod.lag_days)
    world.log(
        events.ProductionStarted(
            firm=farm.id,
            batch_id=batch.id,
            item=item,
            qty=qty,
            cost=dollars(cost),
            ready_day=batch.ready_day,
        )
    )
    return batch


def land_batches(world: World) -> None:
    """09:00: every batch ready today lands in its firm's stock, in batch order."""
    for batch in sorted(world.state.batches.values(), key=lambda b: int(b.id[1:])):
        if batch.ready_day > world.day:
            continue
        del world.state.batches[batch.id]
        firm = world.firm(batch.firm)
        world.add_stock(firm, batch.item, batch.qty, batch.value, why=batch.kind)
        landed = events.LANDED[batch.kind]
        world.log(landed(firm=firm.id, batch_id=batch.id, item=batch.item, qty=batch.qty))
        what = "production batch" if batch.kind == "production" else "roast batch"
        firm.clock.reasons.append(f"{what} {batch.id} arrived: {batch.qty} kg {batch.item}")


# ------------------------------------------------------------------ tools
@tool("write")
def produce_item(self: FirmToolkit, item_id: str, quantity: int) -> dict[str, Any]:
    """Produce more units of a producible item from your cash.
    Farmer-role only: `green_coffee_kg` or `green_specialty_kg`.
    Each item has a production cost per kg (paid from your cash at
    call time), a per-agent per-item daily cap (kg/day, resets at the
    start of each day) and a production lag (days between the call
    and the units landing in inventory at 09:00); your system prompt
    gives the numbers. Output blends into your WAVG cost basis at the
    production cost when it materialises.

    Args:
        item_id: `green_coffee_kg` or `green_specialty_kg`.
        quantity: integer kg to produce, > 0, ≤ today's remaining
            capacity for this item, ≤ what your cash covers, and
            within your inventory-cap headroom (on-hand plus inbound).
    """
    world, me = self.world, self.me
    item = self._item(item_id, GREEN_ITEMS)
    qty = self._qty(quantity, "quantity")
    prod = world.econ.production[item]
    left = prod.daily_cap - me.produced_today.get(item, 0)
    if qty > left:
        raise ToolError(f"daily cap: you can produce {left} more kg of {item} today")
    cost = harvest_cost(world, item, qty)
    if me.cash < cost:
        raise ToolError(f"not enough cash: {qty} kg costs ${dollars(cost):,.2f}")
    headroom = world.cap_headroom(me.id)
    if qty > headroom:
        raise ToolError(f"inventory cap: room for {headroom} kg (on-hand plus inbound)")
    batch = produce(world, me, item, qty)
    return {
        "batch_id": batch.id,
        "item_id": item,
        "qty": qty,
        "cost": dollars(cost),
        "ready_day": batch.ready_day,
        "cash": dollars(me.cash),
    }


RULE = Rule(
    name="production",
    morning=land_batches,
    role_tools={"farmer": (produce_item,)},
    events=(events.ProductionStarted, *events.LANDED.values()),
    state=("batches", "Firm.produced_today"),
)
