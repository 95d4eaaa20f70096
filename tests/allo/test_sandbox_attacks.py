"""The issue-12 attacks on the R3 sandbox, on both backends, as root and as an unprivileged user.

Each attack runs inside a throwaway *harness* process (``python -c HARNESS``) so that an attack
that works (lowering the harness's limits, say) hurts that process and not pytest. The harness
hosts a Unix-domain listener, runs the hostile scripts through ``Sandbox.run`` and writes a JSON
report to a file — the write itself fails if a script managed to change the harness's
``RLIMIT_FSIZE`` or ``RLIMIT_NOFILE``.

"guarded" runs keep the Python audit hook (the scripts first try to switch it off); "bare"
runs have no hook at all, so only the kernel layers stand between the script and the host.
The unprivileged runs drop to uid 65534 in a private mount namespace that makes the
interpreter reachable (it may live under a 0700 home directory); they skip where that needs
powers this process lacks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from econbench.allo.sandbox import _seccomp as seccomp
from econbench.allo.sandbox.core import (
    RESULT_LIMIT_BYTES,
    Sandbox,
    SandboxLimits,
    SandboxUnavailable,
    bwrap_path,
    remove_workspace,
    sweep_stale_workspaces,
    workspace_prefix,
)

IS_ROOT = os.geteuid() == 0
HAS_BWRAP = bwrap_path() is not None
NOBODY = 65534
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_IMMUTABLE_FL = 0x80086601, 0x40086602, 0x10

# ---------------------------------------------------------------- hostile scripts

# Walk a refusal's traceback to the audit hook's frames, neuter its ``deny`` and forget the
# refusal (the trick from the issue). Returns what it managed.
DISABLE_HOOK = """
def disable_hook():
    def neutral():
        violations = None
        def deny(message):
            return violations
        return deny.__code__
    try:
        open('/etc/hostname').read()
        return 'no hook'
    except OSError as exc:
        tb = exc.__traceback__
        done = 'no hook'
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_name == 'deny':
                frame.f_locals['violations'].clear()
            if frame.f_code.co_name == 'hook':
                try:
                    frame.f_locals['deny'].__code__ = neutral()
                    done = 'disabled'
                except Exception as err:
                    done = 'refused: ' + type(err).__name__
            tb = tb.tb_next
        return done
"""

ATTACKS: dict[str, str] = {
    # item 1: lower the harness's limits (it is this script's parent or grandparent)
    "prlimit": DISABLE_HOOK
    + """
import resource
def solve(inputs):
    out = {'hook': disable_hook()}
    for name, value in (('RLIMIT_FSIZE', (0, 0)), ('RLIMIT_NOFILE', (3, 3)),
                        ('RLIMIT_CPU', (1, 1))):
        try:
            resource.prlimit(inputs['pid'], getattr(resource, name), value)
            out[name] = 'changed'
        except Exception as exc:
            out[name] = type(exc).__name__
    try:  # raising one's own hard limit must fail too
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard + 100))
        out['raise_own'] = 'raised'
    except Exception as exc:
        out['raise_own'] = type(exc).__name__
    return out
""",
    # item 2: after the trick, Unix-domain sockets to host paths and fanotify
    "unix_fanotify": DISABLE_HOOK
    + """
import socket
def solve(inputs):
    out = {'hook': disable_hook()}
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(inputs['unix'])
        s.sendall(b'leak')
        out['unix'] = 'connected'
    except Exception as exc:
        out['unix'] = type(exc).__name__
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.fanotify_init(0, 0)
        out['fanotify'] = 'fd' if fd >= 0 else 'errno %d' % ctypes.get_errno()
    except Exception as exc:
        out['fanotify'] = type(exc).__name__
    return out
""",
    # item 3: make a file in the workspace immutable, so that cleanup fails
    "immutable": DISABLE_HOOK
    + f"""
