"""``econbench report``: the tables' numbers, the three formats, figures, index.html, the
AlloBench ladder and κ tables, partial runs and the command's error paths."""

from __future__ import annotations

import base64
import csv
import json
import math
import re
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from econbench.agents.policy import Routine, ScriptedPolicy
from econbench.agents.tools import ToolCall
from econbench.allo.episodes.runner import CellSpec
from econbench.allo.game import EpisodeResult
from econbench.allo.game.metrics import summarize
from econbench.cli import app
from econbench.runs.allo.cell import run_cell
from econbench.runs.allo.report import allo_cells, allo_episodes, kappa_table, ladder_table
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.report import score_ci, score_paired, table2, table3
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.frames import load_runs
from econbench.runs.report import build_report, ratio_se, write_report

DAYS = 8
SEEDS = (1, 2)
CONFIGS = {"scripted": "roaster_A=scripted days=8", "passive": "roaster_A=passive days=8"}
PNG = b"\x89PNG\r\n\x1a\n"
runner = CliRunner()


class Chatty(ScriptedPolicy):
    """Messages farmer_A every morning, then waits."""

    name = "chatty"

    def routine(self, observation: dict[str, Any]) -> Routine:
        yield ToolCall("send_message", {"recipient": "farmer_A", "title": "hi", "body": "."})
        yield ToolCall("wait_for_next_day")


def coffee_run(out: Path, seed: int, roaster: str, **kw: Any) -> Path:
    config = RunConfig(seed=seed, days=DAYS, agents={"default": "bargaining", "roaster_A": roaster})
    run_to_dir(config, out, **kw)
    return out


@pytest.fixture(scope="module")
def coffee_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 configurations × 2 seeds of 8-day runs."""
    root = tmp_path_factory.mktemp("coffee")
    for roaster in CONFIGS:
        for seed in SEEDS:
            coffee_run(root / f"{roaster}-{seed}", seed, roaster)
    return root


@pytest.fixture(scope="module")
def allo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small κ sweep: eager and wait:2 on r0, B = 3, K ∈ {0, 10}, 6 seeds."""
    root = tmp_path_factory.mktemp("allo")
    for policy in ("eager", "wait:2"):
        for cost in (0.0, 10.0):
            spec = CellSpec("r0", policy, seeds=tuple(range(2000, 2006)), cost=cost, budget=3)
            run_cell(spec, root / spec.slug())
    return root


def roaster_values(root: Path, roaster: str, key: str) -> list[float]:
    out = []
    for seed in SEEDS:
        summary = json.loads((root / f"{roaster}-{seed}" / "summary.json").read_text())
        out.append(summary["firms"]["roaster_A"][key])
    return out


def mean_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values)


def test_table2_is_the_mean_and_std_over_seeds(coffee_root: Path) -> None:
    table = table2(load_runs([coffee_root]))
    assert table is not None
    data = table.data.set_index("configuration")
    assert list(data.index) == [CONFIGS["passive"], CONFIGS["scripted"]]
    net = roaster_values(coffee_root, "scripted", "net_income")
    assert net[0] != net[1]  # the seeds differ, so the std is a real check
    for roaster, label in CONFIGS.items():
        assert data.loc[label, "n"] == 2
        for key, stem in [
            ("net_income", "net_income"),
            ("revenue", "revenue"),
            ("tool_calls", "tool_calls"),
            ("idle_days", "idle_days"),
            ("messages_sent", "messages_sent"),
            ("cost_usd", "llm_cost_usd"),
        ]:
            mean, std = mean_std(roaster_values(coffee_root, roaster, key))
            assert data.loc[label, f"{stem}_mean"] == pytest.approx(mean), (label, key)
            assert data.loc[label, f"{stem}_std"] == pytest.approx(std), (label, key)
    assert data.loc[CONFIGS["passive"], "idle_days_mean"] == DAYS


