"""The CoffeeBench world: a deterministic state machine over ``WorldState``.

The world owns the mechanics of docs/coffeebench.md §1–§9 — morning and evening phases, shipping
risk, invoices, late fees, returns, bad debt, consumer demand, spoilage, write-downs, bankruptcy —
and the per-agent clocks and wakes of its §3. Agents change it only through the tools in
``toolkit.py``, via ``World.act``. It knows nothing about models.

Randomness: demand noise and loyalty are drawn once at creation from their own named
streams and stored in the (hidden) state; each shipping roll comes from a generator keyed by
(seed, stream, deal, day), so a roll never depends on how many other draws happened and a
resumed run needs no generator state.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from econbench.agents.tools import ToolCall
from econbench.coffee.config import (
    FIRMS,
    FOCAL_FIRM,
    GREEN_ITEMS,
    ITEMS,
    RETAIL_ITEMS,
    EconomyConfig,
    RunConfig,
    role_of,
)
from econbench.coffee.demand import Shop, shop_sales
from econbench.coffee.events import EventSink, NullSink
from econbench.coffee.rules import closing, lots, spoilage
from econbench.coffee.state import (
    Batch,
    Books,
    Cents,
    ConsumerSale,
    Deal,
    Firm,
    Hidden,
    Invoice,
    Listing,
    Offer,
    Stock,
    WorldState,
    dollars,
    to_cents,
)

STREAM_DEMAND = 1
STREAM_LOYALTY = 2
STREAM_SHIPPING = 3

WAIT_TOOL = "wait_for_next_day"


def hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def loggable(value: Any) -> Any:
    """Arguments as the agent sent them, made safe for a strict JSON log (NaN, inf, objects)."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): loggable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [loggable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


def shipping_outcome(seed: int, deal_seq: int, day: int, econ: EconomyConfig) -> str:
    """The one roll a due shipment draws: "lost", "delayed" or "delivered"
    (docs/coffeebench.md §5)."""
    roll = np.random.default_rng([seed, STREAM_SHIPPING, deal_seq, day]).random()
    if roll < econ.ship_loss_prob:
        return "lost"
    if roll < econ.ship_loss_prob + econ.ship_delay_prob:
        return "delayed"
    return "delivered"


def initial_state(config: RunConfig) -> WorldState:
    """Endowments and the once-per-run hidden draws (docs/coffeebench.md §1, §7, §12)."""
    econ = config.economy
    firms: dict[str, Firm] = {}
    for firm_id in FIRMS:
        role = role_of(firm_id)
        rc = econ.role(role)
        stock = {item: Stock() for item in ITEMS}
        stock[rc.start_item] = Stock(
            qty=rc.start_qty, value=to_cents(rc.start_qty * rc.start_unit_cost)
        )
        firms[firm_id] = Firm(
            id=firm_id,
            role=role,
            cash=to_cents(rc.cash),
            stock=stock,
            inventory_cap=rc.inventory_cap,
            opex_per_day=to_cents(rc.opex_per_day),
            retail_prices=(
                {item: to_cents(p) for item, p in econ.start_retail_prices.items()}
                if role == "retailer"
                else {}
            ),
        )
    loyalty_rng = np.random.default_rng([config.seed, STREAM_LOYALTY])
    lo, hi = econ.loyalty_range
    loyalty = {
        firm_id: float(loyalty_rng.uniform(lo, hi))
        for firm_id in FIRMS
        if role_of(firm_id) == "retailer"
    }
    demand_rng = np.random.default_rng([config.seed, STREAM_DEMAND])
    noise = {
        item: [float(x) for x in demand_rng.normal(0.0, econ.demand_noise_sd, config.days)]
        for item in RETAIL_ITEMS
    }
    return WorldState(
        seed=config.seed, firms=firms, hidden=Hidden(loyalty=loyalty, demand_noise=noise)
    )