import fcntl, os, struct
def solve(inputs):
    out = {{'hook': disable_hook()}}
    with open('pinned.bin', 'wb') as fh:
        fh.write(b'0' * 65536)
    fd = os.open('pinned.bin', os.O_RDONLY)
    try:
        fcntl.ioctl(fd, {FS_IOC_SETFLAGS}, struct.pack('i', {FS_IMMUTABLE_FL}))
        out['chattr'] = 'immutable'
    except Exception as exc:
        out['chattr'] = type(exc).__name__
    finally:
        os.close(fd)
    out['cwd'] = os.getcwd()
    return out
""",
    # item 4: host file metadata
    "stat": DISABLE_HOOK
    + """
import os
def solve(inputs):
    out = {'hook': disable_hook()}
    for path in ('/etc/passwd', inputs['host_file'], os.path.dirname(inputs['host_file']),
                 '/home', '/tmp', '/work', '/var', '/srv'):
        try:
            st = os.stat(path)
            out[path] = 'seen %d' % st.st_size
        except Exception as exc:
            out[path] = type(exc).__name__
    return out
""",
    # item 8: a huge return value, returned and forged straight into the result pipe
    "huge_return": "def solve(inputs):\n    return 'V' * 1_000_000\n",
    "forged_report": """
import json, os, sys
def solve(inputs):
    fd = json.loads(sys.argv[1])['result_fd']
    os.write(fd, json.dumps({'ok': True, 'value': 'V' * 1_000_000, 'layers': []}).encode())
    os._exit(0)
""",
}

# ---------------------------------------------------------------- the harness process

HARNESS = r"""
import json, os, resource, socket, sys, tempfile
spec = json.loads(sys.argv[1])
tempfile.tempdir = spec['tmp']
from econbench.allo.sandbox.core import Sandbox, SandboxLimits, SandboxUnavailable
NAMES = ('RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_CPU')
before = {n: list(resource.getrlimit(getattr(resource, n))) for n in NAMES}
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(spec['unix'])
os.chmod(spec['unix'], 0o777)
listener.listen(16)
listener.setblocking(False)
report = {'uid': os.geteuid()}
try:
    sb = Sandbox(SandboxLimits(cpu_s=2, wall_s=30, python_guards=spec['guards']),
                 backend=spec['backend'], allow_weak=spec['allow_weak'])
except SandboxUnavailable as exc:
    report['refused'] = str(exc)
else:
    report['describe'] = sb.describe()
    inputs = {'pid': os.getpid(), 'unix': spec['unix'], 'host_file': spec['host_file']}
    attacks = spec['attacks'].items()
    report['runs'] = {name: sb.run(code, inputs).to_dict() for name, code in attacks}
connections = 0
while True:
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        break
    connections += 1
    conn.close()
report['connections'] = connections
report['limits_before'] = before
report['limits_after'] = {n: list(resource.getrlimit(getattr(resource, n))) for n in NAMES}
report['leftovers'] = sorted(os.listdir(spec['tmp']))
with open(spec['report'], 'w') as fh:  # fails if a script changed FSIZE or NOFILE
    json.dump(report, fh)
