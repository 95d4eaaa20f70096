"""Play one sweep entry — start it, or resume it from its checkpoint — in this process
(the inline backend) or in a child process of its own (the process backend).

:func:`execute` is the one routine every backend runs: the process backend in a child
(``python -m econbench.runs.worker SWEEP_DIR ENTRY_ID``), the local backend in a
long-lived worker of its pool (``econbench.runs.worker_pool``), the Ray backend inside a Ray
task. It reads the entry from ``sweep.json``, looks at the run directory and either skips
it (completed, or held by another live process), resumes it (killed or stopped) or starts
it. Because every run checkpoints as it goes, killing a worker at any moment is safe: the
next attempt resumes where the checkpoint left off.

A child writes its output to ``SWEEP_DIR/logs/ENTRY_ID.log`` (not into the run directory,
which a fresh start clears) and ends with one ``OUTCOME_TAG`` line the parent reads.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from econbench.agents.models.base import ModelError
from econbench.agents.models.errors import ModelConfigError
from econbench.runs.benchmark import ResumeError, StoppedError, get_benchmark
from econbench.runs.experiment import Entry
from econbench.runs.layout import SWEEP, SWEEP_RUNS, read_json
from econbench.runs.lock import RunLockedError
from econbench.runs.resume import resume_run, run_status
from econbench.runs.store import RunDirError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_LOCKED = 3
EXIT_REFUSED = 4
"""The run cannot be started or resumed as it is (a changed config or version, a directory
that cannot hold it, a model's missing key or bad settings): retrying is useless."""
REFUSALS = (ResumeError, RunDirError, ModelConfigError)
"""What a refused start or resume raises: its message says what to do, in one line."""
NOT_RETRIED = frozenset({EXIT_USAGE, EXIT_REFUSED})
OUTCOME_TAG = "econbench-sweep-outcome:"
ATTEMPT_TAG = "=== attempt "
LOGS = "logs"


@dataclass(frozen=True)
class Outcome:
    """How one attempt at an entry ended."""

    code: int
    action: str
    """``skipped`` (already completed), ``started``, ``resumed``, or ``locked``."""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        return cls(code=int(data["code"]), action=str(data["action"]), error=data.get("error"))


def run_dir_of(sweep_dir: Path, entry_id: str, runs_dir: str = SWEEP_RUNS) -> Path:
    """An entry's run directory: ``SWEEP_DIR/runs/<id>``, or ``SWEEP_DIR/<id>`` for a sweep
    laid out flat (``runs_dir=""``: ``allo sweep``'s cells)."""
    return Path(sweep_dir) / runs_dir / entry_id if runs_dir else Path(sweep_dir) / entry_id


def log_path(sweep_dir: Path, entry_id: str) -> Path:
    return Path(sweep_dir) / LOGS / f"{entry_id}.log"


def load_entry(sweep_dir: Path, entry_id: str) -> Entry:
    return load_entry_and_dir(sweep_dir, entry_id)[0]


def load_entry_and_dir(sweep_dir: Path, entry_id: str) -> tuple[Entry, Path]:
    """The entry and its run directory, as ``sweep.json`` records them."""
    doc = read_json(Path(sweep_dir) / SWEEP)
    if not isinstance(doc, dict):
        raise LookupError(f"{sweep_dir} holds no readable {SWEEP}")
    for data in doc.get("entries", []):
        if data.get("id") == entry_id:
            where = data.get("dir")
            run_dir = Path(sweep_dir) / where if where else run_dir_of(sweep_dir, entry_id)
            return Entry.from_dict(data), run_dir
    raise LookupError(f"{sweep_dir / SWEEP} has no entry '{entry_id}'")


def start_entry(entry: Entry, run_dir: Path, cache: Path | None) -> dict[str, Any]:
    """Play the entry from the beginning into ``run_dir`` (clearing what a crash left)."""
    benchmark = get_benchmark(entry.benchmark)
    return benchmark.start(entry.config, run_dir, label=entry.label, cache=cache)


def execute(sweep_dir: Path, entry_id: str, cache: Path | None = None) -> Outcome:
    """Bring one entry to completion if it can be: skip, resume or start it.

    Never raises for a failing run: the error is in the outcome, one line. Only an
    unexpected error's traceback is printed (it lands in the worker's log); a refusal or a
    model failure says all there is in its message.
    """
    entry, run_dir = load_entry_and_dir(sweep_dir, entry_id)
    status = run_status(run_dir)
    if status == "completed":
        return Outcome(EXIT_OK, "skipped")
    if status == "running":
        return Outcome(EXIT_LOCKED, "locked", f"{run_dir} is being written by another process")
    action = "resumed" if status in ("stopped", "interrupted") else "started"
    print(f"{_now()} {action} {entry.id} (status was {status})", flush=True)
    try:
        if action == "resumed":
            resume_run(run_dir, cache=cache)
        else:
            start_entry(entry, run_dir, cache)
    except RunLockedError as exc:
        return Outcome(EXIT_LOCKED, "locked", str(exc))
    except REFUSALS as exc:
        return Outcome(EXIT_REFUSED, action, error_line(exc))
    except Exception as exc:
        if not _expected(exc):
            traceback.print_exc()
        return Outcome(EXIT_FAILED, action, error_line(exc))
    if run_status(run_dir) != "completed":
        return Outcome(EXIT_FAILED, action, "the run ended without completing")
    print(f"{_now()} completed {entry.id}", flush=True)
    return Outcome(EXIT_OK, action)


def _expected(exc: Exception) -> bool:
    """Failures whose message says it all (a model failing beyond its retries)."""
    return isinstance(exc, StoppedError | ModelError)


def error_line(exc: BaseException) -> str:
    """``Type: message`` on one line, as the worker's log and the sweep's status show it."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- child process


def _die_with_parent(parent: int | None) -> None:
    """On Linux, let the kernel kill this worker when the sweep process dies (even by
    ``kill -9``), so no orphan keeps a run's lock; the run resumes on the next sweep."""
    if parent is None or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(EXIT_FAILED)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m econbench.runs.worker",
        description="Start or resume one entry of a sweep (used by `econbench sweep`).",
    )
    parser.add_argument("sweep_dir", type=Path)
    parser.add_argument("entry_id")
    parser.add_argument("--cache", type=Path, default=None, help="Response cache file.")
    parser.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.parent_pid is not None:
        # Started by a sweep: Ctrl-C is the sweep's to handle (it stops its workers).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(args.parent_pid)
    try:
        outcome = execute(args.sweep_dir, args.entry_id, args.cache)
    except LookupError as exc:
        outcome = Outcome(EXIT_USAGE, "failed", str(exc))
    if outcome.error:
        print(f"error: {outcome.error}", file=sys.stderr, flush=True)
    print(f"{OUTCOME_TAG} {json.dumps(outcome.to_dict())}", flush=True)
    return outcome.code


