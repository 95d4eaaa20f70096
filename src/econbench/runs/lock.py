"""One process at a time per run directory.

A run holds an exclusive ``flock`` on ``RUN_DIR/.lock`` while it writes. The kernel drops the
lock when the process dies (even by ``kill -9``), so a crashed run never blocks its resume,
and a sweep restarted while an orphaned worker still runs cannot write into the same
directory twice.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from econbench.runs.layout import LOCK


class RunLockedError(RuntimeError):
    """Another live process is writing this run directory."""


class RunLock:
    """``with RunLock(run_dir): ...`` — raises ``RunLockedError`` if another process holds it."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLockedError(
                f"{self.path.parent} is being written by another process (pid "
                f"{_holder(self.path)}); wait for it to finish or stop it first"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def is_locked(run_dir: Path) -> bool:
    """True while a live process holds the run's lock (the run is in progress somewhere)."""
    path = Path(run_dir) / LOCK
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "unknown"
    except OSError:
        return "unknown"
