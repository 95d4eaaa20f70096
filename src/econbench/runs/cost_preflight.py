"""Before a model plays: what ``coffee run`` and ``allo run`` say and check about money.

Both commands estimate their run with the sweep's estimator (:mod:`econbench.runs.cost_estimate`,
each model priced as the run will price it) and then:

- ``--dry-run``: print the estimate (per firm or cell: model, calls, tokens, dollars; the
  total, the basis, the unpriced models) on stdout and stop, writing nothing;
- ``--cost-limit USD``: refuse to start, in one line, when the estimate is over the limit
  (with what the run already spent, for a continued AlloBench cell), or when a model that
  plays has no price (its spend could not be counted); otherwise the run is played under a
  :class:`~econbench.runs.cost_guard.CostGuard`, which stops it once the limit is spent;
- otherwise, when a model plays, print the estimate on stderr before the first call.

A run only scripted policies play makes no model calls: nothing is printed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from econbench.runs.cost_display import dollars, estimate_lines, estimate_table

if TYPE_CHECKING:
    from rich.console import Console

    from econbench.runs.cost_estimate import PlanEstimate


class CostLimitError(ValueError):
    """A ``--cost-limit`` the run cannot start under (the message, one line, says why)."""


def check_cost_limit(limit: float | None) -> None:
    """A ``--cost-limit`` is a positive, finite number of dollars."""
    if limit is not None and not (math.isfinite(limit) and limit > 0):
        raise CostLimitError(f"--cost-limit must be a positive number of dollars, got {limit:g}")


def check_affordable(estimate: PlanEstimate, limit: float | None, spent: float = 0.0) -> None:
    """Refuse (``CostLimitError``) a run whose spend ``limit`` cannot bound: a model that
    plays has no price, or the estimate (plus what is already ``spent``) is over it."""
    if limit is None or not estimate.actors:
        return
    if estimate.unpriced:
        names = ", ".join(estimate.unpriced)
        raise CostLimitError(
            f"--cost-limit cannot be kept: {names} has no price, so its calls could not be "
            f'counted; give it one in the config\'s [models."{estimate.unpriced[0]}"] table '
            "(input_usd_per_mtok, output_usd_per_mtok)"
        )
    total = estimate.cost_usd + spent
    if total > limit:
        already = f" (with {dollars(spent)} already spent)" if spent > 0 else ""
        raise CostLimitError(
            f"the estimated cost, {dollars(estimate.cost_usd)}{already}, is over --cost-limit "
            f"{dollars(limit)}; raise the limit, or play fewer days, seeds, episodes or "
            "model-played firms (--dry-run shows the estimate)"
        )


def show_estimate(
    estimate: PlanEstimate, console: Console, title: str, who: str | None = "firm"
) -> None:
    """The estimate's table (``who``: its actors' column, see ``estimate_table``) and its
    lines (total, basis, unpriced models)."""
    console.print(estimate_table(estimate, title, who))
    for line in estimate_lines(estimate):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def announce(
    estimate: PlanEstimate, console: Console, title: str, who: str | None = "firm"
) -> None:
    """Before a model plays: the estimate, on ``console`` (stderr); nothing when no model
    plays."""
    if estimate.actors:
        show_estimate(estimate, console, title, who)


def dry_run(estimate: PlanEstimate, console: Console, title: str, who: str | None = "firm") -> None:
    """``--dry-run``: the estimate (or that no model plays) and that nothing ran."""
    if estimate.actors:
        show_estimate(estimate, console, title, who)
    else:
        console.print("no model plays: no model calls, no cost", highlight=False)
    console.print("dry run: nothing was run or written", highlight=False)
