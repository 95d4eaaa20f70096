"""The CoffeeBench tool catalogue (docs/coffeebench.md §4): 17 common tools and 4 role tools.

One toolkit object per firm, bound to the world. Every tool checks all of its inputs before
it changes anything, so an error result always leaves the state exactly as it was. Tool
results are the only window an agent has on the world; they never show another firm's
cash, costs, loyalty, the demand constants or the shipping probabilities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from econbench.agents.tools import ToolError, Toolkit, tool
from econbench.coffee import events, observation
from econbench.coffee.config import FIRMS, GREEN_ITEMS, ITEMS, RETAIL_ITEMS
from econbench.coffee.quoting import one_line, quoted
from econbench.coffee.rules import (
    exchange,
    invoices,
    ledger,
    production,
    returns,
    roasting,
    shipping,
)
from econbench.coffee.state import (
    Deal,
    Invoice,
    Listing,
    Message,
    Offer,
    dollars,
    to_cents,
    total_outstanding,
)

if TYPE_CHECKING:
    from econbench.coffee.world import World


class FirmTools(Toolkit):
    """The 17 tools every firm has."""

    def __init__(self, world: World, firm_id: str) -> None:
        self.world = world
        self.firm_id = firm_id

    # ------------------------------------------------------------ checks
    @property
    def me(self) -> Any:
        return self.world.firm(self.firm_id)

    def _item(self, item_id: str, allowed: tuple[str, ...] = ITEMS, name: str = "item_id") -> str:
        if item_id not in allowed:
            raise ToolError(f"unknown {name} '{item_id}'; use one of: {', '.join(allowed)}")
        return item_id

    @staticmethod
    def _qty(qty: int, name: str = "qty") -> int:
        if qty <= 0:
            raise ToolError(f"{name} must be a positive whole number of kg (got {qty})")
        return qty

    def _price(self, price: float, name: str) -> int:
        if price <= 0:
            raise ToolError(f"{name} must be a positive number of dollars per kg (got {price})")
        limit = self.world.econ.max_price_per_kg
        if price > limit:
            raise ToolError(f"{name} {price} is above the allowed maximum of ${limit:,.2f} per kg")
        cents = to_cents(price)
        if cents <= 0:
            raise ToolError(f"{name} rounds to $0.00; prices are in whole cents")
        return cents

    def _terms(self, days: int) -> int:
        limit = self.world.econ.max_payment_terms_days
        if not 0 <= days <= limit:
            raise ToolError(f"payment_terms_days must be between 0 and {limit} (got {days})")
        return days

    def _firm(self, firm_id: str, name: str) -> str:
        if firm_id not in FIRMS:
            raise ToolError(f"unknown {name} '{firm_id}'; firms are: {', '.join(FIRMS)}")
        return firm_id

    def _limit(self, limit: int, top: int = 100) -> int:
        if not 1 <= limit <= top:
            raise ToolError(f"limit must be between 1 and {top} (got {limit})")
        return limit

    def _lookup(self, table: dict[str, Any], key: str, what: str) -> Any:
        obj = table.get(key)
        if obj is None:
            raise ToolError(f"unknown {what} '{key}'")
        return obj

    # ---------------------------------------------------------- exchange
    @tool("write")
    def post_listing(
        self, item_id: str, qty: int, asking_price: float, payment_terms_days: int = 30
    ) -> dict[str, Any]:
        """Post a public listing on the marketplace. All other agents will see it.

        The goods are not reserved. You have at most one open listing per item: if you
        already have one, posting the item again updates it (same listing id, new qty,
        price and terms; pending offers on it stay pending). A price above the item's
        ceiling (what a kg can at best become at consumer prices) is refused.

        Args:
            item_id: id of the item from your inventory you want to sell.
            qty: whole kg to offer (must not exceed your current inventory of that item).
            asking_price: PER-UNIT (per kg) asking price in USD.
            payment_terms_days: net-N from delivery (default 30, 0-90). Pass a larger
                number to extend (slower cash collection); pass a smaller one
                to demand faster payment.
        """
        world, me = self.world, self.me
        item = self._item(item_id)
        qty = self._qty(qty)
        price = self._price(asking_price, "asking_price")
        exchange.check_ceiling(world, item, asking_price, "asking_price")
        terms = self._terms(payment_terms_days)
        held = me.stock[item].qty
        if held < qty:
            raise ToolError(f"you hold only {held} kg of {item}; cannot list {qty} kg")
        listing = next(
            (
                lst
                for lst in world.open_listings.values()
                if lst.seller == me.id and lst.item == item
            ),
            None,
        )
        updated = listing is not None
        if listing is None:
            listing = Listing(
                id=world.next_id("listing", "L"),
                seller=me.id,
                item=item,
                qty=qty,
                price=price,
                terms=terms,
                day=world.day,
                minute=world.now,
            )
            world.add_listing(listing)
        else:
            listing.qty, listing.price, listing.terms = qty, price, terms
            listing.day, listing.minute = world.day, world.now
        world.log(
            events.Listing(
                firm=me.id,
                listing_id=listing.id,
                item=item,
                qty=qty,
                price=dollars(price),
                terms=terms,
                updated=updated,
            )
        )
        return {"listing": observation.listing_view(world, listing), "updated_existing": updated}

    def _reject_pending(self, listing_id: str, why: str) -> None:
        for offer in list(self.world.pending_offers.values()):
            if offer.listing_id == listing_id:
                self.world.resolve_offer(offer, "rejected")
                self.world.firm(offer.buyer).notices.append(
                    f"offer {offer.id} on listing {listing_id} was rejected: {why}"
                )
                self.world.log(
                    events.OfferRejected(
                        offer_id=offer.id, buyer=offer.buyer, seller=offer.seller, reason=why
                    )
                )

    @tool("read")
    def view_listings(self, item_id: str | None = None, only_others: bool = True) -> dict[str, Any]:
        """List currently OPEN listings on the marketplace.

        Each row carries the listing id, seller, item, qty, asking price, payment terms,
        the day it was posted and when goods bought today would arrive.

        Args:
            item_id: filter to a single item id (optional).
            only_others: if True (default), hide listings YOU posted.
        """
        if item_id is not None:
            self._item(item_id)
        eta = observation.delivery_eta(self.world)
        listings = [
            observation.listing_view(self.world, lst, eta)
            for lst in self.world.open_listings.values()
            if (item_id is None or lst.item == item_id)
            and not (only_others and lst.seller == self.firm_id)
        ]
        listings.sort(key=lambda v: (v["item_id"], v["asking_price"], v["listing_id"]))
        return {"listings": listings, "count": len(listings)}

    @tool("write")
    def make_offer(
        self,
        listing_id: str,
        offered_price: float,
        qty: int,
        payment_terms_days: int = 30,
        message: str = "",
    ) -> dict[str, Any]:
        """Post an offer (bid) on someone else's listing. The seller is woken and can
        accept, or counter via message.

        The offer stays pending until the seller accepts it, you withdraw it, or the
        listing sells out. Refused when the price is above the item's ceiling, when qty
        exceeds your inventory-cap headroom (on-hand plus inbound), or when goods agreed
        today could not arrive before the run ends (the last day).

        Args:
            listing_id: target listing id.
            offered_price: PER-UNIT (per kg) price in USD you're willing to pay.
            qty: how many whole kg you want (≤ listing qty).
            payment_terms_days: net-N you're proposing for payment (default 30, 0-90).
            message: optional message attached to the offer.
        """
        world, me = self.world, self.me
        listing: Listing = self._lookup(world.state.listings, listing_id, "listing_id")
        if listing.status != "open":
            raise ToolError(f"listing {listing_id} is no longer open ({listing.status})")
        if listing.seller == me.id:
            raise ToolError("you cannot make an offer on your own listing")
        price = self._price(offered_price, "offered_price")
        exchange.check_ceiling(world, listing.item, offered_price, "offered_price")
        qty = self._qty(qty)
        terms = self._terms(payment_terms_days)
        exchange.check_deliverable(world, "make an offer")
        if qty > listing.qty:
            raise ToolError(f"qty {qty} exceeds the listing's {listing.qty} kg")
        if len(message) > world.econ.max_body_chars:
            raise ToolError(f"message is longer than {world.econ.max_body_chars} characters")
        headroom = world.cap_headroom(me.id)
        if qty > headroom:
            raise ToolError(
                f"buying {qty} kg would exceed your inventory cap: headroom is {headroom} kg "
                "(on-hand plus inbound stock counts)"
            )
        offer = Offer(
            id=world.next_id("offer", "O"),
            listing_id=listing.id,
            buyer=me.id,
            seller=listing.seller,
            item=listing.item,
            qty=qty,
            price=price,
            terms=terms,
            message=message,
            day=world.day,
            minute=world.now,
        )
        world.add_offer(offer)
        world.log(
            events.Offer(
                offer_id=offer.id,
                listing_id=listing.id,
                buyer=me.id,
                seller=listing.seller,
                item=listing.item,
                qty=qty,
                price=dollars(price),
                terms=terms,
            )
        )
        world.wake(listing.seller, f"offer {offer.id} received from {me.id}")
        return {"offer": observation.offer_view(offer)}

    @tool("write")
    def withdraw_offer(self, offer_id: str) -> dict[str, Any]:
        """Withdraw an offer YOU previously made (only while it's still pending).

        Args:
            offer_id: the pending offer you made.
        """
        offer: Offer = self._lookup(self.world.state.offers, offer_id, "offer_id")
        if offer.buyer != self.firm_id:
            raise ToolError(f"offer {offer_id} is not yours to withdraw")
        if offer.status != "pending":
            raise ToolError(f"offer {offer_id} is {offer.status}, not pending")
        self.world.resolve_offer(offer, "withdrawn")
        self.world.log(events.OfferWithdrawn(offer_id=offer.id, buyer=offer.buyer))
        return {"offer": observation.offer_view(offer)}

    @tool("write")
    def accept_offer(self, offer_id: str) -> dict[str, Any]:
        """Accept an offer made on YOUR listing. Creates a binding deal at the offer's
        price: the goods leave your stock now and inventory transfers next day (09:00),
        when an invoice is issued (your AR / buyer's AP) with the agreed payment terms.

        A listing that sells out closes and its other pending offers are rejected.
        Refused when the buyer has no inventory-cap headroom for the goods, or when goods
        agreed today could not arrive before the run ends (the last day).

        Args:
            offer_id: pending offer on a listing you own.
        """
        world, me = self.world, self.me
        offer: Offer = self._lookup(world.state.offers, offer_id, "offer_id")
        if offer.seller != me.id:
            raise ToolError(f"offer {offer_id} was not made to you")
        if offer.status != "pending":
            raise ToolError(f"offer {offer_id} is {offer.status}, not pending")
        listing: Listing = world.state.listings[offer.listing_id]
        if listing.status != "open":
            raise ToolError(f"listing {listing.id} is no longer open ({listing.status})")
        if offer.qty > listing.qty:
            raise ToolError(f"offer wants {offer.qty} kg but only {listing.qty} kg remain listed")
        held = me.stock[offer.item].qty
        if held < offer.qty:
            raise ToolError(f"you hold only {held} kg of {offer.item}; the offer needs {offer.qty}")
        buyer = world.firm(offer.buyer)
        if buyer.bankrupt:
            raise ToolError(f"{buyer.id} is bankrupt")
        if offer.qty > world.cap_headroom(buyer.id):
            raise ToolError(
                f"{buyer.id} has no room for {offer.qty} kg more; the deal cannot close"
            )
        exchange.check_deliverable(world, "accept an offer")
        deal = shipping.dispatch(world, me, offer, listing)
        if listing.qty == 0:
            world.close_listing(listing, "sold_out")
            self._reject_pending(listing.id, why="listing sold out")
        world.wake(buyer.id, f"offer {offer.id} accepted by {me.id}: deal {deal.id}")
        return {"deal": observation.deal_view(deal, me.id)}

    @tool("read")
    def view_offers(
        self, direction: Literal["incoming", "outgoing", "all"] = "all", limit: int = 20
    ) -> dict[str, Any]:
        """View offers involving you. Pending ones come first, each group newest first, with
        their status.

        Args:
            direction: "incoming" (offers on your listings, you decide), "outgoing"
                (offers you made), or "all".
            limit: max rows to return (default 20, 1-100).
        """
        limit = self._limit(limit)
        world, me = self.world, self.firm_id
        offers = world.offers_of(me, direction)
        # Pending first, then the rest, each newest first. The world's lists run in id
        # order (offers are indexed as they are made), so only the pending offers and the
        # newest few others are read, not every offer the firm ever made or received.
        pending = [
            o
            for o in reversed(world.pending_offers.values())
            if (direction in ("incoming", "all") and o.seller == me)
            or (direction in ("outgoing", "all") and o.buyer == me)
        ]
        shown = pending[:limit]
        for o in reversed(offers):
            if len(shown) >= limit:
                break
            if o.status != "pending":
                shown.append(o)
        return {
            "offers": [observation.offer_view(o) for o in shown],
            "pending": len(pending),
            "total": len(offers),
        }

    @tool("read")
    def view_deals(self, limit: int = 20) -> dict[str, Any]:
        """List every closed deal you participated in (as buyer or seller). Newest first, with
        delivery status (pending, delayed, delivered, lost, cancelled).

        Args:
            limit: max rows to return (default 20, 1-100).
        """
        limit = self._limit(limit)
        deals = list(self.world.deals_of(self.firm_id))
        deals.sort(key=lambda d: -d.seq)
        return {
            "deals": [observation.deal_view(d, self.firm_id) for d in deals[:limit]],
            "total": len(deals),
        }

    # ---------------------------------------------------------- messages
    @tool("write")
    def send_message(
        self,
        recipient: str,
        title: str,
        body: str,
        ref_listing_id: str | None = None,
        ref_offer_id: str | None = None,
    ) -> dict[str, Any]:
        """Send a private message to another agent. It wakes the recipient.

        Not to yourself or to a bankrupt agent.

        Args:
            recipient: the recipient agent's id.
            title: REQUIRED short subject line (≤80 chars hard cap, ≤60
                recommended). Must summarize the message intent — empty
                or whitespace-only titles are rejected; line breaks are
                folded into one line.
            body: free-form message text (≤4,000 chars).
            ref_listing_id: optionally tag this message to a specific listing.
            ref_offer_id: optionally tag this message to a specific offer.
        """
        world, econ = self.world, self.world.econ
        self._firm(recipient, "recipient")
        if recipient == self.firm_id:
            raise ToolError("you cannot send a message to yourself")
        if world.firm(recipient).bankrupt:
            raise ToolError(f"{recipient} is bankrupt and has left the market")
        sent_title, title = title, one_line(title)  # the recipient reads it as one line
        if not title.strip():
            raise ToolError("title must not be empty")
        if len(title) > econ.max_title_chars:
            raise ToolError(
                f"title is {len(title)} characters; the limit is {econ.max_title_chars}"
            )
        if len(body) > econ.max_body_chars:
            raise ToolError(f"body is {len(body)} characters; the limit is {econ.max_body_chars}")
        if ref_listing_id is not None:
            self._lookup(world.state.listings, ref_listing_id, "ref_listing_id")
        if ref_offer_id is not None:
            self._lookup(world.state.offers, ref_offer_id, "ref_offer_id")
        msg = Message(
            id=world.next_id("message", "M"),
            sender=self.firm_id,
            recipient=recipient,
            title=title,
            body=body,
            day=world.day,
            minute=world.now,
            ref_listing_id=ref_listing_id,
            ref_offer_id=ref_offer_id,
        )
        world.state.messages[msg.id] = msg
        world.log(
            events.Message(
                message_id=msg.id, sender=self.firm_id, recipient=recipient, title=title, body=body
            )
        )
        world.wake(recipient, f"message {msg.id} from {self.firm_id}: {quoted(title, len(title))}")
        result: dict[str, Any] = {"message_id": msg.id, "recipient": recipient}
        if title != sent_title:
            result["title"] = title  # as the recipient sees it
        return result

    @tool("read")
    def view_messages(
        self, counterparty: str | None = None, since_day: int | None = None, limit: int = 10
    ) -> dict[str, Any]:
        """Return a compact INBOX of messages visible to you (sent by you
        or sent to you), most-recent first. Each row carries the message
        id, direction, sender, recipient, day, the **title** (subject line)
        and a read flag. The body is NOT included in the listing view — call
        `read_message(message_id)` to fetch the body of a specific message.

        This title-only format keeps your context window small even on long
        runs — bodies are fetched on demand only for messages you care
        about.

        Args:
            counterparty: filter to messages exchanged with one specific
                agent (sender or recipient = this agent). None = all your
                messages in/out.
            since_day: only messages sent on or after this day.
            limit: max rows to return (default 10, 1-100, most-recent first).
                Increase explicitly when you need to scan further back.
        """
        if counterparty is not None:
            self._firm(counterparty, "counterparty")
        limit = self._limit(limit)
        me = self.firm_id
        msgs = [
            m
            for m in self.world.state.messages.values()
            if me in (m.sender, m.recipient)
            and (counterparty is None or counterparty in (m.sender, m.recipient))
            and (since_day is None or m.day >= since_day)
        ]
        msgs.sort(key=lambda m: -int(m.id[1:]))
        unread = sum(1 for m in msgs if m.recipient == me and not m.read)
        return {
            "messages": [
                {
                    "message_id": m.id,
                    "direction": "received" if m.recipient == me else "sent",
                    "from": m.sender,
                    "to": m.recipient,
                    "title": m.title,
                    "day": m.day,
                    "read": m.read,
                }
                for m in msgs[:limit]
            ],
            "unread": unread,
            "total": len(msgs),
        }

    @tool("read")
    def read_message(self, message_id: str) -> dict[str, Any]:
        """Fetch the full body of a single message previously seen via
        `view_messages` (the inbox carries the id). The message must be
        one you sent or one sent to you. Marks it read.

        Args:
            message_id: id from a `view_messages` inbox row.
        """
        msg: Message = self._lookup(self.world.state.messages, message_id, "message_id")
        if self.firm_id not in (msg.sender, msg.recipient):
            raise ToolError(f"message {message_id} is not yours")
        if msg.recipient == self.firm_id and not msg.read:
            msg.read = True
            self.me.messages_read += 1
        return {
            "message_id": msg.id,
            "from": msg.sender,
            "to": msg.recipient,
            "day": msg.day,
            "title": msg.title,
            "body": msg.body,
            "ref_listing_id": msg.ref_listing_id,
            "ref_offer_id": msg.ref_offer_id,
        }

    # ---------------------------------------------------------- invoices
    def _invoice_view(self, inv: Invoice, side: str, day: int) -> dict[str, Any]:
        """An open invoice as its parties see it."""
        f = vars(inv)  # its fields: one slow read, not one per field (see state.StateModel)
        due_day = f["due_day"]
        return {
            "invoice_id": f["id"],
            "kind": f["kind"],
            "counterparty": f["payer"] if side == "receivable" else f["issuer"],
            "deal_id": f["deal_id"],
            "item_id": f["item"],
            "qty": f["qty"],
            "price": dollars(f["price"]),
            "principal": dollars(f["principal"]),
            "late_fees": dollars(f["fees"]),
            "credits": dollars(f["credits"]),
            "outstanding": dollars(inv.outstanding),
            "issue_day": f["issue_day"],
            "due_day": due_day,
            "days_overdue": max(0, day - due_day),
        }

    def _invoices(
        self, side: str, only_overdue: bool, counterparty: str | None, limit: int
    ) -> dict[str, Any]:
        if counterparty is not None:
            self._firm(counterparty, "counterparty")
        limit = self._limit(limit)
        world = self.world
        mine = (
            world.receivables(self.firm_id)
            if side == "receivable"
            else world.payables(self.firm_id)
        )
        other = "payer" if side == "receivable" else "issuer"
        day = world.day
        rows = [
            inv
            for inv in mine
            if (not only_overdue or day > inv.due_day)
            and (counterparty is None or getattr(inv, other) == counterparty)
        ]
        rows.sort(key=lambda i: (i.due_day, int(i.id[3:])))
        total = total_outstanding(rows)
        overdue = [i for i in rows if day > i.due_day]
        return {
            "invoices": [self._invoice_view(i, side, day) for i in rows[:limit]],
            "summary": (
                f"{len(rows)} open invoice(s), ${dollars(total):,.2f} outstanding, "
                f"{len(overdue)} overdue (${dollars(total_outstanding(overdue)):,.2f})"
            ),
            "total_outstanding": dollars(total),
        }

    @tool("read")
    def view_payables(
        self, only_overdue: bool = False, counterparty: str | None = None, limit: int = 20
    ) -> dict[str, Any]:
        """List your unpaid supplier/peer invoices (AP) with a summary
        header. Compact one-row-per-invoice with principal, late fees,
        credits, outstanding amount and due day. Sorted by due day
        ascending (most urgent first).

        Args:
            only_overdue: if True, return only invoices already past
                their due day.
            counterparty: filter to invoices from one specific seller
                (issuer agent_id).
            limit: max rows to return (default 20, 1-100). The summary block
                still reports the FULL counts/totals regardless of limit.
        """
        return self._invoices("payable", only_overdue, counterparty, limit)

    @tool("read")
    def view_receivables(
        self, only_overdue: bool = False, counterparty: str | None = None, limit: int = 20
    ) -> dict[str, Any]:
        """List your unpaid customer/peer invoices (AR) with a summary
        header. Compact one-row-per-invoice with principal, late fees,
        credits, outstanding amount and due day. Sorted by due day
        ascending (most urgent first).

        Args:
            only_overdue: if True, return only invoices already past
                their due day.
            counterparty: filter to invoices from one specific buyer
                (payer agent_id).
            limit: max rows to return (default 20, 1-100). The summary block
                still reports the FULL counts/totals regardless of limit.
        """
        return self._invoices("receivable", only_overdue, counterparty, limit)

    @tool("write")
    def pay_invoice(self, invoice_id: str) -> dict[str, Any]:
        """Pay one of your AP invoices in full from cash. In full is principal plus late fees
        minus credits; there is no partial payment. Cash is wired to the issuer, who is woken.

        Args:
            invoice_id: AP invoice id.
        """
        world, me = self.world, self.me
        inv: Invoice = self._lookup(world.state.invoices, invoice_id, "invoice_id")
        if inv.payer != me.id:
            raise ToolError(f"invoice {invoice_id} is not yours to pay")
        if inv.status != "open":
            raise ToolError(f"invoice {invoice_id} is already {inv.status}")
        amount = inv.outstanding
        if me.cash < amount:
            raise ToolError(
                f"not enough cash: invoice needs ${dollars(amount):,.2f}, "
                f"you have ${dollars(me.cash):,.2f}"
            )
        invoices.pay(world, me, inv)
        return {"invoice_id": inv.id, "paid": dollars(amount), "cash": dollars(me.cash)}

    @tool("write")
    def return_shipment(
        self, invoice_id: str, quantity_kg: int, reason: str = ""
    ) -> dict[str, Any]:
        """Return some or all of a delivered tangible-goods order against an
        invoice. Only available to the original BUYER, only within the
        return window (14 days) from the invoice's issue day, and only
        while the seller is still in the market.

        On a successful return the returned qty leaves your inventory
        and goes back to the seller's, and you are credited qty × the
        original unit price. An open invoice is credited (fully credited,
        it closes and its late fees are forgiven); if you had already paid
        the invoice, the seller owes you a refund invoice for the credit,
        which it settles with `pay_invoice`. The seller's recognized revenue
        drops by the credit.

        Args:
            invoice_id: AP invoice id you want to return against (must be a
                tangible-goods deal you bought).
            quantity_kg: integer kg to return. Bounded by the delivered qty
                minus what was already returned AND by the kg of that delivery
                you still hold: your stock of an item is a mix, and every kg you
                roast, sell or lose takes its share of each delivery with it.
            reason: optional free-form note (e.g. "quality issue", "over-stock").
        """
        world, me = self.world, self.me
        inv: Invoice = self._lookup(world.state.invoices, invoice_id, "invoice_id")
        if inv.kind != "sale" or inv.payer != me.id or inv.deal_id is None:
            raise ToolError(f"invoice {invoice_id} is not a delivery to you")
        if inv.status not in ("open", "paid"):
            raise ToolError(f"invoice {invoice_id} is {inv.status}; nothing can be returned")
        window = world.econ.return_window_days
        if world.day - inv.issue_day > window:
            raise ToolError(f"the {window}-day return window for {invoice_id} has closed")
        qty = self._qty(quantity_kg, "quantity_kg")
        if len(reason) > world.econ.max_body_chars:
            raise ToolError(f"reason is longer than {world.econ.max_body_chars} characters")
        deal: Deal = world.state.deals[inv.deal_id]
        seller = world.firm(deal.seller)
        if seller.bankrupt:
            raise ToolError(f"{seller.id} is bankrupt; returns are no longer accepted")
        left = deal.shipped_qty - deal.returned_qty
        if qty > left:
            raise ToolError(f"only {left} kg of deal {deal.id} can still be returned")
        returnable = returns.returnable_kg(me, deal)
        if qty > returnable:
            raise ToolError(
                f"you still hold only {returnable} kg of what deal {deal.id} delivered: your "
                f"{deal.item} is a mix, and what you roasted, sold or lost since took its "
                "share of every delivery with it; only kg still held can be returned"
            )
        posting = returns.return_goods(world, me, inv, deal, qty, reason)
        credit, refund_id = posting.credit, posting.refund_invoice_id
        return {
            "invoice_id": inv.id,
            "returned_kg": qty,
            "credit": dollars(credit),
            "invoice_status": inv.status,
            "refund_invoice_id": refund_id,
        }

    # ---------------------------------------------------------- reports
    @tool("read")
    def view_trial_balance(
        self, period: Literal["current", "today", "yesterday"] = "current"
    ) -> dict[str, Any]:
        """Period trial balance — your own balances now and the income
        statement summed over the period. Useful for self-monitoring your
        own NI components day-to-day.

        Balances (point-in-time, now): cash, ar, inventory, in_transit,
        work_in_process, ap, equity; inventory_by_item gives qty, value and
        average cost per item. Income (sums over the period): revenue,
        returns, net_revenue, cogs, opex (fixed, spoilage, shipment and
        production write-offs, bad debt, inventory write-downs), opex_total,
        interest_expense, interest_income, net_income_before_closing,
        closing_writedown, closing_opex, net_income.

        Use it to inspect the env's truth ledger as it has been
        compiled so far for the period — the same data the env uses
        to compute your end-of-run score.

        Args:
            period: "current" — the whole run so far (default); "today";
                or "yesterday" (an error on day 0).
        """
        world, me = self.world, self.me
        sums = ledger.period_books(me, period)
        if sums is None:
            raise ToolError("there is no yesterday yet")
        sheet = world.balance_sheet(me.id)
        return {
            "period": period,
            "day": world.day,
            "balances": {k: dollars(v) for k, v in sheet.items()},
            "inventory_by_item": {
                item: {
                    "qty": s.qty,
                    "value": dollars(s.value),
                    "avg_cost": round(s.unit_cost() / 100, 2),
                }
                for item, s in me.stock.items()
            },
            "income": ledger.income_statement(sums),
        }

    @tool("read")
    def view_market_aggregate(self, days_back: int = 7) -> dict[str, Any]:
        """Snapshot total CONSUMER-side market activity over the last
        `days_back` days, aggregated across BOTH retailers (i.e. the
        whole market — not just your own sales). One row per
        (day, item) reporting total kg sold, revenue and average per-kg price
        achieved across the market that day. Useful for forecasting
        demand and pricing pressure regardless of role: farmers /
        roasters can plan B2B supply against observed downstream
        consumer pull, and retailers can benchmark their own share
        against the aggregate.

        Args:
            days_back: integer days back from today to include, 1-90
                (e.g. 7 = the last 7 days; today's sales happen at 19:00).
        """
        if not 1 <= days_back <= 90:
            raise ToolError(f"days_back must be between 1 and 90 (got {days_back})")
        first = self.world.day - days_back
        agg: dict[tuple[int, str], list[int]] = {}
        for sale in observation.sales_since(self.world, first):
            row = agg.setdefault((sale.day, sale.item), [0, 0])
            row[0] += sale.qty
            row[1] += sale.qty * sale.price
        rows = [
            {
                "day": day,
                "item_id": item,
                "kg": kg,
                "revenue": dollars(rev),
                "avg_price": round(rev / kg / 100, 2) if kg else None,
            }
            for (day, item), (kg, rev) in sorted(agg.items())
        ]
        return {"days_back": days_back, "sales": rows}

    @tool("read")
    def wait_for_next_day(self) -> dict[str, Any]:
        """Signal you have nothing more to do right now and want to
        sleep until something happens for you.

        You will be woken automatically when an external event lands
        for you within today's business hours: an offer is made on your
        listing, a counterparty accepts one of your offers, a message
        arrives, an invoice you issued is paid, or goods are returned to
        you. Deliveries and landed production or roasts come with the
        next morning observation. If no event fires for you, you stay
        asleep until tomorrow's morning observation. This is the
        cost-efficient way to end your turn — it takes no time on your
        clock and you spend zero LLM calls while sleeping.
        """
        return {"note": "waiting; you will be woken by events or at 09:00 tomorrow"}


class FarmerTools(FirmTools):
    @tool("write")
    def produce_item(self, item_id: str, quantity: int) -> dict[str, Any]:
        """Produce more units of a producible item from your cash.
        Farmer-role only: `green_coffee_kg` or `green_specialty_kg`.
        Each item has a production cost per kg (paid from your cash at
        call time), a per-agent per-item daily cap (kg/day, resets at the
        start of each day) and a production lag (days between the call
        and the units landing in inventory at 09:00); your system prompt
        gives the numbers. Output blends into your WAVG cost basis at the
        production cost when it materialises.

        Args:
            item_id: `green_coffee_kg` or `green_specialty_kg`.
            quantity: integer kg to produce, > 0, ≤ today's remaining
                capacity for this item, ≤ what your cash covers, and
                within your inventory-cap headroom (on-hand plus inbound).
        """
        world, me = self.world, self.me
        item = self._item(item_id, GREEN_ITEMS)
        qty = self._qty(quantity, "quantity")
        prod = world.econ.production[item]
        left = prod.daily_cap - me.produced_today.get(item, 0)
        if qty > left:
            raise ToolError(f"daily cap: you can produce {left} more kg of {item} today")
        cost = production.harvest_cost(world, item, qty)
        if me.cash < cost:
            raise ToolError(f"not enough cash: {qty} kg costs ${dollars(cost):,.2f}")
        headroom = world.cap_headroom(me.id)
        if qty > headroom:
            raise ToolError(f"inventory cap: room for {headroom} kg (on-hand plus inbound)")
        batch = production.produce(world, me, item, qty)
        return {
            "batch_id": batch.id,
            "item_id": item,
            "qty": qty,
            "cost": dollars(cost),
            "ready_day": batch.ready_day,
            "cash": dollars(me.cash),
        }


class RoasterTools(FirmTools):
    @tool("write")
    def roast(self, green_item_id: str, qty_kg: int) -> dict[str, Any]:
        """Convert green beans from your inventory into roasted beans.
        Roaster-role only. One unified action covers BOTH product
        lines via `green_item_id`: `green_coffee_kg` →
        `roasted_coffee_kg` (commodity) and `green_specialty_kg` →
        `roasted_specialty_kg` (premium); your system prompt gives each
        recipe's labor per kg, yield and lag.

        Both recipes SHARE one daily total green-input cap (same
        physical equipment). Cash + green leave immediately; the
        roasted output lands in inventory after the recipe's lag.
        Output is whole kg, rounded on your running total of green
        roasted, so splitting a roast never yields more. Effective COGS
        per roasted kg = (green WAVG + labor) / yield, blended into the
        output's WAVG cost basis at materialize time.

        Args:
            green_item_id: input item id (`green_coffee_kg` or
                `green_specialty_kg`).
            qty_kg: integer kg of green beans to roast. Must be > 0,
                ≤ today's remaining shared cap, ≤ green inventory you
                hold of that item, and your cash must cover labor; a
                roast that would add 0 kg of output is refused.
        """
        world, me, econ = self.world, self.me, self.world.econ
        item = self._item(green_item_id, GREEN_ITEMS, name="green_item_id")
        qty = self._qty(qty_kg, "qty_kg")
        left = econ.roast_daily_cap_kg - me.roasted_today_kg
        if qty > left:
            raise ToolError(f"roasting capacity: {left} kg of green left today")
        held = me.stock[item].qty
        if qty > held:
            raise ToolError(f"you hold only {held} kg of {item}")
        spec = econ.roasting[item]
        labour = roasting.labour_cost(world, item, qty)
        if me.cash < labour:
            raise ToolError(f"not enough cash for labour: ${dollars(labour):,.2f}")
        out_qty = roasting.roast_output(me, item, qty, spec.yield_)
        if out_qty <= 0:
            raise ToolError(
                f"{qty} kg of green adds 0 kg to your roasted output (output is rounded on "
                "your running total of green roasted); roast more at once"
            )
        batch = roasting.roast(world, me, item, qty, out_qty)
        return {
            "batch_id": batch.id,
            "roasted_item_id": batch.item,
            "roasted_qty": out_qty,
            "labour": dollars(labour),
            "ready_day": batch.ready_day,
            "cash": dollars(me.cash),
        }


class RetailerTools(FirmTools):
    @tool("write")
    def set_retail_price(self, item_id: str, price_per_unit: float) -> dict[str, Any]:
        """Set your storefront price for a consumer-facing item. The env
        runs a scripted consumer-demand model every evening (19:00) across
        all retailers; consumers buy at the price you set, capped by your
        on-hand inventory of that item, only if your price is at or
        below their reservation price. The price applies from this
        evening's sales. Setting `price_per_unit=0` delists the item.

        Two consumer-facing items: `roasted_coffee_kg` (commodity) and
        `roasted_specialty_kg` (premium); your system prompt gives their
        reservation prices. Price each independently. Pricing above
        the reservation forfeits BOTH the elastic share AND the
        inelastic-floor demand for that item that day. COGS is
        deducted at WAVG cost on every sale.

        Args:
            item_id: id of a consumer-facing item (`roasted_coffee_kg`
                or `roasted_specialty_kg`).
            price_per_unit: USD per kg. Set to 0 to delist.
        """
        item = self._item(item_id, RETAIL_ITEMS)
        if price_per_unit < 0:
            raise ToolError(f"price_per_unit must not be negative (got {price_per_unit})")
        cents = 0 if price_per_unit == 0 else self._price(price_per_unit, "price_per_unit")
        old = self.me.retail_prices.get(item, 0)
        self.me.retail_prices[item] = cents
        self.world.log(
            events.RetailPrice(
                firm=self.firm_id, item=item, price=dollars(cents), previous=dollars(old)
            )
        )
        return {"item_id": item, "price": dollars(cents), "previous_price": dollars(old)}

    @tool("read")
    def view_consumer_sales(self, since_day: int | None = None) -> dict[str, Any]:
        """Return YOUR shop's consumer-sale history (env auto-sells from
        your inventory at the retail prices you set; this tool lets you
        read those sales back).

        Each row carries: day, item_id, qty, price, revenue; the total kg
        and revenue follow. Retailer-only — other roles see no sales here.

        Args:
            since_day: only sales on or after this day (default: the last 7 days).
        """
        first = self.world.day - 7 if since_day is None else since_day
        rows = [
            {
                "day": s.day,
                "item_id": s.item,
                "qty": s.qty,
                "price": dollars(s.price),
                "revenue": dollars(s.qty * s.price),
            }
            for s in observation.sales_since(self.world, first)
            if s.firm == self.firm_id
        ]
        return {
            "sales": rows,
            "total_kg": sum(r["qty"] for r in rows),
            "total_revenue": round(sum(r["revenue"] for r in rows), 2),
        }


_ROLE_TOOLKITS: dict[str, type[FirmTools]] = {
    "farmer": FarmerTools,
    "roaster": RoasterTools,
    "retailer": RetailerTools,
}


def toolkit_for(world: World, firm_id: str) -> FirmTools:
    return _ROLE_TOOLKITS[world.firm(firm_id).role](world, firm_id)


def toolkit_class(role: str) -> type[FirmTools]:
    return _ROLE_TOOLKITS[role]
