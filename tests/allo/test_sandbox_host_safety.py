"""Issue 22's attacks on the R3 sandbox: host files, process and memory limits, the stale
sweep and the tripwire — on both backends, as root and as an unprivileged user, hook on/off.

The hostile scripts run inside a throwaway harness process (``run_harness`` from
``test_sandbox_attacks``); what they did to the host is measured from this process, before
and after. A device file whose mode did change is put back, so a regression cannot leave
the machine with an unwritable ``/dev/null``.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.allo.test_sandbox_attacks import BACKENDS, HAS_BWRAP, IS_ROOT, USERS, run_harness

from econbench.allo.sandbox import _seccomp as seccomp
from econbench.allo.sandbox.cgroup import (
    SANDBOX_OWN_TASKS,
    Hierarchy,
    RunCgroup,
    find_hierarchies,
    sweep_stale_groups,
    usable_hierarchies,
)
from econbench.allo.sandbox.core import Sandbox, SandboxLimits, enforced_limits
from econbench.allo.sandbox.workspace import (
    remove_workspace,
    sweep_stale_workspaces,
    workspace_prefix,
)

DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
LIMITS = SandboxLimits(cpu_s=2, wall_s=30)  # what run_harness's harness uses

# ---------------------------------------------------------------- hostile scripts

DEVICE_METADATA = f"""
import os
PATHS = {DEVICES!r}
def attempt(out, key, act):
    try:
        act()
        out[key] = 'CHANGED'
    except Exception as exc:
        out[key] = type(exc).__name__
def solve(inputs):
    out = {{}}
    for path in PATHS:
        for flags in (os.O_RDONLY, os.O_WRONLY):
            try:
                fd = os.open(path, flags)
            except Exception as exc:
                out[path + ' open'] = type(exc).__name__
                continue
            attempt(out, path + ' fchmod', lambda: os.fchmod(fd, 0o600))
            attempt(out, path + ' fchown', lambda: os.fchown(fd, 65534, 65534))
            attempt(out, path + ' futime', lambda: os.utime(fd, (0, 0)))
            attempt(out, path + ' xattr', lambda: os.setxattr(fd, 'user.eb', b'1'))
            os.close(fd)
        attempt(out, path + ' chmod', lambda: os.chmod(path, 0o600))
        attempt(out, path + ' utime', lambda: os.utime(path, (0, 0)))
    return out
"""

THREAD_BOMB = """
import threading
def solve(inputs):
    stop = threading.Event()
    started = 0
    try:
        for _ in range(3000):
            threading.Thread(target=stop.wait, daemon=True).start()
            started += 1
    except Exception:
        pass
    stop.set()
    return started
"""

# Memory the kernel holds outside the address space: memfd, SysV objects, a directory bomb.
KERNEL_MEMORY = """
import os
def solve(inputs):
    out = {}
    try:
        fd = os.memfd_create('eb')
        for _ in range(64):
            os.write(fd, b'x' * (1 << 20))
        out['memfd'] = 'made'
    except Exception as exc:
        out['memfd'] = type(exc).__name__
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        out['shmget'] = libc.shmget(0, 64 << 20, 0o1000 | 0o600)
        out['msgget'] = libc.msgget(0, 0o1000 | 0o600)
        out['semget'] = libc.semget(0, 8, 0o1000 | 0o600)
    except Exception as exc:
        out['sysv'] = type(exc).__name__
    made = 0
    try:
        for i in range(200_000):
            os.mkdir('d%d' % i)
            made += 1
    except OSError:
        pass
    out['dirs'] = made
    return out
"""

# The trick: catch a refusal, walk its traceback to the hook, swap what its closure
# cells (and default arguments) hold, forget the refusal, then try again.
HOOK_SWAP = """
def neutral(*args, **kwargs):
    return None
def disarm(out, value):
    cells = getattr(value, '__closure__', None) or ()
    for cell in cells:
        try:
            if isinstance(cell.cell_contents, list):
                cell.cell_contents.clear()
            elif callable(cell.cell_contents):
                cell.cell_contents = neutral
                out['swapped'] = out.get('swapped', 0) + 1
        except Exception as exc:
            out['cell'] = type(exc).__name__
    for default in getattr(value, '__defaults__', None) or ():
        if isinstance(default, list):
            default.clear()
            out['cleared'] = out.get('cleared', 0) + 1
