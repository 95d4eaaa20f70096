"""A resume never continues silently over what it cannot trust: a record of model calls
that was deleted, emptied, cut or swapped, or a stray ``summary.json``; and a record locked
by another process or a disk that fills up mid-run stops the run in one line, its state
intact, so a later resume finishes it byte-identically (issue 22, items 7 and 8)."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.agents.models import record as record_module
from econbench.agents.models.record import CallRecord
from econbench.agents.models.registry import register_scripted, unregister_scripted
from econbench.agents.tools import ToolCall
from econbench.allo.episodes import runner as allo_runner
from econbench.allo.episodes.runner import CellSpec
from econbench.cli import app
from econbench.coffee import world as world_module
from econbench.runs import checkpoint as checkpoint_module
from econbench.runs.allo.cell import CellStopped, run_cell
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import RunStopped, resume_to_dir, run_to_dir
from econbench.runs.layout import CHECKPOINT, EPISODES, RECORD, SUMMARY
from econbench.runs.resume import resume_run, run_status

cli = CliRunner()
MODEL = "scripted/integrity-shopper"
ALLO_MODEL = "scripted/integrity-claimer"
FILES = ("events.jsonl", "daily.jsonl", "summary.json", "checkpoint.json", "progress.json")
CELL_FILES = ("episodes.jsonl", "summary.json", "config.json", "progress.json")
CELL = CellSpec(framing="r1", policy=ALLO_MODEL, seeds=(2000, 2001, 2002, 2003))


class Crash(BaseException):
    """Stands for the process dying: nothing catches it."""


def shopper(messages, tools):
    """A model whose reply depends on the last message only, so a redone tick gets the
    reply the lost one got (as a recorded replay or a response cache would give)."""
    last = messages[-1]
    if last.role == "user":
        return ToolCall("view_listings", {})
    if last.role == "tool" and '"listings"' in last.content:
        green = [x for x in json.loads(last.content).get("listings", []) if "green" in x["item_id"]]
        if green:
            offer = {
                "listing_id": green[0]["listing_id"],
                "qty": min(10, green[0]["qty"]),
                "offered_price": green[0]["asking_price"],
            }
            return ToolCall("make_offer", offer)
    return ToolCall("wait_for_next_day", {})


def claimer(messages, tools):
    """Claim a solver for every task; after the tool's answer, say so."""
    from econbench.agents.models.base import ModelOutput

    if messages[-1].role == "tool":
        return ModelOutput(model=ALLO_MODEL, text="Done.", stop_reason="stop")
    return ModelOutput(model=ALLO_MODEL, tool_calls=[ToolCall("claim_solver", {})])


@pytest.fixture(autouse=True)
def models():
    register_scripted(MODEL, shopper)
    register_scripted(ALLO_MODEL, claimer)
    yield
    unregister_scripted(MODEL)
    unregister_scripted(ALLO_MODEL)


CONFIG = RunConfig(days=5, seed=2, agents={"roaster_A": MODEL, "roaster_B": MODEL})
COFFEE_RUN = ["coffee", "run", "--days", "5", "--seed", "2", "--quiet"]
COFFEE_RUN += ["--agent", f"roaster_A={MODEL}", "--agent", f"roaster_B={MODEL}"]


@pytest.fixture(autouse=True)
def daily_checkpoints(monkeypatch):
    """A checkpoint at every day's end, so that a 5-day run is killed past one that sealed
    model calls (the real period, every 10th day, is checked in test_resume_replays_tail)."""
    monkeypatch.setattr("econbench.coffee.sim.MODEL_DAYS_PER_CHECKPOINT", 1)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    register_scripted(MODEL, shopper)
    out = tmp_path_factory.mktemp("ref") / "run"
    run_to_dir(CONFIG, out)
    unregister_scripted(MODEL)
    return out


