"""A run directory: the resolved config, metadata, append-only logs and the summary.

Every file is written so that a crash leaves what was written so far readable: JSONL logs
are appended line by line, and whole-file documents are written to a temporary name and
renamed into place.
"""

from __future__ import annotations

import errno
import json
import os
import platform
import stat
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from econbench import __version__
from econbench.runs.layout import (
    CHECKPOINT,
    CONFIG,
    LOCK,
    META,
    PROGRESS,
    RECORD,
    RECORD_SIDECARS,
    RUN_FILES,
    TMP_SUFFIX,
    is_run_meta,
)

RUN_SCHEMA_VERSION = 1
MIN_FREE_BYTES = 16 << 20
"""A run directory is refused on a file system with less free space than this: a 90-day run
writes a few megabytes, and a disk that fills up mid-run stops it."""
_SETUP_FILES = frozenset({LOCK, CONFIG, META, PROGRESS, RECORD, *RECORD_SIDECARS})
_BEFORE_META = frozenset({LOCK, META + TMP_SUFFIX})
"""What a run directory may hold before its ``meta.json`` is written (it is written first)."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class RunDirError(ValueError):
    """The run directory cannot be used as asked."""


def default_run_dir(benchmark: str, label: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / benchmark / f"{stamp}-{label}"


def shown(path: Path) -> str:
    """``path`` as an error message names it (``.``, what ``--out ""`` gives, by its name)."""
    text = str(path)
    return f"{Path.cwd()} (the current directory)" if text in ("", ".") else text


def check_out_dir(path: Path) -> None:
    """Refuse, before anything is written, an output directory that cannot hold a run: a
    path that is a file, a parent that is not a directory, a read-only or full file system,
    a ``.lock`` that is not a lock file.
    """
    from econbench.runs.lock import check_lock_file  # lock.py imports this module

    path = Path(path)
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{shown(path)} exists and is not a directory")
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise RunDirError(f"cannot create {path}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise RunDirError(
            f"cannot write {shown(path)}: {shown(probe)} is not writable (read-only?)"
        )
    if probe == path:
        check_lock_file(path)
    try:
        stats = os.statvfs(probe)
    except OSError:
        return
    free = stats.f_bavail * stats.f_frsize
    if free < MIN_FREE_BYTES:
        raise RunDirError(
            f"cannot write {shown(path)}: its file system has only {free >> 20} MiB free (a run "
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


def _entries(path: Path) -> dict[str, os.stat_result]:
    """The entries of directory ``path`` (besides its ``.lock``), each ``lstat``-ed: a
    symbolic link is an entry of its own, never the file it points to. Empty when ``path``
    is missing."""
    try:
        with os.scandir(path) as it:
            return {e.name: e.stat(follow_symlinks=False) for e in it if e.name != LOCK}
    except (FileNotFoundError, NotADirectoryError):
        return {}


def is_run(path: Path) -> bool:
    """Whether ``path`` holds a run: its ``meta.json``, a regular file, is an econbench run's
    (:func:`econbench.runs.layout.is_run_meta`)."""
    meta = Path(path) / META
    try:
        if not stat.S_ISREG(meta.lstat().st_mode):
            return False
        return is_run_meta(json.loads(meta.read_text(encoding="utf-8")))
    except (OSError, ValueError, RecursionError):
        return False


def holds_unplayed_run(path: Path, logs: Iterable[str]) -> bool:
    """True when ``path`` holds only what a run writes before its first checkpoint (lock,
    metadata, config, an empty record, empty ``logs``), all regular files: a run killed while
    it started, that can be started again without losing anything. Beyond the lock, that
    needs the run's ``meta.json`` (written first), so a folder holding someone's own
    ``config.json`` is not mistaken for one."""
    if not path.is_dir():
        return False
    logs = set(logs)
    allowed = _SETUP_FILES | logs
    entries = _entries(path)
    for name, info in entries.items():
        if name.removesuffix(TMP_SUFFIX) not in allowed or not stat.S_ISREG(info.st_mode):
            return False
        if name in logs and info.st_size > 0:
            return False
    return set(entries) <= _BEFORE_META or is_run(path)


def check_new_run_dir(path: Path, overwrite: bool, logs: Iterable[str]) -> bool:
    """Refuse (``RunDirError``, one line) a directory a new run may not be written into;
    returns whether files of an earlier run must be removed first (:func:`clear_run_files`).

    A missing or empty directory is fine, and so is one holding a run killed before it
    played (``holds_unplayed_run``). Any other is refused unless ``overwrite``, and even
    then it must be a run (:func:`is_run`) whose own files are regular files: ``--overwrite``
    replaces a run, never a folder of someone's files, and never through a symbolic link.
    Reads only, so it can run before the directory is locked, and again after.
    """
    path = Path(path)
    if not _entries(path):
        return False
    if not holds_unplayed_run(path, logs):
        if not overwrite:
            raise RunDirError(
                f"run directory {shown(path)} already holds files; choose another --out or "
                "pass --overwrite"
            )
        if not is_run(path):
            raise RunDirError(
                f"{shown(path)} is not a run directory (it has no meta.json of an econbench "
                "run), so --overwrite leaves it alone: it replaces only the files of an "
                "earlier run; choose another --out"
            )
    if path.is_symlink():
        raise RunDirError(
            f"{shown(path)} is a symbolic link; econbench does not remove files through one: "
            f"give the directory it points to ({path.resolve()}) or another --out"
        )
    for name, info in _entries(path).items():
        if name in RUN_FILES and not stat.S_ISREG(info.st_mode) and not stat.S_ISLNK(info.st_mode):
            raise RunDirError(
                f"{path / name} is not a regular file, so the run there cannot be replaced; "
                "remove it yourself, or choose another --out"
            )
    return True


def clear_run_files(path: Path) -> None:
    """Remove the files a run wrote into ``path`` (``RUN_FILES``; a symbolic link by that
    name is removed itself, what it points to is left alone), keeping the lock and anything
    else. The directory is opened without following a symbolic link, and every name is
    removed relative to it, so nothing outside it can be reached."""
    fd = os.open(path, _DIR_FLAGS)
    try:
        # The checkpoint first: without it nothing the rest described can be resumed.
        for name in sorted(os.listdir(fd), key=lambda name: name != CHECKPOINT):
            if name not in RUN_FILES:
                continue
            if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                raise RunDirError(f"{Path(path) / name} is a directory; remove it yourself")
            os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def prepare_run_dir(path: Path, overwrite: bool = False, logs: Iterable[str] = ()) -> Path:
    """Create ``path``, or make an existing one ready for a new run: refuse what
    :func:`check_new_run_dir` refuses, and remove an earlier run's own files."""
    path = Path(path)
    if check_new_run_dir(path, overwrite, logs):
        clear_run_files(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


_FIXES = {
    errno.ENOSPC: "free some disk space",
    errno.EDQUOT: "free some disk space (or raise the quota)",
    errno.EBUSY: "close that program",
    errno.EROFS: "make the file system writable",
    errno.EACCES: "make the run directory writable",
}


def os_error_text(exc: OSError) -> str:
    """An ``OSError`` in words, with the file it concerns when it names one."""
    text = exc.strerror or str(exc)
    return f"{text}: {exc.filename}" if exc.filename else text


def storage_stop(out: Path, exc: OSError) -> str:
    """Why a run stopped when writing its directory failed (a full disk, a record another
    process holds locked, a vanished mount), and what to do: one line."""
    fix = _FIXES.get(exc.errno or 0, "fix the cause")
    return (
        f"writing the run in {shown(out)} failed ({os_error_text(exc)}); everything up to its "
        f"last checkpoint is kept: {fix}, then continue it with `econbench resume {out}`"
    )


def write_json(path: Path, data: Any) -> None:
    """Write a JSON document atomically (temporary file, then rename)."""
    from econbench.runs.checkpoint import write_atomic

    # Strict JSON only: a NaN or an infinity here is a bug to hear about, not a file to write.
    text = json.dumps(data, indent=2, sort_keys=False, allow_nan=False)
    write_atomic(path, text + "\n")


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
