"""The sandbox's host-side workspaces: named by their owner, removed for sure, swept when stale.

Each ``Sandbox.run`` makes one temporary directory named
``econbench-sandbox-<harness pid>-<its start time>-<random>``. The start time (clock ticks
since boot, from ``/proc/<pid>/stat``) tells a live owner from a dead one whose pid was
reused, so the next harness can remove what a killed one left behind without touching the
workspaces of harnesses still running.

Everything here works on directory descriptors and never follows a symbolic link: the
temporary directory is shared with every local user, and a link named like a workspace
(``/tmp/econbench-sandbox-999999-1-x -> /home/alice``) must not make a root harness change
or delete what it points to. The sweep only considers real directories owned by the
harness's own user; anything else with a workspace name is left alone.

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
import stat
import struct
import tempfile

log = logging.getLogger(__name__)

PREFIX = "econbench-sandbox-"
_NAME = re.compile(rf"^{PREFIX}(\d+)-(\d+)-")
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
FS_IMMUTABLE_FL, FS_APPEND_FL = 0x00000010, 0x00000020
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def start_time(pid: int) -> int | None:
    """When ``pid`` started (field 22 of /proc/<pid>/stat), or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
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


def stale_names(directory: str) -> list[str]:
    """Entries of ``directory`` named like a harness's (workspace or cgroup) whose owner is dead."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    out = []
    for name in sorted(names):
        match = _NAME.match(name)
        if match is not None and not owner_alive(int(match[1]), int(match[2])):
            out.append(name)
    return out


def _unpin_at(dir_fd: int, name: str | None) -> None:
    """Clear the immutable and append-only flags of ``name`` in ``dir_fd`` (or of ``dir_fd``)."""
    try:
        fd = (
            os.dup(dir_fd)
            if name is None
            else os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
        )
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


def _retry_unpinned(action, dir_fd: int, name: str) -> None:
    """Run ``action()``; as root, when it is refused, unpin ``name`` and its directory, retry."""
    try:
        action()
    except PermissionError:
        if os.geteuid() != 0:
            raise
        _unpin_at(dir_fd, None)
        _unpin_at(dir_fd, name)
        action()


def _remove_entry(dir_fd: int, name: str, where: str, errors: list[str]) -> None:
    """Remove ``name`` from the directory ``dir_fd``; a directory with all it holds.

    A symbolic link is removed as a link; a directory is entered only through a descriptor
    opened with ``O_NOFOLLOW``, so nothing outside the tree is ever touched.
    """
    path = os.path.join(where, name)
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            _empty_directory_at(dir_fd, name, path, errors)
            _retry_unpinned(lambda: os.rmdir(name, dir_fd=dir_fd), dir_fd, name)
        else:
            _retry_unpinned(lambda: os.unlink(name, dir_fd=dir_fd), dir_fd, name)
    except FileNotFoundError:
        pass
    except (OSError, RecursionError) as exc:
        errors.append(f"{path}: {exc}")


def _empty_directory_at(parent_fd: int, name: str, path: str, errors: list[str]) -> None:
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    try:
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o700)  # a script may have made it unwritable; fchmod follows no link
        with os.scandir(fd) as entries:
            names = [entry.name for entry in entries]
        for child in names:
            _remove_entry(fd, child, path, errors)
    finally:
        os.close(fd)


def remove_workspace(path: str) -> str | None:
    """Delete ``path`` and everything in it; None on success, else what went wrong.

    ``path`` itself is never followed either: if it has become a symbolic link, only the
    link goes.
    """
    parent, name = os.path.split(os.path.abspath(path))
    errors: list[str] = []
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        errors.append(f"{parent}: {exc}")
    else:
        try:
            _remove_entry(parent_fd, name, parent, errors)
        finally:
            os.close(parent_fd)
    if not os.path.lexists(path):
        return None
    detail = errors[0] if errors else "it is still there"
    message = f"could not remove the sandbox workspace {path}: {detail}"
    log.warning(message)
    return message


def _owned_directory(directory: str, name: str, owners: frozenset[int]) -> bool:
    """A real directory (not a link) that belongs to one of ``owners``."""
    try:
        st = os.stat(os.path.join(directory, name), follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid in owners


def sweep_stale_workspaces(
    directory: str | None = None, owners: frozenset[int] | None = None
) -> list[str]:
    """Remove the workspaces in ``directory`` (default: the temp dir) whose owner is dead.

    Only real directories owned by one of ``owners`` (default: this user) are removed: a
    link, a file or another user's directory that merely carries a workspace name is left
    as it is.
    """
    directory = directory or tempfile.gettempdir()
    owners = owners if owners is not None else frozenset({os.geteuid()})
    removed = []
    for name in stale_names(directory):
        if not _owned_directory(directory, name, owners):
            continue
        path = os.path.join(directory, name)
        if remove_workspace(path) is None:
            log.warning("removed a sandbox workspace left by a dead harness: %s", path)
            removed.append(path)
    return removed
