"""Metrics on hand-built episode results."""

from __future__ import annotations

import pytest

from econbench.allo.game import Commit, EpisodeResult
from econbench.allo.game.metrics import episode_score, read_summary, summarize


def _commit(sighting: int, trap: bool = False) -> Commit:
    return Commit(t=0, cls=0, sighting=sighting, first_sight=sighting == 1, trap=trap, collects=5)


def _result(utility: float, opt: float, commits: list[Commit], cost: float = 0.0) -> EpisodeResult:
    return EpisodeResult(
        seed=0, cost=cost, budget=3, n_tasks=60, collected=int(utility), commits=commits,
        utility=utility, opt=opt, trap_commits=sum(c.trap for c in commits),
        unused_budget=3 - len(commits), hot_never_tooled=1,
    )  # fmt: skip


RESULTS = [
    _result(40, 50, [_commit(1), _commit(1, trap=True), _commit(3)]),
    _result(10, 40, [_commit(2)]),
    _result(0, 30, []),
]


def test_pooled_and_per_episode_scores() -> None:
    s = summarize(RESULTS, n_boot=500)
    assert s["episodes"] == 3
    assert s["score"] == pytest.approx(50 / 120)
    assert s["score_mean"] == pytest.approx((0.8 + 0.25 + 0.0) / 3)
    lo, hi = s["score_ci"]
    assert 0.0 <= lo < s["score_mean"] < hi <= 0.8 + 1e-12
    assert s["utility_mean"] == pytest.approx(50 / 3) and s["opt_mean"] == 40


def test_first_sight_rate_pools_commits() -> None:
    s = summarize(RESULTS, n_boot=0)
    assert s["first_sight_rate"] == pytest.approx(2 / 4)  # pooled over 4 commits
    assert s["first_sight_rate_episode_mean"] == pytest.approx((2 / 3 + 0) / 2)
    assert s["lateness1_mean"] == pytest.approx((1 + 1 + 3 + 2) / 4)
    assert s["commits_mean"] == pytest.approx(4 / 3)
    assert s["trap_commits_mean"] == pytest.approx(1 / 3)
    assert s["unused_budget_mean"] == pytest.approx(5 / 3)
    assert s["hot_never_tooled_mean"] == 1.0


def test_no_commits_and_zero_opt() -> None:
    none = [_result(0, 0, [], cost=24.0), _result(0, 10, [], cost=24.0)]
    s = summarize(none, n_boot=100)
    assert s["first_sight_rate"] is None and s["lateness1_mean"] is None
    assert s["score"] == 0.0 and s["score_mean"] == 0.5
    assert episode_score(_result(0, 0, [])) == 1.0
    assert episode_score(_result(-12, 0, [_commit(1)], cost=24.0)) == pytest.approx(0.5)
    assert summarize([_result(-3, 0, [_commit(1)], cost=24.0)])["score"] is None


def test_bootstrap_is_seeded() -> None:
    many = RESULTS * 10
    assert summarize(many, seed=1)["score_ci"] == summarize(many, seed=1)["score_ci"]
    assert summarize(many, seed=1)["score_ci"] != summarize(many, seed=2)["score_ci"]
    with pytest.raises(ValueError):
        summarize([])


def test_lateness_has_two_names_one_per_base() -> None:
    """1-based (1 = first sight) and the paper's 0-based lateness are named apart."""
    s = summarize(RESULTS, n_boot=0)
    assert "lateness_mean" not in s
    assert s["lateness1_mean"] == pytest.approx((1 + 1 + 3 + 2) / 4)
    assert s["lateness0_mean"] == pytest.approx(s["lateness1_mean"] - 1)


def test_an_old_summary_reads_under_the_new_names() -> None:
    old = {"episodes": 3, "lateness_mean": 1.75, "score": 0.5}
    new = read_summary(old)
    assert new == {"episodes": 3, "lateness1_mean": 1.75, "lateness0_mean": 0.75, "score": 0.5}
    assert "lateness_mean" in old  # the argument is not changed
    assert read_summary({"lateness_mean": None})["lateness0_mean"] is None
    current = summarize(RESULTS, n_boot=0)
    assert read_summary(current) == current
    both = read_summary({"lateness_mean": 9.0, "lateness1_mean": 2.0, "lateness0_mean": 1.0})
    assert both == {"lateness1_mean": 2.0, "lateness0_mean": 1.0}
