"""ScriptedFarmer: a cost-plus coffee farm that acts only through the farmer's tools.

Each morning it views its incoming offers and payables, accepts every pending offer priced at
≥ 1.2 × production cost that its stock can fill (best price first), pays the invoices it owes,
produces each green item up to a stock target (on-hand plus inbound: 60 kg regular, 20 kg
specialty; at most the daily cap, its cash and its inventory-cap headroom), then lists all
on-hand green at 1.5 × production cost with 30-day terms, and waits. When woken during the
day by an offer it accepts acceptable offers the same way and waits.
"""

from __future__ import annotations

from typing import Any

from econbench.agents.policy import Routine, ScriptedPolicy
from econbench.coffee.config import GREEN, GREEN_SPECIALTY
from econbench.coffee.policies.common import accept_offers, call, is_morning, ok

PRODUCTION_COST = {GREEN: 2.0, GREEN_SPECIALTY: 10.0}
DAILY_CAP = {GREEN: 30, GREEN_SPECIALTY: 10}
STOCK_TARGET = {GREEN: 60, GREEN_SPECIALTY: 20}
ACCEPT_MARKUP = 1.2
LIST_MARKUP = 1.5


class ScriptedFarmer(ScriptedPolicy):
    name = "scripted-farmer"

    def routine(self, observation: dict[str, Any]) -> Routine:
        stock = {item: dict(row) for item, row in observation["stock"].items()}
        if not is_morning(observation):
            yield from self._accept(observation.get("offers_in", []), stock, observation)
            yield call("wait_for_next_day")
            return
        offers = yield call("view_offers", direction="incoming")
        pending = [o for o in offers.get("offers", []) if o["status"] == "pending"]
        yield from self._accept(pending, stock, observation)
        cash = observation["cash"]
        payables = yield call("view_payables")
        for invoice in payables.get("invoices", []):
            if invoice["outstanding"] <= cash:
                result = yield call("pay_invoice", invoice_id=invoice["invoice_id"])
                if ok(result):
                    cash = result["cash"]
        headroom = observation["capacity"]["headroom"]
        left = observation.get("production_left_today", DAILY_CAP)
        for item in (GREEN, GREEN_SPECIALTY):
            have = stock[item]["on_hand"] + stock[item]["inbound"]
            qty = min(STOCK_TARGET[item] - have, left.get(item, 0), headroom)
            qty = min(qty, int(cash // PRODUCTION_COST[item]))
            if qty > 0:
                result = yield call("produce_item", item_id=item, quantity=qty)
                if ok(result):
                    headroom -= qty
                    cash = result["cash"]
        for item in (GREEN, GREEN_SPECIALTY):
            if stock[item]["on_hand"] > 0:
                yield call(
                    "post_listing",
                    item_id=item,
                    qty=stock[item]["on_hand"],
                    asking_price=round(LIST_MARKUP * PRODUCTION_COST[item], 2),
                )
        yield call("wait_for_next_day")

    def _accept(
        self, offers: list[dict[str, Any]], stock: dict[str, Any], observation: dict[str, Any]
    ) -> Routine:
        def floor(item: str) -> float | None:
            cost = PRODUCTION_COST.get(item)
            return None if cost is None else ACCEPT_MARKUP * cost

        yield from accept_offers(offers, stock, observation, floor)