@pytest.fixture(scope="module")
def cell_reference(tmp_path_factory) -> Path:
    register_scripted(ALLO_MODEL, claimer)
    out = tmp_path_factory.mktemp("ref") / "cell"
    run_cell(CELL, out)
    unregister_scripted(ALLO_MODEL)
    return out


def same_files(a: Path, b: Path, names=FILES) -> None:
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def calls_of(path: Path) -> list[tuple]:
    with CallRecord(path, readonly=True) as record:
        return [(c.agent, c.idx, c.request_key) for c in record.calls()]


def at_action(monkeypatch, n: int, then) -> None:
    """Call ``then()`` in the middle of the run's n-th action (before it is applied)."""
    original = world_module.World.act
    count = {"n": 0}

    def act(self, firm_id, call):
        count["n"] += 1
        if count["n"] == n:
            then()
        return original(self, firm_id, call)

    monkeypatch.setattr(world_module.World, "act", act)


def crash(*_: object, **__: object) -> None:
    raise Crash


def killed_run(tmp_path: Path, monkeypatch, n: int = 60) -> Path:
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        at_action(m, n, crash)
        with pytest.raises(Crash):
            run_to_dir(CONFIG, out)
    head = json.loads((out / CHECKPOINT).read_text())
    assert head["record"]["calls"] > 0, "the checkpoint sealed model calls"
    return out


def one_line(result, code: int = 2, prefix: str = "error: ") -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == code, result.output
    assert len(lines) == 1 and lines[0].startswith(prefix), result.stderr
    return lines[0]


# --------------------------------------------------------------------------- the record


def delete(record: Path, other: Path) -> None:
    record.unlink()


def empty(record: Path, other: Path) -> None:
    record.write_bytes(b"")


def drop_rows(record: Path, other: Path) -> None:
    db = sqlite3.connect(record)
    with db:
        db.execute("DELETE FROM calls WHERE idx >= 2")
    db.close()


def cut_bytes(record: Path, other: Path) -> None:
    data = record.read_bytes()
    record.write_bytes(data[: len(data) // 3])


def swap(record: Path, other: Path) -> None:
    shutil.copyfile(other, record)


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        (delete, "is missing, but the run's checkpoint sealed"),
        (empty, "is empty, but the run's checkpoint sealed"),
        (drop_rows, "model calls of roaster_A that the run's checkpoint sealed"),
        (cut_bytes, "record.sqlite"),
        (swap, "does not hold the model calls the run's checkpoint sealed"),
    ],
    ids=["deleted", "emptied", "rows-cut", "bytes-cut", "swapped"],
)
def test_a_spoiled_record_is_refused_and_nothing_is_touched(
    tmp_path, monkeypatch, reference, spoil, says
) -> None:
    out = killed_run(tmp_path, monkeypatch)
    other = tmp_path / "other"  # another run of other models: same agents, other calls
    run_to_dir(RunConfig(days=5, seed=7, agents=CONFIG.agents), other)
    spoil(out / RECORD, other / RECORD)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    line = one_line(cli.invoke(app, ["resume", str(out), "--quiet"]))
    assert says in line and "--overwrite" in line, line
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before, "a refused resume changes nothing"


def test_a_record_deleted_while_the_run_writes_it_stops_the_run(tmp_path, monkeypatch) -> None:
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        at_action(m, 60, lambda: (out / RECORD).unlink())
        with pytest.raises(RunStopped, match="deleted or replaced while the run was writing"):
            run_to_dir(CONFIG, out)
    assert not (out / SUMMARY).exists()
    line = one_line(cli.invoke(app, ["resume", str(out), "--quiet"]))
    assert "is missing" in line


def test_a_record_that_sealed_no_call_is_rebuilt_losslessly(tmp_path, monkeypatch, reference):
    """Killed before any model call: the checkpoint sealed an empty record, so making it
    anew loses nothing."""
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        m.setattr("econbench.coffee.sim.CoffeeRun.run", crash)
        with pytest.raises(Crash):
            run_to_dir(CONFIG, out)
    assert json.loads((out / CHECKPOINT).read_text())["record"]["calls"] == 0
    (out / RECORD).unlink()
    resume_to_dir(out)
    same_files(out, reference)
    assert calls_of(out / RECORD) == calls_of(reference / RECORD)


