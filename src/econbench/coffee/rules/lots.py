"""Which kg of a pooled stock came from which purchase, for returns (docs/coffeebench.md §6).

Stock is carried at weighted-average cost, so a kg has no identity. A return, though, may
only undo a purchase: the buyer may send back no more kg of a delivery than it still holds
*of that delivery*. Treating the pool as a proportional mix makes that exact: every outflow
(a sale, a roast, spoilage, goods reserved for a deal) takes the same share of every lot, so
a lot's kg shrink as the pool does. Under average costing the pool's value is then always
the sum over its lots of kg × the cost each lot came in at, so taking a lot's kg out at its
own booked cost leaves every other kg at its true cost: a return can neither book a gain
nor hide one in the stock left behind.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import Deal, Firm, Stock

if TYPE_CHECKING:
    from econbench.coffee.world import World

EPS = 1e-9


def add_lot(stock: Stock, deal_id: str, qty: int) -> None:
    """A delivered purchase enters the pool as a returnable lot."""
    stock.lots[deal_id] = stock.lots.get(deal_id, 0.0) + qty


def deplete(stock: Stock, qty: int) -> None:
    """An outflow of ``qty`` kg from the pool takes the same share of every lot."""
    if not stock.lots or qty <= 0:
        return
    if qty >= stock.qty:
        stock.lots.clear()
        return
    keep = (stock.qty - qty) / stock.qty
    for deal_id in list(stock.lots):
        left = stock.lots[deal_id] * keep
        if left < EPS:
            del stock.lots[deal_id]
        else:
            stock.lots[deal_id] = left


def held_of(stock: Stock, deal_id: str) -> int:
    """Whole kg of a delivery still in the pool (what may be returned)."""
    return min(stock.qty, math.floor(stock.lots.get(deal_id, 0.0) + EPS))


def take_lot(stock: Stock, deal_id: str, qty: int) -> None:
    """A return takes ``qty`` kg out of its own lot; the other lots keep their kg."""
    left = stock.lots.get(deal_id, 0.0) - qty
    if left < EPS:
        stock.lots.pop(deal_id, None)
    else:
        stock.lots[deal_id] = left


def expire(stock: Stock, open_deals: set[str]) -> None:
    """Forget lots whose return window has closed (``open_deals``: still returnable)."""
    for deal_id in [d for d in stock.lots if d not in open_deals]:
        del stock.lots[deal_id]


def expire_closed(
    deals: Mapping[str, Deal], firms: Iterable[Firm], next_day: int, window: int
) -> None:
    """19:00: purchases whose return window has closed by ``next_day`` stop being lots.

    Only the deals some lot names are looked at (``deals`` by id), not every deal so far."""
    for firm in firms:
        for stock in firm.stock.values():
            if stock.lots:
                expire(
                    stock, {d for d in stock.lots if _returnable(deals.get(d), next_day, window)}
                )


def _returnable(deal: Deal | None, next_day: int, window: int) -> bool:
    return (
        deal is not None
        and deal.status == "delivered"
        and deal.delivered_day is not None
        and next_day - deal.delivered_day <= window
    )


def expire_returned(world: World) -> None:
    """19:00: tomorrow's purchases past their return window stop being lots."""
    expire_closed(
        world.state.deals,
        world.state.firms.values(),
        world.day + 1,
        world.econ.return_window_days,
    )


RULE = Rule(name="lots", evening=expire_returned, state=("Stock.lots",))
