"""The report's figures as PNG files (matplotlib, no pyplot: ``Figure`` objects render with
the Agg canvas, so nothing touches a display or global state).

Each benchmark draws its own (its reader's ``figures``: :mod:`econbench.runs.coffee.figures`,
:mod:`econbench.runs.allo.figures`); this module holds what they share: the canvas, the
file names and the written figure's record.

This module imports matplotlib; ``econbench.cli`` imports it only when a report is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from econbench.runs.reading import reader_for
from econbench.runs.report import Report

if TYPE_CHECKING:
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

DPI = 110


@dataclass(frozen=True)
class FigureFile:
    """A written figure and how the report introduces it."""

    path: Path
    title: str
    section: str
    """The benchmark whose report section shows it (``coffee``, ``allo``)."""


def figure(width: float, height: float) -> Figure:
    """A figure of the report's resolution, laid out to fit its labels."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def save(fig: Figure, path: Path) -> Path:
    """``fig`` as a PNG without a software stamp, so the same data gives the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})
    return path


def slugs(labels: Sequence[str]) -> dict[str, str]:
    """A distinct file-name-safe slug per label."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for label in labels:
        base = re.sub(r"[^A-Za-z0-9._=-]+", "-", label).strip("-.") or "run"
        slug, i = base[:80], 2
        while slug in used:
            slug, i = f"{base[:76]}-{i}", i + 1
        used.add(slug)
        out[label] = slug
    return out


def integer_locator() -> MaxNLocator:
    """Axis ticks on whole numbers only (days, for instance)."""
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def colormap(name: str) -> Colormap:
    """A private copy of a named colormap (so setting its extremes changes no other figure)."""
    from matplotlib import colormaps

    return colormaps[name].copy()


def write_figures(report: Report, out: Path) -> list[FigureFile]:
    """Every figure for which the report has data, written under ``out``."""
    files: list[FigureFile] = []
    for section in report.sections:
        files += reader_for(section.benchmark).figures(section, out)
    return files
