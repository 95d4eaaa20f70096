"""In-sandbox confinement for the ``rlimit`` backend: what bubblewrap does, done by the runner.

Sent into the sandbox with ``_runner`` (stdlib only; it must not import econbench or
anything outside the standard library). ``confine`` turns the freshly started runner process
into a sandbox as strong as the bubblewrap backend where the kernel allows it, and reports
each layer it put in force (``no-<layer>`` for one it could not):

- new mount, PID, network, IPC, UTS and cgroup namespaces (``mntns``, ``pidns`` …): directly
  when the harness runs as root, otherwise inside a new user namespace (``userns``);
- ``private-root``: a fresh tmpfs root holding read-only binds of /usr, /lib*, the Python
  installation and /etc/ld.so.cache, four device files and a size-capped tmpfs workspace at
  /sandbox; the host's root is detached, so ``os.stat`` of a host path finds nothing;
- a fork into the PID namespace: a small PID 1 forks the worker (PID 2), which cannot name
  any process outside the namespace; the outer process only waits and ends as the worker
  did (same exit code or signal), so the harness reads it as before;
- ``unprivileged``: uid/gid 65534, no supplementary groups, no capabilities in any set
  (effective, permitted, inheritable, ambient, bounding), checked with ``capget`` rather
  than assumed.

A root harness mounts as root, then both processes drop to 65534 (``setgroups``,
``setresgid``, ``setresuid`` after emptying the bounding set). A non-root harness maps its
own uid to 65534 in the new user namespace and drops the namespace's capabilities once the
mounts are done. Without namespaces (a container that refuses them) the runner still drops
root and only the network-only fallback is tried; the harness then refuses to run unless
weak sandboxes were allowed.

The parent-death signal is set again after every credential change (the kernel clears it),
and PID 1 checks a lifeline pipe, since ``getppid()`` is 0 across the namespace; when PID 1
dies the kernel kills the worker with it.
"""

import contextlib
import os
import select
import signal

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_THREAD = 0x00010000
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
# statvfs f_flag bits a read-only remount must keep (the kernel locks them in a user namespace)
ST_TO_MS = ((1, MS_RDONLY), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, MS_NOATIME),
            (2048, MS_NODIRATIME), (4096, MS_RELATIME))  # fmt: skip
LINUX_CAPABILITY_VERSION_3 = 0x20080522
NOBODY = 65534
NAMESPACES = (
    (CLONE_NEWNS, "mntns"),
    (CLONE_NEWPID, "pidns"),
    (CLONE_NEWNET, "netns"),
    (CLONE_NEWIPC, "ipcns"),
    (CLONE_NEWUTS, "utsns"),
    (CLONE_NEWCGROUP, "cgroupns"),
)
ROOT_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32")
SYSCALL_NR = {  # the few calls glibc has no wrapper for, or that we must issue directly
    "x86_64": {"capget": 125, "capset": 126, "pivot_root": 155, "mount_setattr": 442},
    "aarch64": {"capget": 90, "capset": 91, "pivot_root": 41, "mount_setattr": 442},
}


class ConfineError(OSError):
    """A confinement step the kernel refused."""


def libc():
    import ctypes

    lib = ctypes.CDLL(None, use_errno=True)
    lib.syscall.restype = ctypes.c_long
    return ctypes, lib


def check(ret, what):
    """Raise ``ConfineError`` with errno when a libc call returned -1."""
    if ret == -1 or ret is None:
        import ctypes

        err = ctypes.get_errno()
        raise ConfineError(err, f"{what}: {os.strerror(err)}")
    return ret


def syscall(name, *args):
    ctypes, lib = libc()
    nr = SYSCALL_NR.get(os.uname().machine, {}).get(name)
    if nr is None:
        raise ConfineError(38, f"{name}: unknown on this architecture")
    return check(lib.syscall(ctypes.c_long(nr), *args), name)


def mount(source, target, fstype, flags, data=None):
    _ctypes, lib = libc()
    enc = [None if s is None else os.fsencode(s) for s in (source, target, fstype, data)]
    check(lib.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


# --------------------------------------------------------------------------- identity


def set_death_signal(parent_pid):
    """SIGKILL us when the parent dies; exit now if it already has."""
    _ctypes, lib = libc()
    check(lib.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


def drop_bounding_set():
    """Empty the capability bounding set and the ambient set (needs CAP_SETPCAP)."""
    _ctypes, lib = libc()
    lib.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    cap = 0
    while lib.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0:
        lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        cap += 1


def drop_root():
    """Become uid/gid 65534 for good: no groups, all capabilities gone with the uid change."""
    drop_bounding_set()
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)


def clear_capabilities():
    """Drop every capability held in the current user namespace (``capset`` to zero)."""
    ctypes, _lib = libc()
    drop_bounding_set()
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    syscall("capset", ctypes.byref(header), ctypes.byref(data))


def capabilities_clear():
    """Whether this process is unprivileged: non-root ids and no capability in any set."""
    ctypes, lib = libc()
    if 0 in os.getresuid() or 0 in os.getresgid():
        return False
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    try:
        syscall("capget", ctypes.byref(header), ctypes.byref(data))
    except ConfineError:
        return False  # cannot check: never claim it
    if any(data):
        return False
    return lib.prctl(PR_CAPBSET_READ, 0, 0, 0, 0) == 0 and not any(
        lib.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 for cap in range(64)
    )


def write_id_maps(inside, outside_uid, outside_gid):
    """Map our own uid and gid to ``inside`` in the user namespace we just created."""
    _ctypes, lib = libc()
    lib.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # a process that dropped root owns no /proc files
    try:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{inside} {outside_uid} 1"),
            ("gid_map", f"{inside} {outside_gid} 1"),
        ):
            fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
    finally:
        lib.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