def solve(inputs):
    out = {}
    try:
        open('/etc/hostname').read()
    except Exception as exc:
        tb = exc.__traceback__
        while tb is not None:
            for value in list(tb.tb_frame.f_locals.values()):
                items = value if isinstance(value, tuple) else (value,)
                for item in items:
                    if isinstance(item, list):
                        item.clear()
                    disarm(out, item)
            tb = tb.tb_next
    for path in ('/etc/passwd', '/etc/shadow'):
        try:
            open(path).read()
            out[path] = 'read'
        except Exception as exc:
            out[path] = type(exc).__name__
    return out
"""

ATTACKS = {
    "device_metadata": DEVICE_METADATA,
    "thread_bomb": THREAD_BOMB,
    "kernel_memory": KERNEL_MEMORY,
    "hook_swap": HOOK_SWAP,
}


def _device_state() -> dict[str, tuple[int, int, int, int]]:
    out = {}
    for path in DEVICES:
        with contextlib.suppress(FileNotFoundError):
            st = os.stat(path)
            out[path] = (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns)
    return out


@pytest.fixture
def guarded_devices() -> Iterator[dict[str, tuple[int, int, int, int]]]:
    """The host's device files as they were; put back afterwards if anything changed them."""
    before = _device_state()
    yield before
    for path, (mode, uid, gid, mtime) in before.items():
        st = os.stat(path)
        if (st.st_mode, st.st_uid, st.st_gid) != (mode, uid, gid) and IS_ROOT:
            os.chmod(path, stat.S_IMODE(mode))
            os.chown(path, uid, gid)
        if st.st_mtime_ns != mtime and IS_ROOT:
            os.utime(path, ns=(st.st_atime_ns, mtime))


def _value(run: dict[str, Any]) -> Any:
    assert run["ok"], run
    return run["value"]


@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("guards", [True, False], ids=["guarded", "bare"])
def test_scripts_stay_within_the_stated_limits(
    work: Path, backend: str, user: str, guards: bool, guarded_devices
) -> None:
    report = run_harness(work, backend, guards, ATTACKS, user=user)
    assert "refused" not in report, report["refused"]
    described, runs = report["describe"], report["runs"]
    assert report["leftovers"] == []

    # 1. not one host device file changed, whatever the script tried
    assert _device_state() == guarded_devices
    if not (guards and runs["device_metadata"]["reason"] == "forbidden"):
        tried = _value(runs["device_metadata"])
        assert "CHANGED" not in tried.values(), tried

    # 2. threads: bounded wherever the description says they are
    layers = set(described["layers"])
    if {"nproc", "cgroup-pids"} & layers:
        started = _value(runs["thread_bomb"])
        assert started < LIMITS.max_processes + SANDBOX_OWN_TASKS, (started, described)
    else:
        assert "unbounded" in described["limits"]["tasks"]

    # 3. kernel memory outside the address space is refused or capped at the stated size
    memory = runs["kernel_memory"]
    if guards and memory["reason"] == "forbidden":  # the tripwire refused ctypes
        memory = None
    if memory is not None:
        held = _value(memory)
        assert held["memfd"] == "PermissionError"
        assert all(held.get(k, -1) == -1 for k in ("shmget", "msgget", "semget")), held
        assert "workspace-inodes" in layers and held["dirs"] < LIMITS.workspace_inodes

    # 5. the tripwire: never listed as a layer; once it fires the run cannot come back clean
    assert "audit-hook" not in described["layers"] and "audit-hook" not in layers
    swap = runs["hook_swap"]
    assert "audit-hook" not in swap["layers"]
    if guards:
        assert described["tripwire"] == "audit-hook" and swap["tripwire"] == "audit-hook"
        assert not swap["ok"] and swap["reason"] == "forbidden", swap
    else:
        value = _value(swap)
        assert value["/etc/passwd"] != "read" and value["/etc/shadow"] != "read", value


