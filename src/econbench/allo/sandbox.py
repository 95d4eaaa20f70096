"""Run untrusted, model-written Python (the R3 framing) in a locked-down child process.

``Sandbox.run(code, inputs)`` writes ``code`` and ``inputs`` to a private temporary
directory and starts a fresh interpreter with ``python -I -S`` (isolated mode, standard
library only: no site-packages, no user site, no ``PYTHON*`` variables). The interpreter
receives ``_sandbox_runner.py`` (compiled once per harness process) on stdin; the runner
hardens itself and then calls ``solve(inputs)``. The return value must be JSON-serialisable;
comparing it with the exact answer is the caller's job. The directory is deleted afterwards
and the whole process group is killed, whatever happened.

Two backends; ``SandboxResult.backend`` and ``SandboxResult.layers`` say which protections
were actually in force for a run (a layer the kernel refuses shows up as ``no-<layer>``).

``bubblewrap`` (when ``bwrap`` is installed and passes a self-test): new user, PID, network,
IPC, UTS and cgroup namespaces (``--unshare-all``), ``--die-with-parent``, ``--new-session``,
``--clearenv``, uid/gid 65534 inside, all capabilities dropped. The filesystem is a fresh
root holding only read-only binds of /usr, /lib*, /bin (symlinks mirrored) and the Python
installation, minimal /proc and /dev, and a size-capped tmpfs at /sandbox as the only
writable place. Inside, the runner adds the rlimits, Landlock, seccomp and audit hook below.

``rlimit`` (fallback): the runner applies, in order, ``PR_SET_PDEATHSIG`` (dies with the
harness), rlimits (CPU, address space, file size, open files, no core), a new network (+IPC,
UTS) namespace (directly when root, via an unprivileged user namespace otherwise; only a
down loopback remains), ``RLIMIT_NPROC``, Landlock where the kernel has it (read-only access
to the Python installation and system libraries, full access to the workspace, nothing
else: /etc, /home, /tmp, /proc are invisible; TCP bind/connect denied; signals confined),
and the seccomp filter. Without Landlock the filesystem confinement rests on the Python
audit hook alone, which is a strong obstacle but not a security boundary.

Guarantees common to both (kernel-enforced where the layer is listed in ``layers``):
- CPU time (``RLIMIT_CPU``, soft = ``cpu_s``, SIGKILL one second later), address space
  (``RLIMIT_AS``), file size, open files; no core dumps;
- no process creation and no exec: seccomp returns EPERM for fork/vfork/clone without
  CLONE_THREAD/execve (clone3 gets ENOSYS so libc falls back to clone). This is what stops
  a fork bomb when we run as root, for which the kernel ignores ``RLIMIT_NPROC``. Threads
  are allowed, bounded by the address-space limit and, for non-root users, by
  ``RLIMIT_NPROC`` (set after entering a fresh user namespace, so it counts only the
  sandbox's tasks; without one it is skipped rather than counting the user's other work);
- seccomp also refuses non-Unix sockets, signals to other processes, ptrace, mount,
  namespaces, modules, reboot, clock changes and io_uring (x86_64 fully; aarch64 a shorter
  list: processes, exec, sockets, signals, ptrace, mount, reboot, namespaces);
- wall-clock timeout, and stdout+stderr capped at ``max_output_bytes``: past either the
  process group is killed (SIGKILL) and the run fails with reason "timeout" or
  "output limit" (the output is kept, truncated, and ``truncated`` is set);
- a PEP 578 audit hook (``python_guards``, on by default) refuses opening files outside the
  workspace/stdlib, writing outside the workspace, creating processes, using sockets,
  importing ctypes and gc introspection, with a readable message; any refused attempt
  fails the run with reason "forbidden", even if the script catches the exception.

Failure reasons: "timeout", "cpu time", "memory", "output limit", "syntax error",
"missing entry", "exception", "forbidden", "not json", "result too large", "killed",
"crashed", "sandbox error"; ``error`` carries the detail, ``stderr`` the user traceback.

Choices where the spec is silent: rlimits are set by the runner as its first act rather
than by a ``preexec_fn`` (``preexec_fn`` is unsafe when the harness runs sandboxes from
several threads; no untrusted code runs before the runner sets them). Wall timeout defaults
to 10 s (twice the CPU limit), output to 64 KiB, file size to 16 MiB, open files to 64,
processes/threads to 16, the bubblewrap workspace tmpfs to 64 MiB. The rlimit backend's
workspace is a host temporary directory; its total size is bounded only per file. The
result travels over an inherited pipe, which the script could also write to: a script can
only ever claim a return value, which it could simply return anyway.
"""

