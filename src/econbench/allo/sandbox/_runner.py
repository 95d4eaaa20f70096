"""In-sandbox entry script: harden this process, then run the untrusted ``solve``.

``econbench.allo.sandbox.core`` compiles this file and its two helpers (``_confine``,
``_seccomp``) once, sends the code objects to a fresh ``python -I -S`` inside the
sandbox over stdin (stdlib only, no site-packages, no environment influence) and passes one
JSON config argument. It must use only the standard library; inside the sandbox the
``econbench.allo`` imports below resolve to the code objects the harness sent, never to the
installed package.

Order matters, because each step needs powers the next ones take away:
0. ``PR_SET_PDEATHSIG`` (rlimit backend; bubblewrap has ``--die-with-parent``);
1. rlimits (CPU, address space, file size, open files, no core dumps);
2. rlimit backend: ``confine`` (namespaces, a private root, uid 65534 without capabilities,
   a fork into the new PID namespace), then RLIMIT_NPROC where a fresh user namespace makes
   it count only the sandbox's own tasks;
3. Landlock (kernel-enforced filesystem, TCP and signal scoping) where the kernel has it;
4. the seccomp-BPF filter (``_seccomp``);
5. a check that every layer the harness requires is in force: if one is missing the run
   fails with "sandbox error" before any user code is compiled;
6. a PEP 578 audit hook: a tripwire with readable messages, not a boundary (code in the
   same interpreter can reach its frames); every attempt it blocks fails the run with
   reason "forbidden".
Then the user's code is compiled and ``entry(inputs)`` is called; the outcome is written as
one JSON object to the result file descriptor. A return value larger than
``result_limit`` bytes of JSON is not sent: the run fails with "result too large" and a
short preview.
"""

import builtins
import gc
import json
import os
import resource
import signal
import sys
import traceback

from econbench.allo.sandbox._confine import (
    PR_SET_NO_NEW_PRIVS,
    capabilities_clear,
    confine,
    libc,
    remount_workspace,
    set_death_signal,
)
from econbench.allo.sandbox._seccomp import apply_seccomp

RESULT_FD = -1  # set from the config when run as the sandbox entry script


class SandboxViolation(PermissionError):
    """Raised by the audit hook when the script tries something the sandbox forbids."""


class CpuTimeExceeded(BaseException):
    """Raised from the SIGXCPU handler (a BaseException so `except Exception` can't eat it)."""


def emit(result):
    data = json.dumps(result).encode() + b"\n"
    view = memoryview(data)
    while view:
        n = os.write(RESULT_FD, view)
        view = view[n:]


def finish(result):
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    emit(result)
    os._exit(0)


# --------------------------------------------------------------------------- 1. rlimits


def lower_rlimits(pairs):
    for what, value in pairs:
        _soft, hard = resource.getrlimit(what)
        new_hard = value[1] if hard == resource.RLIM_INFINITY else min(hard, value[1])
        resource.setrlimit(what, (min(value[0], new_hard), new_hard))


def apply_rlimits(lim):
    cpu = int(lim["cpu_s"])
    lower_rlimits(
        [
            (resource.RLIMIT_CPU, (cpu, cpu + 1)),
            (resource.RLIMIT_AS, (lim["memory_bytes"], lim["memory_bytes"])),
            (resource.RLIMIT_FSIZE, (lim["max_file_bytes"], lim["max_file_bytes"])),
            (resource.RLIMIT_NOFILE, (lim["max_open_files"], lim["max_open_files"])),
            (resource.RLIMIT_CORE, (0, 0)),
        ]
    )


def apply_nproc(lim, fresh_userns):
    """RLIMIT_NPROC counts every task of our uid in our user namespace (and root is exempt).

    Inside a user namespace of our own the count starts near zero, so the limit means what
    it says. Outside one it would count the invoking user's other processes too, and a low
    limit would only break threads; seccomp already forbids new processes, so skip it there.
    """
    if os.geteuid() != 0 and not fresh_userns:
        return "no-nproc"
    n = lim["max_processes"]
    lower_rlimits([(resource.RLIMIT_NPROC, (n, n))])
    return "nproc"


# --------------------------------------------------------------------------- 3. Landlock

LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1, 2, 4, 8
LL_FILE_ONLY = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | (1 << 14) | (1 << 15)


def apply_landlock(read_roots, write_roots, read_files, write_files):
    ctypes, lib = libc()
    nr_create, nr_add, nr_restrict = 444, 445, 446
    abi = lib.syscall(ctypes.c_long(nr_create), None, ctypes.c_long(0), ctypes.c_long(1))
    if abi < 1:
        return None
    handled_fs = (1 << 13) - 1
    if abi >= 2:
        handled_fs |= 1 << 13  # REFER
    if abi >= 3:
        handled_fs |= 1 << 14  # TRUNCATE
    if abi >= 5:
        handled_fs |= 1 << 15  # IOCTL_DEV

    class RulesetAttr(ctypes.Structure):
        _fields_ = (
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        )

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))

    attr = RulesetAttr(handled_fs, 0b11 if abi >= 4 else 0, 0b11 if abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = lib.syscall(
        ctypes.c_long(nr_create), ctypes.byref(attr), ctypes.c_long(size), ctypes.c_long(0)
    )
    if ruleset < 0:
        return None
    read_access = LL_EXECUTE | LL_READ_FILE | LL_READ_DIR
    rules = [(p, read_access) for p in read_roots] + [(p, handled_fs) for p in write_roots]
    rules += [(p, LL_READ_FILE) for p in read_files]
    rules += [(p, LL_READ_FILE | LL_WRITE_FILE) for p in write_files]
    for path, access in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if not os.path.isdir(path):
                access &= LL_FILE_ONLY
            rule = PathBeneath(access & handled_fs, fd)
            lib.syscall(
                ctypes.c_long(nr_add),
                ctypes.c_long(ruleset),
                ctypes.c_long(1),
                ctypes.byref(rule),
                ctypes.c_long(0),
            )
        finally:
            os.close(fd)
    lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    ok = lib.syscall(ctypes.c_long(nr_restrict), ctypes.c_long(ruleset), ctypes.c_long(0)) == 0
    os.close(ruleset)
    return f"landlock-abi{abi}" if ok else None


# --------------------------------------------------------------------------- 5. audit hook

PROCESS_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "subprocess.Popen",
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        "os.startfile",
    }
)
INTROSPECTION_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
# Reaching other processes' limits or file attributes (the kernel refuses these too).
SYSTEM_EVENTS = frozenset({"resource.setrlimit", "resource.prlimit", "fcntl.ioctl"})
# Importing socket/subprocess stays allowed (asyncio, logging.handlers … import them); using
# them raises socket.* / subprocess.Popen events. ctypes would reach raw syscalls: refused.
BLOCKED_IMPORTS = frozenset({"ctypes", "_ctypes", "_xxsubinterpreters", "cffi"})
READ_PATH_EVENTS = frozenset({"os.listdir", "os.scandir", "os.getxattr", "os.listxattr"})
WRITE_PATH_EVENTS = frozenset(
    {
        "os.chdir",
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.symlink",
        "os.link",
        "os.chmod",
        "os.chown",
        "os.truncate",
        "os.utime",
        "os.chflags",
        "os.lchflags",
        "os.setxattr",
        "os.removexattr",
    }
)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


TRIPWIRE_LINE = b'{"tripwire": true}\n'


