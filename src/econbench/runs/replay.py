"""Re-drive a finished or stopped run from its record, and check it comes out the same.

``replay_run(RUN_DIR, NEW_DIR)`` plays the run again from its own ``config.json`` with every
model-driven agent served from ``RUN_DIR/record.sqlite`` (``ReplayProvider``): no API key,
no network, no cost. The new directory is a normal run directory (with a record of its own).
The replay's log (``Benchmark.log``) is then compared with the original's, line by line:
``events.jsonl`` for CoffeeBench, ``episodes.jsonl`` for an AlloBench cell. The environment is
deterministic given its seed and the calls, so a faithful record gives an identical log; a
difference points at the first place the environment or the agent loop behaves differently
from when the run was made (the regression-test use), and a strict replay stops at the first
request the record does not hold, naming the agent, the call and the first differing message.

A run played by a custom policy (a Python object, recorded as ``custom:<qualified name>``)
is refused: only the models are in the record, and the custom player cannot be rebuilt from
the run directory.

A record that no longer holds the calls the run's checkpoint sealed (emptied, cut or swapped
after the run) is refused before anything is played, with a message that says so.

AlloBench's R3 sandbox records ``wall_s`` fields that measure time; they are left out of the
comparison, and the result says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from econbench.agents.models.base import FatalModelError
from econbench.agents.models.record import RecordError, RecordStorageError
from econbench.agents.models.registry import (
    SCRIPTED,
    MissingKeyError,
    ModelConfigError,
    ModelSettings,
    is_model_name,
    register_scripted,
    resolve_api_key,
    resolve_base_url,
    unregister_scripted,
)
from econbench.runs.benchmark import get_benchmark
from econbench.runs.checkpoint import RunFileError, check_record, read_checkpoint
from econbench.runs.layout import CONFIG, RECORD, load_ref, read_json
from econbench.runs.resume import custom_players

PLACEHOLDER_KEY = "replay-without-a-key"
PLACEHOLDER_URL = "http://replay.invalid/v1"
_SHOWN = 300


class ReplayError(ValueError):
    """The replay cannot start as asked (the message says why)."""


@dataclass(frozen=True)
class LogDifference:
    """The first line (1-based) where two logs differ; ``None`` where a log has ended."""

    file: str
    line: int
    original: str | None
    replayed: str | None


@dataclass(frozen=True)
class ReplayOutcome:
    """What a replay found: the compared log, its first difference, and whether (and why)
    the replayed run stopped early."""

    benchmark: str
    out: Path
    log: str
    difference: LogDifference | None
    stopped: str | None
    ignored_fields: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return self.difference is None


# --------------------------------------------------------------------------- comparison


def _strip(value: Any, drop: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_strip(v, drop) for v in value]
    return value


def _same(a: str, b: str, drop: frozenset[str]) -> bool:
    if a == b:
        return True
    if not drop:
        return False
    try:
        return _strip(json.loads(a), drop) == _strip(json.loads(b), drop)
    except json.JSONDecodeError:
        return False


def first_difference(
    original: Path, replayed: Path, drop: frozenset[str] = frozenset()
) -> LogDifference | None:
    """Compare two JSONL logs line by line (``drop``: keys left out at any depth)."""
    try:
        old = original.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        old = []
    try:
        new = replayed.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        new = []
    for i in range(max(len(old), len(new))):
        a = old[i] if i < len(old) else None
        b = new[i] if i < len(new) else None
        if a is None or b is None or not _same(a, b, drop):
            return LogDifference(original.name, i + 1, a, b)
    return None


def shorten(line: str | None, limit: int = _SHOWN) -> str:
    if line is None:
        return "(the log ends here)"
    return line if len(line) <= limit else line[:limit] + f"… ({len(line)} characters)"


# --------------------------------------------------------------------------- stand-ins


def _never_called(messages: Any, tools: Any) -> None:
    raise FatalModelError("a replay stand-in was asked for a reply; the record serves them")


@contextmanager
def keyless(models: Mapping[str, ModelSettings]) -> Iterator[None]:
    """Let ``models`` be built without what only a live call needs, for the duration.

    A replay builds each agent's provider as the run did, then replaces it by the record,
    so the provider is never called: a missing API key or server URL gets a placeholder
    (real ones are left alone), and a ``scripted/NAME`` not registered in this process gets
    a stand-in. Everything is restored on exit.
    """
    saved: dict[str, str | None] = {}
    registered: list[str] = []

    def placeholder(exc: MissingKeyError, value: str) -> None:
        for var in exc.variables[:1]:
            saved.setdefault(var, os.environ.get(var))
            os.environ[var] = value

    try:
        for name, settings in models.items():
            if name.partition("/")[0].strip().lower() == SCRIPTED:
                if not is_model_name(name):
                    registered.append(register_scripted(name, _never_called))
                continue
            try:
                resolve_api_key(name, settings)
            except MissingKeyError as exc:
                placeholder(exc, PLACEHOLDER_KEY)
            try:
                resolve_base_url(name, settings)
            except MissingKeyError as exc:
                placeholder(exc, PLACEHOLDER_URL)
        yield
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        for name in registered:
            unregister_scripted(name)


# --------------------------------------------------------------------------- replay


def _prepare(run_dir: Path, out: Path) -> tuple[str, Path]:
    if not run_dir.exists():
        raise ReplayError(f"{run_dir} does not exist")
    try:
        ref = load_ref(run_dir)
    except FileNotFoundError as exc:
        raise ReplayError(str(exc)) from None
    config = read_json(run_dir / CONFIG)
    players = custom_players(config) if isinstance(config, dict) else {}
    if players:
        who = ", ".join(f"{k} = {v!r}" for k, v in players.items())
        raise ReplayError(
            f"{run_dir} was played by a custom policy ({who}), which cannot be rebuilt from "
            "the run directory, so it cannot be replayed"
        )
    record = run_dir / RECORD
    if not record.is_file():
        raise ReplayError(
            f"{run_dir} has no {RECORD}: it was run without recording, or no model played in it"
        )
    if out.resolve() == run_dir.resolve():
        raise ReplayError("--out must be a new directory, not the run being replayed")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReplayError(f"--out {out} already exists and is not an empty directory")
    _check_sealed(run_dir, ref.benchmark, record)
    return ref.benchmark, record


def _check_sealed(run_dir: Path, benchmark: str, record: Path) -> None:
    """Refuse a record that no longer holds the calls the run's checkpoint sealed (emptied,
    cut or replaced after the run): its replay would diverge for want of them, far from
    the cause. A run whose checkpoint is missing or damaged is not checked (the replay
    needs only its config and its record)."""
    try:
        checkpoint = read_checkpoint(run_dir, benchmark)
    except RunFileError:
        return
    if checkpoint is None:
        return
    try:
        check_record(record, checkpoint.get("record"))
    except RunFileError as exc:
        raise ReplayError(f"cannot replay {run_dir}: {exc}") from None


def replay_run(run_dir: Path, out: Path, *, strict: bool = True) -> ReplayOutcome:
    """Replay the run in ``run_dir`` into ``out`` and compare the logs (see the module)."""
    run_dir, out = Path(run_dir), Path(out)
    benchmark, record = _prepare(run_dir, out)
    config = read_json(run_dir / CONFIG)
    if not isinstance(config, dict):
        raise ReplayError(f"{run_dir / CONFIG} is missing or not a JSON object")
    bench = get_benchmark(benchmark)
    log, drop = bench.log, bench.time_fields
    try:
        stopped = bench.replay(config, record, out, strict)
    except (ValidationError, ModelConfigError, RecordError) as exc:
        raise ReplayError(f"cannot replay {run_dir}: {_one_line(exc)}") from None
    except RecordStorageError as exc:  # the record is locked by another process
        raise ReplayError(f"cannot replay {run_dir}: {exc.strerror or exc}") from None
    difference = first_difference(run_dir / log, out / log, drop)
    ignored = tuple(sorted(drop)) if drop and _mentions(run_dir / log, drop) else ()
    return ReplayOutcome(benchmark, out, log, difference, stopped, ignored)


def _one_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors()
        )
    return str(exc)


def _mentions(path: Path, keys: frozenset[str]) -> bool:
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return any(f'"{key}"' in text for key in keys)
