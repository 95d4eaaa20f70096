"""``econbench replay RUN_DIR --out NEW_DIR [--lenient]``: re-drive a run from its record.

Exit codes: 0 when the replay's log is identical to the original's, 1 when it differs (the
first differing line is shown), 2 for bad input (one ``error:`` line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from econbench.runs.replay import ReplayError, ReplayOutcome, replay_run, shorten
from econbench.runs.store import RunDirError


def replay_command(
    run_dir: Annotated[
        Path, typer.Argument(help="A CoffeeBench run or AlloBench cell with a record.sqlite.")
    ],
    out: Annotated[Path, typer.Option("--out", help="New run directory for the replay.")],
    lenient: Annotated[
        bool,
        typer.Option(
            "--lenient",
            help="Serve the recorded replies in order whatever is asked, instead of stopping "
            "at the first request the record does not hold.",
        ),
    ] = False,
) -> None:
    """Re-run a run with every model reply served from its record (no API keys, no cost),
    then compare the new log with the original's."""
    try:
        outcome = replay_run(run_dir, out, strict=not lenient)
    except (ReplayError, RunDirError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    report(outcome)
    raise typer.Exit(code=0 if outcome.identical else 1)


def report(outcome: ReplayOutcome) -> None:
    """Print where the replay went, why it stopped (if it did) and the comparison."""
    typer.echo(f"replayed into {outcome.out}")
    if outcome.stopped:
        typer.echo(f"the replay stopped: {outcome.stopped}")
    note = ""
    if outcome.ignored_fields:
        fields = ", ".join(outcome.ignored_fields)
        note = f" (sandbox {fields} fields measure time and were left out of the comparison)"
    diff = outcome.difference
    if diff is None:
        typer.echo(f"identical: {outcome.log} matches the original line for line{note}")
        return
    typer.echo(f"{diff.file} differs from the original at line {diff.line}{note}:")
    typer.echo(f"  original: {shorten(diff.original)}")
    typer.echo(f"  replay:   {shorten(diff.replayed)}")


def register(app: typer.Typer) -> None:
    """Add ``replay`` to the ``econbench`` command line."""
    app.command("replay")(replay_command)
