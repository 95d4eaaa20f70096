"""Runs as pandas DataFrames, for notebooks and for ``econbench report``.

>>> import econbench
>>> run = econbench.load_run("runs/coffee/20260101-000000-offline")
>>> run.daily.pivot(index="day", columns="firm", values="cash").plot()
>>> runs = econbench.load_sweep("runs/sweeps/paper")
>>> s = runs.summary
>>> s[s.firm == "roaster_A"].groupby("label").net_income.agg(["mean", "std", "count"])

One run gives a :class:`RunFrames`: the run's ``config`` and ``meta`` as dicts and, read
lazily the first time they are used,

- CoffeeBench: ``events``, ``daily`` and ``summary`` (one row per firm), see
  :mod:`econbench.runs.coffee.reading`;
- AlloBench: ``episodes``, ``turns`` and ``summary`` (one row), see
  :mod:`econbench.runs.allo.reading`.

Which frames a run has and how they are read is its benchmark's
(:func:`econbench.runs.reading.reader_for`); this module holds no benchmark's rules.
The frames that do not apply to a run's benchmark are empty. A run still in progress (no
``summary.json``; maybe a torn last log line, which is skipped) gets a *provisional* summary
computed from its logs, flagged by ``provisional = True``. Many runs: :func:`load_runs` and
:func:`load_sweep` return a :class:`RunSet`, whose frames concatenate the runs' frames with
``run`` (the run directory), ``label`` (the configuration, seeds excluded) and ``seed``
columns added.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from econbench.runs import layout
from econbench.runs.layout import Benchmark, RunRef
from econbench.runs.reading import BenchmarkReader, reader_for

KINDS = ("events", "daily", "summary", "episodes", "turns")
EVENT_COLUMNS = ["seq", "day", "time", "type", "firm"]
EMPTY_COLUMNS: dict[str, list[str]] = {
    "events": EVENT_COLUMNS,
    "daily": ["day", "firm", "cash", "revenue_cum", "net_income_cum"],
    "summary": [],
    "episodes": ["seed", "utility", "opt", "commits", "first_sight_commits"],
    "turns": ["seed", "t", "cls", "kind"],
}
"""The columns a run's frame of each kind has even when it is empty (or does not apply to
the run's benchmark), so code over many runs can select them."""


# -- labels -------------------------------------------------------------------------------------


def short(value: Any) -> str:
    """A config value as a label shows it: ``2`` for ``2.0``, lists joined by commas."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(short(v) for v in value)
    return str(value)


def derive_label(benchmark: Benchmark, config: dict[str, Any]) -> str:
    """A readable, deterministic name of a run's configuration; never mentions seeds."""
    return reader_for(benchmark).label(config)


def config_key(benchmark: Benchmark, config: dict[str, Any]) -> str:
    """A hash of everything in the config that defines the configuration (seeds excluded)."""
    ident = reader_for(benchmark).identity(config)
    text = json.dumps(ident, sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:8]


# -- one run ------------------------------------------------------------------------------------


def frame_of(rows: list[dict[str, Any]], columns: Sequence[str] = ()) -> pd.DataFrame:
    """A frame of ``rows`` that has at least ``columns`` (empty ones when missing)."""
    frame = pd.DataFrame.from_records(rows) if rows else pd.DataFrame()
    for col in columns:
        if col not in frame.columns:
            frame[col] = pd.Series(dtype=object)
    return frame


def empty_frame(kind: str) -> pd.DataFrame:
    """A run's frame of ``kind`` when there is nothing in it."""
    return frame_of([], EMPTY_COLUMNS[kind])


@dataclass(eq=False)
class RunFrames:
    """One run directory as DataFrames (read lazily, once)."""

    path: Path
    benchmark: Benchmark
    config: dict[str, Any]
    meta: dict[str, Any]
    status: str
    """``completed``, ``stopped`` or ``running`` (no summary yet)."""
    label: str
    """The configuration's name: ``meta.json``'s ``label``, else derived from the config."""
    seed: int | None
    """The run's seed (CoffeeBench); ``None`` for an AlloBench cell (its episodes have seeds)."""
    raw_summary: dict[str, Any] | None = field(default=None, repr=False)
    _logs: dict[str, list[dict[str, Any]]] = field(default_factory=dict, init=False, repr=False)

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def key(self) -> str:
        """The configuration's identity (seeds excluded), see :func:`config_key`."""
        return config_key(self.benchmark, self.config)

    @property
    def reader(self) -> BenchmarkReader:
        """The run's benchmark, as the run layer reads it."""
        return reader_for(self.benchmark)

    def log_rows(self, name: str) -> list[dict[str, Any]]:
        """The rows of the run's JSONL log ``name``, read once and kept (for a log that more
        than one frame is built from)."""
        if name not in self._logs:
            self._logs[name] = layout.read_jsonl(self.path / name)
        return self._logs[name]

    def _frame(self, kind: str) -> pd.DataFrame:
        frame = self.reader.frame(self, kind)
        return empty_frame(kind) if frame is None else frame

    @cached_property
    def events(self) -> pd.DataFrame:
        return self._frame("events")

    @cached_property
    def daily(self) -> pd.DataFrame:
        return self._frame("daily")

    @cached_property
    def episodes(self) -> pd.DataFrame:
        return self._frame("episodes")

    @cached_property
    def turns(self) -> pd.DataFrame:
        return self._frame("turns")

    @cached_property
    def summary(self) -> pd.DataFrame:
        return self._frame("summary")