from __future__ import annotations

import contextlib
import functools
import json
import marshal
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BackendName = Literal["bubblewrap", "rlimit"]
BACKENDS: tuple[str, ...] = ("bubblewrap", "rlimit")

# Reasons a run can fail (SandboxResult.reason).
REASON_TIMEOUT = "timeout"
REASON_CPU = "cpu time"
REASON_MEMORY = "memory"
REASON_OUTPUT = "output limit"
REASON_SYNTAX = "syntax error"
REASON_MISSING = "missing entry"
REASON_EXCEPTION = "exception"
REASON_FORBIDDEN = "forbidden"
REASON_NOT_JSON = "not json"
REASON_RESULT_SIZE = "result too large"
REASON_KILLED = "killed"
REASON_CRASHED = "crashed"
REASON_SANDBOX = "sandbox error"

RESULT_LIMIT_BYTES = 1 << 20
WORKSPACE_IN_BWRAP = "/sandbox"
SANDBOX_UID = 65534
_RUNNER_PATH = Path(__file__).with_name("_sandbox_runner.py")
_READ_FILES = ("/etc/ld.so.cache",)
_DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


class SandboxUnavailable(RuntimeError):
    """The requested backend cannot run on this machine."""


class SandboxLimits(BaseModel):
    """Resource limits for one sandboxed run (defaults follow spec §4 R3)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_s: int = Field(5, ge=1, description="CPU seconds (RLIMIT_CPU soft limit)")
    memory_mb: int = Field(1024, ge=64, description="address space (RLIMIT_AS)")
    max_processes: int = Field(16, ge=1, description="RLIMIT_NPROC (processes+threads)")
    max_file_mb: int = Field(16, ge=1, description="largest file the script may write")
    max_output_bytes: int = Field(64 * 1024, ge=256, description="stdout+stderr cap")
    wall_s: float = Field(10.0, gt=0, description="wall-clock timeout of the whole run")
    max_open_files: int = Field(64, ge=16, description="RLIMIT_NOFILE")
    workspace_mb: int = Field(64, ge=1, description="tmpfs size of the bubblewrap workspace")
    python_guards: bool = Field(True, description="install the Python audit-hook layer")


@dataclass
class SandboxResult:
    """The outcome of one run. ``value`` is the JSON round-trip of ``solve``'s return."""

    ok: bool
    value: Any
    stdout: str
    stderr: str
    reason: str | None
    exit_code: int | None
    wall_s: float
    backend: str
    error: str | None = None
    truncated: bool = False
    cpu_s: float | None = None
    layers: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["layers"] = list(self.layers)
        return data


@functools.cache
def _runner_source() -> str:
    return _RUNNER_PATH.read_text(encoding="utf-8")


@functools.cache
def _runner_code() -> bytes:
    """The runner, compiled once per harness process and sent to each sandbox on stdin.

    The sandbox runs the same interpreter build as the harness (the venv's base), so the
    marshal format matches; this saves recompiling ~600 lines in every run.
    """
    return marshal.dumps(compile(_runner_source(), "<econbench-sandbox-runner>", "exec"))


# Reads the compiled runner from stdin; stdin is then at EOF for the user's script.
_BOOTSTRAP = (
    "import marshal,sys;exec(marshal.loads(sys.stdin.buffer.read()),{'__name__':'__main__'})"
)


