"""Pool workers started while the sweep's process loads its command (``pool_prestart``):
how many the command line asks for, adopted by the pool, the same files as the inline
backend, a job played in the sweep process's environment, and none left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs import pool_prestart, worker_pool
from econbench.runs.worker import Outcome


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setenv("ECONBENCH_POOL_START", "spawn")  # as where the pool cannot fork
    yield
    pool_prestart.discard_all()


def test_where_the_pool_forks_its_workers_none_is_started_early(monkeypatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("ECONBENCH_POOL_START", "fork")
    assert pool_prestart.forks_workers()
    pool_prestart.prestart_for(["allo", "sweep", "--workers", "2"])
    assert pool_prestart._started == []
    monkeypatch.setenv("ECONBENCH_POOL_START", "spawn")
    assert not pool_prestart.forks_workers()
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.delenv("ECONBENCH_POOL_START")
    assert not pool_prestart.forks_workers()  # macOS: fresh interpreters, started early


@pytest.mark.parametrize(
    ("args", "workers"),
    [
        (["allo", "sweep", "--workers", "2"], 2),  # auto: the pool for more than one
        (["allo", "sweep", "--workers=2", "--backend=local"], 2),
        (["allo", "sweep", "--workers", "8"], 2),  # one per core at most
        (["allo", "sweep", "--backend", "local"], 1),
        (["allo", "sweep"], 0),  # one worker: inline
        (["allo", "sweep", "--workers", "3", "--backend", "process"], 0),
        (["allo", "sweep", "--workers", "2.0"], 0),  # refused by the parser anyway
        (["allo", "sweep", "--workers", "2", "--help"], 0),
        (["sweep", "e.toml"], 2),  # four workers, the pool by default
        (["sweep", "e.toml", "--workers", "1"], 1),
        (["sweep", "e.toml", "--backend", "inline", "--workers", "1"], 0),
        (["sweep", "e.toml", "--dry-run"], 0),
        (["coffee", "run", "--workers", "2"], 0),
        (["allo"], 0),
        ([], 0),
    ],
)
def test_the_workers_a_command_line_asks_for(args, workers) -> None:
    assert pool_prestart.workers_asked(args) == workers


def sweep_args(out: Path, *backend: str) -> list[str]:
    return [
        "allo", "sweep", "--framings", "r0,r1", "--policies", "eager,wait:2", "--budgets", "1",
        "--costs", "0,10", "--episodes", "2", "--quiet", "--out", str(out), *backend,
    ]  # fmt: skip


def cell_files(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name in {"summary.json", "episodes.jsonl"}
    }


def test_a_pool_sweep_adopts_its_prestarted_workers_and_writes_the_inline_files(
    tmp_path, monkeypatch
) -> None:
    adopted: list[int] = []
    adopt = pool_prestart.adopt

    def counting() -> pool_prestart.Prestarted | None:
        worker = adopt()
        if worker is not None:
            adopted.append(worker.proc.pid)
        return worker

    monkeypatch.setattr(pool_prestart, "adopt", counting)
    runner = CliRunner()
    pooled = runner.invoke(app, sweep_args(tmp_path / "pool", "--workers", "2"))
    assert pooled.exit_code == 0, pooled.output
    assert len(adopted) == 2
    logs = "".join(p.read_text() for p in (tmp_path / "pool" / "logs").iterdir())
    assert {f"pool worker {pid}" in logs for pid in adopted} == {True}
    assert pool_prestart._started == []  # none left running
    inline = runner.invoke(app, sweep_args(tmp_path / "inline", "--workers", "1"))
    assert inline.exit_code == 0, inline.output
    files = cell_files(tmp_path / "pool")
    assert files and files == cell_files(tmp_path / "inline")


def test_workers_nobody_adopts_end_with_the_command(tmp_path) -> None:
    runner = CliRunner()
    refused = runner.invoke(app, ["allo", "sweep", "--workers", "2", "--framings", "r9"])
    assert refused.exit_code != 0
    assert pool_prestart._started == []
    pool_prestart.prestart_for(["allo", "sweep", "--workers", "2"])
    procs = [w.proc for w in pool_prestart._started]
    assert len(procs) == 2 and all(p.poll() is None for p in procs)
    pool_prestart.discard_all()
    assert all(p.poll() is not None for p in procs) and pool_prestart._started == []


def test_a_dead_prestarted_worker_is_not_adopted() -> None:
    pool_prestart.prestart_for(["allo", "sweep", "--workers", "2"])
    first, second = pool_prestart._started
    first.proc.kill()
    first.proc.wait()
    assert pool_prestart.adopt() is second
    assert pool_prestart.adopt() is None


def test_a_job_plays_in_the_sweep_process_environment_and_puts_the_worker_s_back(
    tmp_path, monkeypatch
) -> None:
    seen = {}

    def execute(sweep_dir, entry_id, cache):
        seen.update(mark=os.environ.get("ECONBENCH_TEST_MARK"), cwd=os.getcwd())
        return Outcome(0, "started")

    monkeypatch.setattr(worker_pool, "execute", execute)
    before = (dict(os.environ), os.getcwd())
    (tmp_path / "elsewhere").mkdir()
    environ = {**os.environ, "ECONBENCH_TEST_MARK": "from the sweep"}
    outcome = worker_pool.play(tmp_path / "sweep", "e1", None, environ, str(tmp_path / "elsewhere"))
    assert outcome.code == 0
    assert seen == {"mark": "from the sweep", "cwd": str(tmp_path / "elsewhere")}
    assert (dict(os.environ), os.getcwd()) == before


def test_a_prestarted_worker_s_early_output_goes_to_its_first_job_s_log(tmp_path) -> None:
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (the pool closes it on adoption)
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stderr.write('early words\\n'); input()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    pool_prestart._started.append(pool_prestart.Prestarted(proc, stderr))
    backend = worker_pool.PoolBackend(tmp_path, workers=1)
    log = tmp_path / "logs" / "e1.log"
    log.parent.mkdir()
    deadline = time.monotonic() + 10
    while b"early" not in (stderr.seek(0) or stderr.read()):
        assert time.monotonic() < deadline
    worker = backend._spawn(log)
    assert worker.proc is proc and backend.adopted == 1
    assert log.read_text() == "early words\n"
    backend.close()


def test_the_defaults_read_here_are_the_commands_own() -> None:
    import inspect

    from econbench.runs import sweep_cli
    from econbench.runs.allo import cli as allo_cli

    for words, command in (
        (("sweep",), sweep_cli.sweep_command),
        (("allo", "sweep"), allo_cli.sweep),
    ):
        params = inspect.signature(command).parameters
        defaults = (params["workers"].default, params["backend"].default)
        assert pool_prestart._SWEEPS[words] == defaults, words
