"""Run untrusted, model-written Python (the R3 framing) in a locked-down child process.

``Sandbox.run(code, inputs)`` writes ``code`` and ``inputs`` to a private temporary
directory and starts a fresh interpreter with ``python -I -S`` (isolated mode, standard
library only: no site-packages, no user site, no ``PYTHON*`` variables). The interpreter
receives the runner (``_runner.py`` with ``_confine.py`` and
``_seccomp.py``, compiled once per harness process) on stdin; the runner hardens
itself and then calls ``solve(inputs)``. The return value must be JSON-serialisable and at
most ``RESULT_LIMIT_BYTES`` (4 KiB) as JSON; comparing it with the exact answer is the
caller's job. The workspace is deleted afterwards and the whole process group is killed,
whatever happened.

Two backends, one promise. ``Sandbox.describe()`` says, before any episode, which layers the
backend puts in force on this machine; ``SandboxResult.layers`` says it for each run (a
layer the kernel refuses shows up as ``no-<layer>``). A backend that lacks any of
``REQUIRED_LAYERS`` is refused with a readable error naming what is missing, unless weak
sandboxes are allowed explicitly (``allow_weak=True``, ``--sandbox-allow-weak`` or
``ECONBENCH_SANDBOX_ALLOW_WEAK=1``); each run re-checks the layers in the child and fails
with "sandbox error" before any user code runs if one is gone.

``bubblewrap`` (when ``bwrap`` is installed and passes a self-test): new user, PID, network,
IPC, UTS and cgroup namespaces (``--unshare-all``), ``--die-with-parent``, ``--new-session``,
``--clearenv``, uid/gid 65534 inside, all capabilities dropped. The filesystem is a fresh
root holding only read-only binds of /usr, /lib*, /bin (symlinks mirrored) and the Python
installation, minimal /proc and /dev, the root and /dev remounted read-only, and a
size-capped tmpfs at /sandbox as the only writable place (the runner covers it with one whose
inodes are capped too). bwrap maps the sandbox's uid to its caller's, so a root harness
starts it through ``_gate`` as uid 65534: run as root, the script would own every host
inode it can see (``os.fchmod`` on ``/dev/null`` would change the host's).

``rlimit`` (the fallback where bwrap is missing or cannot start): the runner does the same
itself (``_confine``): new mount, PID, network, IPC, UTS and cgroup namespaces
(directly as root, else in a new user namespace), a private tmpfs root with the same
read-only binds, four device files and a size-capped tmpfs at /sandbox (no /proc: host
metadata is simply not there), the host root detached; the script runs as PID 1 of the new
PID namespace, as uid/gid 65534 with no capabilities, dying with the harness
(``PR_SET_PDEATHSIG``). Where the kernel or container refuses namespaces only the weak set
remains (rlimits, Landlock, seccomp, no root), and the backend is refused by default.

Inside either backend the runner adds: rlimits (CPU: soft = ``cpu_s``, SIGKILL one second
later; address space; file size; open files; no core), ``RLIMIT_NPROC`` where a fresh user
namespace makes it count only the sandbox's tasks, Landlock where the kernel has it, and a
seccomp filter (see ``_seccomp``: no processes, exec, signals or limits of other
processes, no network, no fanotify, no file-attribute ioctls, no mounts or namespaces, no
memfd, SysV IPC or message queues …). The PEP 578 audit hook (``python_guards``, on by
default) is a tripwire, not a layer: it gives readable messages and fails the run with reason
"forbidden" on a refused attempt (its first refusal reaches the harness at once), but a
script can disarm it, so it is reported apart (``SandboxResult.tripwire``) and the kernel
layers must hold without it; the tests check that they do.

The harness enforces the rest: wall-clock timeout and stdout+stderr capped at
``max_output_bytes`` (past either the process group is killed and the run fails with
"timeout" or "output limit"; the output is kept, truncated); the result pipe capped at
``REPORT_LIMIT_BYTES`` and the returned value at ``RESULT_LIMIT_BYTES`` ("result too large",
``value`` None, a short ``preview`` kept), whatever the script writes into the pipe; the
report's ``reason``/``error``/``layers`` are validated and clipped, since a script can forge
them. Where it can create cgroups, each run gets its own memory and pids cgroup
(``cgroup``): one budget for everything the run makes the kernel hold, which
rlimits cannot give; a run the kernel kills there fails with "memory". ``describe()``
derives the limits in force from the layers (``enforced_limits``), never from the settings
alone. Workspaces and cgroups are named after the harness pid and start time; those of dead
harnesses are swept at the next start, without following links, and a workspace that cannot
be removed is reported (``cleanup_error``, and a logged warning), see ``workspace``.

Failure reasons: "timeout", "cpu time", "memory", "output limit", "syntax error",
"missing entry", "exception", "forbidden", "not json", "result too large", "killed",
"crashed", "sandbox error"; ``error`` carries the detail, ``stderr`` the user traceback.

Choices where the spec is silent: rlimits are set by the runner as its first act rather
than by a ``preexec_fn`` (``preexec_fn`` is unsafe when the harness runs sandboxes from
several threads; no untrusted code runs before the runner sets them). Wall timeout defaults
to 10 s (twice the CPU limit), output to 64 KiB, file size to 16 MiB, open files to 64,
processes/threads to 16, the workspace tmpfs to 64 MiB, the return value to 4 KiB of JSON
(R3 answers are integers), the workspace to 4,096 inodes. Without a user namespace of its
own (the rlimit backend as root) ``RLIMIT_NPROC`` is skipped: it would count every process
of uid 65534; there the pids cgroup bounds tasks, and where none can be made ``describe()``
says threads are unbounded (seccomp still forbids new processes).
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
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from econbench.allo.sandbox._runner import TRIPWIRE_LINE
from econbench.allo.sandbox.cgroup import SANDBOX_OWN_TASKS, RunCgroup
from econbench.allo.sandbox.workspace import (
    remove_workspace,
    sweep_stale_workspaces,
    workspace_prefix,
)

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

REASONS = frozenset(
    {
        REASON_TIMEOUT,
        REASON_CPU,
        REASON_MEMORY,
        REASON_OUTPUT,
        REASON_SYNTAX,
        REASON_MISSING,
        REASON_EXCEPTION,
        REASON_FORBIDDEN,
        REASON_NOT_JSON,
        REASON_RESULT_SIZE,
        REASON_KILLED,
        REASON_CRASHED,
        REASON_SANDBOX,
    }
)

RESULT_LIMIT_BYTES = 4096  # the return value, as JSON (ASCII-escaped): R3 answers are integers
REPORT_LIMIT_BYTES = 64 * 1024  # the whole report on the result pipe
PREVIEW_CHARS = 160
ERROR_CHARS = 2000
WORKSPACE_IN_SANDBOX = "/sandbox"
WORKSPACE_IN_BWRAP = WORKSPACE_IN_SANDBOX
SANDBOX_UID = 65534
TRIPWIRE = "audit-hook"
ALLOW_WEAK_ENV = "ECONBENCH_SANDBOX_ALLOW_WEAK"
# What both backends must have in force for R3 to run without an explicit opt-in.
REQUIRED_LAYERS: tuple[str, ...] = (
    "rlimits",
    "mntns",
    "pidns",
    "netns",
    "private-root",
    "unprivileged",
    "seccomp",
)
# What bubblewrap itself guarantees (it refuses to start without any of these).
BWRAP_LAYERS: tuple[str, ...] = (
    "userns",
    "mntns",
    "pidns",
    "netns",
    "ipcns",
    "utsns",
    "cgroupns",
    "private-root",
    "die-with-parent",
)
_HERE = Path(__file__).parent
# Sent into the sandbox in this order; the last one runs as __main__.
_RUNNER_MODULES = (
    ("econbench.allo.sandbox._confine", _HERE / "_confine.py"),
    ("econbench.allo.sandbox._seccomp", _HERE / "_seccomp.py"),
    ("__main__", _HERE / "_runner.py"),
)
_GATE = _HERE / "_gate.py"
_READ_FILES = ("/etc/ld.so.cache",)
_DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


class SandboxUnavailable(RuntimeError):
    """The requested backend cannot run on this machine."""


class SandboxLimits(BaseModel):
    """Resource limits for one sandboxed run (defaults follow docs/allobench.md §4, R3)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_s: int = Field(5, ge=1, description="CPU seconds (RLIMIT_CPU soft limit)")
    memory_mb: int = Field(1024, ge=64, description="address space (RLIMIT_AS)")
    max_processes: int = Field(16, ge=1, description="RLIMIT_NPROC (processes+threads)")
    max_file_mb: int = Field(16, ge=1, description="largest file the script may write")
    max_output_bytes: int = Field(64 * 1024, ge=256, description="stdout+stderr cap")
    wall_s: float = Field(10.0, gt=0, description="wall-clock timeout of the whole run")
    max_open_files: int = Field(64, ge=16, description="RLIMIT_NOFILE")
    workspace_mb: int = Field(64, ge=1, description="size of the workspace tmpfs")
    workspace_inodes: int = Field(
        4096, ge=16, description="files and directories the workspace tmpfs can hold"
    )
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
    preview: str | None = None  # the start of a return value refused as too large
    # "audit-hook" when the tripwire was armed: readable refusals, never a boundary (a script
    # can disarm it); a run it caught fails as "forbidden", one it missed proves nothing.
    tripwire: str | None = None
    cleanup_error: str | None = None  # set when the workspace could not be removed

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["layers"] = list(self.layers)
        return data


