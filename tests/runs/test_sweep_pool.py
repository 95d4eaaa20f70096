"""The local backend's pool of long-lived workers: the same run files as a run played alone
in this process, no state carried from one run to the next, and a worker killed or stopped
mid-run replaced, its run resumed to the same files."""

from __future__ import annotations

import logging
import os
import re
import signal
import time
from pathlib import Path

import pytest
from tests.runs.fresh_process import in_fresh_process
from tests.runs.test_sweep import RUN_FILES, assert_same_runs, coffee_experiment, sweep, write

from econbench.agents.models import registry
from econbench.runs.experiment import load_plan
from econbench.runs.layout import read_json
from econbench.runs.sweep import prepare_sweep_dir
from econbench.runs.worker import EXIT_OK, EXIT_USAGE
from econbench.runs.worker_pool import PoolBackend, isolated


@pytest.fixture(autouse=True)
def _cwd(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the checkout; default outputs in tmp


@pytest.fixture(params=["fork", "spawn"])
def start(request, monkeypatch) -> str:
    """How the pool starts its workers: forked from this process, or fresh interpreters."""
    monkeypatch.setenv("ECONBENCH_POOL_START", request.param)
    return request.param


def check_started(log_dir: Path, start: str) -> None:
    """Every attempt logged under ``log_dir`` was played by a worker started as ``start``."""
    text = "".join(p.read_text() for p in log_dir.iterdir())
    forked = re.findall(r"^pool worker \d+ \(forked from the sweep\)$", text, re.M)
    expected = len(re.findall(r"^pool worker", text, re.M)) if start == "fork" else 0
    assert len(forked) == expected, text


def allo_experiment(path: Path) -> Path:
    return write(
        path,
        'name = "cells"\nbenchmark = "allo"\nepisodes = 2\n[matrix]\nframings = ["r0", "r1"]\n'
        'policies = ["eager", "wait:2"]\n',
    )


def worker_pids(log: Path) -> list[int]:
    """The pool worker that played each attempt logged in ``log``."""
    return [int(pid) for pid in re.findall(r"^pool worker (\d+)", log.read_text(), re.M)]


def same_files(a: Path, b: Path) -> None:
    for name in RUN_FILES:
        assert (a / name).exists() == (b / name).exists(), name
        if (a / name).exists():
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert (a / "events.jsonl").exists()


def wait_for(backend: PoolBackend, entry_id: str) -> object:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for done_id, outcome in backend.wait(0.05):
            assert done_id == entry_id
            return outcome
    raise AssertionError(f"{entry_id} did not finish")


@pytest.mark.parametrize("experiment", ["allo", "coffee"])
@in_fresh_process  # forks only from a process running one thread
def test_the_pool_writes_the_files_the_inline_backend_writes(tmp_path, experiment, start) -> None:
    if experiment == "allo":
        plan = load_plan(allo_experiment(tmp_path / "e.toml"))
    else:
        plan = load_plan(coffee_experiment(tmp_path / "e.toml", days=4))
    pooled, _ = sweep(plan, tmp_path / "pool", backend="local", workers=2)
    inline, _ = sweep(plan, tmp_path / "inline", backend="inline", workers=1)
    assert pooled.exit_code == inline.exit_code == 0
    assert_same_runs(tmp_path / "pool", tmp_path / "inline")
    pids = {pid for p in (tmp_path / "pool" / "logs").iterdir() for pid in worker_pids(p)}
    assert 1 <= len(pids) <= 2 and os.getpid() not in pids  # workers played many entries
    check_started(tmp_path / "pool" / "logs", start)


def test_a_run_after_another_in_the_same_worker_matches_it_played_alone(tmp_path) -> None:
    both = load_plan(coffee_experiment(tmp_path / "e.toml", policies='"passive", "heuristic"'))
    result, _ = sweep(both, tmp_path / "both", backend="local", workers=1)
    assert result.exit_code == 0
    logs = sorted((tmp_path / "both" / "logs").iterdir())
    assert (
        len(logs) == 4 and len({pid for log in logs for pid in worker_pids(log)}) == 1
    )  # one worker
    alone = load_plan(coffee_experiment(tmp_path / "f.toml", policies='"heuristic"', seeds="2"))
    sweep(alone, tmp_path / "alone", backend="process", workers=1)
    entry = "roaster_A-heuristic__seed-2"
    same_files(tmp_path / "both" / "runs" / entry, tmp_path / "alone" / "runs" / entry)


def test_what_a_run_changes_for_the_process_is_put_back(tmp_path) -> None:
    cwd, env = os.getcwd(), dict(os.environ)
    sigterm, root = signal.getsignal(signal.SIGTERM), logging.getLogger()
    handlers, level = list(root.handlers), root.level
    with isolated():
        os.environ["ECONBENCH_SANDBOX_ALLOW_WEAK"] = "1"
        os.environ.pop("PATH", None)
        os.chdir(tmp_path.parent)
        signal.signal(signal.SIGTERM, lambda *_: None)
        root.addHandler(logging.NullHandler())
        root.setLevel(logging.DEBUG)
        registry.register_scripted("leak", lambda *_: None)
    assert (os.getcwd(), dict(os.environ)) == (cwd, env)
    assert signal.getsignal(signal.SIGTERM) is sigterm
    assert (root.handlers, root.level) == (handlers, level)
    assert not registry.is_model_name("scripted/leak")


@in_fresh_process  # forks only from a process running one thread
def test_a_killed_worker_fails_its_entry_and_the_next_attempt_resumes_it(tmp_path, start) -> None:
    plan = load_plan(
        coffee_experiment(tmp_path / "e.toml", days=365, policies='"heuristic"', seeds="1")
    )
    entry = "roaster_A-heuristic__seed-1"
    reference, _ = sweep(plan, tmp_path / "reference", backend="inline", workers=1)
    assert reference.exit_code == 0

    out = tmp_path / "sweep"
    prepare_sweep_dir(plan, out)
    backend = PoolBackend(out, workers=1)
    try:
        assert wait_for_start(backend, "nope").code == EXIT_USAGE  # not in sweep.json
        backend.start(entry, 1)
        progress = out / "runs" / entry / "progress.json"
        deadline = time.monotonic() + 60
        while ((read_json(progress) or {}).get("done") or 0) < 3:
            assert time.monotonic() < deadline, "the run did not get going"
            time.sleep(0.005)
        pid = backend.pid_of(entry)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        killed = wait_for(backend, entry)
        assert killed.code != EXIT_OK and "signal 9" in (killed.error or "")
        assert backend.pid_of(entry) is None

        backend.start(entry, 2)  # a fresh worker
        resumed = wait_for(backend, entry)
        assert (resumed.code, resumed.action) == (EXIT_OK, "resumed")

        backend.start("nope", 3)
        backend.stop("nope")  # a stopped entry: its worker ended, nothing reported
        assert backend.wait(0.2) == []
    finally:
        backend.close()
    log = out / "logs" / f"{entry}.log"
    first, second = worker_pids(log)
    assert first == pid == worker_pids(out / "logs" / "nope.log")[0]  # after another entry
    assert second != pid  # a fresh worker
    assert log.read_text().count("=== attempt") == 2 and "resumed" in log.read_text()
    same_files(out / "runs" / entry, tmp_path / "reference" / "runs" / entry)
    check_started(out / "logs", start)


def wait_for_start(backend: PoolBackend, entry_id: str) -> object:
    backend.start(entry_id, 1)
    return wait_for(backend, entry_id)
