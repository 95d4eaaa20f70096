"""Start the local backend's workers while the sweep's own process is still getting ready
(where the pool does not fork them from it: not on Linux, or ``ECONBENCH_POOL_START=spawn``).

A pool worker spends ~0.2 s starting Python and importing econbench before it can play; the
sweep's process spends about as long importing its command and planning the sweep, and
until now the workers started only after that. When the command line asks for a pool sweep
(``econbench sweep`` and ``econbench allo sweep`` with ``--backend local``, or ``allo sweep``
with ``--workers`` above 1), the root command starts the workers first
(:func:`prestart_for`), and :class:`~econbench.runs.worker_pool.PoolBackend` adopts them
instead of starting its own. ``benchmarks/sweep_throughput.py`` prints what this buys.

A started worker does nothing until it is given a job: it writes nowhere in the sweep's
directory (what it prints before its first job goes to an unnamed temporary file, which the
pool copies into that job's log); each job brings the sweep process's environment and
working directory as they are when it is sent (a pool worker plays a run in those, and puts
its own back after); the workers nobody adopts are killed when the command ends (they hold
nothing yet).

Reading the command line here only decides whether to start them early: a command line this
reading gets wrong costs a few idle processes or the old start, never a different sweep.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

_SWEEPS = {
    # the command's words: (default --workers, default --backend)
    ("sweep",): (4, "local"),
    ("allo", "sweep"): (1, "auto"),  # auto: inline for one worker, else the pool
}
_NOT_A_SWEEP = {"--help", "-h", "--dry-run"}


@dataclass
class Prestarted:
    """A worker started before the sweep was planned, and the file its early output went to."""

    proc: subprocess.Popen[bytes]
    stderr: IO[bytes]

    def early_output(self) -> bytes:
        """What it printed before its first job (an import warning, say)."""
        self.stderr.seek(0)
        return self.stderr.read()


_started: list[Prestarted] = []


def worker_command(parent_pid: int) -> list[str]:
    """How a pool worker is started (it learns its sweep from each job)."""
    return [sys.executable, "-m", "econbench.runs.worker_pool", "--parent-pid", str(parent_pid)]


def worker_environ() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def forks_workers() -> bool:
    """Whether the pool forks its workers from the planned sweep's process
    (``worker_pool``): on Linux, unless ``ECONBENCH_POOL_START=spawn``; then none is
    started early."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and os.environ.get("ECONBENCH_POOL_START", "fork") != "spawn"
    )


def workers_asked(args: Sequence[str]) -> int:
    """How many pool workers the command line ``args`` (after ``econbench``) will use, at
    most one per core; 0 when it is not a pool sweep or cannot be read."""
    words = next((w for w in _SWEEPS if tuple(args[: len(w)]) == w), None)
    if words is None:
        return 0
    options = list(args[len(words) :])
    if _NOT_A_SWEEP.intersection(options):
        return 0
    default_workers, default_backend = _SWEEPS[words]
    try:
        workers = int(_option(options, "--workers", str(default_workers)))
    except ValueError:
        return 0
    backend = _option(options, "--backend", default_backend)
    if backend == "auto":
        backend = "local" if workers > 1 else "inline"
    if backend != "local" or workers < 1:
        return 0
    return min(workers, os.cpu_count() or 1)


def _option(options: list[str], name: str, default: str) -> str:
    """The last value of ``--name VALUE`` or ``--name=VALUE`` (as the parser takes it)."""
    value = default
    for i, word in enumerate(options):
        if word == name and i + 1 < len(options):
            value = options[i + 1]
        elif word.startswith(name + "="):
            value = word.partition("=")[2]
    return value


def prestart_for(args: Sequence[str]) -> None:
    """Start the workers the command line ``args`` asks for, unless they are running or the
    pool will fork them."""
    if forks_workers():
        return
    missing = workers_asked(args) - len(_started)
    for _ in range(max(missing, 0)):
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open with the worker)
        try:
            proc = subprocess.Popen(
                worker_command(os.getpid()),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=worker_environ(),
            )
        except OSError:
            stderr.close()
            return
        _started.append(Prestarted(proc, stderr))


def adopt() -> Prestarted | None:
    """A prestarted worker that is still alive (a dead one is dropped: the pool starts a
    fresh worker, which prints its error into the job's log)."""
    while _started:
        worker = _started.pop(0)
        if worker.proc.poll() is None:
            return worker
        _end(worker)
    return None


def discard_all() -> None:
    """End the workers nobody adopted (at the command's end, ``econbench.cli``, and at exit)."""
    while _started:
        _end(_started.pop())


atexit.register(discard_all)


def _end(worker: Prestarted) -> None:
    """Kill it: it was given no job, so it holds nothing (it may still be importing)."""
    worker.proc.kill()
    worker.proc.wait()
    for pipe in (worker.proc.stdin, worker.proc.stdout, worker.stderr):
        if pipe is not None:
            pipe.close()