# Turns the harness's code objects into modules. The runner imports its helpers as
# ``econbench.allo.sandbox._*``; inside the sandbox those names resolve to these modules
# (under empty stand-in packages), never to the installed econbench.
_LOADER = """
import sys, types
for _name in ("econbench", "econbench.allo", "econbench.allo.sandbox"):
    _pkg = types.ModuleType(_name)
    _pkg.__path__ = []
    sys.modules[_name] = _pkg
for _name, _code in MODULES[:-1]:
    _mod = types.ModuleType(_name)
    sys.modules[_name] = _mod
    exec(_code, _mod.__dict__)
exec(MODULES[-1][1], {"__name__": "__main__"})
"""


@functools.cache
def _runner_code() -> bytes:
    """The runner and its helpers, compiled once per harness process, sent on stdin.

    The sandbox runs the same interpreter build as the harness (the venv's base), so the
    marshal format matches; this saves recompiling ~1000 lines in every run.
    """
    modules = [
        (name, compile(path.read_text(encoding="utf-8"), f"<sandbox:{path.name}>", "exec"))
        for name, path in _RUNNER_MODULES
    ]
    return marshal.dumps((compile(_LOADER, "<econbench-sandbox-loader>", "exec"), modules))


# Reads the compiled runner from stdin; stdin is then at EOF for the user's script.
_BOOTSTRAP = "import marshal,sys;l,m=marshal.loads(sys.stdin.buffer.read());exec(l,{'MODULES':m})"


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


