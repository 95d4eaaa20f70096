"""Late fees (docs/coffeebench.md §6): 0.1 % a day of an overdue invoice's principal.

Every evening each open invoice past its due day accrues the rate on its outstanding
principal (principal − credits), rounded to cents, simple and not compounding: the payer
books interest expense, the issuer interest income. Nothing accrues while either party is
bankrupt, so a failed firm's debts do not grow after its creditors wrote them off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from econbench.coffee import events
from econbench.coffee.rules import ledger
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import dollars

if TYPE_CHECKING:
    from econbench.coffee.world import World


def apply(world: World) -> None:
    """19:00: charge today's fee on every overdue open invoice, in invoice order."""
    rate, day = world.econ.late_fee_rate, world.day
    for invoice in list(world.open_invoices.values()):
        if day <= invoice.due_day:
            continue
        issuer, payer = world.firm(invoice.issuer), world.firm(invoice.payer)
        if issuer.bankrupt or payer.bankrupt:
            continue
        fee = round(invoice.outstanding_principal * rate)
        if fee <= 0:
            continue
        invoice.fees += fee
        ledger.post_late_fee(issuer, payer, fee)
        world.log(
            events.LateFee(
                invoice_id=invoice.id, issuer=issuer.id, payer=payer.id, amount=dollars(fee)
            )
        )


RULE = Rule(name="late_fees", evening=apply, events=(events.LateFee,))
