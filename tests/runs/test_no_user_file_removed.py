"""No flag removes a user's file (issue 22): ``allo run --overwrite``, ``allo sweep
--overwrite`` and ``econbench sweep --force`` remove only what the run layer wrote in a run or
cell directory, never follow a link, and refuse (one line, before anything is touched) a
directory that is not a run; ``coffee run --seeds … --overwrite`` refuses such a directory
before the first seed plays."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs.lock import RunLock

cli = CliRunner()
ALLO_RUN = ["allo", "run", "--framing", "r1", "--policy", "eager", "--episodes", "1", "--quiet"]
ALLO_SWEEP = [
    *["allo", "sweep", "--framings", "r1", "--policies", "eager,wait:2"],
    *["--budgets", "3", "--costs", "0", "--episodes", "1", "--quiet"],
]
CELLS = ("r1-eager-k0-b3", "r1-wait-2-k0-b3")
ENTRY = "roaster_A-heuristic__seed-1"


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the checkout; default outputs in tmp


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def ok(args: list[str]) -> None:
    result = cli.invoke(app, args)
    assert result.exit_code == 0, result.output


def plant_user_files(run_dir: Path, outside: Path) -> None:
    """A file of the user's in ``run_dir`` and a link from it to another one outside."""
    outside.write_text("precious\n")
    (run_dir / "notes.txt").write_text("my notes\n")
    (run_dir / "outside-link").symlink_to(outside)


def assert_user_files_kept(run_dir: Path, outside: Path) -> None:
    assert (run_dir / "notes.txt").read_text() == "my notes\n"
    link = run_dir / "outside-link"
    assert link.is_symlink() and os.readlink(link) == str(outside)
    assert outside.read_text() == "precious\n"  # the link's target: untouched


def experiment(path: Path, days: int) -> Path:
    path.write_text(
        f'name = "tiny"\nbenchmark = "coffee"\nseeds = [1]\ndays = {days}\n'
        '[matrix]\nroaster_A = ["heuristic"]\n'
    )
    return path


def sweep(path: Path, out: Path, *flags: str) -> list[str]:
    return ["sweep", str(path), "--out", str(out), "--backend", "inline", "--workers", "1", *flags]


def actions(sweep_dir: Path) -> dict[str, str]:
    summary = json.loads((sweep_dir / "sweep_summary.json").read_text())
    return {e["id"]: e["action"] for e in summary["entries"]}


# --------------------------------------------------------------------------- AlloBench


def test_allo_run_overwrite_keeps_the_users_files_in_the_cell(tmp_path: Path) -> None:
    cell = tmp_path / "cell"
    ok([*ALLO_RUN, "--out", str(cell)])
    plant_user_files(cell, tmp_path / "outside.txt")
    ok([*ALLO_RUN, "--out", str(cell), "--overwrite"])
    assert_user_files_kept(cell, tmp_path / "outside.txt")
    assert json.loads((cell / "summary.json").read_text())["status"] == "completed"


def test_allo_sweep_overwrite_starts_cells_over_but_keeps_the_users_files(tmp_path) -> None:
    out = tmp_path / "sweep"
    ok([*ALLO_SWEEP, "--out", str(out)])
    cell = out / CELLS[0]
    plant_user_files(cell, tmp_path / "outside.txt")
    ok([*ALLO_SWEEP, "--out", str(out), "--overwrite"])
    assert_user_files_kept(cell, tmp_path / "outside.txt")
    assert actions(out) == dict.fromkeys(CELLS, "started")  # played again, not skipped
    assert len((cell / "episodes.jsonl").read_text().splitlines()) == 1


