"""The running half of the benchmark seam: what the run layer needs to play a benchmark.

A benchmark is the package ``econbench.runs.<name>``, registered by its name in
:data:`BENCHMARKS`. Run directories, sweeps, cost estimates, resume and replay hold no
``if benchmark == …``: a run directory is the benchmark's that its ``meta.json`` names, and
the rest asks the benchmark's :class:`Benchmark`, found by name. Each benchmark implements one
in ``econbench.runs.<name>.adapter`` (a module-level ``BENCHMARK``), imported only when first
asked for, so importing this module imports no benchmark. (The reading half — frames,
reports, figures, the viewer — is :mod:`econbench.runs.reading`.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from econbench.agents.models.pricing import PriceTable
    from econbench.runs.cost_estimate import PlanEstimate
    from econbench.runs.experiment import Entry, ExperimentBase

BENCHMARKS: tuple[str, ...] = ("coffee", "allo")
"""Every benchmark, in the order the run layer lists them: the name its runs' ``meta.json``
records, its experiment files' ``benchmark`` and its package under ``econbench.runs``."""

ProgressFn = Callable[[int, int], None]
"""``on_progress(done, total)``: days of a CoffeeBench run, episodes of an AlloBench cell."""


class ResumeError(RuntimeError):
    """The run cannot be resumed as asked (the message says why and what to do)."""


class StoppedError(RuntimeError):
    """A run stopped cleanly on a model failure beyond retries: what it played stays in its
    directory, the summary says where and why, and ``econbench resume`` continues it."""


class Benchmark(Protocol):
    """How the run layer starts, resumes and replays one benchmark's runs, and expands and
    checks the entries of an experiment file."""

    name: str
    """The benchmark's name in ``meta.json`` and experiment files (``coffee``, ``allo``)."""
    log: str
    """The run's log that a replay compares line by line with the original's."""
    time_fields: frozenset[str]
    """Fields of ``log`` that measure time, left out of a replay's comparison."""

    max_seeds: int
    """The most seeds one experiment entry may list."""

    def parse_seeds(self, text: str) -> list[int]:
        """An experiment's seeds written as text (``"1-3"``, ``"1,5,9-12"``); ``ValueError``
        saying why when they cannot be read."""
        ...

    def experiment_schema(self) -> type[ExperimentBase]:
        """The pydantic model of this benchmark's experiment files."""
        ...

    def entries(self, experiment: Any, source: Path) -> list[Entry]:
        """The sweep entries of a validated experiment (read from ``source``)."""
        ...

    def check(self, entries: list[Entry], source: Path) -> None:
        """Check every entry as its run would before starting (policies, model names, API
        keys); one ``ExperimentError`` lists every problem."""
        ...

    def start(
        self, config: dict[str, Any], run_dir: Path, *, label: str, cache: Path | None
    ) -> dict[str, Any]:
        """Play an entry's ``config`` from the beginning into ``run_dir`` (clearing what a
        crash left there); returns the summary."""
        ...

    def resume(
        self,
        run_dir: Path,
        *,
        force: bool,
        cache: Path | None,
        config: Any | None,
        on_progress: ProgressFn | None,
        cost_limit: float | None = None,
    ) -> dict[str, Any]:
        """Continue the run in ``run_dir`` from its checkpoint (``config``: a replacement
        from :meth:`changed_config`, refused unless ``force`` when it differs; ``cost_limit``:
        stop once the run has cost that many dollars, ``cost_guard.resume_guard``); raises
        ``ResumeError`` when it cannot."""
        ...

    def resume_from_python(self, players: Mapping[str, str]) -> str:
        """How to resume from Python a run whose ``players`` (as ``config.json`` names them)
        were custom objects that cannot be rebuilt from the run directory."""
        ...

    def estimate(self, entries: list[Entry], like: Path | None, prices: PriceTable) -> PlanEstimate:
        """The entries' model calls, tokens and dollars (``econbench sweep --dry-run``), on the
        documented basis or measured in the finished run ``like`` (one of this benchmark's;
        ``EstimateError`` when it is not usable)."""
        ...

    def changed_config(
        self, run_dir: Path, config_file: Path | None, days: int | None, agents: list[str]
    ) -> Any:
        """The run's config with the command line's changes (``econbench resume --config
        / --days / --agent``); ``ValueError`` when the benchmark takes no such change."""
        ...

    def replay(self, config: dict[str, Any], record: Path, out: Path, strict: bool) -> str | None:
        """Play the run of ``config`` again into ``out`` with every model reply served from
        ``record``; returns why the replay stopped early, or ``None``."""
        ...


@cache
def get_benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``; ``ValueError`` for a name no benchmark has."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}")
    module = importlib.import_module(f"econbench.runs.{name}.adapter")
    return module.BENCHMARK
