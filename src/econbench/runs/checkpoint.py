"""Checkpoint and progress files, written so that ``kill -9`` at any moment leaves a usable one,
and read so that a damaged, edited or foreign one is refused instead of trusted.

A checkpoint is one JSON document replaced atomically (write a temporary file, fsync, rename):
a reader sees the previous checkpoint or the new one, never a mix. It records, for each
append-only log, the byte length of its complete lines at that moment and the SHA-256 of
that prefix; a resume checks the prefix is still there, unchanged, then cuts the log back to
it, so the events of a tick that was in flight when the process died are dropped and redone.

The head also says whether the checkpoint is the run's last (``final``: :func:`is_final`) and,
for a run that records its model calls, what ``record.sqlite`` held
(``econbench.agents.models.record.CallRecord.seal``), so a resume notices a record that was
deleted, emptied or replaced after the checkpoint.

Everything a resume relies on is covered by one digest: the head (config, log lengths and
hashes, whatever else the benchmark records) and the SHA-256 of the state, which is written
last, as raw JSON text, so its hash can be checked on the exact bytes. The digest detects
damage and hand edits; it is not a signature (whoever can write the run directory can
recompute it), which is why a resume also re-checks the benchmark's own identities.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from econbench.runs.layout import CHECKPOINT, PROGRESS

CHECKPOINT_SCHEMA = 2
"""2: a digest over the head and the state, and a hash of every log prefix."""
_STATE_KEY = b',"state":'
_STATE_TEXT = _STATE_KEY.decode()
_CHUNK = 1 << 20
_PIECE = 1 << 16
"""Characters encoded at a time when a text is written or hashed (``_utf8_pieces``)."""


class RunFileError(ValueError):
    """A run file is damaged, foreign, or inconsistent with the others; the message (one
    line) names the file and the problem."""


def write_atomic(path: Path, text: str, *, durable: bool = False) -> None:
    """Replace ``path`` with ``text`` in one step; ``durable`` also survives a power cut.

    Written through a plain file descriptor, encoded piece by piece (``_utf8_pieces``): a
    run replaces its checkpoint, over half a megabyte, every few days."""
    tmp = path.with_name(path.name + ".tmp")
    # A fresh file, never through a link planted at the temporary name: a stale one (a
    # crash's, or a link) is unlinked, which removes the name and not what it points to.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    try:
        try:
            for piece in _utf8_pieces(text):
                data = memoryview(piece)
                while data:
                    data = data[os.write(fd, data) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):  # a full disk: the old file stays, the torn one goes
            os.unlink(tmp)
        raise


def _utf8_pieces(text: str) -> Iterator[bytes]:
    """``text.encode("utf-8")`` in consecutive pieces (the same bytes: UTF-8 encodes each
    character on its own). A large text encoded whole needs a fresh large buffer, which
    the allocator maps from the system and returns, page faults and all, at every
    checkpoint; pieces below its mapping threshold reuse the same memory."""
    for start in range(0, len(text), _PIECE):
        yield text[start : start + _PIECE].encode("utf-8")


def canonical_sha256(data: Any) -> str:
    """SHA-256 of ``data`` as canonical JSON (sorted keys, no spaces, ASCII)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class LogDigest:
    """The length and running SHA-256 of an append-only log's complete lines.

    A run advances it at every checkpoint, hashing only the bytes appended since the last
    one, so a long run never re-reads its whole log.
    """

    def __init__(self, path: Path, length: int = 0, hasher: Any = None) -> None:
        self.path = path
        self.length = length
        self._hash = hasher if hasher is not None else hashlib.sha256()

    def advance(self) -> dict[str, Any]:
        """Take in the complete lines appended since the last call (the writer must have
        flushed); returns the checkpoint's entry for this log."""
        with self.path.open("rb") as fh:
            fh.seek(self.length)
            new = fh.read()
        end = new.rfind(b"\n") + 1
        self._hash.update(new[:end])
        self.length += end
        return self.entry()

    def entry(self) -> dict[str, Any]:
        return {"length": self.length, "sha256": self._hash.hexdigest()}

    @classmethod
    def verify(cls, path: Path, entry: Any, what: str) -> LogDigest:
        """Check that ``path`` still begins with the prefix ``entry`` recorded (``what``
        names the checkpoint, for the message); returns the digest positioned after it."""
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("length"), int)
            or isinstance(entry.get("length"), bool)
            or entry["length"] < 0
            or not isinstance(entry.get("sha256"), str)
        ):
            raise RunFileError(f"{what} has no valid record of {path.name}")
        length = entry["length"]
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = -1
        if size < length:
            held = "is missing" if size < 0 else f"holds {size} bytes"
            raise RunFileError(
                f"{path} {held} but its checkpoint recorded {length}: the log was shortened "
                "after the checkpoint, so the run cannot be resumed safely"
            )
        hasher = hashlib.sha256()
        last = b"\n"
        with path.open("rb") as fh:
            left = length
            while left:
                chunk = fh.read(min(_CHUNK, left))
                if not chunk:
                    break
                hasher.update(chunk)
                last = chunk[-1:]
                left -= len(chunk)
        if last != b"\n":
            raise RunFileError(
                f"{what} records a length of {path.name} ({length} bytes) that is not at the "
                "end of a line: the checkpoint was edited or damaged"
            )
        if hasher.hexdigest() != entry["sha256"]:
            raise RunFileError(
                f"{path} no longer matches its checkpoint: its first {length} bytes were "
                "changed after they were written"
            )
        return cls(path, length, hasher)


