"""Sweeps: every entry of an experiment, run concurrently, resumably and within a budget.

``run_sweep`` writes ``SWEEP_DIR/sweep.json`` (the expanded matrix) and brings each entry's
run directory ``SWEEP_DIR/runs/<id>/`` to completion: a completed run is skipped, a killed
or stopped one resumed from its checkpoint, a new one started, and one that another live
process holds is left alone. At most ``workers`` runs go at once: in a pool of that many
long-lived worker processes (the local backend, ``econbench.runs.worker_pool``), in a
process per run (``process``: crash containment), as Ray tasks (``ray_backend``) or one
at a time in this process (``inline``). All run the same ``econbench.runs.worker.execute``,
so their run files are identical.

A failed attempt (an exception, a model failure beyond its own retries, a crashed worker)
is retried by resuming, up to ``retries`` more times; a run that still fails is reported
and the sweep ends non-zero after finishing everything else. A resume the run refuses (its
config or the econbench version changed) is reported at once: retrying cannot help. Each
entry's worker output goes to ``SWEEP_DIR/logs/<id>.log``. With ``cost_limit`` the sweep
adds up ``cost_usd`` over its runs (from each run's ``progress.json``, previous sweeps'
runs included); once the total reaches the limit it starts nothing more and stops the runs
in flight — they checkpoint, so the same command with a higher limit continues them.

One display follows the whole sweep (runs done, each active run's days or episodes and
cost, the total cost); at the end a table and ``sweep_summary.json`` record every entry's
status, attempts, cost and errors.

Exit codes: 0 every entry completed; 1 some entry failed; 3 the sweep is incomplete (the
cost limit, or runs held by another process); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import math
import sys
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from econbench import __version__
from econbench.runs.experiment import Plan
from econbench.runs.layout import META, PROGRESS, RUN_LOGS, SUMMARY, SWEEP, SWEEP_RUNS, read_json
from econbench.runs.store import write_json
from econbench.runs.worker import (
    EXIT_LOCKED,
    EXIT_OK,
    NOT_RETRIED,
    InlineBackend,
    Outcome,
    ProcessBackend,
    log_path,
    run_dir_of,
)

SWEEP_SCHEMA = 1
SWEEP_SUMMARY = "sweep_summary.json"
BACKENDS = ("local", "process", "ray", "inline")

EXIT_FAILED = 1
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130


class SweepError(ValueError):
    """The sweep cannot start as asked (the message says why and what to do)."""


class Backend(Protocol):
    """Where entries run: ``start`` one, ``wait`` for some to finish, ``stop`` one early."""

    def start(self, entry_id: str, attempt: int) -> None: ...

    def wait(self, timeout: float) -> list[tuple[str, Outcome]]: ...

    def stop(self, entry_id: str) -> None: ...

    def close(self) -> None: ...


@dataclass
class SweepOptions:
    out: Path
    workers: int = 4
    retries: int = 2
    cost_limit: float | None = None
    backend: str = "local"
    ray_address: str | None = None
    cache: Path | None = None
    force: bool = False
    poll_s: float = 0.25
    runs_dir: str = SWEEP_RUNS
    """Where entries' run directories go under ``out``: ``runs/<id>``, or ``""`` for
    ``out/<id>`` (``allo sweep``'s flat cells)."""

    def check(self) -> None:
        if self.workers < 1:
            raise SweepError(f"--workers must be at least 1, got {self.workers}")
        if self.retries < 0:
            raise SweepError(f"--retries must be 0 or more, got {self.retries}")
        if self.cost_limit is not None and not (
            math.isfinite(self.cost_limit) and self.cost_limit > 0
        ):
            raise SweepError(f"--cost-limit must be a positive number, got {self.cost_limit}")
        if self.backend not in BACKENDS:
            raise SweepError(
                f"--backend must be local, process, ray or inline, got {self.backend!r}"
            )
        if self.backend == "inline" and self.workers != 1:
            raise SweepError("--backend inline plays one run at a time: use --workers 1")
        if self.ray_address is not None and self.backend != "ray":
            raise SweepError("--ray-address needs --backend ray")
        if self.out.exists() and not self.out.is_dir():
            raise SweepError(f"--out {self.out} exists and is not a directory")


# --------------------------------------------------------------------------- sweep.json


def sweep_document(plan: Plan, runs_dir: str = SWEEP_RUNS) -> dict[str, Any]:
    """``sweep.json``: the experiment as run — every entry with its resolved config and its
    run directory. It holds no timestamp, so the same experiment writes the same file."""
    return {
        "schema": SWEEP_SCHEMA,
        "name": plan.name,
        "benchmark": plan.benchmark,
        "description": plan.experiment.description,
        "experiment_file": str(plan.source),
        "econbench_version": __version__,
        "entries": [
            {**e.to_dict(), "dir": f"{runs_dir}/{e.id}" if runs_dir else e.id} for e in plan.entries
        ],
    }


def experiment_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], set[str]]:
    """Diff-style lines between two ``sweep.json`` documents, and the ids of the entries
    present in both whose configuration changed."""
    from econbench.runs.diff import config_diff

    lines = [
        f"  {key}: {old.get(key)!r} → {new.get(key)!r}"
        for key in ("name", "benchmark")
        if old.get(key) != new.get(key)
    ]
    before = {e["id"]: e for e in old.get("entries", []) if isinstance(e, dict) and "id" in e}
    after = {e["id"]: e for e in new.get("entries", [])}
    changed: set[str] = set()
    for entry_id in after:
        if entry_id not in before:
            lines.append(f"+ {entry_id}")
    for entry_id in before:
        if entry_id not in after:
            lines.append(f"- {entry_id}")
    for entry_id, entry in after.items():
        if entry_id not in before:
            continue
        was = {k: before[entry_id].get(k) for k in ("label", "config")}
        diff = config_diff(was, {k: entry[k] for k in ("label", "config")})
        if diff:
            changed.add(entry_id)
            more = f" (and {len(diff) - 3} more)" if len(diff) > 3 else ""
            lines.append(f"~ {entry_id}: {'; '.join(diff[:3])}{more}")
    return lines, changed


