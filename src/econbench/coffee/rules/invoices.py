"""Paying an invoice (docs/coffeebench.md §6): money moves between firms only here.

Payment is never automatic: the payer settles an open invoice in full (principal plus late
fees less credits) from its own cash, and the issuer is woken. Refund invoices from returns
on paid invoices are paid the same way, so no tool ever drives a firm's cash below zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.tools import ToolError, tool
from econbench.coffee import events
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import (
    Firm,
    Invoice,
    dollars,
    total_outstanding,
)

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


# ------------------------------------------------------------------ tools
def _invoice_view(inv: Invoice, side: str, day: int) -> dict[str, Any]:
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
    self: FirmToolkit, side: str, only_overdue: bool, counterparty: str | None, limit: int
) -> dict[str, Any]:
    if counterparty is not None:
        self._firm(counterparty, "counterparty")
    limit = self._limit(limit)
    world = self.world
    mine = world.receivables(self.firm_id) if side == "receivable" else world.payables(self.firm_id)
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
        "invoices": [_invoice_view(i, side, day) for i in rows[:limit]],
        "summary": (
            f"{len(rows)} open invoice(s), ${dollars(total):,.2f} outstanding, "
            f"{len(overdue)} overdue (${dollars(total_outstanding(overdue)):,.2f})"
        ),
        "total_outstanding": dollars(total),
    }


@tool("read")
def view_payables(
    self: FirmToolkit, only_overdue: bool = False, counterparty: str | None = None, limit: int = 20
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
    return _invoices(self, "payable", only_overdue, counterparty, limit)


@tool("read")
def view_receivables(
    self: FirmToolkit, only_overdue: bool = False, counterparty: str | None = None, limit: int = 20
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
    return _invoices(self, "receivable", only_overdue, counterparty, limit)


@tool("write")
def pay_invoice(self: FirmToolkit, invoice_id: str) -> dict[str, Any]:
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
    pay(world, me, inv)
    return {"invoice_id": inv.id, "paid": dollars(amount), "cash": dollars(me.cash)}


RULE = Rule(
    name="invoices",
    tools=(view_payables, view_receivables, pay_invoice),
    events=(events.Payment,),
    state=("invoices",),
)