def _interpreter() -> str:
    """The base interpreter (not a venv shim): the sandbox needs only the stdlib."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _python_roots() -> list[str]:
    """Directories the interpreter and its standard library live in."""
    interp = _interpreter()
    roots = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)}
    roots.add(os.path.dirname(os.path.dirname(interp)))
    return sorted(roots)


def _system_lib_roots() -> list[str]:
    out = []
    for p in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32"):
        real = os.path.realpath(p)
        if os.path.isdir(real) and real not in out:
            out.append(real)
    return out


@dataclass
class _Pump:
    """What came out of the sandbox while it ran."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    result: bytearray = field(default_factory=bytearray)
    timed_out: bool = False
    overflow: bool = False
    result_overflow: bool = False

    @property
    def failed(self) -> bool:
        return self.timed_out or self.overflow or self.result_overflow

    def add(self, name: str, chunk: bytes, max_output: int) -> None:
        getattr(self, name).extend(chunk)
        if name == "result":
            self.result_overflow = len(self.result) > RESULT_LIMIT_BYTES
        elif len(self.stdout) + len(self.stderr) > max_output:
            self.overflow = True


def _wait_exit(pid: int, deadline: float) -> bool:
    """Wait (without reaping) until ``pid`` exits; False on deadline."""
    while True:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)


def _remove_tree(path: str) -> None:
    """Delete the workspace even if the script made parts of it unreadable."""
    for root, dirs, _files in os.walk(path):
        for d in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, d), 0o700, follow_symlinks=False)
    shutil.rmtree(path, ignore_errors=True)


def bwrap_path() -> str | None:
    """Where ``bwrap`` is installed, if it is."""
    return shutil.which("bwrap")


