"""Pool workers forked from the planned sweep's process (``worker_pool``, Linux): forked only
while the process runs a single thread, each unaware of the others' pipes, none running the
sweep's signal handlers, and a sweep from the command line (display on) playing on them."""

from __future__ import annotations

import io
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from rich.console import Console
from tests.runs.fresh_process import in_fresh_process

from econbench.runs import worker_pool
from econbench.runs.sweep import SweepDisplay
from econbench.runs.worker_pool import PoolBackend

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux")


@pytest.fixture(autouse=True)
def _fork(monkeypatch) -> None:
    monkeypatch.setenv("ECONBENCH_POOL_START", "fork")


@in_fresh_process
def test_each_forked_worker_ends_when_its_own_jobs_close(tmp_path) -> None:
    assert worker_pool.fork_is_safe(), "this test process runs other threads"
    backend = PoolBackend(tmp_path, workers=3, expected=2)  # the second forked after the first
    try:
        assert backend.forked == 2
        first, second = (w.proc for w in backend._workers)
        assert first.stdin is not None
        first.stdin.close()  # the second keeps no copy of the first's pipe: it sees the end
        assert first.wait(timeout=20) == 0
        assert second.poll() is None
    finally:
        backend.close()
    assert second.poll() == 0


@in_fresh_process
def test_a_forked_worker_runs_none_of_the_sweep_s_signal_handlers(tmp_path) -> None:
    assert worker_pool.fork_is_safe(), "this test process runs other threads"
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # the sweep's own handler
    try:
        backend = PoolBackend(tmp_path, workers=1, expected=1)
    finally:
        signal.signal(signal.SIGTERM, previous)
    try:
        (worker,) = (w.proc for w in backend._workers)
        worker.terminate()
        assert worker.wait(timeout=20) == -signal.SIGTERM  # not swallowed by the handler
    finally:
        backend.close()


@in_fresh_process
def test_no_worker_is_forked_while_another_thread_runs(tmp_path) -> None:
    assert worker_pool.fork_is_safe(), "this test process runs other threads"
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        backend = PoolBackend(tmp_path, workers=2, expected=2)
        assert backend.forked == 0 and backend._workers == []
        log = tmp_path / "logs" / "e1.log"
        log.parent.mkdir()
        worker = backend._spawn(log)  # a fresh interpreter instead
        assert isinstance(worker.proc, subprocess.Popen) and backend.forked == 0
        backend.close()
    finally:
        stop.set()
        thread.join()
    os.environ["ECONBENCH_POOL_START"] = "spawn"  # (a process of its own)
    assert not worker_pool.fork_is_safe()


def test_a_sweep_with_its_display_plays_on_forked_workers(tmp_path) -> None:
    out = tmp_path / "sweep"
    cells = ["--framings", "r0,r1", "--policies", "eager,wait:2", "--budgets", "1"]
    cmd = [sys.executable, "-m", "econbench.cli", "allo", "sweep", *cells, "--episodes", "2"]
    done = subprocess.run(
        [*cmd, "--workers", "2", "--out", str(out)],  # not --quiet: the display has a thread
        capture_output=True,
        text=True,
        env={**os.environ, "ECONBENCH_POOL_START": "fork"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    logs = [p.read_text() for p in sorted((out / "logs").iterdir())]
    cells = [p for p in out.iterdir() if (p / "summary.json").exists()]
    assert len(logs) == len(cells) >= 4
    pids = {int(m) for log in logs for m in re.findall(r"^pool worker (\d+) \(forked", log, re.M)}
    assert len(pids) == 2  # both forked, each played its share
    assert all("completed" in log for log in logs)
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]  # none left running


def _sweep_in_a_daemonic_process(sweep_dir: Path) -> tuple[bool, int]:
    backend = PoolBackend(sweep_dir, workers=1, expected=1)
    try:
        return worker_pool.fork_is_safe(), backend.forked
    finally:
        backend.close()


def test_a_daemonic_process_runs_its_sweep_on_fresh_workers(tmp_path) -> None:
    """``multiprocessing`` lets no daemonic process (a ``Pool``'s worker) have children."""
    spawn = multiprocessing.get_context("spawn")
    with spawn.Pool(1) as pool:
        safe, forked = pool.apply(_sweep_in_a_daemonic_process, (tmp_path,))
    assert (safe, forked) == (False, 0)


def test_a_sweep_s_display_leaves_no_thread_so_a_sweep_after_it_may_fork() -> None:
    before = set(threading.enumerate())
    display = SweepDisplay(Console(file=io.StringIO()), "first", 3, None, quiet=False)
    with display:
        assert set(threading.enumerate()) - before  # its refresh thread
    assert set(threading.enumerate()) == before  # ended, not only told to end
