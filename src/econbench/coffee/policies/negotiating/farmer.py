"""NegotiatingFarmer: a farm with a hidden floor price per green item.

Each morning: note who is in default (only when an invoice to it is overdue), accept the
best pending offers at or above the floor and counter those below (see ``selling``), pay what
it owes, produce toward a stock target like ScriptedFarmer (on-hand plus inbound: 60 kg
regular, 20 kg specialty; within the daily cap, cash and cap headroom), adjust its asks,
list on-hand stock at the ask, then read and answer messages. Woken during the day it
accepts or counters new offers and answers messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.policy import Routine
from econbench.coffee.config import GREEN, GREEN_SPECIALTY
from econbench.coffee.policies.common import call, ok
from econbench.coffee.policies.negotiating.base import NegotiatingFirm
from econbench.coffee.policies.negotiating.selling import Seller
from econbench.coffee.policies.negotiating.valuations import PRODUCTION_COST, farmer_values

if TYPE_CHECKING:
    import numpy as np

DAILY_CAP = {GREEN: 30, GREEN_SPECIALTY: 10}
STOCK_TARGET = {GREEN: 60, GREEN_SPECIALTY: 20}


class NegotiatingFarmer(Seller, NegotiatingFirm):
    name = "negotiating-farmer"
    sell_items = (GREEN, GREEN_SPECIALTY)

    def draw_values(self, rng: np.random.Generator) -> dict[str, Any]:
        return farmer_values(rng)

    @property
    def concession(self) -> float:  # type: ignore[override]
        return self.values["concession"]

    def init_levels(self) -> None:
        ask = dict(self.values["ask"])
        self.memory["levels"] = {
            "ask": ask,
            "ask0": dict(ask),
            "last_sale": dict.fromkeys(self.sell_items, 0),
            "listed": [],
        }

    def floor(self, item: str, stock: dict[str, Any]) -> float | None:
        return self.values["floor"].get(item)

    def morning(self, observation: dict[str, Any]) -> Routine:
        stock = {item: dict(row) for item, row in observation["stock"].items()}
        yield from self.check_defaulters(observation)
        yield from self.handle_offers(observation.get("offers_in", []), stock, observation)
        cash = observation["cash"]
        yield from self.pay_due(observation, cash)
        headroom = observation["capacity"]["headroom"]
        left = observation.get("production_left_today", DAILY_CAP)
        for item in self.sell_items:
            have = stock[item]["on_hand"] + stock[item]["inbound"]
            qty = min(STOCK_TARGET[item] - have, left.get(item, 0), headroom)
            qty = min(qty, int((cash - 100) // PRODUCTION_COST[item]))
            if qty > 0:
                result = yield call("produce_item", item_id=item, quantity=qty)
                if ok(result):
                    headroom -= qty
                    cash = result["cash"]
        self.adjust_asks(observation, stock)
        yield from self.list_stock(stock)
        yield from self.answer_messages(observation, stock)

    def midday(self, observation: dict[str, Any]) -> Routine:
        stock = {item: dict(row) for item, row in observation["stock"].items()}
        yield from self.handle_offers(observation.get("offers_in", []), stock, observation)
        yield from self.answer_messages(observation, stock)

    def answer_messages(self, observation: dict[str, Any], stock: dict[str, Any]) -> Routine:
        proposals = yield from self.inbox(observation)
        for sender, proposal in proposals:
            if proposal.side == "buy":
                yield from self.answer_buy(sender, proposal, stock, observation)