def load_run(run: str | Path | RunRef) -> RunFrames:
    """Open one run directory (finished, stopped or still running)."""
    ref = run if isinstance(run, RunRef) else layout.load_ref(Path(run))
    config = layout.read_json(ref.path / layout.CONFIG)
    config = config if isinstance(config, dict) else {}
    reader = reader_for(ref.benchmark)
    seed = reader.seed(ref.meta, config)
    label = ref.meta.get("label") or reader.label(config)
    return RunFrames(
        path=ref.path,
        benchmark=ref.benchmark,
        config=config,
        meta=ref.meta,
        status=ref.status,
        label=str(label),
        seed=seed,
        raw_summary=ref.summary,
    )


def _disambiguate(runs: list[RunFrames]) -> None:
    """Derived labels that two different configurations share get the config hash appended
    (a label set in ``meta.json`` is the user's grouping and is kept)."""
    by_label: dict[str, set[str]] = {}
    for run in runs:
        if not run.meta.get("label"):
            by_label.setdefault(run.label, set()).add(run.key)
    for run in runs:
        if not run.meta.get("label") and len(by_label.get(run.label, ())) > 1:
            run.label = f"{run.label} #{run.key[:6]}"


# -- many runs ----------------------------------------------------------------------------------


def concat(runs: Iterable[RunFrames], kind: str) -> pd.DataFrame:
    """One DataFrame of ``kind`` (events, daily, summary, episodes, turns) over many runs,
    with ``run`` (the run directory), ``label`` and ``seed`` columns in front (``seed`` is the
    run's unless the frame has its own, as episodes and turns do); ``summary`` also gets
    ``benchmark``."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    parts = []
    for run in runs:
        frame = getattr(run, kind)
        if frame.empty:
            continue
        frame = frame.copy()
        if "seed" not in frame.columns:
            frame.insert(0, "seed", [run.seed] * len(frame))
        frame.insert(0, "label", run.label)
        frame.insert(0, "run", str(run.path))
        if kind == "summary":
            frame.insert(3, "benchmark", run.benchmark)
        parts.append(frame)
    if not parts:
        return pd.DataFrame(columns=["run", "label", "seed"])
    return pd.concat(parts, ignore_index=True)


@dataclass(eq=False)
class RunSet:
    """Many runs; each frame kind concatenated over them (lazily, once)."""

    runs: list[RunFrames]
    sweep: dict[str, Any] | None = None
    """``sweep.json`` when the set was loaded from a sweep directory."""

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[RunFrames]:
        return iter(self.runs)

    @cached_property
    def index(self) -> pd.DataFrame:
        """One row per run: run, label, seed, benchmark, status."""
        rows = [
            {
                "run": str(r.path),
                "label": r.label,
                "seed": r.seed,
                "benchmark": r.benchmark,
                "status": r.status,
            }
            for r in self.runs
        ]
        frame = pd.DataFrame(rows, columns=["run", "label", "seed", "benchmark", "status"])
        frame["seed"] = pd.array([r.seed for r in self.runs], dtype="Int64")
        return frame

    @cached_property
    def events(self) -> pd.DataFrame:
        return concat(self.runs, "events")

    @cached_property
    def daily(self) -> pd.DataFrame:
        return concat(self.runs, "daily")

    @cached_property
    def summary(self) -> pd.DataFrame:
        return concat(self.runs, "summary")

    @cached_property
    def episodes(self) -> pd.DataFrame:
        return concat(self.runs, "episodes")

    @cached_property
    def turns(self) -> pd.DataFrame:
        return concat(self.runs, "turns")


def load_runs(paths: Iterable[str | Path] | str | Path) -> list[RunFrames]:
    """Every run under the given run, sweep or parent directories (see
    :func:`econbench.runs.layout.find_runs`; a missing path raises ``FileNotFoundError``)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    runs = [load_run(ref) for ref in layout.find_runs(paths)]
    _disambiguate(runs)
    return runs


def load_sweep(path: str | Path) -> RunSet:
    """A sweep directory (or any folder of runs) as a :class:`RunSet`."""
    root = Path(path)
    sweep = layout.read_json(root / layout.SWEEP) if layout.is_sweep_dir(root) else None
    return RunSet(load_runs([root]), sweep=sweep if isinstance(sweep, dict) else None)
