"""The report over many runs: the paper's tables as Markdown, CSV and LaTeX, figures, and one
self-contained ``index.html`` (``econbench report``).

Each benchmark contributes a :class:`Section` (its reader's ``section``, see
:mod:`econbench.runs.reading`): CoffeeBench's Tables 2 and 3
(:mod:`econbench.runs.coffee.report`), AlloBench's ladder, paired ladder, κ and paper-check
tables (:mod:`econbench.runs.allo.report`). Each table is a :class:`Table`: numeric ``data``
for the CSV, formatted ``display`` for Markdown, LaTeX and HTML; the same numbers in all three.
This module holds what they share: the statistics, run selection, the writers and the whole
report.

Only completed runs enter the tables unless ``include_partial``; the others are listed with
their status. Included partial runs are marked with † (their numbers are provisional).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from econbench.runs.frames import RunFrames, load_runs
from econbench.runs.reading import BENCHMARKS, reader_for

PARTIAL_MARK = "†"
PARTIAL_NOTE = (
    f"{PARTIAL_MARK} includes runs that had not completed (stopped, or still running); "
    "their numbers are provisional."
)


@dataclass
class Table:
    """One report table: ``data`` is what the CSV holds, ``display`` the formatted cells."""

    name: str
    title: str
    data: pd.DataFrame
    display: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    breaks: list[int] = field(default_factory=list)
    """Display rows before which a rule separates groups (e.g. models after references)."""
    text_columns: int = 1
    """How many leading display columns are names (left-aligned); the rest are numbers."""


# -- numbers ------------------------------------------------------------------------------------


def mean_std(values: Iterable[float | None]) -> tuple[float, float, int]:
    """Mean, std (ddof = 1; NaN for one value) and n; the mean is NaN if any value is missing."""
    vals = [math.nan if v is None else float(v) for v in values]
    n = len(vals)
    if n == 0 or any(math.isnan(v) for v in vals):
        return math.nan, math.nan, n
    arr = np.asarray(vals)
    return float(arr.mean()), float(arr.std(ddof=1)) if n > 1 else math.nan, n


def ratio_se(num: Sequence[float], den: Sequence[float]) -> float:
    """Delta-method standard error of the pooled ratio R = Σ num / Σ den over n units:
    SE = sqrt(Σ (num_i − R·den_i)² / (n (n − 1))) / mean(den). NaN for n < 2 or Σ den = 0."""
    x = np.asarray(num, dtype=float)
    y = np.asarray(den, dtype=float)
    n = len(x)
    if n < 2 or y.sum() <= 0:
        return math.nan
    r = x.sum() / y.sum()
    resid = x - r * y
    return float(math.sqrt((resid**2).sum() / (n * (n - 1))) / y.mean())


def mean_se(values: Sequence[float]) -> float:
    """Standard error of a mean (NaN for fewer than two values)."""
    arr = np.asarray(values, dtype=float)
    return float(arr.std(ddof=1) / math.sqrt(len(arr))) if len(arr) > 1 else math.nan


def _num(value: float, digits: int) -> str:
    return f"{value:,.{digits}f}"


def fmt_mean_std(mean: float, std: float, digits: int = 2, na: str = "n/a") -> str:
    """``mean ± std``; ``mean`` alone when std is undefined; ``na`` when mean is missing."""
    if mean is None or math.isnan(mean):
        return na
    if std is None or math.isnan(std):
        return _num(mean, digits)
    return f"{_num(mean, digits)} ± {_num(std, digits)}"


def fmt_pm(value: float | None, se: float | None, digits: int = 3, scale: float = 1.0) -> str:
    """``value ± se`` (scaled, e.g. 100 for percent); ``–`` for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = f"{value * scale:.{digits}f}"
    if se is not None and not math.isnan(se):
        text += f" ± {se * scale:.{digits}f}"
    return text


# -- run selection and grouping -----------------------------------------------------------------