# --------------------------------------------------------------------------- backends


def read_outcome(log: Path, returncode: int) -> Outcome:
    """The outcome line a child wrote in its attempt (the last ``=== attempt`` section of
    its log), or what its exit status says."""
    try:
        with log.open("rb") as fh:
            fh.seek(max(0, log.stat().st_size - 65_536))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        lines = []
    for line in reversed(lines):
        if line.startswith(ATTEMPT_TAG):
            break  # an earlier attempt's outcome is not this one's
        if line.startswith(OUTCOME_TAG):
            try:
                return Outcome.from_dict(json.loads(line[len(OUTCOME_TAG) :]))
            except (ValueError, KeyError, TypeError):
                break
    return exit_outcome(returncode, log)


def exit_outcome(returncode: int, log: Path) -> Outcome:
    """A worker that ended without an outcome: failed, as its exit status says."""
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else ""
        why = f"the worker was killed by signal {-returncode} {name}".rstrip()
    else:
        why = f"the worker exited with code {returncode} (see {log})"
    return Outcome(returncode or EXIT_FAILED, "failed", why)


class InlineBackend:
    """Each entry in this process, one at a time: no worker start-up, for sweeps of quick
    runs (reference policies). ``execute`` is the same routine, its output goes to the same
    log; a run cannot be stopped midway, so the cost limit is checked between runs, and
    Ctrl-C stops the run at once (it resumes next time)."""

    def __init__(self, sweep_dir: Path, cache: Path | None = None) -> None:
        self.sweep_dir = Path(sweep_dir).resolve()
        self.cache = cache.resolve() if cache is not None else None
        self._queue: list[tuple[str, int]] = []

    def start(self, entry_id: str, attempt: int) -> None:
        self._queue.append((entry_id, attempt))

    def wait(self, timeout: float) -> list[tuple[str, Outcome]]:
        """Play the queued entries now (``timeout`` does not apply: a run ends when done)."""
        done = []
        while self._queue:
            entry_id, attempt = self._queue.pop(0)
            done.append((entry_id, self._play(entry_id, attempt)))
        return done

    def _play(self, entry_id: str, attempt: int) -> Outcome:
        from contextlib import redirect_stderr, redirect_stdout

        log = log_path(self.sweep_dir, entry_id)
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as fh, redirect_stdout(fh), redirect_stderr(fh):
            print(f"{ATTEMPT_TAG}{attempt} at {_now()} (inline)", flush=True)
            try:
                outcome = execute(self.sweep_dir, entry_id, self.cache)
            except LookupError as exc:
                outcome = Outcome(EXIT_USAGE, "failed", str(exc))
            if outcome.error:
                print(f"error: {outcome.error}", flush=True)
            print(f"{OUTCOME_TAG} {json.dumps(outcome.to_dict())}", flush=True)
        return outcome

    def stop(self, entry_id: str) -> None:
        self._queue = [(e, a) for e, a in self._queue if e != entry_id]

    def close(self) -> None:
        self._queue.clear()


