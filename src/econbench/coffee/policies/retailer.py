"""ScriptedRetailer: a coffee shop that buys roasted coffee, prices it and pays on time.

Each morning it:
1. pays every open invoice that is due by tomorrow (or overdue) and that its cash covers;
2. reads its own consumer sales of the last 3 days to estimate daily sales per item (before
   any sales: 20 kg/day regular, 4 kg/day specialty);
3. prices each item it holds at the midpoint of its average cost and the consumers'
   announced reservation price ($30 / $80) — the revenue-maximising price for a linear
   demand curve — changing the price only when it moves by more than $0.25;
4. buys toward 3 days of cover (doubled from two days before the announced festival,
   days 40–53, to its end): for each item it offers the asking price on the cheapest
   listings whose price leaves a margin (ask ≤ 70 % of the reservation price), within its
   inventory-cap headroom and its cash;
5. waits. Woken during the day (a deal, a delivery) it simply waits.
"""

from __future__ import annotations

from typing import Any

from econbench.agents.policy import Routine, ScriptedPolicy
from econbench.coffee.config import ROASTED, ROASTED_SPECIALTY
from econbench.coffee.policies.common import call, is_morning, ok

RESERVATION_PRICE = {ROASTED: 30.0, ROASTED_SPECIALTY: 80.0}
DEFAULT_DAILY_SALES = {ROASTED: 20.0, ROASTED_SPECIALTY: 4.0}
FESTIVAL = (40, 53)
COVER_DAYS = 3
MAX_ASK_SHARE = 0.7


class ScriptedRetailer(ScriptedPolicy):
    name = "scripted-retailer"

    def routine(self, observation: dict[str, Any]) -> Routine:
        if not is_morning(observation):
            yield call("wait_for_next_day")
            return
        day = observation["day"]
        cash = observation["cash"]
        payables = yield call("view_payables")
        for invoice in payables.get("invoices", []):
            if invoice["due_day"] <= day + 1 and invoice["outstanding"] <= cash:
                result = yield call("pay_invoice", invoice_id=invoice["invoice_id"])
                if ok(result):
                    cash = result["cash"]
        sales = yield call("view_consumer_sales", since_day=max(0, day - 3))
        daily = self._daily_sales(sales.get("sales", []), day)
        stock = observation["stock"]
        prices = observation.get("retail_prices", {})
        for item in (ROASTED, ROASTED_SPECIALTY):
            cost = stock[item]["avg_cost"]
            if stock[item]["on_hand"] <= 0 or cost <= 0:
                continue
            target = round((RESERVATION_PRICE[item] + cost) / 2, 2)
            if abs(target - prices.get(item, 0.0)) > 0.25:
                yield call("set_retail_price", item_id=item, price_per_unit=target)
        headroom = observation["capacity"]["headroom"]
        boost = 2.0 if FESTIVAL[0] - 2 <= day <= FESTIVAL[1] else 1.0
        for item in (ROASTED, ROASTED_SPECIALTY):
            need = int(daily[item] * COVER_DAYS * boost) - stock[item]["on_hand"]
            need -= stock[item]["inbound"]
            if need <= 0 or headroom <= 0:
                continue
            listings = yield call("view_listings", item_id=item)
            for lst in sorted(
                listings.get("listings", []), key=lambda x: (x["asking_price"], x["listing_id"])
            ):
                price = lst["asking_price"]
                if price > MAX_ASK_SHARE * RESERVATION_PRICE[item]:
                    break
                qty = min(lst["qty"], need, headroom, int(cash // price))
                if qty <= 0:
                    break
                result = yield call(
                    "make_offer", listing_id=lst["listing_id"], offered_price=price, qty=qty
                )
                if ok(result):
                    need -= qty
                    headroom -= qty
                    cash -= qty * price
        yield call("wait_for_next_day")

    @staticmethod
    def _daily_sales(rows: list[dict[str, Any]], day: int) -> dict[str, float]:
        days = min(3, day)
        out = dict(DEFAULT_DAILY_SALES)
        if days <= 0:
            return out
        for item in out:
            total = sum(r["qty"] for r in rows if r["item_id"] == item and r["day"] >= day - days)
            if total > 0:
                out[item] = max(total / days, DEFAULT_DAILY_SALES[item] / 2)
        return out
