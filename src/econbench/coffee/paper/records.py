"""The paper's records: the reference's ``typings.py`` dataclasses, field for field.

Field names, order and defaults are the reference's because models see them:
``dataclasses.asdict(deal)`` is what ``view_deals`` returns, so the key order of a
result is the field order here (``Deal._reserved_seller_cogs`` included).
"""

from dataclasses import dataclass, field


@dataclass
class Item:
    """A traded good (as the reference's ``typings.Item``).

    ``retail_reservation_price`` set marks a consumer-facing item;
    ``produced_by_role`` set makes it producible with ``produce_item``.
    """

    id: str
    name: str
    description: str = ""
    retail_reservation_price: float | None = None
    consumer_demand_base: float | None = None
    consumer_demand_floor: float | None = None
    delivery_lag_days: int = 1
    produced_by_role: str | None = None
    production_cost_per_unit: float = 0.0
    daily_production_cap: int = 0
    production_lag_days: int = 0


@dataclass
class Listing:
    """A public listing (as the reference's ``typings.Listing``); ``posted_at`` is in
    minutes since the start of the run."""

    id: str
    seller_id: str
    item_id: str
    qty: int
    asking_price: float
    payment_terms_days: int
    posted_at: int
    status: str = "open"


@dataclass
class Offer:
    """A bid on a listing (as the reference's ``typings.Offer``)."""

    id: str
    listing_id: str
    buyer_id: str
    seller_id: str
    offered_price: float
    qty: int
    payment_terms_days: int
    posted_at: int
    message: str | None = None
    status: str = "pending"


@dataclass
class Deal:
    """One accepted transaction (as the reference's ``typings.Deal``).

    ``_reserved_seller_cogs`` is a real field (the seller's cost of the goods, fixed at
    acceptance), so ``asdict`` shows it to the model as the reference does.
    """

    id: str
    listing_id: str
    offer_id: str
    seller_id: str
    buyer_id: str
    item_id: str
    qty: int
    unit_price: float
    total_price: float
    payment_terms_days: int
    deal_at: int
    delivery_at: int
    invoice_id: str
    notes: str | None = None
    returned_qty: int = 0
    _reserved_seller_cogs: float = 0.0


@dataclass
class Message:
    """A private message between two agents (as the reference's ``typings.Message``)."""

    id: str
    sender_id: str
    recipient_id: str
    title: str
    body: str
    sent_at: int
    ref_listing_id: str | None = None
    ref_offer_id: str | None = None
    ref_deal_id: str | None = None


@dataclass
class AgentEndowment:
    """One agent's starting position (as the reference's ``typings.AgentEndowment``)."""

    agent_id: str
    display_name: str
    role: str
    persona: str
    initial_cash: float
    initial_inventory: dict[str, int] = field(default_factory=dict)
    initial_cost_basis: dict[str, float] = field(default_factory=dict)
    initial_retail_prices: dict[str, float] = field(default_factory=dict)


@dataclass
class Invoice:
    """A bill on both sides' books (as the reference's ``typings.Invoice``): the issuer's
    receivable, the payer's payable."""

    id: str
    issuer: str
    payer: str
    amount: float
    issue_date: int
    due_date: int
    reference: str | None = None
    paid: bool = False
    paid_date: int | None = None
    credited_amount: float = 0.0
    last_return_date: int | None = None
    returned: bool = False
    returned_date: int | None = None
    late_fees_accrued: float = 0.0
    bad_debt: bool = False
    bad_debt_date: int | None = None

    @property
    def net_outstanding(self) -> float:
        """What the payer still owes: nothing once paid, returned or written off, else
        principal plus late fees less credits, floored at zero (the reference's)."""
        if self.paid or self.returned or self.bad_debt:
            return 0.0
        return max(0.0, self.amount + self.late_fees_accrued - self.credited_amount)


@dataclass
class JournalEntry:
    """One truth-ledger entry (as the reference's ``typings.JournalEntry``); ``amount`` is
    never negative, the direction is in ``entry_type``."""

    id: str
    day: int
    trader_id: str
    entry_type: str
    amount: float
    counterparty: str | None = None
    item: str | None = None
    quantity: int | None = None
    memo: str | None = None
    reference: str | None = None
