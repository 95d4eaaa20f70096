"""The reference economy as a pure state machine (the reference's `environment.py`
`Environment`, without agents, models, printing or file saving).

`PaperEconomy` keeps the truth ledger and runs every start-of-day and end-of-day mechanic
exactly as the reference does (same order, same random draws, same rounding). The
reference's `Environment.run` loop is split into a pull API so the run layer owns the
agents:

    econ.start()
    while wakes := econ.next_wakes():     # one bucket of ready agents, with observations
        for w in wakes:                   # query every model first (same state), then
            econ.apply(w.firm, name, args, text)   # apply in this order
    result = econ.finish()

Which firms answer with a model, a policy or a synthesized wait is the run layer's
business; the economy wakes every live firm.

This module imports the books and the market only for type checking, so `paper.books`
and `paper.market` may import the economy's constants from here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from econbench.coffee.paper import audit as _audit
from econbench.coffee.paper.audit import ref_sum
from econbench.coffee.paper.clock import (
    AGENT_STEP,
    BUSINESS_HOURS_END,
    BUSINESS_HOURS_START,
    EVENT_AGENT_WAKE,
    EVENT_EOD_MECHANICS,
    EVENT_MORNING_OPEN,
    MINUTES_PER_DAY,
    WAKE_DEAL_ACCEPTED,
    WAKE_DELIVERY_ARRIVED,
    WAKE_MORNING,
    WAKE_PRODUCTION_READY,
    TimeManager,
    tool_cost_minutes,
)
from econbench.coffee.paper.ids import IdSource
from econbench.coffee.paper.observation import _format_observation
from econbench.coffee.paper.records import Deal, Invoice, JournalEntry
from econbench.coffee.paper.schedule import Event, EventLoop

if TYPE_CHECKING:
    from econbench.coffee.paper.books import FirmBooks
    from econbench.coffee.paper.market import Marketplace

# ----- the reference's economy constants (environment.py) -----

DEMAND_BASE = 80.0
"""Baseline market consumer demand per day (kg of roasted beans), D_0."""
DEMAND_SIGMA = 0.5
"""Std of the per-(item, day) market-wide demand noise ε_t."""
DEMAND_HI = 130
"""Upper clamp on M_t in kg (scaled by the festival multiplier and the item's D_0)."""

FESTIVALS: list[tuple[int, int, float, str]] = [
    (40, 53, 3.0, "spring_break"),
]
"""(start_day, end_day_inclusive, demand_multiplier, name)."""

INVENTORY_SPOILAGE_PER_DAY = 0.005
LATE_FEE_PER_DAY = 0.001
FARMER_DELIVERY_EXTRA_DAYS = 0

ROLE_INVENTORY_CAP_KG = {
    "farmer": 120,
    "roaster": 120,
    "retailer": 80,
}

ROAST_DAILY_CAP_GREEN_KG = 50
ROAST_RECIPES: dict[str, dict] = {
    "green_coffee_kg": {
        "output_item": "roasted_coffee_kg",
        "labor_cost_per_kg": 3.0,
        "yield": 0.85,
        "lag_days": 1,
    },
    "green_specialty_kg": {
        "output_item": "roasted_specialty_kg",
        "labor_cost_per_kg": 5.0,
        "yield": 0.82,
        "lag_days": 1,
    },
}

DELIVERY_DELAY_PROB = 0.07
DELIVERY_DELAY_DAYS = 1
DELIVERY_LOSS_PROB = 0.015

RETURN_WINDOW_DAYS = 14

DAILY_OPEX_BY_ROLE = {
    "farmer": 25.0,
    "roaster": 30.0,
    "retailer": 50.0,
}

# (aid, books, p_i, A_i, capacity_i) — the reference's active-shop tuple.
ActiveShop = tuple[str, "FirmBooks", float, float, int]


@dataclass
class Wake:
    """One agent of the current bucket that is ready to act.

    `observation` is the text the reference's `_prepare_agent_step` adds to the agent's
    history as a user message before its model call (a fresh wake), or None for a
    mid-burst continuation, where the agent only sees its last tool result.
    """

    firm: str
    observation: str | None


class PaperEconomy:
    """The reference's `Environment` minus agents; see the module docstring for the API."""

    def __init__(
        self,
        books: dict[str, FirmBooks],
        market: Marketplace,
        clock: TimeManager,
        *,
        ids: IdSource,
        max_days: int = 90,
        main_agent_id: str | None = "roaster_A",
        seed: int | None = 0,
        on_event: Callable[[str, dict], None] | None = None,
    ) -> None:
        self.business_apps = books
        self.marketplace = market
        self.time_manager = clock
        self.ids = ids
        self.max_days = int(max_days)
        self.seed = seed
        self.on_event = on_event
        # The focal agent: its bankruptcy ends the run after the current bucket.
        self._main_agent_id: str | None = main_agent_id
        self._terminated_early: dict | None = None

        self.event_loop = EventLoop()
        # Each agent's next free minute; AGENT_WAKE events not at this minute are stale.
        self._available_at: dict[str, int] = {}
        # Set → the agent's next cycle gets a fresh observation (with this reason).
        self._pending_wake_reason: dict[str, str] = {}
        # Last day the agent acted; -1 = never (read via .get(aid, -1)).
        self._last_active_day_per_agent: dict[str, int] = {}
        self._today_nudge: str | None = None  # never set in the reference
        self._eod_done_for_day: set[int] = set()

        self.truth_ledger: dict[str, list[JournalEntry]] = {}
        self.daily_stats: list[dict] = []
        self.consumer_sales_log: list[dict] = []
        self.step_count = 0

        # Seeded in `start()`, as main.build_run seeds it after constructing the env.
        self.rng = random.Random()
        self._demand_path: dict[str, list[float]] = {}
        self._retailer_loyalty: dict[str, float] = {}
        self._spoilage_carry: dict[str, dict[str, float]] = {}
        self._pending_shipments: list[Deal] = []
        self._production_used_today: dict[str, int] = {}
        self._pending_production: list[dict] = []
        self._pending_roasting: list[dict] = []
        self._roast_used_today: dict[str, int] = {}
        self._bankrupt_agents: set[str] = set()
        self._bankrupt_day: dict[str, int] = {}
        self._bankrupt_reason: dict[str, str] = {}
        self._bankrupt_equity: dict[str, float] = {}
        self._messages_today: dict[str, int] = {}
        self._messages_per_day: dict[str, dict[int, int]] = {}
        self._morning_bod_opex: dict[str, float] = {}
        self._final_result: dict | None = None

        # Driver state of the split `run()` loop.
        self._started = False
        self._over = False
        self._bucket: list[tuple[Event, int]] = []  # ready wakes awaiting `apply`

        # Wiring, as the reference's Environment.__init__ (DMs wake nobody).
        self.marketplace.business_apps = books
        self.marketplace.on_deal_accepted = self._on_deal_accepted
        self.marketplace._env = self
        for ba in books.values():
            ba._env = self  # the books record truth through it (the reference's hook)
        # Re-stamp now that in-flight value is reachable (it is 0 at construction anyway).
        for ba in books.values():
            ba.initial_equity = ba._compute_true_equity()

    # ----- the brief's names for the reference's attributes -----
    @property
    def books(self) -> dict[str, FirmBooks]:
        return self.business_apps

    @property
    def market(self) -> Marketplace:
        return self.marketplace

    @property
    def clock(self) -> TimeManager:
        return self.time_manager

    @property
    def over(self) -> bool:
        """True once the event loop has run out (or the focal agent went bankrupt)."""
        return self._over

    # ----- truth ledger -----
    def _record_truth(
        self,
        agent_id: str,
        entry_type: str,
        amount: float,
        counterparty: str | None = None,
        item: str | None = None,
        quantity: int | None = None,
        memo: str | None = None,
        reference: str | None = None,
    ) -> None:
        """Append one truth-ledger entry (as the reference's `_record_truth`); the entry id
        is the next draw of the shared id source."""
        entry = JournalEntry(
            id=str(self.ids.uuid4())[:8],
            day=self.time_manager.get_current_day(),
            trader_id=agent_id,
            entry_type=entry_type,
            amount=float(amount),
            counterparty=counterparty,
            item=item,
            quantity=quantity,
            memo=memo,
            reference=reference,
        )
        self.truth_ledger.setdefault(agent_id, []).append(entry)

    def _emit(self, event_type: str, **data: Any) -> None:
        """Hand an event to `on_event` (the reference writes it to its event log)."""
        if self.on_event is not None:
            self.on_event(event_type, data)

    def pending_value_for(self, aid: str) -> float:
        """Value in flight for `aid` — pending production, pending roasts and goods
        reserved for sale (as the reference's `pending_value_for`); part of true equity."""
        total = 0.0
        for p in self._pending_production:
            if p.get("agent_id") == aid:
                total += float(p.get("total_cost", 0.0))
        for r in self._pending_roasting:
            if r.get("agent_id") == aid:
                total += float(r["output_total_cost"])
        for deal in self._pending_shipments:
            if deal.seller_id == aid:
                total += float(deal._reserved_seller_cogs)
        return total

    # ----- accept → ship → deliver -----
    def _on_deal_accepted(self, deal: Deal) -> Invoice:
        """Reserve the seller's goods, queue the shipment and wake the buyer (as the
        reference's `_on_deal_accepted`). Books and ledger entries happen on delivery;
        the returned invoice is a placeholder unless the delivery lag is zero."""
        seller = self.business_apps[deal.seller_id]
        buyer = self.business_apps[deal.buyer_id]
        today = self.time_manager.get_current_day()
        sqty = seller.inventory.get(deal.item_id, 0)
        stc = seller.inventory_total_cost.get(deal.item_id, 0.0)
        seller_unit_cost = (stc / sqty) if sqty > 0 else 0.0
        reserved_value = deal.qty * seller_unit_cost
        seller.inventory[deal.item_id] = sqty - deal.qty
        seller.inventory_total_cost[deal.item_id] = stc - reserved_value
        deal._reserved_seller_cogs = reserved_value

        self._pending_shipments.append(deal)
        self._wake_agent_externally(
            buyer.agent_id,
            f"{WAKE_DEAL_ACCEPTED}: {seller.agent_id}→you {deal.qty}× {deal.item_id} "
            f"@ ${deal.unit_price}/u",
        )
        self._emit(
            "deal_accepted",
            deal_id=deal.id,
            seller=seller.agent_id,
            buyer=buyer.agent_id,
            item_id=deal.item_id,
            qty=deal.qty,
            unit_price=deal.unit_price,
            total_price=deal.total_price,
            payment_terms_days=deal.payment_terms_days,
            deal_at=deal.deal_at,
            delivery_at=deal.delivery_at,
        )
        if deal.delivery_at // 1440 <= today:
            self._process_deliveries(today)
            for inv in seller.accounts_receivable:
                if inv.reference == deal.id:
                    return inv
        return Invoice(
            id="pending_" + deal.id,
            issuer=seller.agent_id,
            payer=buyer.agent_id,
            amount=deal.total_price,
            issue_date=deal.delivery_at // 1440,
            due_date=deal.delivery_at // 1440 + deal.payment_terms_days,
            reference=deal.id,
        )

    def _materialize_pending_production(self, day: int) -> list[dict]:
        """Land production due by `day` in the producer's inventory (as the reference's
        `_materialize_pending_production`); a bankrupt producer's batch is written down."""
        materialized: list[dict] = []
        still_pending: list[dict] = []
        for p in self._pending_production:
            if p["ready_day"] > day:
                still_pending.append(p)
                continue
            aid = p["agent_id"]
            item_id = p["item_id"]
            qty = p["qty"]
            unit_cost = p["unit_cost"]
            total_cost = p["total_cost"]
            if aid in self._bankrupt_agents:
                self._record_truth(
                    aid,
                    "writedown",
                    amount=total_cost,
                    counterparty=None,
                    item=item_id,
                    quantity=qty,
                    reference=str(p.get("started_day")),
                    memo=(
                        f"pending production cancelled on bankruptcy "
                        f"(started day {p.get('started_day')}, qty {qty})"
                    ),
                )
                continue
            ba = self.business_apps.get(aid)
            if ba is None:
                continue
            ba.inventory[item_id] = ba.inventory.get(item_id, 0) + qty
            ba.inventory_total_cost[item_id] = (
                ba.inventory_total_cost.get(item_id, 0.0) + total_cost
            )
            new_avg = (
                ba.inventory_total_cost[item_id] / ba.inventory[item_id]
                if ba.inventory[item_id] > 0
                else 0.0
            )
            self._record_truth(
                aid,
                "inventory_in",
                amount=total_cost,
                counterparty=None,
                item=item_id,
                quantity=qty,
                memo=(
                    f"production output (started day {p['started_day']}), "
                    f"WAVG cost ${new_avg:.4f}/unit"
                ),
            )
            materialized.append(
                {
                    "day": day,
                    "agent_id": aid,
                    "item_id": item_id,
                    "qty": qty,
                    "unit_cost": unit_cost,
                    "started_day": p["started_day"],
                }
            )
            self._emit(
                "production_materialized",
                day=day,
                agent_id=aid,
                item_id=item_id,
                qty=qty,
                unit_cost=unit_cost,
                started_day=p["started_day"],
            )
            self._wake_agent_externally(aid, f"{WAKE_PRODUCTION_READY}: {qty}× {item_id}")
        self._pending_production = still_pending
        return materialized

    def _materialize_pending_roasting(self, day: int) -> list[dict]:
        """Land roast batches due by `day` at their actual cost (as the reference's
        `_materialize_pending_roasting`); a bankrupt roaster's batch is written down."""
        materialized: list[dict] = []
        still_pending: list[dict] = []
        for r in self._pending_roasting:
            if r["ready_day"] > day:
                still_pending.append(r)
                continue
            aid = r["agent_id"]
            input_item = r["input_item"]
            output_item = r["output_item"]
            input_qty = r["input_qty"]
            output_qty = r["output_qty"]
            unit_cost = r["output_unit_cost"]
            yield_used = r["yield_used"]
            total_input_cost = r["output_total_cost"]
            if aid in self._bankrupt_agents:
                self._record_truth(
                    aid,
                    "writedown",
                    amount=total_input_cost,
                    counterparty=None,
                    item=output_item,
                    quantity=output_qty,
                    reference=str(r.get("started_day")),
                    memo=(
                        f"pending roast cancelled on bankruptcy "
                        f"(started day {r.get('started_day')}, {input_qty}kg {input_item} "
                        f"→ {output_qty}kg {output_item})"
                    ),
                )
                continue
            ba = self.business_apps.get(aid)
            if ba is None:
                continue
            ba.inventory[output_item] = ba.inventory.get(output_item, 0) + output_qty
            ba.inventory_total_cost[output_item] = (
                ba.inventory_total_cost.get(output_item, 0.0) + total_input_cost
            )
            new_avg = (
                ba.inventory_total_cost[output_item] / ba.inventory[output_item]
                if ba.inventory[output_item] > 0
                else 0.0
            )
            self._record_truth(
                aid,
                "inventory_in",
                amount=total_input_cost,
                counterparty=None,
                item=output_item,
                quantity=output_qty,
                memo=(
                    f"roast output: {input_qty}kg {input_item} → {output_qty}kg {output_item} "
                    f"(yield {yield_used:.0%}, started day {r['started_day']}, "
                    f"WAVG ${new_avg:.4f}/unit)"
                ),
            )
            materialized.append(
                {
                    "day": day,
                    "agent_id": aid,
                    "input_item": input_item,
                    "output_item": output_item,
                    "input_qty": input_qty,
                    "output_qty": output_qty,
                    "unit_cost": unit_cost,
                    "started_day": r["started_day"],
                }
            )
            self._emit(
                "roast_materialized",
                day=day,
                agent_id=aid,
                input_item=input_item,
                output_item=output_item,
                input_qty=input_qty,
                output_qty=output_qty,
                unit_cost=unit_cost,
                started_day=r["started_day"],
            )
            self._wake_agent_externally(
                aid, f"{WAKE_PRODUCTION_READY}: {output_qty}× {output_item} (roast)"
            )
        self._pending_roasting = still_pending
        return materialized

    def _process_deliveries(self, day: int) -> list[dict]:
        """Deliver every shipment due by `day` (as the reference's `_process_deliveries`).

        One `rng.random()` roll per due shipment, in queue order: below
        DELIVERY_LOSS_PROB the goods are lost (seller writes them down, no invoice);
        below LOSS + DELAY the shipment slips a day; else the buyer receives the goods,
        the invoice is issued and the truth-ledger entries fire.
        """
        delivered: list[dict] = []
        still_pending: list[Deal] = []
        for deal in self._pending_shipments:
            if deal.delivery_at // 1440 > day:
                still_pending.append(deal)
                continue

            roll = self.rng.random()
            if roll < DELIVERY_LOSS_PROB:
                writedown = deal._reserved_seller_cogs
                self._record_truth(
                    deal.seller_id,
                    "writedown",
                    amount=writedown,
                    counterparty=deal.buyer_id,
                    item=deal.item_id,
                    quantity=deal.qty,
                    reference=deal.id,
                    memo=f"shipment lost in transit (deal {deal.id})",
                )
                self._emit(
                    "shipment_lost",
                    day=day,
                    deal_id=deal.id,
                    seller=deal.seller_id,
                    buyer=deal.buyer_id,
                    item_id=deal.item_id,
                    qty=deal.qty,
                    unit_price=deal.unit_price,
                    total_price=deal.total_price,
                    seller_writedown=writedown,
                )
                continue
            if roll < DELIVERY_LOSS_PROB + DELIVERY_DELAY_PROB:
                deal.delivery_at = (day + DELIVERY_DELAY_DAYS) * MINUTES_PER_DAY + (
                    BUSINESS_HOURS_START
                )
                self._emit(
                    "shipment_delayed",
                    day=day,
                    deal_id=deal.id,
                    seller=deal.seller_id,
                    buyer=deal.buyer_id,
                    item_id=deal.item_id,
                    qty=deal.qty,
                    new_delivery_at=deal.delivery_at,
                    delay_days=DELIVERY_DELAY_DAYS,
                )
                still_pending.append(deal)
                continue

            seller = self.business_apps[deal.seller_id]
            buyer = self.business_apps[deal.buyer_id]
            received_qty = deal.qty
            quality_low = False  # no quality variance in the reference's 2-item world
            received_value = received_qty * deal.unit_price
            buyer.inventory[deal.item_id] = buyer.inventory.get(deal.item_id, 0) + received_qty
            buyer.inventory_total_cost[deal.item_id] = (
                buyer.inventory_total_cost.get(deal.item_id, 0.0) + received_value
            )

            issue_day = deal.delivery_at // 1440
            due_day = issue_day + deal.payment_terms_days
            invoice = Invoice(
                id=str(self.ids.uuid4())[:8],
                issuer=seller.agent_id,
                payer=buyer.agent_id,
                amount=deal.total_price,
                issue_date=issue_day,
                due_date=due_day,
                reference=deal.id,
            )
            seller.accounts_receivable.append(invoice)
            buyer.accounts_payable.append(invoice)
            deal.invoice_id = invoice.id

            seller_cogs = deal._reserved_seller_cogs
            seller_unit_cost = seller_cogs / deal.qty if deal.qty > 0 else 0.0
            self._record_truth(
                seller.agent_id,
                "sale_revenue",
                amount=deal.total_price,
                counterparty=buyer.agent_id,
                item=deal.item_id,
                quantity=deal.qty,
                reference=deal.id,
                memo=f"deal {deal.id} delivered",
            )
            self._record_truth(
                seller.agent_id,
                "inventory_out",
                amount=seller_cogs,
                counterparty=buyer.agent_id,
                item=deal.item_id,
                quantity=deal.qty,
                reference=deal.id,
                memo=f"COGS at WAVG ${seller_unit_cost:.2f}/unit (delivered)",
            )
            self._record_truth(
                buyer.agent_id,
                "purchase_cogs",
                amount=deal.total_price,
                counterparty=seller.agent_id,
                item=deal.item_id,
                quantity=deal.qty,
                reference=deal.id,
                memo="AP booked at delivery",
            )
            # The ledger's inventory_in is rounded to the cent; the books' is not.
            self._record_truth(
                buyer.agent_id,
                "inventory_in",
                amount=round(received_qty * deal.unit_price, 2),
                counterparty=seller.agent_id,
                item=deal.item_id,
                quantity=received_qty,
                reference=deal.id,
                memo=f"deal {deal.id} delivered",
            )

            d = {
                "day": day,
                "deal_id": deal.id,
                "seller": seller.agent_id,
                "buyer": buyer.agent_id,
                "item_id": deal.item_id,
                "qty": deal.qty,
                "received_qty": received_qty,
                "quality_low": quality_low,
                "unit_price": deal.unit_price,
                "total_price": deal.total_price,
                "invoice_id": invoice.id,
                "delivery_at": deal.delivery_at,
            }
            delivered.append(d)
            self._emit("deal_delivered", **d)
            self._wake_agent_externally(
                buyer.agent_id,
                f"{WAKE_DELIVERY_ARRIVED}: {received_qty}× {deal.item_id} from {seller.agent_id}",
            )
        self._pending_shipments = still_pending
        return delivered

    # ----- consumer demand (multi-shop competitive market) -----
    def _generate_loyalty_multipliers(self) -> None:
        """One uniform(0.85, 1.15) draw per retailer, in firm order (as the reference's
        `_generate_loyalty_multipliers`)."""
        self._retailer_loyalty = {}
        for aid, ba in self.business_apps.items():
            if ba.role == "retailer":
                self._retailer_loyalty[aid] = self.rng.uniform(0.85, 1.15)

    def _generate_demand_paths(self) -> None:
        """max_days + 2 gauss(0, DEMAND_SIGMA) draws per consumer item, in catalog order
        (as the reference's `_generate_demand_paths`)."""
        for item_id, item in self.marketplace.items.items():
            if item.retail_reservation_price is None:
                continue
            self._demand_path[item_id] = [
                self.rng.gauss(0.0, DEMAND_SIGMA) for _ in range(self.max_days + 2)
            ]

    def _active_shops_for_item(self, item_id: str, day: int) -> list[ActiveShop]:
        """Live retailers with a positive price and stock of `item_id` (as the
        reference's `_active_shops_for_item`)."""
        out: list[ActiveShop] = []
        for aid, ba in self.business_apps.items():
            if ba.role != "retailer" or aid in self._bankrupt_agents:
                continue
            p_i = float(ba.retail_prices.get(item_id, 0.0))
            if p_i <= 0:
                continue
            inv = ba.inventory.get(item_id, 0)
            if inv <= 0:
                continue
            out.append((aid, ba, p_i, 0.0, inv))
        return out

    def _festival_multiplier(self, day: int) -> float:
        """Largest active festival multiplier, else 1.0 (as the reference's)."""
        best = 1.0
        for start, end, mult, _name in FESTIVALS:
            if start <= day <= end and mult > best:
                best = float(mult)
        return best

    def _market_demand(
        self, item_id: str, day: int, active_shops: list[ActiveShop] | None = None
    ) -> float:
        """M_t = max(0, f·D_0 + ε_t) · max(0, 1 − p̄/p_res), capped at f·DEMAND_HI·D_0/80
        (as the reference's `_market_demand`)."""
        item = self.marketplace.get_item(item_id)
        if item is None or item.retail_reservation_price is None:
            return 0.0
        if active_shops is None:
            active_shops = self._active_shops_for_item(item_id, day)
        if not active_shops:
            return 0.0
        p_res = float(item.retail_reservation_price)
        p_avg = ref_sum(p_i for (_, _, p_i, _, _) in active_shops) / len(active_shops)
        try:
            eps = self._demand_path[item_id][day]
        except (KeyError, IndexError):
            eps = 0.0
        festival = self._festival_multiplier(day)
        d0 = (
            float(item.consumer_demand_base)
            if item.consumer_demand_base is not None
            else float(DEMAND_BASE)
        )
        market_attr = max(0.0, 1.0 - p_avg / p_res)
        m_t = max(0.0, festival * d0 + eps) * market_attr
        d_hi = float(DEMAND_HI) * (d0 / float(DEMAND_BASE))
        return min(festival * d_hi, m_t)

    def _shop_shares(self, item_id: str, active_shops: list[ActiveShop]) -> dict[str, float]:
        """s_i ∝ max(0, 1 − p_i/p_res) · loyalty_i (as the reference's `_shop_shares`)."""
        item = self.marketplace.get_item(item_id)
        if item is None or item.retail_reservation_price is None:
            return {}
        p_res = float(item.retail_reservation_price)
        loyalty = self._retailer_loyalty or {}
        attrs = {}
        for aid, _, p_i, _, _ in active_shops:
            attractiveness = max(0.0, 1.0 - p_i / p_res)
            attrs[aid] = attractiveness * float(loyalty.get(aid, 1.0))
        total = ref_sum(attrs.values())
        if total <= 0:
            return {}
        return {aid: a / total for aid, a in attrs.items()}

    def _run_consumer_sales(self, day: int) -> list[dict]:
        """Sell shop stock to consumers: elastic share of M_t plus the per-shop floor,
        capped by stock, paid in cash (as the reference's `_run_consumer_sales`)."""
        sales: list[dict] = []
        for item_id, item in self.marketplace.items.items():
            if item.retail_reservation_price is None:
                continue
            active = self._active_shops_for_item(item_id, day)
            if not active:
                continue
            m_t = self._market_demand(item_id, day, active_shops=active)
            shares = self._shop_shares(item_id, active)
            floor_per_shop_kg = float(item.consumer_demand_floor or 0.0)
            for aid, ba, p_i, _a_i, inv in active:
                share = shares.get(aid, 0.0)
                elastic_qty = round(m_t * share) if (m_t > 0 and shares) else 0
                floor_qty = (
                    round(floor_per_shop_kg)
                    if (floor_per_shop_kg > 0 and p_i <= item.retail_reservation_price)
                    else 0
                )
                qty = max(0, min(elastic_qty + floor_qty, inv))
                if qty <= 0:
                    continue
                revenue = round(qty * p_i, 2)
                inv_tc = ba.inventory_total_cost.get(item_id, 0.0)
                cogs_unit = (inv_tc / inv) if inv > 0 else 0.0
                cogs = qty * cogs_unit
                ba.cash += revenue
                ba.inventory[item_id] = inv - qty
                ba.inventory_total_cost[item_id] = inv_tc - cogs
                self._record_truth(
                    aid,
                    "sale_revenue",
                    amount=revenue,
                    counterparty="consumer",
                    item=item_id,
                    quantity=qty,
                    memo=(
                        f"retail @${p_i:.2f}/unit "
                        f"(elastic={elastic_qty}, floor={floor_qty}, "
                        f"share={share:.2f}, M_t={m_t:.1f})"
                    ),
                )
                self._record_truth(
                    aid,
                    "cash_in",
                    amount=revenue,
                    counterparty="consumer",
                    item=item_id,
                    quantity=qty,
                    memo="consumer cash payment",
                )
                self._record_truth(
                    aid,
                    "inventory_out",
                    amount=cogs,
                    counterparty="consumer",
                    item=item_id,
                    quantity=qty,
                    memo=f"retail COGS at WAVG ${cogs_unit:.2f}/unit",
                )
                sale = {
                    "day": day,
                    "shop_id": aid,
                    "item_id": item_id,
                    "qty": qty,
                    "elastic_qty": elastic_qty,
                    "floor_qty": floor_qty,
                    "unit_price": p_i,
                    "total_price": revenue,
                    "market_demand": round(m_t, 2),
                    "share": round(share, 4),
                }
                sales.append(sale)
                self.consumer_sales_log.append(sale)
                self._emit("consumer_sale", **sale)
        return sales

    # ----- end-of-day mechanics -----
    def _accrue_late_fees(self, day: int) -> dict:
        """0.1%/day of principal on every open invoice past due, unless either side is
        bankrupt (as the reference's `_accrue_late_fees`)."""
        per_pair: dict[tuple[str, str], float] = {}
        seen: set[str] = set()
        total_accrued = 0.0
        for buyer_id, ba in self.business_apps.items():
            for inv in ba.accounts_payable:
                if inv.id in seen:
                    continue
                seen.add(inv.id)
                if inv.paid or inv.returned:
                    continue
                if inv.due_date >= day:
                    continue
                if buyer_id in self._bankrupt_agents or inv.issuer in self._bankrupt_agents:
                    continue
                fee = round(inv.amount * LATE_FEE_PER_DAY, 4)
                if fee <= 0:
                    continue
                inv.late_fees_accrued = round(inv.late_fees_accrued + fee, 4)
                key = (inv.issuer, buyer_id)
                per_pair[key] = per_pair.get(key, 0.0) + fee
                total_accrued += fee
                self._record_truth(
                    buyer_id,
                    "interest_expense",
                    amount=fee,
                    counterparty=inv.issuer,
                    reference=inv.id,
                    memo=f"daily late-fee {LATE_FEE_PER_DAY * 100:.2f}% on overdue AP",
                )
                self._record_truth(
                    inv.issuer,
                    "interest_revenue",
                    amount=fee,
                    counterparty=buyer_id,
                    reference=inv.id,
                    memo=f"daily late-fee {LATE_FEE_PER_DAY * 100:.2f}% on overdue AR",
                )
        return {
            "total_accrued": round(total_accrued, 4),
            "per_pair": {f"{k[0]}->{k[1]}": round(v, 4) for k, v in per_pair.items()},
        }

    def _apply_spoilage(self, day: int) -> dict:
        """0.5%/day of every held item with a fractional carry per (agent, item), valued
        at WAVG (as the reference's `_apply_spoilage`)."""
        per_agent: dict[str, dict] = {}
        for aid, ba in self.business_apps.items():
            if aid in self._bankrupt_agents:
                continue
            carry = self._spoilage_carry.setdefault(aid, {})
            spoiled_units: dict[str, int] = {}
            spoiled_value_total = 0.0
            for item_id, qty in list(ba.inventory.items()):
                if qty <= 0:
                    continue
                if self.marketplace.get_item(item_id) is None:
                    continue
                fractional = qty * INVENTORY_SPOILAGE_PER_DAY + carry.get(item_id, 0.0)
                lose = int(fractional)
                carry[item_id] = fractional - lose
                if lose <= 0:
                    continue
                inv_tc = ba.inventory_total_cost.get(item_id, 0.0)
                cost_unit = (inv_tc / qty) if qty > 0 else 0.0
                value = lose * cost_unit
                ba.inventory[item_id] = qty - lose
                ba.inventory_total_cost[item_id] = inv_tc - value
                spoiled_units[item_id] = lose
                spoiled_value_total += value
                self._record_truth(
                    aid,
                    "spoilage_expense",
                    amount=value,
                    item=item_id,
                    quantity=lose,
                    memo=(
                        f"daily {INVENTORY_SPOILAGE_PER_DAY * 100:.2f}% spoilage at WAVG "
                        f"${cost_unit:.2f}/unit"
                    ),
                )
            if spoiled_units:
                per_agent[aid] = {
                    "spoiled_units": spoiled_units,
                    "spoiled_value": round(spoiled_value_total, 2),
                }
        return per_agent

    def _charge_daily_opex(self, day: int) -> dict:
        """Deduct the role's fixed opex from every live firm (as the reference's
        `_charge_daily_opex`); cash may go negative."""
        per_agent: dict[str, float] = {}
        for aid, ba in self.business_apps.items():
            if aid in self._bankrupt_agents:
                continue
            opex = DAILY_OPEX_BY_ROLE.get(ba.role, 0.0)
            if opex <= 0:
                continue
            ba.cash -= opex
            per_agent[aid] = opex
            self._record_truth(
                aid,
                "operating_expense",
                amount=opex,
                counterparty=None,
                memo=f"daily fixed opex ({ba.role})",
            )
            self._record_truth(
                aid, "cash_out", amount=opex, counterparty=None, memo="opex deduction"
            )
        return per_agent

    def _settle_due_invoices(self, day: int) -> dict:
        """No collection (buyers pay via pay_invoice); only totals what is overdue (as the
        reference's `_settle_due_invoices`)."""
        kept_open = 0.0
        for ba in self.business_apps.values():
            for inv in ba.accounts_payable:
                if inv.paid or inv.returned:
                    continue
                if inv.due_date > day:
                    continue
                amt = inv.net_outstanding
                if amt <= 0:
                    continue
                kept_open += amt
        return {
            "day": day,
            "auto_collected": 0.0,
            "overdue_kept_open": round(kept_open, 2),
            "events": [],
        }

    def _format_observation(self, agent_id: str, day: int, nudge: str | None) -> str:
        """As the reference's `_format_observation` (see `paper.observation`)."""
        return _format_observation(self, agent_id, day, nudge)

    # ----- bankruptcy -----
    def _destroy_pending_for(self, agent_id: str, day: int) -> dict:
        """Write down and drop the agent's pending production and roasts (as the
        reference's `_destroy_pending_for`)."""
        prod_kept: list[dict] = []
        roast_kept: list[dict] = []
        n_prod = 0
        n_roast = 0
        total = 0.0
        for p in self._pending_production:
            if p.get("agent_id") != agent_id:
                prod_kept.append(p)
                continue
            amt = float(p.get("total_cost", 0.0))
            self._record_truth(
                agent_id,
                "writedown",
                amount=amt,
                counterparty=None,
                item=p.get("item_id"),
                quantity=p.get("qty"),
                reference=str(p.get("started_day")),
                memo=(
                    f"pending production cancelled on bankruptcy "
                    f"(started day {p.get('started_day')}, qty {p.get('qty')})"
                ),
            )
            n_prod += 1
            total += amt
        for r in self._pending_roasting:
            if r.get("agent_id") != agent_id:
                roast_kept.append(r)
                continue
            amt = float(r["output_total_cost"])
            self._record_truth(
                agent_id,
                "writedown",
                amount=amt,
                counterparty=None,
                item=r.get("output_item"),
                quantity=r.get("output_qty"),
                reference=str(r.get("started_day")),
                memo=(
                    f"pending roast cancelled on bankruptcy "
                    f"(started day {r.get('started_day')}, "
                    f"{r.get('input_qty')}kg {r.get('input_item')} → "
                    f"{r.get('output_qty')}kg {r.get('output_item')})"
                ),
            )
            n_roast += 1
            total += amt
        self._pending_production = prod_kept
        self._pending_roasting = roast_kept
        return {
            "production_cancelled": n_prod,
            "roast_cancelled": n_roast,
            "total_writedown": round(total, 2),
        }

    def _writeoff_counterparty_ar(self, bankrupt_buyer_id: str, day: int) -> list[dict]:
        """Mark the bankrupt buyer's open payables as bad debt and book
        `bad_debt_expense` on each seller (as the reference's `_writeoff_counterparty_ar`)."""
        ba = self.business_apps.get(bankrupt_buyer_id)
        if ba is None:
            return []
        records: list[dict] = []
        for inv in ba.accounts_payable:
            if inv.paid or inv.returned or inv.bad_debt:
                continue
            outstanding = round(inv.amount + inv.late_fees_accrued - inv.credited_amount, 2)
            if outstanding <= 0.01:
                continue
            inv.bad_debt = True
            inv.bad_debt_date = day
            self._record_truth(
                inv.issuer,
                "bad_debt_expense",
                amount=outstanding,
                counterparty=bankrupt_buyer_id,
                reference=inv.id,
                memo=(f"AR written off — counterparty {bankrupt_buyer_id} bankrupt on day {day}"),
            )
            records.append(
                {
                    "invoice_id": inv.id,
                    "seller": inv.issuer,
                    "buyer": bankrupt_buyer_id,
                    "outstanding": outstanding,
                    "principal": round(inv.amount - inv.credited_amount, 2),
                    "late_fees_lost": round(inv.late_fees_accrued, 4),
                }
            )
        return records

    def _mark_bankrupt(
        self, agent_id: str, day: int, reason: str, detail: str | None = None
    ) -> None:
        """Lock `agent_id` out for the rest of the run (as the reference's
        `_mark_bankrupt`): destroy pending work, freeze equity, write off its payables on
        the sellers' books; a bankrupt focal agent ends the run."""
        if agent_id in self._bankrupt_agents:
            return
        ba = self.business_apps.get(agent_id)
        cash = round(ba.cash, 2) if ba is not None else None
        self._destroy_pending_for(agent_id, day)
        equity_at_bankruptcy: float | None = None
        if ba is not None:
            equity_at_bankruptcy = round(ba._compute_true_equity(), 2)
            self._bankrupt_equity[agent_id] = equity_at_bankruptcy
        self._bankrupt_agents.add(agent_id)
        self._bankrupt_day[agent_id] = day
        self._bankrupt_reason[agent_id] = reason
        bad_debt_writeoffs: list[dict] = []
        if ba is not None:
            bad_debt_writeoffs = self._writeoff_counterparty_ar(agent_id, day)
        self._emit(
            "agent_bankrupt",
            agent_id=agent_id,
            day=day,
            cash=cash,
            true_equity_at_bankruptcy=equity_at_bankruptcy,
            reason=reason,
            detail=detail,
            bad_debt_writeoffs=bad_debt_writeoffs,
        )
        if (
            self._main_agent_id is not None
            and agent_id == self._main_agent_id
            and self._terminated_early is None
        ):
            self._terminated_early = {
                "agent_id": agent_id,
                "day": day,
                "reason": reason,
                "detail": detail,
            }

    # ----- wakes and scheduling -----
    def _wake_agent_externally(self, agent_id: str, reason: str) -> None:
        """Bring an agent back now because something happened to it (as the reference's
        `_wake_agent_externally`): its clock moves back to now if it was later, a fresh
        observation is staged, and an AGENT_WAKE is pushed at its `_available_at`.

        If its clock is earlier than now the event is clamped up to now while
        `_available_at` stays, so the stale check drops it — the reference's behaviour.
        """
        if agent_id in self._bankrupt_agents or agent_id not in self.business_apps:
            return
        now = self.time_manager.get_virtual_min()
        cur = self._available_at.get(agent_id)
        if cur is None or cur > now:
            self._available_at[agent_id] = now
        self._pending_wake_reason[agent_id] = reason
        self.event_loop.schedule_at(
            self._available_at[agent_id],
            EVENT_AGENT_WAKE,
            target_agent=agent_id,
            payload={"reason": reason},
        )

    def _prepare_agent_step(self, agent_id: str, day: int) -> tuple[bool, str | None]:
        """Pre-call check (as the reference's `_prepare_agent_step`): a firm with negative
        cash goes bankrupt; a pending wake reason yields a fresh observation (with a
        `[Wake reason: …]` line unless it is the morning heartbeat). Returns
        (ready, observation or None)."""
        ba = self.business_apps.get(agent_id)
        if agent_id in self._bankrupt_agents:
            return False, None
        if ba is not None and ba.cash < 0:
            self._mark_bankrupt(agent_id, day, "cash_below_zero")
            return False, None
        obs: str | None = None
        wake_reason = self._pending_wake_reason.pop(agent_id, None)
        if wake_reason is not None:
            obs = self._format_observation(agent_id, day, self._today_nudge)
            if wake_reason and wake_reason != "morning_heartbeat":
                obs = obs + f"\n[Wake reason: {wake_reason}]"
        # Read by the observation above, so its window covers up to yesterday.
        self._last_active_day_per_agent[agent_id] = day
        return True, obs

    def _schedule_next_wake(self, agent_id: str, event_vt: int, action: str) -> None:
        """After an action: the agent's next free minute is now + the tool's cost; past
        19:00 (or after wait_for_next_day) it is parked at the close until tomorrow's
        morning or an external wake (as the reference's `_schedule_next_wake`)."""
        day = event_vt // 1440
        day_close_at = day * 1440 + BUSINESS_HOURS_END
        if action == "FORMAT_ERROR":
            new_vt = event_vt + 1
            if new_vt < day_close_at:
                self._available_at[agent_id] = new_vt
                self.event_loop.schedule_at(
                    new_vt,
                    EVENT_AGENT_WAKE,
                    target_agent=agent_id,
                    payload={"reason": "format_retry"},
                )
            else:
                self._available_at[agent_id] = day_close_at
            return
        if action == "wait_for_next_day":
            self._available_at[agent_id] = day_close_at
            return
        new_vt = event_vt + tool_cost_minutes(action)
        if new_vt < day_close_at:
            self._available_at[agent_id] = new_vt
            self.event_loop.schedule_at(
                new_vt,
                EVENT_AGENT_WAKE,
                target_agent=agent_id,
                payload={"reason": "continue"},
            )
        else:
            self._available_at[agent_id] = day_close_at

    def _handle_morning_open(self, day: int) -> None:
        """Start of day (as the reference's `_handle_morning_open`): reset daily counters,
        charge opex, land production and roasts, deliver shipments, then give every live
        firm a morning wake at 09:00 (or keep an earlier reactive one)."""
        day_open_at = day * 1440 + BUSINESS_HOURS_START
        if self.time_manager.get_virtual_min() < day_open_at:
            self.time_manager.virtual_min = day_open_at

        self._production_used_today.clear()
        self._roast_used_today.clear()
        self._messages_today.clear()

        self._morning_bod_opex = self._charge_daily_opex(day)
        self._materialize_pending_production(day)
        self._materialize_pending_roasting(day)
        deliveries_today = self._process_deliveries(day)
        if deliveries_today:
            self._emit("deliveries_processed", day=day, count=len(deliveries_today))

        for aid in self.business_apps:
            if aid in self._bankrupt_agents:
                continue
            cur = self._available_at.get(aid)
            if cur is None or cur < day_open_at:
                self._available_at[aid] = day_open_at
            self._pending_wake_reason[aid] = WAKE_MORNING
            self.event_loop.schedule_at(
                self._available_at[aid],
                EVENT_AGENT_WAKE,
                target_agent=aid,
                payload={"reason": WAKE_MORNING},
            )

    def _handle_eod_mechanics(self, day: int) -> None:
        """End of day at 19:00 (as the reference's `_handle_eod_mechanics`): consumer
        sales, spoilage, late fees, the overdue tally, the daily snapshot; then the clock
        rolls to next midnight and the next day's pair of events is scheduled."""
        if day in self._eod_done_for_day:
            return
        self._eod_done_for_day.add(day)

        consumer_sales = self._run_consumer_sales(day)
        spoilage_per_agent = self._apply_spoilage(day)
        late_fees = self._accrue_late_fees(day)
        settled = self._settle_due_invoices(day)
        opex_per_agent = dict(self._morning_bod_opex or {})

        self.daily_stats.append(
            self._daily_snapshot(day, settled, consumer_sales, opex_per_agent, spoilage_per_agent)
        )
        self._emit(
            "day_end",
            day=day,
            consumer_sales_count=len(consumer_sales),
            consumer_sales_revenue=round(ref_sum(s["total_price"] for s in consumer_sales), 2),
            auto_collected=settled["auto_collected"],
            overdue_kept_open=settled["overdue_kept_open"],
            opex_per_agent=opex_per_agent,
            opex_total=round(ref_sum(opex_per_agent.values()), 2),
            spoilage_total_value=round(
                ref_sum(s["spoiled_value"] for s in spoilage_per_agent.values()), 2
            ),
            spoilage_per_agent=spoilage_per_agent,
            late_fees_total=late_fees["total_accrued"],
            late_fees_per_pair=late_fees["per_pair"],
            settled_events=settled.get("events"),
            snapshot=self.daily_stats[-1],
            messages_per_agent_today=dict(self._messages_today),
        )
        for aid, n in self._messages_today.items():
            self._messages_per_day.setdefault(aid, {})[day] = int(n)

        self.time_manager.advance_day(1)
        if day + 1 < self.max_days:
            next_day = day + 1
            self.event_loop.schedule_at(
                next_day * 1440 + BUSINESS_HOURS_START,
                EVENT_MORNING_OPEN,
                payload={"day": next_day},
            )
            self.event_loop.schedule_at(
                next_day * 1440 + BUSINESS_HOURS_END,
                EVENT_EOD_MECHANICS,
                payload={"day": next_day},
            )

    # ----- the driver: the reference's `run()`, split -----
    def start(self) -> None:
        """What `run()` does before its loop, preceded by main.build_run's
        `env.rng.seed(seed)`: demand paths, loyalty, run_start, day 0's two events."""
        if self._started:
            raise RuntimeError("PaperEconomy.start() called twice")
        self._started = True
        if self.seed is not None:
            self.rng.seed(self.seed)
        self._generate_demand_paths()
        self._generate_loyalty_multipliers()
        self._emit(
            "run_start",
            agent_ids=list(self.business_apps.keys()),
            max_days=self.max_days,
            demand_paths=dict(self._demand_path),
            retailer_loyalty=dict(self._retailer_loyalty),
        )
        self.event_loop.schedule_at(BUSINESS_HOURS_START, EVENT_MORNING_OPEN, payload={"day": 0})
        self.event_loop.schedule_at(BUSINESS_HOURS_END, EVENT_EOD_MECHANICS, payload={"day": 0})

    def next_wakes(self) -> list[Wake]:
        """Advance to the next bucket with ready agents and return them in bucket order
        (as one iteration of the reference's `run()` loop up to its model calls).

        Pops buckets, runs MORNING_OPEN / EOD_MECHANICS handlers, drops stale, duplicate,
        bankrupt and after-hours wakes, prepares the rest. [] once the run is over (the
        queue ran out, or the focal agent went bankrupt). Every returned wake must be
        answered with `apply` (or `fail`) before the next call.
        """
        if not self._started:
            raise RuntimeError("call start() before next_wakes()")
        if self._bucket:
            raise RuntimeError(
                f"{len(self._bucket)} wake(s) of the current bucket not yet applied: "
                f"{[ev.target_agent for ev, _ in self._bucket]}"
            )
        max_vt = self.max_days * 1440
        while not self._over:
            if self._terminated_early is not None or not self.event_loop:
                self._over = True
                break
            bucket = self.event_loop.pop_bucket()
            if not bucket:
                self._over = True
                break
            bucket = [ev for ev in bucket if ev.virtual_min < max_vt]
            if not bucket:
                continue
            bucket_vt = bucket[0].virtual_min
            self.time_manager.virtual_min = bucket_vt

            for ev in bucket:
                if ev.kind == EVENT_MORNING_OPEN:
                    self._handle_morning_open(int(ev.payload.get("day", bucket_vt // 1440)))
                elif ev.kind == EVENT_EOD_MECHANICS:
                    self._handle_eod_mechanics(int(ev.payload.get("day", bucket_vt // 1440)))

            ready: list[tuple[Event, int]] = []
            wakes: list[Wake] = []
            seen_agents: set[str] = set()
            for ev in bucket:
                if ev.kind != EVENT_AGENT_WAKE:
                    continue
                aid = ev.target_agent
                if aid is None or aid in self._bankrupt_agents or aid in seen_agents:
                    continue
                cur_avail = self._available_at.get(aid)
                if cur_avail is None or cur_avail != ev.virtual_min:
                    continue
                day = ev.virtual_min // 1440
                day_close_at = day * 1440 + BUSINESS_HOURS_END
                if ev.virtual_min >= day_close_at:
                    self._available_at[aid] = day_close_at
                    continue
                ok, obs = self._prepare_agent_step(aid, day)
                if not ok:
                    self._available_at[aid] = day_close_at
                    continue
                seen_agents.add(aid)
                ready.append((ev, day))
                wakes.append(Wake(firm=aid, observation=obs))
            if ready:
                self._bucket = ready
                return wakes
        return []

    def _take(self, firm: str) -> tuple[Event, int]:
        """The next unapplied wake of the bucket, which must be `firm`'s: the reference
        applies a bucket's answers serially in bucket order."""
        if not self._bucket:
            raise RuntimeError(f"no pending wake to apply for {firm!r}")
        ev, day = self._bucket[0]
        if ev.target_agent != firm:
            raise ValueError(
                f"apply out of bucket order: expected {ev.target_agent!r}, got {firm!r}"
            )
        self._bucket.pop(0)
        return ev, day

    def apply(
        self, firm: str, call_name: str | None, arguments: dict | None, text: str = ""
    ) -> dict:
        """Apply one agent's answer (as the reference's `_apply_agent_step` followed by
        `_schedule_next_wake`) and return the tool result the agent sees.

        `call_name` None is the reference agent's reply without a tool call: no tool
        runs, the result is a synthesized success and the agent sleeps as if it had
        called wait_for_next_day. Otherwise the call goes through `paper.tools.execute`.
        `text` is the reply's text (the thought of the `agent_step` event).
        """
        from econbench.coffee.paper.tools import execute

        ev, day = self._take(firm)
        self.step_count += 1
        if call_name is None:
            action = "wait_for_next_day"
            action_input: dict = {}
            stripped = (text or "").strip()
            result: dict = {
                "status": "success",
                "message": stripped or "(no action; sleeping until next event)",
            }
            thought = stripped
        else:
            action = call_name
            action_input = arguments or {}
            result = execute(self.business_apps[firm], call_name, action_input)
            thought = text or ""
        self._emit(
            AGENT_STEP,
            agent_id=firm,
            day=day,
            step=self.step_count,
            action=action,
            action_input=action_input,
            observation=result,
            thought=thought,
            at=self.time_manager.get_virtual_min(),
        )
        self._schedule_next_wake(firm, ev.virtual_min, action)
        return result

    def fail(self, firm: str, kind: str, detail: str = "") -> None:
        """Apply a failed model call for `firm` (as the reference's `run()` handles an
        exception from `step_query_async`): "context_overflow" bankrupts the firm,
        "terminated" parks it until tomorrow, "format_error" retries a minute later."""
        ev, day = self._take(firm)
        day_close_at = day * 1440 + BUSINESS_HOURS_END
        if kind == "context_overflow":
            self._mark_bankrupt(firm, day, "context_overflow", detail=detail[:200])
            self._available_at[firm] = day_close_at
        elif kind == "terminated":
            self._available_at[firm] = day_close_at
        elif kind == "format_error":
            self._schedule_next_wake(firm, ev.virtual_min, "FORMAT_ERROR")
        else:
            raise ValueError(f"unknown failure kind {kind!r}")

    def finish(self) -> dict:
        """End the run (as the tail of the reference's `run()`): deliver every shipment
        still due by `max_days` with the ledger stamped on the last day, then
        `_finish()`'s result."""
        if self._bucket:
            raise RuntimeError("finish() with wakes of the current bucket not yet applied")
        self._over = True
        last_day = max(0, self.max_days - 1)
        self.time_manager.virtual_min = last_day * MINUTES_PER_DAY + BUSINESS_HOURS_END
        final_deliveries = self._process_deliveries(self.max_days)
        if final_deliveries:
            self._emit("deliveries_processed", day=last_day, count=len(final_deliveries))
        return self._finish()

    # ----- audit (see `paper.audit`) -----
    def _daily_snapshot(
        self,
        day: int,
        settled: dict,
        consumer_sales: list[dict],
        opex_per_agent: dict[str, float],
        spoilage_per_agent: dict[str, dict] | None = None,
    ) -> dict:
        return _audit._daily_snapshot(
            self, day, settled, consumer_sales, opex_per_agent, spoilage_per_agent
        )

    def _finish(self) -> dict:
        result = _audit._finish(self)
        self._final_result = result
        self._emit("run_end", **result)
        return result

    def _compute_audit_for(self, agent_id: str) -> dict:
        return _audit._compute_audit_for(self, agent_id)

    def _message_volume_for(self, agent_id: str) -> dict:
        return _audit._message_volume_for(self, agent_id)

    def _opex_buckets_in_window(self, agent_id: str, day_lo: int, day_hi: int) -> dict:
        return _audit._opex_buckets_in_window(self, agent_id, day_lo, day_hi)

    def _resolve_period(self, period: str) -> dict:
        return _audit._resolve_period(self, period)

    def compute_trial_balance(self, agent_id: str, period: str) -> dict:
        """As the reference's `compute_trial_balance` (the view_trial_balance tool)."""
        return _audit.compute_trial_balance(self, agent_id, period)


def build_economy(
    seed: int,
    days: int,
    main_agent_id: str | None = "roaster_A",
    *,
    on_event: Callable[[str, dict], None] | None = None,
) -> PaperEconomy:
    """Build the paper's world as main.build_run does: register the seeded items, one
    `FirmBooks` per endowment (in endowment order), wire the economy (re-stamping
    initial equity), with one `IdSource(seed)` shared by market, books and economy."""
    from econbench.coffee.paper.books import FirmBooks
    from econbench.coffee.paper.market import Marketplace
    from econbench.coffee.paper.seed import seed_world

    items, endowments = seed_world()
    ids = IdSource(seed)
    clock = TimeManager()
    market = Marketplace(clock, ids=ids)
    for it in items:
        market.register_item(it)
    books: dict[str, FirmBooks] = {}
    for endow in endowments:
        books[endow.agent_id] = FirmBooks(endow.agent_id, endow, market, clock, ids=ids)
    return PaperEconomy(
        books,
        market,
        clock,
        ids=ids,
        max_days=days,
        main_agent_id=main_agent_id,
        seed=seed,
        on_event=on_event,
    )
