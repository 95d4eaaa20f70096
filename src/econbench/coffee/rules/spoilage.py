"""Spoilage every evening (docs/coffeebench.md §8), on hand and in transit.

Each holding loses its rate of kg per evening in whole kg, the fraction carried to the next
evening. Goods in transit spoil too (a deviation from the spec's "stock in transit does not
spoil"): otherwise two firms that ship their stock back and forth so that it is always on
the road at 19:00 would never lose a kg, and a round trip would pay. The spoilage fraction
travels with the goods — a deal takes its share of the seller's carry and hands it to the
buyer on delivery — so moving stock around never resets it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import Cents, Deal, Stock, dollars

if TYPE_CHECKING:
    from econbench.coffee.world import World

EPS = 1e-9


def carry_share(stock: Stock, qty: int) -> float:
    """The part of a stock's spoilage fraction that ``qty`` of its kg take with them."""
    if stock.qty <= 0 or qty <= 0:
        return 0.0
    share = stock.spoil_carry if qty >= stock.qty else stock.spoil_carry * qty / stock.qty
    stock.spoil_carry -= share
    return share


def spoil_on_hand(world: World) -> None:
    rate = world.econ.spoilage_rate
    for firm in world.live_firms():
        for item, stock in firm.stock.items():
            if stock.qty <= 0:
                continue
            stock.spoil_carry += stock.qty * rate
            lost = min(math.floor(stock.spoil_carry + EPS), stock.qty)
            if lost <= 0:
                continue
            stock.spoil_carry -= lost
            value = world.remove_stock(firm, item, lost)
            firm.books.spoilage += value
            firm.spoiled_kg[item] = firm.spoiled_kg.get(item, 0) + lost
            world.log(events.Spoilage(firm=firm.id, item=item, qty=lost, value=dollars(value)))


def spoil_in_transit(world: World) -> None:
    """Open deals spoil at the seller's cost: the seller still owns goods on the road."""
    rate = world.econ.spoilage_rate
    for deal in sorted(world.open_deals.values(), key=lambda d: d.seq):
        seller = world.firm(deal.seller)
        left = deal.shipped_qty
        if left <= 0 or seller.bankrupt:
            continue
        deal.spoil_carry += left * rate
        lost = min(math.floor(deal.spoil_carry + EPS), left)
        if lost <= 0:
            continue
        deal.spoil_carry -= lost
        value = _take_reserved(deal, lost)
        deal.spoiled_qty += lost
        seller.books.spoilage += value
        seller.spoiled_kg[deal.item] = seller.spoiled_kg.get(deal.item, 0) + lost
        world.log(
            events.Spoilage(
                firm=seller.id, item=deal.item, qty=lost, value=dollars(value), deal_id=deal.id
            )
        )


def _take_reserved(deal: Deal, lost: int) -> Cents:
    left = deal.shipped_qty
    value = deal.reserved_value if lost >= left else round(deal.reserved_value * lost / left)
    deal.reserved_value -= value
    return value


def apply(world: World) -> None:
    spoil_on_hand(world)
    spoil_in_transit(world)


RULE = Rule(name="spoilage", evening=apply, events=(events.Spoilage,))
