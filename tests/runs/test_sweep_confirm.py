"""Sweeps say how big they are before they start, ask above a threshold, render their notes'
markup, and close with tables that fit 80 columns (issue 28, items 6 to 9)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs.experiment import load_plan
from econbench.runs.limits import CONFIRM_ABOVE
from econbench.runs.store import write_json
from econbench.runs.sweep import (
    EntryState,
    SweepDisplay,
    SweepError,
    SweepResult,
    plan_outline,
    results_table,
)
from econbench.runs.sweep_cli import confirm_size

runner = CliRunner()


def rendered(renderable: object, width: int = 80, terminal: bool = False) -> str:
    console = Console(width=width, file=io.StringIO(), force_terminal=terminal, record=True)
    console.print(renderable)
    return console.export_text()


# --------------------------------------------------------------------------- the grid's size


def test_a_big_allo_grid_needs_yes_off_a_terminal(tmp_path) -> None:
    out = tmp_path / "sweep"
    result = runner.invoke(app, ["allo", "sweep", "--framings", "r0,r1", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "48 cells: framing (2) × policy (2)" in result.output  # shown before the refusal
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "--yes" in errors[0] and "48 cells" in errors[0]
    assert not out.exists()


def test_a_grid_within_the_threshold_runs_and_says_its_size(tmp_path) -> None:
    out = tmp_path / "sweep"
    args = ["allo", "sweep", "--policies", "eager", "--budgets", "3", "--costs", "0,10"]
    result = runner.invoke(app, [*args, "--episodes", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 cells: framing = r0 × policy = eager" in result.output
    assert "cost (2)" in result.output


def test_yes_runs_a_big_grid(tmp_path) -> None:
    out = tmp_path / "sweep"
    args = ["allo", "sweep", "--policies", "eager", "--budgets", "1,2,3,4,5"]
    args += ["--costs", "0,1,2,3,4", "--episodes", "1", "--out", str(out)]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and not out.exists()
    result = runner.invoke(app, [*args, "--yes"])
    assert result.exit_code == 0, result.output
    assert "wrote 25 cells" in result.output


def plan_of(tmp_path: Path, count: int):
    path = tmp_path / "e.toml"
    seeds = ", ".join(str(s) for s in range(count))
    path.write_text(
        f'name = "big"\nbenchmark = "coffee"\nseeds = [{seeds}]\ndays = 3\n'
        '[matrix]\nroaster_A = ["heuristic"]\n'
    )
    return load_plan(path, check=False)


def test_confirm_asks_on_a_terminal_and_a_no_starts_nothing(tmp_path, monkeypatch) -> None:
    plan = plan_of(tmp_path, CONFIRM_ABOVE + 1)
    answers: list[str] = []

    def say_no(text: str, **_: object) -> bool:
        answers.append(text)
        return False

    monkeypatch.setattr("typer.confirm", say_no)
    with pytest.raises(SweepError, match="not confirmed"):
        confirm_size(plan, "run", yes=False, interactive=True)
    assert answers == [f"Run all {CONFIRM_ABOVE + 1} runs?"]
    monkeypatch.setattr("typer.confirm", lambda text, **_: True)
    confirm_size(plan, "run", yes=False, interactive=True)  # a yes goes on
    confirm_size(plan, "run", yes=True, interactive=False)
    confirm_size(plan_of(tmp_path, CONFIRM_ABOVE), "run", yes=False, interactive=False)
    with pytest.raises(SweepError, match="--yes"):
        confirm_size(plan, "run", yes=False, interactive=False)


def test_the_outline_names_every_axis(tmp_path) -> None:
    assert plan_outline(plan_of(tmp_path, 3), "run") == "3 runs: roaster_A = heuristic × seed (3)"


def test_econbench_sweep_says_its_size_before_it_runs(tmp_path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(
        'name = "two"\nbenchmark = "coffee"\nseeds = [1]\ndays = 3\n'
        '[matrix]\nroaster_A = ["heuristic", "scripted"]\n'
    )
    args = ["sweep", str(path), "--out", str(tmp_path / "s"), "--backend", "inline"]
    result = runner.invoke(app, [*args, "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "2 runs: roaster_A (2) × seed = 1" in result.output


# --------------------------------------------------------------------------- display


@pytest.mark.parametrize("terminal", [False, True])
def test_notes_render_their_markup_and_quote_what_they_show(terminal: bool) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=terminal, width=120)
    display = SweepDisplay(console, "s", 1, None, quiet=False)
    display.note("[green]done[/] run-[1]")
    display.note("[x] plain, as it is", markup=False)
    text = buffer.getvalue()
    assert "[green]" not in text and "[/]" not in text
    assert "done" in text and "[x] plain" in text
    if not terminal:
        assert "\x1b[" not in text  # no styles in a log file


def test_the_driver_quotes_run_ids_and_errors() -> None:
    """A run id or error with brackets shows as written, never as markup."""
    from econbench.runs.sweep import SweepOptions, _Driver
    from econbench.runs.worker import Outcome

    buffer = io.StringIO()
    display = SweepDisplay(Console(file=buffer, width=200), "s", 1, None, quiet=False)
    state = EntryState("run[bold]x", "l", Path("/nonexistent"), status="running", attempts=1)
    result = SweepResult("s", "coffee", Path("/nonexistent"), [state], None)
    driver = _Driver(result, SweepOptions(out=Path("/nonexistent"), retries=0), display, list)
    driver.finish(state, Outcome(1, "failed", "boom [red]x[/red]"))
    text = buffer.getvalue()
    assert "run[bold]x" in text and "boom [red]x[/red]" in text and "failed" in text


# --------------------------------------------------------------------------- closing tables


def coffee_run(run_dir: Path, net: float, revenue: float) -> None:
    run_dir.mkdir(parents=True)
    firms = {"roaster_A": {"net_income": net, "revenue": revenue}, "roaster_B": {}}
    write_json(run_dir / "summary.json", {"status": "completed", "firms": firms})


def test_the_coffee_closing_table_shows_net_income_and_fits_80_columns(tmp_path) -> None:
    names = ["roaster_A-anthropic-claude-sonnet-4-6__background-bargaining__seed-12", "b"]
    figures = [(-2_123_456.78, 9_876_543.21), (3_109.5, 23_800.0)]
    states = []
    for name, (net, revenue) in zip(names, figures, strict=True):
        coffee_run(tmp_path / name, net, revenue)
        state = EntryState(name, name, tmp_path / name, status="completed", cost_usd=1234.5678)
        state.progress = {"done": 90, "total": 90, "unit": "day"}
        states.append(state)
    states.append(EntryState("c", "c", tmp_path / "c", status="not_started"))
    result = SweepResult("study", "coffee", tmp_path, states, None)
    text = rendered(results_table(result))
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "…" not in text
    for figure in ("-2,123,456.78", "9,876,543.21", "3,109.50", "23,800.00", "1,234.57"):
        assert figure in text
    assert "net inc. $" in text and "roaster_A" in text


def test_an_allo_closing_table_fits_80_columns(tmp_path) -> None:
    from econbench.runs.allo.cli import _sweep_table

    row = {
        "framing": "r2",
        "policy": "openai-compatible/Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
        "budget": 3,
        "build_cost": 24.0,
        "score": -0.2614,
        "first_sight_rate": 1.0,
        "utility_mean": -123.456,
        "opt_mean": 58.0,
        "unresolved_turns": 12,
    }
    text = rendered(_sweep_table([row], "AlloBench sweep"))
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "…" not in text
    for figure in ("-0.261", "-123.5", "58.0", "24", "12"):
        assert figure in text
