"""``econbench sweep`` with the local backend (a pool of workers): every entry once, skips,
retries, the cost limit, runs held elsewhere, sweeps killed mid-way and resumed, and CLI
errors."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console
from tests.fakes.common import BrainReply
from tests.fakes.openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs.experiment import load_plan, slug
from econbench.runs.layout import read_json
from econbench.runs.lock import RunLock, is_locked
from econbench.runs.resume import run_status
from econbench.runs.store import run_metadata
from econbench.runs.sweep import SweepError, SweepOptions, prepare_sweep_dir, run_sweep
from econbench.runs.worker import read_outcome

runner = CliRunner()
RUN_FILES = (
    "config.json",
    "events.jsonl",
    "daily.jsonl",
    "episodes.jsonl",
    "summary.json",
    "checkpoint.json",
    "progress.json",
)
MODEL = "openai-compatible/gpt-5.5"  # priced like gpt-5.5: a fake model with a known cost
CALL_COST = 0.0115  # 2,000 input and 50 output tokens at gpt-5.5's list price


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def coffee_experiment(
    path: Path, *, days: int = 3, policies: str = '"heuristic", "passive"', seeds: str = "1, 2"
) -> Path:
    return write(
        path,
        f'name = "tiny"\nbenchmark = "coffee"\nseeds = [{seeds}]\ndays = {days}\n'
        f"[matrix]\nroaster_A = [{policies}]\n",
    )


def sweep(plan, out: Path, **options) -> tuple:
    """Run a sweep in this process (its runs in worker processes); returns the result and
    what the display printed."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=200)
    opts = SweepOptions(out=out, workers=options.pop("workers", 2), poll_s=0.05, **options)
    result = run_sweep(plan, opts, console=console)
    return result, buffer.getvalue()


def mtimes(sweep_dir: Path) -> dict[str, int]:
    return {
        str(p.relative_to(sweep_dir)): p.stat().st_mtime_ns
        for p in sorted((sweep_dir / "runs").rglob("*"))
        if p.is_file()
    }


def assert_same_runs(a: Path, b: Path) -> None:
    """Identical run files; meta.json differs only in when it was written."""
    ids = sorted(p.name for p in (a / "runs").iterdir())
    assert ids == sorted(p.name for p in (b / "runs").iterdir())
    for entry_id in ids:
        ra, rb = a / "runs" / entry_id, b / "runs" / entry_id
        for name in RUN_FILES:
            assert (ra / name).exists() == (rb / name).exists(), (entry_id, name)
            if (ra / name).exists():
                assert (ra / name).read_bytes() == (rb / name).read_bytes(), (entry_id, name)
        meta_a, meta_b = read_json(ra / "meta.json"), read_json(rb / "meta.json")
        meta_a.pop("created_at"), meta_b.pop("created_at")
        assert meta_a == meta_b
    assert read_json(a / "sweep.json") == read_json(b / "sweep.json")