def prepare_sweep_dir(
    plan: Plan, sweep_dir: Path, *, force: bool = False, runs_dir: str = SWEEP_RUNS
) -> list[str]:
    """Create or reuse ``sweep_dir`` for ``plan`` and write ``sweep.json``; returns notes.

    A directory written by a different experiment is refused with the differences, unless
    ``force``: then runs whose configuration changed start again from scratch (only their
    run files are removed: :func:`restart_runs`), unchanged ones are kept, and entries no
    longer in the experiment are left on disk.
    """
    from econbench.runs.store import RunDirError, check_out_dir

    try:
        check_out_dir(sweep_dir)
    except RunDirError as exc:
        raise SweepError(str(exc)) from None
    new = sweep_document(plan, runs_dir)
    notes: list[str] = []
    old = read_json(sweep_dir / SWEEP)
    if old is None and sweep_dir.is_dir() and any(sweep_dir.iterdir()) and not force:
        raise SweepError(
            f"{sweep_dir} holds files but no {SWEEP}; choose a new or empty --out, or pass "
            "--force to use it anyway"
        )
    if isinstance(old, dict):
        lines, changed = experiment_changes(old, new)
        if lines and not force:
            shown = lines[:25] + ([f"  … and {len(lines) - 25} more"] if len(lines) > 25 else [])
            raise SweepError(
                f"{sweep_dir / SWEEP} was written by a different experiment "
                f"('{old.get('name')}'); the differences (+ new run, - dropped run, "
                "~ changed run):\n"
                + "\n".join(shown)
                + "\nChoose another --out, or pass --force to adopt this experiment (runs "
                "whose configuration changed start again from scratch; the others are kept)."
            )
        dirs = {entry_id: run_dir_of(sweep_dir, entry_id, runs_dir) for entry_id in changed}
        cleared = set(restart_runs(dirs.values()))
        notes += [
            f"{entry_id}: configuration changed; starting it again"
            for entry_id, run_dir in sorted(dirs.items())
            if run_dir in cleared
        ]
        dropped = sorted({e["id"] for e in old.get("entries", [])} - {e.id for e in plan.entries})
        if dropped:
            notes.append(
                f"{len(dropped)} run(s) no longer in the experiment stay in "
                f"{sweep_dir / runs_dir}: {', '.join(dropped[:5])}"
                + (" …" if len(dropped) > 5 else "")
            )
    (sweep_dir / runs_dir).mkdir(parents=True, exist_ok=True)
    write_json(sweep_dir / SWEEP, new)
    return notes


