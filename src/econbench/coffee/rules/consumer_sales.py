"""Consumer sales every evening (docs/coffeebench.md §7): demand meets the shops' shelves.

``coffee/demand.py`` is the pure formula (kg sold per shop from prices, stock, loyalty and
the day's noise); this rule feeds it the live retailers' shelves and books what it sells:
cash at once, revenue, and the cost of the kg at average cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.config import RETAIL_ITEMS
from econbench.coffee.demand import Shop, shop_sales
from econbench.coffee.rules import ledger
from econbench.coffee.state import ConsumerSale, dollars

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
                events.ConsumerSale(
                    firm=firm.id, item=item, qty=qty, price=dollars(price), revenue=dollars(revenue)
                )
            )