def install_audit_hook(read_roots, write_roots, read_files, violations, report_fd):
    """The tripwire: refuse, with a readable message, what the kernel layers refuse anyway.

    Code in the same interpreter can always get round a Python-level hook, so nothing here
    is a boundary and the harness never reports it as one. What it can do is tell the
    harness at once: the first refusal writes ``TRIPWIRE_LINE`` to the report pipe before
    the script sees the exception, so forgetting it afterwards (clearing ``violations``,
    rewriting the hook) cannot turn the run into a clean one. The helpers are bound as
    default arguments rather than closure cells, whose contents any caller can reassign.
    """
    reads = tuple(r.rstrip("/") for r in read_roots)
    writes = tuple(r.rstrip("/") for r in write_roots)
    files = frozenset(read_files)

    def inside(path, roots):
        return any(path == r or path.startswith(r + "/") for r in roots)

    def deny(message, _seen=violations, _write=os.write, _fd=report_fd, _line=TRIPWIRE_LINE):
        if not _seen:
            _write(_fd, _line)
        _seen.append(message)
        raise SandboxViolation(message)

    def as_path(arg, _realpath=os.path.realpath, _fsdecode=os.fsdecode):
        if isinstance(arg, (str, bytes)) or hasattr(arg, "__fspath__"):
            return _realpath(_fsdecode(arg))
        return None

    def hook(event, args, _deny=deny, _inside=inside, _as_path=as_path, _isdir=os.path.isdir,
             _own=(), _reads=reads, _writes=writes, _files=files):  # fmt: skip
        if event == "open":
            path, mode, flags = args
            p = _as_path(path) if path is not None and not isinstance(path, int) else None
            if p is None:
                return
            writing = bool(flags & WRITE_FLAGS) or any(c in (mode or "") for c in "wax+")
            if _inside(p, _writes):
                return
            if writing:
                _deny(f"writing outside the workspace is not allowed: {p}")
            if p in _files:
                return
            if not _inside(p, _reads) or _isdir(p):
                _deny(f"reading outside the workspace is not allowed: {p}")
        elif event in PROCESS_EVENTS:
            _deny(f"creating or signalling processes is not allowed ({event})")
        elif event.startswith("socket."):
            _deny(f"network access is not allowed ({event})")
        elif event.startswith("ctypes."):
            _deny(f"ctypes is not allowed ({event})")
        elif event == "import" and args[0].partition(".")[0] in BLOCKED_IMPORTS:
            _deny(f"importing {args[0]} is not allowed in the sandbox")
        elif event in INTROSPECTION_EVENTS or event in SYSTEM_EVENTS:
            _deny(f"{event} is not allowed in the sandbox")
        elif event == "object.__setattr__" and any(args[0] is f for f in _own):
            _deny(f"changing the sandbox's own functions ({args[1]}) is not allowed")
        elif event in READ_PATH_EVENTS or event in WRITE_PATH_EVENTS:
            roots = _writes if event in WRITE_PATH_EVENTS else _reads + _writes
            for arg in args:
                p = _as_path(arg)
                if p is not None and not _inside(p, roots):
                    _deny(f"{event} outside the workspace is not allowed: {p}")

    # The hook's own functions, itself included (its defaults are fixed once set: changing
    # __defaults__ or __code__ is an audited setattr, which it refuses).
    hook.__defaults__ = (
        *hook.__defaults__[:4],
        (hook, deny, inside, as_path),
        *hook.__defaults__[5:],
    )
    sys.addaudithook(hook)
    return "audit-hook"


# --------------------------------------------------------------------------- run

PREVIEW_CHARS = 160


def describe_exc(exc):
    return f"{type(exc).__name__}: {exc}"[:2000]


def user_traceback(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "script.py"]
    # From the exception with its traceback, so the last line carries the interpreter's own
    # hint ("Did you mean: 'int'?"), as a script run by plain python prints it.
    last = traceback.TracebackException.from_exception(exc).format_exception_only()
    return "".join([*traceback.format_list(frames), *last])[-8000:]


def on_xcpu(signum, frame):
    raise CpuTimeExceeded("CPU time limit exceeded")


def die_with_parent(parent_pid):
    """Without bubblewrap's --die-with-parent: SIGKILL us if the harness dies first."""
    set_death_signal(parent_pid)
    return "pdeathsig"


def attempt(name, fn, *args):
    """Apply one optional kernel layer; a kernel or container that lacks it is not fatal."""
    try:
        return fn(*args) or f"no-{name}"
    except Exception:
        return f"no-{name}"


def missing_layers(required, layers):
    """The required layer names (prefixes: "seccomp" matches "seccomp-x86_64") not in force."""
    return [r for r in required if not any(x == r or x.startswith(r + "-") for x in layers)]