def restart_runs(run_dirs: Iterable[Path]) -> list[Path]:
    """Make the runs in ``run_dirs`` start again from scratch (``--force`` for a changed
    entry, ``allo sweep --overwrite``); returns the directories whose run files were removed.

    Every directory is checked before any is touched (:func:`_check_restart`), so one
    refusal (``SweepError``, one line) leaves them all as they were."""
    to_clear = [run_dir for run_dir in run_dirs if _check_restart(run_dir)]
    for run_dir in to_clear:
        _clear_run(run_dir)
    return to_clear


def _check_restart(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a run's files to remove before it starts again. Refuses
    (``SweepError``) a run another live process is writing, and what ``--overwrite`` may
    not replace (``check_new_run_dir``): a folder that is not a run, a symbolic link."""
    from econbench.runs.lock import is_locked

    if is_locked(run_dir):
        raise SweepError(
            f"{run_dir} must start again but another process is still writing it; stop that "
            "process first"
        )
    return _replaceable(run_dir)


def _replaceable(run_dir: Path) -> bool:
    from econbench.runs.store import RunDirError, check_new_run_dir

    try:
        return check_new_run_dir(run_dir, overwrite=True, logs=RUN_LOGS)
    except RunDirError as exc:
        raise SweepError(f"cannot start {run_dir} again: {exc}") from None


def _clear_run(run_dir: Path) -> None:
    """Remove, under the run's lock, the files the run layer wrote in ``run_dir``
    (``clear_run_files``: none of the user's, nothing through a symbolic link). Its
    ``meta.json`` is written back, so the directory stays marked as a run, one killed as it
    started: the fresh start that follows writes beside the user's files, as ``--overwrite``
    does, where a folder of someone's files alone would be refused."""
    from econbench.runs.lock import RunLock, RunLockedError
    from econbench.runs.store import RunDirError, clear_run_files, is_run, os_error_text

    lock = RunLock(run_dir)
    try:
        lock.acquire()
    except (RunDirError, RunLockedError) as exc:
        raise SweepError(f"cannot start {run_dir} again: {exc}") from None
    try:
        if not _replaceable(run_dir):  # again, now that no other process can change it
            return
        meta = read_json(run_dir / META) if is_run(run_dir) else None
        clear_run_files(run_dir)
        if meta is not None:
            write_json(run_dir / META, meta)
    except SweepError:
        lock.discard()
        raise
    except (RunDirError, OSError) as exc:
        text = os_error_text(exc) if isinstance(exc, OSError) else str(exc)
        raise SweepError(f"cannot start {run_dir} again: {text}") from None
    finally:
        lock.release()


# --------------------------------------------------------------------------- its size


def plan_outline(plan: Plan, unit: str) -> str:
    """``"108 cells: framing (3) × policy (3) × budget (3) × cost (4)"``: the entry count and
    the grid's axes (each with its number of values; one value: ``name = value``)."""
    axes: dict[str, list[Any]] = {}
    for entry in plan.entries:
        for key, value in entry.params.items():
            values = axes.setdefault(key, [])
            if value not in values:
                values.append(value)
    parts = [
        f"{key} ({len(values)})" if len(values) > 1 else f"{key} = {values[0]}"
        for key, values in axes.items()
    ]
    count = len(plan.entries)
    return f"{count:,} {unit}{'' if count == 1 else 's'}: " + " × ".join(parts)


# --------------------------------------------------------------------------- run files


def run_progress(run_dir: Path) -> dict[str, Any] | None:
    data = read_json(run_dir / PROGRESS)
    return data if isinstance(data, dict) else None


def run_cost(run_dir: Path) -> float | None:
    """Dollars a run has spent so far (``None`` when unknown: not started, or unpriced)."""
    progress = run_progress(run_dir)
    if progress is not None and "cost_usd" in progress:
        cost = progress["cost_usd"]
        return float(cost) if isinstance(cost, int | float) else None
    summary = read_json(run_dir / SUMMARY)
    if not isinstance(summary, dict):
        return None
    if isinstance(summary.get("cost_usd"), int | float):
        return float(summary["cost_usd"])
    firms = summary.get("firms")
    if isinstance(firms, dict):
        return sum(float(f.get("cost_usd") or 0.0) for f in firms.values() if isinstance(f, dict))
    return None


# --------------------------------------------------------------------------- state


FINAL_STATUSES = ("completed", "failed", "locked", "not_started", "interrupted")


@dataclass
class EntryState:
    """What the sweep knows about one entry."""

    id: str
    label: str
    run_dir: Path
    status: str = "pending"
    """pending, running, completed, failed, locked (held by another process), not_started
    or interrupted (the cost limit or Ctrl-C stopped the sweep first)."""
    action: str | None = None
    """How this sweep brought it to completion: skipped, started or resumed."""
    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    cost_usd: float | None = None
    progress: dict[str, Any] | None = None

    def refresh(self) -> None:
        self.progress = run_progress(self.run_dir)
        self.cost_usd = run_cost(self.run_dir)

    def to_dict(self, sweep_dir: Path) -> dict[str, Any]:
        p = self.progress or {}
        return {
            "id": self.id,
            "label": self.label,
            "status": self.status,
            "action": self.action,
            "attempts": self.attempts,
            "cost_usd": self.cost_usd,
            "done": p.get("done"),
            "total": p.get("total"),
            "unit": p.get("unit"),
            "errors": self.errors,
            "dir": str(self.run_dir.relative_to(sweep_dir)),
        }


@dataclass
class SweepResult:
    name: str
    benchmark: str
    sweep_dir: Path
    entries: list[EntryState]
    cost_limit: float | None
    cost_limited: bool = False
    interrupted: bool = False

    @property
    def total_cost(self) -> float:
        return sum(e.cost_usd or 0.0 for e in self.entries)

    def count(self, status: str) -> int:
        return sum(1 for e in self.entries if e.status == status)

    @property
    def status(self) -> str:
        if self.interrupted:
            return "interrupted"
        if self.count("failed"):
            return "failed"
        if self.count("completed") < len(self.entries):
            return "incomplete"
        return "completed"

    @property
    def exit_code(self) -> int:
        return {
            "interrupted": EXIT_INTERRUPTED,
            "failed": EXIT_FAILED,
            "incomplete": EXIT_INCOMPLETE,
            "completed": 0,
        }[self.status]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SWEEP_SCHEMA,
            "name": self.name,
            "benchmark": self.benchmark,
            "status": self.status,
            "total_cost_usd": round(self.total_cost, 6),
            "cost_unknown": [e.id for e in self.entries if e.cost_usd is None],
            "cost_limit_usd": self.cost_limit,
            "cost_limit_reached": self.cost_limited,
            "counts": {s: self.count(s) for s in FINAL_STATUSES if self.count(s)},
            "entries": [e.to_dict(self.sweep_dir) for e in self.entries],
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }


# --------------------------------------------------------------------------- display


class SweepDisplay:
    """One live display for the whole sweep: the overall bar and one bar per active run."""

    def __init__(
        self, console: Console, name: str, total: int, cost_limit: float | None, quiet: bool
    ) -> None:
        self.cost_limit = cost_limit
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            console=console,
            disable=quiet,
        )
        self.quiet = quiet
        self.console = console
        self._overall = self.progress.add_task(
            f"[bold]sweep {escape(name)}[/]", total=total, info=""
        )
        self._runs: dict[str, TaskID] = {}

    def __enter__(self) -> SweepDisplay:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        refresher = getattr(self.progress.live, "_refresh_thread", None)
        self.progress.stop()
        if refresher is not None:  # told to stop, it ends at its next tick: wait for it, so
            refresher.join(timeout=5)  # that a sweep after this one may fork its workers

    def note(self, text: str, *, markup: bool = True) -> None:
        """A line above the bars (and the only output in a log file). ``text`` is Rich
        markup (its styles shown on a terminal, dropped elsewhere): what it quotes must be
        escaped (``rich.markup.escape``); ``markup=False`` prints ``text`` as it is."""
        if not self.quiet:
            self.progress.console.print(text, highlight=False, markup=markup, soft_wrap=True)

    def update(self, states: list[EntryState], total_cost: float) -> None:
        done = sum(1 for s in states if s.status == "completed")
        failed = sum(1 for s in states if s.status == "failed")
        limit = f" of ${self.cost_limit:,.2f}" if self.cost_limit is not None else ""
        info = f"${total_cost:,.4f}{limit}" + (f" · {failed} failed" if failed else "")
        self.progress.update(self._overall, completed=done, info=info)
        active = {s.id: s for s in states if s.status == "running"}
        for entry_id in list(self._runs):
            if entry_id not in active:
                self.progress.remove_task(self._runs.pop(entry_id))
        for entry_id, state in active.items():
            p = state.progress or {}
            unit = f"{p.get('unit', 'step')}s" if p else "starting"
            cost = f" · ${state.cost_usd:,.4f}" if state.cost_usd else ""
            fields = {
                "completed": p.get("done", 0),
                "total": p.get("total"),
                "info": f"{unit}{cost}",
            }
            if entry_id not in self._runs:
                self._runs[entry_id] = self.progress.add_task(f"  {escape(entry_id)}", **fields)
            else:
                self.progress.update(self._runs[entry_id], **fields)


