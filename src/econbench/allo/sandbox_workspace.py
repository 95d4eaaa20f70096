"""The sandbox's host-side workspaces: named by their owner, removed for sure, swept when stale.

Each ``Sandbox.run`` makes one temporary directory named
``econbench-sandbox-<harness pid>-<its start time>-<random>``. The start time (clock ticks
since boot, from ``/proc/<pid>/stat``) tells a live owner from a dead one whose pid was
reused, so the next harness can remove what a killed one left behind without touching the
workspaces of harnesses still running.

Removal never fails silently: a file a script managed to make immutable or append-only is
unpinned (root only, through the same ``FS_IOC_SETFLAGS`` ioctl ``chattr -i`` uses) and
whatever still cannot be removed is reported to the caller and logged.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import os
import re
import shutil
import struct
import sys
import tempfile

log = logging.getLogger(__name__)

PREFIX = "econbench-sandbox-"
_NAME = re.compile(rf"^{PREFIX}(\d+)-(\d+)-")
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
FS_IMMUTABLE_FL, FS_APPEND_FL = 0x00000010, 0x00000020


def start_time(pid: int) -> int | None:
    """When ``pid`` started (field 22 of /proc/<pid>/stat), or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return int(fields[19]) if len(fields) > 19 else None


@functools.cache
def _own_start() -> int:
    return start_time(os.getpid()) or 0


def workspace_prefix(pid: int | None = None) -> str:
    """The name prefix of workspaces owned by ``pid`` (default: this process)."""
    if pid is None or pid == os.getpid():
        return f"{PREFIX}{os.getpid()}-{_own_start()}-"
    return f"{PREFIX}{pid}-{start_time(pid) or 0}-"


def owner_alive(pid: int, started: int) -> bool:
    """Whether the process that made a workspace still runs (same pid, same start time)."""
    now = start_time(pid)
    if now is not None:
        return now == started
    if os.path.isdir("/proc/self"):
        return False
    try:  # no /proc: we can only tell whether the pid exists
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _unpin(path: str) -> None:
    """Clear the immutable and append-only flags of one file or directory."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        flags = struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, struct.pack("i", 0)))[0]
        if flags & (FS_IMMUTABLE_FL | FS_APPEND_FL):
            cleared = flags & ~(FS_IMMUTABLE_FL | FS_APPEND_FL)
            fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", cleared))
    except OSError:
        pass
    finally:
        os.close(fd)


def _unpin_tree(path: str) -> None:
    _unpin(path)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                _unpin(full)


def _open_up(path: str) -> None:
    """Make every directory writable again (a script may have chmod-ed them)."""
    for root, dirs, _files in os.walk(path):
        for d in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, d), 0o700, follow_symlinks=False)


def remove_workspace(path: str) -> str | None:
    """Delete ``path`` and everything in it; None on success, else what went wrong."""
    errors: list[str] = []

    def note(_func: object, failed: str, exc_info: object) -> None:
        exc = exc_info[1] if isinstance(exc_info, tuple) else exc_info
        errors.append(f"{failed}: {exc}")

    for attempt in range(2):
        if not os.path.lexists(path):
            return None
        if attempt == 1 and os.geteuid() == 0:
            _unpin_tree(path)
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
        _open_up(path)
        errors.clear()
        handler = {"onexc": note} if sys.version_info >= (3, 12) else {"onerror": note}
        shutil.rmtree(path, **handler)
    if not os.path.lexists(path):
        return None
    detail = errors[0] if errors else "it is still there"
    message = f"could not remove the sandbox workspace {path}: {detail}"
    log.warning(message)
    return message


def sweep_stale_workspaces(directory: str | None = None) -> list[str]:
    """Remove the workspaces in ``directory`` (default: the temp dir) whose owner is dead."""
    directory = directory or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in sorted(names):
        match = _NAME.match(name)
        if match is None or owner_alive(int(match[1]), int(match[2])):
            continue
        path = os.path.join(directory, name)
        if remove_workspace(path) is None:
            log.warning("removed a sandbox workspace left by a dead harness: %s", path)
            removed.append(path)
    return removed