@pytest.fixture(autouse=True)
def _cwd(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the checkout; default outputs in tmp


# --------------------------------------------------------------------------- basic runs


def test_a_coffee_sweep_runs_every_entry_once_then_skips_them(tmp_path) -> None:
    plan = load_plan(coffee_experiment(tmp_path / "e.toml"))
    out = tmp_path / "sweep"
    result, _ = sweep(plan, out)
    assert result.exit_code == 0
    assert [e.status for e in result.entries] == ["completed"] * 4
    assert [e.action for e in result.entries] == ["started"] * 4
    run = out / "runs" / "roaster_A-passive__seed-2"
    assert read_json(run / "summary.json")["firms"]["roaster_A"]["policy"] == "passive"
    assert read_json(run / "meta.json")["label"] == "roaster_A-passive"
    assert read_json(run / "progress.json")["done"] == 3
    doc = read_json(out / "sweep.json")
    assert [e["id"] for e in doc["entries"]] == [e.id for e in plan.entries]
    summary = read_json(out / "sweep_summary.json")
    assert summary["status"] == "completed" and summary["counts"] == {"completed": 4}

    before = mtimes(out)
    logs = {p.name: p.read_text() for p in (out / "logs").iterdir()}
    again, _ = sweep(plan, out)
    assert again.exit_code == 0
    assert [(e.action, e.attempts) for e in again.entries] == [("skipped", 0)] * 4
    assert mtimes(out) == before  # no run file was touched
    assert {p.name: p.read_text() for p in (out / "logs").iterdir()} == logs


def test_an_allo_sweep_plays_each_cell(tmp_path) -> None:
    path = write(
        tmp_path / "a.toml",
        'name = "cells"\nbenchmark = "allo"\nepisodes = 3\n'
        '[matrix]\nframings = ["r0"]\npolicies = ["eager", "wait:2"]\n',
    )
    out = tmp_path / "sweep"
    result, _ = sweep(load_plan(path), out)
    assert result.exit_code == 0
    for cell in ("r0-eager-k0-b3", "r0-wait-2-k0-b3"):
        run = out / "runs" / cell
        assert read_json(run / "summary.json")["episodes"] == 3
        assert len((run / "episodes.jsonl").read_text().splitlines()) == 3
        assert read_json(run / "progress.json")["unit"] == "episode"
        assert read_json(run / "meta.json")["label"] == cell


def test_a_failing_run_is_retried_then_reported_after_the_others_finish(tmp_path) -> None:
    path = coffee_experiment(tmp_path / "e.toml", policies='"sleepy", "heuristic"', seeds="1")
    plan = load_plan(path, check=False)  # skip the up-front check to make runs fail
    out = tmp_path / "sweep"
    result, printed = sweep(plan, out, retries=1)
    assert result.exit_code == 1
    status = {e.id: e for e in result.entries}
    failed = status["roaster_A-sleepy__seed-1"]
    assert failed.status == "failed" and failed.attempts == 2
    assert len(failed.errors) == 2 and "unknown policy 'sleepy'" in failed.errors[-1]
    assert status["roaster_A-heuristic__seed-1"].status == "completed"
    assert "retry" in printed and "failed" in printed
    log = (out / "logs" / "roaster_A-sleepy__seed-1.log").read_text()
    assert log.count("=== attempt") == 2
    summary = read_json(out / "sweep_summary.json")
    assert summary["status"] == "failed"
    assert summary["counts"] == {"completed": 1, "failed": 1}


def test_a_refused_resume_is_reported_without_retrying(tmp_path) -> None:
    path = coffee_experiment(tmp_path / "e.toml", policies='"heuristic"', seeds="2")
    plan = load_plan(path)
    out = tmp_path / "sweep"
    sweep(plan, out)
    run = out / "runs" / "roaster_A-heuristic__seed-2"
    (run / "summary.json").unlink()  # as if killed: it resumes from its checkpoint...
    meta = read_json(run / "meta.json")
    write(run / "meta.json", json.dumps({**meta, "econbench_version": "0.0.1"}))  # ...or not
    result, printed = sweep(plan, out, retries=2)
    assert result.exit_code == 1
    state = {e.id: e for e in result.entries}["roaster_A-heuristic__seed-2"]
    assert (state.status, state.attempts) == ("failed", 1)
    assert "0.0.1" in state.errors[0] and "--force" in state.errors[0]
    assert "retry" not in printed


def error_lines(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith("error: ")]


def test_a_refused_start_is_one_line_in_the_log_and_the_status_and_not_retried(
    tmp_path,
) -> None:
    """A run directory the start refuses (a folder of someone's own files) is a refusal
    whose message says it all: no traceback in the worker's log, no retry."""
    plan = load_plan(coffee_experiment(tmp_path / "e.toml", policies='"heuristic"', seeds="1"))
    out = tmp_path / "sweep"
    prepare_sweep_dir(plan, out)
    folder = write(out / "runs" / "roaster_A-heuristic__seed-1" / "notes.txt", "mine").parent
    result, printed = sweep(plan, out, workers=1, retries=2)  # a worker process
    [state] = result.entries
    assert (result.exit_code, state.status, state.attempts) == (1, "failed", 1)
    [error] = state.errors
    assert "RunDirError" in error and "not a run directory" in error and "\n" not in error
    log = out / "logs" / f"{state.id}.log"
    assert "Traceback" not in log.read_text()
    [line] = error_lines(log)
    assert error.endswith(line.removeprefix("error: "))
    assert "retry" not in printed
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_a_missing_key_at_start_is_one_line_and_not_retried(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = coffee_experiment(tmp_path / "e.toml", policies='"openai/gpt-5.5"', seeds="1")
    plan = load_plan(path, check=False)  # skip the up-front check that names the key
    out = tmp_path / "sweep"
    result, _ = sweep(plan, out, workers=1, backend="inline", retries=2)
    [state] = result.entries
    assert (state.status, state.attempts) == ("failed", 1)
    [error] = state.errors
    assert "OPENAI_API_KEY" in error and "\n" not in error
    log = out / "logs" / f"{state.id}.log"
    assert "Traceback" not in log.read_text() and len(error_lines(log)) == 1


def test_an_unexpected_error_keeps_its_traceback_in_the_log(tmp_path, monkeypatch) -> None:
    from econbench.runs import worker

    def bug(*args, **kwargs):
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(worker, "start_entry", bug)
    plan = load_plan(coffee_experiment(tmp_path / "e.toml", policies='"heuristic"', seeds="1"))
    out = tmp_path / "sweep"
    result, _ = sweep(plan, out, workers=1, backend="inline", retries=1)
    [state] = result.entries
    assert (state.status, state.attempts) == ("failed", 2)  # retried: it may be transient
    assert state.errors[-1] == "attempt 2: RuntimeError: a bug over two lines"
    log = (out / "logs" / f"{state.id}.log").read_text()
    assert log.count("Traceback (most recent call last)") == 2


def test_a_run_held_by_another_process_is_left_alone(tmp_path) -> None:
    plan = load_plan(coffee_experiment(tmp_path / "e.toml", seeds="1"))
    out = tmp_path / "sweep"
    prepare_sweep_dir(plan, out)
    held = out / "runs" / "roaster_A-heuristic__seed-1"
    with RunLock(held):
        result, printed = sweep(plan, out)
    assert result.exit_code == 3  # incomplete
    assert {e.id: e.status for e in result.entries}["roaster_A-heuristic__seed-1"] == "locked"
    assert [e.status for e in result.entries] == ["locked", "completed"]
    assert "another live process" in printed
    assert not (held / "events.jsonl").exists()


def test_a_dead_worker_is_reported_by_its_signal(tmp_path) -> None:
    outcome = read_outcome(tmp_path / "missing.log", -signal.SIGKILL)
    assert outcome.code != 0 and "signal 9" in (outcome.error or "")
    log = write(
        tmp_path / "e.log",
        '=== attempt 1\nerror: x\neconbench-sweep-outcome: {"code": 1, "action": "started"}\n'
        "=== attempt 2\nstarted\n",
    )
    outcome = read_outcome(log, -signal.SIGKILL)  # not the outcome of the attempt before
    assert outcome.action == "failed" and "signal 9" in (outcome.error or "")


def test_the_process_backend_plays_each_entry_in_a_process_of_its_own(tmp_path) -> None:
    plan = load_plan(coffee_experiment(tmp_path / "e.toml", seeds="1"))
    out = tmp_path / "sweep"
    result, _ = sweep(plan, out, backend="process")
    assert result.exit_code == 0
    logs = [p.read_text() for p in (out / "logs").iterdir()]
    assert len(logs) == 2 and not any("pool worker" in log for log in logs)


# --------------------------------------------------------------------------- sweep dirs


def test_a_different_experiment_is_refused_with_a_diff_unless_forced(tmp_path) -> None:
    out = tmp_path / "sweep"
    prepare_sweep_dir(load_plan(coffee_experiment(tmp_path / "e.toml", days=3)), out)
    run = write(out / "runs" / "roaster_A-passive__seed-1" / "config.json", "{}").parent
    write(run / "meta.json", json.dumps(run_metadata("coffee", 1)))  # what marks it as a run

    more = load_plan(
        coffee_experiment(tmp_path / "f.toml", policies='"heuristic", "passive", "scripted"')
    )
    with pytest.raises(SweepError) as info:
        prepare_sweep_dir(more, out)
    assert "+ roaster_A-scripted__seed-1" in str(info.value) and "--force" in str(info.value)
    assert prepare_sweep_dir(more, out, force=True) == []
    assert run.exists()  # its configuration did not change: kept

    longer = load_plan(coffee_experiment(tmp_path / "g.toml", days=4))
    with pytest.raises(SweepError) as info:
        prepare_sweep_dir(longer, out)
    message = str(info.value)
    assert "~ roaster_A-passive__seed-1: config.days: 3 → 4" in message
    assert "- roaster_A-scripted__seed-1" in message
    notes = prepare_sweep_dir(longer, out, force=True)
    assert run_status(run) == "new"  # changed: it starts again, its files removed
    assert sorted(p.name for p in run.iterdir()) == [".lock", "meta.json"]  # still a run
    assert any("configuration changed" in n for n in notes)
    assert any("no longer in the experiment" in n for n in notes)
    assert read_json(out / "sweep.json")["entries"][0]["config"]["days"] == 4


def test_a_folder_of_other_files_is_not_taken_for_a_sweep(tmp_path) -> None:
    out = write(tmp_path / "busy" / "notes.txt", "mine").parent
    plan = load_plan(coffee_experiment(tmp_path / "e.toml"))
    with pytest.raises(SweepError, match=r"no sweep\.json"):
        prepare_sweep_dir(plan, out)


# --------------------------------------------------------------------------- fake model


class StableIdServer(FakeOpenAIServer):
    """Response and call ids derived from the request instead of the arrival order, so runs
    sharing the server (concurrently, or killed and resumed) get the ids a run alone would."""

    def __init__(self, brain) -> None:
        super().__init__(brain)
        self._local = threading.local()

    def chat_completions(self, handler, body, fault) -> None:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        self._local.key, self._local.n = digest[:16], 0
        super().chat_completions(handler, body, fault)

    def _next_id(self, prefix: str) -> str:
        self._local.n += 1
        return f"{prefix}_{self._local.key}{self._local.n}"


def patient_brain(request) -> BrainReply:
    """A roaster that waits every day, at a fixed token count (so a fixed cost per call)."""
    return BrainReply(
        tool_calls=[{"name": "wait_for_next_day", "arguments": {}}],
        input_tokens=2000,
        cached_input_tokens=0,
        output_tokens=50,
    )


@pytest.fixture(scope="module")
def model_server():
    with StableIdServer(patient_brain) as server:
        yield server


@pytest.fixture(scope="module")
def mixed(model_server, tmp_path_factory) -> Path:
    """Scripted and fake-model entries, two seeds each."""
    root = tmp_path_factory.mktemp("mixed")
    return write(
        root / "mixed.toml",
        f"""
name = "mixed"
benchmark = "coffee"
seeds = [1, 2]
days = 12
[matrix]
roaster_A = ["heuristic", "{MODEL}"]
[models."{MODEL}"]
base_url = "{model_server.base_url}"
max_concurrency = 1
""",
    )


@pytest.fixture(scope="module")
def reference(mixed, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "sweep"
    result, _ = sweep(load_plan(mixed), out)
    assert result.exit_code == 0
    model_cost = result.entries[-1].cost_usd
    assert model_cost == pytest.approx(12 * CALL_COST)
    return out


def test_the_cost_limit_stops_new_work_and_a_higher_limit_continues(
    mixed, reference, tmp_path
) -> None:
    plan = load_plan(mixed)
    out = tmp_path / "sweep"
    limit = 3 * CALL_COST
    result, printed = sweep(plan, out, workers=1, cost_limit=limit)
    assert result.exit_code == 3 and result.cost_limited
    assert result.total_cost >= limit
    statuses = [e.status for e in result.entries]
    assert statuses[:2] == ["completed", "completed"]  # the scripted runs cost nothing
    assert statuses[-1] == "not_started"
    assert "cost limit reached" in printed and "higher --cost-limit" in printed
    summary = read_json(out / "sweep_summary.json")
    assert summary["status"] == "incomplete" and summary["cost_limit_reached"] is True

    again, _ = sweep(plan, out, workers=1, cost_limit=limit)  # already spent: start nothing
    assert again.exit_code == 3 and all(e.attempts == 0 for e in again.entries)

    final, _ = sweep(plan, out, cost_limit=100.0)
    assert final.exit_code == 0
    assert final.total_cost == pytest.approx(2 * 12 * CALL_COST)
    assert_same_runs(out, reference)


def _cli(mixed: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "econbench.cli", "sweep", str(mixed), "--out", str(out), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal would give it
    )


def _model_days(out: Path) -> dict[str, int]:
    """Days done by each fake-model run, from its progress file."""
    done = {}
    for progress in (out / "runs").glob(f"*{slug(MODEL)}*/progress.json"):
        data = read_json(progress)
        if data and data["status"] == "running":
            done[progress.parent.name] = data["done"]
    return done


def _wait_for_model_run(out: Path, proc: subprocess.Popen, days: int) -> None:
    """Until this sweep has moved a fake-model run (the slow kind: a model call a day)
    ``days`` days further than it was, or the sweep has ended."""
    before = _model_days(out)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        for run, done in _model_days(out).items():
            if done >= before.get(run, 0) + days:
                return
        time.sleep(0.005)


def _wait_for_group_exit(pgid: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)


def test_a_sweep_killed_and_resumed_ends_with_the_files_of_an_uninterrupted_one(
    mixed, reference, tmp_path
) -> None:
    out = tmp_path / "sweep"
    rng = random.Random(2024)  # the interruption points vary by seed; this one is fixed
    # 1. SIGTERM (like Ctrl-C) in the middle of a run: the sweep stops its workers, says so.
    proc = _cli(mixed, out)
    _wait_for_model_run(out, proc, days=rng.randint(1, 5))
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert read_json(out / "sweep_summary.json")["status"] == "interrupted"
    assert b"run the same command again" in err
    assert not any(is_locked(run) for run in (out / "runs").iterdir())
    # 2. kill -9 of the whole process group in the middle of a run.
    proc = _cli(mixed, out)
    _wait_for_model_run(out, proc, days=rng.randint(1, 4))
    with contextlib.suppress(ProcessLookupError):  # (unless it has already finished)
        os.killpg(proc.pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode in (0, -signal.SIGKILL), err.decode()
    _wait_for_group_exit(proc.pid)
    # 3. The same command again finishes the sweep, resuming what was cut short.
    proc = _cli(mixed, out)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    logs = "".join(p.read_text() for p in (out / "logs").iterdir())
    assert "resumed" in logs
    assert_same_runs(out, reference)


# --------------------------------------------------------------------------- CLI


def test_dry_run_prints_the_matrix_and_runs_nothing(tmp_path) -> None:
    path = coffee_experiment(tmp_path / "e.toml")
    result = runner.invoke(app, ["sweep", str(path), "--dry-run", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "roaster_A-passive__seed-2" in result.stdout and "nothing was run" in result.stdout
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--workers", "0"], "--workers must be at least 1"),
        (["--retries", "-1"], "--retries"),
        (["--cost-limit", "0"], "--cost-limit must be a positive number"),
        (["--backend", "dask"], "--backend must be local, process, ray or inline"),
        (["--backend", "inline", "--workers", "2"], "use --workers 1"),
        (["--ray-address", "auto"], "--ray-address needs --backend ray"),
        (["--cache", "."], "is a directory"),
    ],
)
def test_bad_options_are_one_error_line(tmp_path, args, expected) -> None:
    path = coffee_experiment(tmp_path / "e.toml")
    result = runner.invoke(app, ["sweep", str(path), "--out", str(tmp_path / "s"), *args])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and expected in result.stderr
    assert "Traceback" not in result.output


def test_bad_experiment_and_sweep_dir_errors(tmp_path) -> None:
    result = runner.invoke(app, ["sweep", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2 and "experiment file not found" in result.stderr
    bad = write(tmp_path / "bad.toml", 'name = "x"\nbenchmark = "coffee"\nsed = 1\n')
    result = runner.invoke(app, ["sweep", str(bad)])
    assert result.exit_code == 2 and "unknown key 'sed'" in result.stderr
    path = coffee_experiment(tmp_path / "e.toml")
    write(tmp_path / "file", "")
    result = runner.invoke(app, ["sweep", str(path), "--out", str(tmp_path / "file")])
    assert result.exit_code == 2 and "not a directory" in result.stderr
    other = tmp_path / "other"
    prepare_sweep_dir(load_plan(coffee_experiment(tmp_path / "f.toml", days=5)), other)
    result = runner.invoke(app, ["sweep", str(path), "--out", str(other)])
    assert result.exit_code == 2 and "different experiment" in result.stderr
    assert "~ roaster_A-heuristic__seed-1: config.days: 5 → 3" in result.stderr
    result = runner.invoke(app, ["sweep", str(path), "--out", str(other), "--dry-run"])
    assert result.exit_code == 0 and "running needs --force" in result.stdout
