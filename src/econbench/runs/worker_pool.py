"""The local backend: a pool of long-lived worker processes, each playing many entries.

A worker (``python -m econbench.runs.worker_pool``) imports econbench once, then reads one
JSON line per job on its stdin (the entry, its sweep directory and cache file, and the
environment and working directory of the sweep's process), plays it with
:func:`~econbench.runs.worker.execute` — its output, down to the file descriptors, in the
entry's log ``SWEEP_DIR/logs/ID.log`` as with a process per entry — and answers one JSON
line (the :class:`~econbench.runs.worker.Outcome`) on its own copy of the original stdout.
Starting Python and importing econbench per entry costs more than a small scripted run.

On Linux the pool's first workers are forked from the sweep's process once it has planned
the sweep, while it still runs a single thread (before the progress display starts its
own), so they begin with everything it imported; a worker started later (after a crash or
a stop), or any worker where forking is not safe, is a fresh interpreter, and the workers of
a sweep asked for on the command line are then started before the sweep is planned
(``econbench.runs.pool_prestart``) and adopted here. ``ECONBENCH_POOL_START=spawn`` never
forks.

Each job runs inside :func:`isolated`, which puts back what a run may change for the whole
process (environment, working directory, signal handlers, logging, warning filters,
registered scripted models, the global random state), so a run plays the same whether it is
a worker's first or tenth. What stays is what cannot change a run's files: imported
modules, caches of pure functions, loaded model weights.

The parent (:class:`PoolBackend`) waits on the workers' pipes with ``select``. Stopping an
entry kills the worker playing it; a worker that dies mid-entry (a crash, ``kill -9``)
gives that entry a failed outcome from its exit status, as a process per entry does, and
the next job gets a fresh worker. Runs checkpoint as they go, so the entry resumes on its
next attempt.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import multiprocessing
import os
import random
import selectors
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

from econbench.runs import pool_prestart
from econbench.runs.worker import (
    ATTEMPT_TAG,
    EXIT_USAGE,
    OUTCOME_TAG,
    Outcome,
    _die_with_parent,
    _now,
    execute,
    exit_outcome,
    log_path,
)

STOP_GRACE_S = 10.0

_forked = False
"""Whether this process is a worker forked from the sweep's (its log says so)."""


# --------------------------------------------------------------------------- worker side


@contextlib.contextmanager
def isolated() -> Iterator[None]:
    """Undo, when the block ends, what a run may have changed for the whole process."""
    from econbench.agents.models import registry

    environ = dict(os.environ)
    cwd = os.getcwd()
    handlers = {s: signal.getsignal(s) for s in _catchable_signals()}
    root = logging.getLogger()
    root_handlers, root_level = list(root.handlers), root.level
    streams = (sys.stdout, sys.stderr)
    random.seed()  # as unpredictable as a fresh process's, never the previous run's
    try:
        with warnings.catch_warnings(), registry.scripted_models_kept():
            yield
    finally:
        sys.stdout, sys.stderr = streams
        for handler in root.handlers:
            if handler not in root_handlers:
                handler.close()
        root.handlers[:] = root_handlers
        root.setLevel(root_level)
        signal.alarm(0)
        for sig, handler in handlers.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)
        os.chdir(cwd)
        if dict(os.environ) != environ:
            os.environ.clear()
            os.environ.update(environ)


def _catchable_signals() -> list[signal.Signals]:
    return [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)]


@contextlib.contextmanager
def output_to(log: Path) -> Iterator[None]:
    """Send file descriptors 1 and 2 (Python's prints, C libraries, child processes) to
    ``log`` for the block, then back to ``/dev/null``."""
    sys.stdout.flush()
    sys.stderr.flush()
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.close(fd)
        _to_devnull(1, 2)


def _to_devnull(*fds: int) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        os.dup2(null, fd)
    os.close(null)