def split_runs(
    runs: Sequence[RunFrames], include_partial: bool = False
) -> tuple[list[RunFrames], list[RunFrames]]:
    """(runs entering the tables, runs left out): completed ones, plus the rest if asked."""
    used = [r for r in runs if r.completed or include_partial]
    return used, [r for r in runs if r not in used]


def group_by_label(runs: Iterable[RunFrames]) -> dict[str, list[RunFrames]]:
    """Runs per configuration label, in order of first appearance."""
    groups: dict[str, list[RunFrames]] = {}
    for run in runs:
        groups.setdefault(run.label, []).append(run)
    return groups


def seed_key(run: RunFrames) -> int | str:
    """What makes two runs of one configuration the same observation: their seed. A run
    without a seed is its own observation (keyed by its directory)."""
    return run.seed if run.seed is not None else f"run:{run.path}"


def group_by_seed(runs: Iterable[RunFrames]) -> dict[int | str, list[RunFrames]]:
    """Runs per seed (see :func:`seed_key`), in order of first appearance: a configuration's
    runs of one seed are one observation, so a repeated seed never counts twice."""
    groups: dict[int | str, list[RunFrames]] = {}
    for run in runs:
        groups.setdefault(seed_key(run), []).append(run)
    return groups


def seed_set_text(seeds: Iterable[Any]) -> str:
    """A seed set in a few characters: ``2000–2023``, ``1, 2, 5–9``; runs without a seed as
    ``k unseeded``. Ranges of three or more consecutive seeds collapse to ``a–b``."""
    given = list(seeds)
    ints = sorted({int(s) for s in given if isinstance(s, int | np.integer)})
    others = len({s for s in given if not isinstance(s, int | np.integer)})
    parts: list[str] = []
    i = 0
    while i < len(ints):
        j = i
        while j + 1 < len(ints) and ints[j + 1] == ints[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{ints[i]}–{ints[j]}")
        else:
            parts += [str(v) for v in ints[i : j + 1]]
        i = j + 1
    if others:
        parts.append(f"{others} unseeded")
    return ", ".join(parts) or "–"


def shown_label(label: str, runs: Sequence[RunFrames]) -> str:
    return label + (f" {PARTIAL_MARK}" if any(not r.completed for r in runs) else "")


def partial_notes(rows: list[dict[str, Any]]) -> list[str]:
    return [PARTIAL_NOTE] if any(r.get("partial") for r in rows) else []


# -- writers ------------------------------------------------------------------------------------


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table with its title and notes."""
    cols = list(table.display.columns)
    lines = [f"### {table.title}", ""]
    lines.append("| " + " | ".join(_md_cell(c) for c in cols) + " |")
    lines.append(
        "|" + "|".join(":---" if i < table.text_columns else "---:" for i in range(len(cols))) + "|"
    )
    for row in table.display.itertuples(index=False):
        lines.append("| " + " | ".join(_md_cell(v) for v in row) + " |")
    lines += ["", *[f"- {note}" for note in table.notes]] if table.notes else []
    return "\n".join(lines) + "\n"


_TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "±": r"$\pm$",
    "†": r"$^\dagger$",
    "–": "--",
    "—": "---",
    "Σ": r"$\Sigma$",
    "×": r"$\times$",
    "√": r"$\surd$",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX_ESCAPES))


def tex_escape(text: Any) -> str:
    return _TEX_RE.sub(lambda m: _TEX_ESCAPES[m.group(0)], str(text))


def to_latex(table: Table) -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
    cols = list(table.display.columns)
    text = min(table.text_columns, len(cols))
    align = "l" * text + "r" * (len(cols) - text)
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        rf"\caption{{{tex_escape(table.title)}}}",
        rf"\label{{tab:{table.name}}}",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(tex_escape(c) for c in cols) + r" \\",
        r"\midrule",
    ]
    for i, row in enumerate(table.display.itertuples(index=False)):
        if i in table.breaks:
            lines.append(r"\midrule")
        lines.append(" & ".join(tex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [rf"\par\smallskip{{\footnotesize {tex_escape(n)}}}" for n in table.notes]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_table(table: Table, out: Path) -> list[Path]:
    """``<name>.md``, ``<name>.csv`` and ``<name>.tex`` in ``out``."""
    paths = [out / f"{table.name}.{ext}" for ext in ("md", "csv", "tex")]
    paths[0].write_text(to_markdown(table), encoding="utf-8")
    table.data.to_csv(paths[1], index=False)
    paths[2].write_text(to_latex(table), encoding="utf-8")
    return paths


# -- the whole report ---------------------------------------------------------------------------


@dataclass
class Section:
    """One benchmark's part of a report: its tables, and what its figures draw from."""

    benchmark: str
    title: str
    runs: list[RunFrames]
    """The benchmark's runs that enter the tables."""
    tables: list[Table]
    page: tuple[str, ...] = ()
    """The tables ``index.html`` shows, in this order (the others are only written as files)."""
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    """Frames the tables were computed from, kept for the figures (AlloBench: ``episodes``,
    ``cells``)."""
    headline: Table | None = None
    """The section's result in a few columns, for the summary ``econbench report`` prints
    (default: the first table ``index.html`` shows)."""

    def page_tables(self) -> list[Table]:
        """The tables ``index.html`` shows."""
        by_name = {t.name: t for t in self.tables}
        return [by_name[name] for name in self.page if name in by_name]

    def headline_table(self) -> Table | None:
        """:attr:`headline`, else the first table of the page, else the first table."""
        if self.headline is not None:
            return self.headline
        shown = self.page_tables() or self.tables
        return shown[0] if shown else None


@dataclass
class Report:
    """Everything a report shows, before it is written."""

    title: str
    runs: list[RunFrames]
    excluded: list[RunFrames]
    sections: list[Section]
    include_partial: bool = False

    @property
    def tables(self) -> list[Table]:
        """Every section's tables, in report order."""
        return [table for section in self.sections for table in section.tables]

    def section(self, benchmark: str) -> Section | None:
        """The section of ``benchmark``; ``None`` when the report has no run of it."""
        return next((s for s in self.sections if s.benchmark == benchmark), None)


def build_report(
    runs: Sequence[RunFrames], *, include_partial: bool = False, title: str = "econbench report"
) -> Report:
    """Select the runs and build every table for which there is data: one section per
    benchmark that has runs in the tables, in :data:`~econbench.runs.reading.BENCHMARKS`
    order."""
    used, excluded = split_runs(runs, include_partial)
    sections = []
    for name in BENCHMARKS:
        mine = [r for r in used if r.benchmark == name]
        if mine:
            sections.append(reader_for(name).section(mine))
    return Report(title, list(used), excluded, sections, include_partial)


def write_report(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    include_partial: bool = False,
    title: str = "econbench report",
) -> list[Path]:
    """Find the runs under ``paths``, write tables, figures and ``index.html`` into ``out``;
    returns the files written. Raises ``FileNotFoundError`` for a missing path or no runs,
    ``NotADirectoryError`` when ``out`` is a file."""
    return build_and_write(paths, out, include_partial=include_partial, title=title)[1]


def build_and_write(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    include_partial: bool = False,
    title: str = "econbench report",
) -> tuple[Report, list[Path]]:
    """:func:`write_report`, returning the report too (what ``econbench report`` summarises)."""
    from econbench.runs.figures import write_figures
    from econbench.runs.report_html import write_html

    target = Path(out)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"--out {target} exists and is not a directory")
    runs = load_runs(paths)
    report = build_report(runs, include_partial=include_partial, title=title)
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for table in report.tables:
        written += write_table(table, target)
    figures = write_figures(report, target / "figures")
    written += [f.path for f in figures]
    written.append(write_html(report, figures, target / "index.html"))
    return report, written
