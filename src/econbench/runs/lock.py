"""One process at a time per run directory.

A run holds an exclusive ``flock`` on ``RUN_DIR/.lock`` while it writes. The kernel drops the
lock when the process dies (even by ``kill -9``), so a crashed run never blocks its resume,
and a sweep restarted while an orphaned worker still runs cannot write into the same
directory twice.

The lock file is opened without following a symbolic link and must be a regular file: a
``.lock`` that is a directory, a link or a FIFO, or a directory that cannot be written
(a read-only mount), is a one-line ``RunDirError`` naming it, never a traceback. A start
that is refused after taking the lock removes the lock file it created
(:meth:`RunLock.discard`), so a refused ``--out`` is left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path
from types import TracebackType

from econbench.runs.layout import LOCK
from econbench.runs.store import RunDirError, shown

_NOFOLLOW = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
"""``O_NONBLOCK``: a FIFO in the lock's place opens at once (and is then refused)."""
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


class RunLockedError(RuntimeError):
    """Another live process is writing this run directory."""


def check_lock_file(run_dir: Path) -> None:
    """Refuse (``RunDirError``) a ``.lock`` in ``run_dir`` that is not a regular file."""
    path = Path(run_dir) / LOCK
    try:
        mode = path.lstat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise RunDirError(_cannot_lock(path, exc)) from None
    if not stat.S_ISREG(mode):
        raise RunDirError(_not_a_lock_file(path, mode))


def _not_a_lock_file(path: Path, mode: int) -> str:
    kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return (
        f"{path} is {kind}, not the run's lock file; remove it (econbench keeps a small "
        "lock file there while a run writes), then try again"
    )


def _cannot_lock(path: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return (
        f"cannot lock {shown(path.parent)}: creating {LOCK} there failed ({reason}); a run "
        "needs a directory it can write (not a read-only mount)"
    )


def _open_lock(path: Path) -> tuple[int, bool]:
    """The lock file's descriptor, and whether this call created the file."""
    while True:
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644), True
        except FileExistsError:
            pass
        try:
            return os.open(path, os.O_RDWR | _NOFOLLOW), False
        except FileNotFoundError:
            continue  # removed in between (a refused start discarding its lock): create it


class RunLock:
    """``with RunLock(run_dir): ...`` — raises ``RunLockedError`` if another process holds it,
    ``RunDirError`` if the lock file cannot be made."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK
        self.created = False
        """Whether :meth:`acquire` created the lock file (so :meth:`discard` removes it)."""
        self._fd: int | None = None

    def acquire(self) -> None:
        check_lock_file(self.path.parent)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, created = _open_lock(self.path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a symbolic link in the lock's place
                raise RunDirError(_not_a_lock_file(self.path, stat.S_IFLNK)) from None
            raise RunDirError(_cannot_lock(self.path, exc)) from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise RunDirError(_not_a_lock_file(self.path, mode))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLockedError(
                f"{self.path.parent} is being written by another process (pid "
                f"{_holder(self.path)}); wait for it to finish or stop it first"
            ) from None
        self._fd, self.created = fd, created
        with contextlib.suppress(OSError):  # the pid only informs; a full disk fails later
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def discard(self) -> None:
        """Release the lock, removing the lock file if :meth:`acquire` created it: a start
        refused under the lock leaves the directory as it found it."""
        if self._fd is not None and self.created:
            with contextlib.suppress(OSError):
                os.unlink(self.path)  # before the release: no other process can take it
        self.created = False
        self.release()

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
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return False  # none, or not a lock file: nobody can hold it
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