"""


def _reachable_by_others(path: str) -> str | None:
    """The first directory above ``path`` that other users cannot enter, if any."""
    parts = Path(path).parts
    for i in range(2, len(parts)):
        top = str(Path(*parts[:i]))
        if not os.stat(top).st_mode & 0o001:
            return top
    return None


def _python_closed_to_others() -> bool:
    return _reachable_by_others(os.path.realpath(sys.base_prefix)) is not None


def _nobody_prefix(work: Path) -> list[str]:
    """A command prefix that runs as uid/gid 65534 with no capabilities and a reachable Python.

    An interpreter under a home directory other users cannot enter (pyenv under /root) is
    made reachable in a private mount namespace: a tmpfs over the closed directory with the
    installation bound back in, the rest of the machine unchanged.
    """
    if not IS_ROOT or not shutil.which("unshare") or not shutil.which("setpriv"):
        pytest.skip("needs root, unshare(1) and setpriv(1) to become an unprivileged user")
    prefix = os.path.realpath(sys.base_prefix)
    closed = _reachable_by_others(prefix)
    drop = [
        "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
    ]  # fmt: skip
    if closed is None:
        return drop
    stage = work / "stage"
    stage.mkdir()
    script = (
        f"mount --bind {prefix} {stage} && mount -t tmpfs -o mode=755 tmpfs {closed} && "
        f'mkdir -p {prefix} && mount --bind {stage} {prefix} && exec "$@"'
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *drop]


def run_harness(
    work: Path,
    backend: str,
    guards: bool,
    attacks: list[str] | dict[str, str],
    *,
    user: str = "root",
    allow_weak: bool = False,
    prefix: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    tmp = work / "tmp"
    tmp.mkdir(mode=0o777)
    tmp.chmod(0o777)
    host_file = work / "host-secret.txt"
    host_file.write_text("host metadata")
    spec = {
        "backend": backend,
        "guards": guards,
        "allow_weak": allow_weak,
        "attacks": attacks if isinstance(attacks, dict) else {n: ATTACKS[n] for n in attacks},
        "tmp": str(tmp),
        "unix": str(work / "u.sock"),
        "host_file": str(host_file),
        "report": str(work / "report.json"),
    }
    command = [*(prefix or []), sys.executable, "-c", HARNESS, json.dumps(spec)]
    if user == "nobody":
        command = [*_nobody_prefix(work), *command]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode == 0, f"the harness died ({proc.returncode}): {proc.stderr[-3000:]}"
    report = json.loads((work / "report.json").read_text())
    if user == "nobody":
        assert report["uid"] == NOBODY
    return report


BACKENDS = [
    "rlimit",
    pytest.param(
        "bubblewrap", marks=pytest.mark.skipif(not HAS_BWRAP, reason="bwrap not installed")
    ),
]
USERS = [
    pytest.param("root", marks=pytest.mark.skipif(not IS_ROOT, reason="not running as root")),
    "nobody",
]


def _value(run: dict[str, Any]) -> dict[str, Any]:
    assert run["ok"], run
    return run["value"]


def _check_report(report: dict[str, Any], guards: bool) -> None:
    """Every attack failed, whatever the hook did, and the harness is intact."""
    assert "refused" not in report, report["refused"]
    assert report["describe"]["strong"], report["describe"]
    runs = report["runs"]
    assert report["limits_after"] == report["limits_before"]
    assert report["connections"] == 0
    assert report["leftovers"] == []  # the workspaces are gone, immutable flag or not
    for name in ("prlimit", "unix_fanotify", "immutable", "stat"):
        run = runs[name]
        if guards and not run["ok"]:  # the hook caught the script: fine, but not required
            assert run["reason"] == "forbidden", run
            continue
        value = _value(run)
        # a tripwire, not a boundary: whatever the script did to the hook, the kernel holds
        assert value["hook"] != "disabled" if guards else value["hook"] == "no hook"
        if name == "prlimit":
            assert value["RLIMIT_FSIZE"] in ("PermissionError", "ProcessLookupError"), value
            assert value["RLIMIT_NOFILE"] in ("PermissionError", "ProcessLookupError"), value
            assert value["RLIMIT_CPU"] in ("PermissionError", "ProcessLookupError"), value
            assert value["raise_own"] in ("PermissionError", "ValueError"), value
        elif name == "unix_fanotify":
            assert value["unix"] != "connected" and value["fanotify"] != "fd", value
        elif name == "immutable":
            assert value["chattr"] == "PermissionError", value
        else:
            seen = [k for k, v in value.items() if str(v).startswith("seen")]
            assert not seen, value
    for name in ("huge_return", "forged_report"):
        run = runs[name]
        assert not run["ok"] and run["reason"] == "result too large" and run["value"] is None
        assert len(json.dumps(run)) < 16 * RESULT_LIMIT_BYTES


ALL = ["prlimit", "unix_fanotify", "immutable", "stat", "huge_return", "forged_report"]


@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("guards", [True, False], ids=["guarded", "bare"])
def test_attacks_fail_and_the_harness_survives(
    work: Path, backend: str, user: str, guards: bool
) -> None:
    report = run_harness(work, backend, guards, ALL, user=user)
    _check_report(report, guards)


# ---------------------------------------------------------------- the fallback, forced


@pytest.fixture
def failing_bwrap(work: Path) -> dict[str, str]:
    """An environment whose PATH starts with a ``bwrap`` that always fails."""
    fake = work / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    return {**os.environ, "PATH": f"{fake}:{os.environ.get('PATH', '')}"}


def test_a_failing_bwrap_selects_the_strong_fallback(work: Path, failing_bwrap) -> None:
    if not IS_ROOT:
        pytest.skip("the full fallback needs root or user namespaces; covered by 'nobody' runs")
    code = (
        "from econbench.allo.sandbox.core import Sandbox, available_backend\n"
        "import json\n"
        "print(json.dumps([available_backend(), Sandbox().describe()]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=failing_bwrap, check=True
    )
    backend, described = json.loads(proc.stdout)
    assert backend == "rlimit" and described["backend"] == "rlimit"
    assert described["strong"] and described["missing"] == []
    for layer in ("pidns", "mntns", "netns", "private-root", "unprivileged", "seccomp"):
        assert any(x.startswith(layer) for x in described["layers"]), described


# A harness in a "container" whose seccomp policy refuses every namespace (as Docker's default
# does without CAP_SYS_ADMIN): bubblewrap cannot start and the fallback cannot isolate.
NO_NAMESPACES = r"""
import ctypes, os, sys
from econbench.allo.sandbox import _seccomp as r
nrs = {'x86_64': (56, 272, 435), 'aarch64': (220, 97, 435)}[os.uname().machine]
arch = r.SYSCALLS[os.uname().machine][0]
clone, unshare, clone3 = nrs
NS = 0x7E020000
prog = [(r.BPF_LD_W_ABS, 0, 0, r.OFF_ARCH), (r.BPF_JEQ_K, 1, 0, arch),
        (r.BPF_RET_K, 0, 0, r.RET_ALLOW), (r.BPF_LD_W_ABS, 0, 0, r.OFF_NR),
        (r.BPF_JEQ_K, 0, 1, unshare), (r.BPF_RET_K, 0, 0, r.RET_ERRNO | 1),
        (r.BPF_JEQ_K, 0, 1, clone3), (r.BPF_RET_K, 0, 0, r.RET_ERRNO | 38),
        (r.BPF_JEQ_K, 0, 3, clone), (r.BPF_LD_W_ABS, 0, 0, r.arg_lo(0)),
        (r.BPF_JSET_K, 0, 1, NS), (r.BPF_RET_K, 0, 0, r.RET_ERRNO | 1),
        (r.BPF_RET_K, 0, 0, r.RET_ALLOW)]
