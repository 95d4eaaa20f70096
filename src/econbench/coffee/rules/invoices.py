"""Paying an invoice (docs/coffeebench.md §6): money moves between firms only here.

Payment is never automatic: the payer settles an open invoice in full (principal plus late
fees less credits) from its own cash, and the issuer is woken. Refund invoices from returns
on paid invoices are paid the same way, so no tool ever drives a firm's cash below zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.state import Firm, Invoice, dollars

if TYPE_CHECKING:
    from econbench.coffee.world import World


def pay(world: World, payer: Firm, inv: Invoice) -> None:
    """Settle ``inv`` in full; the caller checked that it is the payer's, open and covered."""
    amount = inv.outstanding
    issuer = world.firm(inv.issuer)
    payer.cash -= amount
    issuer.cash += amount
    world.settle_invoice(inv, "paid")
    world.log(
        events.Payment(invoice_id=inv.id, payer=payer.id, issuer=issuer.id, amount=dollars(amount))
    )
    world.wake(issuer.id, f"invoice {inv.id} paid by {payer.id}")
