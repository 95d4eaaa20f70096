"""Run directories: ``--overwrite`` replaces a run's own files and nothing else, a refused
start leaves nothing behind, and a directory that cannot hold a run (a ``.lock`` that is not
a lock file, a read-only mount) is one error line, never a traceback (issue 22, items 6, 8
and 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.allo.episodes.runner import CellSpec
from econbench.cli import app
from econbench.runs.allo.cell import run_cell
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.lock import RunLock
from econbench.runs.store import RunDirError

cli = CliRunner()
COFFEE = ["coffee", "run", "--days", "2", "--seed", "1", "--quiet"]
ALLO = ["allo", "run", "--framing", "r1", "--policy", "eager", "--episodes", "1", "--quiet"]
USER_FILES = {"notes.txt": "my notes\n", "config.json": '{"mine": true}\n', "data.csv": "a,b\n"}


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def user_folder(path: Path) -> Path:
    """A folder of someone's own files (one of them named like a run's config)."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in USER_FILES.items():
        (path / name).write_text(text)
    return path


def assert_untouched(path: Path) -> None:
    assert sorted(p.name for p in path.iterdir()) == sorted(USER_FILES)
    for name, text in USER_FILES.items():
        assert (path / name).read_text() == text


def a_run(out: Path) -> Path:
    run_to_dir(RunConfig(days=2, seed=1), out)
    return out


# --------------------------------------------------------------------------- --overwrite


@pytest.mark.parametrize("command", [COFFEE, ALLO], ids=["coffee", "allo"])
def test_overwrite_refuses_a_folder_that_is_not_a_run(tmp_path, command) -> None:
    folder = user_folder(tmp_path / "mine")
    line = one_error_line(cli.invoke(app, [*command, "--out", str(folder), "--overwrite"]))
    assert "not a run directory" in line and "--overwrite" in line
    assert_untouched(folder)  # not one file removed or written, no .lock either


def test_without_overwrite_a_lone_config_json_is_not_taken_for_a_killed_run(tmp_path) -> None:
    """A folder holding only someone's ``config.json`` looked like a run killed while it
    started, and a plain ``coffee run`` replaced the file."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "config.json").write_text('{"mine": true}\n')
    line = one_error_line(cli.invoke(app, [*COFFEE, "--out", str(folder)]))
    assert "already holds files" in line
    assert (folder / "config.json").read_text() == '{"mine": true}\n'
    assert sorted(p.name for p in folder.iterdir()) == ["config.json"]


def test_overwrite_of_a_run_removes_only_its_own_files(tmp_path) -> None:
    run = a_run(tmp_path / "run")
    (run / "notes.md").write_text("what I saw\n")
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (run / "daily.jsonl").unlink()
    (run / "daily.jsonl").symlink_to(precious)  # a link is removed, never followed
    result = cli.invoke(app, [*COFFEE, "--out", str(run), "--overwrite"])
    assert result.exit_code == 0, result.output
    assert (run / "notes.md").read_text() == "what I saw\n"
    assert precious.read_text() == "keep me\n"
    assert not (run / "daily.jsonl").is_symlink() and (run / "daily.jsonl").stat().st_size > 0
    assert json.loads((run / "summary.json").read_text())["status"] == "completed"


def test_overwrite_does_not_follow_a_symlinked_run_directory(tmp_path) -> None:
    run = a_run(tmp_path / "run")
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    link = tmp_path / "link"
    link.symlink_to(run)
    line = one_error_line(cli.invoke(app, [*COFFEE, "--out", str(link), "--overwrite"]))
    assert "symbolic link" in line and str(run) in line
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before


def test_an_allo_overwrite_replaces_the_old_record_too(tmp_path) -> None:
    """A cell started over with --overwrite kept the old ``record.sqlite`` and recorded its
    new calls into it, mixing two cells' calls."""
    out = tmp_path / "cell"
    run_cell(CellSpec(framing="r1", policy="eager", seeds=(2000,)), out)
    (out / "record.sqlite").write_bytes(b"an old cell's record")
    result = cli.invoke(app, [*ALLO, "--out", str(out), "--overwrite"])
    assert result.exit_code == 0, result.output
    assert not (out / "record.sqlite").exists()