def test_a_run_cannot_exceed_its_memory_in_kernel_memory() -> None:
    """Files in the workspace are kernel memory: with a memory cgroup they count."""
    if not usable_hierarchies() or "memory" not in {
        c for h in usable_hierarchies() for c in h.controllers
    }:
        pytest.skip("no memory cgroup can be made here")
    lim = SandboxLimits(cpu_s=4, wall_s=30, memory_mb=160, workspace_mb=512)
    code = (
        "def solve(inputs):\n"
        "    for i in range(24):\n"
        "        with open('f%d' % i, 'wb') as fh:\n"
        "            fh.write(b'x' * (15 << 20))\n"
        "    return 'all written'\n"
    )
    for backend in ("rlimit", *(["bubblewrap"] if HAS_BWRAP else [])):
        res = Sandbox(lim, backend=backend).run(code, {})
        assert not res.ok and res.reason == "memory", res
        assert "cgroup-memory" in res.layers


# ---------------------------------------------------------------- what describe() promises


def test_the_stated_limits_follow_the_layers_in_force() -> None:
    lim = SandboxLimits()
    full = enforced_limits(
        ("rlimits", "nproc", "cgroup-memory", "cgroup-pids", "workspace-inodes"), lim
    )
    assert "memory cgroup" in full["memory"] and "pids cgroup" in full["tasks"]
    assert f"{lim.workspace_inodes} files" in full["workspace"]
    bare = enforced_limits(("rlimits",), lim)
    assert "no memory cgroup" in bare["memory"]
    assert "unbounded" in bare["tasks"] and "unbounded" in bare["workspace"]


def test_describe_lists_only_kernel_layers_and_names_the_tripwire_apart() -> None:
    for backend in ("rlimit", *(["bubblewrap"] if HAS_BWRAP else [])):
        described = Sandbox(backend=backend).describe()
        assert "audit-hook" not in described["layers"]
        assert described["tripwire"] == "audit-hook"
        assert set(described["limits"]) >= {"cpu", "memory", "tasks", "workspace"}
        bare = Sandbox(LIMITS.model_copy(update={"python_guards": False}), backend=backend)
        assert bare.describe()["tripwire"] is None


# ---------------------------------------------------------------- the seccomp additions

HEADERS = {
    "x86_64": "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
    "aarch64": "/usr/include/asm-generic/unistd.h",
}
KERNEL_MEMORY_CALLS = (
    "memfd_create", "memfd_secret", "shmget", "shmat", "msgget", "msgsnd", "semget", "semop",
    "mq_open", "mq_timedsend", "inotify_init1", "inotify_add_watch",
)  # fmt: skip


@pytest.mark.parametrize("machine", sorted(seccomp.SYSCALLS))
def test_kernel_memory_calls_are_refused(machine: str) -> None:
    from tests.allo.test_sandbox import _decide

    arch, nrs = seccomp.SYSCALLS[machine]
    prog = seccomp.seccomp_program(machine, 1234)
    for name in KERNEL_MEMORY_CALLS:
        assert _decide(prog, arch, nrs[name]) == seccomp.RET_ERRNO | seccomp.EPERM, name


@pytest.mark.parametrize("machine", sorted(HEADERS))
def test_syscall_numbers_match_the_kernel_headers(machine: str) -> None:
    path = Path(HEADERS[machine])
    if not path.exists():
        pytest.skip(f"{path} is not installed")
    text = path.read_text()
    numbers = {
        name: int(nr) for name, nr in re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b", text)
    }
    _arch, nrs = seccomp.SYSCALLS[machine]
    wrong = {name: (nr, numbers.get(name)) for name, nr in nrs.items() if numbers.get(name) != nr}
    assert not wrong, wrong


# ---------------------------------------------------------------- item 4: the stale sweep


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _snapshot(root: Path) -> list[tuple[str, int, int, bytes]]:
    out = []
    for path in sorted([root, *root.rglob("*")]):
        st = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out.append((str(path), st.st_mode, st.st_uid, data))
    return out


def test_the_stale_sweep_never_follows_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "keep.txt").write_text("a user's file")
    (victim / "sub" / "deep.txt").write_text("another")
    victim.chmod(0o755)
    (victim / "sub").chmod(0o751)
    prefix = workspace_prefix(_dead_pid())
    link = tmp_path / f"{prefix}link"
    link.symlink_to(victim)  # a local user's link named like a dead harness's workspace
    stale = tmp_path / f"{prefix}real"
    (stale / "d").mkdir(parents=True)
    (stale / "out").symlink_to(victim)  # a workspace holding links out of itself
    (stale / "d" / "out").symlink_to(victim / "sub")
    (stale / "d" / "f").write_text("x")
    (stale / "d").chmod(0o500)
    before = _snapshot(victim)
    assert sweep_stale_workspaces(str(tmp_path)) == [str(stale)]
    assert not stale.exists() and link.is_symlink()
    assert _snapshot(victim) == before
    # removing a workspace path that has become a link removes the link only
    assert remove_workspace(str(link)) is None
    assert not link.exists() and _snapshot(victim) == before


