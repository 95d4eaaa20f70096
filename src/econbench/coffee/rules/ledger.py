"""The ledger (docs/coffeebench.md §8): every posting, the balance sheet, the income statement.

The score is the environment's own net income, so how it is booked must be readable in one
place. ``Books`` (``coffee/state.py``) holds the cumulative buckets and the one
income-statement formula (``Books.net_income``); this module holds the postings the rules
make into them, the write-down of a receipt to its item's ceiling, the balance sheet, and the
income statement a firm reads (``view_trial_balance``), laid out from those same buckets.
Returns are posted by ``rules/returns.py``, the closing lines by ``rules/closing.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from econbench.agents.tools import ToolError, tool
from econbench.coffee import events
from econbench.coffee.firm_toolkit import FirmToolkit
from econbench.coffee.rules.rule import Rule
from econbench.coffee.state import (
    Books,
    Cents,
    Firm,
    dollars,
    to_cents,
    total_outstanding,
)

if TYPE_CHECKING:
    from econbench.coffee.world import World

Period = Literal["current", "today", "yesterday"]


# ------------------------------------------------------------------ postings
def charge_opex(world: World, firm: Firm) -> None:
    """09:00: the day's fixed opex, paid in cash (the books of the day's start kept first,
    for period reports)."""
    firm.books_by_day.append(firm.books.model_copy())
    firm.cash -= firm.opex_per_day
    firm.books.opex_fixed += firm.opex_per_day
    world.log(events.Opex(firm=firm.id, amount=dollars(firm.opex_per_day)))


def post_sale(seller: Firm, revenue: Cents, cost: Cents) -> None:
    """A sale, to a firm on delivery or to consumers: revenue and its cost of goods."""
    seller.books.revenue += revenue
    seller.books.cogs += cost


def write_down_to_ceiling(
    world: World, firm: Firm, item: str, qty: int, value: Cents, why: str
) -> Cents:
    """The value a receipt of ``qty`` kg at ``value`` is booked at: the lower of that and the
    item's ceiling, applied to the receipt before it joins the pool; the excess is an
    inventory write-down."""
    ceiling = to_cents(world.econ.writedown_ceiling[item] * qty)
    if value <= ceiling:
        return value
    excess = value - ceiling
    firm.books.writedowns += excess
    world.log(
        events.Writedown(
            firm=firm.id,
            item=item,
            qty=qty,
            amount=dollars(excess),
            cause=why,
            ceiling_per_kg=world.econ.writedown_ceiling[item],
        )
    )
    return ceiling


def post_late_fee(issuer: Firm, payer: Firm, fee: Cents) -> None:
    issuer.books.interest_income += fee
    payer.books.interest_expense += fee


# ------------------------------------------------------------------- reports
def balance_sheet(world: World, firm_id: str) -> dict[str, Cents]:
    """Cash, receivables, stock on hand, goods on the road from it, work in process, payables
    and the equity they sum to, in cents."""
    firm = world.firm(firm_id)
    on_hand = sum([s.value for s in firm.stock.values()])
    in_transit = sum([d.reserved_value for d in world.open_deals.values() if d.seller == firm_id])
    wip = sum([b.value for b in world.state.batches.values() if b.firm == firm_id])
    ar = total_outstanding(world.receivables(firm_id))
    ap = total_outstanding(world.payables(firm_id))
    if firm.bankrupt:
        # Its creditors wrote these off; the debts are uncollectible, not forgiven.
        ap += sum(
            i.outstanding
            for i in world.state.invoices.values()
            if i.payer == firm_id and i.status == "bad_debt"
        )
    cash = firm.cash
    equity = cash + ar + on_hand + in_transit + wip - ap
    return {
        "cash": cash,
        "ar": ar,
        "inventory": on_hand,
        "in_transit": in_transit,
        "work_in_process": wip,
        "ap": ap,
        "equity": equity,
    }


def period_books(firm: Firm, period: Period) -> Books | None:
    """The income-statement sums of a period (None: there is no yesterday yet)."""
    books, history = firm.books, firm.books_by_day
    if period == "current":
        return books.minus(None)
    if period == "today":
        return books.minus(history[-1] if history else None)
    if len(history) < 2:
        return None
    return history[-1].minus(history[-2])


def opex_breakdown(books: Books) -> dict[str, float]:
    """The lines of ``Books.opex``, in dollars."""
    return {
        "fixed": dollars(books.opex_fixed),
        "spoilage": dollars(books.spoilage),
        "shipment_writeoffs": dollars(books.shipment_writeoffs),
        "production_writeoffs": dollars(books.production_writeoffs),
        "bad_debt": dollars(books.bad_debt),
        "inventory_writedowns": dollars(books.writedowns),
    }


def income_statement(books: Books) -> dict[str, Any]:
    """The income statement of ``books`` (cumulative or a period's sums), in dollars: every
    line of ``Books.net_income``, the formula itself left to ``Books``."""
    return {
        "revenue": dollars(books.revenue),
        "returns": dollars(books.returns),
        "net_revenue": dollars(books.net_revenue),
        "cogs": dollars(books.cogs),
        "opex": opex_breakdown(books),
        "opex_total": dollars(books.opex),
        "interest_expense": dollars(books.interest_expense),
        "interest_income": dollars(books.interest_income),
        "net_income_before_closing": dollars(books.net_income_before_closing),
        "closing_writedown": dollars(books.closing_writedown),
        "closing_opex": dollars(books.closing_opex),
        "net_income": dollars(books.net_income),
    }


# ------------------------------------------------------------------ tools
@tool("read")
def view_trial_balance(
    self: FirmToolkit, period: Literal["current", "today", "yesterday"] = "current"
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
    sums = period_books(me, period)
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
        "income": income_statement(sums),
    }


def charge_daily_opex(world: World) -> None:
    """09:00: every live firm pays its day's fixed costs, in the state's order."""
    for firm in world.live_firms():
        charge_opex(world, firm)


RULE = Rule(
    name="ledger",
    morning=charge_daily_opex,
    tools=(view_trial_balance,),
    events=(events.Opex, events.Writedown),
    state=("Firm.books", "Firm.cash"),
)