def write_checkpoint(
    run_dir: Path, data: dict[str, Any], state_json: str | None = None, *, durable: bool = True
) -> None:
    """``data`` (the head: small facts) plus ``state`` given as ready JSON text (serialised
    by the fastest means its owner has), sealed by a digest. ``durable`` adds an fsync,
    which only a power cut or a kernel crash needs (``kill -9`` never does); runs with paid
    model calls ask for it."""
    head: dict[str, Any] = {"schema": CHECKPOINT_SCHEMA, **data}
    if state_json is not None:
        hasher, size = hashlib.sha256(), 0
        for piece in _utf8_pieces(state_json):
            hasher.update(piece)
            size += len(piece)
        head["state_sha256"] = hasher.hexdigest()
        head["state_bytes"] = size
    head["digest"] = canonical_sha256(head)
    text = json.dumps(head, separators=(",", ":"), allow_nan=False)
    if state_json is not None:  # one copy of the state, not one per concatenation
        text = "".join((text[:-1], _STATE_TEXT, state_json, "}"))
    write_atomic(run_dir / CHECKPOINT, text, durable=durable)


def read_checkpoint(run_dir: Path, benchmark: str) -> dict[str, Any] | None:
    """The verified checkpoint of a ``benchmark`` run, or ``None`` when there is none.

    Raises ``RunFileError`` (one line naming the file) for one that is unreadable, not JSON,
    of another schema or benchmark, or whose digest does not match its contents.
    """
    path = Path(run_dir) / CHECKPOINT
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RunFileError(f"{path} cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise RunFileError(f"{path} is not valid JSON: the file is damaged") from None
    if not isinstance(data, dict):
        raise RunFileError(f"{path} is not a checkpoint (not a JSON object)")
    if data.get("schema") != CHECKPOINT_SCHEMA:
        raise RunFileError(
            f"{path} has checkpoint schema {data.get('schema')!r}; this version of econbench "
            f"reads schema {CHECKPOINT_SCHEMA}"
        )
    if data.get("benchmark") != benchmark:
        raise RunFileError(
            f"{path} is the checkpoint of a {data.get('benchmark')!r} run, not of this "
            f"{benchmark} run"
        )
    digest = data.pop("digest", None)
    state = data.pop("state", None)
    try:
        expected = canonical_sha256(data)
    except (ValueError, TypeError, RecursionError):
        expected = None
    if expected is None or digest != expected:
        raise RunFileError(
            f"{path} fails its integrity check (its digest does not match its contents): "
            "it was edited or damaged after it was written"
        )
    if "state_sha256" in data:
        _verify_state(path, raw, data)
        data["state"] = state
    return data


def is_final(checkpoint: dict[str, Any]) -> bool:
    """Whether a verified checkpoint was written at the run's end (its ``final`` flag): what
    tells a completed run from an interrupted one, since a ``summary.json`` is a file anyone
    can leave behind. A checkpoint written before the flag existed counts as final, so an
    older run keeps the status its summary gives it."""
    return checkpoint.get("final", True) is True


def _verify_state(path: Path, raw: bytes, head: dict[str, Any]) -> None:
    size = head.get("state_bytes")
    if not isinstance(size, int) or size < 0 or size + len(_STATE_KEY) + 1 > len(raw):
        raise RunFileError(f"{path} records an impossible state size")
    start = len(raw) - 1 - size
    if raw[start - len(_STATE_KEY) : start] != _STATE_KEY or not raw.endswith(b"}"):
        raise RunFileError(f"{path} is not laid out as written: it was edited or damaged")
    if hashlib.sha256(raw[start:-1]).hexdigest() != head["state_sha256"]:
        raise RunFileError(
            f"{path} fails its integrity check (its state does not match its digest): it was "
            "edited or damaged after it was written"
        )


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
        "cost_usd": None if cost_usd is None or not math.isfinite(cost_usd) else round(cost_usd, 6),
    }
    write_atomic(run_dir / PROGRESS, json.dumps(data, allow_nan=False) + "\n")


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
        raise RunFileError(
            f"{path} holds {size} bytes but its checkpoint recorded {length}: the log was "
            "shortened after the checkpoint, so the run cannot be resumed safely"
        )
    if not path.exists():
        path.write_bytes(b"")
        return
    with path.open("r+b") as fh:
        fh.truncate(length)


def record_seal(wrap: Any, path: Path) -> dict[str, Any] | None:
    """What a checkpoint records of the run's call record at ``path``
    (``CallRecord.seal``), or ``None`` when ``wrap`` keeps no record there. Read from the
    record ``wrap`` has open, or from the file while it has not opened it yet (a resumed
    cell before its first model call)."""
    record = getattr(wrap, "record", None)
    if record is not None and _same_file(getattr(record, "path", None), path):
        return record.seal()
    if not _same_file(getattr(wrap, "record_path", None), path):
        return None
    from econbench.agents.models.record import seal_file

    return seal_file(path)


def _same_file(a: Any, b: Path) -> bool:
    return a is not None and Path(a).resolve() == Path(b).resolve()


def check_record(path: Path, seal: Any) -> None:
    """Refuse (``RunFileError``, one line) to resume a run whose record at ``path`` no longer
    holds the model calls its checkpoint sealed (``seal``; ``None``: none was kept). Reads
    only: cutting what came after is ``restore_to_seal``'s, once everything is checked."""
    if seal is None:
        return
    from econbench.agents.models.record import RecordError, restore_to_seal

    try:
        restore_to_seal(path, seal, cut=False)
    except RecordError as exc:
        raise RunFileError(str(exc)) from None
    except OSError as exc:
        raise RunFileError(exc.strerror or str(exc)) from None
