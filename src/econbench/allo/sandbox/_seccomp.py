"""The sandbox's seccomp-BPF filter (sent into the sandbox with the runner; stdlib only).

Refused, on both backends, with an errno the script can read (never by killing it):

- process creation and exec (fork/vfork/clone without CLONE_THREAD/execve; clone3 gets
  ENOSYS so libc falls back to clone); threads stay allowed;
- reaching any other process: signals except to ourselves, ptrace and process_vm_*, pidfds,
  ``prlimit64`` except reading our own limits (so ``resource.prlimit(ppid, …)`` and every
  ``setrlimit`` fail: limits can only be kept, never raised or changed), ``setpriority``,
  the scheduler setters and ``sched_setaffinity``, ``ioprio_set``, ``kcmp``, page migration,
  ``setsid``/``setpgid`` (the harness kills the sandbox by its process group);
- sockets other than AF_UNIX, and every ``connect``, ``sendmsg``/``sendmmsg`` and
  addressed ``sendto``: a socketpair still works (asyncio needs one), reaching a listener
  does not;
- ``fanotify_init``/``fanotify_mark``; the file-attribute ioctls (``FS_IOC_SETFLAGS``,
  ``FS_IOC_FSSETXATTR``: no immutable or append-only files) and terminal injection
  (``TIOCSTI``, ``TIOCLINUX``);
- mounts and namespaces, modules, kexec, reboot, swap, clocks, keyrings, bpf, perf,
  userfaultfd, file handles, io_uring, personality, the x32 ABI;
- memory the kernel would hold outside the process's address space and the workspace's
  size cap: ``memfd_create``/``memfd_secret``, SysV shared memory, semaphores and message
  queues, POSIX message queues, inotify (where the run has a memory cgroup it would be
  charged there too; without one nothing else would bound it).

x86_64 and aarch64 numbers are checked against the kernel's unistd headers; another
architecture gets no filter, which the harness reports as a missing layer.
"""

import os

# name -> (x86_64, aarch64); None where the call does not exist on that architecture
_NUMBERS = {
    "fork": (57, None), "vfork": (58, None), "clone": (56, 220), "clone3": (435, 435),
    "execve": (59, 221), "execveat": (322, 281), "socket": (41, 198),
    "kill": (62, 129), "tkill": (200, 130), "tgkill": (234, 131),
    "rt_sigqueueinfo": (129, 138), "rt_tgsigqueueinfo": (297, 240),
    "pidfd_send_signal": (424, 424), "pidfd_open": (434, 434), "pidfd_getfd": (438, 438),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "prlimit64": (302, 261), "setrlimit": (160, 164), "setpriority": (141, 140),
    "sched_setaffinity": (203, 122), "sched_setscheduler": (144, 119),
    "sched_setparam": (142, 118), "sched_setattr": (314, 274), "ioprio_set": (251, 30),
    "kcmp": (312, 272), "migrate_pages": (256, 238), "move_pages": (279, 239),
    "process_madvise": (440, 440), "process_mrelease": (448, 448),
    "setsid": (112, 157), "setpgid": (109, 154),
    "connect": (42, 203), "sendto": (44, 206), "sendmsg": (46, 211), "sendmmsg": (307, 269),
    "fanotify_init": (300, 262), "fanotify_mark": (301, 263), "ioctl": (16, 29),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "fsopen": (430, 430), "fsmount": (432, 432), "move_mount": (429, 429),
    "open_tree": (428, 428), "fsconfig": (431, 431), "fspick": (433, 433),
    "mount_setattr": (442, 442), "unshare": (272, 97), "setns": (308, 268),
    "reboot": (169, 142), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "swapon": (167, 224), "swapoff": (168, 225), "bpf": (321, 280),
    "perf_event_open": (298, 241), "keyctl": (250, 219), "add_key": (248, 217),
    "request_key": (249, 218), "userfaultfd": (323, 282),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264), "acct": (163, 89),
    "quotactl": (179, 60), "syslog": (103, 116), "iopl": (172, None), "ioperm": (173, None),
    "settimeofday": (164, 170), "clock_settime": (227, 112), "clock_adjtime": (305, 266),
    "adjtimex": (159, 171), "sethostname": (170, 161), "setdomainname": (171, 162),
    "mknod": (133, None), "mknodat": (259, 33), "personality": (135, 92),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    # memory the kernel holds outside the address space (RLIMIT_AS) and the workspace cap
    "memfd_create": (319, 279), "memfd_secret": (447, 447),
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "mq_open": (240, 180), "mq_unlink": (241, 181), "mq_timedsend": (242, 182),
    "mq_timedreceive": (243, 183), "mq_notify": (244, 184), "mq_getsetattr": (245, 185),
    "inotify_init": (253, None), "inotify_init1": (294, 26), "inotify_add_watch": (254, 27),
}  # fmt: skip
_ARCHES = (("x86_64", 0xC000003E), ("aarch64", 0xC00000B7))
# machine -> (audit arch, {name: nr})
SYSCALLS = {
    machine: (arch, {name: nrs[i] for name, nrs in _NUMBERS.items() if nrs[i] is not None})
    for i, (machine, arch) in enumerate(_ARCHES)
}

BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
EPERM, EACCES, ENOSYS, AF_UNIX = 1, 13, 38, 1
CLONE_THREAD = 0x00010000
OFF_NR, OFF_ARCH = 0, 4
SIGNAL_CALLS = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
NETWORK_CALLS = ("connect", "sendmsg", "sendmmsg")
# FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR, TIOCSTI, TIOCLINUX
DENIED_IOCTLS = (0x40086602, 0x40046602, 0x401C5820, 0x5412, 0x541C)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def arg_lo(i):
    """Offset of the low 32 bits of syscall argument ``i`` (both architectures are LE)."""
    return 16 + 8 * i


def arg_hi(i):
    return 16 + 8 * i + 4


def _test(offset, op, k, allow_when_true, deny):
    """Load one argument word, test it, return allow or deny (the block always returns)."""
    jt, jf = (0, 1) if allow_when_true else (1, 0)
    return [
        (BPF_LD_W_ABS, 0, 0, offset),
        (op, jt, jf, k),
        (BPF_RET_K, 0, 0, RET_ALLOW),
        (BPF_RET_K, 0, 0, deny),
    ]


def _all_equal(words, deny):
    """Allow only when every (offset, value) word matches; otherwise deny."""
    body = []
    for i, (offset, value) in enumerate(words):
        after = 2 * (len(words) - i - 1)  # the loads/tests still to come before "allow"
        body += [(BPF_LD_W_ABS, 0, 0, offset), (BPF_JEQ_K, 0, after + 1, value)]
    return [*body, (BPF_RET_K, 0, 0, RET_ALLOW), (BPF_RET_K, 0, 0, deny)]


def _none_of(offset, values, deny):
    """Deny when the word equals any of ``values``; otherwise allow."""
    body = [(BPF_LD_W_ABS, 0, 0, offset)]
    for i, value in enumerate(values):
        body.append((BPF_JEQ_K, len(values) - i, 0, value))
    return [*body, (BPF_RET_K, 0, 0, RET_ALLOW), (BPF_RET_K, 0, 0, deny)]


def _rule(name, own_pid):
    """The body for one system call: instructions that always end in a return."""
    if name == "clone":  # threads (CLONE_THREAD) yes, processes no
        return _test(arg_lo(0), BPF_JSET_K, CLONE_THREAD, True, RET_ERRNO | EPERM)
    if name == "socket":  # only Unix-domain sockets
        return _test(arg_lo(0), BPF_JEQ_K, AF_UNIX, True, RET_ERRNO | EACCES)
    if name in SIGNAL_CALLS:  # signals to ourselves only
        return _test(arg_lo(0), BPF_JEQ_K, own_pid, True, RET_ERRNO | EPERM)
    if name == "clone3":  # flags live in memory; ENOSYS makes libc fall back to clone
        return [(BPF_RET_K, 0, 0, RET_ERRNO | ENOSYS)]
    if name == "prlimit64":  # reading our own limits only: pid 0, new_limit NULL
        words = [(arg_lo(0), 0), (arg_lo(2), 0), (arg_hi(2), 0)]
        return _all_equal(words, RET_ERRNO | EPERM)
    if name == "sendto":  # on a connected socket (a socketpair) only: no address
        return _all_equal([(arg_lo(4), 0), (arg_hi(4), 0)], RET_ERRNO | EACCES)
    if name == "ioctl":  # the cmd is an unsigned int: the low word is all of it
        return _none_of(arg_lo(1), DENIED_IOCTLS, RET_ERRNO | EPERM)
    if name in NETWORK_CALLS:
        return [(BPF_RET_K, 0, 0, RET_ERRNO | EACCES)]
    return [(BPF_RET_K, 0, 0, RET_ERRNO | EPERM)]


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
    for name, nr in nrs.items():
        body = _rule(name, own_pid)
        prog += [(BPF_JEQ_K, 0, len(body), nr), *body]
    prog.append((BPF_RET_K, 0, 0, RET_ALLOW))
    return prog


def apply_seccomp():
    """Install the filter on this process (and its future threads); the layer name or None."""
    machine = os.uname().machine
    prog = seccomp_program(machine, os.getpid())
    if prog is None:
        return None
    import ctypes

    lib = ctypes.CDLL(None, use_errno=True)

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
