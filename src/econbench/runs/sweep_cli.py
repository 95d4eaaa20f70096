"""``econbench sweep EXPERIMENT.toml``: run a matrix of runs of either benchmark."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from econbench.runs.limits import CONFIRM_ABOVE, int_option

if TYPE_CHECKING:
    from econbench.runs.cost_estimate import PlanEstimate
    from econbench.runs.experiment import Plan

BACKEND_HELP = (
    "local: a pool of --workers processes, each playing many runs; process: one process "
    "per run (crash containment); ray: Ray tasks on a Ray cluster; inline: one run at a "
    "time in this process (--workers 1)."
)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def _stdout() -> Console:
    console = Console()
    return console if console.is_terminal else Console(width=160)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """``kill PID`` stops the sweep like Ctrl-C does: workers first, then a summary."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _matrix_table(plan: Plan, sweep_dir: Path) -> Table:
    """The expanded matrix, with each run's state on disk (new, completed, …)."""
    from econbench.runs.layout import SWEEP_RUNS
    from econbench.runs.resume import run_status

    table = Table(title=f"{plan.name}: {len(plan.entries)} {plan.benchmark} runs → {sweep_dir}")
    keys = list(dict.fromkeys(k for e in plan.entries for k in e.params))
    table.add_column("run")
    for key in keys:
        table.add_column(key)
    table.add_column("status")
    for entry in plan.entries:
        values = [str(entry.params.get(k, "")) for k in keys]
        table.add_row(entry.id, *values, run_status(sweep_dir / SWEEP_RUNS / entry.id))
    return table


def _cost_table(estimate: PlanEstimate) -> Table:
    """Per run: model calls, prompt tokens and dollars (estimated, and with no prompt cache);
    the last row is the sweep's total."""
    table = Table(title=f"Cost estimate (price table {estimate.price_table})", show_footer=True)
    columns = [
        ("run", "total"),
        ("model calls", f"{sum(e.calls for e in estimate.entries):,.0f}"),
        ("input Mtok", f"{sum(e.input_tokens for e in estimate.entries) / 1e6:,.1f}"),
        ("est. $", f"{estimate.cost_usd:,.2f}"),
        ("uncached $", f"{estimate.uncached_usd:,.2f}"),
    ]
    for header, footer in columns:
        table.add_column(header, footer, justify="left" if header == "run" else "right")
    for entry in estimate.entries:
        unpriced = " + unpriced" if entry.unpriced else ""
        table.add_row(
            entry.id,
            f"{entry.calls:,.0f}",
            f"{entry.input_tokens / 1e6:,.1f}",
            f"{entry.cost_usd:,.2f}{unpriced}",
            f"{entry.uncached_usd:,.2f}{unpriced}",
        )
    return table


def _print_estimate(plan: Plan, like: Path | None) -> None:
    from econbench.runs.cost_estimate import estimate_plan

    estimate = estimate_plan(plan, like=like)
    _stdout().print(_cost_table(estimate))
    n = len(estimate.entries)
    per_run = estimate.cost_usd / n if n else 0.0
    typer.echo(
        f"estimated cost: ${estimate.cost_usd:,.2f} in total, ${per_run:,.2f} per run on "
        f"average (${estimate.uncached_usd:,.2f} with no prompt cache)"
    )
    typer.echo(f"basis: {estimate.basis}")
    if estimate.unpriced:
        typer.echo(
            f"not priced (no entry in the price table): {', '.join(estimate.unpriced)}; "
            "their calls are not in the dollar figures"
        )


def confirm_size(plan: Plan, unit: str, *, yes: bool, interactive: bool | None = None) -> None:
    """Above :data:`CONFIRM_ABOVE` entries, ask on a terminal (``SweepError`` when the answer
    is no) and require ``yes`` elsewhere (a one-line ``SweepError`` saying so)."""
    from econbench.runs.sweep import SweepError

    count = len(plan.entries)
    if yes or count <= CONFIRM_ABOVE:
        return
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stderr.isatty()
    if not interactive:
        raise SweepError(
            f"the sweep has {count:,} {unit}s (more than {CONFIRM_ABOVE}); pass --yes to run "
            "them all, or list fewer values"
        )
    if not typer.confirm(f"Run all {count:,} {unit}s?", default=False, err=True):
        raise SweepError(f"not started: the {count:,} {unit}s were not confirmed")


def _note_other_experiment(plan: Plan, sweep_dir: Path) -> None:
    """Dry run: say whether running would need --force, and why."""
    from econbench.runs.layout import SWEEP, read_json
    from econbench.runs.sweep import experiment_changes, sweep_document

    old = read_json(sweep_dir / SWEEP)
    if not isinstance(old, dict):
        return
    lines, _ = experiment_changes(old, sweep_document(plan))
    if lines:
        shown = "\n".join(lines[:25]) + ("\n  …" if len(lines) > 25 else "")
        typer.echo(f"note: {sweep_dir} holds a different experiment; running needs --force:")
        typer.echo(shown)