def test_a_killed_and_resumed_run_keeps_exactly_the_calls_of_the_finished_run(
    tmp_path, monkeypatch, reference
) -> None:
    out = killed_run(tmp_path, monkeypatch)
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    same_files(out, reference)
    assert calls_of(out / RECORD) == calls_of(reference / RECORD)


def test_replay_refuses_a_record_emptied_after_the_run(tmp_path, reference) -> None:
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    drop_rows(out / RECORD, out / RECORD)
    result = cli.invoke(app, ["replay", str(out), "--out", str(tmp_path / "again")])
    assert result.exit_code == 2, result.output
    assert "model calls of roaster_A that the run's checkpoint sealed" in result.output
    assert not (tmp_path / "again").exists()


# --------------------------------------------------------------------------- AlloBench


def crash_in_episode(monkeypatch, n: int) -> None:
    original = allo_runner.play_episode
    count = {"n": 0}

    def play_episode(*args, **kwargs):
        count["n"] += 1
        result = original(*args, **kwargs)  # its model calls are all recorded
        if count["n"] == n:
            raise Crash  # ... but the episode is never written
        return result

    monkeypatch.setattr(allo_runner, "play_episode", play_episode)


def test_a_cell_whose_record_was_deleted_is_refused(tmp_path, monkeypatch) -> None:
    out = tmp_path / "cell"
    with monkeypatch.context() as m:
        crash_in_episode(m, 3)
        with pytest.raises(Crash):
            run_cell(CELL, out)
    (out / RECORD).unlink()
    line = one_line(cli.invoke(app, ["resume", str(out), "--quiet"]))
    assert "is missing, but the run's checkpoint sealed" in line


def test_a_resumed_cell_drops_the_calls_of_the_episode_in_flight(
    tmp_path, monkeypatch, cell_reference
) -> None:
    """The redone episode's calls replace the lost ones; calls the lost attempt made
    beyond them (a live model need not answer alike twice) no longer stay behind."""
    out = tmp_path / "cell"
    with monkeypatch.context() as m:
        crash_in_episode(m, 3)
        with pytest.raises(Crash):
            run_cell(CELL, out)
    db = sqlite3.connect(out / RECORD)
    with db:
        db.execute(
            "INSERT INTO calls SELECT agent, idx + 1000, request_key, model, message_hashes, "
            "tools_hash, config, output FROM calls WHERE agent = 'seed-2002'"
        )
    db.close()
    resume_run(out)
    same_files(out, cell_reference, CELL_FILES)
    assert calls_of(out / RECORD) == calls_of(cell_reference / RECORD)


def test_an_episode_written_but_not_sealed_keeps_its_calls(
    tmp_path, monkeypatch, cell_reference
) -> None:
    """Killed between an episode's line and its checkpoint: the episode is kept, so its
    calls must be too."""
    out = tmp_path / "cell"
    original = checkpoint_module.write_checkpoint
    count = {"n": 0}

    def write_checkpoint(run_dir, data, state_json=None, *, durable=True):
        count["n"] += 1
        if count["n"] == 3:  # the one after the second episode's line
            raise Crash
        original(run_dir, data, state_json, durable=durable)

    with monkeypatch.context() as m:
        m.setattr("econbench.runs.allo.cell.write_checkpoint", write_checkpoint)
        with pytest.raises(Crash):
            run_cell(CELL, out)
    assert (out / EPISODES).read_text().count("\n") == 2
    resume_run(out)
    same_files(out, cell_reference, CELL_FILES)
    assert calls_of(out / RECORD) == calls_of(cell_reference / RECORD)


# --------------------------------------------------------------------------- stray summary


