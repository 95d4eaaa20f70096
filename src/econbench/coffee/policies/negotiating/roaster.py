"""NegotiatingRoaster: a roaster with hidden margins, selling roasted and buying green.

Cost basis of a roasted item: max(nominal cost $5.88 / $18.29, its own average cost).
Selling (see ``selling``): floor = cost × floor_mult, ask₀ = cost × ask_mult. Buying green
(see ``buying``): max = (E × yield − labour) × (1 − margin), where E is the wholesale price
it expects for the roasted product (a drawn prior, then a 70/30 moving average of its own
sale prices). Each morning: defaults, levels, accept or counter offers, pay invoices due
within 2 days, roast all specialty green then regular up to 50 kg, list roasted stock at the
ask, bid for up to 40 kg regular and 10 kg specialty green a day (less when its roasted stock
of that kind exceeds 60 kg / 20 kg), then answer messages (BUY proposals for roasted, SELL
proposals and counters for green).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.policy import Routine
from econbench.coffee.config import GREEN, GREEN_SPECIALTY, ROASTED, ROASTED_SPECIALTY
from econbench.coffee.policies.common import call, ok
from econbench.coffee.policies.negotiating.base import NegotiatingFirm
from econbench.coffee.policies.negotiating.buying import Buyer
from econbench.coffee.policies.negotiating.selling import Seller
from econbench.coffee.policies.negotiating.valuations import NOMINAL_ROAST_COST, roaster_values

if TYPE_CHECKING:
    import numpy as np

ROAST_CAP_KG = 50
YIELD = {GREEN: 0.85, GREEN_SPECIALTY: 0.82}
LABOUR = {GREEN: 3.0, GREEN_SPECIALTY: 5.0}
OUTPUT = {GREEN: ROASTED, GREEN_SPECIALTY: ROASTED_SPECIALTY}
DAILY_GREEN = {GREEN: 40, GREEN_SPECIALTY: 10}
ROASTED_STOCK_LIMIT = {ROASTED: 60, ROASTED_SPECIALTY: 20}
EXPECTED_WEIGHT = 0.3


class NegotiatingRoaster(Seller, Buyer, NegotiatingFirm):
    name = "negotiating-roaster"
    sell_items = (ROASTED_SPECIALTY, ROASTED)
    buy_items = (GREEN_SPECIALTY, GREEN)

    def draw_values(self, rng: np.random.Generator) -> dict[str, Any]:
        return roaster_values(rng)

    @property
    def concession(self) -> float:  # type: ignore[override]
        return self.values["concession"]

    def init_levels(self) -> None:
        ask = {
            item: round(NOMINAL_ROAST_COST[item] * self.values["ask_mult"], 2)
            for item in self.sell_items
        }
        self.memory["levels"] = {
            "ask": ask,
            "ask0": dict(ask),
            "last_sale": dict.fromkeys(self.sell_items, 0),
            "listed": [],
            "share": {item: {} for item in self.buy_items},
            "expected": dict(self.values["expected"]),
            "cost": dict(NOMINAL_ROAST_COST),
        }

    # ------------------------------------------------------------ valuations
    def cost(self, item: str, row: dict[str, Any] | None = None) -> float:
        own = float((row or {}).get("avg_cost") or 0.0)
        return max(NOMINAL_ROAST_COST[item], own)

    def floor(self, item: str, stock: dict[str, Any]) -> float | None:
        if item not in NOMINAL_ROAST_COST:
            return None
        return round(self.cost(item, stock) * self.values["floor_mult"], 2)

    def max_price(self, item: str) -> float | None:
        if item not in YIELD:
            return None
        expected = self.memory["levels"]["expected"][OUTPUT[item]]
        value = (expected * YIELD[item] - LABOUR[item]) * (1 - self.values["margin"])
        return round(value, 2) if value > 0 else None

    def learn_prices(self, observation: dict[str, Any]) -> None:
        expected = self.memory["levels"]["expected"]
        for deal in observation.get("new_deals", []):
            if deal["role"] == "seller" and deal["item_id"] in expected:
                old = expected[deal["item_id"]]
                new = (1 - EXPECTED_WEIGHT) * old + EXPECTED_WEIGHT * deal["price"]
                expected[deal["item_id"]] = round(new, 4)

    # ------------------------------------------------------------ routines
    def morning(self, observation: dict[str, Any]) -> Routine:
        stock = {item: dict(row) for item, row in observation["stock"].items()}
        self.learn_prices(observation)
        self.adjust_bids(observation)
        self.adjust_asks(observation, stock)
        yield from self.check_defaulters(observation)
        yield from self.handle_offers(observation.get("offers_in", []), stock, observation)
        cash = float(observation["cash"])
        yield from self.pay_due(observation, cash)
        cash = yield from self.roast_all(observation, stock, cash)
        yield from self.list_stock(stock)
        budget = {"cash": cash - 300.0, "headroom": float(observation["capacity"]["headroom"])}
        yield from self.buy_green(observation, stock, budget)
        yield from self.answer_messages(observation, stock, budget)

    def midday(self, observation: dict[str, Any]) -> Routine:
        stock = {item: dict(row) for item, row in observation["stock"].items()}
        yield from self.handle_offers(observation.get("offers_in", []), stock, observation)
        budget = {
            "cash": float(observation["cash"]) - 300.0,
            "headroom": float(observation["capacity"]["headroom"]),
        }
        yield from self.answer_messages(observation, stock, budget)

    def roast_all(self, observation: dict[str, Any], stock: dict[str, Any], cash: float) -> Routine:
        capacity = observation.get("roast_capacity_left_kg", ROAST_CAP_KG)
        for green in (GREEN_SPECIALTY, GREEN):
            qty = min(stock[green]["on_hand"], capacity, int(cash // LABOUR[green]))
            if qty > 1:
                result = yield call("roast", green_item_id=green, qty_kg=qty)
                if ok(result):
                    capacity -= qty
                    cash = float(result["cash"])
                    stock[green]["on_hand"] -= qty
        return cash

    def green_need(self, stock: dict[str, Any], green: str) -> int:
        roasted = OUTPUT[green]
        if stock[roasted]["on_hand"] + stock[roasted]["inbound"] > ROASTED_STOCK_LIMIT[roasted]:
            return 0
        return DAILY_GREEN[green] - stock[green]["on_hand"] - stock[green]["inbound"]

    def buy_green(
        self, observation: dict[str, Any], stock: dict[str, Any], budget: dict[str, float]
    ) -> Routine:
        listings: list[dict[str, Any]] | None = None
        for green in self.buy_items:
            need = self.green_need(stock, green)
            if need <= 0 and not any(
                o["item_id"] == green for o in observation.get("offers_out", [])
            ):
                continue
            if listings is None:
                result = yield call("view_listings")
                listings = result.get("listings", [])
            yield from self.buy(green, max(0, need), listings, observation, budget)

    def answer_messages(
        self, observation: dict[str, Any], stock: dict[str, Any], budget: dict[str, float]
    ) -> Routine:
        proposals = yield from self.inbox(observation)
        for sender, proposal in proposals:
            if proposal.side == "buy" and proposal.item in self.sell_items:
                yield from self.answer_buy(sender, proposal, stock, observation)
            elif proposal.side == "sell" and proposal.item in self.buy_items:
                need = self.green_for(sender, proposal.item, stock, observation)
                yield from self.answer_sell(sender, proposal, need, observation, budget)

    def green_for(
        self, sender: str, green: str, stock: dict[str, Any], observation: dict[str, Any]
    ) -> int:
        """The kg of ``green`` a SELL proposal from ``sender`` may fill."""
        return max(self.green_need(stock, green), DAILY_GREEN[green] // 2)