def play(
    sweep_dir: Path,
    entry_id: str,
    cache: Path | None,
    environ: dict[str, str] | None = None,
    cwd: str | None = None,
) -> Outcome:
    """One job: the entry played in isolation, its output and outcome line in its log; in
    the sweep process's environment and working directory when the job brings them."""
    with output_to(log_path(sweep_dir, entry_id)), isolated():
        if environ is not None:
            os.environ.clear()
            os.environ.update(environ)
        if cwd is not None:
            os.chdir(cwd)
        how = " (forked from the sweep)" if _forked else ""
        print(f"pool worker {os.getpid()}{how}", flush=True)
        try:
            outcome = execute(sweep_dir, entry_id, cache)
        except LookupError as exc:
            outcome = Outcome(EXIT_USAGE, "failed", str(exc))
        if outcome.error:
            print(f"error: {outcome.error}", file=sys.stderr, flush=True)
        print(f"{OUTCOME_TAG} {json.dumps(outcome.to_dict())}", flush=True)
    return outcome


def serve(
    sweep_dir: Path | None = None,
    cache: Path | None = None,
    pipes: tuple[IO[bytes], IO[bytes]] | None = None,
) -> int:
    """Play the jobs read from stdin (or ``pipes``' first) until it closes, one outcome line
    each on stdout (or ``pipes``' second). A job names its entry, and its sweep and cache
    file (a worker started before its sweep was planned, ``pool_prestart``, knows them from
    there only)."""
    if pipes is None:
        pipes = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
        _to_devnull(0, 1)  # a run reads nothing from, and writes nothing to, the pipes
    jobs, answers = pipes
    for line in jobs:
        job = json.loads(line)
        job_sweep = Path(job["sweep"]) if job.get("sweep") else sweep_dir
        job_cache = Path(job["cache"]) if job.get("cache") else cache
        if job_sweep is None:
            raise SystemExit("a job without its sweep directory")
        outcome = play(job_sweep, job["entry"], job_cache, job.get("environ"), job.get("cwd"))
        answers.write(json.dumps(outcome.to_dict()).encode() + b"\n")
        answers.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m econbench.runs.worker_pool",
        description="Play the sweep entries named on stdin (used by `econbench sweep`).",
    )
    parser.add_argument(
        "sweep_dir", type=Path, nargs="?", default=None, help="The sweep (else each job's)."
    )
    parser.add_argument("--cache", type=Path, default=None, help="Response cache file.")
    parser.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the sweep's to handle
    _die_with_parent(args.parent_pid)
    return serve(args.sweep_dir, args.cache)


def _forked_main(
    jobs_fd: int,
    answers_fd: int,
    parent_fds: Sequence[int],
    parent: int,
    signal_mask: set[signal.Signals],
) -> None:
    """A forked worker's life (``multiprocessing``'s fork, which ends it with ``os._exit``):
    what a fresh worker would have instead of what the sweep's process had, then ``serve``.

    ``parent_fds`` are the pool's ends of every worker's pipes: a copy kept here would hide
    from a worker that the pool closed its jobs. Signals arrive blocked (``_fork``) and are
    let through, ``signal_mask`` as the sweep had it, once the sweep's handlers are gone."""
    global _forked
    _forked = True
    for fd in parent_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    _to_devnull(0, 1, 2)  # a run's output goes to its log (``output_to``)
    sys.stdin = open(os.devnull)  # noqa: SIM115 (the process's own, as at start-up)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    for sig in _catchable_signals():
        if callable(signal.getsignal(sig)):  # the sweep's handlers are not the worker's
            signal.signal(sig, signal.SIG_DFL)
    logging.root.handlers.clear()  # nor its logging (a fresh worker starts with none)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the sweep's to handle
    signal.pthread_sigmask(signal.SIG_SETMASK, signal_mask)
    _die_with_parent(parent)
    serve(pipes=(os.fdopen(jobs_fd, "rb"), os.fdopen(answers_fd, "wb")))


# --------------------------------------------------------------------------- parent side


def fork_is_safe() -> bool:
    """Whether a worker may be forked now: a process running other threads may be forked
    holding their locks (Rich's refresh thread holds the console's), so only a single one;
    and ``multiprocessing`` lets no daemonic process (a ``multiprocessing.Pool``'s worker
    running a sweep) have children of its own."""
    return (
        pool_prestart.forks_workers()
        and threading.active_count() == 1
        and not multiprocessing.current_process().daemon
    )


