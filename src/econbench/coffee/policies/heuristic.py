"""Roaster policies: the paper's HeuristicRoaster and this project's ScriptedRoaster.

HeuristicRoaster follows docs/coffeebench.md §11 to the letter. Each morning it views its books, the
listings, its offers and its payables; accepts incoming offers at ≥ 1.2 × cost; pays every
open invoice it can afford; roasts all specialty green held, then regular green up to the
remaining daily capacity; lists all roasted specialty at 1.5 × cost, then all roasted regular
at 1.5 × cost; makes one offer at the asking price on the cheapest regular-green listing for
min(listing qty, 30) kg if cash allows; and waits. Cost basis is fixed: green $2 / $10,
roasted $5.88 / $18.30. It never messages and never changes prices dynamically. On wakes
other than the morning it waits at once. Two guards keep it from wasting calls on certain
errors: the offer's quantity is also capped by its inventory-cap headroom, and an invoice is
paid only when cash covers it.

ScriptedRoaster (``scripted``) is the same routine with three changes that make it a
sensible background firm: its cost basis is its actual average cost (never below the
paper's), it also makes one offer on the cheapest specialty-green listing for up to
10 kg when roasting it pays at its own list price, and it accepts good offers whenever it
is woken, not only in the morning.
"""

from __future__ import annotations

from typing import Any

from econbench.agents.policy import Routine, ScriptedPolicy
from econbench.coffee.config import (
    GREEN,
    GREEN_SPECIALTY,
    ROASTED,
    ROASTED_SPECIALTY,
)
from econbench.coffee.policies.common import accept_offers, call, is_morning, ok

PAPER_COST_BASIS = {GREEN: 2.0, GREEN_SPECIALTY: 10.0, ROASTED: 5.88, ROASTED_SPECIALTY: 18.30}
ACCEPT_MARKUP = 1.2
LIST_MARKUP = 1.5
ROAST_CAP_KG = 50
REGULAR_OFFER_KG = 30
SPECIALTY_OFFER_KG = 10


class HeuristicRoaster(ScriptedPolicy):
    name = "heuristic"
    buys_specialty = False
    accepts_on_any_wake = False

    def cost_basis(self, item: str, stock: dict[str, Any]) -> float:
        return PAPER_COST_BASIS[item]

    def routine(self, observation: dict[str, Any]) -> Routine:
        if not is_morning(observation):
            if self.accepts_on_any_wake and observation.get("offers_in"):
                stock = {item: dict(row) for item, row in observation["stock"].items()}
                yield from self._accept_offers(observation["offers_in"], stock, observation)
            yield call("wait_for_next_day")
            return
        books = yield call("view_trial_balance")
        listings = yield call("view_listings")
        offers = yield call("view_offers", direction="incoming")
        payables = yield call("view_payables")
        cash = books["balances"]["cash"]
        stock = {
            item: {"on_hand": row["qty"], "avg_cost": row["avg_cost"]}
            for item, row in books["inventory_by_item"].items()
        }
        pending = [o for o in offers.get("offers", []) if o["status"] == "pending"]
        yield from self._accept_offers(pending, stock, observation)
        for invoice in payables.get("invoices", []):
            if invoice["outstanding"] <= cash:
                result = yield call("pay_invoice", invoice_id=invoice["invoice_id"])
                if ok(result):
                    cash = result["cash"]
        capacity = observation.get("roast_capacity_left_kg", ROAST_CAP_KG)
        for green in (GREEN_SPECIALTY, GREEN):
            qty = min(stock[green]["on_hand"], capacity)
            if qty > 0:
                result = yield call("roast", green_item_id=green, qty_kg=qty)
                if ok(result):
                    capacity -= qty
                    cash = result["cash"]
        for roasted in (ROASTED_SPECIALTY, ROASTED):
            qty = self.list_qty(roasted, stock[roasted])
            if qty > 0:
                price = self.list_price(roasted, stock[roasted], listings.get("listings", []))
                yield call("post_listing", item_id=roasted, qty=qty, asking_price=price)
        headroom = observation["capacity"]["headroom"]
        for green, max_kg in self._green_to_buy():
            candidates = [lst for lst in listings.get("listings", []) if lst["item_id"] == green]
            if not candidates or headroom <= 0:
                continue
            cheapest = min(candidates, key=lambda lst: (lst["asking_price"], lst["listing_id"]))
            if not self._worth_buying(green, cheapest["asking_price"]):
                continue
            qty = min(cheapest["qty"], max_kg, headroom)
            if qty > 0 and qty * cheapest["asking_price"] <= cash:
                result = yield call(
                    "make_offer",
                    listing_id=cheapest["listing_id"],
                    offered_price=cheapest["asking_price"],
                    qty=qty,
                )
                if ok(result):
                    headroom -= qty
        yield call("wait_for_next_day")

    def _accept_offers(
        self, offers: list[dict[str, Any]], stock: dict[str, Any], observation: dict[str, Any]
    ) -> Routine:
        def floor(item: str) -> float | None:
            return self.accept_floor(item, stock[item]) if item in stock else None

        yield from accept_offers(offers, stock, observation, floor)

    # Pricing hooks (the strategies of ``strategies.py`` override them).
    def list_qty(self, item: str, stock: dict[str, Any]) -> int:
        """Kg of a roasted item to list this morning: all on hand."""
        return int(stock["on_hand"])

    def list_price(self, item: str, stock: dict[str, Any], listings: list[dict[str, Any]]) -> float:
        """Asking price of a roasted item, given the others' open listings."""
        return round(LIST_MARKUP * self.cost_basis(item, stock), 2)

    def accept_floor(self, item: str, stock: dict[str, Any]) -> float | None:
        """The lowest offered price per kg it accepts (None: accepts none)."""
        return ACCEPT_MARKUP * self.cost_basis(item, stock)

    def _green_to_buy(self) -> list[tuple[str, int]]:
        wanted = [(GREEN, REGULAR_OFFER_KG)]
        if self.buys_specialty:
            wanted.insert(0, (GREEN_SPECIALTY, SPECIALTY_OFFER_KG))
        return wanted

    def _worth_buying(self, green: str, price: float) -> bool:
        return True


class ScriptedRoaster(HeuristicRoaster):
    name = "scripted"
    buys_specialty = True
    accepts_on_any_wake = True

    def cost_basis(self, item: str, stock: dict[str, Any]) -> float:
        return max(PAPER_COST_BASIS[item], float(stock.get("avg_cost") or 0.0))

    def _worth_buying(self, green: str, price: float) -> bool:
        """Buy green only if roasting it still leaves a margin at the paper's list price."""
        if green == GREEN:
            return (price + 3.0) / 0.85 * 1.1 <= LIST_MARKUP * PAPER_COST_BASIS[ROASTED]
        return (price + 5.0) / 0.82 * 1.1 <= LIST_MARKUP * PAPER_COST_BASIS[ROASTED_SPECIALTY]