class ProcessBackend:
    """Each entry in its own child process (``--backend process``): one Python per run, so
    nothing is shared and a crash takes down one run only, at the cost of a start-up per
    run. The default local backend is a pool of workers (``worker_pool.PoolBackend``)."""

    def __init__(self, sweep_dir: Path, cache: Path | None = None) -> None:
        self.sweep_dir = Path(sweep_dir).resolve()
        self.cache = cache.resolve() if cache is not None else None
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, entry_id: str, attempt: int) -> None:
        log = log_path(self.sweep_dir, entry_id)
        log.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "econbench.runs.worker",
            str(self.sweep_dir),
            entry_id,
            "--parent-pid",
            str(os.getpid()),
        ]
        if self.cache is not None:
            cmd += ["--cache", str(self.cache)]
        with log.open("ab") as fh:
            fh.write(f"{ATTEMPT_TAG}{attempt} at {_now()}\n".encode())
            fh.flush()
            self._procs[entry_id] = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=fh,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )

    def wait(self, timeout: float) -> list[tuple[str, Outcome]]:
        """The entries that finished, waiting up to ``timeout`` seconds for the first."""
        deadline = time.monotonic() + timeout
        while True:
            done = []
            for entry_id, proc in list(self._procs.items()):
                code = proc.poll()
                if code is not None:
                    del self._procs[entry_id]
                    done.append((entry_id, read_outcome(log_path(self.sweep_dir, entry_id), code)))
            if done or not self._procs or time.monotonic() >= deadline:
                return done
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    def stop(self, entry_id: str) -> None:
        """End an entry's worker now; its run resumes from its checkpoint next time."""
        proc = self._procs.pop(entry_id, None)
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def close(self) -> None:
        for entry_id in list(self._procs):
            self.stop(entry_id)


if __name__ == "__main__":
    sys.exit(main())
