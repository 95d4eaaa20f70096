"""The closing valuation: what the score counts of stock held at the end (docs/coffeebench.md §8).

At the close of the run's last evening every firm's remaining stock — on hand, in transit
from it (the seller still owns goods on the road) and in its pending batches — is valued at
the lower of its cost and the economy's own cost of making it: green at its production
cost, roasted at (green cost + labour) ÷ yield. Stock held by a firm that left the market
early, or held when the run ended early, first takes the spoilage of the evenings it missed;
stock that changed hands by deal also takes the fraction of a kg of spoilage it has accrued
(spoilage is booked in whole kg, so splitting a stock between firms would otherwise leave up
to a kg per holding unspoiled; stock that never moved, like a passive firm's endowment,
keeps the spec's whole-kg rule exactly). The difference is the closing write-down, a line
of its own.

Why: the daily ledger values goods at what a firm paid. Two firms that sell each other
stock at inflated prices, round trips and chains included, each book a profit on the way
out and carry the other's goods at the inflated price; valued at the economy's cost, that
paper profit vanishes. So only value created by selling to consumers (or to firms that did)
is counted. The passive floor is unchanged: a roaster's own stock at $5.88/kg is exactly
the economy's cost.

Every firm is also charged the fixed opex of each horizon day it did not pay — it went
bankrupt, or the run ended early because the evaluated firm did — so that leaving the
market, or ending the run, never saves fixed costs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.config import FOCAL_FIRM, GREEN_ITEMS, ITEMS, ROAST_OUTPUT, EconomyConfig
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import Cents, Firm, dollars, to_cents

if TYPE_CHECKING:
    from econbench.coffee.world import World

EPS = 1e-9


def economy_unit_cost(econ: EconomyConfig, item: str) -> Cents:
    """Whole cents per kg it costs the economy to make ``item`` (green: grow it; roasted:
    (green + labour) ÷ yield), rounded like every booked amount: $5.88 / $18.29."""
    if item in GREEN_ITEMS:
        return to_cents(econ.production[item].unit_cost)
    green = next(g for g, out in ROAST_OUTPUT.items() if out == item)
    spec = econ.roasting[green]
    return to_cents((econ.production[green].unit_cost + spec.labour_per_kg) / spec.yield_)


def _closing_value(
    value: Cents, qty: int, unit: Cents, carry: float, traded: bool, missing: int, rate: float
) -> Cents:
    """What ``qty`` kg booked at ``value`` count for at the close: first the spoilage of the
    ``missing`` evenings (same whole-kg rule as every evening), then, for traded stock, the
    accrued fraction of a kg; the rest at the lower of average cost and the economy's cost."""
    if qty <= 0:
        return 0
    left, acc = qty, max(0.0, carry)
    for _ in range(missing):
        acc += left * rate
        lost = min(math.floor(acc + EPS), left)
        acc -= lost
        left -= lost
    effective = left - (min(acc, float(left)) if traded else 0.0)
    return min(value, round(min(value / qty, unit) * effective))


def close(world: World) -> None:
    """Book the closing write-down and the unpaid horizon opex of every firm, once."""
    state, econ = world.state, world.econ
    if state.closed:
        return
    state.closed = True
    units = {item: economy_unit_cost(econ, item) for item in ITEMS}
    rate = econ.spoilage_rate
    for firm in state.firms.values():
        missing = _evenings_missed(world, firm)
        by_item: dict[str, Cents] = {}

        def book(item: str, old: Cents, new: Cents, by_item: dict[str, Cents] = by_item) -> Cents:
            if new < old:
                by_item[item] = by_item.get(item, 0) + old - new
                return new
            return old

        for item, stock in firm.stock.items():
            new = _closing_value(
                stock.value, stock.qty, units[item], stock.spoil_carry, stock.traded, missing, rate
            )
            stock.value = book(item, stock.value, new)
        for deal in world.open_deals.values():
            if deal.seller == firm.id:
                new = _closing_value(
                    deal.reserved_value,
                    deal.shipped_qty,
                    units[deal.item],
                    deal.spoil_carry,
                    True,
                    missing,
                    rate,
                )
                deal.reserved_value = book(deal.item, deal.reserved_value, new)
        for batch in state.batches.values():
            if batch.firm == firm.id:
                new = _closing_value(
                    batch.value, batch.qty, units[batch.item], 0.0, False, missing, rate
                )
                batch.value = book(batch.item, batch.value, new)
        total = sum(by_item.values())
        firm.books.closing_writedown += total
        world.log(
            events.ClosingWritedown(
                firm=firm.id,
                amount=dollars(total),
                by_item={item: dollars(v) for item, v in sorted(by_item.items())},
                evenings_missed=missing,
            )
        )
        _charge_unpaid_opex(world, firm)


def _evenings_missed(world: World, firm: Firm) -> int:
    """Horizon evenings on which the firm's stock did not spoil: it was bankrupt (it failed
    on a morning, after that day's opex) or the run had ended."""
    spoiled = len(firm.books_by_day) - (1 if firm.bankrupt else 0)
    return max(0, world.config.days - spoiled)


def _charge_unpaid_opex(world: World, firm: Firm) -> None:
    days_paid = len(firm.books_by_day)
    unpaid = max(0, world.config.days - days_paid)
    amount = unpaid * firm.opex_per_day
    if amount <= 0:
        return
    firm.cash -= amount
    firm.books.closing_opex += amount
    world.log(events.ClosingOpex(firm=firm.id, days=unpaid, amount=dollars(amount)))


def close_if_over(world: World) -> None:
    """19:00: close the books when the run ends tonight (its last day, or the focal firm failed)."""
    if world.firm(FOCAL_FIRM).bankrupt or world.day + 1 >= world.config.days:
        close(world)


RULE = Rule(
    name="closing",
    evening=close_if_over,
    events=(events.ClosingWritedown, events.ClosingOpex),
    state=("closed", "Firm.books.closing"),
)
