"""In-sandbox entry script: harden this process, then run the untrusted ``solve``.

``econbench.allo.sandbox`` compiles this file once, sends the code object to a fresh
``python -I -S`` inside the sandbox over stdin (stdlib only, no site-packages, no
environment influence) and passes one JSON config argument. It must use only the standard
library and must not import econbench.

Order matters, because each step needs powers the next ones take away:
0. ``PR_SET_PDEATHSIG`` (rlimit backend; bubblewrap has ``--die-with-parent``);
1. rlimits (CPU, address space, file size, open files, no core dumps);
2. network (and IPC/UTS) namespaces when the backend asks for them (rlimit backend), then
   RLIMIT_NPROC (after the namespace, so that it counts only the sandbox's own tasks);
3. Landlock (kernel-enforced filesystem, TCP and signal scoping) where the kernel has it;
4. a seccomp-BPF filter: no process creation (threads stay allowed), no exec, no non-Unix
   sockets, no signals to other processes, no mount/ptrace/reboot/module/namespace calls;
5. a PEP 578 audit hook as a final, Python-level layer (clear error messages; it cannot be
   removed once installed) — every attempt it blocks fails the run with reason "forbidden".
A kernel or container without one of the optional layers (0, 2, 3, 4) is not fatal: the
report lists ``no-<layer>`` instead. Then the user's code is compiled and ``entry(inputs)``
is called; the outcome is written as one JSON object to the result file descriptor.
"""

import builtins
import gc
import json
import os
import resource
import signal
import sys
import traceback

RESULT_FD = -1  # set from the config when run as the sandbox entry script


class SandboxViolation(PermissionError):
    """Raised by the audit hook when the script tries something the sandbox forbids."""


class CpuTimeExceeded(BaseException):
    """Raised from the SIGXCPU handler (a BaseException so `except Exception` can't eat it)."""


def emit(result):
    data = json.dumps(result).encode()
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


# --------------------------------------------------------------------------- ctypes helpers

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_THREAD = 0x00010000
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


def libc():
    import ctypes

    lib = ctypes.CDLL(None, use_errno=True)
    lib.syscall.restype = ctypes.c_long
    return ctypes, lib


def unshare_network():
    """New network (+IPC, UTS) namespace: only a down loopback is visible afterwards."""
    _ctypes, lib = libc()
    flags = CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if os.geteuid() == 0 and lib.unshare(flags) == 0:
        return "netns"
    uid, gid = os.geteuid(), os.getegid()
    if lib.unshare(CLONE_NEWUSER | flags) != 0:
        return None
    # Map our own ids so files we create in the workspace keep a valid owner.
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        try:
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
        except OSError:
            pass
    return "userns+netns"


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


# --------------------------------------------------------------------------- 4. seccomp

# (audit arch, {name: nr}) — x86_64 numbers checked against asm/unistd_64.h; the aarch64
# list is deliberately short (the generic-table numbers we are sure of).
SYSCALLS = {
    "x86_64": (
        0xC000003E,
        {
            "fork": 57,
            "vfork": 58,
            "clone": 56,
            "clone3": 435,
            "execve": 59,
            "execveat": 322,
            "socket": 41,
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "pidfd_send_signal": 424,
            "pidfd_open": 434,
            "pidfd_getfd": 438,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "reboot": 169,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "swapon": 167,
            "swapoff": 168,
            "unshare": 272,
            "setns": 308,
            "bpf": 321,
            "perf_event_open": 298,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "userfaultfd": 323,
            "open_by_handle_at": 304,
            "name_to_handle_at": 303,
            "acct": 163,
            "quotactl": 179,
            "syslog": 103,
            "iopl": 172,
            "ioperm": 173,
            "settimeofday": 164,
            "clock_settime": 227,
            "clock_adjtime": 305,
            "adjtimex": 159,
            "sethostname": 170,
            "setdomainname": 171,
            "mknod": 133,
            "mknodat": 259,
            "fsopen": 430,
            "fsmount": 432,
            "move_mount": 429,
            "open_tree": 428,
            "fsconfig": 431,
            "fspick": 433,
            "mount_setattr": 442,
            "personality": 135,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "clone": 220,
            "clone3": 435,
            "execve": 221,
            "execveat": 281,
            "socket": 198,
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "ptrace": 117,
            "mount": 40,
            "reboot": 142,
            "unshare": 97,
            "setns": 268,
        },
    ),
}

BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
EPERM, EACCES, ENOSYS, AF_UNIX = 1, 13, 38, 1
OFF_NR, OFF_ARCH, OFF_ARG0 = 0, 4, 16
SIGNAL_CALLS = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")


def seccomp_program(machine, own_pid):
    """The filter as (code, jt, jf, k) tuples, or None on an unsupported architecture."""
    if machine not in SYSCALLS:
        return None
    arch, nrs = SYSCALLS[machine]
    prog = [
        (BPF_LD_W_ABS, 0, 0, OFF_ARCH),
        (BPF_JEQ_K, 1, 0, arch),
        (BPF_RET_K, 0, 0, RET_KILL_PROCESS),
        (BPF_LD_W_ABS, 0, 0, OFF_NR),
    ]
    if machine == "x86_64":  # refuse the x32 ABI outright
        prog += [(BPF_JGE_K, 0, 1, 0x40000000), (BPF_RET_K, 0, 0, RET_ERRNO | EPERM)]

    def guarded(nr, test_op, test_k, allow_when_true, deny_errno):
        # jeq nr; ld arg0; test; ret allow / ret deny (the block always returns)
        jt, jf = (0, 1) if allow_when_true else (1, 0)
        return [
            (BPF_JEQ_K, 0, 4, nr),
            (BPF_LD_W_ABS, 0, 0, OFF_ARG0),
            (test_op, jt, jf, test_k),
            (BPF_RET_K, 0, 0, RET_ALLOW),
            (BPF_RET_K, 0, 0, RET_ERRNO | deny_errno),
        ]

    for name, nr in nrs.items():
        if name == "clone":  # threads (CLONE_THREAD) yes, processes no
            prog += guarded(nr, BPF_JSET_K, CLONE_THREAD, True, EPERM)
        elif name == "socket":  # only Unix-domain sockets
            prog += guarded(nr, BPF_JEQ_K, AF_UNIX, True, EACCES)
        elif name in SIGNAL_CALLS:  # signals to ourselves only
            prog += guarded(nr, BPF_JEQ_K, own_pid, True, EPERM)
        elif name == "clone3":  # flags live in memory; ENOSYS makes libc fall back to clone
            prog += [(BPF_JEQ_K, 0, 1, nr), (BPF_RET_K, 0, 0, RET_ERRNO | ENOSYS)]
        else:
            prog += [(BPF_JEQ_K, 0, 1, nr), (BPF_RET_K, 0, 0, RET_ERRNO | EPERM)]
    prog.append((BPF_RET_K, 0, 0, RET_ALLOW))
    return prog


def apply_seccomp():
    machine = os.uname().machine
    prog = seccomp_program(machine, os.getpid())
    if prog is None:
        return None
    ctypes, lib = libc()

    class SockFilter(ctypes.Structure):
        _fields_ = (
            ("code", ctypes.c_uint16),
            ("jt", ctypes.c_uint8),
            ("jf", ctypes.c_uint8),
            ("k", ctypes.c_uint32),
        )

    class SockFprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter)))

    filters = (SockFilter * len(prog))(*[SockFilter(*ins) for ins in prog])
    fprog = SockFprog(len(prog), filters)
    lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if lib.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return None
    return f"seccomp-{machine}"


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


