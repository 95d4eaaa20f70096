"""The paper's Table 2 beside every CoffeeBench Table 2 (issue 28, item 2): the same columns,
every model and both baselines, marked as the paper's, with a note on the backgrounds; in the
Markdown, LaTeX and HTML outputs; its figures as the sources state them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from econbench.runs.coffee import paper_table2 as paper
from econbench.runs.coffee import yardstick
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.report import paper_table2, table2
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.frames import load_runs
from econbench.runs.report import write_report

DAYS = 3


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(yardstick.CACHE_ENV, str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def hardened(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hardened")
    for seed in (0, 1):
        run_to_dir(RunConfig(seed=seed, days=DAYS), root / f"h{seed}")
    return root


def test_the_sources_figures() -> None:
    rows = {row.model: row for row in paper.ROWS}
    assert rows["GPT-5.5"].net_income_mean == 3109.0  # §6: "+$3,109"
    assert rows["Claude Haiku 4.5"].net_income_mean == -630.0  # §5.2: "−$630"
    messages = {m: rows[m].messages_sent_mean for m in ("GPT-5.5", "Claude Haiku 4.5")}
    assert messages == {"GPT-5.5": 140.0, "Claude Haiku 4.5": 52.0}  # §5.1, Figure 5
    assert rows["Gemini 3.1 Pro"].messages_sent_mean == 16.0
    assert rows["Kimi K2.6"].messages_sent_mean == 14.0
    assert rows["PassiveRoaster"].net_income_mean == -2764.0  # reference: "~ -$2,764"
    assert [r.model for r in paper.ROWS][-2:] == ["PassiveRoaster", "HeuristicRoaster"]
    assert len(paper.ROWS) == 9  # seven models and two baselines (§4)
    assert all(row.source for row in paper.ROWS)
    assert paper.BACKGROUND == "anthropic/claude-sonnet-4-6"


def test_it_stands_beside_hardened_runs_with_table2s_columns(hardened: Path) -> None:
    runs = load_runs([hardened])
    mine, theirs = table2(runs), paper_table2(runs)
    assert mine is not None and theirs is not None
    assert list(theirs.display.columns) == list(mine.display.columns)
    assert list(mine.display["background"]) == ["bargaining"]
    shown = theirs.display.set_index("configuration")
    assert {"the paper: PassiveRoaster", "the paper: HeuristicRoaster"} <= set(shown.index)
    assert shown.loc["the paper: GPT-5.5", "net income ($)"] == "3,109.00"
    assert shown.loc["the paper: PassiveRoaster", "net income ($)"] == "-2,764.00 ± 0.00"
    assert set(shown["background"]) == {paper.BACKGROUND_TEXT}
    assert set(theirs.data["origin"]) == {"paper"} and set(theirs.data["days"]) == {90}
    assert theirs.breaks == [7]  # a rule between the models and the baselines
    note = next(n for n in theirs.notes if "Your runs" in n)
    assert "bargaining" in note and "not the paper's" in note


def test_a_run_on_the_papers_background_is_told_it_compares(tmp_path: Path) -> None:
    config = RunConfig(days=DAYS, condition="paper", agents={"default": "passive"})
    run_to_dir(config, tmp_path / "run")
    runs = load_runs([tmp_path / "run"])
    theirs = paper_table2(runs)
    assert theirs is not None
    assert "passive" in next(n for n in theirs.notes if "Your runs" in n)
    assert theirs.display["condition"].eq("paper").all()  # as Table 2's condition column


def test_markdown_latex_csv_and_html_carry_it(hardened: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    write_report([hardened], out)
    md = (out / "paper_table2.md").read_text(encoding="utf-8")
    assert "| the paper: GPT-5.5 |" in md and "3,109.00" in md and "Claude Sonnet 4.6" in md
    tex = (out / "paper_table2.tex").read_text(encoding="utf-8")
    assert "the paper: PassiveRoaster" in tex and r"-2,764.00 $\pm$ 0.00" in tex
    with (out / "paper_table2.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["origin"] for r in rows} == {"paper"} and len(rows) == len(paper.ROWS)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert (
        page.index('id="table2"') < page.index('id="paper_table2"') < page.index('id="yardstick"')
    )
    assert "the paper: HeuristicRoaster" in page
