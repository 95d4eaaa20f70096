"""The ledger identities a saved world must satisfy before a run may continue from it.

A checkpoint's digest shows the file is the one the run wrote; these identities show that
what it holds is a world the rules could have produced. Every firm's trial balance must
close: its balance-sheet equity (cash + receivables + stock + goods in transit + work in
process − payables) equals its equity at the start plus its ledger net income, to the cent.
Stock, batches, deals and invoices hold no negative amounts. One edited digit of a firm's
cash, stock value or books breaks the first identity.
"""

from __future__ import annotations

from econbench.coffee.config import FIRMS
from econbench.coffee.state import Cents, dollars
from econbench.coffee.world import World


def start_equity(world: World) -> dict[str, Cents]:
    """Each firm's equity in ``world`` (taken before the first tick: the starting equity)."""
    return {firm_id: world.balance_sheet(firm_id)["equity"] for firm_id in FIRMS}


def ledger_problems(world: World, equity0: dict[str, Cents]) -> list[str]:
    """What is wrong with ``world``'s books, one phrase per problem (empty when sound)."""
    s = world.state
    problems: list[str] = []
    if set(s.firms) != set(FIRMS):
        return [f"the world's firms are {sorted(s.firms)}, not {list(FIRMS)}"]
    for firm_id in FIRMS:
        firm = s.firms[firm_id]
        for item, stock in firm.stock.items():
            if stock.qty < 0 or stock.value < 0 or (stock.qty == 0 and stock.value != 0):
                problems.append(
                    f"{firm_id} holds {stock.qty} kg of {item} valued at {dollars(stock.value)}"
                )
        if firm_id not in equity0:
            problems.append(f"no starting equity is recorded for {firm_id}")
            continue
        equity = world.balance_sheet(firm_id)["equity"]
        income = firm.books.net_income
        if equity - equity0[firm_id] != income:
            problems.append(
                f"{firm_id}'s trial balance does not close: equity {dollars(equity):.2f} − "
                f"starting equity {dollars(equity0[firm_id]):.2f} ≠ net income "
                f"{dollars(income):.2f}"
            )
    for batch in s.batches.values():
        if batch.qty <= 0 or batch.value < 0:
            problems.append(f"batch {batch.id} holds {batch.qty} kg valued at {batch.value}")
    for deal in s.deals.values():
        if deal.qty <= 0 or deal.reserved_value < 0 or not 0 <= deal.returned_qty <= deal.qty:
            problems.append(f"deal {deal.id} has impossible quantities")
    for invoice in s.invoices.values():
        if invoice.fees < 0 or not 0 <= invoice.credits <= invoice.principal:
            problems.append(f"invoice {invoice.id} has impossible amounts")
    return problems
