"""The paper's shared marketplace: the reference's ``marketplace.py``.

Listings, offers, deals and messages, with every check in the reference's order and every
message in its words (they are tool results the model reads). Differences that no model
sees: no lock (the economy applies tool calls one at a time, as the reference's dispatcher
does under its lock), ids from the shared ``IdSource``, and the set of read messages kept
as lists (JSON-able). The economy wires ``business_apps``, ``on_deal_accepted`` (its
``_on_deal_accepted``) and ``_env`` (itself), as the reference's ``Environment`` does.
"""

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from econbench.coffee.paper.clock import (
    BUSINESS_HOURS_START,
    MINUTES_PER_DAY,
    TimeManager,
    format_min,
)
from econbench.coffee.paper.ids import IdSource
from econbench.coffee.paper.records import Deal, Invoice, Item, Listing, Message, Offer

if TYPE_CHECKING:
    from econbench.coffee.paper.books import FirmBooks


def economy_constant(env: Any, name: str) -> Any:
    """The run's value of one of the reference's ``environment`` constants
    (``FARMER_DELIVERY_EXTRA_DAYS``, ``ROLE_INVENTORY_CAP_KG``, ``RETURN_WINDOW_DAYS``,
    ``ROAST_DAILY_CAP_GREEN_KG``, ``ROAST_RECIPES``).

    The reference imports them from ``environment`` at each use, so a run's config
    overrides (which rebind the module's names) apply; likewise here: the economy's own
    attribute of that name when it has one, else ``paper.economy``'s module constant, read
    now (imported here, not at the top: the economy imports this module's users)."""
    if env is not None and hasattr(env, name):
        return getattr(env, name)
    from econbench.coffee.paper import economy

    return getattr(economy, name)


