"""One cgroup per sandboxed run: a memory and a task budget for everything the run makes.

rlimits bind one process (``RLIMIT_AS``) or one user (``RLIMIT_NPROC``, which does not bind
uid 0 at all). What a script makes the kernel hold for it — tmpfs files and inodes, pipes,
SysV objects, page tables, threads — needs a budget for the whole run, and only a cgroup
gives one. Where the harness can create cgroups (as root, or in a delegated subtree) every
run gets its own group with:

- memory: ``memory.max`` (v2) / ``memory.limit_in_bytes`` (v1) at the run's memory limit and
  no swap; kernel memory is charged to it on both versions, so a directory bomb or a pile
  of shared memory runs out where a heap would;
- pids: ``pids.max`` at the run's task limit plus the tasks the sandbox itself needs.

The harness moves the sandbox's first process in before it can fork, kills whatever is left
when the run ends and removes the group. Where no group can be made the layers are simply
absent, and ``Sandbox.describe()`` says which limits then hold.

Where a group goes: on cgroup v2, below the first of the mount's root, the parent of the
harness's own group and that group itself whose ``cgroup.subtree_control`` already enables
the controller (the "no internal processes" rule forbids enabling it where processes live;
we never change another group's controllers). On cgroup v1, below the harness's own group
in the memory and the pids hierarchy. Groups are named like workspaces
(``econbench-sandbox-<pid>-<start>-<random>``), so those of a dead harness are removed at
the next start.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import secrets
import signal
import time
from dataclasses import dataclass

from econbench.allo.sandbox.workspace import stale_names, workspace_prefix

log = logging.getLogger(__name__)

CONTROLLERS = ("memory", "pids")
# The task the sandbox runs outside the script's user namespace (bwrap's monitor, or the
# rlimit backend's outer process): the pids limit is the run's task limit plus this.
SANDBOX_OWN_TASKS = 1
_KILL_WAIT_S = 2.0


@dataclass(frozen=True)
class Hierarchy:
    """Where this harness can make groups for one controller (v1) or several (v2)."""

    version: int
    parent: str
    controllers: tuple[str, ...]


def _mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root within the hierarchy, fstype, super options) of cgroup mounts."""
    out = []
    for line in mountinfo.splitlines():
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 5 or len(rest) < 3 or not rest[0].startswith("cgroup"):
            continue
        root, point = fields[3], fields[4].replace("\\040", " ")
        out.append((point, root, rest[0], set(rest[2].split(","))))
    return out


def _own_groups(proc_cgroup: str) -> dict[str, str]:
    """Controller (v1) or "" (v2) -> this process's group path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            out[controller] = parts[2]
    return out


def _inside(point: str, root: str, path: str) -> str | None:
    """The directory of group ``path`` under a mount of hierarchy root ``root``."""
    if root != "/" and path != root and not path.startswith(root.rstrip("/") + "/"):
        return None
    relative = path[len(root) :] if root != "/" else path
    return os.path.normpath(point + "/" + relative.lstrip("/"))


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as fh:
        return fh.read()


def find_hierarchies(proc: str = "/proc/self") -> list[Hierarchy]:
    """Candidate places for a run's groups, best first (not yet checked for writing)."""
    try:
        mounts = _mounts(_read(f"{proc}/mountinfo"))
        own = _own_groups(_read(f"{proc}/cgroup"))
    except OSError:
        return []
    unified = [m for m in mounts if m[2] == "cgroup2"]
    for point, root, _fstype, _opts in unified:
        mine = _inside(point, root, own.get("", "/"))
        candidates = [point] + ([os.path.dirname(mine), mine] if mine else [])
        for parent in dict.fromkeys(candidates):
            try:
                enabled = _read(os.path.join(parent, "cgroup.subtree_control")).split()
            except OSError:
                continue
            usable = tuple(c for c in CONTROLLERS if c in enabled)
            if usable:
                return [Hierarchy(2, parent, usable)]
    out = []
    for controller in CONTROLLERS:
        for point, root, fstype, opts in mounts:
            if fstype == "cgroup" and controller in opts and controller in own:
                mine = _inside(point, root, own[controller])
                if mine is not None:
                    out.append(Hierarchy(1, mine, (controller,)))
                    break
    return out