def results_table(result: SweepResult) -> Table:
    """The closing table: one row per entry with its status (and how far it got, when it did
    not complete), for CoffeeBench the focal firm's net income and revenue (its score), the
    model cost when there was one, and a note. Made to fit 80 columns: numbers are never cut
    (``no_wrap``); run ids and notes fold onto more lines."""
    from econbench.runs.cost_display import usd

    focal = {s.id: _focal(read_json(s.run_dir / SUMMARY)) for s in result.entries}
    with_focal = any(row is not None for row in focal.values())
    with_cost = any(s.cost_usd for s in result.entries)
    table = Table(
        title=f"Sweep {escape(result.name)}: {result.status}, ${result.total_cost:,.4f}",
        caption=_FOCAL_CAPTION if with_focal else None,
        show_edge=False,
    )
    table.add_column("run", overflow="fold", ratio=3, min_width=10)
    table.add_column("status", no_wrap=True)
    if with_focal:
        table.add_column("net inc. $", justify="right", no_wrap=True)
        table.add_column("revenue $", justify="right", no_wrap=True)
    if with_cost:
        table.add_column("cost $", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold", ratio=2, min_width=8)
    for state in result.entries:
        cells = [escape(state.id), _status(state)]
        if with_focal:
            row = focal[state.id] or {}
            cells += [_money(row.get("net_income")), _money(row.get("revenue"))]
        if with_cost:
            cells.append("–" if state.cost_usd is None else usd(state.cost_usd))
        cells.append(escape(_note(state)))
        table.add_row(*cells)
    return table


def _status(state: EntryState) -> str:
    """The entry's status, with how far it got when it did not complete (``45/90``)."""
    p = state.progress or {}
    if state.status == "completed" or "done" not in p or "total" not in p:
        return state.status
    return f"{state.status} {p['done']}/{p['total']}"


_FOCAL_CAPTION = "net income and revenue: roaster_A's, the evaluated firm"


def _focal(summary: Any) -> dict[str, Any] | None:
    """The focal firm's row of a CoffeeBench run's summary (``None`` for anything else)."""
    from econbench.coffee.config import FOCAL_FIRM

    firms = summary.get("firms") if isinstance(summary, dict) else None
    row = firms.get(FOCAL_FIRM) if isinstance(firms, dict) else None
    return row if isinstance(row, dict) else None


def _money(value: Any) -> str:
    return f"{value:,.2f}" if isinstance(value, int | float) else "–"


def _note(state: EntryState) -> str:
    if state.status == "locked":
        return "held by another process"
    if state.status == "completed":
        if state.errors:
            return f"completed on attempt {state.attempts}"
        return {"skipped": "already completed", "resumed": "resumed"}.get(state.action or "", "")
    if state.errors:
        return state.errors[-1].splitlines()[0][:100]
    return ""


# --------------------------------------------------------------------------- driver


def make_backend(options: SweepOptions, sweep_dir: Path, expected: int = 0) -> Backend:
    """The backend ``options.backend`` names; ``expected``: how many entries it is about to
    be given (the pool forks that many workers at once where it can)."""
    if options.backend == "ray":
        from econbench.runs.ray_backend import RayBackend, RayUnavailableError

        try:
            return RayBackend(
                sweep_dir,
                workers=options.workers,
                address=options.ray_address,
                cache=options.cache,
            )
        except RayUnavailableError as exc:
            raise SweepError(str(exc)) from None
    if options.backend == "inline":
        return InlineBackend(sweep_dir, cache=options.cache)
    if options.backend == "process":
        return ProcessBackend(sweep_dir, cache=options.cache)
    from econbench.runs.worker_pool import PoolBackend

    return PoolBackend(sweep_dir, workers=options.workers, cache=options.cache, expected=expected)


def scan(plan: Plan, sweep_dir: Path, runs_dir: str = SWEEP_RUNS) -> list[EntryState]:
    """Each entry's state on disk before the sweep starts anything."""
    from econbench.runs.resume import run_status

    states = []
    for entry in plan.entries:
        state = EntryState(entry.id, entry.label, run_dir_of(sweep_dir, entry.id, runs_dir))
        status = run_status(state.run_dir)
        if status == "completed":
            state.status, state.action = "completed", "skipped"
        elif status == "running":
            state.status = "locked"
        state.refresh()
        states.append(state)
    return states


class _Driver:
    def __init__(
        self,
        result: SweepResult,
        options: SweepOptions,
        display: SweepDisplay,
        backend_factory: Callable[[], Backend],
        backend: Backend | None = None,
    ) -> None:
        self.result = result
        self.options = options
        self.display = display
        self.backend_factory = backend_factory
        self.backend = backend
        self.states = {s.id: s for s in result.entries}
        self.pending = deque(s.id for s in result.entries if s.status == "pending")
        self.active: dict[str, EntryState] = {}

    def over_limit(self) -> bool:
        limit = self.options.cost_limit
        return limit is not None and self.result.total_cost >= limit

    def run(self) -> None:
        for state in self.result.entries:
            if state.status == "locked":
                self.display.note(
                    f"[yellow]{escape(state.id)}[/]: another live process is writing it; skipped"
                )
        try:
            while self.pending or self.active:
                for state in self.active.values():
                    state.refresh()
                if self.over_limit():
                    self.stop_for_cost()
                    break
                backend = self.ensure_backend()
                while self.pending and len(self.active) < self.options.workers:
                    state = self.states[self.pending.popleft()]
                    state.attempts += 1
                    state.status = "running"
                    backend.start(state.id, state.attempts)
                    self.active[state.id] = state
                self.display.update(self.result.entries, self.result.total_cost)
                for entry_id, outcome in backend.wait(self.options.poll_s):
                    self.finish(self.active.pop(entry_id), outcome)
            self.display.update(self.result.entries, self.result.total_cost)
        except KeyboardInterrupt:
            self.result.interrupted = True
            self.stop_all("interrupted")
        finally:
            if self.backend is not None:
                self.backend.close()

    def ensure_backend(self) -> Backend:
        """The backend, started only once there is work (Ray takes seconds to start)."""
        if self.backend is None:
            self.backend = self.backend_factory()
        return self.backend

    def finish(self, state: EntryState, outcome: Outcome) -> None:
        state.refresh()
        if state.action is None and outcome.action in ("started", "resumed", "skipped"):
            state.action = outcome.action  # how the first attempt went about it
        if outcome.code == EXIT_OK:
            state.status = "completed"
            cost = f", ${state.cost_usd:,.4f}" if state.cost_usd else ""
            self.display.note(f"[green]done[/] {escape(state.id)}{cost}")
            return
        if outcome.code == EXIT_LOCKED:
            state.status = "locked"
            self.display.note(
                f"[yellow]{escape(state.id)}[/]: {escape(str(outcome.error))}; skipped"
            )
            return
        error = outcome.error or "failed"
        state.errors.append(f"attempt {state.attempts}: {error}")
        first_line = error.splitlines()[0] if error else ""
        if state.attempts <= self.options.retries and outcome.code not in NOT_RETRIED:
            state.status = "pending"
            self.pending.append(state.id)
            self.display.note(
                f"[yellow]retry[/] {escape(state.id)} (attempt {state.attempts} of "
                f"{self.options.retries + 1} failed: {escape(first_line)})"
            )
        else:
            state.status = "failed"
            log = log_path(self.result.sweep_dir, state.id)
            self.display.note(
                f"[bold red]failed[/] {escape(state.id)} after {state.attempts} attempt(s): "
                f"{escape(first_line)} (log: {escape(str(log))})"
            )

    def stop_all(self, status: str) -> None:
        """Stop the runs in flight (they resume next time) and start nothing more."""
        from econbench.runs.resume import run_status

        for entry_id, state in list(self.active.items()):
            if self.backend is not None:
                self.backend.stop(entry_id)
            # It may have finished between the last poll and the stop.
            state.status = "completed" if run_status(state.run_dir) == "completed" else status
            state.refresh()
        self.active.clear()
        for entry_id in self.pending:
            state = self.states[entry_id]
            state.status = "interrupted" if state.attempts else "not_started"
        self.pending.clear()

    def stop_for_cost(self) -> None:
        self.result.cost_limited = True
        self.stop_all("interrupted")
        left = [s.id for s in self.result.entries if s.status in ("interrupted", "not_started")]
        self.display.note(
            f"[bold yellow]cost limit reached:[/] ${self.result.total_cost:,.4f} spent of "
            f"${self.options.cost_limit:,.2f}; {len(left)} run(s) not done: "
            + escape(", ".join(left[:10]))
            + (" …" if len(left) > 10 else "")
            + ". Run the same command with a higher --cost-limit to continue them."
        )


def run_sweep(
    plan: Plan,
    options: SweepOptions,
    *,
    console: Console | None = None,
    quiet: bool = False,
    backend_factory: Callable[[], Backend] | None = None,
) -> SweepResult:
    """Run (or continue) the sweep of ``plan`` into ``options.out``; see the module doc.

    ``backend_factory`` replaces the backend ``options.backend`` names (tests, embedding).
    """
    options.check()
    sweep_dir = options.out
    notes = prepare_sweep_dir(plan, sweep_dir, force=options.force, runs_dir=options.runs_dir)
    result = SweepResult(
        name=plan.name,
        benchmark=plan.benchmark,
        sweep_dir=sweep_dir,
        entries=scan(plan, sweep_dir, options.runs_dir),
        cost_limit=options.cost_limit,
    )
    # bound to the stream itself: an inline run's redirected stderr must not get the display
    console = console or Console(file=sys.stderr)
    factory = backend_factory or (lambda: make_backend(options, sweep_dir))
    backend = None
    pending = sum(state.status == "pending" for state in result.entries)
    if backend_factory is None and options.backend == "local" and pending:
        # the pool forks its workers before the display starts a thread (``worker_pool``)
        backend = make_backend(options, sweep_dir, expected=pending)
    display = SweepDisplay(console, plan.name, len(plan.entries), options.cost_limit, quiet)
    try:
        with display:
            for note in notes:
                display.note(note, markup=False)  # plain text: ids and paths, no styles
            _Driver(result, options, display, factory, backend).run()
    finally:
        if backend is not None:
            backend.close()  # once more, if the driver never got to it
    write_json(sweep_dir / SWEEP_SUMMARY, result.to_dict())
    return result
