"""Starts bubblewrap for one sandboxed run: join the run's cgroups, then become the sandbox's
host uid, then exec ``bwrap``. Standard library only; run as ``python -I -S _gate.py
CONFIG BWRAP ARGS...`` by ``econbench.allo.sandbox.core``.

Why a gate: bwrap forks at once, so a cgroup joined after it started would miss its
children; the gate joins first and everything bwrap starts inherits the group. And a root
harness must not run bwrap as root: bwrap maps the sandbox's uid to the caller's, so the
script would own every host inode it can see (``os.fchmod`` on ``/dev/null`` would change
the host's ``/dev/null``). The gate drops to an unprivileged host uid first, so the script
owns nothing outside its own tmpfs.

An unprivileged bwrap can only bind what that uid can reach. When the Python installation
lies below a directory other users cannot enter (pyenv under a 0700 ``/root``), the gate —
still root, in a mount namespace of its own that nothing else shares — covers that
directory with an empty tmpfs and binds the installation back in at the same path. The
host's mounts are untouched.

Config keys: ``join`` (``cgroup.procs`` files), ``uid``/``gid`` (None: keep ours),
``reach`` (``[closed directory, [roots below it]]`` pairs).
"""

import json
import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # after the stdlib: no shadowing

from _confine import (
    CLONE_NEWNS,
    MS_BIND,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    check,
    libc,
    mount,
)


def join(procs_files):
    pid = str(os.getpid()).encode()
    for path in procs_files:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, pid)
        finally:
            os.close(fd)


def make_reachable(reach):
    """Cover each closed directory with a tmpfs and bind the roots below it back in."""
    _ctypes, lib = libc()
    check(lib.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    fds = {
        root: os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        for _c, roots in reach
        for root in roots
    }
    for closed, roots in reach:
        mount("tmpfs", closed, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        for root in roots:
            os.makedirs(root, 0o755, exist_ok=True)
            mount(f"/proc/self/fd/{fds[root]}", root, None, MS_BIND | MS_REC)
    for fd in fds.values():
        os.close(fd)


def become(uid, gid):
    """The sandbox's host uid for good: no groups, no capabilities (the uid change drops them)."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def main(cfg, argv):
    join(cfg["join"])
    if cfg["reach"]:
        make_reachable(cfg["reach"])
    if cfg["uid"] is not None:
        become(cfg["uid"], cfg["gid"])
    os.chdir("/")
    os.execv(argv[0], argv)


if __name__ == "__main__":
    try:
        main(json.loads(sys.argv[1]), sys.argv[2:])
    except Exception as exc:  # a machine that refuses a step: the harness reports it
        sys.stderr.write(f"sandbox gate: {type(exc).__name__}: {exc}\n")
        os._exit(70)
