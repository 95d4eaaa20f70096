"""``econbench allo run`` as a new user meets it: ``--tasks``, suggestions, brackets, Ctrl-C."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app

runner = CliRunner()
R0 = ["allo", "run", "--framing", "r0"]


def test_tasks_makes_bayes_exact_playable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*R0, "--policy", "bayes:exact", "--tasks", "8", "--episodes", "2"])
    assert result.exit_code == 0, result.output
    cell = Path("runs/allo/r0-bayes-exact-k0-b3-t8")  # -t8: never the 60-task cell's dir
    config = json.loads((cell / "config.json").read_text())
    assert config["stream_config"]["n_tasks"] == 8
    episodes = [json.loads(line) for line in (cell / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2
    summary = json.loads((cell / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["opt_mean"] > 0
    again = runner.invoke(app, [*R0, "--policy", "bayes:exact", "--tasks", "8", "--episodes", "2"])
    assert again.exit_code == 0, again.output  # the same cell: continued, not refused


def test_the_paper_length_keeps_the_cell_name(tmp_path: Path) -> None:
    out = tmp_path / "cells"
    result = runner.invoke(
        app, [*R0, "--policy", "eager", "--tasks", "60", "--episodes", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text())
    assert config["stream_config"]["n_tasks"] == 60


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--policy", "bayes:exact"], "--tasks 40"),
        (["--policy", "eager", "--tasks", "0"], "--tasks must be at least 1"),
        (["--policy", "bayes:exact", "--tasks", "41"], "only tractable up to 40 tasks"),
        (["--policy", "eagr"], "unknown policy spec 'eagr' (did you mean 'eager'?)"),
        (["--policy", "hindsigt"], "(did you mean 'hindsight'?)"),
        (["--policy", "antropic/claude-x"], "(did you mean 'anthropic'?)"),
    ],
)
def test_bad_settings_name_the_fix(tmp_path: Path, args: list[str], fragment: str) -> None:
    out = tmp_path / "x"
    result = runner.invoke(app, [*R0, *args, "--episodes", "1", "--out", str(out)])
    assert result.exit_code == 2
    assert fragment in " ".join(result.output.split())
    assert not out.exists()


def test_a_framing_typo_gets_a_suggestion(tmp_path: Path) -> None:
    args = ["allo", "run", "--framing", "r00", "--policy", "eager", "--out", str(tmp_path / "x")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "unknown framing 'r00' (did you mean 'r0'?)" in result.output


def test_help_shows_brackets(tmp_path: Path) -> None:
    result = runner.invoke(app, ["allo", "run", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert '[models."provider/model"] tables' in result.output


def test_a_stopped_cell_keeps_the_brackets_of_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from econbench.runs.allo import cli as allo_cli
    from econbench.runs.allo.cell import CellStopped

    def stop(*args, **kwargs):
        raise CellStopped("the key [redacted] was refused")

    monkeypatch.setattr(allo_cli, "run_cell", stop)
    result = runner.invoke(app, [*R0, "--policy", "eager", "--out", str(tmp_path / "c")])
    assert result.exit_code == 1
    assert "the key [redacted] was refused" in result.output


def test_a_stopped_cell_is_one_line_however_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk stops the cell with one line naming the fix; Rich must not wrap it at the
    console's width (80 columns off a terminal)."""
    import errno

    from econbench.runs.allo import cell

    def full_disk(out: Path, **kwargs) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(out / "progress.json"))

    monkeypatch.setattr(cell, "write_progress", full_disk)
    out = tmp_path / "a-cell-directory-with-a-long-name-so-the-line-is-far-beyond-80-columns"
    result = runner.invoke(app, [*R0, "--policy", "eager", "--quiet", "--out", str(out)])
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("stopped: ") and line.endswith(f"`econbench resume {out}`")
    assert "No space left on device" in line and "free some disk space" in line


def test_ctrl_c_keeps_the_episodes_and_says_how_to_continue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from econbench.allo.episodes import runner as allo_runner

    real = allo_runner.play_episode
    played: list[int] = []

    def interrupt_third(*args, **kwargs):
        if len(played) == 2:
            raise KeyboardInterrupt
        played.append(1)
        return real(*args, **kwargs)

    out, whole = tmp_path / "c", tmp_path / "whole"
    args = [*R0, "--policy", "wait:2", "--episodes", "4"]
    with monkeypatch.context() as patch:
        patch.setattr(allo_runner, "play_episode", interrupt_third)
        result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 130
    text = " ".join(result.output.split())
    assert f"the episodes finished so far are kept in {out}" in text
    assert f"`econbench resume {out}`" in text
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 2
    assert runner.invoke(app, ["resume", str(out), "--quiet"]).exit_code == 0
    assert runner.invoke(app, [*args, "--out", str(whole)]).exit_code == 0
    assert (out / "episodes.jsonl").read_bytes() == (whole / "episodes.jsonl").read_bytes()


def test_bayes_is_solved_once_before_the_episodes_with_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from econbench.allo.episodes import runner as allo_runner
    from econbench.allo.solvers import bayes

    events: list[tuple[str, int, int]] = []
    real_solve, real_play = bayes.BayesSolver.solve, allo_runner.play_episode

    def solve(self, on_progress=None):
        def hear(done: int, total: int) -> None:
            events.append(("solve", done, total))
            if on_progress is not None:
                on_progress(done, total)

        return real_solve(self, hear)

    def play(*args, **kwargs):
        events.append(("episode", 0, 0))
        return real_play(*args, **kwargs)

    monkeypatch.setattr(bayes.BayesSolver, "solve", solve)
    monkeypatch.setattr(allo_runner, "play_episode", play)
    monkeypatch.setattr(bayes, "_CACHE", type(bayes._CACHE)())
    args = [*R0, "--policy", "bayes:exact", "--tasks", "7", "--cost", "1.5", "--budget", "2"]
    result = runner.invoke(app, [*args, "--episodes", "3", "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    steps = [(done, total) for kind, done, total in events if kind == "solve"]
    assert steps == [(d, 14) for d in range(15)]  # one solve: 2 passes of 7 levels, then done
    assert [kind for kind, _, _ in events] == ["solve"] * 15 + ["episode"] * 3


def test_quiet_prints_only_the_cells_directory(tmp_path: Path) -> None:
    out = tmp_path / "cell"
    args = ["allo", "run", "--framing", "r1", "--policy", "eager", "--episodes", "2"]
    result = runner.invoke(app, [*args, "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{out}\n"
    assert json.loads((out / "summary.json").read_text())["episodes"] == 2
    loud = runner.invoke(app, [*args, "--out", str(tmp_path / "loud")])
    assert loud.exit_code == 0, loud.output
    assert "wrote" in loud.stdout and loud.stdout != f"{tmp_path / 'loud'}\n"