def _closed_ancestor(path: str) -> str | None:
    """The topmost directory above ``path`` that other users cannot enter, if any."""
    parts = Path(path).parts
    for i in range(2, len(parts)):
        top = str(Path(*parts[:i]))
        try:
            if not os.stat(top).st_mode & 0o001:
                return top
        except OSError:
            return None
    return None


def _unreachable_roots(roots: list[str]) -> list[list[Any]]:
    """``[closed directory, [roots below it]]`` for roots the sandbox's uid cannot reach."""
    below: dict[str, list[str]] = {}
    for root in sorted(roots, key=len):
        closed = _closed_ancestor(root)
        if closed is not None:
            below.setdefault(closed, []).append(root)
    return [[closed, roots] for closed, roots in below.items()]


def _gate_config(cgroup: RunCgroup | None) -> dict[str, Any] | None:
    """What bwrap's gate must do first (join the cgroup; as root, drop to the sandbox's uid
    with the Python installation reachable), or None when bwrap can start directly."""
    as_root = os.geteuid() == 0
    if cgroup is None and not as_root:
        return None
    uid = SANDBOX_UID if as_root else None
    return {
        "join": cgroup.procs_files if cgroup is not None else [],
        "uid": uid,
        "gid": uid,
        "reach": _unreachable_roots(_python_roots()) if as_root else [],
    }


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
            self.result_overflow = len(self.result) > REPORT_LIMIT_BYTES
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