class _Process(Protocol):
    """What the pool uses of a worker process: ``subprocess.Popen``'s, or a forked one's."""

    pid: int
    stdin: IO[bytes] | None
    stdout: IO[bytes] | None

    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...


class _ForkedProcess:
    """A worker forked from the sweep's process, seen through ``Popen``'s interface."""

    def __init__(
        self, process: multiprocessing.process.BaseProcess, stdin: IO[bytes], stdout: IO[bytes]
    ) -> None:
        self._process = process
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout

    @property
    def pid(self) -> int:
        assert self._process.pid is not None
        return self._process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired("pool worker", timeout or 0)
        return code

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()


@dataclass
class _Worker:
    proc: _Process
    entry: str | None = None
    pending: bytes = field(default=b"")

    def send(self, entry_id: str, sweep_dir: Path, cache: Path | None) -> None:
        """Give it a job: the entry, where it is, and the environment to play it in."""
        assert self.proc.stdin is not None
        try:
            cwd: str | None = os.getcwd()
        except OSError:  # the sweep's working directory was removed: the worker keeps its own
            cwd = None
        job = {
            "entry": entry_id,
            "sweep": str(sweep_dir),
            "cache": cache and str(cache),
            "environ": pool_prestart.worker_environ(),  # what a worker started now would have
            "cwd": cwd,
        }
        self.proc.stdin.write(json.dumps(job).encode() + b"\n")
        self.proc.stdin.flush()
        self.entry = entry_id


