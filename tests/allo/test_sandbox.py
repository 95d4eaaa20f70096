"""The R3 sandbox: normal runs, hostile scripts, and both backends.

Every hostile script must end as a failed ``SandboxResult`` with a clear reason while this
process carries on, and a normal run afterwards must still work. Tests that exercise a
kernel layer directly (``python_guards=False``) skip when that layer is not in force on
this machine; the guarded tests always run.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from pathlib import Path

import pytest

from econbench.allo.game.families import FAMILIES, instance_for
from econbench.allo.sandbox import _seccomp as seccomp
from econbench.allo.sandbox.core import (
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
    available_backend,
    bwrap_path,
)

HAS_BWRAP = bwrap_path() is not None
BACKENDS = [
    "rlimit",
    pytest.param(
        "bubblewrap", marks=pytest.mark.skipif(not HAS_BWRAP, reason="bwrap not installed")
    ),
]
# A short CPU limit keeps the CPU test quick; the wall limit is only a safety net, generous
# because a loaded CI machine (2 cores, pytest -n 2) may take seconds to deliver 1 s of CPU.
FAST = SandboxLimits(cpu_s=1, wall_s=30)
OK_CODE = "def solve(inputs):\n    return inputs['a'] * inputs['b']\n"


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def sandbox(backend: str) -> Sandbox:
    return Sandbox(FAST, backend=backend)


@pytest.fixture
def bare(backend: str) -> Sandbox:
    """Python audit hook off: only the kernel-level layers stand."""
    return Sandbox(FAST.model_copy(update={"python_guards": False}), backend=backend)


def assert_still_works(sb: Sandbox) -> None:
    res = sb.run(OK_CODE, {"a": 6, "b": 7})
    assert res.ok and res.value == 42, res


def assert_failed(res: SandboxResult, *reasons: str) -> None:
    assert not res.ok, res
    assert res.value is None
    assert res.reason in reasons, res


def need_layer(res: SandboxResult, prefix: str) -> None:
    if not any(layer.startswith(prefix) for layer in res.layers):
        pytest.skip(f"kernel layer {prefix!r} not available here: {res.layers}")


# ---------------------------------------------------------------- normal behaviour


def test_runs_solve_and_reports_backend(sandbox: Sandbox, backend: str) -> None:
    res = sandbox.run(OK_CODE + "print('hello')\n", {"a": 3, "b": 14})
    assert res.ok and res.value == 42 and res.reason is None
    assert res.backend == backend == sandbox.backend
    assert res.stdout == "hello\n" and res.exit_code == 0 and not res.truncated
    assert "rlimits" in res.layers
    assert json.loads(json.dumps(res.to_dict()))["value"] == 42


def test_custom_entry_and_json_values(sandbox: Sandbox) -> None:
    res = sandbox.run("def main(inputs):\n    return {'k': [1, 2.5, None]}\n", {}, entry="main")
    assert res.ok and res.value == {"k": [1, 2.5, None]}
    with pytest.raises(ValueError):
        sandbox.run(OK_CODE, {}, entry="not an identifier")
    with pytest.raises(TypeError):
        sandbox.run(OK_CODE, {"a": object()})


def test_stdlib_and_threads_work(sandbox: Sandbox) -> None:
    code = (
        "import zlib, hashlib, decimal, fractions, math, random, threading\n"
        "import collections, dataclasses\n"
        "P = collections.namedtuple('P', 'a b', defaults=(1,))\n"
        "@dataclasses.dataclass\n"
        "class D:\n"
        "    x: int = 2\n"
        "def solve(inputs):\n"
        "    out = []\n"
        "    t = threading.Thread(target=lambda: out.append(math.comb(10, 3)))\n"
        "    t.start(); t.join()\n"
        "    digest = hashlib.sha256(zlib.compress(b'x')).hexdigest()\n"
        "    return out[0] + len(digest) + P(0).b + D().x\n"
    )
    res = sandbox.run(code, {})
    assert res.ok and res.value == 120 + 64 + 1 + 2, res


def test_workspace_is_private_writable_and_fresh(sandbox: Sandbox) -> None:
    code = (
        "import os\n"
        "def solve(inputs):\n"
        "    seen = os.path.exists('state.txt')\n"
        "    with open('state.txt', 'w') as fh:\n"
        "        fh.write('x')\n"
        "    return [seen, os.getcwd(), sorted(os.listdir('.'))]\n"
    )
    first = sandbox.run(code, {})
    assert first.ok, first
    seen, cwd, listing = first.value
    assert seen is False and "state.txt" in listing
    second = sandbox.run(code, {})
    assert second.ok and second.value[0] is False  # nothing survives between runs
    if sandbox.backend == "rlimit":
        assert not Path(cwd).exists()  # the private directory was deleted


@pytest.mark.parametrize("cls", range(8))
def test_family_reference_code_runs_in_the_sandbox(cls: int) -> None:
    inst = instance_for(2000, 3, cls)
    res = Sandbox(FAST, backend="rlimit").run(FAMILIES[cls].reference_code, inst.params)
    assert res.ok and res.value == inst.answer, res


def test_concurrent_runs_from_threads(backend: str) -> None:
    # The R3 framing runs automatic turns on a thread pool: results must not cross over.
    from concurrent.futures import ThreadPoolExecutor

    sb = Sandbox(FAST, backend=backend)
    jobs = [instance_for(2001, t, t % 8) for t in range(12)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(lambda t: sb.run(FAMILIES[t % 8].reference_code, jobs[t].params), range(12))
        )
    assert [r.value for r in results] == [inst.answer for inst in jobs]


def test_available_backend_and_explicit_choice() -> None:
    assert available_backend() in ("bubblewrap", "rlimit")
    if not HAS_BWRAP:
        assert available_backend() == "rlimit"
        with pytest.raises(SandboxUnavailable):
            Sandbox(backend="bubblewrap")
    else:  # CI installs bwrap: then it must also pass its self-test and be chosen
        assert available_backend() == "bubblewrap"
    assert Sandbox().backend == available_backend()
    with pytest.raises(ValueError):
        Sandbox(backend="docker")


# ---------------------------------------------------------------- broken scripts


def test_syntax_error(sandbox: Sandbox) -> None:
    res = sandbox.run("def solve(inputs)\n    return 1\n", {})
    assert_failed(res, "syntax error")
    assert "SyntaxError" in res.error
    assert_still_works(sandbox)


def test_missing_solve(sandbox: Sandbox) -> None:
    assert_failed(sandbox.run("def answer(inputs):\n    return 1\n", {}), "missing entry")
    assert_failed(sandbox.run("solve = 3\n", {}), "missing entry")


def test_solve_raises(sandbox: Sandbox) -> None:
    res = sandbox.run("def solve(inputs):\n    return inputs['missing']\n", {"a": 1})
    assert_failed(res, "exception")
    assert "KeyError" in res.error and "script.py" in res.stderr
    res = sandbox.run("import sys\ndef solve(inputs):\n    sys.exit(0)\n", {})
    assert_failed(res, "exception")


def test_exit_or_crash_without_a_result(sandbox: Sandbox) -> None:
    res = sandbox.run("import os\ndef solve(inputs):\n    os._exit(3)\n", {})
    assert_failed(res, "crashed")
    assert res.exit_code == 3
    res = sandbox.run("import faulthandler\ndef solve(inputs):\n    faulthandler._sigsegv()\n", {})
    assert_failed(res, "crashed")
    assert "SIGSEGV" in res.error
    assert_still_works(sandbox)


def test_non_json_return(sandbox: Sandbox) -> None:
    assert_failed(sandbox.run("def solve(inputs):\n    return {1, 2}\n", {}), "not json")
    assert_failed(sandbox.run("def solve(inputs):\n    return float('nan')\n", {}), "not json")
    assert_still_works(sandbox)


# ---------------------------------------------------------------- hostile scripts


@pytest.fixture
def secret(tmp_path: Path) -> tuple[Path, str]:
    token = uuid.uuid4().hex
    path = tmp_path / "secret.txt"
    path.write_text(token)
    return path, token


def _read_code(path: str) -> str:
    return f"def solve(inputs):\n    return open({path!r}).read()\n"


def assert_no_leak(res: SandboxResult, token: str) -> None:
    assert token not in json.dumps(res.to_dict())


def test_reading_outside_workspace_is_forbidden(sandbox: Sandbox, secret) -> None:
    path, token = secret
    for target in (str(path), "/etc/passwd", "/proc/1/environ"):
        res = sandbox.run(_read_code(target), {})
        assert_failed(res, "forbidden")
        assert_no_leak(res, token)
    assert_still_works(sandbox)


def test_reading_outside_workspace_fails_in_the_kernel(bare: Sandbox, secret) -> None:
    path, token = secret
    res = bare.run(_read_code(str(path)), {})
    if bare.backend == "rlimit":
        need_layer(res, "landlock")
    assert_failed(res, "exception")
    assert "PermissionError" in res.error or "FileNotFoundError" in res.error
    assert_no_leak(res, token)
    res = bare.run("import os\ndef solve(inputs):\n    return os.listdir('/')\n", {})
    if res.ok:  # bubblewrap without Landlock: its own minimal root, never the host's
        assert bare.backend == "bubblewrap"
        assert "home" not in res.value and "etc" not in res.value and "tmp" not in res.value
    else:
        assert_failed(res, "exception")


def test_writing_outside_workspace_is_forbidden(sandbox: Sandbox, bare: Sandbox, tmp_path) -> None:
    target = tmp_path / "escape.txt"
    code = f"def solve(inputs):\n    open({str(target)!r}, 'w').write('x')\n    return 1\n"
    assert_failed(sandbox.run(code, {}), "forbidden")
    res = bare.run(code, {})
    if bare.backend == "rlimit":
        need_layer(res, "landlock")
    assert_failed(res, "exception")
    assert not target.exists()


@pytest.fixture
def listener():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.3)
    yield srv, srv.getsockname()[1]
    srv.close()


def _assert_nobody_connected(srv: socket.socket) -> None:
    with pytest.raises(TimeoutError):
        conn, _ = srv.accept()
        conn.close()


def test_network_is_blocked(sandbox: Sandbox, bare: Sandbox, listener) -> None:
    srv, port = listener
    code = (
        "import socket\n"
        "def solve(inputs):\n"
        "    s = socket.create_connection(('127.0.0.1', inputs['port']), timeout=2)\n"
        "    s.sendall(b'leak')\n"
        "    return 1\n"
    )
    assert_failed(sandbox.run(code, {"port": port}), "forbidden")
    _assert_nobody_connected(srv)
    assert_still_works(sandbox)
    res = bare.run(code, {"port": port})
    if bare.backend == "rlimit":
        need_layer(res, "seccomp")  # and/or a network namespace
    assert_failed(res, "exception")
    assert "Error" in res.error
    _assert_nobody_connected(srv)


def test_fork_bomb_is_stopped(sandbox: Sandbox) -> None:
    code = "import os\ndef solve(inputs):\n    while True:\n        os.fork()\n"
    res = sandbox.run(code, {})
    assert_failed(res, "forbidden")
    assert "process" in res.error
    code = (
        "import subprocess\n"
        "def solve(inputs):\n"
        "    return subprocess.run(['/bin/true']).returncode\n"
    )
    assert_failed(sandbox.run(code, {}), "forbidden")
    assert_still_works(sandbox)


def test_fork_fails_in_the_kernel_even_as_root(bare: Sandbox) -> None:
    # root ignores RLIMIT_NPROC; the seccomp filter is what must hold here.
    code = (
        "import os\n"
        "def solve(inputs):\n"
        "    forked = 0\n"
        "    for _ in range(50):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            os._exit(0)\n"
        "        forked += 1\n"
        "    return forked\n"
    )
    res = bare.run(code, {})
    need_layer(res, "seccomp")
    assert_failed(res, "exception")
    assert "Operation not permitted" in res.error
    code = "import os\ndef solve(inputs):\n    os.execv('/bin/true', ['/bin/true'])\n"
    assert_failed(bare.run(code, {}), "exception")
    code = "import os\ndef solve(inputs):\n    os.kill(os.getppid(), 9)\n"
    assert_failed(bare.run(code, {}), "exception")
    assert_still_works(bare)


def test_infinite_loop_hits_the_cpu_limit(sandbox: Sandbox) -> None:
    res = sandbox.run("def solve(inputs):\n    while True:\n        pass\n", {})
    assert_failed(res, "cpu time")
    # It really spent CPU (the count can fall a little short of the limit on a busy machine).
    assert res.cpu_s is not None and res.cpu_s >= 0.5
    assert_still_works(sandbox)


def test_sleeping_forever_hits_the_wall_timeout(backend: str) -> None:
    sb = Sandbox(SandboxLimits(cpu_s=1, wall_s=1.0), backend=backend)
    res = sb.run("import time\ndef solve(inputs):\n    time.sleep(60)\n", {})
    assert_failed(res, "timeout")
    assert res.exit_code is not None and res.exit_code < 0  # killed by signal
    assert_still_works(sb)


def test_memory_bomb(sandbox: Sandbox) -> None:
    code = "def solve(inputs):\n    return len([bytes(64 << 20) for _ in range(64)])\n"
    res = sandbox.run(code, {})  # 4 GiB of (lazily zeroed) buffers: needs address space
    assert_failed(res, "memory")
    assert_still_works(sandbox)


def test_huge_output_is_truncated_and_fails(backend: str) -> None:
    sb = Sandbox(SandboxLimits(cpu_s=2, wall_s=30, max_output_bytes=4096), backend=backend)
    res = sb.run("def solve(inputs):\n    while True:\n        print('y' * 1000)\n", {})
    assert_failed(res, "output limit")
    assert res.truncated and len(res.stdout.encode()) + len(res.stderr.encode()) <= 4096
    assert res.stdout.startswith("y" * 1000)
    assert_still_works(sb)


def test_file_size_limit(backend: str) -> None:
    sb = Sandbox(SandboxLimits(cpu_s=2, wall_s=30, max_file_mb=1), backend=backend)
    code = (
        "def solve(inputs):\n"
        "    with open('big.bin', 'wb') as fh:\n"
        "        fh.write(b'0' * (4 << 20))\n"
        "    return 1\n"
    )
    res = sb.run(code, {})
    assert_failed(res, "exception")
    assert "File too large" in res.error


def test_ctypes_and_introspection_are_refused(sandbox: Sandbox) -> None:
    assert_failed(sandbox.run("import ctypes\ndef solve(inputs):\n    return 1\n", {}), "forbidden")
    code = "import gc\ndef solve(inputs):\n    return len(gc.get_objects())\n"
    assert_failed(sandbox.run(code, {}), "forbidden")
    # catching the refusal does not turn the run into a success
    code = (
        "def solve(inputs):\n"
        "    try:\n"
        "        open('/etc/hostname').read()\n"
        "    except Exception:\n"
        "        pass\n"
        "    return 1\n"
    )
    assert_failed(sandbox.run(code, {}), "forbidden")


# ---------------------------------------------------------------- seccomp program


def test_seccomp_program_jumps_stay_in_bounds() -> None:
    for machine in seccomp.SYSCALLS:
        prog = seccomp.seccomp_program(machine, os.getpid())
        assert prog is not None and prog[-1] == (seccomp.BPF_RET_K, 0, 0, seccomp.RET_ALLOW)
        for i, (code, jt, jf, _k) in enumerate(prog):
            if code in (seccomp.BPF_JEQ_K, seccomp.BPF_JGE_K, seccomp.BPF_JSET_K):
                assert i + 1 + max(jt, jf) < len(prog)
    assert seccomp.seccomp_program("sparc", 1) is None


def _decide(prog: list[tuple[int, int, int, int]], arch: int, nr: int, *args: int) -> int:
    """Run the filter on one system call (a BPF interpreter for the opcodes it uses)."""
    words = {seccomp.OFF_NR: nr, seccomp.OFF_ARCH: arch}
    for i, value in enumerate((*args, 0, 0, 0, 0, 0, 0)[:6]):
        words[seccomp.arg_lo(i)] = value & 0xFFFFFFFF
        words[seccomp.arg_hi(i)] = value >> 32
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        if code == seccomp.BPF_RET_K:
            return k
        if code == seccomp.BPF_LD_W_ABS:
            acc, pc = words[k], pc + 1
            continue
        taken = {
            seccomp.BPF_JEQ_K: acc == k,
            seccomp.BPF_JGE_K: acc >= k,
            seccomp.BPF_JSET_K: bool(acc & k),
        }[code]
        pc += 1 + (jt if taken else jf)


@pytest.mark.parametrize("machine", sorted(seccomp.SYSCALLS))
def test_seccomp_program_decisions(machine: str) -> None:
    arch, nrs = seccomp.SYSCALLS[machine]
    prog = seccomp.seccomp_program(machine, 1234)
    allow, eperm, eacces = (
        seccomp.RET_ALLOW,
        seccomp.RET_ERRNO | seccomp.EPERM,
        seccomp.RET_ERRNO | seccomp.EACCES,
    )

    def decide(name: str, *args: int) -> int:
        return _decide(prog, arch, nrs[name], *args)

    assert _decide(prog, arch ^ 1, nrs["prlimit64"]) == seccomp.RET_KILL_PROCESS
    assert decide("prlimit64", 0, 7, 0, 0x7FFF0000) == allow  # getrlimit
    assert decide("prlimit64", 0, 7, 0x7FFF0000, 0) == eperm  # setrlimit on ourselves
    assert decide("prlimit64", 0, 7, 1 << 40, 0) == eperm  # a pointer above 4 GiB
    assert decide("prlimit64", 4321, 7, 0, 0x7FFF0000) == eperm  # another process
    for name in ("setrlimit", "setpriority", "sched_setaffinity", "fanotify_init",
                 "fanotify_mark", "setsid", "setpgid", "execve", "unshare", "mount"):  # fmt: skip
        assert decide(name, 0, 0, 0) == eperm, name
    for cmd in seccomp.DENIED_IOCTLS:
        assert decide("ioctl", 3, cmd, 0) == eperm
        assert decide("ioctl", 3, cmd | (0xFFFF << 32), 0) == eperm  # the high word is ignored
    assert decide("ioctl", 3, 0x5401, 0) == allow  # TCGETS
    assert decide("socket", 1, 1, 0) == allow and decide("socket", 2, 1, 0) == eacces
    assert decide("connect", 3, 0x1000, 16) == eacces
    assert decide("sendto", 3, 0x1000, 4, 0, 0, 0) == allow  # send() on a socketpair
    assert decide("sendto", 3, 0x1000, 4, 0, 0x2000, 16) == eacces
    assert decide("sendmsg", 3, 0x1000, 0) == eacces
    assert decide("kill", 1234, 9) == allow and decide("kill", 1, 9) == eperm
    assert decide("clone", seccomp.CLONE_THREAD | 0x100) == allow and decide("clone", 17) == eperm
    assert decide("clone3", 0) == seccomp.RET_ERRNO | seccomp.ENOSYS
    assert _decide(prog, arch, 0 if machine == "x86_64" else 63) == allow  # read


# ---------------------------------------------------------------- harness death


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()
            if int(fields[1]) == pid:  # fields: state, ppid, ...
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sandbox_dies_with_the_harness(backend: str) -> None:
    import subprocess
    import sys
    import time

    harness = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from econbench.allo.sandbox.core import Sandbox, SandboxLimits\n"
            f"Sandbox(SandboxLimits(wall_s=60), backend={backend!r}).run("
            "'import time\\ndef solve(i):\\n    time.sleep(60)\\n', {})\n",
        ]
    )
    try:
        deadline = time.monotonic() + 20
        kids: list[int] = []
        while not kids and time.monotonic() < deadline:
            time.sleep(0.05)
            kids = _children(harness.pid)
        assert kids, "the harness never started a sandbox"
        time.sleep(0.5)  # let the runner get past its set-up
        family = list(kids)  # the runner and, in the fallback, its PID-namespace processes
        for pid in family:
            family += [c for c in _children(pid) if c not in family]
        harness.kill()
        harness.wait()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in family) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in family)
    finally:
        harness.kill()
        harness.wait()