def bwrap_path() -> str | None:
    """Where ``bwrap`` is installed, if it is."""
    return shutil.which("bwrap")


_sweep_lock = threading.Lock()
_swept = False


def _sweep_once() -> None:
    """Remove the workspaces of dead harnesses, once per process (at the first Sandbox)."""
    global _swept
    with _sweep_lock:
        if not _swept:
            _swept = True
            # as root, the weak fallback's workspaces belong to the sandbox's uid
            owners = {os.geteuid(), SANDBOX_UID} if os.geteuid() == 0 else {os.geteuid()}
            sweep_stale_workspaces(owners=frozenset(owners))


def _env_allows_weak() -> bool:
    return os.environ.get(ALLOW_WEAK_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class Sandbox:
    """Runs untrusted ``solve(inputs)`` scripts under ``limits`` with one backend.

    The constructor checks the backend's layers on this machine (one probe run per backend
    and process) and raises ``SandboxUnavailable`` when any of ``REQUIRED_LAYERS`` is
    missing, unless ``allow_weak`` (default: the ``ECONBENCH_SANDBOX_ALLOW_WEAK``
    environment variable) is true.
    """

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        backend: str = "auto",
        allow_weak: bool | None = None,
    ) -> None:
        self.limits = limits if limits is not None else SandboxLimits()
        self.allow_weak = _env_allows_weak() if allow_weak is None else bool(allow_weak)
        _sweep_once()
        why_not_bwrap = None
        if backend == "auto":
            backend = available_backend()
            if backend == "rlimit":
                why_not_bwrap = (
                    "bwrap is not installed"
                    if bwrap_path() is None
                    else "bwrap is installed but failed its self-test"
                )
        if backend not in BACKENDS:
            raise ValueError(f"unknown sandbox backend {backend!r}; expected auto|{BACKENDS}")
        if backend == "bubblewrap" and bwrap_path() is None:
            raise SandboxUnavailable("bubblewrap backend requested but bwrap is not installed")
        self.backend: str = backend
        self.required: tuple[str, ...] = ()
        layers = probe_layers(backend)
        missing = _missing(REQUIRED_LAYERS, layers)
        if missing and not self.allow_weak:
            raise SandboxUnavailable(_refusal(backend, missing, why_not_bwrap))
        self.required = tuple(r for r in REQUIRED_LAYERS if r not in missing)
        self._layers = layers

    @classmethod
    def _unchecked(cls, backend: str, limits: SandboxLimits) -> Sandbox:
        """A sandbox that requires nothing: only for probing what a backend achieves."""
        sb = cls.__new__(cls)
        sb.limits, sb.backend, sb.allow_weak, sb.required = limits, backend, True, ()
        sb._layers = ()
        return sb

    # ------------------------------------------------------------------ public

    def describe(self) -> dict[str, Any]:
        """The backend, its layers and the limits they enforce on this machine, for the
        preflight and the cell config."""
        missing = _missing(REQUIRED_LAYERS, self._layers)
        return {
            "backend": self.backend,
            "layers": [x for x in self._layers if not x.startswith("no-")],
            "absent": [x[3:] for x in self._layers if x.startswith("no-")],
            "required": list(REQUIRED_LAYERS),
            "missing": missing,
            "strong": not missing,
            "allow_weak": self.allow_weak,
            "limits": enforced_limits(self._layers, self.limits),
            "python_guards": self.limits.python_guards,
            "tripwire": TRIPWIRE if self.limits.python_guards else None,
            "result_limit_bytes": RESULT_LIMIT_BYTES,
        }

    def describe_line(self) -> str:
        """One line for a terminal: the backend, whether it is complete, its layers and what
        they bound."""
        d = self.describe()
        state = "complete" if d["strong"] else "WEAK (missing " + ", ".join(d["missing"]) + ")"
        limits = "; ".join(f"{k}: {v}" for k, v in d["limits"].items())
        return (
            f"R3 sandbox: {d['backend']} backend, {state}; layers: {', '.join(d['layers'])}; "
            f"limits: {limits}"
        )

    def run(self, code: str, inputs: dict, entry: str = "solve") -> SandboxResult:
        """Run ``code`` and return ``entry(inputs)``'s JSON value, or why it failed."""
        if not entry.isidentifier():
            raise ValueError(f"entry must be a Python identifier, got {entry!r}")
        inputs_json = json.dumps(inputs, allow_nan=False)  # a harness bug if this fails
        workspace = tempfile.mkdtemp(prefix=workspace_prefix())
        result: SandboxResult | None = None
        cgroup: RunCgroup | None = None
        try:
            os.chmod(workspace, 0o700)
            Path(workspace, "script.py").write_text(code, encoding="utf-8")
            Path(workspace, "inputs.json").write_text(inputs_json, encoding="utf-8")
            if self.backend == "rlimit" and os.geteuid() == 0:
                os.chown(workspace, SANDBOX_UID, SANDBOX_UID)  # weak fallback: it works here
            lim = self.limits
            cgroup = RunCgroup.create(lim.memory_mb << 20, lim.max_processes)
            result = self._execute(workspace, entry, cgroup)
            return result
        finally:
            problems = [remove_workspace(workspace)]
            if cgroup is not None:
                problems.append(cgroup.close())
            if result is not None:
                result.cleanup_error = "; ".join(p for p in problems if p) or None

    # ------------------------------------------------------------------ commands

    def _config(self, workspace: str, entry: str, result_fd: int) -> dict[str, Any]:
        lim = self.limits
        rlimit = self.backend == "rlimit"
        read_files = [p for p in _READ_FILES if os.path.exists(p)]
        tmpfs = {
            "workspace": WORKSPACE_IN_SANDBOX,
            "workspace_bytes": lim.workspace_mb << 20,
            "workspace_inodes": lim.workspace_inodes,
        }
        confine = {
            **tmpfs,
            "host_workspace": workspace,
            "read_roots": _python_roots(),
            "read_files": read_files,
            "device_files": [p for p in _DEVICE_FILES if os.path.exists(p)],
        }
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
            "confine": confine if rlimit else None,
            "workspace": None if rlimit else tmpfs,
            "in_userns": not rlimit,
            "parent_pid": os.getpid() if rlimit else None,
            "landlock": True,
            "seccomp": True,
            "audit": lim.python_guards,
            "required": [r for r in self.required if rlimit or r not in BWRAP_LAYERS],
            "result_limit": RESULT_LIMIT_BYTES,
            "read_roots": _python_roots() + _system_lib_roots(),
            "read_files": read_files,
            "write_files": list(_DEVICE_FILES),
        }

    def _command(
        self, config: dict[str, Any], cgroup: RunCgroup | None, data_fds: dict[str, int]
    ) -> list[str]:
        python = [_interpreter(), "-I", "-S", "-c", _BOOTSTRAP, json.dumps(config)]
        if self.backend == "rlimit":
            return python
        bwrap = [bwrap_path() or "bwrap", *self._bwrap_args(data_fds), "--", *python]
        gate = _gate_config(cgroup)
        if gate is None:
            return bwrap
        return [_interpreter(), "-I", "-S", str(_GATE), json.dumps(gate), *bwrap]

    def _bwrap_args(self, data_fds: dict[str, int]) -> list[str]:
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
        for name, fd in data_fds.items():  # copied in: bwrap need not reach the workspace
            args += ["--ro-bind-data", str(fd), f"{WORKSPACE_IN_BWRAP}/{name}"]
        # Nothing outside the workspace is writable: not the root tmpfs, not /dev (/dev/shm).
        args += ["--remount-ro", "/dev", "--remount-ro", "/"]
        args += ["--chdir", WORKSPACE_IN_BWRAP]
        return args

    def _env(self, workspace: str) -> dict[str, str]:
        if self.backend == "bubblewrap":
            return {"PATH": "/usr/bin:/bin"}
        return {"PATH": "/usr/bin:/bin", "HOME": workspace, "TMPDIR": workspace, "LANG": "C.UTF-8"}

    # ------------------------------------------------------------------ execution

    def _execute(self, workspace: str, entry: str, cgroup: RunCgroup | None) -> SandboxResult:
        result_r, result_w = os.pipe()
        config = self._config(workspace, entry, result_w)
        data_fds: dict[str, int] = {}
        if self.backend == "bubblewrap":
            for name in ("script.py", "inputs.json"):
                data_fds[name] = os.open(os.path.join(workspace, name), os.O_RDONLY)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                self._command(config, cgroup, data_fds),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workspace,
                env=self._env(workspace),
                start_new_session=True,
                pass_fds=(result_w, *data_fds.values()),
                close_fds=True,
            )
        except OSError as exc:
            os.close(result_r)
            return self._failure(REASON_SANDBOX, f"could not start the sandbox: {exc}", start)
        finally:
            for fd in (result_w, *data_fds.values()):
                os.close(fd)
        result_file = os.fdopen(result_r, "rb", buffering=0)
        reaped = False
        try:
            joined = self._join(proc, cgroup)
            deadline = start + self.limits.wall_s
            pump = self._pump(proc, result_file, deadline) if joined is None else _Pump()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # stragglers, whatever happened
            if cgroup is not None:
                cgroup.kill()  # and those in a session of their own (bwrap's sandbox)
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
        if joined is not None:
            return self._failure(REASON_SANDBOX, joined, start)
        proc.returncode = os.waitstatus_to_exitcode(status)
        # CPU of the direct child and what it reaped; under bubblewrap that is bwrap itself,
        # so there we rely on the runner's own report.
        cpu = None if self.backend == "bubblewrap" else rusage.ru_utime + rusage.ru_stime
        result = self._interpret(pump, proc.returncode, cpu, time.monotonic() - start)
        if cgroup is not None:
            result.layers = (*result.layers, *cgroup.layers)
            died = not result.ok and result.reason in (REASON_KILLED, REASON_CRASHED)
            if died and cgroup.oom_killed():
                result.reason = REASON_MEMORY
                result.error = (
                    f"the run's memory limit of {self.limits.memory_mb} MiB (kernel memory "
                    "included) was exhausted; the kernel killed it"
                )
        return result

    def _join(self, proc: subprocess.Popen, cgroup: RunCgroup | None) -> str | None:
        """Move the rlimit runner into the run's cgroup (it waits for stdin: nothing forked
        yet); bwrap's gate joins by itself. None, or why it failed."""
        if cgroup is None or self.backend != "rlimit":
            return None
        try:
            cgroup.attach(proc.pid)
        except OSError as exc:
            return f"could not move the sandbox into its cgroup: {exc}"
        return None

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
            msg = f"the report on the result pipe exceeds {REPORT_LIMIT_BYTES} bytes"
            preview = _text_preview(bytes(pump.result[:PREVIEW_CHARS]))
            return SandboxResult(
                False, None, reason=REASON_RESULT_SIZE, error=msg, preview=preview, **base
            )
        if pump.timed_out:
            msg = f"wall-clock timeout after {lim.wall_s:g} s; the process group was killed"
            return SandboxResult(False, None, reason=REASON_TIMEOUT, error=msg, **base)
        tripped, rest = _split_tripwire(bytes(pump.result))
        report = self._parse_report(rest)
        if tripped:
            return self._forbidden(report, base)
        if report is None:
            reason, msg = self._classify_death(code, cpu)
            return SandboxResult(False, None, reason=reason, error=msg, **base)
        # The script can write into the result pipe too: nothing in the report is trusted.
        if isinstance(report.get("cpu_s"), int | float):
            base["cpu_s"] = float(report["cpu_s"])
        base.update(self._layer_fields(report.get("layers")))
        if report.get("ok") is True:
            value = report.get("value")
            text = json.dumps(value)
            if len(text) > RESULT_LIMIT_BYTES:
                msg = (
                    f"the return value is {len(text)} bytes as JSON, "
                    f"over the {RESULT_LIMIT_BYTES}-byte limit"
                )
                return SandboxResult(
                    False,
                    None,
                    reason=REASON_RESULT_SIZE,
                    error=msg,
                    preview=text[:PREVIEW_CHARS],
                    **base,
                )
            return SandboxResult(True, value, reason=None, **base)
        reason = report.get("reason")
        if reason not in REASONS:
            reason = REASON_CRASHED
        error = report.get("error")
        error = error[:ERROR_CHARS] if isinstance(error, str) else None
        preview = report.get("preview")
        preview = preview[:PREVIEW_CHARS] if isinstance(preview, str) else None
        return SandboxResult(False, None, reason=reason, error=error, preview=preview, **base)

    def _layer_fields(self, raw: Any) -> dict[str, Any]:
        """``layers``: the runner's kernel layers (bounded: a script can forge them), after
        bubblewrap's own; ``tripwire``: the audit hook, which is not a layer."""
        inside = tuple(str(x)[:64] for x in raw[:64]) if isinstance(raw, list) else ()
        layers = tuple(x for x in inside if x != TRIPWIRE)
        return {
            "layers": (BWRAP_LAYERS + layers) if self.backend == "bubblewrap" else layers,
            "tripwire": TRIPWIRE if TRIPWIRE in inside else None,
        }

    def _forbidden(self, report: dict[str, Any] | None, base: dict[str, Any]) -> SandboxResult:
        """The tripwire fired: whatever the script did afterwards, the run failed."""
        error = report.get("error") if report and report.get("reason") == "forbidden" else None
        if not isinstance(error, str):
            error = "the audit-hook tripwire refused an attempt; the script carried on"
        if report is not None:
            base.update(self._layer_fields(report.get("layers")))
        return SandboxResult(
            False, None, reason=REASON_FORBIDDEN, error=error[:ERROR_CHARS], **base
        )

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


