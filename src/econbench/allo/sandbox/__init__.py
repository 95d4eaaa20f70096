"""The R3 sandbox: model-written Python run in a locked-down child process.

``core`` starts and limits the child; ``cgroup`` and ``workspace`` are its host-side budget
and scratch space; the underscore modules (``_gate``, ``_runner``, ``_confine``,
``_seccomp``) run on the other side of the boundary and import only the standard library.
"""

from econbench.allo.sandbox.core import (
    ALLOW_WEAK_ENV,
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
    available_backend,
    enforced_limits,
    probe_layers,
)

__all__ = [
    "ALLOW_WEAK_ENV",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "available_backend",
    "enforced_limits",
    "probe_layers",
]
