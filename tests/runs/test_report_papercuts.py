"""The report's paper cuts (issue 28, items 3, 9 and 11): the yardstick beside Table 2, a dash
for the LLM cost of configurations no model played, an idle-day figure that says "no idle
days", figures that never set runs of different lengths on one set of axes, and a command that
prints a summary instead of every path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs.coffee import figures, yardstick
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.report import table2, table2_firms, yardstick_table
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.frames import load_runs
from econbench.runs.report import build_report, write_report

runner = CliRunner()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(yardstick.CACHE_ENV, str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scripted and passive roaster_A, seeds 0–1, 4 days; and scripted over 3 days."""
    base = tmp_path_factory.mktemp("runs")
    for roaster in ("scripted", "passive"):
        for seed in (0, 1):
            config = RunConfig(seed=seed, days=4, agents={"roaster_A": roaster})
            run_to_dir(config, base / f"{roaster}-{seed}")
    run_to_dir(RunConfig(days=3, agents={"roaster_A": "scripted"}), base / "short")
    return base


def by_label(table: Any) -> dict[str, dict[str, Any]]:
    return {row["configuration"]: row for row in table.display.to_dict("records")}


def test_the_yardstick_stands_beside_table2(root: Path) -> None:
    runs = load_runs([root])
    table = yardstick_table(runs)
    assert table is not None
    data = table.data.set_index("configuration")
    scripted = data.loc["roaster_A=scripted days=4"]
    measured = yardstick.measure(RunConfig(days=4), [0, 1])
    assert scripted["passive_floor"] == pytest.approx(measured.passive_mean)
    assert scripted["heuristic_mean"] == pytest.approx(measured.heuristic_mean)
    mean = (
        sum(
            json.loads((root / f"scripted-{s}" / "summary.json").read_text())["firms"]["roaster_A"][
                "net_income"
            ]
            for s in (0, 1)
        )
        / 2
    )
    assert scripted["net_income_mean"] == pytest.approx(mean)
    assert scripted["vs_heuristic"] == pytest.approx(mean - measured.heuristic_mean)
    assert scripted["headroom"] == pytest.approx(measured.bound - mean)
    passive = data.loc["roaster_A=passive days=4"]
    assert passive["vs_passive"] == pytest.approx(0.0)  # the floor is its own run
    names = [t.name for t in build_report(runs).tables]
    assert names.index("yardstick") == names.index("paper_table2") + 1


def test_a_model_background_gets_a_dash_and_a_reason(root: Path, tmp_path: Path) -> None:
    run = tmp_path / "model-background"
    shutil.copytree(root / "scripted-0", run)
    config = json.loads((run / "config.json").read_text())
    config["agents"]["default"] = "openai/gpt-x"
    (run / "config.json").write_text(json.dumps(config))
    table = yardstick_table(load_runs([run]))
    assert table is not None
    [shown] = table.display.to_dict("records")
    assert shown["passive floor ($)"] == "–" and shown["headroom ($)"] == "–"
    assert any("played by a model" in note for note in table.notes)


def test_no_model_no_cost_but_an_unpriced_model_stays_na(root: Path, tmp_path: Path) -> None:
    runs = load_runs([root])
    shown = by_label(table2(runs))
    assert {row["LLM cost (USD)"] for row in shown.values()} == {"–"}
    assert table2(runs).data["llm_cost_usd_mean"].eq(0.0).all()  # the CSV keeps the number
    firms = table2_firms(runs)
    assert set(firms.display["LLM cost (USD)"]) == {"–"}
    priced = shutil.copytree(root / "scripted-0", tmp_path / "model")
    summary = json.loads((priced / "summary.json").read_text())
    summary["firms"]["roaster_A"].update(policy="openai/gpt-x", llm_calls=12, cost_usd=0.5)
    (priced / "summary.json").write_text(json.dumps(summary))
    [row] = table2(load_runs([priced])).display.to_dict("records")
    assert row["LLM cost (USD)"] == "0.50"


def test_table2_says_which_background_and_horizon(root: Path) -> None:
    table = table2(load_runs([root]))
    shown = by_label(table)
    assert shown["roaster_A=scripted days=4"]["background"] == "bargaining"
    assert shown["roaster_A=scripted days=3"]["days"] == "3"
    assert any("3 and 4 days" in note for note in table.notes)


def test_an_idle_figure_says_no_idle_days(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    real = figures.no_idle_figure
    monkeypatch.setattr(
        figures, "no_idle_figure", lambda label, text: said.append(label) or real(label, text)
    )
    runs = load_runs([root])
    scripted = [r for r in runs if r.label == "roaster_A=scripted days=4"]
    passive = [r for r in runs if r.label == "roaster_A=passive days=4"]
    assert all(
        json.loads((r.path / "summary.json").read_text())["firms"]["roaster_A"]["idle_days"] == 0
        for r in scripted
    )
    assert figures.idle_timeline("scripted", scripted, tmp_path / "a.png") is not None
    assert said == ["scripted"]
    assert figures.idle_timeline("passive", passive, tmp_path / "b.png") is not None
    assert said == ["scripted"]  # a passive roaster_A is idle every day: the grid is drawn
    fig = real("x", "2 seeds, 4 days")
    assert figures.NO_IDLE_TEXT in [t.get_text() for ax in fig.axes for t in ax.texts]


def test_figures_never_pool_runs_of_different_lengths(root: Path, tmp_path: Path) -> None:
    written = {p.name for p in write_report([root], tmp_path / "report")}
    assert {"figure3_3d.png", "figure3_4d.png", "tool_calls_3d.png"} <= written
    assert "figure3.png" not in written
    groups = {"a": load_runs([root / "scripted-0"]), "b": load_runs([root / "short"])}
    assert figures.horizon_text(groups["a"] + groups["b"]) == "runs of 3 and 4 days pooled"
    fig = figures.draw_figure3({"a": groups["a"]})
    assert fig is not None and "4 days" in fig.axes[0].get_title()
    one = write_report([root / "scripted-0", root / "scripted-1"], tmp_path / "one")
    assert "figure3.png" in {p.name for p in one}  # one horizon: named as before


def test_the_command_prints_a_summary_not_every_path(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = runner.invoke(app, ["report", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "CoffeeBench: 5 run(s) in the tables, 0 left out; 3 configuration(s)" in text
    assert "roaster_A=scripted days=4" in text and "vs heuristic" in text
    tables = len(list(out.glob("*.md")))
    pngs = len(list((out / "figures").glob("*.png")))
    assert f"Wrote {out}: index.html, {tables} table(s)" in " ".join(text.split())
    assert f"{pngs} figure(s)" in text
    assert str(out / "table2.csv") not in text and "…" not in text
    verbose = runner.invoke(app, ["report", str(root), "--out", str(out), "-v"])
    assert str(out / "table2.csv") in verbose.stdout
