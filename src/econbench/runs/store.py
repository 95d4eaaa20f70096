"""A run directory: the resolved config, metadata, append-only logs and the summary.

Every file is written so that a crash leaves what was written so far readable: JSONL logs
are appended line by line, and whole-file documents are written to a temporary name and
renamed into place.
"""

from __future__ import annotations

import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from econbench import __version__
from econbench.runs.layout import LOCK

RUN_SCHEMA_VERSION = 1


class RunDirError(ValueError):
    """The run directory cannot be used as asked."""


def default_run_dir(benchmark: str, label: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / benchmark / f"{stamp}-{label}"


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
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
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
        self._fh.write(json.dumps(row, separators=(",", ":")) + "\n")

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()
