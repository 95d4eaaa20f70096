"""Shipping (docs/coffeebench.md §5): dispatch, the one roll a due shipment draws, delivery.

An accepted offer takes the goods out of the seller's stock at once and puts them on the road
(``dispatch``); each morning every due shipment draws once (``shipping_outcome``) and is lost,
delayed a day or delivered (``process_due``). The roll comes from a generator keyed by (seed,
stream, deal, day), so it never depends on how many other draws happened and a resumed run
needs no generator state. A cancelled deal (a party went bankrupt, docs/coffeebench.md §9)
puts the goods back in the seller's stock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.config import EconomyConfig
from econbench.coffee.rules import ledger
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import Deal, Firm, Invoice, Listing, Offer, dollars

if TYPE_CHECKING:
    from econbench.coffee.world import World

STREAM_SHIPPING = 3


def shipping_outcome(seed: int, deal_seq: int, day: int, econ: EconomyConfig) -> str:
    """The one roll a due shipment draws: "lost", "delayed" or "delivered"
    (docs/coffeebench.md §5)."""
    import numpy as np  # imported where the economy draws, not when the CLI starts

    roll = np.random.default_rng([seed, STREAM_SHIPPING, deal_seq, day]).random()
    if roll < econ.ship_loss_prob:
        return "lost"
    if roll < econ.ship_loss_prob + econ.ship_delay_prob:
        return "delayed"
    return "delivered"


def dispatch(world: World, seller: Firm, offer: Offer, listing: Listing) -> Deal:
    """Turn an accepted offer into a deal: reserve the goods and put them on the road.

    The caller has checked the offer (stock held, buyer's room, a morning left to deliver in).
    """
    reserved, carry = world.reserve(seller, offer.item, offer.qty)
    world.state.counters.deal += 1
    seq = world.state.counters.deal
    deal = Deal(
        id=f"D{seq}",
        seq=seq,
        offer_id=offer.id,
        listing_id=listing.id,
        seller=seller.id,
        buyer=offer.buyer,
        item=offer.item,
        qty=offer.qty,
        price=offer.price,
        terms=offer.terms,
        day=world.day,
        minute=world.now,
        reserved_value=reserved,
        spoil_carry=carry,
        ship_day=world.day + world.econ.shipping_days,
    )
    world.add_deal(deal)
    world.resolve_offer(offer, "accepted")
    listing.qty -= offer.qty
    world.log(
        events.DealStruck(
            deal_id=deal.id,
            offer_id=offer.id,
            seller=seller.id,
            buyer=offer.buyer,
            item=deal.item,
            qty=deal.qty,
            price=dollars(deal.price),
            terms=deal.terms,
            seller_cost=dollars(reserved),
        )
    )
    return deal


def process_due(world: World) -> None:
    """09:00: every shipment due today draws its outcome, in deal order."""
    due = [d for d in world.open_deals.values() if d.ship_day <= world.day]
    for deal in sorted(due, key=lambda d: d.seq):
        outcome = shipping_outcome(world.state.seed, deal.seq, world.day, world.econ)
        seller, buyer = world.firm(deal.seller), world.firm(deal.buyer)
        if outcome == "lost":
            lose(world, deal, seller, buyer)
        elif outcome == "delayed":
            delay(world, deal, buyer)
        else:
            deliver(world, deal, seller, buyer)


def lose(world: World, deal: Deal, seller: Firm, buyer: Firm) -> None:
    """Lost on the road: the seller writes off the goods' cost; no invoice."""
    world.close_deal(deal, "lost")
    seller.books.shipment_writeoffs += deal.reserved_value
    world.log(
        events.ShipmentLost(
            deal_id=deal.id,
            seller=deal.seller,
            buyer=deal.buyer,
            item=deal.item,
            qty=deal.shipped_qty,
            writeoff=dollars(deal.reserved_value),
        )
    )
    note = f"shipment of deal {deal.id} ({deal.shipped_qty} kg {deal.item}) was lost in transit"
    for firm in (seller, buyer):
        firm.notices.append(note + (": no invoice will be issued" if firm is buyer else ""))
        firm.clock.reasons.append(f"deal {deal.id} lost in transit")


def delay(world: World, deal: Deal, buyer: Firm) -> None:
    """Delayed a day: the shipment draws again tomorrow morning."""
    deal.status = "delayed"
    deal.ship_day = world.day + 1
    world.log(
        events.ShipmentDelayed(
            deal_id=deal.id,
            seller=deal.seller,
            buyer=deal.buyer,
            item=deal.item,
            qty=deal.shipped_qty,
            new_delivery_day=deal.ship_day,
        )
    )
    buyer.notices.append(f"delivery of deal {deal.id} is delayed by a day")


def deliver(world: World, deal: Deal, seller: Firm, buyer: Firm) -> None:
    """Delivered: the seller books the sale and invoices; the buyer takes the goods in."""
    qty = deal.shipped_qty
    amount = qty * deal.price
    world.close_deal(deal, "delivered")
    deal.delivered_day = world.day
    if qty <= 0:  # everything spoiled on the road: nothing to deliver or invoice
        seller.books.spoilage += deal.reserved_value
        deal.reserved_value = 0
        _emit_delivery(world, deal, seller, buyer, 0)
        return
    invoice = Invoice(
        id=world.next_id("invoice", "INV"),
        deal_id=deal.id,
        issuer=seller.id,
        payer=buyer.id,
        item=deal.item,
        qty=qty,
        price=deal.price,
        principal=amount,
        issue_day=world.day,
        due_day=world.day + deal.terms,
    )
    world.add_invoice(invoice)
    deal.invoice_id = invoice.id
    ledger.post_sale(seller, amount, deal.reserved_value)
    _emit_delivery(world, deal, seller, buyer, qty)
    world.log(
        events.InvoiceIssued(
            invoice_id=invoice.id,
            issuer=seller.id,
            payer=buyer.id,
            amount=dollars(amount),
            due_day=invoice.due_day,
        )
    )
    buyer.stock[deal.item].spoil_carry += deal.spoil_carry
    buyer.stock[deal.item].traded = True
    deal.spoil_carry = 0.0
    booked = world.add_stock(buyer, deal.item, qty, amount, why="purchase", lot=deal.id)
    deal.booked_unit = booked // qty
    deal.buyer_writedown = amount - booked
    buyer.clock.reasons.append(f"delivery of deal {deal.id}: {qty} kg {deal.item}")


def _emit_delivery(world: World, deal: Deal, seller: Firm, buyer: Firm, qty: int) -> None:
    world.log(
        events.Delivery(
            deal_id=deal.id,
            seller=seller.id,
            buyer=buyer.id,
            item=deal.item,
            qty=qty,
            price=dollars(deal.price),
        )
    )


def cancel(world: World, deal: Deal, reason: str) -> None:
    """Call a deal off before delivery: the goods, and their spoilage fraction, go back to
    the seller's stock at the cost they left it at."""
    world.close_deal(deal, "cancelled")
    seller = world.firm(deal.seller)
    seller.stock[deal.item].spoil_carry += deal.spoil_carry
    seller.stock[deal.item].traded = True
    deal.spoil_carry = 0.0
    if deal.shipped_qty > 0:
        world.add_stock(
            seller, deal.item, deal.shipped_qty, deal.reserved_value, why="cancelled deal"
        )
    world.log(
        events.DealCancelled(
            deal_id=deal.id,
            seller=deal.seller,
            buyer=deal.buyer,
            item=deal.item,
            qty=deal.shipped_qty,
            reason=reason,
        )
    )
    for party in (deal.seller, deal.buyer):
        world.firm(party).notices.append(f"deal {deal.id} was cancelled: {reason}")


RULE = Rule(
    name="shipping",
    morning=process_due,
    events=(
        events.DealStruck,
        events.ShipmentLost,
        events.ShipmentDelayed,
        events.InvoiceIssued,
        events.Delivery,
        events.DealCancelled,
    ),
    state=("deals",),
)