# Imports extension modules too: a sandbox whose uid cannot read the Python installation
# (the weak fallback as root, with Python under a 0700 home) fails here, not in an episode.
_SELF_TEST_CODE = (
    "import collections, decimal, heapq, json, math, zlib\n"
    "def solve(inputs):\n    return inputs['x'] + 1\n"
)


def enforced_limits(layers: tuple[str, ...] | list[str], lim: SandboxLimits) -> dict[str, str]:
    """What bounds a run on this machine, by resource, and which mechanism bounds it.

    Derived from the layers actually in force (the self-test run's), never from the
    settings alone: a limit whose mechanism is missing here is said to be unbounded.
    """
    has = set(layers)
    mib = lim.memory_mb
    memory = [f"{mib} MiB of address space per process (RLIMIT_AS)"]
    if "cgroup-memory" in has:
        memory.append(f"{mib} MiB for the whole run, kernel memory included (memory cgroup)")
    else:
        memory.append(
            "no memory cgroup: kernel memory outside the address space is bounded "
            "only by the workspace caps, the seccomp filter and the CPU limit"
        )
    tasks = []
    if "nproc" in has:
        tasks.append(f"{lim.max_processes} (RLIMIT_NPROC in the run's own user namespace)")
    if "cgroup-pids" in has:
        tasks.append(
            f"{lim.max_processes + SANDBOX_OWN_TASKS} with the sandbox's own (pids cgroup)"
        )
    if not tasks:
        tasks.append(
            "threads unbounded (no pids cgroup, no user namespace of its own); "
            "new processes are refused by seccomp"
        )
    workspace = f"{lim.workspace_mb} MiB, " + (
        f"{lim.workspace_inodes} files and directories"
        if "workspace-inodes" in has
        else "files and directories unbounded"
    )
    return {
        "cpu": f"{lim.cpu_s} s (RLIMIT_CPU), wall clock {lim.wall_s:g} s",
        "memory": "; ".join(memory),
        "tasks": "; ".join(tasks),
        "workspace": workspace,
        "files": f"{lim.max_file_mb} MiB per file, {lim.max_open_files} open",
        "output": f"{lim.max_output_bytes} bytes of stdout+stderr, {RESULT_LIMIT_BYTES} of result",
    }