def test_a_stray_completed_summary_does_not_make_an_interrupted_run_complete(
    tmp_path, monkeypatch, reference
) -> None:
    out = killed_run(tmp_path, monkeypatch)
    shutil.copyfile(reference / SUMMARY, out / SUMMARY)
    assert run_status(out) == "interrupted"
    line = one_line(cli.invoke(app, [*COFFEE_RUN, "--out", str(out)]))
    assert "interrupted run" in line and "econbench resume" in line
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    same_files(out, reference)
    assert run_status(out) == "completed"


def test_a_stray_completed_summary_in_a_cell(tmp_path, monkeypatch, cell_reference) -> None:
    out = tmp_path / "cell"
    with monkeypatch.context() as m:
        crash_in_episode(m, 2)
        with pytest.raises(Crash):
            run_cell(CELL, out)
    shutil.copyfile(cell_reference / SUMMARY, out / SUMMARY)
    assert run_status(out) == "interrupted"
    resume_run(out)
    same_files(out, cell_reference, CELL_FILES)
    assert run_status(out) == "completed"


# --------------------------------------------------------------------------- a locked record


@contextmanager
def held_by_another_process(path: Path) -> Iterator[None]:
    """``path`` locked exclusively by a child process (as an open sqlite3 shell would)."""
    code = (
        "import sqlite3, sys, time\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "time.sleep(120)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        yield
    finally:
        child.kill()
        child.wait()


def test_the_busy_timeout_is_short() -> None:
    """A locked record used to be waited for 30 s, then a traceback."""
    assert record_module.BUSY_TIMEOUT_S <= 5


def test_a_record_locked_by_another_process_is_one_line_then_resumes(
    tmp_path, monkeypatch, reference
) -> None:
    out = killed_run(tmp_path, monkeypatch)
    monkeypatch.setattr(record_module, "BUSY_TIMEOUT_S", 0.1)
    with held_by_another_process(out / RECORD):
        line = one_line(cli.invoke(app, ["resume", str(out), "--quiet"]))
        assert "locked by another process" in line and "close the program" in line
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    same_files(out, reference)


def test_a_record_locked_mid_run_stops_it_cleanly(tmp_path, monkeypatch, reference) -> None:
    out = tmp_path / "run"
    monkeypatch.setattr(record_module, "BUSY_TIMEOUT_S", 0.1)
    holder: list[sqlite3.Connection] = []

    def lock_it() -> None:
        db = sqlite3.connect(out / RECORD, isolation_level=None, timeout=0.1)
        db.execute("BEGIN EXCLUSIVE")
        holder.append(db)

    with monkeypatch.context() as m:
        at_action(m, 60, lock_it)
        with pytest.raises(RunStopped, match="locked by another process") as stop:
            run_to_dir(CONFIG, out)
    assert "\n" not in str(stop.value) and f"econbench resume {out}" in str(stop.value)
    holder[0].close()
    assert not (out / SUMMARY).exists() and run_status(out) == "interrupted"
    resume_to_dir(out)
    same_files(out, reference)


# --------------------------------------------------------------------------- a full disk


class FillingOs:
    """``os`` as the checkpoint module sees it, with a disk that fills up: once ``armed``,
    a write puts down a few bytes, then fails with ``ENOSPC``."""

    def __init__(self) -> None:
        self.armed = False

    def __getattr__(self, name: str):
        return getattr(os, name)

    def write(self, fd: int, data) -> int:
        if self.armed:
            os.write(fd, bytes(data[:100]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(fd, data)


def full_disk_at(monkeypatch, n: int) -> None:
    """The disk is full from the n-th checkpoint on (``ENOSPC`` mid-write)."""
    filling = FillingOs()
    original = checkpoint_module.write_atomic
    count = {"n": 0}

    def write_atomic(path, text, *, durable=False):
        if path.name == CHECKPOINT:
            count["n"] += 1
            filling.armed = filling.armed or count["n"] == n
        original(path, text, durable=durable)

    monkeypatch.setattr(checkpoint_module, "os", filling)
    monkeypatch.setattr(checkpoint_module, "write_atomic", write_atomic)


def test_a_full_disk_mid_run_is_one_line_and_a_resume_finishes_it(tmp_path, monkeypatch):
    reference = tmp_path / "ref"  # the command line's config, spelt as it spells it
    assert cli.invoke(app, [*COFFEE_RUN, "--out", str(reference)]).exit_code == 0
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        full_disk_at(m, 6)
        result = cli.invoke(app, [*COFFEE_RUN, "--out", str(out)])
    line = one_line(result, code=1, prefix="stopped: ")
    assert "No space left on device" in line and "free some disk space" in line
    assert not (out / SUMMARY).exists() and not (out / "checkpoint.json.tmp").exists()
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    same_files(out, reference)


def test_a_full_disk_on_resume_is_one_line_too(tmp_path, monkeypatch, reference) -> None:
    out = killed_run(tmp_path, monkeypatch)
    with monkeypatch.context() as m:
        full_disk_at(m, 1)
        line = one_line(cli.invoke(app, ["resume", str(out), "--quiet"]), 1, "stopped: ")
    assert "No space left on device" in line
    resume_to_dir(out)
    same_files(out, reference)


def test_a_full_disk_mid_cell_stops_it_cleanly(tmp_path, monkeypatch, cell_reference) -> None:
    out = tmp_path / "cell"
    with monkeypatch.context() as m:
        full_disk_at(m, 3)
        with pytest.raises(CellStopped, match="No space left on device") as stop:
            run_cell(CELL, out)
    assert "\n" not in str(stop.value)
    assert not (out / SUMMARY).exists() and run_status(out) == "interrupted"
    resume_run(out)
    same_files(out, cell_reference, CELL_FILES)
    assert calls_of(out / RECORD) == calls_of(cell_reference / RECORD)


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A small tmpfs at ``path`` (root only); skips the test where it cannot be mounted."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root with CAP_SYS_ADMIN): {done.stderr}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(directory: Path) -> Path:
    """Fill the file system of ``directory`` up; returns the filler file."""
    filler = directory / "filler"
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * (1 << 20))
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_really_full_disk_mid_run_then_a_resume(tmp_path, monkeypatch, reference) -> None:
    """The kernel's ENOSPC, met by the logs or by SQLite ("database or disk is full")."""
    with tmpfs(tmp_path / "mnt", "24m") as mnt:
        out = mnt / "run"
        filler: list[Path] = []
        with monkeypatch.context() as m:
            at_action(m, 60, lambda: filler.append(fill(mnt)))
            with pytest.raises(RunStopped, match=r"No space left on device|disk is full"):
                run_to_dir(CONFIG, out)
        filler[0].unlink()
        assert not (out / SUMMARY).exists()
        resume_to_dir(out)
        same_files(out, reference)
        assert calls_of(out / RECORD) == calls_of(reference / RECORD)


def test_a_full_disk_under_the_record_is_a_storage_error_naming_it(tmp_path) -> None:
    """SQLite's "database or disk is full" is an ``OSError`` with ``ENOSPC``, the run
    layer's cue to stop cleanly (it was a bare ``sqlite3.OperationalError``)."""
    from econbench.agents.models.base import GenerateConfig
    from econbench.agents.models.scripted import ScriptedModel, text_output

    with tmpfs(tmp_path / "mnt", "2m") as mnt, CallRecord(mnt / RECORD) as record:
        model = ScriptedModel("m", outputs=[text_output("x" * 100_000)] * 50)
        recorder = record_module.RecordingProvider(model, record, "roaster_A")
        fill(mnt)
        with pytest.raises(record_module.RecordStorageError) as caught:
            for i in range(50):
                messages = [record_module.ChatMessage("user", f"{i}" + "y" * 100_000)]
                asyncio.run(recorder.generate(messages, [], GenerateConfig()))
    assert caught.value.errno == errno.ENOSPC
    assert str(mnt / RECORD) in caught.value.strerror
