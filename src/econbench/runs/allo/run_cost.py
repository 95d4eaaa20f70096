"""What ``allo run`` says and does about the money a model's cell spends.

Before: the cell's estimate (``econbench.runs.allo.cost.cell_estimate``, the model priced as
the cell will price it), for the episodes still to play; ``--dry-run`` prints only that.
During: ``--cost-limit`` wraps the cell's providers in a
:class:`~econbench.runs.cost_guard.CostGuard` that counts what the cell's finished episodes
already cost. After: the model's calls, tokens and dollars, as ``coffee run`` shows them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from econbench.agents.models.registry import ModelSettings
from econbench.allo.episodes.runner import CellSpec

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from econbench.runs.cost_estimate import PlanEstimate
    from econbench.runs.cost_guard import CostGuard


USAGE_COUNTS = (
    ("llm_calls", "calls"),
    ("input_tokens", "input tokens"),
    ("cached_input_tokens", "cached"),
    ("output_tokens", "output tokens"),
)
"""The summary's usage counts the usage table shows, in its column order."""


def finished(out: Path, continuing: bool) -> tuple[int, float]:
    """Episodes a continued cell has finished and what they cost (its ``progress.json``);
    ``(0, 0.0)`` for a cell that starts afresh."""
    if not continuing:
        return 0, 0.0
    from econbench.runs.sweep import run_cost, run_progress

    progress = run_progress(out) or {}
    done = progress.get("done")
    return (done if isinstance(done, int) else 0), (run_cost(out) or 0.0)


def cell_estimate(
    spec: CellSpec, models: dict[str, ModelSettings], out: Path, continuing: bool
) -> tuple[PlanEstimate, float]:
    """The estimate of the episodes still to play, and what the finished ones cost."""
    from econbench.agents.models.pricing import DEFAULT_PRICES
    from econbench.runs.allo.cost import cell_estimate as estimate
    from econbench.runs.cost_estimate import configured_prices

    done, spent = finished(out, continuing)
    prices = DEFAULT_PRICES.overlay(configured_prices(models))
    return estimate(spec, max(0, len(spec.seeds) - done), prices), spent


def missing_keys(spec: CellSpec, models: dict[str, ModelSettings]) -> list[str]:
    """The variables a real run of the cell's model still needs set (none for a policy)."""
    if "/" not in spec.policy:
        return []
    from econbench.agents.models.registry import MissingKeyError, check_keys
    from econbench.runs.allo.factory import cell_settings

    settings = cell_settings(spec, models.get(spec.policy) or ModelSettings())
    try:
        check_keys([spec.policy], {spec.policy: settings})
    except MissingKeyError as exc:
        return list(exc.variables)
    return []


def dry_run_cell(
    spec: CellSpec, models: dict[str, ModelSettings], out: Path, overwrite: bool
) -> None:
    """``allo run --dry-run``: the estimate on stdout; nothing is run or written."""
    from rich.console import Console

    from econbench.runs.cost_preflight import dry_run

    continuing = out.is_dir() and not overwrite and (out / "config.json").exists()
    estimate, spent = cell_estimate(spec, models, out, continuing)
    console = Console()
    dry_run(estimate, console, f"Cost estimate ({spec.slug()})", who=None)
    if spent > 0:
        typer.echo(f"the cell's finished episodes already cost ${spent:,.4f}")
    variables = missing_keys(spec, models)
    if variables:
        typer.echo(f"missing before a real run: set {', '.join(variables)}")


def cost_guard(
    spec: CellSpec, out: Path, cache: Path | None, limit: float | None, overwrite: bool
) -> CostGuard | None:
    """With ``--cost-limit``, the wrap that stops a model's cell once ``limit`` is spent
    (its finished episodes counted), around the cell's own recording."""
    if limit is None or "/" not in spec.policy:
        return None
    from econbench.agents.models.wraps import make_provider_wrap
    from econbench.runs.allo.cell import continues_cell
    from econbench.runs.cost_guard import CostGuard
    from econbench.runs.layout import RECORD

    _, spent = finished(out, continues_cell(out, overwrite))
    return CostGuard(make_provider_wrap(record=out / RECORD, cache=cache), limit, spent)


def stopped_at_limit(exc: BaseException, out: Path, console: Console) -> None:
    """When ``--cost-limit`` stopped the cell: say so and how to go on, exit 3."""
    from rich.markup import escape

    from econbench.runs.cost_guard import EXIT_COST_LIMIT, stopped_by_limit

    reached = stopped_by_limit(exc)
    if reached is None:
        return
    console.print(
        f"[bold yellow]stopped:[/] {escape(str(reached))}; the finished episodes are kept in "
        f"{escape(str(out))}: run the same command with a higher --cost-limit (or `econbench "
        f"resume {escape(str(out))} --cost-limit …`) to play the missing ones",
        soft_wrap=True,
        highlight=False,
    )
    raise typer.Exit(code=EXIT_COST_LIMIT)


def cell_usage_table(summary: dict[str, Any]) -> Table | None:
    """The model's calls, tokens and dollars over the cell, or ``None`` when no model
    played (a reference policy makes no calls)."""
    if not summary.get("llm_calls"):
        return None
    from rich.markup import escape
    from rich.table import Table

    from econbench.runs.cost_display import usd

    table = Table(title="Model usage")
    table.add_column("model", overflow="fold")
    for _, header in USAGE_COUNTS:
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("cost $", justify="right", no_wrap=True)
    cost = summary.get("cost_usd")
    table.add_row(
        escape(str(summary.get("policy"))),
        *(f"{int(summary.get(key) or 0):,}" for key, _ in USAGE_COUNTS),
        usd(float(cost) if isinstance(cost, int | float) else None),
    )
    return table
