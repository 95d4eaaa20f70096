"""Production (docs/coffeebench.md §2): farms grow green coffee, batches land after a lag.

A farm pays a harvest's cost in cash when it starts it; the kg sit in a pending batch (work
in process on its balance sheet) until the batch's ready day, when they land in stock at that
cost. Roasts (``rules/roasting.py``) use the same batches. Batches do not spoil; a bankrupt
firm's pending batches are written off (docs/coffeebench.md §9).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.state import Batch, Cents, Firm, dollars, to_cents

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
        events.Production(
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
