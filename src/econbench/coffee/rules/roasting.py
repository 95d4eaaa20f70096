"""Roast output in whole kg, rounded on the firm's running total (docs/coffeebench.md §2).

Rounding each roast on its own would let a roaster beat the yield by roasting in small
lots (1 kg of green at 85 % rounds to 1 kg roasted). Rounding the cumulative output of
each green item instead keeps the total within half a kg of green × yield, however the
roasts are split: the first roast of a run gives exactly what ``round(qty × yield)`` gives.

A roast pays its labour in cash at once and takes the green out of stock at average cost; the
roasted kg wait in a pending batch (``rules/production.py``) worth green cost + labour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.config import ROAST_OUTPUT
from econbench.coffee.demand import round_half_up
from econbench.coffee.rules.production import new_batch
from econbench.coffee.state import Batch, Cents, Firm, dollars, to_cents

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


def roast(world: World, roaster: Firm, green_item: str, qty: int, out_qty: int) -> Batch:
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
        events.Roast(
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
