"""Returns (docs/coffeebench.md §6): a return can only undo a purchase.

The buyer may return, within the window, kg it still holds *of that delivery* (``lots.py``:
the pool is a proportional mix, so kg it roasted, sold or lost since took their share of the
lot with them). Those kg leave its books at exactly what the delivery booked for them, and it
is credited the deal price: the two differ only by the write-down the delivery booked (a
price above the ceiling), whose share the return reverses. So a return leaves the buyer's net
income where it would be had it bought fewer kg, and a write-down is never negative. The
seller takes the kg back at the cost it booked for them and reverses the revenue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from econbench.agents.tools import ToolError, tool
from econbench.coffee import events
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules import lots, spoilage
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import (
    Cents,
    Deal,
    Firm,
    Invoice,
    dollars,
)

if TYPE_CHECKING:
    from econbench.coffee.world import World


@dataclass(frozen=True)
class ReturnPosting:
    credit: Cents
    refund_invoice_id: str | None


def returnable_kg(buyer: Firm, deal: Deal) -> int:
    """kg of ``deal`` the buyer may still return: delivered, not yet returned, still held."""
    left = deal.shipped_qty - deal.returned_qty
    return max(0, min(left, lots.held_of(buyer.stock[deal.item], deal.id)))


def book_return(world: World, buyer: Firm, inv: Invoice, deal: Deal, qty: int) -> ReturnPosting:
    """Move ``qty`` kg back to the seller and post the credit; the caller checked ``qty``."""
    seller = world.firm(deal.seller)
    credit = qty * deal.price
    stock = buyer.stock[deal.item]
    out = min(qty * (deal.booked_unit or deal.price), stock.value)
    if qty >= stock.qty:
        out = stock.value
    carry = spoilage.carry_share(stock, qty)  # the returned kg take their spoilage along
    lots.take_lot(stock, deal.id, qty)
    stock.qty -= qty
    stock.value -= out
    if stock.qty == 0:
        stock.value = 0
        stock.lots.clear()
    delivered = deal.shipped_qty
    reversal = (
        deal.buyer_writedown
        if qty + deal.returned_qty >= delivered
        else round(deal.buyer_writedown * qty / delivered)
    )
    reversal = min(reversal, buyer.books.writedowns, max(0, credit - out))
    buyer.books.writedowns -= reversal
    # What is left (cents of average-cost rounding in the pool) corrects the COGS that
    # rounding over- or under-charged earlier.
    buyer.books.cogs -= credit - out - reversal
    back_value = (
        deal.reserved_value - deal.returned_value
        if qty + deal.returned_qty >= delivered
        else round(deal.reserved_value * qty / delivered)
    )
    deal.returned_qty += qty
    deal.returned_value += back_value
    seller.books.returns += credit
    seller.books.cogs -= back_value
    world.add_stock(seller, deal.item, qty, back_value, why="return")
    seller.stock[deal.item].traded = True
    seller.stock[deal.item].spoil_carry += carry
    refund_id = None
    if inv.status == "open":
        inv.credits += credit
        if inv.outstanding_principal <= 0:
            if inv.fees:
                seller.books.interest_income -= inv.fees
                buyer.books.interest_expense -= inv.fees
                inv.fees = 0
            world.settle_invoice(inv, "closed")
    else:
        refund = Invoice(
            id=world.next_id("invoice", "INV"),
            kind="refund",
            deal_id=deal.id,
            issuer=buyer.id,
            payer=seller.id,
            item=deal.item,
            qty=qty,
            price=deal.price,
            principal=credit,
            issue_day=world.day,
            due_day=world.day,
        )
        world.add_invoice(refund)
        refund_id = refund.id
    return ReturnPosting(credit=credit, refund_invoice_id=refund_id)


def return_goods(
    world: World, buyer: Firm, inv: Invoice, deal: Deal, qty: int, reason: str
) -> ReturnPosting:
    """A checked return: post it, log it and wake the seller."""
    posting = book_return(world, buyer, inv, deal, qty)
    world.log(
        events.Return(
            invoice_id=inv.id,
            deal_id=deal.id,
            buyer=buyer.id,
            seller=deal.seller,
            item=deal.item,
            qty=qty,
            credit=dollars(posting.credit),
            reason=reason,
            refund_invoice_id=posting.refund_invoice_id,
        )
    )
    world.wake(deal.seller, f"return of {qty} kg {deal.item} from {buyer.id} on {inv.id}")
    return posting


# ------------------------------------------------------------------ tools
@tool("write")
def return_shipment(
    self: FirmToolkit, invoice_id: str, quantity_kg: int, reason: str = ""
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
    returnable = returnable_kg(me, deal)
    if qty > returnable:
        raise ToolError(
            f"you still hold only {returnable} kg of what deal {deal.id} delivered: your "
            f"{deal.item} is a mix, and what you roasted, sold or lost since took its "
            "share of every delivery with it; only kg still held can be returned"
        )
    posting = return_goods(world, me, inv, deal, qty, reason)
    credit, refund_id = posting.credit, posting.refund_invoice_id
    return {
        "invoice_id": inv.id,
        "returned_kg": qty,
        "credit": dollars(credit),
        "invoice_status": inv.status,
        "refund_invoice_id": refund_id,
    }


RULE = Rule(
    name="returns",
    tools=(return_shipment,),
    events=(events.Return,),
)