# --------------------------------------------------------------------------- namespaces


def _unshare_all(lib, extra=0):
    """unshare every namespace in NAMESPACES (cgroup optional: old kernels lack it)."""
    flags = 0
    for flag, _name in NAMESPACES:
        flags |= flag
    for candidate in (flags, flags & ~CLONE_NEWCGROUP):
        if lib.unshare(extra | candidate) == 0:
            return [name for flag, name in NAMESPACES if candidate & flag]
    return None


def enter_namespaces():
    """New mount/PID/net/IPC/UTS(/cgroup) namespaces; returns the layers or raises."""
    _ctypes, lib = libc()
    if os.geteuid() == 0:
        layers = _unshare_all(lib)
        if layers is not None:
            return layers
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:  # root without CAP_SYS_ADMIN: be nobody before the user namespace
        drop_root()
        uid = gid = NOBODY
    layers = _unshare_all(lib, CLONE_NEWUSER)
    if layers is None:
        raise ConfineError(1, "unshare: namespaces are not available")
    write_id_maps(NOBODY, uid, gid)
    return ["userns", *layers]


def enter_network_namespace():
    """The weak path: only a network (+IPC, UTS) namespace, via a user namespace if needed."""
    _ctypes, lib = libc()
    flags = CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if os.geteuid() != 0 or lib.unshare(flags) != 0:
        uid, gid = os.geteuid(), os.getegid()
        check(lib.unshare(CLONE_NEWUSER | flags), "unshare")
        write_id_maps(uid, uid, gid)
    return ["netns", "ipcns", "utsns"]


# --------------------------------------------------------------------------- private root


def make_readonly(target):
    """Read-only, nosuid, nodev, recursively where the kernel can (mount_setattr)."""
    ctypes, _lib = libc()
    attr = (ctypes.c_uint64 * 4)(1 | 2 | 4, 0, 0, 0)  # MOUNT_ATTR_RDONLY | NOSUID | NODEV
    try:
        syscall("mount_setattr", -100, os.fsencode(target), 0x8000, ctypes.byref(attr), 32)
        return
    except ConfineError:
        pass
    keep = os.statvfs(target).f_flag
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
    for st, ms in ST_TO_MS:
        if keep & st:
            flags |= ms
    mount(None, target, None, flags)


def bind(new_root, path, readonly=True, is_file=False):
    target = new_root + path
    if is_file:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    else:
        os.makedirs(target, exist_ok=True)
    mount(path, target, None, MS_BIND | MS_REC)
    if readonly:
        make_readonly(target)


