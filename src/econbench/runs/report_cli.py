"""``econbench report RUNS... --out DIR``: tables, figures and ``index.html`` over many runs.

pandas and matplotlib are imported only when the command runs, so ``econbench --help`` and
the other commands start without them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def report_command(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories, sweep directories or folders holding runs (searched below)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory to write the report into.")],
    include_partial: Annotated[
        bool,
        typer.Option(
            "--include-partial",
            help="Also tabulate stopped and in-progress runs (marked †); by default they are "
            "only listed.",
        ),
    ] = False,
    title: Annotated[str, typer.Option(help="Title of index.html.")] = "econbench report",
) -> None:
    """Tables, figures and one self-contained index.html over many runs.

    Writes Table 2, Table 3, the AlloBench ladder and κ tables (.md, .csv, .tex), figures
    (figures/*.png) and index.html into --out, then lists the files written.
    """
    if out.exists() and not out.is_dir():
        raise _fail(f"--out {out} exists and is not a directory")
    from econbench.runs.report import write_report

    try:
        written = write_report(runs, out, include_partial=include_partial, title=title)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise _fail(str(exc)) from None
    for path in written:
        typer.echo(str(path))
    if not any(p.suffix == ".csv" for p in written):
        typer.echo(
            "note: no completed run to tabulate (only listed in index.html); "
            "--include-partial tabulates the others",
            err=True,
        )


def register(app: typer.Typer) -> None:
    """Add ``report`` to the top-level command line."""
    app.command("report")(report_command)
