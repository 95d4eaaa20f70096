"""A run directory: the resolved config, metadata, append-only logs and the summary.

Every file is written so that a crash leaves what was written so far readable: JSONL logs
are appended line by line, and whole-file documents are written to a temporary name and
renamed into place.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from econbench import __version__
from econbench.runs.layout import CONFIG, LOCK, META, PROGRESS, RECORD

RUN_SCHEMA_VERSION = 1
MIN_FREE_BYTES = 16 << 20
"""A run directory is refused on a file system with less free space than this: a 90-day run
writes a few megabytes, and a disk that fills up mid-run stops it."""
_SETUP_FILES = frozenset(
    {LOCK, CONFIG, META, PROGRESS, RECORD, *(f"{RECORD}-{x}" for x in ("journal", "wal", "shm"))}
)


class RunDirError(ValueError):
    """The run directory cannot be used as asked."""


def default_run_dir(benchmark: str, label: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / benchmark / f"{stamp}-{label}"


def check_out_dir(path: Path) -> None:
    """Refuse, before anything is written, an output directory that cannot hold a run: a
    path that is a file, a parent that is not a directory, a read-only or full file system.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{path} exists and is not a directory")
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise RunDirError(f"cannot create {path}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise RunDirError(f"cannot write {path}: {probe} is not writable (read-only?)")
    try:
        stats = os.statvfs(probe)
    except OSError:
        return
    free = stats.f_bavail * stats.f_frsize
    if free < MIN_FREE_BYTES:
        raise RunDirError(
            f"cannot write {path}: its file system has only {free >> 20} MiB free (a run "
            f"needs at least {MIN_FREE_BYTES >> 20} MiB)"
        )


def missing_root(path: Path) -> Path | None:
    """The outermost directory of ``path`` that does not exist yet (what creating it adds,
    and what to remove again if the start fails), or ``None`` when it exists."""
    path = Path(path)
    root = None
    while not path.exists() and path.parent != path:
        root, path = path, path.parent
    return root


def holds_unplayed_run(path: Path, logs: Iterable[str]) -> bool:
    """True when ``path`` holds only what a run writes before its first checkpoint (lock,
    config, metadata, an empty record, empty ``logs``): a run killed while it started, that
    can be started again without losing anything."""
    if not path.is_dir():
        return False
    allowed = _SETUP_FILES | set(logs)
    for child in path.iterdir():
        name = child.name.removesuffix(".tmp")
        if name not in allowed or not child.is_file():
            return False
        if name in logs and child.stat().st_size > 0:
            return False
    return True


def prepare_run_dir(path: Path, overwrite: bool = False) -> Path:
    """Create ``path``; refuse to mix a new run into an existing one unless told to."""
    if path.exists() and any(child.name != LOCK for child in path.iterdir()):
        if not overwrite:
            raise RunDirError(
                f"run directory {path} already holds files; choose another --out or pass "
                "--overwrite"
            )
        for child in path.iterdir():
            if child.is_file() and child.name != LOCK:
                child.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_json(path: Path, data: Any) -> None:
    """Write a JSON document atomically (temporary file, then rename)."""
    tmp = path.with_name(path.name + ".tmp")
    # Strict JSON only: a NaN or an infinity here is a bug to hear about, not a file to write.
    text = json.dumps(data, indent=2, sort_keys=False, allow_nan=False)
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, path)


def run_metadata(benchmark: str, seed: int | None, label: str | None = None) -> dict[str, Any]:
    """Versions and provenance; kept out of the event log so that log stays byte-identical.

    ``label`` names the configuration (seeds excluded) for reports that group runs."""
    return {
        "schema_version": RUN_SCHEMA_VERSION,
        "benchmark": benchmark,
        "econbench_version": __version__,
        "python": platform.python_version(),
        "seed": seed,
        "label": label,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class JsonlWriter:
    """Append rows to a JSONL file."""

    def __init__(self, path: Path) -> None:
        self._fh = path.open("a", encoding="utf-8")

    def __call__(self, row: dict[str, Any]) -> None:
        self._fh.write(json.dumps(row, separators=(",", ":"), allow_nan=False) + "\n")

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()