def isolate(cfg, source, inputs_text):
    """Steps 0-4; returns (layers, workspace) in the process that will run the user's code."""
    layers = []
    if cfg["parent_pid"] is not None:
        layers.append(attempt("pdeathsig", die_with_parent, cfg["parent_pid"]))
    apply_rlimits(cfg["limits"])
    layers.append("rlimits")
    signal.signal(signal.SIGXCPU, on_xcpu)
    workspace = os.getcwd()
    fresh_userns = cfg["in_userns"]
    if cfg["confine"] is not None:
        files = {"script.py": source.encode(), "inputs.json": inputs_text.encode()}
        more, workspace = confine(cfg["confine"], files, cfg["parent_pid"])
        layers += more
        fresh_userns = "userns" in more
        os.environ.update(HOME=workspace, TMPDIR=workspace)
    else:
        files = {"script.py": source.encode(), "inputs.json": inputs_text.encode()}
        layers.append(attempt("workspace-inodes", remount_workspace, cfg["workspace"], files))
        layers.append("unprivileged" if capabilities_clear() else "no-unprivileged")
    layers.append(apply_nproc(cfg["limits"], fresh_userns))
    if cfg["landlock"]:
        roots = (cfg["read_roots"], [workspace], cfg["read_files"], cfg["write_files"])
        layers.append(attempt("landlock", apply_landlock, *roots))
    if cfg["seccomp"]:
        layers.append(attempt("seccomp", apply_seccomp))
    return layers, workspace


def check_result(value, limit):
    """(reason, error, preview) for a return value that is not JSON or too large, else None."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return "not json", f"the return value is not JSON-serialisable: {describe_exc(exc)}", None
    if len(text) > limit:
        return (
            "result too large",
            f"the return value is {len(text)} bytes as JSON, over the {limit}-byte limit",
            text[:PREVIEW_CHARS],
        )
    return None


def main(cfg):
    with open(cfg["script"], encoding="utf-8", errors="replace") as fh:
        source = fh.read()
    with open(cfg["inputs"], encoding="utf-8") as fh:
        inputs_text = fh.read()
    inputs = json.loads(inputs_text)
    layers, workspace = isolate(cfg, source, inputs_text)
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]
    gc.collect()
    missing = missing_layers(cfg["required"], layers)
    if missing:
        finish(
            {
                "ok": False,
                "reason": "sandbox error",
                "error": "required sandbox layers are not in force: " + ", ".join(missing),
                "layers": layers,
            }
        )
    violations = []
    if cfg["audit"]:
        layers.append(
            install_audit_hook(
                cfg["read_roots"],
                [workspace],
                cfg["read_files"] + cfg["write_files"],
                violations,
                RESULT_FD,
            )
        )

    def fail(reason, exc=None, error=None, preview=None):
        if exc is not None:
            sys.stderr.write(user_traceback(exc))
        if violations:
            reason, error, preview = "forbidden", violations[0], None
        finish(
            {
                "ok": False,
                "reason": reason,
                "error": error or (describe_exc(exc) if exc is not None else None),
                "preview": preview,
                "layers": layers,
            }
        )

    entry = cfg["entry"]
    module = type(sys)("__sandbox__")  # a real module: dataclasses, pickle … look it up
    module.__builtins__ = builtins
    sys.modules["__sandbox__"] = module
    namespace = module.__dict__
    try:
        code = compile(source, "script.py", "exec")
    except (SyntaxError, ValueError) as exc:
        fail("syntax error", error=describe_exc(exc))
    try:
        exec(code, namespace)
        func = namespace.get(entry)
        if not callable(func):
            fail("missing entry", error=f"the script does not define a callable {entry!r}")
        value = func(inputs)
    except CpuTimeExceeded as exc:
        fail("cpu time", error=str(exc))
    except MemoryError as exc:
        fail("memory", exc, error="MemoryError: the memory limit was exceeded")
    except SandboxViolation as exc:
        fail("forbidden", exc)
    except SystemExit as exc:
        fail("exception", exc, error=f"SystemExit: the script called exit({exc.code!r})")
    except BaseException as exc:
        fail("exception", exc)
    if violations:
        fail("forbidden")
    problem = check_result(value, cfg["result_limit"])
    if problem is not None:
        fail(problem[0], error=problem[1], preview=problem[2])
    finish({"ok": True, "value": value, "layers": layers})


if __name__ == "__main__":
    CONFIG = json.loads(sys.argv[1])
    RESULT_FD = CONFIG["result_fd"]
    try:
        main(CONFIG)
    except BaseException as exc:  # a failure of the runner itself, not of the user's code
        finish({"ok": False, "reason": "sandbox error", "error": describe_exc(exc), "layers": []})