def test_the_stale_sweep_leaves_other_users_directories(tmp_path: Path) -> None:
    if not IS_ROOT:
        pytest.skip("needs root to make a directory another user owns")
    theirs = tmp_path / f"{workspace_prefix(_dead_pid())}theirs"
    theirs.mkdir()
    (theirs / "f").write_text("not ours")
    os.chown(theirs, 4242, 4242)
    assert sweep_stale_workspaces(str(tmp_path)) == []
    assert (theirs / "f").read_text() == "not ours"


# ---------------------------------------------------------------- cgroups

V2_MOUNTINFO = "41 31 0:38 / {root} rw,relatime - cgroup2 cgroup2 rw\n"
V1_MOUNTINFO = (
    "35 31 0:32 / {root}/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / {root}/pids rw,relatime - cgroup cgroup rw,pids\n"
    "32 31 0:29 / {root}/cpu rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
)


def _fake_proc(tmp_path: Path, mountinfo: str, cgroup: str) -> str:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mountinfo").write_text(mountinfo.format(root=tmp_path / "cg"))
    (proc / "cgroup").write_text(cgroup)
    return str(proc)


def test_v2_groups_go_where_the_controllers_are_already_enabled(tmp_path: Path) -> None:
    cg = tmp_path / "cg"
    own = cg / "user.slice" / "session-1.scope"
    own.mkdir(parents=True)
    (cg / "cgroup.subtree_control").write_text("cpu io\n")  # the root: no memory/pids
    (cg / "user.slice" / "cgroup.subtree_control").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").write_text("")
    proc = _fake_proc(tmp_path, V2_MOUNTINFO, "0::/user.slice/session-1.scope\n")
    assert find_hierarchies(proc) == [Hierarchy(2, str(cg / "user.slice"), ("memory", "pids"))]
    (cg / "user.slice" / "cgroup.subtree_control").write_text("cpu\n")
    assert find_hierarchies(proc) == []


def test_v1_groups_go_below_our_own_in_each_hierarchy(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path, V1_MOUNTINFO, "4:memory:/job/7\n8:pids:/\n2:cpu,cpuacct:/\n")
    cg = tmp_path / "cg"
    assert find_hierarchies(proc) == [
        Hierarchy(1, str(cg / "memory" / "job" / "7"), ("memory",)),
        Hierarchy(1, str(cg / "pids"), ("pids",)),
    ]


@pytest.fixture
def real_cgroup() -> Iterator[RunCgroup]:
    if not usable_hierarchies():
        pytest.skip("this harness cannot make cgroups here")
    group = RunCgroup.create(256 << 20, 8)
    assert group is not None
    yield group
    group.close()


def test_a_run_cgroup_holds_its_limits_and_leaves_nothing(real_cgroup: RunCgroup) -> None:
    for hierarchy, path in real_cgroup.groups:
        if "pids" in hierarchy.controllers:
            assert Path(path, "pids.max").read_text().strip() == str(8 + SANDBOX_OWN_TASKS)
        if "memory" in hierarchy.controllers:
            name = "memory.max" if hierarchy.version == 2 else "memory.limit_in_bytes"
            assert int(Path(path, name).read_text()) == 256 << 20
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        real_cgroup.attach(sleeper.pid)
        assert real_cgroup.close() is None
        assert sleeper.wait(timeout=10) == -9  # killed with the group
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not any(Path(path).exists() for _h, path in real_cgroup.groups)


def test_groups_of_dead_harnesses_are_removed() -> None:
    if not usable_hierarchies():
        pytest.skip("this harness cannot make cgroups here")
    parent = usable_hierarchies()[0].parent
    stale = Path(parent, f"{workspace_prefix(_dead_pid())}abcd")
    stale.mkdir()
    ours = Path(parent, f"{workspace_prefix()}live")
    ours.mkdir()
    try:
        assert str(stale) in sweep_stale_groups(parent)
        assert not stale.exists() and ours.exists()
    finally:
        for path in (stale, ours):
            if path.exists():
                path.rmdir()
