"""Bankruptcy (docs/coffeebench.md §9): a firm with negative cash after the morning opex fails.

It leaves the market at once: its listings close, its pending offers are rejected, its
undelivered deals are cancelled (the goods go back to the seller), its pending production and
roasts are written off, and the issuers of its unpaid invoices book them as bad debt. Every
live firm is told in its next observation. Its fixed opex of the days left is charged at the
close (``rules/closing.py``), so failing never saves costs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.rules import shipping
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import Cents, Firm, dollars

if TYPE_CHECKING:
    from econbench.coffee.world import World


def apply(world: World) -> None:
    """09:00, after the opex: every live firm whose cash is below zero fails."""
    for firm in world.live_firms():
        if firm.cash < 0:
            bankrupt(world, firm)


def bankrupt(world: World, firm: Firm) -> None:
    """Remove ``firm`` from the market and post what its failure costs others."""
    firm.bankrupt = True
    firm.bankrupt_day = world.day
    firm.clock.parked = True
    for listing in list(world.open_listings.values()):
        if listing.seller == firm.id:
            world.close_listing(listing, "closed")
    for offer in list(world.pending_offers.values()):
        if firm.id in (offer.buyer, offer.seller):
            world.resolve_offer(offer, "rejected")
    for deal in list(world.open_deals.values()):
        if firm.id in (deal.buyer, deal.seller):
            shipping.cancel(world, deal, reason=f"{firm.id} went bankrupt")
    _write_off_batches(world, firm)
    bad_debts = _write_off_payables(world, firm)
    world.log(
        events.Bankruptcy(
            firm=firm.id,
            cash=dollars(firm.cash),
            bad_debt={k: dollars(v) for k, v in bad_debts.items()},
        )
    )
    for other in world.live_firms():
        other.notices.append(f"{firm.id} went bankrupt on day {world.day} and left the market")


def _write_off_batches(world: World, firm: Firm) -> None:
    for batch in [b for b in world.state.batches.values() if b.firm == firm.id]:
        del world.state.batches[batch.id]
        firm.books.production_writeoffs += batch.value
        world.log(
            events.BatchWrittenOff(
                firm=firm.id,
                batch_id=batch.id,
                kind=batch.kind,
                item=batch.item,
                qty=batch.qty,
                value=dollars(batch.value),
            )
        )


def _write_off_payables(world: World, firm: Firm) -> dict[str, Cents]:
    """Each creditor books the failed firm's unpaid invoices as bad debt; the sums by
    creditor."""
    bad_debts: dict[str, Cents] = {}
    for invoice in world.payables(firm.id):
        creditor = world.firm(invoice.issuer)
        amount = invoice.outstanding
        world.settle_invoice(invoice, "bad_debt")
        creditor.books.bad_debt += amount
        bad_debts[creditor.id] = bad_debts.get(creditor.id, 0) + amount
        world.log(
            events.BadDebt(
                invoice_id=invoice.id, creditor=creditor.id, debtor=firm.id, amount=dollars(amount)
            )
        )
    return bad_debts


RULE = Rule(
    name="bankruptcy",
    morning=apply,
    events=(events.Bankruptcy, events.BatchWrittenOff, events.BadDebt),
    state=("Firm.bankrupt",),
)