class Sandbox:
    """Runs untrusted ``solve(inputs)`` scripts under ``limits`` with one backend."""

    def __init__(self, limits: SandboxLimits | None = None, backend: str = "auto") -> None:
        self.limits = limits if limits is not None else SandboxLimits()
        if backend == "auto":
            backend = available_backend()
        if backend not in BACKENDS:
            raise ValueError(f"unknown sandbox backend {backend!r}; expected auto|{BACKENDS}")
        if backend == "bubblewrap" and bwrap_path() is None:
            raise SandboxUnavailable("bubblewrap backend requested but bwrap is not installed")
        self.backend: str = backend

    # ------------------------------------------------------------------ public

    def run(self, code: str, inputs: dict, entry: str = "solve") -> SandboxResult:
        """Run ``code`` and return ``entry(inputs)``'s JSON value, or why it failed."""
        if not entry.isidentifier():
            raise ValueError(f"entry must be a Python identifier, got {entry!r}")
        inputs_json = json.dumps(inputs, allow_nan=False)  # a harness bug if this fails
        workspace = tempfile.mkdtemp(prefix="econbench-sandbox-")
        try:
            os.chmod(workspace, 0o700)
            Path(workspace, "script.py").write_text(code, encoding="utf-8")
            Path(workspace, "inputs.json").write_text(inputs_json, encoding="utf-8")
            return self._execute(workspace, entry)
        finally:
            _remove_tree(workspace)

    # ------------------------------------------------------------------ commands

    def _config(self, workspace: str, entry: str, result_fd: int) -> dict[str, Any]:
        lim = self.limits
        inside_ws = WORKSPACE_IN_BWRAP if self.backend == "bubblewrap" else workspace
        return {
            "result_fd": result_fd,
            "script": "script.py",
            "inputs": "inputs.json",
            "entry": entry,
            "limits": {
                "cpu_s": lim.cpu_s,
                "memory_bytes": lim.memory_mb << 20,
                "max_file_bytes": lim.max_file_mb << 20,
                "max_open_files": lim.max_open_files,
                "max_processes": lim.max_processes,
            },
            "unshare_net": self.backend == "rlimit",
            "in_userns": self.backend == "bubblewrap",
            "parent_pid": os.getpid() if self.backend == "rlimit" else None,
            "landlock": True,
            "seccomp": True,
            "audit": lim.python_guards,
            "read_roots": _python_roots() + _system_lib_roots(),
            "write_roots": [inside_ws],
            "read_files": [p for p in _READ_FILES if os.path.exists(p)],
            "write_files": list(_DEVICE_FILES),
        }

    def _command(self, workspace: str, config: dict[str, Any]) -> list[str]:
        python = [_interpreter(), "-I", "-S", "-c", _BOOTSTRAP, json.dumps(config)]
        if self.backend == "rlimit":
            return python
        return [bwrap_path() or "bwrap", *self._bwrap_args(workspace), "--", *python]

    def _bwrap_args(self, workspace: str) -> list[str]:
        args = [
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--setenv", "PATH", "/usr/bin:/bin",
            "--setenv", "HOME", WORKSPACE_IN_BWRAP,
            "--setenv", "TMPDIR", WORKSPACE_IN_BWRAP,
            "--setenv", "LANG", "C.UTF-8",
            "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_UID),
            "--hostname", "sandbox",
            "--cap-drop", "ALL",
            "--ro-bind", "/usr", "/usr",
        ]  # fmt: skip
        for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32"):
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        for root in _python_roots():
            if root != "/usr" and not root.startswith("/usr/"):
                args += ["--ro-bind", root, root]
        for path in _READ_FILES:
            args += ["--ro-bind-try", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--size", str(self.limits.workspace_mb << 20), "--perms", "1777"]
        args += ["--tmpfs", WORKSPACE_IN_BWRAP]
        for name in ("script.py", "inputs.json"):
            args += ["--ro-bind", os.path.join(workspace, name), f"{WORKSPACE_IN_BWRAP}/{name}"]
        args += ["--chdir", WORKSPACE_IN_BWRAP]
        return args

    def _env(self, workspace: str) -> dict[str, str]:
        if self.backend == "bubblewrap":
            return {"PATH": "/usr/bin:/bin"}
        return {"PATH": "/usr/bin:/bin", "HOME": workspace, "TMPDIR": workspace, "LANG": "C.UTF-8"}

    # ------------------------------------------------------------------ execution

    def _execute(self, workspace: str, entry: str) -> SandboxResult:
        result_r, result_w = os.pipe()
        config = self._config(workspace, entry, result_w)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                self._command(workspace, config),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workspace,
                env=self._env(workspace),
                start_new_session=True,
                pass_fds=(result_w,),
                close_fds=True,
            )
        except OSError as exc:
            os.close(result_r)
            return self._failure(REASON_SANDBOX, f"could not start the sandbox: {exc}", start)
        finally:
            os.close(result_w)
        result_file = os.fdopen(result_r, "rb", buffering=0)
        reaped = False
        try:
            pump = self._pump(proc, result_file, start + self.limits.wall_s)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # stragglers, whatever happened
            _, status, rusage = os.wait4(proc.pid, 0)
            reaped = True
        finally:
            if not reaped:  # an exception in the harness: never leave the sandbox running
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr, result_file):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        # CPU of the direct child and what it reaped; under bubblewrap that is bwrap itself,
        # so there we rely on the runner's own report.
        cpu = None if self.backend == "bubblewrap" else rusage.ru_utime + rusage.ru_stime
        return self._interpret(pump, proc.returncode, cpu, time.monotonic() - start)

    def _pump(self, proc: subprocess.Popen, result_file: Any, deadline: float) -> _Pump:
        """Feed the runner, collect stdout/stderr/result until exit, overflow or deadline."""
        pump = _Pump()
        payload = memoryview(_runner_code())
        names = {proc.stdout: "stdout", proc.stderr: "stderr", result_file: "result"}
        with selectors.DefaultSelector() as sel:
            for stream in (*names, proc.stdin):
                os.set_blocking(stream.fileno(), False)
            for stream in names:
                sel.register(stream, selectors.EVENT_READ)
            sel.register(proc.stdin, selectors.EVENT_WRITE)
            while len(sel.get_map()) and not pump.failed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    pump.timed_out = True
                    break
                for key, _ in sel.select(timeout=min(remaining, 0.5)):
                    if key.fileobj is proc.stdin:
                        try:
                            payload = payload[os.write(key.fd, payload) :]
                        except BrokenPipeError:
                            payload = payload[:0]
                        if not payload:
                            sel.unregister(proc.stdin)
                            proc.stdin.close()  # EOF for the runner (and the script)
                        continue
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    pump.add(names[key.fileobj], chunk, self.limits.max_output_bytes)
        if not pump.failed:
            pump.timed_out = not _wait_exit(proc.pid, deadline)
        return pump

    def _interpret(self, pump: _Pump, code: int, cpu: float | None, wall: float) -> SandboxResult:
        """Turn what the pump saw and how the process ended into a SandboxResult."""
        lim = self.limits
        stdout, stderr, truncated = self._clip(pump.stdout, pump.stderr)
        base: dict[str, Any] = {
            "stdout": stdout,
            "stderr": stderr,
            "exit_code": code,
            "wall_s": wall,
            "backend": self.backend,
            "truncated": truncated,
            "cpu_s": cpu,
        }
        if pump.overflow:
            msg = f"stdout+stderr exceeded {lim.max_output_bytes} bytes; the run was killed"
            return SandboxResult(False, None, reason=REASON_OUTPUT, error=msg, **base)
        if pump.result_overflow:
            msg = f"the return value exceeds {RESULT_LIMIT_BYTES} bytes as JSON"
            return SandboxResult(False, None, reason=REASON_RESULT_SIZE, error=msg, **base)
        if pump.timed_out:
            msg = f"wall-clock timeout after {lim.wall_s:g} s; the process group was killed"
            return SandboxResult(False, None, reason=REASON_TIMEOUT, error=msg, **base)
        report = self._parse_report(bytes(pump.result))
        if report is None:
            reason, msg = self._classify_death(code, cpu)
            return SandboxResult(False, None, reason=reason, error=msg, **base)
        if isinstance(report.get("cpu_s"), int | float):
            base["cpu_s"] = float(report["cpu_s"])
        layers = tuple(str(x) for x in report.get("layers") or ())
        if report.get("ok") is True:
            return SandboxResult(True, report.get("value"), reason=None, layers=layers, **base)
        reason = str(report.get("reason") or REASON_CRASHED)
        error = report.get("error")
        return SandboxResult(False, None, reason=reason, error=error, layers=layers, **base)

    def _classify_death(self, code: int, cpu: float | None) -> tuple[str, str]:
        """Why a run ended without a report: signal, CPU hard limit, or a crash."""
        sig: int | None = None
        if code < 0:
            sig = -code
        elif self.backend == "bubblewrap" and code > 128:
            sig = code - 128  # bwrap reports a signalled child as 128 + signal
        if sig is not None:
            over_cpu = cpu is not None and cpu >= self.limits.cpu_s - 0.05
            if sig == signal.SIGXCPU or (sig == signal.SIGKILL and over_cpu):
                return REASON_CPU, f"CPU time limit of {self.limits.cpu_s} s exceeded"
            if sig == signal.SIGKILL:
                return REASON_KILLED, "killed by SIGKILL (CPU hard limit or out of memory)"
            with contextlib.suppress(ValueError):
                return REASON_CRASHED, f"the process died from {signal.Signals(sig).name}"
        return REASON_CRASHED, f"the process exited with code {code} without a result"

    def _clip(self, out: bytearray, err: bytearray) -> tuple[str, str, bool]:
        cap = self.limits.max_output_bytes
        truncated = len(out) + len(err) > cap
        out_b = bytes(out[:cap])
        err_b = bytes(err[: max(0, cap - len(out_b))])
        return (
            out_b.decode("utf-8", errors="replace"),
            err_b.decode("utf-8", errors="replace"),
            truncated,
        )

    @staticmethod
    def _parse_report(data: bytes) -> dict[str, Any] | None:
        if not data:
            return None
        try:
            report = json.loads(data)
        except (ValueError, RecursionError):
            return None
        return report if isinstance(report, dict) else None

    def _failure(self, reason: str, error: str, start: float) -> SandboxResult:
        return SandboxResult(
            ok=False,
            value=None,
            stdout="",
            stderr="",
            reason=reason,
            exit_code=None,
            wall_s=time.monotonic() - start,
            backend=self.backend,
            error=error,
        )


_SELF_TEST_CODE = "def solve(inputs):\n    return inputs['x'] + 1\n"


@functools.cache
def _bubblewrap_works() -> bool:
    if bwrap_path() is None:
        return False
    try:
        res = Sandbox(SandboxLimits(wall_s=20), backend="bubblewrap").run(
            _SELF_TEST_CODE, {"x": 41}
        )
    except (OSError, SandboxUnavailable):
        return False
    return res.ok and res.value == 42


def available_backend() -> str:
    """The backend ``Sandbox(backend="auto")`` uses: bubblewrap if it passes a self-test."""
    return "bubblewrap" if _bubblewrap_works() else "rlimit"
