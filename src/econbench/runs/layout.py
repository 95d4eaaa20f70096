"""Where things are in a run directory and a sweep directory, and how to find them.

Every tool of the run layer (resume, sweeps, reports, the viewer, the pandas API) finds runs
through this module, so the file names live in one place.

A **CoffeeBench run** directory holds ``config.json``, ``meta.json``, ``events.jsonl``,
``daily.jsonl``, ``summary.json`` (written at the end, or when the run stops),
``checkpoint.json`` (the state at the last tick boundary, sealed by a digest) and
``progress.json``. An **AlloBench cell** holds ``config.json``, ``meta.json``,
``episodes.jsonl``, ``checkpoint.json`` (the config and the hash of the episodes so far),
``summary.json`` and ``progress.json``. Either may hold ``record.sqlite`` (every model
request and response).

A **sweep** directory holds ``sweep.json`` (the expanded matrix) and one run directory per
entry under ``runs/``.

:data:`RUN_FILES` lists every name the run layer writes into a run directory: ``--overwrite``
removes those and nothing else, and only in a directory whose ``meta.json`` says it is a run
(:func:`is_run_meta`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from econbench.runs.benchmark import BENCHMARKS

CONFIG = "config.json"
META = "meta.json"
SUMMARY = "summary.json"
EVENTS = "events.jsonl"
DAILY = "daily.jsonl"
EPISODES = "episodes.jsonl"
CHECKPOINT = "checkpoint.json"
PROGRESS = "progress.json"
RECORD = "record.sqlite"
LOCK = ".lock"
SWEEP = "sweep.json"
SWEEP_RUNS = "runs"
TMP_SUFFIX = ".tmp"
"""A whole-file document is written to ``NAME.tmp``, then renamed to ``NAME``."""
RECORD_SIDECARS = tuple(f"{RECORD}-{part}" for part in ("journal", "wal", "shm"))
"""The files SQLite keeps beside ``record.sqlite`` while it is open (or after a crash)."""
RUN_LOGS = (EVENTS, DAILY, EPISODES)
"""The append-only logs of either benchmark."""
RUN_FILES = frozenset(
    {CONFIG, META, SUMMARY, CHECKPOINT, PROGRESS, RECORD, *RUN_LOGS, *RECORD_SIDECARS}
    | {name + TMP_SUFFIX for name in (CONFIG, META, SUMMARY, CHECKPOINT, PROGRESS)}
)
"""Every file the run layer writes into a run directory, besides its ``.lock``."""

Benchmark = str
"""A benchmark's name, as a run's ``meta.json`` records it (one of
:data:`econbench.runs.benchmark.BENCHMARKS`)."""


def read_json(path: Path) -> Any:
    """A JSON document, or ``None`` when the file is missing or half-written."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def is_run_meta(data: Any) -> bool:
    """Whether ``data`` (a parsed ``meta.json``) is the metadata of an econbench run: the
    marker that tells a run directory from any other."""
    return (
        isinstance(data, dict)
        and data.get("benchmark") in BENCHMARKS
        and isinstance(data.get("schema_version"), int)
        and not isinstance(data.get("schema_version"), bool)
    )


def benchmark_of(run_dir: Path) -> Benchmark | None:
    """The benchmark a run directory's ``meta.json`` names (every run writes it first),
    ``None`` for anything else."""
    meta = read_json(run_dir / META)
    if isinstance(meta, dict) and meta.get("benchmark") in BENCHMARKS:
        return str(meta["benchmark"])
    return None


def is_run_dir(path: Path) -> bool:
    return path.is_dir() and benchmark_of(path) is not None


def is_sweep_dir(path: Path) -> bool:
    return (path / SWEEP).is_file()


@dataclass(frozen=True)
class RunRef:
    """A run directory found on disk, with what can be read without parsing its logs."""

    path: Path
    benchmark: Benchmark
    meta: dict[str, Any]
    summary: dict[str, Any] | None

    @property
    def status(self) -> str:
        """``completed``, ``stopped`` (a model error; resumable), ``running`` (a live process
        is writing it) or ``interrupted`` (killed mid-run; resumable)."""
        if self.summary is None:
            from econbench.runs.lock import is_locked

            return "running" if is_locked(self.path) else "interrupted"
        return str(self.summary.get("status", "completed"))

    @property
    def label(self) -> str:
        """The configuration's name (seeds excluded), as the sweep or the user set it."""
        return str(self.meta.get("label") or self.path.name)


def load_ref(run_dir: Path) -> RunRef:
    bench = benchmark_of(run_dir)
    if bench is None:
        raise FileNotFoundError(f"{run_dir} is not a CoffeeBench or AlloBench run directory")
    meta = read_json(run_dir / META)
    summary = read_json(run_dir / SUMMARY)
    return RunRef(
        path=run_dir,
        benchmark=bench,
        meta=meta if isinstance(meta, dict) else {},
        summary=summary if isinstance(summary, dict) else None,
    )


def iter_run_dirs(root: Path) -> Iterator[Path]:
    """Run directories at or below ``root``, in sorted order (a run's own sub-folders are
    not searched)."""
    if is_run_dir(root):
        yield root
        return
    if not root.is_dir():
        return
    for child in sorted(p for p in root.iterdir() if p.is_dir()):
        yield from iter_run_dirs(child)


def find_runs(paths: Iterable[Path | str]) -> list[RunRef]:
    """Every run under the given run directories, sweep directories or parent folders.

    Raises ``FileNotFoundError`` naming a path that does not exist or holds no run.
    """
    refs: list[RunRef] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist")
        found = list(iter_run_dirs(path))
        if not found:
            raise FileNotFoundError(f"{path} holds no run directory")
        for run_dir in found:
            key = run_dir.resolve()
            if key not in seen:
                seen.add(key)
                refs.append(load_ref(run_dir))
    return refs


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file; a torn last line (a run killed mid-write) is skipped."""
    rows: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.endswith("\n"):
                    break
                rows.append(json.loads(line))
    except FileNotFoundError:
        return []
    return rows