class World:
    """Mechanics and bookkeeping over a ``WorldState``; see the module docstring."""

    def __init__(
        self, config: RunConfig, state: WorldState | None = None, sink: EventSink | None = None
    ) -> None:
        self.config = config
        self.econ: EconomyConfig = config.economy
        self.state = state if state is not None else initial_state(config)
        self.sink: EventSink = sink if sink is not None else NullSink()
        self._now = self.econ.day_start_minute
        self._toolkits: dict[str, Any] = {}
        self._reindex()

    def restore(self, state: WorldState, now: int) -> None:
        """Replace the state with a checkpointed one (a resumed run)."""
        self.state = state
        self._now = now
        self._reindex()

    # ---------------------------------------------------------------- indexes
    def _reindex(self) -> None:
        """Indexes of the open records (derived from the state, never serialised)."""
        s = self.state
        self.open_listings = {k: v for k, v in s.listings.items() if v.status == "open"}
        self.pending_offers = {k: v for k, v in s.offers.items() if v.status == "pending"}
        self.open_deals = {k: v for k, v in s.deals.items() if v.status in ("pending", "delayed")}
        self.open_invoices = {k: v for k, v in s.invoices.items() if v.status == "open"}

    def add_listing(self, listing: Listing) -> None:
        self.state.listings[listing.id] = self.open_listings[listing.id] = listing

    def close_listing(self, listing: Listing, status: str) -> None:
        listing.status = status  # type: ignore[assignment]
        self.open_listings.pop(listing.id, None)

    def add_offer(self, offer: Offer) -> None:
        self.state.offers[offer.id] = self.pending_offers[offer.id] = offer

    def resolve_offer(self, offer: Offer, status: str) -> None:
        offer.status = status  # type: ignore[assignment]
        offer.resolved_day = self.day
        self.pending_offers.pop(offer.id, None)

    def add_deal(self, deal: Deal) -> None:
        self.state.deals[deal.id] = self.open_deals[deal.id] = deal

    def close_deal(self, deal: Deal, status: str) -> None:
        deal.status = status  # type: ignore[assignment]
        self.open_deals.pop(deal.id, None)

    def add_invoice(self, invoice: Invoice) -> None:
        self.state.invoices[invoice.id] = self.open_invoices[invoice.id] = invoice

    def settle_invoice(self, invoice: Invoice, status: str) -> None:
        invoice.status = status  # type: ignore[assignment]
        invoice.settled_day = self.day
        self.open_invoices.pop(invoice.id, None)

    # ----------------------------------------------------------------- basics
    @property
    def day(self) -> int:
        return self.state.day

    @property
    def now(self) -> int:
        """The minute of the action being applied (or of the phase being run)."""
        return self._now

    def firm(self, firm_id: str) -> Firm:
        return self.state.firms[firm_id]

    def live_firms(self) -> list[Firm]:
        return [f for f in self.state.firms.values() if not f.bankrupt]

    def next_id(self, kind: str, prefix: str) -> str:
        value = getattr(self.state.counters, kind) + 1
        setattr(self.state.counters, kind, value)
        return f"{prefix}{value}"

    def emit(self, type_: str, **data: Any) -> None:
        self.state.counters.event += 1
        event = {"seq": self.state.counters.event, "day": self.day, "time": hhmm(self._now)}
        event["type"] = type_
        event.update(data)
        self.sink.write(event)

    def emit_at(self, minute: int, type_: str, **data: Any) -> None:
        """Log an event stamped with ``minute`` (an agent's own clock) instead of the
        minute of the action being applied."""
        now, self._now = self._now, minute
        try:
            self.emit(type_, **data)
        finally:
            self._now = now

    def toolkit(self, firm_id: str) -> Any:
        kit = self._toolkits.get(firm_id)
        if kit is None:
            from econbench.coffee.toolkit import toolkit_for

            kit = self._toolkits[firm_id] = toolkit_for(self, firm_id)
        return kit

    # ------------------------------------------------------------- inventory
    def add_stock(
        self, firm: Firm, item: str, qty: int, value: Cents, why: str, lot: str | None = None
    ) -> Cents:
        """Stock in at a given cost, written down first to the lower of that cost and the
        item's ceiling — per receipt, before it is averaged into the pool (docs/coffeebench.md §8).
        ``lot`` names a delivered purchase that may later be returned. Returns the value booked."""
        ceiling = to_cents(self.econ.writedown_ceiling[item] * qty)
        if value > ceiling:
            excess = value - ceiling
            value = ceiling
            firm.books.writedowns += excess
            self.emit(
                "writedown",
                firm=firm.id,
                item=item,
                qty=qty,
                amount=dollars(excess),
                cause=why,
                ceiling_per_kg=self.econ.writedown_ceiling[item],
            )
        stock = firm.stock[item]
        stock.qty += qty
        stock.value += value
        if lot is not None:
            lots.add_lot(stock, lot, qty)
        return value

    def remove_stock(self, firm: Firm, item: str, qty: int) -> Cents:
        """Stock out at weighted-average cost; returns the cost removed. Every outflow takes
        its proportional share of each returnable lot."""
        stock = firm.stock[item]
        value = stock.take_value(qty)
        lots.deplete(stock, qty)
        stock.qty -= qty
        stock.value -= value
        if stock.qty == 0:
            stock.value = 0
        return value

    def reserve(self, firm: Firm, item: str, qty: int) -> tuple[Cents, float]:
        """Take goods out of stock for a deal: their cost, and the spoilage fraction they
        carry with them."""
        stock = firm.stock[item]
        stock.traded = True
        carry = spoilage.carry_share(stock, qty)
        return self.remove_stock(firm, item, qty), carry

    def inbound(self, firm_id: str) -> dict[str, int]:
        """kg on their way to this firm: own pending batches and undelivered purchases."""
        out = dict.fromkeys(ITEMS, 0)
        for batch in self.state.batches.values():
            if batch.firm == firm_id:
                out[batch.item] += batch.qty
        for deal in self.open_deals.values():
            if deal.buyer == firm_id:
                out[deal.item] += deal.shipped_qty
        return out

    def committed_holdings(self, firm_id: str) -> int:
        firm = self.firm(firm_id)
        return sum(s.qty for s in firm.stock.values()) + sum(self.inbound(firm_id).values())

    def cap_headroom(self, firm_id: str) -> int:
        return self.firm(firm_id).inventory_cap - self.committed_holdings(firm_id)

    # -------------------------------------------------------------- balances
    def receivables(self, firm_id: str) -> list[Invoice]:
        return [i for i in self.open_invoices.values() if i.issuer == firm_id]

    def payables(self, firm_id: str) -> list[Invoice]:
        return [i for i in self.open_invoices.values() if i.payer == firm_id]

    def balance_sheet(self, firm_id: str) -> dict[str, Cents]:
        firm = self.firm(firm_id)
        on_hand = sum(s.value for s in firm.stock.values())
        in_transit = sum(d.reserved_value for d in self.open_deals.values() if d.seller == firm_id)
        wip = sum(b.value for b in self.state.batches.values() if b.firm == firm_id)
        ar = sum(i.outstanding for i in self.receivables(firm_id))
        ap = sum(i.outstanding for i in self.payables(firm_id))
        if firm.bankrupt:
            # Its creditors wrote these off; the debts are uncollectible, not forgiven.
            ap += sum(
                i.outstanding
                for i in self.state.invoices.values()
                if i.payer == firm_id and i.status == "bad_debt"
            )
        equity = firm.cash + ar + on_hand + in_transit + wip - ap
        return {
            "cash": firm.cash,
            "ar": ar,
            "inventory": on_hand,
            "in_transit": in_transit,
            "work_in_process": wip,
            "ap": ap,
            "equity": equity,
        }

    # ------------------------------------------------------------ wakes/time
    def wake(self, firm_id: str, reason: str) -> None:
        """Wake a parked agent now (after the current action), or queue the reason
        (docs/coffeebench.md §3)."""
        firm = self.firm(firm_id)
        if firm.bankrupt:
            return
        clock = firm.clock
        clock.reasons.append(reason)
        if clock.parked and self.state.phase == "business":
            clock.parked = False
            clock.minute = max(clock.minute, self._now + self.econ.minutes_per_tool)
            clock.needs_observation = True

    def can_act(self, firm: Firm) -> bool:
        return (
            not firm.bankrupt
            and not firm.clock.parked
            and firm.clock.minute + self.econ.minutes_per_tool <= self.econ.day_end_minute
        )

    def act(self, firm_id: str, call: ToolCall | None) -> dict[str, Any]:
        """Apply one decision of an agent: a tool call, or ``None`` (no call = wait)."""
        firm = self.firm(firm_id)
        if not self.can_act(firm):
            raise RuntimeError(f"{firm_id} cannot act now (parked, out of time or bankrupt)")
        self._now = firm.clock.minute
        if call is None:
            self._park(firm)
            result = {"status": "success", "note": "no tool call: treated as wait_for_next_day"}
            self.emit("tool_call", firm=firm_id, tool=None, arguments={}, result=result)
            return result
        name = call.name if isinstance(call.name, str) else repr(call.name)
        kit = self.toolkit(firm_id)
        result = kit.call(name, call.arguments)
        if name in kit.tool_specs():
            firm.tool_calls[name] = firm.tool_calls.get(name, 0) + 1
        else:
            firm.unknown_tool_calls += 1
        if name == WAIT_TOOL and result["status"] == "success":
            self._park(firm)
        else:
            firm.clock.minute += self.econ.minutes_per_tool
            firm.clock.actions_today += 1
            firm.clock.acted_today = True
        self.emit(
            "tool_call", firm=firm_id, tool=name, arguments=loggable(call.arguments), result=result
        )
        return result

    def _park(self, firm: Firm) -> None:
        firm.clock.parked = True

    def observation_due(self, firm_id: str) -> bool:
        return self.firm(firm_id).clock.needs_observation

    # ---------------------------------------------------------------- morning
    def start_day(self) -> None:
        """09:00: opex, bankruptcies, landings, shipments, then every live firm wakes."""
        econ = self.econ
        self._now = econ.day_start_minute
        self.state.phase = "morning"
        for firm in self.live_firms():
            firm.books_by_day.append(firm.books.model_copy())
            firm.cash -= firm.opex_per_day
            firm.books.opex_fixed += firm.opex_per_day
            self.emit("opex", firm=firm.id, amount=dollars(firm.opex_per_day))
        for firm in self.live_firms():
            if firm.cash < 0:
                self.bankrupt(firm)
        self._land_batches()
        self._process_shipments()
        for firm in self.live_firms():
            firm.produced_today = {}
            firm.roasted_today_kg = 0
            clock = firm.clock
            clock.minute = econ.day_start_minute
            clock.parked = False
            clock.needs_observation = True
            clock.actions_today = 0
            clock.acted_today = False
            clock.reasons.insert(0, "morning")
        self.state.phase = "business"

    def _land_batches(self) -> None:
        for batch in sorted(self.state.batches.values(), key=lambda b: int(b.id[1:])):
            if batch.ready_day > self.day:
                continue
            del self.state.batches[batch.id]
            firm = self.firm(batch.firm)
            self.add_stock(firm, batch.item, batch.qty, batch.value, why=batch.kind)
            self.emit(
                f"{batch.kind}_landed",
                firm=firm.id,
                batch_id=batch.id,
                item=batch.item,
                qty=batch.qty,
            )
            what = "production batch" if batch.kind == "production" else "roast batch"
            firm.clock.reasons.append(f"{what} {batch.id} arrived: {batch.qty} kg {batch.item}")

    def _process_shipments(self) -> None:
        econ = self.econ
        due = [d for d in self.open_deals.values() if d.ship_day <= self.day]
        for deal in sorted(due, key=lambda d: d.seq):
            outcome = shipping_outcome(self.state.seed, deal.seq, self.day, econ)
            seller, buyer = self.firm(deal.seller), self.firm(deal.buyer)
            if outcome == "lost":
                self.close_deal(deal, "lost")
                seller.books.shipment_writeoffs += deal.reserved_value
                self.emit(
                    "shipment_lost",
                    deal_id=deal.id,
                    seller=deal.seller,
                    buyer=deal.buyer,
                    item=deal.item,
                    qty=deal.shipped_qty,
                    writeoff=dollars(deal.reserved_value),
                )
                note = (
                    f"shipment of deal {deal.id} ({deal.shipped_qty} kg {deal.item}) was lost "
                    "in transit"
                )
                for firm in (seller, buyer):
                    firm.notices.append(
                        note + (": no invoice will be issued" if firm is buyer else "")
                    )
                    firm.clock.reasons.append(f"deal {deal.id} lost in transit")
            elif outcome == "delayed":
                deal.status = "delayed"
                deal.ship_day = self.day + 1
                self.emit(
                    "shipment_delayed",
                    deal_id=deal.id,
                    seller=deal.seller,
                    buyer=deal.buyer,
                    item=deal.item,
                    qty=deal.shipped_qty,
                    new_delivery_day=deal.ship_day,
                )
                buyer.notices.append(f"delivery of deal {deal.id} is delayed by a day")
            else:
                self._deliver(deal, seller, buyer)

    def _deliver(self, deal: Deal, seller: Firm, buyer: Firm) -> None:
        qty = deal.shipped_qty
        amount = qty * deal.price
        self.close_deal(deal, "delivered")
        deal.delivered_day = self.day
        if qty <= 0:  # everything spoiled on the road: nothing to deliver or invoice
            seller.books.spoilage += deal.reserved_value
            deal.reserved_value = 0
            self.emit(
                "delivery",
                deal_id=deal.id,
                seller=seller.id,
                buyer=buyer.id,
                item=deal.item,
                qty=0,
                price=dollars(deal.price),
            )
            return
        invoice = Invoice(
            id=self.next_id("invoice", "INV"),
            deal_id=deal.id,
            issuer=seller.id,
            payer=buyer.id,
            item=deal.item,
            qty=qty,
            price=deal.price,
            principal=amount,
            issue_day=self.day,
            due_day=self.day + deal.terms,
        )
        self.add_invoice(invoice)
        deal.invoice_id = invoice.id
        seller.books.revenue += amount
        seller.books.cogs += deal.reserved_value
        self.emit(
            "delivery",
            deal_id=deal.id,
            seller=seller.id,
            buyer=buyer.id,
            item=deal.item,
            qty=qty,
            price=dollars(deal.price),
        )
        self.emit(
            "invoice",
            invoice_id=invoice.id,
            issuer=seller.id,
            payer=buyer.id,
            amount=dollars(amount),
            due_day=invoice.due_day,
        )
        buyer.stock[deal.item].spoil_carry += deal.spoil_carry
        buyer.stock[deal.item].traded = True
        deal.spoil_carry = 0.0
        booked = self.add_stock(buyer, deal.item, qty, amount, why="purchase", lot=deal.id)
        deal.booked_unit = booked // qty
        deal.buyer_writedown = amount - booked
        buyer.clock.reasons.append(f"delivery of deal {deal.id}: {qty} kg {deal.item}")

    # -------------------------------------------------------------- evening
    def end_day(self) -> list[dict[str, Any]]:
        """19:00: consumer sales, spoilage, late fees, snapshot; returns the daily rows."""
        self._now = self.econ.day_end_minute
        self.state.phase = "evening"
        for firm in self.live_firms():
            firm.clock.parked = True
        self._consumer_sales()
        spoilage.apply(self)
        self._late_fees()
        self._expire_lots()
        focal = self.firm(FOCAL_FIRM)
        if focal.bankrupt or self.day + 1 >= self.config.days:
            closing.close(self)
        rows = [self.snapshot(firm) for firm in self.state.firms.values()]
        for firm in self.live_firms():
            if not firm.clock.acted_today:
                firm.idle_days += 1
        self.emit("day_end", focal_net_income=dollars(focal.books.net_income))
        if focal.bankrupt:
            self.state.ended = True
        self.state.day += 1
        self.state.phase = "morning"
        return rows

    def _consumer_sales(self) -> None:
        econ = self.econ
        lo, hi = econ.festival_days
        factor = econ.festival_factor if lo <= self.day <= hi else 1.0
        retailers = [f for f in self.live_firms() if f.role == "retailer"]
        for item in RETAIL_ITEMS:
            demand = econ.demand[item]
            shops = [
                Shop(
                    f.id,
                    dollars(f.retail_prices.get(item, 0)),
                    f.stock[item].qty,
                    self.state.hidden.loyalty[f.id],
                )
                for f in retailers
            ]
            noise = self.state.hidden.demand_noise[item]
            sales = shop_sales(
                shops,
                base_demand=demand.base_demand,
                reservation_price=demand.reservation_price,
                festival_factor=factor,
                noise=noise[self.day] if self.day < len(noise) else 0.0,
                floor_kg=demand.floor_kg,
                cap_per_80=econ.demand_cap_per_80,
            )
            for firm in retailers:
                qty = sales.get(firm.id, 0)
                if qty <= 0:
                    continue
                price = firm.retail_prices[item]
                revenue = qty * price
                cost = self.remove_stock(firm, item, qty)
                firm.cash += revenue
                firm.books.revenue += revenue
                firm.books.cogs += cost
                self.state.consumer_sales.append(
                    ConsumerSale(day=self.day, firm=firm.id, item=item, qty=qty, price=price)
                )
                self.emit(
                    "consumer_sale",
                    firm=firm.id,
                    item=item,
                    qty=qty,
                    price=dollars(price),
                    revenue=dollars(revenue),
                )

    def _expire_lots(self) -> None:
        """Purchases whose return window has closed are no longer tracked as lots."""
        window = self.econ.return_window_days
        returnable = {
            d.id
            for d in self.state.deals.values()
            if d.status == "delivered"
            and d.delivered_day is not None
            and self.day + 1 - d.delivered_day <= window
        }
        for firm in self.state.firms.values():
            for stock in firm.stock.values():
                if stock.lots:
                    lots.expire(stock, returnable)

    def _late_fees(self) -> None:
        rate = self.econ.late_fee_rate
        for invoice in list(self.open_invoices.values()):
            if self.day <= invoice.due_day:
                continue
            issuer, payer = self.firm(invoice.issuer), self.firm(invoice.payer)
            if issuer.bankrupt or payer.bankrupt:
                continue
            fee = round(invoice.outstanding_principal * rate)
            if fee <= 0:
                continue
            invoice.fees += fee
            issuer.books.interest_income += fee
            payer.books.interest_expense += fee
            self.emit(
                "late_fee",
                invoice_id=invoice.id,
                issuer=issuer.id,
                payer=payer.id,
                amount=dollars(fee),
            )

    def snapshot(self, firm: Firm) -> dict[str, Any]:
        sheet = self.balance_sheet(firm.id)
        return {
            "day": self.day,
            "firm": firm.id,
            "cash": dollars(sheet["cash"]),
            "inventory": {
                item: {"qty": s.qty, "value": dollars(s.value)} for item, s in firm.stock.items()
            },
            "inventory_value": dollars(sheet["inventory"]),
            "in_transit_value": dollars(sheet["in_transit"]),
            "work_in_process_value": dollars(sheet["work_in_process"]),
            "ar": dollars(sheet["ar"]),
            "ap": dollars(sheet["ap"]),
            "equity": dollars(sheet["equity"]),
            "revenue_cum": dollars(firm.books.net_revenue),
            "net_income_cum": dollars(firm.books.net_income),
            "closing_adjustment": dollars(-firm.books.closing),
            "bankrupt": firm.bankrupt,
        }

    # ------------------------------------------------------------ bankruptcy
    def bankrupt(self, firm: Firm) -> None:
        """Remove a firm with negative cash from the market (docs/coffeebench.md §9)."""
        firm.bankrupt = True
        firm.bankrupt_day = self.day
        firm.clock.parked = True
        for listing in list(self.open_listings.values()):
            if listing.seller == firm.id:
                self.close_listing(listing, "closed")
        for offer in list(self.pending_offers.values()):
            if firm.id in (offer.buyer, offer.seller):
                self.resolve_offer(offer, "rejected")
        for deal in list(self.open_deals.values()):
            if firm.id in (deal.buyer, deal.seller):
                self.cancel_deal(deal, reason=f"{firm.id} went bankrupt")
        for batch in [b for b in self.state.batches.values() if b.firm == firm.id]:
            del self.state.batches[batch.id]
            firm.books.production_writeoffs += batch.value
            self.emit(
                "batch_written_off",
                firm=firm.id,
                batch_id=batch.id,
                kind=batch.kind,
                item=batch.item,
                qty=batch.qty,
                value=dollars(batch.value),
            )
        bad_debts: dict[str, Cents] = {}
        for invoice in self.payables(firm.id):
            creditor = self.firm(invoice.issuer)
            amount = invoice.outstanding
            self.settle_invoice(invoice, "bad_debt")
            creditor.books.bad_debt += amount
            bad_debts[creditor.id] = bad_debts.get(creditor.id, 0) + amount
            self.emit(
                "bad_debt",
                invoice_id=invoice.id,
                creditor=creditor.id,
                debtor=firm.id,
                amount=dollars(amount),
            )
        self.emit(
            "bankruptcy",
            firm=firm.id,
            cash=dollars(firm.cash),
            bad_debt={k: dollars(v) for k, v in bad_debts.items()},
        )
        for other in self.live_firms():
            other.notices.append(f"{firm.id} went bankrupt on day {self.day} and left the market")

    def cancel_deal(self, deal: Deal, reason: str) -> None:
        self.close_deal(deal, "cancelled")
        seller = self.firm(deal.seller)
        seller.stock[deal.item].spoil_carry += deal.spoil_carry
        seller.stock[deal.item].traded = True
        deal.spoil_carry = 0.0
        if deal.shipped_qty > 0:
            self.add_stock(
                seller, deal.item, deal.shipped_qty, deal.reserved_value, why="cancelled deal"
            )
        self.emit(
            "deal_cancelled",
            deal_id=deal.id,
            seller=deal.seller,
            buyer=deal.buyer,
            item=deal.item,
            qty=deal.shipped_qty,
            reason=reason,
        )
        for party in (deal.seller, deal.buyer):
            self.firm(party).notices.append(f"deal {deal.id} was cancelled: {reason}")

    # ------------------------------------------------------------ production
    def new_batch(
        self, firm: Firm, kind: str, item: str, qty: int, value: Cents, lag: int
    ) -> Batch:
        batch = Batch(
            id=self.next_id("batch", "B"),
            firm=firm.id,
            kind=kind,  # type: ignore[arg-type]
            item=item,
            qty=qty,
            value=value,
            ready_day=self.day + lag,
        )
        self.state.batches[batch.id] = batch
        return batch

    # ----------------------------------------------------------- observation
    def observe(self, firm_id: str) -> dict[str, Any]:
        """The wake-up observation of docs/coffeebench.md §10, as data; consumes the queued
        reasons."""
        firm = self.firm(firm_id)
        clock = firm.clock
        reasons, clock.reasons = clock.reasons, []
        notices, firm.notices = firm.notices, []
        clock.needs_observation = False
        sheet = self.balance_sheet(firm_id)
        inbound = self.inbound(firm_id)
        receivables, payables = self.receivables(firm_id), self.payables(firm_id)
        new_deals = []
        for deal in reversed(self.state.deals.values()):
            if deal.seq <= firm.seen_deal_seq:
                break
            if firm_id in (deal.buyer, deal.seller):
                new_deals.append(deal)
        new_deals.reverse()
        firm.seen_deal_seq = self.state.counters.deal
        unread: dict[str, int] = {}
        for msg in self.state.messages.values():
            if msg.recipient == firm_id and not msg.read:
                unread[msg.sender] = unread.get(msg.sender, 0) + 1
        obs: dict[str, Any] = {
            "day": self.day,
            "time": hhmm(clock.minute),
            "days_total": self.config.days,
            "firm": firm_id,
            "role": firm.role,
            "wake_reasons": reasons,
            "cash": dollars(firm.cash),
            "inventory_value": dollars(sheet["inventory"]),
            "receivables": {
                "total": dollars(sheet["ar"]),
                "open": len(receivables),
                "overdue": sum(1 for i in receivables if self.day > i.due_day),
            },
            "payables": {
                "total": dollars(sheet["ap"]),
                "open": len(payables),
                "overdue": sum(1 for i in payables if self.day > i.due_day),
            },
            "stock": {
                item: {
                    "on_hand": s.qty,
                    "inbound": inbound[item],
                    "avg_cost": round(s.unit_cost() / 100, 2),
                }
                for item, s in firm.stock.items()
            },
            "capacity": {
                "cap": firm.inventory_cap,
                "committed": self.committed_holdings(firm_id),
                "headroom": self.cap_headroom(firm_id),
            },
            "actions_left_today": max(
                0, (self.econ.day_end_minute - clock.minute) // self.econ.minutes_per_tool
            ),
            "my_open_listings": [
                self.listing_view(lst)
                for lst in self.open_listings.values()
                if lst.seller == firm_id
            ],
            "offers_in": [
                self.offer_view(o) for o in self.pending_offers.values() if o.seller == firm_id
            ],
            "offers_out": [
                self.offer_view(o) for o in self.pending_offers.values() if o.buyer == firm_id
            ],
            "new_deals": [self.deal_view(d, firm_id) for d in new_deals],
            "unread_messages": unread,
            "notices": notices,
            "bankrupt_firms": [f.id for f in self.state.firms.values() if f.bankrupt],
        }
        if firm.role == "retailer":
            obs["retail_prices"] = {i: dollars(p) for i, p in firm.retail_prices.items()}
            obs["yesterday_sales"] = {
                item: {"qty": s.qty, "price": dollars(s.price), "revenue": dollars(s.qty * s.price)}
                for s in self.state.consumer_sales
                if s.firm == firm_id and s.day == self.day - 1
                for item in [s.item]
            }
        elif firm.role == "roaster":
            obs["pending_roasts"] = self.batch_views(firm_id)
            obs["roast_capacity_left_kg"] = self.econ.roast_daily_cap_kg - firm.roasted_today_kg
        else:
            obs["pending_production"] = self.batch_views(firm_id)
            obs["production_left_today"] = {
                item: self.econ.production[item].daily_cap - firm.produced_today.get(item, 0)
                for item in GREEN_ITEMS
            }
        return obs

    # -------------------------------------------------------- public views
    def listing_view(self, lst: Any) -> dict[str, Any]:
        return {
            "listing_id": lst.id,
            "seller": lst.seller,
            "item_id": lst.item,
            "qty": lst.qty,
            "asking_price": dollars(lst.price),
            "payment_terms_days": lst.terms,
            "posted_day": lst.day,
            "delivery_eta": f"day {self.day + self.econ.shipping_days} 09:00 if accepted today",
        }

    def offer_view(self, o: Any) -> dict[str, Any]:
        return {
            "offer_id": o.id,
            "listing_id": o.listing_id,
            "buyer": o.buyer,
            "seller": o.seller,
            "item_id": o.item,
            "qty": o.qty,
            "offered_price": dollars(o.price),
            "payment_terms_days": o.terms,
            "message": o.message,
            "day": o.day,
            "status": o.status,
        }

    def deal_view(self, d: Deal, firm_id: str) -> dict[str, Any]:
        view = {
            "deal_id": d.id,
            "role": "seller" if d.seller == firm_id else "buyer",
            "counterparty": d.buyer if d.seller == firm_id else d.seller,
            "item_id": d.item,
            "qty": d.qty,
            "price": dollars(d.price),
            "payment_terms_days": d.terms,
            "deal_day": d.day,
            "status": d.status,
            "expected_delivery_day": d.ship_day if d.status in ("pending", "delayed") else None,
            "delivered_day": d.delivered_day,
            "invoice_id": d.invoice_id,
            "returned_qty": d.returned_qty,
            "spoiled_in_transit_kg": d.spoiled_qty,
        }
        return view

    def batch_views(self, firm_id: str) -> list[dict[str, Any]]:
        return [
            {"batch_id": b.id, "item_id": b.item, "qty": b.qty, "ready_day": b.ready_day}
            for b in self.state.batches.values()
            if b.firm == firm_id
        ]


__all__ = ["Books", "World", "hhmm", "initial_state"]