def test_run_cell_refuses_to_start_in_a_folder_that_is_not_a_run(tmp_path) -> None:
    folder = user_folder(tmp_path / "mine")
    with pytest.raises(RunDirError, match="not a run directory"):
        run_cell(CellSpec(framing="r1", policy="eager", seeds=(2000,)), folder)
    assert_untouched(folder)


# --------------------------------------------------------------------------- --out ""


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["plain", "overwrite"])
@pytest.mark.parametrize("command", [COFFEE, ALLO], ids=["coffee", "allo"])
def test_a_refused_empty_out_leaves_the_working_directory_as_it_was(
    tmp_path, monkeypatch, command, overwrite
) -> None:
    """``--out ""`` is the working directory; refused there, it left a ``.lock`` behind."""
    cwd = user_folder(tmp_path / "cwd")
    monkeypatch.chdir(cwd)
    line = one_error_line(cli.invoke(app, [*command, "--out", "", *overwrite]))
    assert "current directory" in line or str(cwd) in line or " . " in line
    assert_untouched(cwd)


def test_a_start_refused_under_the_lock_removes_the_lock_file_it_made(tmp_path) -> None:
    made = RunLock(tmp_path)
    made.acquire()
    assert made.created
    made.discard()
    assert not (tmp_path / ".lock").exists()
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / ".lock").write_text("")
    found = RunLock(tmp_path / "kept")
    found.acquire()
    assert not found.created
    found.discard()
    assert (tmp_path / "kept" / ".lock").exists(), "a lock file it did not make stays"


# --------------------------------------------------------------------------- .lock


class Finished:
    """What ``one_error_line`` reads of a command run in a process of its own."""

    def __init__(self, done: subprocess.CompletedProcess) -> None:
        self.exit_code, self.stderr = done.returncode, done.stderr
        self.output = done.stdout + done.stderr


def invoke_bounded(command: list[str]) -> Finished:
    """Run the CLI in a child process that may not take more than a minute: opening a FIFO
    for reading waits for a writer forever, and a test must fail rather than hang."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "econbench.cli", *command],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`econbench {' '.join(command)}` hung on a FIFO in the lock's place")
    return Finished(done)


def interrupted_run(out: Path) -> Path:
    """A CoffeeBench run that stopped after its first checkpoint (its summary removed)."""
    a_run(out)
    (out / "summary.json").unlink()
    return out


@pytest.mark.parametrize("kind", ["directory", "symlink", "fifo"])
def test_a_lock_that_is_not_a_lock_file_is_one_line_for_every_command(tmp_path, kind) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")

    def spoil(run_dir: Path) -> None:
        lock = run_dir / ".lock"
        lock.unlink(missing_ok=True)
        if kind == "directory":
            lock.mkdir()
        elif kind == "symlink":
            lock.symlink_to(precious)  # opening it would truncate and overwrite precious
        else:
            os.mkfifo(lock)

    resumed = interrupted_run(tmp_path / "resumed")
    spoil(resumed)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    spoil(fresh)
    cell = tmp_path / "cell"
    cell.mkdir()
    spoil(cell)
    commands = [
        ["resume", str(resumed), "--quiet"],
        [*COFFEE, "--out", str(fresh)],
        [*ALLO, "--out", str(cell)],
    ]
    for command in commands:
        line = one_error_line(
            invoke_bounded(command) if kind == "fifo" else cli.invoke(app, command)
        )
        assert ".lock is a" in line and "remove it" in line, line
    assert precious.read_text() == "keep me\n"
    assert not (resumed / "summary.json").exists(), "the refused resume played nothing"


# --------------------------------------------------------------------------- read-only


@contextmanager
def tmpfs(path: Path, size: str = "32m") -> Iterator[Path]:
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


def remount_read_only(path: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)


def test_a_run_directory_on_a_read_only_mount_is_one_line(tmp_path) -> None:
    with tmpfs(tmp_path / "mnt") as mnt:
        run = interrupted_run(mnt / "run")
        (run / ".lock").unlink()  # so every command must create it
        cell = mnt / "cell"
        cell.mkdir()
        empty = mnt / "empty"
        empty.mkdir()
        remount_read_only(mnt)
        commands = [
            ["resume", str(run), "--quiet"],
            [*COFFEE, "--out", str(empty)],
            [*COFFEE, "--out", str(mnt / "new")],
            [*ALLO, "--out", str(cell)],
        ]
        for command in commands:
            line = one_error_line(cli.invoke(app, command))
            assert "read-only" in line.lower() or "not writable" in line, line
