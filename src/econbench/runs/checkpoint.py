"""Checkpoint and progress files, written so that ``kill -9`` at any moment leaves a usable one.

A checkpoint is one JSON document replaced atomically (write a temporary file, fsync, rename):
a reader sees the previous checkpoint or the new one, never a mix. It records the byte length
of each append-only log at that moment; a resume cuts the logs back to those lengths, so the
events of a tick that was in flight when the process died are dropped and then redone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from econbench.runs.layout import CHECKPOINT, PROGRESS, read_json

CHECKPOINT_SCHEMA = 1


def write_atomic(path: Path, text: str, *, durable: bool = False) -> None:
    """Replace ``path`` with ``text`` in one step; ``durable`` also survives a power cut."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_checkpoint(
    run_dir: Path, data: dict[str, Any], state_json: str, *, durable: bool = True
) -> None:
    """``data`` (small facts) plus ``state`` given as ready JSON text (serialised by the
    fastest means its owner has). ``durable`` adds an fsync, which only a power cut or a
    kernel crash needs (``kill -9`` never does); runs with paid model calls ask for it."""
    head = json.dumps({"schema": CHECKPOINT_SCHEMA, **data}, separators=(",", ":"))
    text = head[:-1] + ',"state":' + state_json + "}"
    write_atomic(run_dir / CHECKPOINT, text, durable=durable)


def read_checkpoint(run_dir: Path) -> dict[str, Any] | None:
    data = read_json(run_dir / CHECKPOINT)
    if not isinstance(data, dict):
        return None
    if data.get("schema") != CHECKPOINT_SCHEMA:
        raise ValueError(
            f"{run_dir / CHECKPOINT} has checkpoint schema {data.get('schema')!r}; this "
            f"version of econbench reads schema {CHECKPOINT_SCHEMA}"
        )
    return data


def write_progress(
    run_dir: Path,
    *,
    benchmark: str,
    status: str,
    done: int,
    total: int,
    unit: str,
    cost_usd: float | None,
) -> None:
    """What a sweep's display and cost limit read while the run goes on."""
    data = {
        "benchmark": benchmark,
        "status": status,
        "done": done,
        "total": total,
        "unit": unit,
        "cost_usd": None if cost_usd is None else round(cost_usd, 6),
    }
    write_atomic(run_dir / PROGRESS, json.dumps(data) + "\n")


def log_length(path: Path) -> int:
    """Bytes of complete lines in an append-only log (a torn last line is not counted)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    return data.rfind(b"\n") + 1


def cut_log(path: Path, length: int) -> None:
    """Cut a log back to ``length`` bytes (what it held at the checkpoint)."""
    size = path.stat().st_size if path.exists() else 0
    if size < length:
        raise ValueError(
            f"{path} holds {size} bytes but its checkpoint recorded {length}: the log was "
            "shortened after the checkpoint, so the run cannot be resumed safely"
        )
    with path.open("r+b") as fh:
        fh.truncate(length)