def sweep_command(
    experiment: Annotated[
        Path, typer.Argument(help="The experiment file (TOML): benchmark, matrix, seeds, models.")
    ],
    out: Annotated[
        Path | None,
        typer.Option(help="Sweep directory (default: the file's 'out', else runs/sweeps/NAME)."),
    ] = None,
    workers: Annotated[int, typer.Option(help="Runs at once.", **int_option())] = 4,
    retries: Annotated[
        int,
        typer.Option(
            help="Attempts after the first for a failing run (each resumes).", **int_option()
        ),
    ] = 2,
    cost_limit: Annotated[
        float | None,
        typer.Option(
            "--cost-limit",
            metavar="USD",
            help="Stop once the sweep's runs have cost this much in total (runs in flight "
            "are stopped and resume next time).",
        ),
    ] = None,
    backend: Annotated[str, typer.Option(help=BACKEND_HELP)] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(help="Ray cluster to join (default: start a local Ray instance)."),
    ] = None,
    cache: Annotated[
        str | None,
        typer.Option(
            help="Response cache file shared by every run ('default' for the user cache)."
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the expanded matrix, the API keys still missing and a cost estimate; "
            "run nothing.",
        ),
    ] = False,
    like: Annotated[
        Path | None,
        typer.Option(
            "--like",
            metavar="RUN_DIR",
            help="Dry run: estimate calls and tokens from this finished run of the same "
            "benchmark (default: the documented basis, see econbench.runs.cost_estimate).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            help="Reuse a sweep directory written by a different experiment (changed runs "
            "start again)."
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option(help="No progress display.")] = False,
) -> None:
    """Run an experiment's matrix of runs (agents × seeds × variants, or AlloBench cells).

    Several runs go at once. Completed runs are skipped, killed or
    stopped ones resumed: the same command continues a sweep.

    Exit codes: 0 all completed, 1 some failed, 3 incomplete (cost
    limit, or runs held by another process), 130 interrupted.
    """
    from econbench.agents.models.cache import cache_path_from_option
    from econbench.runs.cost_estimate import EstimateError
    from econbench.runs.experiment import (
        ExperimentError,
        MissingKeysError,
        check_plan,
        load_plan,
    )
    from econbench.runs.sweep import (
        SweepError,
        SweepOptions,
        plan_outline,
        results_table,
        run_sweep,
    )

    try:
        cache_path = cache_path_from_option(cache)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    if like is not None and not dry_run:
        raise _fail("--like goes with --dry-run (it only shapes the cost estimate)")
    missing: MissingKeysError | None = None
    try:
        plan = load_plan(experiment, check=False)
        options = SweepOptions(
            out=out if out is not None else plan.default_out(),
            workers=workers,
            retries=retries,
            cost_limit=cost_limit,
            backend=backend,
            ray_address=ray_address,
            cache=cache_path,
            force=force,
        )
        options.check()
        if dry_run:
            _stdout().print(_matrix_table(plan, options.out))
            _note_other_experiment(plan, options.out)
        try:
            check_plan(plan)
        except MissingKeysError as exc:
            if not dry_run:
                raise
            missing = exc
        if dry_run:
            _print_estimate(plan, like)
    except (ExperimentError, SweepError, EstimateError) as exc:
        raise _fail(str(exc)) from None
    if dry_run:
        if missing is not None:
            typer.echo(f"missing before a real run: set {', '.join(missing.variables)}")
            typer.echo(str(missing).split(": ", 1)[-1].replace("cannot start the run:\n", ""))
            typer.echo("everything else checks out (dry run: nothing was run)")
        else:
            typer.echo("every entry checks out (dry run: nothing was run)")
        return
    if not quiet:
        typer.echo(f"sweep {plan.name}: {plan_outline(plan, 'run')} → {options.out}")
    try:
        with _sigterm_as_interrupt():
            console = Console(file=sys.stderr)  # not the inline backend's redirected stderr
            result = run_sweep(plan, options, console=console, quiet=quiet)
    except SweepError as exc:
        raise _fail(str(exc)) from None
    _stdout().print(results_table(result))
    typer.echo(f"sweep {result.status}: {options.out} (sweep_summary.json)")
    if result.status == "interrupted":
        typer.echo("interrupted; run the same command again to continue", err=True)
    raise typer.Exit(code=result.exit_code)


def register(app: typer.Typer) -> None:
    """Add ``sweep`` to the top-level command line."""
    app.command("sweep")(sweep_command)