def mount_workspace(target, spec, files):
    """A fresh tmpfs at ``target`` capped in bytes and in inodes, holding ``files`` read-only.

    The inode cap matters as much as the size: empty files and directories take no blocks,
    yet each one pins kernel memory until the tmpfs goes.
    """
    options = "size={},nr_inodes={},mode=1777".format(
        int(spec["workspace_bytes"]), int(spec["workspace_inodes"])
    )
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)
    for name, data in files.items():
        fd = os.open(os.path.join(target, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def remount_workspace(spec, files):
    """Under bubblewrap: cover its workspace with one whose inodes are capped too.

    bwrap can size a tmpfs but not bound its inodes, so the runner makes its own, in a user
    and mount namespace of its own (bwrap leaves it no capabilities in the outer ones), and
    gives those capabilities up again at once. Returns the layer name.
    """
    _ctypes, lib = libc()
    uid, gid = os.geteuid(), os.getegid()
    check(lib.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    write_id_maps(uid, uid, gid)
    mount_workspace(spec["workspace"], spec, files)
    os.chdir(spec["workspace"])
    clear_capabilities()
    return "workspace-inodes"


def build_private_root(new_root, spec, files):
    """Assemble the sandbox's root at ``new_root`` and switch to it (``pivot_root``).

    ``spec``: ``read_roots`` (directories bound read-only), ``read_files``, ``device_files``,
    ``workspace`` (where the tmpfs workspace goes inside), ``workspace_bytes`` and
    ``workspace_inodes``.
    ``files``: name -> bytes written read-only into the workspace (the script, its inputs).
    """
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    for top in ROOT_DIRS:
        if os.path.islink(top):
            os.symlink(os.readlink(top), new_root + top)
        elif os.path.isdir(top):
            bind(new_root, top)
    covered = [top for top in ROOT_DIRS if os.path.isdir(top) and not os.path.islink(top)]
    for root in sorted(set(spec["read_roots"])):
        real = os.path.realpath(root)
        if not any(real == c or real.startswith(c + "/") for c in covered):
            bind(new_root, real)
            covered.append(real)
    for path in spec["read_files"]:
        bind(new_root, path, is_file=True)
    for path in spec["device_files"]:
        bind(new_root, path, readonly=False, is_file=True)
    os.makedirs(new_root + spec["workspace"])
    mount_workspace(new_root + spec["workspace"], spec, files)
    os.mkdir(new_root + "/.oldroot")
    syscall("pivot_root", os.fsencode(new_root), os.fsencode(new_root + "/.oldroot"))
    os.chdir("/")
    _ctypes, lib = libc()
    check(lib.umount2(b"/.oldroot", MNT_DETACH), "umount /.oldroot")
    os.rmdir("/.oldroot")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(spec["workspace"])
    if os.path.exists("/etc/passwd") or os.path.exists("/.oldroot"):
        raise ConfineError(1, "the host root is still visible")


# --------------------------------------------------------------------------- PID namespace


def wait_status(pid):
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def end_like(status):
    """Exit the way a child with wait status ``status`` ended (same code, same signal)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def check_lifeline(lifeline_r):
    """Exit if the outer process is already gone (EOF on a pipe only it could write)."""
    readable, _w, _x = select.select([lifeline_r], [], [], 0)
    if readable:
        os._exit(1)
    os.close(lifeline_r)


def run_init(status_w):
    """PID 1 of the new namespace: fork the worker, wait, pass its wait status outwards.

    The worker is PID 2 rather than PID 1 because the kernel drops signals a PID 1 sends
    itself when it has no handler (``abort()``, ``faulthandler._sigsegv()``,
    ``os.kill(os.getpid(), …)`` would do nothing). Returns only in the worker.
    """
    worker = os.fork()
    if worker == 0:
        os.close(status_w)
        return
    status = wait_status(worker)
    os.write(status_w, status.to_bytes(4, "little", signed=True))
    os._exit(0)


def drop_privileges(as_root):
    """Every process, after the mounts: uid 65534 and no capabilities."""
    if as_root:
        drop_root()
    else:
        clear_capabilities()


def enter_pid_namespace(as_root, parent_pid):
    """Fork into the new PID namespace; returns only in the worker (PID 2).

    The outer process waits and ends as the worker did; PID 1 reaps and reports.
    """
    lifeline_r, lifeline_w = os.pipe()
    status_r, status_w = os.pipe()
    init = os.fork()
    if init:  # outer process: nothing runs here but the wait
        os.close(lifeline_r)
        os.close(status_w)
        try:
            drop_privileges(as_root)
            set_death_signal(parent_pid)
        except OSError:
            os.kill(init, signal.SIGKILL)
            os._exit(70)
        status = wait_status(init)
        os.close(lifeline_w)
        data = os.read(status_r, 4)
        end_like(int.from_bytes(data, "little", signed=True) if len(data) == 4 else status)
    os.close(lifeline_w)
    os.close(status_r)
    drop_privileges(as_root)
    set_death_signal(None)
    check_lifeline(lifeline_r)
    run_init(status_w)
    set_death_signal(1)  # the worker: its parent is PID 1


def confine(spec, files, parent_pid):
    """Confine this process; returns ``(layers, workspace)`` in the process that runs the code.

    ``spec`` as for ``build_private_root``, plus ``host_workspace`` (the mount point for the
    new root). ``parent_pid`` is the harness.
    """
    layers = []
    as_root = os.geteuid() == 0
    try:
        layers += enter_namespaces()
    except OSError:
        layers.append("no-mntns")
        return confine_weak(as_root, layers, parent_pid), os.getcwd()
    as_root = os.geteuid() == 0  # a root harness without CAP_SYS_ADMIN is nobody by now
    workspace = os.getcwd()
    try:
        build_private_root(spec["host_workspace"], spec, files)
        layers += ["private-root", "workspace-inodes"]
        workspace = spec["workspace"]
    except OSError:
        layers.append("no-private-root")
    enter_pid_namespace(as_root, parent_pid)
    layers.append("unprivileged" if capabilities_clear() else "no-unprivileged")
    return layers, workspace


def confine_weak(as_root, layers, parent_pid):
    """No mount namespace: drop root, try a network namespace, report what holds."""
    try:
        layers += enter_network_namespace()
    except OSError:
        layers.append("no-netns")
    with contextlib.suppress(OSError):
        drop_privileges(as_root and os.geteuid() == 0)
    set_death_signal(parent_pid)  # credential changes cleared it
    layers.append("unprivileged" if capabilities_clear() else "no-unprivileged")
    return layers
