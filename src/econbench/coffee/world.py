"""The CoffeeBench world: a deterministic state machine over ``WorldState``.

The world runs the day (docs/coffeebench.md §3): the morning and evening phases apply the
hooks of its list of rules in order (``RULES`` in ``coffee/rules/__init__.py``: opex and the
ledger, bankruptcy, production, shipping, consumer sales, spoilage, late fees, lots, the
closing valuation), and between them the agents act, each on its own clock, only through the
tools the rules declare (assembled by ``toolkit.py``) via ``World.act``. The world keeps the
indexes of open records, the stock primitives every rule books through, and the clocks and
wakes. It knows nothing about models.

Randomness: demand noise and loyalty are drawn once at creation from their own named
streams and stored in the (hidden) state; each shipping roll comes from a generator keyed by
(seed, stream, deal, day) (``rules/shipping.py``), so a roll never depends on how many other
draws happened and a resumed run needs no generator state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from econbench.agents.tools import ToolCall
from econbench.coffee import events, observation
from econbench.coffee.config import (
    FIRMS,
    FOCAL_FIRM,
    ITEMS,
    RETAIL_ITEMS,
    EconomyConfig,
    WorldConfig,
    role_of,
)
from econbench.coffee.events import EventSink, NullSink
from econbench.coffee.observation import hhmm
from econbench.coffee.rules import RULES, Rule, bankruptcy, ledger, lots, shipping, spoilage
from econbench.coffee.rules.shipping import STREAM_SHIPPING, shipping_outcome
from econbench.coffee.state import (
    Books,
    Cents,
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

WAIT_TOOL = "wait_for_next_day"


def initial_state(config: WorldConfig) -> WorldState:
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
    import numpy as np  # imported where the economy draws, not when the CLI starts

    loyalty_rng = np.random.default_rng([config.seed, STREAM_LOYALTY])
    lo, hi = econ.loyalty_range
    loyalty = {
        firm_id: loyalty_rng.uniform(lo, hi) for firm_id in FIRMS if role_of(firm_id) == "retailer"
    }
    demand_rng = np.random.default_rng([config.seed, STREAM_DEMAND])
    noise = {
        item: demand_rng.normal(0.0, econ.demand_noise_sd, config.days).tolist()
        for item in RETAIL_ITEMS
    }
    return WorldState(
        seed=config.seed, firms=firms, hidden=Hidden(loyalty=loyalty, demand_noise=noise)
    )


class World:
    """Mechanics and bookkeeping over a ``WorldState``; see the module docstring."""

    def __init__(
        self,
        config: WorldConfig,
        state: WorldState | None = None,
        sink: EventSink | None = None,
        rules: Sequence[Rule] = RULES,
    ) -> None:
        self.config = config
        self.rules = tuple(rules)
        self._morning = [r.morning for r in self.rules if r.morning is not None]
        self._evening = [r.evening for r in self.rules if r.evening is not None]
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
        """Indexes of the open records (derived from the state, never serialised), and of
        each firm's offers, deals and open invoices, each in the order of the state's own
        collection (the order a scan of it would give)."""
        s = self.state
        self._firms: dict[str, Firm] = s.firms
        """``state.firms`` itself (the dict is never replaced, only the whole state is): a
        read of a state model's field takes pydantic's slow attribute path, and this one is
        read on every action."""
        self.open_listings = {k: v for k, v in s.listings.items() if v.status == "open"}
        self.pending_offers = {k: v for k, v in s.offers.items() if v.status == "pending"}
        self.open_deals = {k: v for k, v in s.deals.items() if v.status in ("pending", "delayed")}
        self.open_invoices = {k: v for k, v in s.invoices.items() if v.status == "open"}
        self._offers: dict[str, dict[str, list[Offer]]] = {
            direction: {f: [] for f in s.firms} for direction in ("all", "incoming", "outgoing")
        }
        for offer in s.offers.values():
            self._index_offer(offer)
        self._deals: dict[str, list[Deal]] = {f: [] for f in s.firms}
        for deal in s.deals.values():
            self._index_deal(deal)
        self._receivables: dict[str, dict[str, Invoice]] = {f: {} for f in s.firms}
        self._payables: dict[str, dict[str, Invoice]] = {f: {} for f in s.firms}
        for invoice in self.open_invoices.values():
            self._index_invoice(invoice)

    def _index_offer(self, offer: Offer) -> None:
        index = self._offers
        index["outgoing"].setdefault(offer.buyer, []).append(offer)
        index["incoming"].setdefault(offer.seller, []).append(offer)
        index["all"].setdefault(offer.buyer, []).append(offer)
        if offer.seller != offer.buyer:
            index["all"].setdefault(offer.seller, []).append(offer)

    def _index_deal(self, deal: Deal) -> None:
        self._deals.setdefault(deal.buyer, []).append(deal)
        if deal.seller != deal.buyer:
            self._deals.setdefault(deal.seller, []).append(deal)

    def _index_invoice(self, invoice: Invoice) -> None:
        self._receivables.setdefault(invoice.issuer, {})[invoice.id] = invoice
        self._payables.setdefault(invoice.payer, {})[invoice.id] = invoice

    def add_listing(self, listing: Listing) -> None:
        self.state.listings[listing.id] = self.open_listings[listing.id] = listing

    def close_listing(self, listing: Listing, status: str) -> None:
        listing.status = status  # type: ignore[assignment]
        self.open_listings.pop(listing.id, None)

    def add_offer(self, offer: Offer) -> None:
        self.state.offers[offer.id] = self.pending_offers[offer.id] = offer
        self._index_offer(offer)

    def resolve_offer(self, offer: Offer, status: str) -> None:
        offer.status = status  # type: ignore[assignment]
        offer.resolved_day = self.day
        self.pending_offers.pop(offer.id, None)

    def add_deal(self, deal: Deal) -> None:
        self.state.deals[deal.id] = self.open_deals[deal.id] = deal
        self._index_deal(deal)

    def close_deal(self, deal: Deal, status: str) -> None:
        deal.status = status  # type: ignore[assignment]
        self.open_deals.pop(deal.id, None)

    def add_invoice(self, invoice: Invoice) -> None:
        self.state.invoices[invoice.id] = self.open_invoices[invoice.id] = invoice
        self._index_invoice(invoice)

    def settle_invoice(self, invoice: Invoice, status: str) -> None:
        invoice.status = status  # type: ignore[assignment]
        invoice.settled_day = self.day
        self.open_invoices.pop(invoice.id, None)
        self._receivables.get(invoice.issuer, {}).pop(invoice.id, None)
        self._payables.get(invoice.payer, {}).pop(invoice.id, None)

    # ----------------------------------------------------------------- basics
    @property
    def day(self) -> int:
        return self.state.day

    @property
    def now(self) -> int:
        """The minute of the action being applied (or of the phase being run)."""
        return self._now

    def firm(self, firm_id: str) -> Firm:
        return self._firms[firm_id]

    def live_firms(self) -> list[Firm]:
        return [f for f in self._firms.values() if not f.bankrupt]

    def next_id(self, kind: str, prefix: str) -> str:
        value = getattr(self.state.counters, kind) + 1
        setattr(self.state.counters, kind, value)
        return f"{prefix}{value}"

    def log(self, event: events.Event) -> None:
        """Append ``event`` to the log: the header (seq, day, time, type), then its payload."""
        self._write(event.TYPE, event.payload())

    def _write(self, type_: str, payload: dict[str, Any]) -> None:
        state = self.state
        counters = state.counters
        seq = counters.event + 1
        counters.event = seq
        line = {"seq": seq, "day": state.day, "time": hhmm(self._now), "type": type_}
        line.update(payload)
        self.sink.write(line)

    def log_at(self, minute: int, event: events.Event) -> None:
        """Log ``event`` stamped with ``minute`` (an agent's own clock) instead of the
        minute of the action being applied."""
        now, self._now = self._now, minute
        try:
            self.log(event)
        finally:
            self._now = now

    def emit(self, type_: str, **data: Any) -> None:
        """Log a payload that is not checked against its definition (the type must be in the
        catalogue). Only for a deliberately malformed line, as a test of a half-written log
        needs; everything else goes through ``log``."""
        if type_ not in events.EVENT_TYPES:
            raise KeyError(f"event type {type_!r} is not in the catalogue (coffee/events.py)")
        self._write(type_, data)

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
        value = ledger.write_down_to_ceiling(self, firm, item, qty, value, why)
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

    def committed_holdings(self, firm_id: str, inbound: dict[str, int] | None = None) -> int:
        """kg on hand and inbound (``inbound``: the firm's ``inbound()``, if the caller has it)."""
        firm = self.firm(firm_id)
        if inbound is None:
            inbound = self.inbound(firm_id)
        return sum([s.qty for s in firm.stock.values()]) + sum(inbound.values())

    def cap_headroom(self, firm_id: str) -> int:
        return self.firm(firm_id).inventory_cap - self.committed_holdings(firm_id)

    # -------------------------------------------------------------- balances
    def offers_of(self, firm_id: str, direction: str = "all") -> list[Offer]:
        """The offers ``firm_id`` received ("incoming"), made ("outgoing") or both ("all"),
        in the order of ``state.offers`` (the world's own list: do not change it)."""
        return self._offers[direction].get(firm_id, [])

    def deals_of(self, firm_id: str) -> list[Deal]:
        """The deals ``firm_id`` is a party to, in the order of ``state.deals`` (the world's
        own list: do not change it)."""
        return self._deals.get(firm_id, [])

    def receivables(self, firm_id: str) -> list[Invoice]:
        """The open invoices ``firm_id`` issued, in the order of ``open_invoices``."""
        return list(self._receivables.get(firm_id, {}).values())

    def payables(self, firm_id: str) -> list[Invoice]:
        """The open invoices ``firm_id`` owes, in the order of ``open_invoices``."""
        return list(self._payables.get(firm_id, {}).values())

    def balance_sheet(self, firm_id: str) -> dict[str, Cents]:
        return ledger.balance_sheet(self, firm_id)

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
        """Live, awake, and with time left today for one more tool call."""
        if firm.bankrupt:
            return False
        clock = firm.clock
        econ = self.econ
        return not clock.parked and clock.minute + econ.minutes_per_tool <= econ.day_end_minute

    def ready_firms(self) -> list[Firm]:
        """The firms that can act now, in the state's order."""
        return [firm for firm in self._firms.values() if self.can_act(firm)]

    def act(self, firm_id: str, call: ToolCall | None) -> dict[str, Any]:
        """Apply one decision of an agent: a tool call, or ``None`` (no call = wait)."""
        firm = self._firms[firm_id]
        if not self.can_act(firm):
            raise RuntimeError(f"{firm_id} cannot act now (parked, out of time or bankrupt)")
        clock = firm.clock
        self._now = clock.minute
        if call is None:
            self._park(firm)
            result = {"status": "success", "note": "no tool call: treated as wait_for_next_day"}
            self.log(events.ToolCallApplied(firm=firm_id, tool=None, arguments={}, result=result))
            return result
        name = call.name if isinstance(call.name, str) else repr(call.name)
        kit = self.toolkit(firm_id)
        result = kit.call(name, call.arguments)
        if name in kit.tool_specs():
            counts = firm.tool_calls
            counts[name] = counts.get(name, 0) + 1
        else:
            firm.unknown_tool_calls += 1
        if name == WAIT_TOOL and result["status"] == "success":
            self._park(firm)
        else:
            clock.minute += self.econ.minutes_per_tool
            clock.actions_today += 1
            if not clock.acted_today:  # a read is cheaper than an assignment of the same value
                clock.acted_today = True
        # The arguments as the agent sent them: the log's writer makes them strict JSON.
        self.log(
            events.ToolCallApplied(firm=firm_id, tool=name, arguments=call.arguments, result=result)
        )
        return result

    def _park(self, firm: Firm) -> None:
        firm.clock.parked = True

    def observation_due(self, firm_id: str) -> bool:
        return self._firms[firm_id].clock.needs_observation

    # ---------------------------------------------------------------- morning
    def start_day(self) -> None:
        """09:00: the rules' morning hooks in order (opex, bankruptcies, landings, shipments,
        and last the clock's: every live firm's day opens)."""
        self._now = self.econ.day_start_minute
        self.state.phase = "morning"
        for hook in self._morning:
            hook(self)
        self.state.phase = "business"

    # -------------------------------------------------------------- evening
    def end_day(self) -> list[dict[str, Any]]:
        """19:00: the firms are parked, the rules' evening hooks run in order (consumer sales,
        spoilage, late fees, lots, the closing on the last day, idle days), then the snapshot;
        returns the daily rows."""
        self._now = self.econ.day_end_minute
        self.state.phase = "evening"
        for firm in self.live_firms():
            firm.clock.parked = True
        for hook in self._evening:
            hook(self)
        focal = self.firm(FOCAL_FIRM)
        rows = [self.snapshot(firm) for firm in self.state.firms.values()]
        self.log(events.DayEnd(focal_net_income=dollars(focal.books.net_income)))
        if focal.bankrupt:
            self.state.ended = True
        self.state.day += 1
        self.state.phase = "morning"
        return rows

    def snapshot(self, firm: Firm) -> dict[str, Any]:
        """A firm's daily row, in dollars."""
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

    # ------------------------------------------------ rules tools call by name
    def bankrupt(self, firm: Firm) -> None:
        """Remove a firm with negative cash from the market (docs/coffeebench.md §9)."""
        bankruptcy.bankrupt(self, firm)

    def cancel_deal(self, deal: Deal, reason: str) -> None:
        shipping.cancel(self, deal, reason)

    def observe(self, firm_id: str) -> dict[str, Any]:
        """The wake-up observation of docs/coffeebench.md §10 (``coffee/observation.py``)."""
        return observation.observe(self, firm_id)


__all__ = ["STREAM_SHIPPING", "Books", "World", "hhmm", "initial_state", "shipping_outcome"]
