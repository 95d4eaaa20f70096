"""The world's state as plain data: pydantic models that round-trip through JSON.

Money is held in integer cents so that the ledger adds up exactly (net income equals the
change in equity to the cent); tools and logs speak dollars. Quantities are whole kg.
Ids are deterministic counters (``L1``, ``O1``, ``D1``, ``INV1``, ``M1``, ``B1``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

Cents = int


class StateModel(BaseModel):
    """A model of the state. Reading a field of one is slower than reading a plain
    attribute (``BaseModel`` defines ``__getattr__``, so Python cannot specialise the read):
    hot code reads a field once into a local, and a view that shows many fields of a record
    reads them from ``vars(record)`` (its ``__dict__``: the fields, by name)."""


def to_cents(dollars: float) -> Cents:
    return round(dollars * 100)


def dollars(cents: Cents) -> float:
    return cents / 100


class Stock(StateModel):
    """On-hand stock of one item at weighted-average cost; spoilage fractions carry over."""

    qty: int = 0
    value: Cents = 0
    spoil_carry: float = 0.0
    traded: bool = False
    """Goods of this stock changed hands by deal (its spoilage fraction counts at the close)."""
    lots: dict[str, float] = Field(default_factory=dict)
    """Per delivered purchase still returnable (deal id), the kg of it still in this pool.

    Stock is pooled at average cost, so every outflow takes the same share of every lot
    (``rules/lots.py``); a return may take back only the kg its own deal still has here.
    """

    def unit_cost(self) -> float:
        return self.value / self.qty if self.qty else 0.0

    def take_value(self, qty: int) -> Cents:
        """The cost of ``qty`` kg at average cost (the whole value when taking everything)."""
        if qty >= self.qty:
            return self.value
        return round(self.value * qty / self.qty)


class Books(StateModel):
    """Cumulative income-statement buckets in cents, from day 0."""

    revenue: Cents = 0
    returns: Cents = 0
    cogs: Cents = 0
    opex_fixed: Cents = 0
    spoilage: Cents = 0
    shipment_writeoffs: Cents = 0
    production_writeoffs: Cents = 0
    bad_debt: Cents = 0
    writedowns: Cents = 0
    interest_expense: Cents = 0
    interest_income: Cents = 0
    closing_writedown: Cents = 0
    """At the run's close: stock still held, written down to the economy's cost of making it."""
    closing_opex: Cents = 0
    """At the run's close: fixed opex of the horizon days the firm did not pay (bankrupt, or
    the run ended early), so leaving the market never saves fixed costs."""

    @property
    def opex(self) -> Cents:
        return (
            self.opex_fixed
            + self.spoilage
            + self.shipment_writeoffs
            + self.production_writeoffs
            + self.bad_debt
            + self.writedowns
        )

    @property
    def net_revenue(self) -> Cents:
        return self.revenue - self.returns

    @property
    def closing(self) -> Cents:
        return self.closing_writedown + self.closing_opex

    @property
    def net_income_before_closing(self) -> Cents:
        return (
            self.net_revenue - self.cogs - self.opex - self.interest_expense + self.interest_income
        )

    @property
    def net_income(self) -> Cents:
        """The score: the one income-statement formula, closing lines included."""
        return self.net_income_before_closing - self.closing

    def minus(self, start: Books | None) -> Books:
        """The period's sums: these books less the books at the period's start."""
        if start is None:
            return self.model_copy()
        return Books(**{k: getattr(self, k) - getattr(start, k) for k in type(self).model_fields})


class Clock(StateModel):
    """An agent's own clock for the current day, and what woke it."""

    minute: int = 0
    parked: bool = True
    needs_observation: bool = False
    reasons: list[str] = Field(default_factory=list)
    actions_today: int = 0
    acted_today: bool = False


class Firm(StateModel):
    id: str
    role: Literal["farmer", "roaster", "retailer"]
    cash: Cents
    stock: dict[str, Stock]
    inventory_cap: int
    opex_per_day: Cents
    retail_prices: dict[str, Cents] = Field(default_factory=dict)
    books: Books = Field(default_factory=Books)
    books_by_day: list[Books] = Field(default_factory=list)
    """The books as they stood at the start of each day (for period reports)."""
    produced_today: dict[str, int] = Field(default_factory=dict)
    roasted_today_kg: int = 0
    bankrupt: bool = False
    bankrupt_day: int | None = None
    clock: Clock = Field(default_factory=Clock)
    seen_deal_seq: int = 0
    """Deals with a sequence number above this are news for the next observation."""
    notices: list[str] = Field(default_factory=list)
    """Facts for the next observation: losses, cancellations, bankruptcies of others."""
    tool_calls: dict[str, int] = Field(default_factory=dict)
    idle_days: int = 0
    messages_read: int = 0
    spoiled_kg: dict[str, int] = Field(default_factory=dict)
    roasted_green_kg: int = 0
    roasted_green_by_item: dict[str, int] = Field(default_factory=dict)
    """Cumulative green kg roasted per green item: output rounds on the running total, so
    splitting a roast into small lots never beats the yield (``rules/roasting.py``)."""
    unknown_tool_calls: int = 0
    """Calls of tool names the firm does not have (counted apart from ``tool_calls``)."""


