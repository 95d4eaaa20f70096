"""The B2B exchange (docs/coffeebench.md §4, §8): listings, offers and the deals they make.

An offer accepted becomes a deal that ``rules/shipping.py`` dispatches and delivers. Two
limits hold on every price and deal. A B2B price above an item's ceiling — what a kg could
at best become at consumer prices — buys nothing real and only moves paper profit between
firms, so listings and offers above it are refused with an error naming the ceiling. A deal
needs a morning to deliver in: on the run's last day (or whenever the shipping lag would
land after the end) no offer can be made or accepted, rather than a sale that silently never
arrives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from econbench.agents.tools import ToolError, tool
from econbench.coffee import events, observation
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules import shipping
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import (
    Listing,
    Offer,
    dollars,
)

if TYPE_CHECKING:
    from econbench.coffee.world import World


def check_ceiling(world: World, item: str, price: float, name: str) -> None:
    ceiling = world.econ.writedown_ceiling[item]
    if price > ceiling:
        raise ToolError(
            f"{name} ${price:,.2f} is above the ceiling of ${ceiling:,.2f}/kg for {item} "
            "(what a kg can at best become at consumer prices); B2B prices above it are refused"
        )


def check_deliverable(world: World, action: str) -> None:
    """Refuse a deal that could not be delivered before the run ends."""
    last_day = world.config.days - 1
    arrival = world.day + world.econ.shipping_days
    if arrival > last_day:
        when = "the last day" if world.day >= last_day else "too close to the end"
        raise ToolError(
            f"cannot {action}: day {world.day} is {when} of the run (days 0-{last_day}); "
            f"goods agreed now would arrive on day {arrival}, after it ends"
        )


# ------------------------------------------------------------------ tools
@tool("write")
def post_listing(
    self: FirmToolkit, item_id: str, qty: int, asking_price: float, payment_terms_days: int = 30
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
    check_ceiling(world, item, asking_price, "asking_price")
    terms = self._terms(payment_terms_days)
    held = me.stock[item].qty
    if held < qty:
        raise ToolError(f"you hold only {held} kg of {item}; cannot list {qty} kg")
    listing = next(
        (lst for lst in world.open_listings.values() if lst.seller == me.id and lst.item == item),
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
        events.ListingPosted(
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


def _reject_pending(self: FirmToolkit, listing_id: str, why: str) -> None:
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
def view_listings(
    self: FirmToolkit, item_id: str | None = None, only_others: bool = True
) -> dict[str, Any]:
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
    self: FirmToolkit,
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
    check_ceiling(world, listing.item, offered_price, "offered_price")
    qty = self._qty(qty)
    terms = self._terms(payment_terms_days)
    check_deliverable(world, "make an offer")
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
        events.OfferMade(
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
def withdraw_offer(self: FirmToolkit, offer_id: str) -> dict[str, Any]:
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
def accept_offer(self: FirmToolkit, offer_id: str) -> dict[str, Any]:
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
        raise ToolError(f"{buyer.id} has no room for {offer.qty} kg more; the deal cannot close")
    check_deliverable(world, "accept an offer")
    deal = shipping.dispatch(world, me, offer, listing)
    if listing.qty == 0:
        world.close_listing(listing, "sold_out")
        _reject_pending(self, listing.id, why="listing sold out")
    world.wake(buyer.id, f"offer {offer.id} accepted by {me.id}: deal {deal.id}")
    return {"deal": observation.deal_view(deal, me.id)}


@tool("read")
def view_offers(
    self: FirmToolkit, direction: Literal["incoming", "outgoing", "all"] = "all", limit: int = 20
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
def view_deals(self: FirmToolkit, limit: int = 20) -> dict[str, Any]:
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


RULE = Rule(
    name="exchange",
    tools=(
        post_listing,
        view_listings,
        make_offer,
        withdraw_offer,
        accept_offer,
        view_offers,
        view_deals,
    ),
    events=(events.ListingPosted, events.OfferMade, events.OfferRejected, events.OfferWithdrawn),
    state=("listings", "offers"),
)
