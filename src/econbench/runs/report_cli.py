"""``econbench report RUNS... --out DIR``: tables, figures and one self-contained ``index.html``
over many runs, then a short summary: per benchmark the runs read and configurations, its
headline table in a few columns, and the files written counted by kind (``--verbose`` lists
every path).

pandas and matplotlib are imported only when the command runs, so ``econbench --help`` and
the other commands start without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table as RichTable

    from econbench.runs.report import Report, Section, Table


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
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also list every file written.")
    ] = False,
) -> None:
    """Tables, figures and one self-contained index.html over many runs.

    Writes Table 2 (beside the paper's), roaster_A's yardstick, Table 3, the AlloBench ladder
    and κ tables (.md, .csv, .tex), figures (figures/*.png) and index.html into --out, then
    prints per benchmark the runs read, its headline table and the files written by kind.
    """
    if out.exists() and not out.is_dir():
        raise _fail(f"--out {out} exists and is not a directory")
    from econbench.runs.report import build_and_write

    try:
        report, written = build_and_write(runs, out, include_partial=include_partial, title=title)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise _fail(str(exc)) from None
    console = _console()
    for section in report.sections:
        print_section(console, report, section)
    console.print(files_line(out, written), markup=False, highlight=False, soft_wrap=True)
    if verbose:
        for path in written:
            typer.echo(str(path))
    if not any(p.suffix == ".csv" for p in written):
        typer.echo(
            "note: no completed run to tabulate (only listed in index.html); "
            "--include-partial tabulates the others",
            err=True,
        )


def _console() -> Console:
    """Standard output; 120 columns when it is not a terminal (logs, pipes)."""
    from rich.console import Console

    console = Console(highlight=False)
    return console if console.is_terminal else Console(width=120, highlight=False)


def print_section(console: Console, report: Report, section: Section) -> None:
    """``NAME: k runs in the tables (m left out), c configurations`` and the headline table."""
    left_out = sum(1 for r in report.excluded if r.benchmark == section.benchmark)
    configurations = len({r.label for r in section.runs})
    console.print(
        f"{section.title}: {len(section.runs)} run(s) in the tables, {left_out} left out; "
        f"{configurations} configuration(s)",
        markup=False,
        soft_wrap=True,
    )
    table = section.headline_table()
    if table is not None:
        wrap = natural_width(table) > console.width  # then numbers wrap at spaces
        console.print(rich_table(table, wrap_numbers=wrap))


def rich_table(table: Table, *, wrap_numbers: bool) -> RichTable:
    """A report table's display frame for the terminal: names wrap; numbers wrap only at
    spaces, and only when ``wrap_numbers`` (a table too wide for the terminal)."""
    from rich.table import Table as RichTable

    shown = RichTable(title=table.title, title_justify="left")
    for i, column in enumerate(table.display.columns):
        if i < table.text_columns:
            shown.add_column(str(column), overflow="fold")
        else:
            shown.add_column(str(column), justify="right", no_wrap=not wrap_numbers)
    for row in table.display.itertuples(index=False):
        shown.add_row(*(str(v) for v in row))
    return shown


NAME_WIDTH = 12
"""What a name column keeps at least before the numbers beside it wrap."""


def natural_width(table: Table) -> int:
    """The terminal width ``table`` needs with its numbers on one line and its names wrapped
    to :data:`NAME_WIDTH` (cells, headers, one space of padding each side, the borders)."""
    width = 1
    for i, column in enumerate(table.display.columns):
        cells = [str(column), *(str(v) for v in table.display[column])]
        widest = max(len(c) for c in cells)
        width += (min(widest, NAME_WIDTH) if i < table.text_columns else widest) + 3
    return width


def files_line(out: Path, written: Sequence[Path]) -> str:
    """The files written, counted by kind: ``Wrote DIR: index.html, 7 tables (.md .csv .tex),
    11 figures (figures/*.png).``"""
    tables = sorted({p.stem for p in written if p.suffix in (".md", ".csv", ".tex")})
    figures = [p for p in written if p.suffix == ".png"]
    parts = [p.name for p in written if p.suffix == ".html"]
    if tables:
        parts.append(f"{len(tables)} table(s) as .md, .csv and .tex")
    if figures:
        parts.append(f"{len(figures)} figure(s) in figures/")
    return f"Wrote {out}: {', '.join(parts)}. --verbose lists every file."


def register(app: typer.Typer) -> None:
    """Add ``report`` to the top-level command line."""
    app.command("report")(report_command)
