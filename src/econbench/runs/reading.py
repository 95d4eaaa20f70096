"""The reading half of the benchmark seam: what the run layer's readers need from a benchmark.

Frames, the report, its figures and the viewer hold no ``if benchmark == …``: they ask the
benchmark's :class:`BenchmarkReader`, found by name. Each benchmark implements one in
``econbench.runs.<name>.reading`` (a module-level ``READER``), imported only when first asked
for, so importing this module imports no benchmark.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from econbench.runs.benchmark import BENCHMARKS

if TYPE_CHECKING:
    import pandas as pd

    from econbench.runs.figures import FigureFile
    from econbench.runs.frames import RunFrames
    from econbench.runs.report import Section


class BenchmarkReader(Protocol):
    """How the run layer reads, tabulates, draws and shows one benchmark's runs."""

    name: str
    """The benchmark's name in ``meta.json`` (``coffee``, ``allo``)."""
    title: str
    """The name a reader sees (``CoffeeBench``)."""

    def label(self, config: dict[str, Any]) -> str:
        """A readable, deterministic name of a saved config; never mentions seeds."""
        ...

    def identity(self, config: dict[str, Any]) -> dict[str, Any]:
        """The part of a saved config that defines the configuration (seeds excluded)."""
        ...

    def seed(self, meta: dict[str, Any], config: dict[str, Any]) -> int | None:
        """The run's seed, or ``None`` when the run has none of its own."""
        ...

    def frame(self, run: RunFrames, kind: str) -> pd.DataFrame | None:
        """The run's frame of ``kind`` (see ``econbench.runs.frames.KINDS``), or ``None``
        when the benchmark has no such frame (the caller then gives an empty one)."""
        ...

    def section(self, runs: Sequence[RunFrames]) -> Section:
        """The benchmark's part of a report over ``runs`` (the runs of every benchmark that
        enter the tables; the reader keeps its own)."""
        ...

    def figures(self, section: Section, out: Path) -> list[FigureFile]:
        """The section's figures, written under ``out``."""
        ...

    def viewer_data(self, run_dir: Path) -> Any:
        """The viewer's incremental reader of one run directory."""
        ...

    def brief(self, config: dict[str, Any], meta: dict[str, Any]) -> str:
        """A few words telling runs apart in the viewer's list."""
        ...


@cache
def reader_for(name: str) -> BenchmarkReader:
    """The reader of benchmark ``name``; ``ValueError`` for a name no benchmark has."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}")
    module = importlib.import_module(f"econbench.runs.{name}.reading")
    return module.READER