def test_allo_sweep_overwrite_refuses_a_folder_that_is_not_a_cell(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    folder = out / CELLS[1]
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("my notes\n")
    line = one_error_line(cli.invoke(app, [*ALLO_SWEEP, "--out", str(out), "--overwrite"]))
    assert "not a run directory" in line
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_allo_sweep_overwrite_touches_no_cell_when_one_is_refused(tmp_path: Path) -> None:
    """Every cell is checked before any is cleared: one held by another process refuses
    them all, and the others keep their episodes."""
    out = tmp_path / "sweep"
    ok([*ALLO_SWEEP, "--out", str(out)])
    first = sorted(p.name for p in (out / CELLS[0]).iterdir())
    with RunLock(out / CELLS[1]):
        line = one_error_line(cli.invoke(app, [*ALLO_SWEEP, "--out", str(out), "--overwrite"]))
    assert "another process" in line
    assert sorted(p.name for p in (out / CELLS[0]).iterdir()) == first
    assert json.loads((out / CELLS[0] / "summary.json").read_text())["status"] == "completed"


# --------------------------------------------------------------------------- econbench sweep


def test_sweep_force_restarts_a_changed_run_but_keeps_the_users_files(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    ok(sweep(experiment(tmp_path / "e.toml", days=2), out, "--quiet"))
    run = out / "runs" / ENTRY
    plant_user_files(run, tmp_path / "outside.txt")
    ok(sweep(experiment(tmp_path / "e.toml", days=3), out, "--quiet", "--force"))
    assert_user_files_kept(run, tmp_path / "outside.txt")
    assert json.loads((run / "summary.json").read_text())["days"] == 3
    assert actions(out) == {ENTRY: "started"}


def test_sweep_force_refuses_a_changed_entry_that_is_not_a_run(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    ok(sweep(experiment(tmp_path / "e.toml", days=2), out, "--quiet"))
    run = out / "runs" / ENTRY
    for path in run.iterdir():  # the run's files gone: only someone's own are left
        path.unlink()
    (run / "notes.txt").write_text("my notes\n")
    result = cli.invoke(app, sweep(experiment(tmp_path / "e.toml", days=3), out, "--force"))
    line = one_error_line(result)
    assert f"cannot start {run} again" in line and "not a run directory" in line
    assert [p.name for p in run.iterdir()] == ["notes.txt"]
    assert json.loads((out / "sweep.json").read_text())["entries"][0]["config"]["days"] == 2


def test_sweep_force_does_not_follow_a_symlinked_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    ok(sweep(experiment(tmp_path / "e.toml", days=2), out, "--quiet"))
    run = out / "runs" / ENTRY
    elsewhere = tmp_path / "elsewhere"
    run.rename(elsewhere)
    run.symlink_to(elsewhere, target_is_directory=True)
    before = sorted(p.name for p in elsewhere.iterdir())
    result = cli.invoke(app, sweep(experiment(tmp_path / "e.toml", days=3), out, "--force"))
    assert "symbolic link" in one_error_line(result)
    assert run.is_symlink() and sorted(p.name for p in elsewhere.iterdir()) == before


# --------------------------------------------------------------------------- coffee --seeds


@pytest.mark.parametrize("kind", ["folder", "link"])
def test_seeds_overwrite_refuses_a_seed_directory_before_any_seed_runs(
    tmp_path: Path, kind: str
) -> None:
    """``--overwrite`` replaces runs only: a seed directory that is not one (or a symlink to
    one) is refused up front, not after the seeds before it have played."""
    out = tmp_path / "many"
    seed_1 = out / "seed_1"
    if kind == "folder":
        seed_1.mkdir(parents=True)
        (seed_1 / "notes.txt").write_text("my notes\n")
    else:
        ok(["coffee", "run", "--days", "2", "--seed", "1", "--quiet", "--out", str(tmp_path / "r")])
        out.mkdir()
        seed_1.symlink_to(tmp_path / "r", target_is_directory=True)
    args = ["coffee", "run", "--seeds", "0-1", "--days", "2", "--out", str(out), "--overwrite"]
    line = one_error_line(cli.invoke(app, args))
    assert str(seed_1) in line
    assert not (out / "seed_0").exists()  # no seed played
