"""A CoffeeBench run killed before its first checkpoint (while its imports and policies load)
is resumed from the start, and a plain re-run over it starts it without ``--overwrite``; a
run that did play is never silently thrown away."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs.coffee import run as run_module
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.resume import run_status

CONFIG = RunConfig(days=6, seed=3)
ARGS = ["--days", "6", "--seed", "3"]
FILES = ("events.jsonl", "daily.jsonl", "summary.json", "checkpoint.json", "config.json")
cli = CliRunner()


class Crash(BaseException):
    """Stands for the process dying: nothing catches it."""


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "run"
    run_to_dir(CONFIG, out)
    return out


def same_files(a: Path, b: Path) -> None:
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def killed_while_starting(monkeypatch, out: Path) -> None:
    """Die while the run builds its policies: config, meta and empty logs are written, the
    first checkpoint is not."""

    def boom(*args, **kwargs):
        raise Crash

    with monkeypatch.context() as m:
        m.setattr(run_module, "CoffeeRun", boom)
        with pytest.raises(Crash):
            run_to_dir(CONFIG, out)
    assert (out / "config.json").exists() and not (out / "checkpoint.json").exists()


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_resume_restarts_a_run_killed_before_its_first_checkpoint(
    tmp_path, monkeypatch, reference
) -> None:
    out = tmp_path / "run"
    killed_while_starting(monkeypatch, out)
    assert run_status(out) == "interrupted"
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    same_files(out, reference)


def test_a_plain_rerun_starts_it_again_without_overwrite(tmp_path, monkeypatch, reference):
    out = tmp_path / "run"
    killed_while_starting(monkeypatch, out)
    result = cli.invoke(app, ["coffee", "run", *ARGS, "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    same_files(out, reference)


def test_killed_before_its_config_was_written(tmp_path, monkeypatch, reference) -> None:
    out = tmp_path / "run"
    real_write_json = run_module.write_json

    def write_json(path, data):
        if path.name == "config.json":
            raise Crash
        real_write_json(path, data)

    with monkeypatch.context() as m:
        m.setattr(run_module, "write_json", write_json)
        with pytest.raises(Crash):
            run_to_dir(CONFIG, out)
    assert sorted(p.name for p in out.iterdir()) == [".lock", "meta.json"]
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 2
    assert "killed before it wrote config.json" in one_error_line(result)
    result = cli.invoke(app, ["coffee", "run", *ARGS, "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    same_files(out, reference)


def test_a_run_that_played_is_not_restarted_or_replaced(tmp_path, reference) -> None:
    out = tmp_path / "run"
    run_to_dir(CONFIG, out)
    (out / "summary.json").unlink()
    (out / "checkpoint.json").unlink()
    events = (out / "events.jsonl").read_bytes()
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 2
    assert "checkpoint.json is missing but the run's logs hold events" in one_error_line(result)
    result = cli.invoke(app, ["coffee", "run", *ARGS, "--out", str(out), "--quiet"])
    assert result.exit_code == 2
    assert "--overwrite" in one_error_line(result)
    assert (out / "events.jsonl").read_bytes() == events


def test_a_plain_rerun_over_an_interrupted_run_points_to_resume(tmp_path, reference) -> None:
    out = tmp_path / "run"
    run_to_dir(CONFIG, out)
    (out / "summary.json").unlink()
    result = cli.invoke(app, ["coffee", "run", *ARGS, "--out", str(out), "--quiet"])
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "interrupted run" in line and f"econbench resume {out}" in line
    assert json.loads((out / "config.json").read_text())["days"] == 6


def test_kill_9_while_starting_then_resume_or_rerun(tmp_path, reference) -> None:
    """Real kills early in a run's life — as soon as its directory, its config, or its first
    checkpoint appears — then `resume`, or a plain re-run where there is nothing to resume:
    the run always completes byte-identically."""
    cmd = [sys.executable, "-m", "econbench.cli", "coffee", "run", *ARGS, "--quiet"]
    for i, marker in enumerate(("", "config.json", "checkpoint.json")):
        out = tmp_path / f"run{i}"
        proc = subprocess.Popen(
            [*cmd, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while not (out / marker).exists() and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not (out / "summary.json").exists():
            started = any(out.iterdir())  # a kill right after mkdir leaves an empty folder
            result = cli.invoke(app, ["resume", str(out), "--quiet"])
            if result.exit_code == 2:
                expected = (
                    "killed before it wrote config.json"
                    if started
                    else "holds no run that can be resumed"
                )
                assert expected in one_error_line(result)
                result = cli.invoke(app, ["coffee", "run", *ARGS, "--out", str(out), "--quiet"])
            assert result.exit_code == 0, result.output
        same_files(out, reference)
