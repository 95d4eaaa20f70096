"""The paper's outcome measures (docs/allobench.md §8) on hand-computed episodes: first-sight
hazard, net utility, optimum and regret, budget utilisation, zero-commit incidence, 0-based
lateness, the paired seed bootstrap and the ladder's trigger and validity rules."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from econbench.allo.episodes.runner import CellSpec, play_cell
from econbench.allo.game import Commit, EpisodeResult
from econbench.allo.game.metrics import (
    first_sight_turns,
    paired_bootstrap,
    paired_ratio_bootstrap,
    percentile,
    pooled_ratio_ci,
    summarize,
)
from econbench.runs.allo.report import ladder_trigger
from econbench.runs.frames import load_runs
from econbench.runs.report import build_report


def commit(t: int, cls: int, sighting: int, collects: int = 5) -> Commit:
    return Commit(t, cls, sighting, sighting == 1, trap=False, collects=collects)


def result(
    utility: float,
    opt: float,
    commits: list[Commit],
    *,
    cost: float = 0.0,
    budget: int = 3,
    rebuilds: int = 0,
) -> EpisodeResult:
    return EpisodeResult(
        seed=0, cost=cost, budget=budget, n_tasks=60, collected=0, commits=commits,
        utility=utility, opt=opt, trap_commits=0,
        unused_budget=budget - len(commits) - rebuilds, hot_never_tooled=0, rebuilds=rebuilds,
    )  # fmt: skip


def decision(t: int, first: bool, commit: bool, resolved: bool = True) -> dict[str, Any]:
    return {
        "t": t,
        "kind": "decision",
        "first_sight": first,
        "commit": commit,
        "resolved": resolved,
    }


def auto(t: int, first: bool = False, kind: str = "auto") -> dict[str, Any]:
    return {"t": t, "kind": kind, "first_sight": first, "collected": True}


# Episode A (B = 2, K = 0): class 0 kept at first sight, class 1 passed at first sight and kept
# at its second; the budget is then spent, so class 2's first sight comes after the end.
TURNS_A = [
    decision(0, True, True),
    decision(1, True, False),
    auto(2),
    decision(3, False, True),
    auto(4, first=True, kind="after_end"),
]
EP_A = result(10, 12, [commit(0, 0, 1), commit(3, 1, 2)], budget=2)
# Episode B (B = 2, K = 0), zero commits: three first sights, the second one unresolved
# (an unreadable reply: a mechanical failure, not eligible), and a second sighting.
TURNS_B = [
    decision(0, True, False),
    decision(1, True, False, resolved=False),
    decision(2, True, False),
    decision(3, False, False),
]
EP_B = result(0, 8, [], budget=2)


def test_first_sight_turns_count_only_resolved_decisions_at_a_first_occurrence() -> None:
    assert first_sight_turns(TURNS_A) == (2, 1)
    assert first_sight_turns(TURNS_B) == (2, 0)
    assert first_sight_turns([]) == (0, 0)


def test_hazard_pools_eligible_turns_and_keeps_zero_commit_episodes() -> None:
    s = summarize([EP_A, EP_B], n_boot=0, records=[{"turns": TURNS_A}, {"turns": TURNS_B}])
    assert s["first_sight_eligible"] == 4
    assert s["first_sight_hazard"] == pytest.approx(1 / 4)  # 1 commit over 2 + 2 turns
    assert s["first_sight_rate"] == pytest.approx(1 / 2)  # among commits: B adds nothing
    assert s["zero_commit_incidence"] == pytest.approx(1 / 2)
    assert s["budget_utilisation"] == pytest.approx((2 / 2 + 0 / 2) / 2)
    assert s["net_mean"] == pytest.approx(5.0) and s["net_optimum_mean"] == pytest.approx(10.0)
    assert s["regret_mean"] == pytest.approx(((12 - 10) + (8 - 0)) / 2)
    assert s["regret_se"] == pytest.approx(
        math.sqrt(((2 - 5) ** 2 + (8 - 5) ** 2) / 1) / math.sqrt(2)
    )
    # lateness: 1-based 1 and 2 → mean 1.5; the paper's 0-based occurrence − 1 → 0.5
    assert s["lateness1_mean"] == pytest.approx(1.5)
    assert s["lateness0_mean"] == pytest.approx(0.5)


def test_without_records_the_hazard_is_unknown_not_zero() -> None:
    s = summarize([EP_A, EP_B], n_boot=0)
    assert s["first_sight_hazard"] is None and s["first_sight_eligible"] is None
    assert s["regret_mean"] == pytest.approx(5.0)
    with pytest.raises(ValueError, match="length"):
        summarize([EP_A, EP_B], n_boot=0, records=[{"turns": TURNS_A}])


def test_all_zero_commit_cell() -> None:
    s = summarize([EP_B], n_boot=0, records=[{"turns": TURNS_B}])
    assert s["first_sight_hazard"] == 0.0 and s["first_sight_eligible"] == 2
    assert s["first_sight_rate"] is None and s["lateness0_mean"] is None
    assert s["zero_commit_incidence"] == 1.0 and s["budget_utilisation"] == 0.0
    assert s["regret_se"] is None  # one episode


def test_build_charge_net_optimum_and_regret() -> None:
    # K = 10, B = 3. One class occurs 20 times, the rest too rarely to pay: optimum 20 − 10.
    # Seed 1 keeps a 5-occurrence class at first sight: net 5 − 10 = −5, regret 15.
    # Seed 2 keeps the big class at its 3rd sighting (collects 18) and a trap at first sight
    # (collects 1): net 19 − 20 = −1, regret 11. Seed 3 keeps nothing: regret 10.
    k = 10.0
    eps = [
        result(-5, 10, [commit(0, 4, 1, 5)], cost=k),
        result(-1, 10, [commit(5, 0, 3, 18), commit(9, 6, 1, 1)], cost=k),
        result(0, 10, [], cost=k),
    ]
    records = [
        {"turns": [decision(0, True, True), decision(1, True, False)]},
        {"turns": [decision(0, True, False), decision(5, False, True), decision(9, True, True)]},
        {"turns": [decision(0, True, False), decision(1, True, False), decision(2, True, False)]},
    ]
    s = summarize(eps, n_boot=0, records=records)
    assert s["net_mean"] == pytest.approx(-2.0)
    assert s["net_optimum_mean"] == pytest.approx(10.0)
    regrets = [15.0, 11.0, 10.0]
    assert s["regret_mean"] == pytest.approx(12.0)
    sd = math.sqrt(sum((r - 12.0) ** 2 for r in regrets) / 2)
    assert s["regret_se"] == pytest.approx(sd / math.sqrt(3))
    assert s["first_sight_eligible"] == 2 + 2 + 3
    assert s["first_sight_hazard"] == pytest.approx(2 / 7)
    assert s["first_sight_rate"] == pytest.approx(2 / 3)
    assert s["budget_utilisation"] == pytest.approx((1 / 3 + 2 / 3 + 0) / 3)
    assert s["zero_commit_incidence"] == pytest.approx(1 / 3)
    assert s["lateness0_mean"] == pytest.approx((0 + 2 + 0) / 3)
    # the ratio the paper does not headline at high K: Σ net / Σ optimum
    assert s["score"] == pytest.approx(-6 / 30)


def test_budget_utilisation_counts_r3_rebuilds() -> None:
    ep = result(3, 10, [commit(0, 0, 1)], rebuilds=1)  # one script, rewritten once: 2 of 3
    assert summarize([ep], n_boot=0)["budget_utilisation"] == pytest.approx(2 / 3)


def test_real_episodes_never_and_eager() -> None:
    """``never`` is asked at every first sight (its budget is never spent): eligible turns =
    distinct classes in the stream, hazard 0; ``eager`` keeps every eligible first sight."""
    seeds = (2000, 2001)
    never = play_cell(CellSpec("r0", "never", seeds=seeds))
    s = summarize([e.result for e in never], n_boot=0, records=[e.record for e in never])
    distinct = sum(len(set(e.record["stream"]["classes"])) for e in never)
    assert s["first_sight_eligible"] == distinct and s["first_sight_hazard"] == 0.0
    assert s["zero_commit_incidence"] == 1.0 and s["net_mean"] == 0.0
    assert s["regret_mean"] == pytest.approx(s["net_optimum_mean"])
    eager = play_cell(CellSpec("r0", "eager", seeds=seeds, cost=10.0))
    s = summarize([e.result for e in eager], n_boot=0, records=[e.record for e in eager])
    assert s["first_sight_hazard"] == 1.0 and s["first_sight_eligible"] == 3 * len(seeds)
    assert s["budget_utilisation"] == 1.0 and s["lateness0_mean"] == 0.0
    assert s["regret_mean"] == pytest.approx(s["net_optimum_mean"] - s["net_mean"])


# -- the paired seed bootstrap -------------------------------------------------------------------


def test_percentile_interpolates_linearly() -> None:
    assert percentile([0.0, 1.0], 0.5) == 0.5
    assert percentile([0.0, 0.5, 0.5, 1.0], 0.025) == pytest.approx(0.0375)
    assert percentile([3.0], 0.9) == 3.0


def test_paired_bootstrap_by_hand() -> None:
    # Shared seeds 1, 2, 3; seed 3 has no rate in the first arm (no commits): left out.
    # Differences second − first: seed 1: 1 − 0 = 1, seed 2: 0.5 − 0.5 = 0 → [1, 0].
    first = {1: 0.0, 2: 0.5, 3: None, 4: 1.0}
    second = {1: 1.0, 2: 0.5, 3: 1.0, 5: 0.0}
    # random.Random(0).random() gives .844, .758 | .421, .259 | .511, .405 | .784, .303;
    # choices picks index floor(u · 2): (1, 1), (0, 0), (1, 0), (1, 0) → means 0, 1, .5, .5.
    d = paired_bootstrap(first, second, n_boot=4)
    assert d is not None and d.n == 2 and d.mean == 0.5
    # sorted [0, .5, .5, 1]: 2.5 % at index 0.075 → 0.0375; 97.5 % at 2.925 → 0.9625
    assert d.lo == pytest.approx(0.0375) and d.hi == pytest.approx(0.9625)
    rng = random.Random(0)
    assert [math.floor(rng.random() * 2) for _ in range(8)] == [1, 1, 0, 0, 1, 0, 1, 0]


def test_paired_bootstrap_defaults_are_the_papers() -> None:
    # the paper's own self-test: 12 seeds all moving 0 → 1 give exactly [1, 1]
    d = paired_bootstrap(dict.fromkeys(range(12), 0.0), dict.fromkeys(range(12), 1.0))
    assert d is not None and (d.n, d.mean, d.lo, d.hi) == (12, 1.0, 1.0, 1.0)
    # two seeds with differences 0 and 1: resampled means 0, .5, 1 with chances ¼ ½ ¼, so
    # with 10,000 resamples the 2.5 % and 97.5 % points are the extremes
    d = paired_bootstrap({1: 0.0, 2: 0.0}, {1: 0.0, 2: 1.0})
    assert d is not None and (d.mean, d.lo, d.hi) == (0.5, 0.0, 1.0)
    again = paired_bootstrap({1: 0.0, 2: 0.0}, {1: 0.0, 2: 1.0})
    assert again == d  # RNG seed 0: deterministic
    assert paired_bootstrap({1: None}, {1: 1.0}) is None
    assert paired_bootstrap({1: 0.0}, {2: 1.0}) is None


def test_paired_ratio_bootstrap_by_hand() -> None:
    # Two seeds; arm A commits (first, all) = (1, 2), (0, 2); arm B (2, 2), (0, 0): seed 2 of B
    # has no commit and adds nothing. Re-pooled: A 1/4, B 2/2 → difference 0.75.
    a, b = ([1.0, 0.0], [2.0, 2.0]), ([2.0, 0.0], [2.0, 0.0])
    d = paired_ratio_bootstrap(a, b, n_boot=3)
    assert d is not None and d.n == 2 and d.mean == pytest.approx(0.75)
    idx = np.random.default_rng(0).integers(0, 2, size=(3, 2))  # the paper's resampler
    boot = [
        sum(b[0][i] for i in row) / sum(b[1][i] for i in row)
        - sum(a[0][i] for i in row) / sum(a[1][i] for i in row)
        for row in idx
        if sum(b[1][i] for i in row) > 0
    ]
    assert (d.lo, d.hi) == (
        pytest.approx(float(np.percentile(boot, 2.5))),
        pytest.approx(float(np.percentile(boot, 97.5))),
    )
    assert paired_ratio_bootstrap(([0.0], [0.0]), ([1.0], [1.0])) is None


def test_pooled_ratio_ci_is_the_papers_boot_ratio_ci() -> None:
    num, den = [1.0, 0.0, 3.0], [2.0, 0.0, 3.0]
    d = pooled_ratio_ci(num, den)
    assert d is not None and d.mean == pytest.approx(0.8)
    idx = np.random.default_rng(0).integers(0, 3, size=(10_000, 3))
    n, m = np.array(num)[idx].sum(1), np.array(den)[idx].sum(1)
    ratios = (n[m > 0] / m[m > 0]).tolist()
    assert d.lo == pytest.approx(float(np.percentile(ratios, 2.5)))
    assert d.hi == pytest.approx(float(np.percentile(ratios, 97.5)))
    assert pooled_ratio_ci([0.0], [0.0]) is None


# -- the ladder's trigger and validity rules ------------------------------------------------------


def test_trigger_is_the_earliest_adjacent_rise_of_30_points() -> None:
    rungs = [("r0", 0.28, True), ("r1", 0.33, True), ("r2", 0.99, True), ("r3", 1.0, True)]
    assert ladder_trigger(rungs) == "r2"  # Haiku's row of the paper's table
    assert ladder_trigger([("r0", 0.24, True), ("r1", 0.0, True), ("r2", 0.39, True)]) == "r2"
    assert ladder_trigger([("r0", 0.1, True), ("r1", 0.4, True)]) == "r1"  # exactly 30 points
    assert ladder_trigger([("r0", 0.1, True), ("r1", 0.39, True)]) is None
    # an invalid rung (> 10 % unresolved) cannot trigger, nor can its neighbour pair
    assert ladder_trigger([("r0", 0.1, True), ("r1", 0.9, False), ("r2", 1.0, True)]) is None
    assert ladder_trigger([("r0", 0.1, False), ("r1", 0.2, True), ("r2", 0.9, True)]) == "r2"
    assert ladder_trigger([("r0", math.nan, True), ("r1", 0.9, True)]) is None


def ladder_cell(out: Path, framing: str, episodes: list[tuple[int, list[bool], int, int]]) -> None:
    """A hand-made cell: per seed (seed, first-sight flag per commit, unresolved, decisions)."""
    out.mkdir(parents=True)
    config = {"framing": framing, "policy": "acme/m", "skin": "default", "cost": 0.0, "budget": 3}
    (out / "config.json").write_text(json.dumps(config))
    (out / "meta.json").write_text(json.dumps({"benchmark": "allo"}))  # a run says what it is
    with (out / "episodes.jsonl").open("w") as fh:
        for seed, flags, unresolved, decisions in episodes:
            commits = [{"first_sight": f, "sighting": 1 if f else 2} for f in flags]
            turns = [decision(i, f, True) for i, f in enumerate(flags)]
            record = {
                "seed": seed, "utility": 10.0, "opt": 20.0, "commits": commits,
                "first_sight_commits": sum(flags), "unresolved_turns": unresolved,
                "decision_turns": decisions, "turns": turns,
            }  # fmt: skip
            fh.write(json.dumps(record) + "\n")
    (out / "summary.json").write_text(json.dumps({**config, "episodes": len(episodes)}))


def test_ladder_report_trigger_validity_and_paired_differences(tmp_path: Path) -> None:
    ladder_cell(tmp_path / "r0", "r0", [(1, [False, False], 0, 10), (2, [True, False], 0, 10)])
    ladder_cell(tmp_path / "r1", "r1", [(1, [False, True], 0, 10), (2, [False, False], 0, 10)])
    ladder_cell(tmp_path / "r2", "r2", [(1, [True, True], 1, 10), (2, [True, True], 0, 10)])
    # r3 has 3 of 20 decisions unresolved (15 % > 10 %): invalid
    ladder_cell(tmp_path / "r3", "r3", [(1, [True], 3, 10), (2, [], 0, 10)])
    report = build_report(load_runs([tmp_path]))
    ladder = next(t for t in report.tables if t.name == "ladder")
    shown = ladder.display.set_index("policy")
    # pooled first sight: r0 1/4, r1 1/4, r2 4/4 (+75 points: the trigger), r3 1/1
    assert shown.loc["acme/m", "trigger"] == "r2"
    assert shown.loc["acme/m", "r3"].endswith("‡") and "‡" not in shown.loc["acme/m", "r2"]
    assert any("more than 10 %" in n for n in ladder.notes)
    paired = next(t for t in report.tables if t.name == "ladder_paired")
    data = paired.data.set_index("to")
    # the paper's estimand: difference of re-pooled ratios, r0 1/4 → r1 1/4 = 0
    assert data.loc["r1", "paired_seeds"] == 2 and data.loc["r1", "diff_mean"] == 0.0
    want = paired_ratio_bootstrap(([0.0, 1.0], [2.0, 2.0]), ([1.0, 0.0], [2.0, 2.0]))
    assert want is not None
    assert (data.loc["r1", "ci_lo"], data.loc["r1", "ci_hi"]) == (want.lo, want.hi)
    # r1 → r2: 4/4 − 1/4 = 0.75; r2 → r3: seed 2 has no commits at r3 but stays in (it adds
    # nothing), so both seeds pair and r3's pooled 1/1 − r2's 4/4 = 0
    assert data.loc["r2", "diff_mean"] == 0.75 and bool(data.loc["r2", "trigger"])
    assert data.loc["r3", "paired_seeds"] == 2 and not bool(data.loc["r3", "valid"])
    assert data.loc["r3", "diff_mean"] == 0.0
    assert data.loc["r2", "pooled_rise"] == pytest.approx(0.75)
    assert list(paired.display["trigger"]) == ["", "yes", "invalid"]
