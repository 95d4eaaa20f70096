"""The report over mixed seed sets: a CoffeeBench seed counts once, AlloBench cells show their
seeds and rungs are compared only on the seeds both ran; Figure 3; one firm palette; the wide
ladder's compact HTML."""

from __future__ import annotations

import json
import re
import shutil
import statistics
from pathlib import Path

import pytest

from econbench.allo.game.metrics import paired_ratio_bootstrap
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.figures import draw_figure3, festival_spans, focal_means
from econbench.runs.coffee.report import ALL_PAIRS_UP_TO, score_ci, score_paired, table2, table3
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.frames import load_runs
from econbench.runs.palette import CONFIG_COLORS, FIRM_COLORS, SPARE_COLORS, firm_color
from econbench.runs.report import Table, build_report, group_by_label, seed_set_text
from econbench.runs.report_html import _cell, is_wide, table_html

DAYS = 6
FESTIVAL = (2, 3)
APP_JS = Path(__file__).parents[2] / "src/econbench/runs/viewer/static/app.js"


@pytest.fixture(scope="module")
def coffee_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeds 1 and 2 of one configuration, the festival inside the days run."""
    root = tmp_path_factory.mktemp("coffee_seeds")
    for seed in (1, 2):
        config = RunConfig(
            seed=seed,
            days=DAYS,
            agents={"default": "negotiating", "roaster_A": "scripted"},
            economy={"festival_days": FESTIVAL},
        )
        run_to_dir(config, root / f"s{seed}")
    return root


def roaster(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())["firms"]["roaster_A"]


def rerun(src: Path, dst: Path, net_income: float) -> Path:
    """A copy of ``src`` (the same seed) whose roaster_A ended with another net income."""
    shutil.copytree(src, dst)
    summary = json.loads((dst / "summary.json").read_text())
    summary["firms"]["roaster_A"]["net_income"] = net_income
    (dst / "summary.json").write_text(json.dumps(summary))
    return dst


def test_seed_set_text_collapses_runs_of_three_or_more() -> None:
    assert seed_set_text(range(2000, 2024)) == "2000–2023"
    assert seed_set_text([9, 1, 2, 5, 6, 7, 2]) == "1, 2, 5–7, 9"
    assert seed_set_text([3, "run:/x", "run:/y"]) == "3, 2 unseeded"
    assert seed_set_text([]) == "–"


def test_a_repeated_seed_counts_once_as_the_mean_of_its_runs(
    coffee_root: Path, tmp_path: Path
) -> None:
    for seed in (1, 2):
        shutil.copytree(coffee_root / f"s{seed}", tmp_path / f"s{seed}")
    first = roaster(coffee_root / "s1")["net_income"]
    rerun(coffee_root / "s1", tmp_path / "s1-again", first + 100.0)
    table = table2(load_runs([tmp_path]))
    assert table is not None
    [row] = table.data.to_dict("records")
    assert (row["n"], row["runs"], row["seeds"]) == (2, 3, "1, 2")
    seed1 = statistics.fmean([first, first + 100.0])
    values = [seed1, roaster(coffee_root / "s2")["net_income"]]
    assert row["net_income_mean"] == pytest.approx(statistics.fmean(values))
    assert row["net_income_std"] == pytest.approx(statistics.stdev(values))
    [shown] = table.display.to_dict("records")
    assert (shown["n"], shown["seeds"]) == ("2", "1, 2")
    assert any("1 run(s) repeat a seed" in note for note in table.notes)
    t3 = table3(load_runs([tmp_path]))
    assert t3 is not None and t3.data.loc[0, "n"] == 2


def test_two_runs_of_one_seed_are_n_1_not_a_zero_std(coffee_root: Path, tmp_path: Path) -> None:
    shutil.copytree(coffee_root / "s1", tmp_path / "a")
    shutil.copytree(coffee_root / "s1", tmp_path / "b")
    table = table2(load_runs([tmp_path]))
    assert table is not None
    [shown] = table.display.to_dict("records")
    assert shown["n"] == "1" and "±" not in shown["net income ($)"]  # was "± 0.00", n = 2


def test_figure3_draws_every_configuration_on_one_axes_with_the_festival_shaded(
    coffee_root: Path, tmp_path: Path
) -> None:
    runs = load_runs([coffee_root])
    assert festival_spans(runs) == [FESTIVAL]
    groups = group_by_label(runs)
    means, seeds = focal_means(runs)
    assert seeds == 2
    cash = []
    for seed in (1, 2):
        rows = [json.loads(line) for line in (coffee_root / f"s{seed}" / "daily.jsonl").open()]
        cash.append([r["cash"] for r in rows if r["firm"] == "roaster_A"])
    by_day = zip(*cash, strict=True)
    assert list(means["cash"]) == pytest.approx([statistics.fmean(d) for d in by_day])

    fig = draw_figure3(groups)
    assert fig is not None
    [ax] = fig.axes
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == DAYS]
    assert len(lines) == 3 * len(groups)  # cash, revenue, net income per configuration
    assert {line.get_color() for line in lines} == {CONFIG_COLORS[0]}
    [span] = ax.patches
    x0, x1 = span.get_x(), span.get_x() + span.get_width()
    assert (x0, x1) == (FESTIVAL[0] - 0.5, FESTIVAL[1] + 0.5)
    assert "festival days 2–3" in ax.get_title()


def allo_cell(out: Path, framing: str, seeds: dict[int, tuple[float, float, list[bool]]]) -> None:
    """A hand-made cell: per seed (utility, OPT, first-sight flag per commit)."""
    out.mkdir(parents=True)
    config = {"framing": framing, "policy": "acme/m", "skin": "default", "cost": 0.0, "budget": 3}
    (out / "config.json").write_text(json.dumps(config))
    (out / "meta.json").write_text(json.dumps({"benchmark": "allo"}))  # a run says what it is
    with (out / "episodes.jsonl").open("w") as fh:
        for seed, (utility, opt, flags) in seeds.items():
            commits = [{"first_sight": f, "sighting": 1 if f else 2} for f in flags]
            record = {
                "seed": seed, "utility": utility, "opt": opt, "commits": commits,
                "first_sight_commits": sum(flags), "turns": [],
            }  # fmt: skip
            fh.write(json.dumps(record) + "\n")
    (out / "summary.json").write_text(json.dumps({**config, "episodes": len(seeds)}))


def test_rungs_on_different_seed_sets_compare_only_on_the_shared_seeds(tmp_path: Path) -> None:
    # r0 ran seeds 1-4, r1 seeds 3-6. Pooled over its own seeds r0's first sight is 2/4 and
    # r1's 4/4 (+50 points, which would trigger), but on the seeds both ran (3, 4) both are
    # 2/2: the rise is 0 and nothing triggers.
    allo_cell(
        tmp_path / "r0",
        "r0",
        {1: (5, 20, [False]), 2: (5, 20, [False]), 3: (10, 20, [True]), 4: (10, 20, [True])},
    )
    allo_cell(
        tmp_path / "r1",
        "r1",
        {3: (10, 20, [True]), 4: (12, 20, [True]), 5: (20, 20, [True]), 6: (20, 20, [True])},
    )
    report = build_report(load_runs([tmp_path]))
    ladder = next(t for t in report.tables if t.name == "ladder")
    data = ladder.data.set_index("framing")
    assert data.loc["r0", "first_sight_rate"] == 0.5 and data.loc["r1", "first_sight_rate"] == 1
    assert (data.loc["r0", "seeds"], data.loc["r1", "seeds"]) == ("1–4", "3–6")
    assert list(data["n"]) == [4, 4]
    [row] = ladder.display.to_dict("records")
    assert (row["seeds"], row["n"]) == ("1–4; r1: 3–6", "4; r1: 4")
    assert row["trigger"] == "none"  # the full cells rise 50 points; the shared seeds do not
    assert any("differ in their seed sets" in n for n in ladder.notes)

    paired = next(t for t in report.tables if t.name == "ladder_paired")
    [pair] = paired.data.to_dict("records")
    assert (pair["paired_seeds"], pair["shared_seeds"]) == (2, "3, 4")
    assert (pair["only_from"], pair["only_to"]) == ("1, 2", "5, 6")
    assert pair["diff_mean"] == 0.0 and pair["pooled_rise"] == 0.0
    want = paired_ratio_bootstrap(([10.0, 10.0], [20.0, 20.0]), ([10.0, 12.0], [20.0, 20.0]))
    assert want is not None
    assert pair["score_diff"] == pytest.approx(22 / 40 - 20 / 40)
    assert (pair["score_ci_lo"], pair["score_ci_hi"]) == (want.lo, want.hi)
    [shown] = paired.display.to_dict("records")
    assert shown["left out"] == "r0 only: 1, 2; r1 only: 5, 6"
    assert any("enter neither Δ nor the trigger" in n for n in paired.notes)
    allo = report.section("allo")
    assert allo is not None and allo.page[:2] == ("ladder", "ladder_paired")


def test_one_seed_set_says_so_and_the_trigger_is_unchanged(tmp_path: Path) -> None:
    seeds = {1: (5, 20, [False]), 2: (5, 20, [False])}
    allo_cell(tmp_path / "r0", "r0", seeds)
    allo_cell(tmp_path / "r1", "r1", {s: (u, o, [True]) for s, (u, o, _) in seeds.items()})
    ladder = next(t for t in build_report(load_runs([tmp_path])).tables if t.name == "ladder")
    [row] = ladder.display.to_dict("records")
    assert (row["seeds"], row["n"], row["trigger"]) == ("1, 2", "2", "r1")
    assert "Every cell ran the same seeds: 1, 2 (n = 2)." in ladder.notes


def test_the_report_and_the_viewer_share_one_firm_palette() -> None:
    source = APP_JS.read_text()
    block = re.search(r"FIRM_COLORS = \{(.*?)\}", source, re.S)
    assert block is not None
    viewer = dict(re.findall(r'(\w+): "(#[0-9a-f]{6})"', block.group(1)))
    assert viewer == FIRM_COLORS
    spare = re.search(r"SPARE_COLORS = \[(.*?)\]", source)
    assert spare is not None
    assert re.findall(r'"(#[0-9a-f]{6})"', spare.group(1)) == list(SPARE_COLORS)
    # the viewer's firmColor hash: h = (h * 31 + charCode) >>> 0, for "bank": 3016252
    assert firm_color("bank") == SPARE_COLORS[3016252 % len(SPARE_COLORS)]
    assert not set(CONFIG_COLORS) & set(FIRM_COLORS.values())


def test_a_wide_table_is_compact_in_html_and_keeps_its_text() -> None:
    import pandas as pd

    cell = "0.625 ± 0.123 / 60 ± 37 % ‡"
    html = _cell(cell, compact=True)
    assert html.count('class="part"') == 2 and html.count('class="se"') == 2
    assert re.sub(r"<[^>]+>", "", html) == cell
    wide = pd.DataFrame([{"policy": "p", **{f"r{i}": cell for i in range(6)}}])
    table = Table("ladder", "t", wide, wide)
    assert is_wide(table)
    assert '<table class="wide">' in table_html(table)
    narrow = Table("t", "t", wide.iloc[:, :2], wide.iloc[:, :2])
    assert not is_wide(narrow) and "<table>" in table_html(narrow)


def relabel(run: Path, label: str) -> Path:
    meta = json.loads((run / "meta.json").read_text())
    (run / "meta.json").write_text(json.dumps({**meta, "label": label}))
    return run


def test_paired_scores_leave_out_the_unshared_seeds_and_one_seed_has_no_interval(
    coffee_root: Path, tmp_path: Path
) -> None:
    for seed in (1, 2):
        relabel(shutil.copytree(coffee_root / f"s{seed}", tmp_path / f"a{seed}"), "A")
    first = roaster(coffee_root / "s1")["net_income"]
    relabel(rerun(coffee_root / "s1", tmp_path / "b1", first + 100.0), "B")
    runs = load_runs([tmp_path])

    ci = score_ci(runs)
    assert ci is not None
    shown = ci.display.set_index("configuration")
    assert shown.loc["B", "95 % interval ($)"] == "none (n = 1)"
    assert shown.loc["B", "SD ($)"] == "–" and shown.loc["A", "n"] == "2"
    assert any("one seed has no SD and no interval" in n for n in ci.notes)

    paired = score_paired(runs)
    assert paired is not None
    [row] = paired.data.to_dict("records")
    assert (row["n_common"], row["common_seeds"], row["only_a"], row["only_b"]) == (1, "1", 1, 0)
    assert row["diff_mean"] == pytest.approx(100.0)
    assert row["excludes_zero"] is None
    [shown_row] = paired.display.to_dict("records")
    assert shown_row["95 % interval ($)"] == "none (n = 1)"
    assert (shown_row["excludes 0"], shown_row["left out"]) == ("–", "A only: 2")
    assert any("1 in all, in 1 of 1 pair(s)" in n for n in paired.notes)
    assert any("one common seed" in n for n in paired.notes)


def test_many_configurations_are_compared_with_the_first(coffee_root: Path, tmp_path: Path) -> None:
    base = [roaster(coffee_root / f"s{seed}")["net_income"] for seed in (1, 2)]
    labels = [f"c{i}" for i in range(ALL_PAIRS_UP_TO + 1)]
    for i, label in enumerate(labels):
        for seed in (1, 2):
            # c_i scores base + 10 i on seed 1 and base + 30 i on seed 2: B − A = 20 i on average
            shift = (10 if seed == 1 else 30) * i
            run = rerun(
                coffee_root / f"s{seed}", tmp_path / f"{label}-{seed}", base[seed - 1] + shift
            )
            relabel(run, label)
    paired = score_paired(load_runs([tmp_path]))
    assert paired is not None
    data = paired.data
    assert list(data["configuration_a"]) == ["c0"] * ALL_PAIRS_UP_TO
    assert list(data["configuration_b"]) == labels[1:]
    assert list(data["diff_mean"]) == pytest.approx([20.0 * i for i in range(1, len(labels))])
    assert any("each is compared with the first, c0" in n for n in paired.notes)