def install_audit_hook(read_roots, write_roots, read_files, violations):
    realpath, fsdecode, isdir = os.path.realpath, os.fsdecode, os.path.isdir
    reads = tuple(r.rstrip("/") for r in read_roots)
    writes = tuple(r.rstrip("/") for r in write_roots)
    files = frozenset(read_files)

    def inside(path, roots):
        return any(path == r or path.startswith(r + "/") for r in roots)

    def deny(message):
        violations.append(message)
        raise SandboxViolation(message)

    def as_path(arg):
        if isinstance(arg, (str, bytes)) or hasattr(arg, "__fspath__"):
            return realpath(fsdecode(arg))
        return None

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            p = as_path(path) if path is not None and not isinstance(path, int) else None
            if p is None:
                return
            writing = bool(flags & WRITE_FLAGS) or any(c in (mode or "") for c in "wax+")
            if inside(p, writes):
                return
            if writing:
                deny(f"writing outside the workspace is not allowed: {p}")
            if p in files:
                return
            if not inside(p, reads) or isdir(p):
                deny(f"reading outside the workspace is not allowed: {p}")
        elif event in PROCESS_EVENTS:
            deny(f"creating or signalling processes is not allowed ({event})")
        elif event.startswith("socket."):
            deny(f"network access is not allowed ({event})")
        elif event.startswith("ctypes."):
            deny(f"ctypes is not allowed ({event})")
        elif event == "import" and args[0].partition(".")[0] in BLOCKED_IMPORTS:
            deny(f"importing {args[0]} is not allowed in the sandbox")
        elif event in INTROSPECTION_EVENTS:
            deny(f"{event} is not allowed in the sandbox")
        elif event in READ_PATH_EVENTS or event in WRITE_PATH_EVENTS:
            roots = writes if event in WRITE_PATH_EVENTS else reads + writes
            for arg in args:
                p = as_path(arg)
                if p is not None and not inside(p, roots):
                    deny(f"{event} outside the workspace is not allowed: {p}")

    sys.addaudithook(hook)
    return "audit-hook"


# --------------------------------------------------------------------------- run


def describe_exc(exc):
    return f"{type(exc).__name__}: {exc}"[:2000]


def user_traceback(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "script.py"]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines)[-8000:]


def on_xcpu(signum, frame):
    raise CpuTimeExceeded("CPU time limit exceeded")


def die_with_parent(parent_pid):
    """Without bubblewrap's --die-with-parent: SIGKILL us if the harness dies first."""
    _ctypes, lib = libc()
    lib.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # it died before the prctl took effect
        os._exit(1)
    return "pdeathsig"


def attempt(name, fn, *args):
    """Apply one optional kernel layer; a kernel or container that lacks it is not fatal."""
    try:
        return fn(*args) or f"no-{name}"
    except Exception:
        return f"no-{name}"


def main(cfg):
    layers = []
    if cfg["parent_pid"] is not None:
        layers.append(attempt("pdeathsig", die_with_parent, cfg["parent_pid"]))
    apply_rlimits(cfg["limits"])
    layers.append("rlimits")
    signal.signal(signal.SIGXCPU, on_xcpu)
    with open(cfg["script"], encoding="utf-8", errors="replace") as fh:
        source = fh.read()
    with open(cfg["inputs"], encoding="utf-8") as fh:
        inputs = json.load(fh)

    fresh_userns = cfg["in_userns"]
    if cfg["unshare_net"]:
        net = attempt("netns", unshare_network)
        layers.append(net)
        fresh_userns = fresh_userns or net == "userns+netns"
    layers.append(apply_nproc(cfg["limits"], fresh_userns))
    if cfg["landlock"]:
        roots = (cfg["read_roots"], cfg["write_roots"], cfg["read_files"], cfg["write_files"])
        layers.append(attempt("landlock", apply_landlock, *roots))
    if cfg["seccomp"]:
        layers.append(attempt("seccomp", apply_seccomp))
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]
    gc.collect()
    violations = []
    if cfg["audit"]:
        layers.append(
            install_audit_hook(
                cfg["read_roots"],
                cfg["write_roots"],
                cfg["read_files"] + cfg["write_files"],
                violations,
            )
        )

    def fail(reason, exc=None, error=None):
        if exc is not None:
            sys.stderr.write(user_traceback(exc))
        if violations:
            reason, error = "forbidden", violations[0]
        finish(
            {
                "ok": False,
                "reason": reason,
                "error": error or (describe_exc(exc) if exc is not None else None),
                "layers": layers,
            }
        )

    entry = cfg["entry"]
    namespace = {"__name__": "__sandbox__", "__builtins__": builtins}
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
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        fail("not json", error=f"the return value is not JSON-serialisable: {describe_exc(exc)}")
    finish({"ok": True, "value": value, "layers": layers})


if __name__ == "__main__":
    CONFIG = json.loads(sys.argv[1])
    RESULT_FD = CONFIG["result_fd"]
    try:
        main(CONFIG)
    except BaseException as exc:  # a failure of the runner itself, not of the user's code
        finish({"ok": False, "reason": "sandbox error", "error": describe_exc(exc), "layers": []})