class F(ctypes.Structure):
    _fields_ = [('code', ctypes.c_uint16), ('jt', ctypes.c_uint8), ('jf', ctypes.c_uint8),
                ('k', ctypes.c_uint32)]
class P(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.POINTER(F))]
filters = (F * len(prog))(*[F(*i) for i in prog])
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(P(len(prog), filters)), 0, 0) == 0
os.execv(sys.argv[1], sys.argv[1:])
"""


@pytest.mark.parametrize("user", USERS)
def test_without_namespaces_the_fallback_refuses_by_default(work: Path, user: str) -> None:
    report = run_harness(
        work, "auto", True, ["stat"], user=user, prefix=[sys.executable, "-c", NO_NAMESPACES]
    )
    message = report["refused"]
    assert "rlimit" in message
    if user == "root" and _python_closed_to_others():
        assert "cannot read the Python installation" in message  # see the next test
        return
    assert "--sandbox-allow-weak" in message
    for layer in ("pidns", "mntns", "private-root"):
        assert layer in message


@pytest.mark.parametrize("user", USERS)
def test_without_namespaces_the_weak_fallback_runs_only_when_asked(work: Path, user: str) -> None:
    report = run_harness(
        work,
        "auto",
        False,
        ["prlimit", "unix_fanotify", "immutable", "huge_return"],
        user=user,
        allow_weak=True,
        prefix=[sys.executable, "-c", NO_NAMESPACES],
    )
    if user == "root" and _python_closed_to_others():
        # Without a private root, uid 65534 cannot import from a Python under a 0700 home:
        # the weak sandbox is refused up front (with the reason) rather than half-working.
        assert "cannot read the Python installation" in report["refused"]
        return
    described = report["describe"]
    assert described["backend"] == "rlimit" and not described["strong"]
    assert "private-root" in described["missing"] and described["allow_weak"]
    # what the weak fallback still promises: seccomp and no privileges
    assert any(x.startswith("seccomp") for x in described["layers"])
    assert "unprivileged" in described["layers"]
    runs = report["runs"]
    assert report["limits_after"] == report["limits_before"]
    assert report["connections"] == 0 and report["leftovers"] == []
    prl = _value(runs["prlimit"])
    assert prl["RLIMIT_FSIZE"] == prl["RLIMIT_NOFILE"] == prl["RLIMIT_CPU"] == "PermissionError"
    unix = _value(runs["unix_fanotify"])
    assert unix["unix"] != "connected" and unix["fanotify"] != "fd"
    assert _value(runs["immutable"])["chattr"] == "PermissionError"
    assert runs["huge_return"]["reason"] == "result too large"


# ---------------------------------------------------------------- item 8 in detail


def test_result_too_large_keeps_only_a_short_preview() -> None:
    sb = Sandbox(SandboxLimits(cpu_s=2, wall_s=30), backend="rlimit")
    res = sb.run("def solve(inputs):\n    return 'V' * 1_000_000\n", {})
    assert not res.ok and res.reason == "result too large" and res.value is None
    assert res.preview is not None and res.preview.startswith('"VVV') and len(res.preview) <= 200
    assert len(json.dumps(res.to_dict())) < 2 * RESULT_LIMIT_BYTES
    # just under the bound is fine; R3 answers are integers, far below it
    fits = RESULT_LIMIT_BYTES - 2
    res = sb.run(f"def solve(inputs):\n    return 'x' * {fits}\n", {})
    assert res.ok and len(res.value) == fits
    res = sb.run(f"def solve(inputs):\n    return 'x' * {fits + 1}\n", {})
    assert not res.ok and res.reason == "result too large"


# ---------------------------------------------------------------- workspaces


def _make_immutable(path: Path) -> bool:
    import fcntl
    import struct

    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", FS_IMMUTABLE_FL))
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def test_remove_workspace_clears_the_immutable_flag(tmp_path: Path) -> None:
    if not IS_ROOT:
        pytest.skip("only root can set the immutable flag")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    pinned = ws / "sub" / "pinned.bin"
    pinned.write_bytes(b"x" * 1024)
    if not _make_immutable(pinned):
        pytest.skip("this file system does not support the immutable flag")
    assert remove_workspace(str(ws)) is None
    assert not ws.exists()


def test_remove_workspace_reports_what_it_cannot_remove(tmp_path: Path, monkeypatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("x")

    def refuse(*args, **kwargs):  # a file system that refuses to delete
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "unlink", refuse)
    error = remove_workspace(str(ws))
    monkeypatch.undo()
    assert error is not None and str(ws) in error and "f" in error
    assert (ws / "f").exists()


def test_stale_workspaces_of_dead_harnesses_are_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{workspace_prefix(dead.pid)}abc"
    stale.mkdir()
    (stale / "big.bin").write_bytes(b"0" * 4096)
    ours = tmp_path / f"{workspace_prefix()}def"
    ours.mkdir()
    other = tmp_path / "econbench-sandbox-unrelated"
    other.mkdir()
    if IS_ROOT:
        _make_immutable(stale / "big.bin")  # left pinned by a script: still removed
    removed = sweep_stale_workspaces(str(tmp_path))
    assert removed == [str(stale)]
    assert not stale.exists() and ours.exists() and other.exists()


def test_a_reused_pid_does_not_keep_a_stale_workspace(tmp_path: Path) -> None:
    # same pid as this process, different start time: the owner is dead
    prefix = workspace_prefix()
    pid, start = prefix.split("-")[2:4]
    stale = tmp_path / f"econbench-sandbox-{pid}-{int(start) + 1}-xyz"
    stale.mkdir()
    assert sweep_stale_workspaces(str(tmp_path)) == [str(stale)]


# ---------------------------------------------------------------- refusal and opt-in


def test_missing_layers_refuse_unless_weak_is_allowed(monkeypatch) -> None:
    import econbench.allo.sandbox.core as sandbox

    probe = sandbox.probe_layers("rlimit")
    weak = tuple(x for x in probe if not x.startswith(("private-root", "pidns")))
    monkeypatch.setattr(sandbox, "probe_layers", lambda backend: weak)
    monkeypatch.delenv("ECONBENCH_SANDBOX_ALLOW_WEAK", raising=False)
    with pytest.raises(SandboxUnavailable, match="private-root") as err:
        Sandbox(backend="rlimit")
    assert "--sandbox-allow-weak" in str(err.value)
    sb = Sandbox(backend="rlimit", allow_weak=True)
    described = sb.describe()
    assert not described["strong"] and set(described["missing"]) == {"pidns", "private-root"}
    monkeypatch.setenv("ECONBENCH_SANDBOX_ALLOW_WEAK", "1")
    assert Sandbox(backend="rlimit").describe()["allow_weak"]


def test_describe_names_every_layer_in_force() -> None:
    for backend in ("rlimit", *(("bubblewrap",) if HAS_BWRAP else ())):
        described = Sandbox(backend=backend).describe()
        assert described["backend"] == backend and described["strong"], described
        assert described["missing"] == []
        res = Sandbox(backend=backend).run("def solve(inputs):\n    return 1\n", {})
        assert res.ok and set(described["layers"]) <= set(res.layers) | {"audit-hook"}


def test_seccomp_program_covers_the_issue_syscalls() -> None:
    for machine, (_arch, nrs) in seccomp.SYSCALLS.items():
        for name in (
            "prlimit64", "setrlimit", "setpriority", "sched_setaffinity", "fanotify_init",
            "fanotify_mark", "ioctl", "connect", "setsid",
        ):  # fmt: skip
            assert name in nrs, (machine, name)


# ---------------------------------------------------------------- the CLI preflight

CLI = "from econbench.cli import app; app()"


def _allo_run(work: Path, *extra: str, prefix: list[str] | None = None, user: str = "root"):
    out = work / "cell"
    args = ["allo", "run", "--framing", "r3", "--policy", "eager", "--episodes", "1"]
    command = [*(prefix or []), sys.executable, "-c", CLI, *args, "--out", str(out), *extra]
    if user == "nobody":
        command = [*_nobody_prefix(work), *command]
    tmp = work / "tmp"  # its own temp dir: the start-up sweep sees no other test's leftovers
    tmp.mkdir(mode=0o777, exist_ok=True)
    tmp.chmod(0o777)
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=work, env=env)
    return proc, out


def test_cli_names_the_sandbox_before_the_first_episode(work: Path) -> None:
    proc, out = _allo_run(work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = " ".join(proc.stderr.split())
    assert "R3 sandbox:" in line and "complete" in line and "seccomp" in line
    assert (out / "episodes.jsonl").exists()


@pytest.mark.parametrize("user", USERS)
def test_cli_refuses_a_weak_sandbox_and_writes_nothing(work: Path, user: str) -> None:
    proc, out = _allo_run(work, prefix=[sys.executable, "-c", NO_NAMESPACES], user=user)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.startswith("error:") and "rlimit" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()


def test_cli_runs_a_weak_sandbox_only_with_the_flag(work: Path) -> None:
    prefix = [sys.executable, "-c", NO_NAMESPACES]
    proc, out = _allo_run(work, "--sandbox-allow-weak", prefix=prefix, user="nobody")
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = " ".join(proc.stderr.split())
    assert "R3 sandbox: rlimit backend, WEAK (missing" in line and "private-root" in line
    assert (out / "episodes.jsonl").exists()