class Listing(StateModel):
    id: str
    seller: str
    item: str
    qty: int
    price: Cents
    terms: int
    day: int
    minute: int
    status: Literal["open", "sold_out", "closed"] = "open"


class Offer(StateModel):
    id: str
    listing_id: str
    buyer: str
    seller: str
    item: str
    qty: int
    price: Cents
    terms: int
    message: str = ""
    day: int
    minute: int
    status: Literal["pending", "accepted", "rejected", "withdrawn"] = "pending"
    resolved_day: int | None = None


class Deal(StateModel):
    id: str
    seq: int
    offer_id: str
    listing_id: str
    seller: str
    buyer: str
    item: str
    qty: int
    price: Cents
    terms: int
    day: int
    minute: int
    reserved_value: Cents
    """The seller's cost of the goods (never shown to the buyer)."""
    ship_day: int
    status: Literal["pending", "delayed", "delivered", "lost", "cancelled"] = "pending"
    delivered_day: int | None = None
    invoice_id: str | None = None
    returned_qty: int = 0
    returned_value: Cents = 0
    spoiled_qty: int = 0
    """kg that spoiled in transit (goods in transit spoil like goods on hand)."""
    spoil_carry: float = 0.0
    """The fraction of a kg of spoilage these goods carry (taken from the seller's stock,
    handed to the buyer's on delivery)."""
    booked_unit: Cents = 0
    """What the buyer booked per kg on delivery: the price, or the ceiling if lower."""
    buyer_writedown: Cents = 0
    """The write-down the buyer booked on delivery (price above the ceiling); a return
    reverses the returned kg's share of it and never more."""

    @property
    def shipped_qty(self) -> int:
        """kg still on their way (or delivered): the deal's kg less what spoiled in transit."""
        return self.qty - self.spoiled_qty


class Invoice(StateModel):
    id: str
    kind: Literal["sale", "refund"] = "sale"
    deal_id: str | None = None
    issuer: str
    """The creditor: the seller for a sale, the buyer for a refund of a paid return."""
    payer: str
    item: str | None = None
    qty: int = 0
    price: Cents = 0
    principal: Cents
    credits: Cents = 0
    fees: Cents = 0
    issue_day: int
    due_day: int
    status: Literal["open", "paid", "closed", "bad_debt"] = "open"
    settled_day: int | None = None

    @property
    def outstanding_principal(self) -> Cents:
        return self.principal - self.credits

    @property
    def outstanding(self) -> Cents:
        return self.principal + self.fees - self.credits


def total_outstanding(invoices: Iterable[Invoice]) -> Cents:
    """The sum of ``Invoice.outstanding`` over ``invoices``."""
    return sum(i.outstanding for i in invoices)


class Message(StateModel):
    id: str
    sender: str
    recipient: str
    title: str
    body: str
    day: int
    minute: int
    read: bool = False
    ref_listing_id: str | None = None
    ref_offer_id: str | None = None


class Batch(StateModel):
    """Pending production or roast output: paid for, not yet in stock."""

    id: str
    firm: str
    kind: Literal["production", "roast"]
    item: str
    qty: int
    value: Cents
    ready_day: int


class ConsumerSale(StateModel):
    day: int
    firm: str
    item: str
    qty: int
    price: Cents


class Counters(StateModel):
    listing: int = 0
    offer: int = 0
    deal: int = 0
    invoice: int = 0
    message: int = 0
    batch: int = 0
    event: int = 0


class Hidden(StateModel):
    """Draws made once per run that no tool may reveal."""

    loyalty: dict[str, float]
    demand_noise: dict[str, list[float]]


class WorldState(StateModel):
    seed: int
    day: int = 0
    phase: Literal["morning", "business", "evening", "closed"] = "morning"
    firms: dict[str, Firm]
    listings: dict[str, Listing] = Field(default_factory=dict)
    offers: dict[str, Offer] = Field(default_factory=dict)
    deals: dict[str, Deal] = Field(default_factory=dict)
    invoices: dict[str, Invoice] = Field(default_factory=dict)
    messages: dict[str, Message] = Field(default_factory=dict)
    batches: dict[str, Batch] = Field(default_factory=dict)
    consumer_sales: list[ConsumerSale] = Field(default_factory=list)
    counters: Counters = Field(default_factory=Counters)
    hidden: Hidden
    ended: bool = False
    closed: bool = False
    """The closing valuation has been booked (at the end of the run's last evening)."""