def _split_tripwire(data: bytes) -> tuple[bool, bytes]:
    """Whether the tripwire wrote its line into the report pipe, and the rest (the report)."""
    return TRIPWIRE_LINE in data, data.replace(TRIPWIRE_LINE, b"")


def _text_preview(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")[:PREVIEW_CHARS]


def _missing(required: tuple[str, ...], layers: tuple[str, ...]) -> list[str]:
    """Required layer names (prefixes: "seccomp" matches "seccomp-x86_64") not in ``layers``."""
    return [r for r in required if not any(x == r or x.startswith(r + "-") for x in layers)]


_HINTS = {
    "mntns": "mount namespaces",
    "pidns": "a PID namespace",
    "netns": "a network namespace",
    "private-root": "a private root (host files and their metadata would be visible)",
    "unprivileged": "an unprivileged uid without capabilities",
    "seccomp": "the seccomp filter (this architecture has none)",
    "rlimits": "resource limits",
}


def _refusal(backend: str, missing: list[str], why_not_bwrap: str | None) -> str:
    lacking = "; ".join(f"{m} ({_HINTS.get(m, m)})" for m in missing)
    first = f"{why_not_bwrap}, so R3 would use the rlimit fallback; " if why_not_bwrap else ""
    return (
        f"{first}the {backend} sandbox on this machine lacks: {lacking}. It would be weaker "
        "than the full sandbox, so R3 refuses to run. Install bubblewrap or allow user "
        "namespaces (e.g. run outside a container that forbids them), or accept the weaker "
        f"sandbox with --sandbox-allow-weak ({ALLOW_WEAK_ENV}=1)."
    )


@functools.cache
def probe_layers(backend: str) -> tuple[str, ...]:
    """The layers ``backend`` puts in force on this machine (one trusted run, cached)."""
    res = Sandbox._unchecked(backend, SandboxLimits(wall_s=20)).run(_SELF_TEST_CODE, {"x": 41})
    if not (res.ok and res.value == 42):
        detail = res.error or res.reason or "no result"
        if "ModuleNotFoundError" in detail or "PermissionError" in detail:
            detail += (
                f" (uid {SANDBOX_UID} cannot read the Python installation under "
                f"{', '.join(_python_roots())}: install Python where other users can read "
                "it, or make bubblewrap or user namespaces available)"
            )
        raise SandboxUnavailable(f"the {backend} sandbox failed its self-test: {detail}")
    return res.layers


@functools.cache
def _bubblewrap_works() -> bool:
    if bwrap_path() is None:
        return False
    try:
        probe_layers("bubblewrap")
    except (OSError, SandboxUnavailable):
        return False
    return True


def available_backend() -> str:
    """The backend ``Sandbox(backend="auto")`` uses: bubblewrap if it passes a self-test."""
    return "bubblewrap" if _bubblewrap_works() else "rlimit"
