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
        """Post a public listing offering goods you hold now. Stock is not reserved.

        If you already have an open listing of the item, it is updated to the new quantity,
        price and terms (same listing id); pending offers on it stay pending.

        Args:
            item_id: The item to sell, e.g. green_coffee_kg or roasted_coffee_kg.
            qty: Whole kg offered; you must hold at least this much now.
            asking_price: Asking price in dollars per kg.
            payment_terms_days: Days the buyer has to pay after delivery (0-90).
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
        """See the open listings on the exchange.

        Args:
            item_id: Only listings of this item; omit for all items.
            only_others: Leave out your own listings (default true).
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
        """Bid on another firm's listing. The seller is woken and may accept.

        Args:
            listing_id: The listing to bid on.
            offered_price: Your price in dollars per kg.
            qty: Whole kg wanted; at most the listing's quantity.
            payment_terms_days: Days you ask for to pay after delivery (0-90).
            message: An optional note to the seller.
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
        """Withdraw one of your pending offers.

        Args:
            offer_id: The offer to withdraw.
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
        """Accept an offer on your listing: a binding deal at the offer's price and terms.

        The goods are taken from your stock now and ship next morning; the buyer is invoiced
        on delivery.

        Args:
            offer_id: The incoming offer to accept.
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
        """See offers you made or received, newest first, with their status.

        Args:
            direction: incoming (made to you), outgoing (made by you) or all.
            limit: At most this many offers (1-100).
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
        """See your deals, newest first, with delivery status (pending, delayed, delivered, lost).

        Args:
            limit: At most this many deals (1-100).
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
        """Send a direct message to another firm; it wakes the recipient.

        Args:
            recipient: The firm to write to, e.g. farmer_A.
            title: A short title, at most 80 characters.
            body: The message text.
            ref_listing_id: Optionally, a listing the message is about.
            ref_offer_id: Optionally, an offer the message is about.
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
        """List message titles you sent or received, newest first, with read flags.

        Args:
            counterparty: Only messages exchanged with this firm.
            since_day: Only messages from this day on.
            limit: At most this many messages (1-100).
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
        """Read a message's body; marks it read.

        Args:
            message_id: The message to read.
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
        """Invoices you owe, with late fees, credits, outstanding amount and due day.

        Args:
            only_overdue: Only invoices past their due day.
            counterparty: Only invoices from this firm.
            limit: At most this many invoices (1-100).
        """
        return self._invoices("payable", only_overdue, counterparty, limit)

    @tool("read")
    def view_receivables(
        self, only_overdue: bool = False, counterparty: str | None = None, limit: int = 20
    ) -> dict[str, Any]:
        """Invoices owed to you, with late fees, credits, outstanding amount and due day.

        Args:
            only_overdue: Only invoices past their due day.
            counterparty: Only invoices to this firm.
            limit: At most this many invoices (1-100).
        """
        return self._invoices("receivable", only_overdue, counterparty, limit)

    @tool("write")
    def pay_invoice(self, invoice_id: str) -> dict[str, Any]:
        """Pay an invoice in full: principal plus late fees minus credits. No partial payment.

        Args:
            invoice_id: The invoice to pay.
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
        """Return goods you bought, within 14 days of the invoice; credited at the deal price.

        If the invoice is already paid, the seller owes you a refund invoice for the credit.

        Args:
            invoice_id: The invoice of the delivery you return goods from.
            quantity_kg: Whole kg to return; at most what was delivered and you still hold.
            reason: Why you return the goods.
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
        """Your own accounts: balances now, and income-statement sums for a period.

        Args:
            period: current (the whole run so far), today, or yesterday.
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
        """Market-wide consumer sales per item and day: kg, revenue and average price.

        Args:
            days_back: How many past days to include (1-90).
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
        """End today's activity. You are woken early if something happens (an offer, a deal,
        a message, a payment, a return), otherwise next morning at 09:00. Costs no time."""
        return {"note": "waiting; you will be woken by events or at 09:00 tomorrow"}


class FarmerTools(FirmTools):
    @tool("write")
    def produce_item(self, item_id: str, quantity: int) -> dict[str, Any]:
        """Grow green coffee: pay the cost now; it lands in your stock after the lag.

        Args:
            item_id: green_coffee_kg or green_specialty_kg.
            quantity: Whole kg to produce, within today's remaining production cap.
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
        """Roast green coffee you hold: pay labour now; roasted coffee lands next morning.

        Args:
            green_item_id: green_coffee_kg (gives roasted_coffee_kg) or green_specialty_kg
                (gives roasted_specialty_kg).
            qty_kg: Whole kg of green to roast, within today's remaining roasting capacity.
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
        """Set your storefront price for consumers; 0 delists. Applies at this evening's sales.

        Args:
            item_id: roasted_coffee_kg or roasted_specialty_kg.
            price_per_unit: Dollars per kg; 0 stops selling the item.
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
        """Your own daily consumer sales: kg, price and revenue per item.

        Args:
            since_day: Only sales from this day on; omit for the last 7 days.
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