def _write(path: str, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _limit_files(version: int, controller: str, memory_bytes: int, tasks: int) -> list[tuple]:
    """(file, value, required) to write in a new group, in order."""
    if controller == "pids":
        return [("pids.max", str(tasks), True)]
    if version == 2:
        return [
            ("memory.max", str(memory_bytes), True),
            ("memory.swap.max", "0", False),
            ("memory.oom.group", "1", False),
        ]
    return [
        ("memory.limit_in_bytes", str(memory_bytes), True),
        ("memory.memsw.limit_in_bytes", str(memory_bytes), False),
    ]


class RunCgroup:
    """The groups of one run (one per v1 hierarchy, or one v2 group)."""

    def __init__(self, groups: list[tuple[Hierarchy, str]]) -> None:
        self.groups = groups

    @classmethod
    def create(cls, memory_bytes: int, max_tasks: int) -> RunCgroup | None:
        """New groups in every usable hierarchy, limits set; None where none can be made."""
        name = f"{workspace_prefix()}{secrets.token_hex(4)}"
        groups = []
        for hierarchy in usable_hierarchies():
            path = os.path.join(hierarchy.parent, name)
            try:
                os.mkdir(path, 0o755)
            except OSError:
                continue
            try:
                for controller in hierarchy.controllers:
                    for file, value, required in _limit_files(
                        hierarchy.version, controller, memory_bytes, max_tasks + SANDBOX_OWN_TASKS
                    ):
                        target = os.path.join(path, file)
                        if required or os.path.exists(target):
                            _write(target, value)
            except OSError as exc:
                log.warning("could not set the limits of cgroup %s: %s", path, exc)
                with contextlib.suppress(OSError):
                    os.rmdir(path)
                continue
            groups.append((hierarchy, path))
        return cls(groups) if groups else None

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(c for h, _ in self.groups for c in h.controllers)

    @property
    def layers(self) -> tuple[str, ...]:
        return tuple(f"cgroup-{c}" for c in self.controllers)

    @property
    def procs_files(self) -> list[str]:
        """Where a process writes its pid to join (the sandbox's gate does it for bwrap)."""
        return [os.path.join(path, "cgroup.procs") for _h, path in self.groups]

    def attach(self, pid: int) -> None:
        """Move ``pid`` in (before it can fork: its children follow it, nothing else does)."""
        for file in self.procs_files:
            _write(file, str(pid))

    def oom_killed(self) -> bool:
        """Whether the kernel killed a task of this run for exhausting the group's memory."""
        for hierarchy, path in self.groups:
            if "memory" not in hierarchy.controllers:
                continue
            file = "memory.events" if hierarchy.version == 2 else "memory.oom_control"
            with contextlib.suppress(OSError, ValueError):
                for line in _read(os.path.join(path, file)).splitlines():
                    key, _, value = line.partition(" ")
                    if key in ("oom_kill", "oom_group_kill") and int(value) > 0:
                        return True
        return False

    def _pids(self) -> set[int]:
        out: set[int] = set()
        for file in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                out.update(int(x) for x in _read(file).split())
        return out

    def kill(self) -> None:
        """SIGKILL every task in the groups now (bubblewrap's sandbox is in a session of its
        own, beyond the harness's process-group kill)."""
        for hierarchy, path in self.groups:
            if hierarchy.version == 2 and os.path.exists(os.path.join(path, "cgroup.kill")):
                with contextlib.suppress(OSError):
                    _write(os.path.join(path, "cgroup.kill"), "1")
                    return
        for pid in self._pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def close(self) -> str | None:
        """Kill every task left in the groups and remove them; None, or what went wrong."""
        deadline = time.monotonic() + _KILL_WAIT_S
        self.kill()
        while self._pids() and time.monotonic() < deadline:
            self.kill()
            time.sleep(0.001)
        problems = []
        for _hierarchy, path in self.groups:
            while True:
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:  # EBUSY until the last task is gone
                    if time.monotonic() >= deadline:
                        problems.append(f"{path}: {exc}")
                        break
                    time.sleep(0.001)
        if problems:
            message = "could not remove the sandbox's cgroup " + "; ".join(problems)
            log.warning(message)
            return message
        return None


def _probe(hierarchy: Hierarchy) -> bool:
    """Whether a group with limits can really be made (and removed) there."""
    path = os.path.join(hierarchy.parent, f"{workspace_prefix()}probe-{secrets.token_hex(4)}")
    try:
        os.mkdir(path, 0o755)
    except OSError:
        return False
    try:
        for controller in hierarchy.controllers:
            file, value, _required = _limit_files(hierarchy.version, controller, 1 << 30, 64)[0]
            _write(os.path.join(path, file), value)
        return os.access(os.path.join(path, "cgroup.procs"), os.W_OK)
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(path)


@functools.cache
def usable_hierarchies() -> tuple[Hierarchy, ...]:
    """The hierarchies this harness can make run groups in (checked once per process)."""
    found = tuple(h for h in find_hierarchies() if _probe(h))
    for hierarchy in found:
        sweep_stale_groups(hierarchy.parent)
    return found


def sweep_stale_groups(parent: str) -> list[str]:
    """Remove the (empty) groups of dead harnesses below ``parent``."""
    removed = []
    for name in stale_names(parent):
        path = os.path.join(parent, name)
        with contextlib.suppress(OSError):
            os.rmdir(path)
            removed.append(path)
    return removed