class Marketplace:
    """As the reference's ``Marketplace``. ``business_apps`` maps agent ids to their
    ``FirmBooks``; ``on_deal_accepted`` and ``_env`` are set when the economy wires the run."""

    def __init__(self, time_manager: TimeManager, ids: IdSource) -> None:
        self.time_manager = time_manager
        self.ids = ids
        self.items: dict[str, Item] = {}
        self.listings: list[Listing] = []
        self.offers: list[Offer] = []
        self.deals: list[Deal] = []
        self.messages: list[Message] = []
        self._read_message_ids: dict[str, list[str]] = {}
        self.business_apps: dict[str, FirmBooks] = {}
        self.on_deal_accepted: Callable[[Deal], Invoice] | None = None
        self._env: Any = None

    def _short_id(self) -> str:
        """``str(uuid.uuid4())[:8]`` of the reference, from the shared source."""
        return str(self.ids.uuid4())[:8]

    def register_item(self, item: Item) -> None:
        self.items[item.id] = item

    def get_item(self, item_id: str) -> Item | None:
        return self.items.get(item_id)

    def post_listing(
        self,
        seller_id: str,
        item_id: str,
        qty: int,
        asking_price: float,
        payment_terms_days: int,
    ) -> Listing:
        """As the reference's ``Marketplace.post_listing`` (no checks: the books made them)."""
        listing = Listing(
            id="lst_" + self._short_id(),
            seller_id=seller_id,
            item_id=item_id,
            qty=int(qty),
            asking_price=float(asking_price),
            payment_terms_days=int(payment_terms_days),
            posted_at=self.time_manager.get_virtual_min(),
        )
        self.listings.append(listing)
        return listing

    def make_offer(
        self,
        listing_id: str,
        buyer_id: str,
        offered_price: float,
        qty: int,
        payment_terms_days: int,
        message: str | None = None,
    ) -> tuple[Offer | None, str]:
        """As the reference's ``Marketplace.make_offer``: the offer, or None and why."""
        listing = next((lt for lt in self.listings if lt.id == listing_id), None)
        if listing is None:
            return None, f"Listing {listing_id} not found."
        if listing.status != "open":
            return None, f"Listing {listing_id} is {listing.status}."
        if buyer_id == listing.seller_id:
            return None, "Cannot offer on your own listing."
        if int(qty) <= 0 or int(qty) > listing.qty:
            return None, f"Offer qty must be 1..{listing.qty}."
        offer = Offer(
            id="off_" + self._short_id(),
            listing_id=listing_id,
            buyer_id=buyer_id,
            seller_id=listing.seller_id,
            offered_price=float(offered_price),
            qty=int(qty),
            payment_terms_days=int(payment_terms_days),
            posted_at=self.time_manager.get_virtual_min(),
            message=message,
        )
        self.offers.append(offer)
        return offer, "ok"

    def withdraw_offer(self, offer_id: str, by_buyer_id: str) -> tuple[bool, str]:
        """As the reference's ``Marketplace.withdraw_offer``."""
        offer = next((o for o in self.offers if o.id == offer_id), None)
        if offer is None:
            return False, f"Offer {offer_id} not found."
        if offer.buyer_id != by_buyer_id:
            return False, "Only the buyer can withdraw this offer."
        if offer.status != "pending":
            return False, f"Offer is already {offer.status}."
        offer.status = "withdrawn"
        return True, "Offer withdrawn."

    def accept_offer(self, offer_id: str, by_seller_id: str) -> tuple[Deal | None, str]:
        """As the reference's ``Marketplace.accept_offer``: checks in its order, the deal id
        drawn before the ``on_deal_accepted`` hook (which draws the invoice's),
        the listing closed and its other pending offers rejected first."""
        offer = next((o for o in self.offers if o.id == offer_id), None)
        if offer is None:
            return None, f"Offer {offer_id} not found."
        if offer.seller_id != by_seller_id:
            return None, "Only the seller can accept this offer."
        if offer.status != "pending":
            return None, f"Offer is already {offer.status}."
        listing = next((lt for lt in self.listings if lt.id == offer.listing_id), None)
        if listing is None or listing.status != "open":
            return None, "Listing is no longer open."
        if offer.qty > listing.qty:
            return (
                None,
                f"Offer qty {offer.qty} exceeds remaining listing qty {listing.qty}.",
            )

        seller = self.business_apps.get(offer.seller_id)
        buyer = self.business_apps.get(offer.buyer_id)
        if seller is None or buyer is None:
            return None, "Internal: counterparty BusinessApp not registered."

        today = self.time_manager.get_current_day()
        now_at = self.time_manager.get_virtual_min()
        item_def = self.items.get(listing.item_id)
        if seller.inventory.get(listing.item_id, 0) < offer.qty:
            return (
                None,
                f"Seller no longer holds enough of {listing.item_id} to fulfill.",
            )
        buyer_cap = buyer._inventory_cap_kg()
        buyer_on_hand = buyer._total_inventory_kg()
        buyer_pending = buyer._pending_inbound_kg()
        buyer_effective = buyer_on_hand + buyer_pending
        if buyer_effective + offer.qty > buyer_cap:
            return None, (
                f"Buyer {buyer.agent_id} would exceed inventory cap "
                f"{buyer_cap} kg (on-hand {buyer_on_hand} kg + "
                f"in-flight {buyer_pending} kg; deal adds {offer.qty} kg)."
            )
        lag = max(0, int(getattr(item_def, "delivery_lag_days", 1) if item_def else 1))
        if seller is not None and seller.role == "farmer":
            lag += economy_constant(self._env, "FARMER_DELIVERY_EXTRA_DAYS")
        delivery_day = today + lag
        delivery_at = delivery_day * MINUTES_PER_DAY + BUSINESS_HOURS_START
        total = round(offer.offered_price * offer.qty, 2)

        deal = Deal(
            id="dl_" + self._short_id(),
            listing_id=listing.id,
            offer_id=offer.id,
            seller_id=offer.seller_id,
            buyer_id=offer.buyer_id,
            item_id=listing.item_id,
            qty=offer.qty,
            unit_price=offer.offered_price,
            total_price=total,
            payment_terms_days=offer.payment_terms_days,
            deal_at=now_at,
            delivery_at=delivery_at,
            invoice_id="",
            notes=None,
        )

        offer.status = "accepted"
        listing.qty -= offer.qty
        if listing.qty <= 0:
            listing.status = "closed"
            for o in self.offers:
                if o.listing_id == listing.id and o.status == "pending" and o.id != offer.id:
                    o.status = "rejected"

        if self.on_deal_accepted is None:
            return None, "Internal: marketplace.on_deal_accepted not wired."
        invoice = self.on_deal_accepted(deal)
        deal.invoice_id = invoice.id
        self.deals.append(deal)
        return deal, "ok"

    def post_message(
        self,
        sender_id: str,
        recipient_id: str,
        title: str,
        body: str,
        ref_listing_id: str | None = None,
        ref_offer_id: str | None = None,
        ref_deal_id: str | None = None,
    ) -> Message:
        """As the reference's ``Marketplace.post_message`` (no wake here: the books ask)."""
        msg = Message(
            id="msg_" + self._short_id(),
            sender_id=sender_id,
            recipient_id=recipient_id,
            title=title,
            body=body,
            sent_at=self.time_manager.get_virtual_min(),
            ref_listing_id=ref_listing_id,
            ref_offer_id=ref_offer_id,
            ref_deal_id=ref_deal_id,
        )
        self.messages.append(msg)
        return msg

    def messages_visible_to(self, agent_id: str, since_day: int | None = None) -> list[Message]:
        """As the reference's ``Marketplace.messages_visible_to``: sent or received, in the
        order sent, from ``since_day`` on."""
        out: list[Message] = []
        for m in self.messages:
            if since_day is not None and (m.sent_at // MINUTES_PER_DAY) < since_day:
                continue
            if m.sender_id != agent_id and m.recipient_id != agent_id:
                continue
            out.append(m)
        return out

    def mark_message_read(self, agent_id: str, message_id: str) -> None:
        """As the reference's ``Marketplace.mark_message_read`` (idempotent)."""
        read = self._read_message_ids.setdefault(agent_id, [])
        if message_id not in read:
            read.append(message_id)

    def is_message_read(self, agent_id: str, message_id: str) -> bool:
        return message_id in self._read_message_ids.get(agent_id, [])

    def unread_messages_for(self, agent_id: str) -> list[Message]:
        """As the reference's ``Marketplace.unread_messages_for``: received and not yet read
        with ``read_message``, oldest first."""
        read = set(self._read_message_ids.get(agent_id, []))
        return [m for m in self.messages if m.recipient_id == agent_id and m.id not in read]

    def listings_dump(self) -> list[dict[str, Any]]:
        """As the reference's ``Marketplace.listings_dump``: open listings with the posting
        day and time and the delivery lead time a buyer would get."""
        out: list[dict[str, Any]] = []
        for lt in self.listings:
            if lt.status != "open":
                continue
            d = asdict(lt)
            d["posted_day"] = lt.posted_at // 1440
            d["posted"] = format_min(lt.posted_at)
            item = self.items.get(lt.item_id)
            base_lag = max(0, int(item.delivery_lag_days)) if item is not None else 1
            seller = self.business_apps.get(lt.seller_id)
            extra = (
                economy_constant(self._env, "FARMER_DELIVERY_EXTRA_DAYS")
                if (seller is not None and seller.role == "farmer")
                else 0
            )
            eta = base_lag + extra
            d["delivery_eta_days"] = eta
            if extra:
                d["delivery_eta_note"] = f"{base_lag} (base) + {extra} (farmer ships from origin)"
            else:
                d["delivery_eta_note"] = f"{base_lag} (base)"
            out.append(d)
        return out

    def offers_for(self, agent_id: str, direction: str = "all") -> list[dict[str, Any]]:
        """As the reference's ``Marketplace.offers_for``: ``incoming`` (on your listings),
        ``outgoing`` (yours) or ``all``; any other direction gives nothing."""
        out: list[Offer] = []
        for o in self.offers:
            incoming = direction in ("incoming", "all") and o.seller_id == agent_id
            if incoming or (direction in ("outgoing", "all") and o.buyer_id == agent_id):
                out.append(o)
        rows: list[dict[str, Any]] = []
        for o in out:
            d = asdict(o)
            d["posted_day"] = o.posted_at // 1440
            d["posted"] = format_min(o.posted_at)
            rows.append(d)
        return rows