def test_the_three_formats_hold_the_same_numbers(coffee_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    written = write_report([coffee_root], out)
    assert {p.name for p in written} >= {
        f"{name}.{ext}"
        for name in ("table2", "table2_firms", "table3")
        for ext in ("md", "csv", "tex")
    }
    assert not (out / "ladder.md").exists() and not (out / "kappa.md").exists()
    with (out / "table2.csv").open() as fh:
        rows = {r["configuration"]: r for r in csv.DictReader(fh)}
    md = (out / "table2.md").read_text()
    tex = (out / "table2.tex").read_text()
    mean, std = mean_std(roaster_values(coffee_root, "scripted", "net_income"))
    row = rows[CONFIGS["scripted"]]
    assert float(row["net_income_mean"]) == pytest.approx(mean)
    assert float(row["net_income_std"]) == pytest.approx(std)
    md_row = next(line for line in md.splitlines() if line.startswith(f"| {CONFIGS['scripted']}"))
    assert f"| {mean:,.2f} ± {std:,.2f} |" in md_row
    assert f"{mean:,.2f} $\\pm$ {std:,.2f}" in tex
    assert "roaster\\_A=scripted days=8" in tex  # escaped for LaTeX
    assert tex.count(r"\begin{tabular}") == 1 and r"\bottomrule" in tex

    inv, inv_std = mean_std(roaster_values(coffee_root, "scripted", "average_inventory_kg"))
    prices = [
        p["roasted_coffee_kg"] for p in roaster_values(coffee_root, "scripted", "avg_sale_price")
    ]
    with (out / "table3.csv").open() as fh:
        t3 = {r["configuration"]: r for r in csv.DictReader(fh)}[CONFIGS["scripted"]]
    assert float(t3["avg_inventory_kg_mean"]) == pytest.approx(inv)
    assert float(t3["price_roasted_coffee_kg_mean"]) == pytest.approx(statistics.fmean(prices))
    t3_md = (out / "table3.md").read_text()
    assert f"{inv:,.1f} ± {inv_std:,.1f}" in t3_md
    assert f"{statistics.fmean(prices):,.2f} ± {statistics.stdev(prices):,.2f}" in t3_md
    assert "green" not in t3_md  # roaster_A sells roasted coffee only

    firms = (out / "table2_firms.csv").read_text().splitlines()
    assert len(firms) == 1 + 2 * 6


def test_one_seed_leaves_the_std_blank_and_unpriced_cost_says_so(
    coffee_root: Path, tmp_path: Path
) -> None:
    run = shutil.copytree(coffee_root / "scripted-1", tmp_path / "one")
    summary = json.loads((run / "summary.json").read_text())
    summary["firms"]["roaster_A"]["cost_usd"] = None  # a model with no price
    (run / "summary.json").write_text(json.dumps(summary))
    table = table2(load_runs([run]))
    assert table is not None
    [shown] = table.display.to_dict("records")
    net = summary["firms"]["roaster_A"]["net_income"]
    assert shown["net income ($)"] == f"{net:,.2f}"
    assert shown["n"] == "1"
    assert shown["LLM cost (USD)"] == "unpriced"
    assert math.isnan(table.data.loc[0, "net_income_std"])


def test_ratio_se_is_the_delta_method_by_hand() -> None:
    # R = 30/40 = 0.75; residuals -5, +5; sqrt(50 / (2·1)) / 20 = 0.25
    assert ratio_se([10, 20], [20, 20]) == pytest.approx(0.25)
    # R = 3/5; residuals 0.4, -1.2, 0.8; sqrt(2.24 / 6) / (5/3)
    assert ratio_se([1, 0, 2], [1, 2, 2]) == pytest.approx(math.sqrt(2.24 / 6) / (5 / 3))
    assert math.isnan(ratio_se([1], [2]))
    assert math.isnan(ratio_se([0, 0], [0, 0]))


def hand_cell(out: Path, policy: str, episodes: list[tuple[float, float, list[bool]]]) -> Path:
    """An AlloBench cell written by hand: (utility, OPT, first-sight flag per commit)."""
    out.mkdir(parents=True)
    config = {"framing": "r1", "policy": policy, "skin": "default", "cost": 0.0, "budget": 3}
    (out / "config.json").write_text(json.dumps(config))
    (out / "meta.json").write_text(json.dumps({"benchmark": "allo"}))  # a run says what it is
    with (out / "episodes.jsonl").open("w") as fh:
        for seed, (utility, opt, flags) in enumerate(episodes):
            commits = [{"first_sight": f, "sighting": 1 if f else 2} for f in flags]
            record = {
                "seed": seed,
                "utility": utility,
                "opt": opt,
                "commits": commits,
                "first_sight_commits": sum(flags),
                "turns": [],
            }
            fh.write(json.dumps(record) + "\n")
    (out / "summary.json").write_text(json.dumps({**config, "episodes": len(episodes)}))
    return out


def test_ladder_standard_errors_on_a_hand_made_cell(tmp_path: Path) -> None:
    hand_cell(
        tmp_path / "model",
        "acme/model-1",
        [(10, 20, [True]), (20, 20, [False, False]), (5, 10, []), (15, 30, [True, True])],
    )
    hand_cell(tmp_path / "ref", "eager", [(10, 20, [True]), (30, 20, [True])])
    episodes, dropped = allo_episodes(load_runs([tmp_path]))
    table = ladder_table(allo_cells(episodes), dropped)
    assert table is not None
    data = table.data.set_index("policy")
    # score: Σu = 50, ΣOPT = 80 → R = 0.625; residuals 10-12.5, 20-12.5, 5-6.25, 15-18.75
    resid = [-2.5, 7.5, -1.25, -3.75]
    se = math.sqrt(sum(r * r for r in resid) / (4 * 3)) / 20
    assert data.loc["acme/model-1", "score"] == pytest.approx(0.625)
    assert data.loc["acme/model-1", "score_se"] == pytest.approx(se)
    # first sight over episodes with commits: (1,1), (0,2), (2,2) → 3/5; see test above
    assert data.loc["acme/model-1", "first_sight_rate"] == pytest.approx(0.6)
    assert data.loc["acme/model-1", "first_sight_se"] == pytest.approx(
        math.sqrt(2.24 / 6) / (5 / 3)
    )
    assert data.loc["acme/model-1", "commits"] == 5
    shown = table.display.set_index("policy")
    assert list(shown.index) == ["eager", "acme/model-1"]  # reference policies first
    assert shown.loc["acme/model-1", "r1"] == f"0.625 ± {se:.3f} / 60 ± 37 %"
    assert table.breaks == [1]
    assert "B = 3, K = 0" in table.title


def test_kappa_table_from_a_small_sweep(allo_root: Path, tmp_path: Path) -> None:
    runs = load_runs([allo_root])
    report = build_report(runs)
    names = [t.name for t in report.tables]
    assert names == ["ladder", "ladder_paper", "kappa"]
    allo = report.section("allo")
    assert allo is not None and report.section("coffee") is None
    kappa = kappa_table(allo.frames["cells"])
    assert kappa is not None
    shown = kappa.display
    assert list(shown.columns) == [
        "framing", "policy", "B", "K", "hazard", "net", "optimum", "regret",
        "score", "first sight", "budget use", "zero-commit", "n", "seeds",
    ]  # fmt: skip
    assert set(shown["seeds"]) == {"2000–2005"}
    assert list(shown["policy"]) == ["eager", "eager", "wait:2", "wait:2"]
    assert list(shown["K"]) == ["0", "10", "0", "10"]
    data = kappa.data
    for policy in ("eager", "wait:2"):
        for cost in (0, 10):
            spec = CellSpec("r0", policy, cost=float(cost), budget=3)
            cell_dir = allo_root / spec.slug()
            summary = json.loads((cell_dir / "summary.json").read_text())
            records = [json.loads(line) for line in (cell_dir / "episodes.jsonl").open()]
            results = [EpisodeResult.from_dict(r["result"]) for r in records]
            paper = summarize(results, n_boot=0, records=records)
            row = data[(data["policy"] == policy) & (data["cost"] == cost)].iloc[0]
            assert row["score"] == pytest.approx(summary["score"])
            assert row["first_sight_rate"] == pytest.approx(summary["first_sight_rate"])
            assert row["episodes"] == 6
            for key in ("net_mean", "net_optimum_mean", "regret_mean", "zero_commit_incidence"):
                assert row[key] == pytest.approx(summary[key])
            assert row["regret_se"] == pytest.approx(summary["regret_se"])
            assert row["budget_utilisation"] == pytest.approx(summary["budget_utilisation"])
            assert row["first_sight_hazard"] == pytest.approx(paper["first_sight_hazard"])
            assert row["first_sight_eligible"] == paper["first_sight_eligible"]
            shown_row = shown[(shown["policy"] == policy) & (shown["K"] == str(cost))].iloc[0]
            assert shown_row["score"].startswith(f"{summary['score']:.3f} ± ")
            assert shown_row["hazard"] == f"{100 * paper['first_sight_hazard']:.0f} %"
            assert shown_row["net"].startswith(f"{summary['net_mean']:.1f} ± ")
            assert shown_row["regret"].startswith(f"{summary['regret_mean']:.1f} ± ")
            assert shown_row["optimum"] == f"{summary['net_optimum_mean']:.1f}"
    eager = data[data["policy"] == "eager"]
    assert list(eager["first_sight_rate"]) == [1.0, 1.0]
    assert list(eager["first_sight_hazard"]) == [1.0, 1.0]  # eager keeps every first sight
    paper = next(t for t in report.tables if t.name == "ladder_paper")
    assert paper.data.set_index("model").loc["Claude Opus 4.8", "r2"] == 92


def test_figures_and_a_self_contained_index(
    coffee_root: Path, allo_root: Path, tmp_path: Path
) -> None:
    chatty = tmp_path / "runs" / "chatty"
    coffee_run(chatty, 1, "passive", policies={"roaster_A": Chatty()})
    meta = json.loads((chatty / "meta.json").read_text())
    (chatty / "meta.json").write_text(json.dumps({**meta, "label": "chatty"}))
    out = tmp_path / "report"
    written = write_report([coffee_root, allo_root, chatty], out, title="Paper <draft>")
    pngs = sorted(p for p in written if p.suffix == ".png")
    names = {p.name for p in pngs}
    assert {"tool_calls.png", "messages.png", "kappa.png", "figure3.png"} <= names
    for label in ("roaster_A=scripted-days=8", "roaster_A=passive-days=8", "chatty"):
        assert {f"trajectories_{label}.png", f"idle_{label}.png"} <= names
    for png in pngs:
        data = png.read_bytes()
        assert data.startswith(PNG) and len(data) > 5_000, png

    page = (out / "index.html").read_text()
    assert "<title>Paper &lt;draft&gt;</title>" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script" not in page and "<link" not in page
    sources = re.findall(r'<img [^>]*src="([^"]+)"', page)
    assert len(sources) == len(pngs)
    embedded = {base64.b64decode(s.removeprefix("data:image/png;base64,")) for s in sources}
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    assert embedded == {p.read_bytes() for p in pngs}
    for title in ("Table 2", "Table 3", "framing ladder", "build-charge sensitivity"):
        assert title in page
    mean = statistics.fmean(roaster_values(coffee_root, "scripted", "net_income"))
    assert f"{mean:,.2f} ± " in page or f'{mean:,.2f} <span class="se">± ' in page


def test_partial_runs_are_listed_not_tabulated_unless_asked(
    coffee_root: Path, tmp_path: Path
) -> None:
    for seed in SEEDS:
        shutil.copytree(coffee_root / f"scripted-{seed}", tmp_path / "runs" / f"s{seed}")
    live = shutil.copytree(coffee_root / "passive-1", tmp_path / "runs" / "live")
    (live / "summary.json").unlink()
    runs = load_runs([tmp_path / "runs"])

    report = build_report(runs)
    assert [r.path.name for r in report.excluded] == ["live"]
    [table] = [t for t in report.tables if t.name == "table2"]
    assert list(table.data["configuration"]) == [CONFIGS["scripted"]]

    out = tmp_path / "default"
    write_report([tmp_path / "runs"], out)
    page = (out / "index.html").read_text()
    assert "Runs not included (1)" in page and "running" in page
    assert "passive" not in (out / "table2.md").read_text()

    report = build_report(runs, include_partial=True)
    assert report.excluded == []
    [table] = [t for t in report.tables if t.name == "table2"]
    shown = list(table.display["configuration"])
    assert f"{CONFIGS['passive']} †" in shown
    assert any("†" in note for note in table.notes)
    passive = table.data.set_index("configuration").loc[CONFIGS["passive"]]
    assert bool(passive["partial"]) and passive["idle_days_mean"] == DAYS


def test_cli_writes_the_report_and_lists_the_files(coffee_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["report", str(coffee_root), "--out", str(out), "--verbose"])
    assert result.exit_code == 0, result.output
    listed = [Path(line) for line in result.stdout.splitlines() if line.startswith(str(out))]
    assert out / "index.html" in listed and out / "table2.csv" in listed
    assert all(p.exists() for p in listed)


@pytest.mark.parametrize("case", ["missing", "empty", "out_is_file"])
def test_cli_errors_are_one_line_and_exit_2(case: str, coffee_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    runs = coffee_root / "scripted-1"
    if case == "missing":
        runs = tmp_path / "nowhere"
    elif case == "empty":
        runs = tmp_path / "empty"
        runs.mkdir()
    else:
        out.write_text("not a directory")
    result = runner.invoke(app, ["report", str(runs), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output
    expected = {"missing": "does not exist", "empty": "holds no run", "out_is_file": "not a dir"}
    assert expected[case] in result.stderr


def test_table3_prices_count_only_the_runs_that_sold(coffee_root: Path, tmp_path: Path) -> None:
    for seed in SEEDS:
        shutil.copytree(coffee_root / f"scripted-{seed}", tmp_path / f"s{seed}")
    path = tmp_path / "s2" / "summary.json"
    summary = json.loads(path.read_text())
    summary["firms"]["roaster_A"]["avg_sale_price"] = {}  # sold nothing in this seed
    path.write_text(json.dumps(summary))
    table = table3(load_runs([tmp_path]))
    assert table is not None
    [shown] = table.display.to_dict("records")
    [price] = roaster_values(coffee_root, "scripted", "avg_sale_price")[:1]
    assert shown["price roasted coffee ($/kg)"] == f"{price['roasted_coffee_kg']:,.2f} (1/2 seeds)"
    spoil = [100 * v for v in roaster_values(coffee_root, "scripted", "spoilage_rate")]
    assert table.data.loc[0, "spoilage_rate_pct_mean"] == pytest.approx(statistics.fmean(spoil))
    assert table.data.loc[0, "price_roasted_coffee_kg_runs"] == 1


T975_DF1 = 12.706205  # t_{0.975, 1}: the 95 % factor of a mean of two seeds (tables)


def test_score_ci_is_mean_sd_range_and_t_interval_over_seeds(coffee_root: Path) -> None:
    table = score_ci(load_runs([coffee_root]))
    assert table is not None
    data = table.data.set_index("configuration")
    shown = table.display.set_index("configuration")
    for roaster, label in CONFIGS.items():
        net = roaster_values(coffee_root, roaster, "net_income")
        mean, sd = statistics.fmean(net), statistics.stdev(net)
        half = T975_DF1 * sd / math.sqrt(2)
        row = data.loc[label]
        assert (row["n"], row["seeds"]) == (2, "1, 2")
        assert row["score_mean"] == pytest.approx(mean)
        assert row["score_sd"] == pytest.approx(sd)
        assert (row["score_min"], row["score_max"]) == (min(net), max(net))
        assert row["ci_lo"] == pytest.approx(mean - half, rel=1e-6)
        assert row["ci_hi"] == pytest.approx(mean + half, rel=1e-6)
        assert shown.loc[label, "mean ($)"] == f"{mean:,.2f}"
        assert shown.loc[label, "min to max ($)"] == f"{min(net):,.2f} to {max(net):,.2f}"
        ci = f"{row['ci_lo']:,.2f} to {row['ci_hi']:,.2f}"
        assert shown.loc[label, "95 % interval ($)"] == ci
    assert any("Student t" in note for note in table.notes)


def test_score_paired_is_b_minus_a_seed_by_seed(coffee_root: Path, tmp_path: Path) -> None:
    table = score_paired(load_runs([coffee_root]))
    assert table is not None
    [row] = table.data.to_dict("records")
    assert (row["configuration_a"], row["configuration_b"]) == (
        CONFIGS["passive"],
        CONFIGS["scripted"],
    )
    passive = roaster_values(coffee_root, "passive", "net_income")
    scripted = roaster_values(coffee_root, "scripted", "net_income")
    diffs = [s - p for p, s in zip(passive, scripted, strict=True)]
    mean, sd = statistics.fmean(diffs), statistics.stdev(diffs)
    half = T975_DF1 * sd / math.sqrt(2)
    assert (row["n_common"], row["common_seeds"]) == (2, "1, 2")
    assert row["diff_mean"] == pytest.approx(mean)
    assert row["diff_sd"] == pytest.approx(sd)
    assert row["ci_lo"] == pytest.approx(mean - half, rel=1e-6)
    assert row["ci_hi"] == pytest.approx(mean + half, rel=1e-6)
    assert row["excludes_zero"] == (mean - half > 0 or mean + half < 0)
    assert (row["only_a"], row["only_b"]) == (0, 0)
    [shown] = table.display.to_dict("records")
    assert shown["mean B - A ($)"] == f"{mean:,.2f}"
    assert shown["left out"] == "none"

    out = tmp_path / "report"
    write_report([coffee_root], out)
    with (out / "score_paired.csv").open() as fh:
        [csv_row] = list(csv.DictReader(fh))
    assert float(csv_row["diff_mean"]) == pytest.approx(mean)
    assert float(csv_row["ci_hi"]) == pytest.approx(mean + half, rel=1e-6)
    assert f"| {mean:,.2f} |" in (out / "score_paired.md").read_text()
    assert "score_ci.tex" in {p.name for p in out.iterdir()}
    page = (out / "index.html").read_text()
    assert page.index('id="table2"') < page.index('id="score_ci"') < page.index('id="score_paired"')
