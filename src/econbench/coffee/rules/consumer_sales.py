"""Consumer sales every evening (docs/coffeebench.md §7): demand meets the shops' shelves.

``coffee/demand.py`` is the pure formula (kg sold per shop from prices, stock, loyalty and
the day's noise); this rule feeds it the live retailers' shelves and books what it sells:
cash at once, revenue, and the cost of the kg at average cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.tools import ToolError, tool
from econbench.coffee import events, observation
from econbench.coffee.config import RETAIL_ITEMS
from econbench.coffee.demand import Shop, shop_sales
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules import ledger
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import (
    ConsumerSale,
    dollars,
)

if TYPE_CHECKING:
    from econbench.coffee.world import World


def apply(world: World) -> None:
    """19:00: sell each retail item to consumers, item by item, shop by shop."""
    econ, hidden = world.econ, world.state.hidden
    lo, hi = econ.festival_days
    factor = econ.festival_factor if lo <= world.day <= hi else 1.0
    retailers = [f for f in world.live_firms() if f.role == "retailer"]
    for item in RETAIL_ITEMS:
        demand = econ.demand[item]
        shops = [
            Shop(
                f.id,
                dollars(f.retail_prices.get(item, 0)),
                f.stock[item].qty,
                hidden.loyalty[f.id],
            )
            for f in retailers
        ]
        noise = hidden.demand_noise[item]
        sales = shop_sales(
            shops,
            base_demand=demand.base_demand,
            reservation_price=demand.reservation_price,
            festival_factor=factor,
            noise=noise[world.day] if world.day < len(noise) else 0.0,
            floor_kg=demand.floor_kg,
            cap_per_80=econ.demand_cap_per_80,
        )
        for firm in retailers:
            qty = sales.get(firm.id, 0)
            if qty <= 0:
                continue
            price = firm.retail_prices[item]
            revenue = qty * price
            cost = world.remove_stock(firm, item, qty)
            firm.cash += revenue
            ledger.post_sale(firm, revenue, cost)
            world.state.consumer_sales.append(
                ConsumerSale(day=world.day, firm=firm.id, item=item, qty=qty, price=price)
            )
            world.log(
                events.ConsumerSaleMade(
                    firm=firm.id, item=item, qty=qty, price=dollars(price), revenue=dollars(revenue)
                )
            )


# ------------------------------------------------------------------ tools
@tool("read")
def view_market_aggregate(self: FirmToolkit, days_back: int = 7) -> dict[str, Any]:
    """Snapshot total CONSUMER-side market activity over the last
    `days_back` days, aggregated across BOTH retailers (i.e. the
    whole market — not just your own sales). One row per
    (day, item) reporting total kg sold, revenue and average per-kg price
    achieved across the market that day. Useful for forecasting
    demand and pricing pressure regardless of role: farmers /
    roasters can plan B2B supply against observed downstream
    consumer pull, and retailers can benchmark their own share
    against the aggregate.

    Args:
        days_back: integer days back from today to include, 1-90
            (e.g. 7 = the last 7 days; today's sales happen at 19:00).
    """
    if not 1 <= days_back <= 90:
        raise ToolError(f"days_back must be between 1 and 90 (got {days_back})")
    first = self.world.day - days_back
    agg: dict[tuple[int, str], list[int]] = {}
    for sale in observation.sales_since(self.world, first):
        row = agg.setdefault((sale.day, sale.item), [0, 0])
        row[0] += sale.qty
        row[1] += sale.qty * sale.price
    rows = [
        {
            "day": day,
            "item_id": item,
            "kg": kg,
            "revenue": dollars(rev),
            "avg_price": round(rev / kg / 100, 2) if kg else None,
        }
        for (day, item), (kg, rev) in sorted(agg.items())
    ]
    return {"days_back": days_back, "sales": rows}


@tool("write")
def set_retail_price(self: FirmToolkit, item_id: str, price_per_unit: float) -> dict[str, Any]:
    """Set your storefront price for a consumer-facing item. The env
    runs a scripted consumer-demand model every evening (19:00) across
    all retailers; consumers buy at the price you set, capped by your
    on-hand inventory of that item, only if your price is at or
    below their reservation price. The price applies from this
    evening's sales. Setting `price_per_unit=0` delists the item.

    Two consumer-facing items: `roasted_coffee_kg` (commodity) and
    `roasted_specialty_kg` (premium); your system prompt gives their
    reservation prices. Price each independently. Pricing above
    the reservation forfeits BOTH the elastic share AND the
    inelastic-floor demand for that item that day. COGS is
    deducted at WAVG cost on every sale.

    Args:
        item_id: id of a consumer-facing item (`roasted_coffee_kg`
            or `roasted_specialty_kg`).
        price_per_unit: USD per kg. Set to 0 to delist.
    """
    item = self._item(item_id, RETAIL_ITEMS)
    if price_per_unit < 0:
        raise ToolError(f"price_per_unit must not be negative (got {price_per_unit})")
    cents = 0 if price_per_unit == 0 else self._price(price_per_unit, "price_per_unit")
    old = self.me.retail_prices.get(item, 0)
    self.me.retail_prices[item] = cents
    self.world.log(
        events.RetailPrice(
            firm=self.firm_id, item=item, price=dollars(cents), previous=dollars(old)
        )
    )
    return {"item_id": item, "price": dollars(cents), "previous_price": dollars(old)}


@tool("read")
def view_consumer_sales(self: FirmToolkit, since_day: int | None = None) -> dict[str, Any]:
    """Return YOUR shop's consumer-sale history (env auto-sells from
    your inventory at the retail prices you set; this tool lets you
    read those sales back).

    Each row carries: day, item_id, qty, price, revenue; the total kg
    and revenue follow. Retailer-only — other roles see no sales here.

    Args:
        since_day: only sales on or after this day (default: the last 7 days).
    """
    first = self.world.day - 7 if since_day is None else since_day
    rows = [
        {
            "day": s.day,
            "item_id": s.item,
            "qty": s.qty,
            "price": dollars(s.price),
            "revenue": dollars(s.qty * s.price),
        }
        for s in observation.sales_since(self.world, first)
        if s.firm == self.firm_id
    ]
    return {
        "sales": rows,
        "total_kg": sum(r["qty"] for r in rows),
        "total_revenue": round(sum(r["revenue"] for r in rows), 2),
    }


RULE = Rule(
    name="consumer_sales",
    evening=apply,
    tools=(view_market_aggregate,),
    role_tools={"retailer": (set_retail_price, view_consumer_sales)},
    events=(events.ConsumerSaleMade, events.RetailPrice),
    state=("consumer_sales", "Firm.retail_prices"),
)
