"""How dollars of model calls are shown: one wording for a cost that is not known.

A call of a model with no price (not in the price table, and no ``input_usd_per_mtok`` …
in its settings) has no cost. Every table of the command line, the report and the viewer
shows such a cost as :data:`UNPRICED`, and a total that is partly unknown as the priced part
followed by ``+ unpriced`` (the bill is at least that much) — never as 0, "–" or "n/a".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table

    from econbench.runs.cost_estimate import PlanEstimate

UNPRICED = "unpriced"
"""The cost of calls whose model has no price."""


def usd(value: float | None, *, unpriced: bool = False, cents: bool | None = None) -> str:
    """Dollars as a table shows them: ``1,234.57``; small sums with four decimals
    (``0.0123``) unless ``cents``; ``None`` is :data:`UNPRICED`, and ``unpriced`` marks a
    total with some unpriced calls (``1.23 + unpriced``; ``unpriced`` alone when nothing of
    it is priced)."""
    if value is None or (unpriced and value == 0):
        return UNPRICED
    short = cents if cents is not None else abs(value) >= 1
    text = f"{value:,.2f}" if short else f"{value:,.4f}"
    return f"{text} + {UNPRICED}" if unpriced else text


def dollars(value: float | None, *, unpriced: bool = False) -> str:
    """:func:`usd` in running text, with its dollar sign: ``$1,234.57``, ``$1.23 +
    unpriced``, ``unpriced``."""
    text = usd(value, unpriced=unpriced, cents=True)
    return text if text == UNPRICED else f"${text}"


def estimate_table(estimate: PlanEstimate, title: str, who: str | None = "firm") -> Table:
    """One row per model-played actor (a CoffeeBench firm, an AlloBench cell's model):
    calls, tokens and estimated dollars; the footer is the total. ``who`` heads the
    actors' column (``None``: no such column, one model). Fits 80 columns."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title, show_footer=len(estimate.actors) > 1, title_justify="left")
    if who is not None:
        table.add_column(who, "total", no_wrap=True)
    table.add_column("model", "total" if who is None else "", overflow="fold")
    columns = [
        ("calls", f"{estimate.calls:,.0f}"),
        ("input Mtok", f"{estimate.input_tokens / 1e6:,.1f}"),
        ("output Mtok", f"{estimate.output_tokens / 1e6:,.2f}"),
        ("est. $", usd(estimate.cost_usd, unpriced=bool(estimate.unpriced), cents=True)),
    ]
    for header, footer in columns:
        table.add_column(header, footer, justify="right", no_wrap=True)
    for actor in estimate.actors:
        table.add_row(
            *([actor.actor] if who is not None else []),
            escape(actor.model),
            f"{actor.calls:,.0f}",
            f"{actor.input_tokens / 1e6:,.1f}",
            f"{actor.output_tokens / 1e6:,.2f}",
            usd(actor.cost_usd, cents=True),
        )
    return table


def estimate_lines(estimate: PlanEstimate) -> list[str]:
    """The total in words, the basis, and the models that have no price."""
    unpriced = bool(estimate.unpriced)
    if unpriced and not estimate.cost_usd:
        total = f"estimated cost: {UNPRICED} (no model that plays has a price)"
    else:
        total = (
            f"estimated cost: {dollars(estimate.cost_usd, unpriced=unpriced)} "
            f"({dollars(estimate.uncached_usd, unpriced=unpriced)} with no prompt cache; "
            f"price table {estimate.price_table})"
        )
    lines = [total, f"basis: {estimate.basis}"]
    if estimate.unpriced:
        lines.append(
            f"{UNPRICED} (no price in the price table or the model's settings): "
            f"{', '.join(estimate.unpriced)}; give one in the config's "
            '[models."NAME"] table (input_usd_per_mtok, output_usd_per_mtok)'
        )
    return lines
