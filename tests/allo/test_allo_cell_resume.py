"""AlloBench cells in an existing directory: ``allo run --out D`` over a killed cell keeps its
finished (paid) episodes byte for byte and plays only the missing ones; ``--overwrite``
starts over; a cell's checkpoint, config and episodes cannot be edited behind its back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.allo.episodes import runner as runner_module
from econbench.cli import app
from econbench.runs.allo import cell as cell_module

RUN = ["allo", "run", "--framing", "r1", "--policy", "wait:2", "--seeds", "2000-2007"]
cli = CliRunner()


class Crash(BaseException):
    """Stands for the process dying: nothing catches it."""


def count_plays(monkeypatch, crash_at: int | None = None) -> dict[str, int]:
    """Count the episodes played from now on; die while playing the ``crash_at``-th."""
    original = runner_module.play_episode
    count = {"n": 0}

    def play_episode(*args, **kwargs):
        count["n"] += 1
        if count["n"] == crash_at:
            raise Crash
        return original(*args, **kwargs)

    monkeypatch.setattr(runner_module, "play_episode", play_episode)
    return count


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("allo") / "cell"
    result = cli.invoke(app, [*RUN, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def killed_template(tmp_path_factory) -> Path:
    """The cell killed while playing its 5th episode (4 finished)."""
    out = tmp_path_factory.mktemp("killed") / "cell"
    mp = pytest.MonkeyPatch()
    try:
        count_plays(mp, crash_at=5)
        with pytest.raises(Crash):
            cli.invoke(app, [*RUN, "--out", str(out)])
    finally:
        mp.undo()
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 4
    return out


@pytest.fixture()
def killed(tmp_path, killed_template) -> Path:
    out = tmp_path / "cell"
    shutil.copytree(killed_template, out)
    return out


def same_cell(a: Path, b: Path) -> None:
    for name in ("episodes.jsonl", "summary.json", "config.json", "checkpoint.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


# -- allo run over an existing cell ---------------------------------------------------------


def test_a_rerun_continues_a_killed_cell(killed, reference, monkeypatch) -> None:
    finished = (killed / "episodes.jsonl").read_bytes()
    plays = count_plays(monkeypatch)
    result = cli.invoke(app, [*RUN, "--out", str(killed)])
    assert result.exit_code == 0, result.output
    assert plays["n"] == 4, "only the four missing episodes are played"
    assert (killed / "episodes.jsonl").read_bytes().startswith(finished)
    same_cell(killed, reference)


def test_overwrite_starts_the_cell_over(killed, reference, monkeypatch) -> None:
    plays = count_plays(monkeypatch)
    result = cli.invoke(app, [*RUN, "--out", str(killed), "--overwrite"])
    assert result.exit_code == 0, result.output
    assert plays["n"] == 8
    same_cell(killed, reference)


def test_a_rerun_over_a_completed_cell_plays_nothing(tmp_path, reference, monkeypatch) -> None:
    out = tmp_path / "cell"
    shutil.copytree(reference, out)
    plays = count_plays(monkeypatch)
    result = cli.invoke(app, [*RUN, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert plays["n"] == 0
    same_cell(out, reference)


def test_other_settings_over_a_cell_are_refused(killed) -> None:
    before = (killed / "episodes.jsonl").read_bytes()
    result = cli.invoke(app, [*RUN, "--cost", "10", "--out", str(killed)])
    assert result.exit_code == 2, result.output
    line = one_error_line(result)
    assert "cost: 0.0 → 10.0" in line and "--overwrite" in line
    assert (killed / "episodes.jsonl").read_bytes() == before


def test_a_directory_of_other_files_is_refused(tmp_path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result = cli.invoke(app, [*RUN, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "not an AlloBench cell" in one_error_line(result)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_killed_sweep_continues_its_cells(tmp_path, monkeypatch) -> None:
    sweep = ["allo", "sweep", "--framings", "r0", "--policies", "eager", "--budgets", "1,3"]
    sweep += ["--costs", "0", "--seeds", "2000-2003", "--out", str(tmp_path / "s")]
    with monkeypatch.context() as m:
        count_plays(m, crash_at=6)  # the 2nd cell's 2nd episode
        with pytest.raises(Crash):
            cli.invoke(app, sweep)
    first = (tmp_path / "s" / "r0-eager-k0-b1" / "episodes.jsonl").read_bytes()
    plays = count_plays(monkeypatch)
    result = cli.invoke(app, sweep)
    assert result.exit_code == 0, result.output
    assert plays["n"] == 3
    assert (tmp_path / "s" / "r0-eager-k0-b1" / "episodes.jsonl").read_bytes() == first


# -- the cell's checkpoint ------------------------------------------------------------------


def refuse(out: Path, *fragments: str, args: tuple[str, ...] = ()) -> None:
    episodes = (out / "episodes.jsonl").read_bytes() if (out / "episodes.jsonl").exists() else b""
    result = cli.invoke(app, ["resume", str(out), "--quiet", *args])
    assert result.exit_code == 2, result.output
    line = one_error_line(result)
    for fragment in fragments:
        assert fragment in line, line
    if (out / "episodes.jsonl").exists():
        assert (out / "episodes.jsonl").read_bytes() == episodes


def test_resume_of_the_killed_cell_matches_the_reference(killed, reference) -> None:
    result = cli.invoke(app, ["resume", str(killed), "--quiet"])
    assert result.exit_code == 0, result.output
    same_cell(killed, reference)


def test_an_edited_cell_config_is_refused(killed) -> None:
    config = json.loads((killed / "config.json").read_text())
    config["cost"] = 10.0
    (killed / "config.json").write_text(json.dumps(config, indent=2))
    refuse(killed, "config.json", "cost: 0.0 → 10.0")


def test_an_edited_episode_is_refused(killed) -> None:
    path = killed / "episodes.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["utility"] += 5
    lines[1] = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()
    path.write_bytes(b"".join(lines))
    refuse(killed, "episodes.jsonl", "changed after they were written")


def test_a_garbage_line_after_the_checkpoint_is_refused(killed) -> None:
    with (killed / "episodes.jsonl").open("a") as fh:
        fh.write("{not an episode}\n")
    refuse(killed, "episodes.jsonl line 5", "not an episode record")


def test_episodes_appended_behind_the_checkpoint_are_refused(killed, reference) -> None:
    extra = (reference / "episodes.jsonl").read_text().splitlines(keepends=True)[4:6]
    with (killed / "episodes.jsonl").open("a") as fh:
        fh.writelines(extra)
    refuse(killed, "2 episodes written after its checkpoint")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{torn", "not valid JSON"),
        ('{"schema": 2, "benchmark": "coffee"}', "'coffee' run"),
        ('{"schema": 2, "benchmark": "allo", "digest": "x"}', "integrity"),
    ],
)
def test_a_damaged_cell_checkpoint_is_one_line(killed, content, fragment) -> None:
    (killed / "checkpoint.json").write_text(content)
    refuse(killed, "checkpoint.json", fragment)


def test_a_deleted_episodes_file_is_refused(killed) -> None:
    (killed / "episodes.jsonl").unlink()
    refuse(killed, "episodes.jsonl", "missing")


def test_a_missing_checkpoint_needs_force_to_trust_the_episodes(killed, reference) -> None:
    (killed / "checkpoint.json").unlink()
    refuse(killed, "checkpoint.json is missing", "--force")
    result = cli.invoke(app, ["resume", str(killed), "--quiet", "--force"])
    assert result.exit_code == 0, result.output
    assert (killed / "episodes.jsonl").read_bytes() == (reference / "episodes.jsonl").read_bytes()


def test_a_cell_killed_before_its_first_checkpoint_resumes_from_the_start(
    tmp_path, reference, monkeypatch
) -> None:
    out = tmp_path / "cell"
    with monkeypatch.context() as m:
        m.setattr(cell_module, "write_checkpoint", lambda *a, **k: (_ for _ in ()).throw(Crash))
        with pytest.raises(Crash):
            cli.invoke(app, [*RUN, "--out", str(out)])
    assert not (out / "checkpoint.json").exists()
    assert (out / "episodes.jsonl").read_bytes() == b""
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    same_cell(out, reference)


def test_an_episode_written_just_before_the_kill_is_kept(tmp_path, reference, monkeypatch):
    """Killed after an episode's line reached the file but before the checkpoint sealed it:
    the paid episode is kept, not played again."""
    out = tmp_path / "cell"
    original = cell_module.write_checkpoint
    calls = {"n": 0}

    def write_checkpoint(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:  # the start, episodes 1 and 2 sealed; episode 3 written
            raise Crash
        return original(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(cell_module, "write_checkpoint", write_checkpoint)
        with pytest.raises(Crash):
            cli.invoke(app, [*RUN, "--out", str(out)])
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 3
    plays = count_plays(monkeypatch)
    result = cli.invoke(app, ["resume", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert plays["n"] == 5
    same_cell(out, reference)
