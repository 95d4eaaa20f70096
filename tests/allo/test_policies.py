"""Reference policies: parsing, the spec's reference scores, K > 0 rules, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from econbench.allo.game import Game
from econbench.allo.game.metrics import summarize
from econbench.allo.game.stream import Stream, StreamConfig, generate_streams
from econbench.allo.solvers.policies import (
    REFERENCE_POLICIES,
    AlloPolicy,
    PosteriorPolicy,
    make_policy,
    play_many,
)

SEEDS = range(300)


@pytest.fixture(scope="module")
def streams() -> list[Stream]:
    return generate_streams(SEEDS)


def _score(spec: str, streams: list[Stream], cost: float = 0.0) -> dict:
    return summarize(play_many(make_policy(spec, cost=cost), streams, cost=cost), n_boot=0)


def test_make_policy_parses_specs() -> None:
    for spec in [*REFERENCE_POLICIES, "wait:3", "posterior", "random", "wait", "bayes:3"]:
        assert isinstance(make_policy(spec), AlloPolicy)
    assert make_policy("wait:4").name == "wait:4"
    assert make_policy("posterior:0.9").name == "posterior:0.9"
    for bad in ["greedy", "wait:0", "wait:x", "posterior:1.5", "random:-1", "eager:2"]:
        with pytest.raises(ValueError):
            make_policy(bad)


@pytest.mark.parametrize(
    ("spec", "lo", "hi"),
    [("eager", 0.66, 0.72), ("wait:2", 0.83, 0.88), ("wait:3", 0.83, 0.88),
     ("posterior:0.88", 0.86, 0.91)],
)  # fmt: skip
def test_reference_scores_match_spec(
    streams: list[Stream], spec: str, lo: float, hi: float
) -> None:
    s = _score(spec, streams)
    assert lo < s["score"] < hi


def test_eager_and_wait_commit_where_they_should(streams: list[Stream]) -> None:
    eager = _score("eager", streams)
    assert eager["first_sight_rate"] == 1.0 and eager["lateness1_mean"] == 1.0
    assert eager["unused_budget_mean"] == 0.0
    wait = _score("wait:2", streams)
    assert wait["first_sight_rate"] == 0.0 and wait["lateness1_mean"] == 2.0
    post = _score("posterior:0.88", streams)
    assert post["trap_commits_mean"] < wait["trap_commits_mean"] < eager["trap_commits_mean"]


@pytest.mark.parametrize("cost", [0.0, 10.0])
def test_hindsight_attains_opt_and_never_scores_zero(streams: list[Stream], cost: float) -> None:
    for r in play_many(make_policy("hindsight"), streams[:100], cost=cost):
        assert r.utility == r.opt
        assert all(c.first_sight for c in r.commits)
    never = _score("never", streams[:50], cost)
    assert never["utility_mean"] == 0.0 and never["commits_mean"] == 0.0
    assert never["first_sight_rate"] is None


def test_charge_makes_eager_and_wait_stop_building_late(streams: list[Stream]) -> None:
    for r in play_many(make_policy("eager"), streams[:100], cost=24.0):
        assert all(60 - c.t > 24 for c in r.commits)
    for r in play_many(make_policy("wait:2"), streams[:100], cost=59.0):
        assert r.commits == []


def test_posterior_respects_the_charge(streams: list[Stream]) -> None:
    pol = PosteriorPolicy(0.88)
    for s in streams[:60]:
        pol.reset(s)
        game = Game(s, cost=10.0)
        while not game.done:
            turn = game.turn()
            if not turn.needs_decision:
                game.step(False)
                continue
            view = game.view()
            p_hot, collect = pol.assess(view)
            commit = pol.decide(view)
            assert commit == (p_hot >= 0.88 and collect > 10.0)
            # the expected collection can never exceed the turns left
            assert 1.0 <= collect <= 60 - view.t
            game.step(commit)
    high = _score("posterior:0.88", streams[:100], cost=10.0)
    low = _score("posterior:0.88", streams[:100], cost=0.0)
    assert 0 < high["commits_mean"] < low["commits_mean"]
    # a hot class is expected to recur ~0.28 times a turn: at K = 20 no build pays in expectation
    assert _score("posterior:0.88", streams[:100], cost=20.0)["commits_mean"] == 0.0


def test_random_policy_is_seeded_by_the_stream(streams: list[Stream]) -> None:
    a = play_many(make_policy("random:0.3"), streams[:30])
    b = play_many(make_policy("random:0.3"), streams[:30])
    assert [r.to_dict() for r in a] == [r.to_dict() for r in b]
    rev = play_many(make_policy("random:0.3"), streams[:30][::-1])[::-1]
    assert [r.to_dict() for r in rev] == [r.to_dict() for r in a]
    assert len({tuple(c.t for c in r.commits) for r in a}) > 10
    ones = play_many(make_policy("random:1"), streams[:30])
    eager = play_many(make_policy("eager"), streams[:30])
    assert [r.to_dict() for r in ones] == [r.to_dict() for r in eager]


def test_same_seeds_same_results(streams: list[Stream]) -> None:
    for spec in ["eager", "posterior:0.88", "hindsight"]:
        a = play_many(make_policy(spec), generate_streams(range(20)))
        b = play_many(make_policy(spec), streams[:20])
        assert [r.to_dict() for r in a] == [r.to_dict() for r in b]


def test_posterior_policy_uses_the_streams_generator() -> None:
    cfg = StreamConfig(n_classes=6, n_hot=2, n_tasks=30, budget=2)
    res = play_many(make_policy("posterior:0.9", cfg), generate_streams(range(50), cfg))
    assert np.mean([len(r.commits) for r in res]) > 1.0
    assert all(r.budget == 2 and r.n_tasks == 30 for r in res)
