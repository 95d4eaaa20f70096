"""NegotiatingRetailer: a coffee shop with a hidden maximum wholesale price per item.

Each morning: adjust its bid levels (see ``buying``), pay invoices due by the day after
tomorrow, estimate daily sales from its last 3 days (20 / 4 kg a day before any), price what
it holds at the midpoint of average cost and the reservation price like ScriptedRetailer,
bid below the asks toward 3 days of cover (doubled from two days before the festival, days
40–53, to its end), then read and answer messages: it takes SELL proposals and counters at
or below its max by bidding that price on the seller's listing, and counters or rejects the
rest. Woken during the day it answers messages only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.policy import Routine
from econbench.coffee.config import ROASTED, ROASTED_SPECIALTY
from econbench.coffee.policies.common import call
from econbench.coffee.policies.negotiating.base import NegotiatingFirm
from econbench.coffee.policies.negotiating.buying import Buyer
from econbench.coffee.policies.negotiating.valuations import RESERVATION_PRICE, retailer_values
from econbench.coffee.policies.retailer import ScriptedRetailer

if TYPE_CHECKING:
    import numpy as np

DEFAULT_DAILY_SALES = {ROASTED: 20.0, ROASTED_SPECIALTY: 4.0}
FESTIVAL = (40, 53)
COVER_DAYS = 3


class NegotiatingRetailer(Buyer, NegotiatingFirm):
    name = "negotiating-retailer"
    buy_items = (ROASTED, ROASTED_SPECIALTY)

    def draw_values(self, rng: np.random.Generator) -> dict[str, Any]:
        return retailer_values(rng)

    def init_levels(self) -> None:
        self.memory["levels"] = {"share": {item: {} for item in self.buy_items}}
        self.memory["need"] = dict.fromkeys(self.buy_items, 0)

    def max_price(self, item: str) -> float | None:
        return self.values["max"].get(item)

    def morning(self, observation: dict[str, Any]) -> Routine:
        day = observation["day"]
        self.adjust_bids(observation)
        yield from self.pay_due(observation, observation["cash"])
        sales = yield call("view_consumer_sales", since_day=max(0, day - 3))
        daily = self._daily_sales(sales.get("sales", []), day)
        stock = observation["stock"]
        prices = observation.get("retail_prices", {})
        for item in self.buy_items:
            cost = stock[item]["avg_cost"]
            if stock[item]["on_hand"] <= 0 or cost <= 0:
                continue
            target = round((RESERVATION_PRICE[item] + cost) / 2, 2)
            if abs(target - prices.get(item, 0.0)) > 0.25:
                yield call("set_retail_price", item_id=item, price_per_unit=target)
        budget = {
            "cash": float(observation["cash"]) - 200.0,
            "headroom": float(observation["capacity"]["headroom"]),
        }
        boost = 2.0 if FESTIVAL[0] - 2 <= day <= FESTIVAL[1] else 1.0
        needs = {}
        for item in self.buy_items:
            need = int(daily[item] * COVER_DAYS * boost) - stock[item]["on_hand"]
            needs[item] = need - stock[item]["inbound"]
        self.memory["need"] = dict(needs)
        listings: list[dict[str, Any]] | None = None
        for item in self.buy_items:
            if needs[item] <= 0 and not any(
                o["item_id"] == item for o in observation.get("offers_out", [])
            ):
                continue
            if listings is None:
                result = yield call("view_listings")
                listings = result.get("listings", [])
            yield from self.buy(item, max(0, needs[item]), listings, observation, budget)
        yield from self.answer_messages(observation, budget)

    def midday(self, observation: dict[str, Any]) -> Routine:
        budget = {
            "cash": float(observation["cash"]) - 200.0,
            "headroom": float(observation["capacity"]["headroom"]),
        }
        yield from self.answer_messages(observation, budget)

    def answer_messages(self, observation: dict[str, Any], budget: dict[str, float]) -> Routine:
        proposals = yield from self.inbox(observation)
        stock = observation["stock"]
        for sender, proposal in proposals:
            if proposal.side != "sell" or proposal.item not in self.buy_items:
                continue
            need = self.need_for(sender, proposal.item, stock, observation)
            yield from self.answer_sell(sender, proposal, need, observation, budget)

    def need_for(
        self, sender: str, item: str, stock: dict[str, Any], observation: dict[str, Any]
    ) -> int:
        """The kg of ``item`` a SELL proposal from ``sender`` may fill."""
        standing = sum(o["qty"] for o in observation.get("offers_out", []) if o["item_id"] == item)
        need = self.memory["need"].get(item, 0)
        need = max(need, int(DEFAULT_DAILY_SALES[item]) - stock[item]["on_hand"])
        return max(0, need, standing)

    _daily_sales = staticmethod(ScriptedRetailer._daily_sales)