class PoolBackend:
    """At most ``workers`` long-lived processes, each playing one entry at a time."""

    def __init__(
        self, sweep_dir: Path, workers: int, cache: Path | None = None, expected: int = 0
    ) -> None:
        """``expected``: how many entries are about to be started; where forking is safe now,
        that many workers (at most ``workers``) are forked at once, since the sweep starts its
        display's thread next."""
        self.sweep_dir = Path(sweep_dir).resolve()
        self.cache = cache.resolve() if cache is not None else None
        self.size = workers
        self._workers: list[_Worker] = []
        self._selector = selectors.DefaultSelector()
        self._finished: list[tuple[str, Outcome]] = []
        self.adopted = 0
        """Workers taken over from ``pool_prestart`` rather than started here."""
        self.forked = 0
        """Workers forked from this process rather than started as fresh interpreters."""
        if fork_is_safe():
            for _ in range(min(expected, workers)):
                self._add(self._fork())

    def start(self, entry_id: str, attempt: int) -> None:
        log = log_path(self.sweep_dir, entry_id)
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as fh:
            fh.write(f"{ATTEMPT_TAG}{attempt} at {_now()} (pool)\n".encode())
        worker = self._idle_worker(log)
        try:
            worker.send(entry_id, self.sweep_dir, self.cache)
        except (BrokenPipeError, OSError):  # it died while idle, before reading the job
            worker.entry = entry_id
            self._dead(worker)

    def _idle_worker(self, log: Path) -> _Worker:
        for worker in self._workers:
            if worker.entry is None and worker.proc.poll() is None:
                return worker
        for worker in [w for w in self._workers if w.entry is None]:
            self._drop(worker)  # idle but dead
        if len(self._workers) >= self.size:
            raise RuntimeError(f"all {self.size} pool workers are busy")
        return self._spawn(log)

    def _spawn(self, log: Path) -> _Worker:
        """A worker forked now if that is safe, else one started while the sweep was
        planned (``pool_prestart``), else a fresh one; what a started one prints before its
        first job (an import error) goes to the log of that job."""
        if fork_is_safe():
            return self._add(self._fork())
        early = pool_prestart.adopt()
        if early is not None:
            proc = early.proc
            with log.open("ab") as fh:
                fh.write(early.early_output())
            early.stderr.close()
            self.adopted += 1
        else:
            with log.open("ab") as fh:
                proc = subprocess.Popen(
                    pool_prestart.worker_command(os.getpid()),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=fh,
                    env=pool_prestart.worker_environ(),
                )
        return self._add(proc)

    def _fork(self) -> _ForkedProcess:
        """A worker forked from this process, talking over two fresh pipes."""
        jobs_r, jobs_w = os.pipe()
        answers_r, answers_w = os.pipe()
        parent_fds = [jobs_w, answers_r]
        for worker in self._workers:
            pipes = (worker.proc.stdin, worker.proc.stdout)
            parent_fds += [pipe.fileno() for pipe in pipes if pipe is not None]
        sys.stdout.flush()  # what this process has buffered is not the worker's to write
        sys.stderr.flush()
        # a signal for the worker before it drops the sweep's handlers waits until it has
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _catchable_signals())
        process = multiprocessing.get_context("fork").Process(
            target=_forked_main,
            args=(jobs_r, answers_w, parent_fds, os.getpid(), mask),
            name="econbench pool worker",
            daemon=True,  # ended at this process's exit, never waited for there
        )
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(jobs_r)
            os.close(answers_w)
        self.forked += 1
        return _ForkedProcess(process, os.fdopen(jobs_w, "wb"), os.fdopen(answers_r, "rb"))

    def _add(self, proc: _Process) -> _Worker:
        worker = _Worker(proc)
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        self._selector.register(proc.stdout, selectors.EVENT_READ, worker)
        self._workers.append(worker)
        return worker

    def wait(self, timeout: float) -> list[tuple[str, Outcome]]:
        """The entries that finished, waiting up to ``timeout`` seconds for the first."""
        if not self._finished and any(w.entry for w in self._workers):
            for key, _ in self._selector.select(timeout):
                self._read(key.data)
            for key, _ in self._selector.select(0):  # and whatever else is ready now
                self._read(key.data)
        done, self._finished = self._finished, []
        return done

    def _read(self, worker: _Worker) -> None:
        assert worker.proc.stdout is not None
        try:
            chunk = os.read(worker.proc.stdout.fileno(), 65_536)
        except BlockingIOError:
            return
        if not chunk:
            self._dead(worker)
            return
        worker.pending += chunk
        while b"\n" in worker.pending:
            line, worker.pending = worker.pending.split(b"\n", 1)
            if worker.entry is not None:
                self._finished.append((worker.entry, Outcome.from_dict(json.loads(line))))
                worker.entry = None

    def _dead(self, worker: _Worker) -> None:
        """A worker's pipe closed: its entry, if any, failed by how the process ended."""
        code = worker.proc.wait()
        if worker.entry is not None:
            log = log_path(self.sweep_dir, worker.entry)
            self._finished.append((worker.entry, exit_outcome(code, log)))
        self._drop(worker)

    def _drop(self, worker: _Worker) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(worker.proc.stdout)
        for pipe in (worker.proc.stdin, worker.proc.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        self._workers.remove(worker)

    def stop(self, entry_id: str) -> None:
        """End the worker playing ``entry_id`` now (its run resumes from its checkpoint next
        time); a later job gets a fresh worker."""
        for worker in self._workers:
            if worker.entry == entry_id:
                _end(worker.proc)
                self._drop(worker)
                return
        self._finished = [(e, o) for e, o in self._finished if e != entry_id]

    def pid_of(self, entry_id: str) -> int | None:
        """The process playing ``entry_id`` (tests kill it)."""
        return next((w.proc.pid for w in self._workers if w.entry == entry_id), None)

    def close(self) -> None:
        """Stop the busy workers; idle ones end as their stdin closes."""
        ending = []
        for worker in list(self._workers):
            if worker.entry is not None:
                worker.proc.terminate()
            ending.append(worker.proc)
            self._drop(worker)
        for proc in ending:
            _end(proc, terminate=False)
        self._selector.close()


def _end(proc: _Process, terminate: bool = True) -> None:
    """Wait for ``proc`` to end (after SIGTERM unless told not to), killing it if it lingers."""
    if terminate:
        proc.terminate()
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
