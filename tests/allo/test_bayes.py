"""Exact posterior (hand-computed cases, brute force) and the Bellman-optimal ``bayes`` DP."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from econbench.allo.game import Game
from econbench.allo.game.stream import Stream, StreamConfig, generate_streams
from econbench.allo.solvers.bayes import BayesSolver, RuleActor
from econbench.allo.solvers.policies import make_policy, play_many
from econbench.allo.solvers.posterior import HotSetModel

RHO = (0.85 / 3) / (0.15 / 5)
MODEL = HotSetModel.from_config(StreamConfig())


def _p_hot(history: list[int], cls: int) -> float:
    return float(MODEL.posterior_from_history(history).hot_prob()[0, cls])


# -- posterior: hand-computed cases ---------------------------------------------------------
def test_one_sighting_at_the_first_draw() -> None:
    # 21 hypotheses contain class 0: weight ρ·(1 − 0.85²); the other 35 have weight 1
    g = 1 - 0.85**2
    assert _p_hot([0], 0) == pytest.approx(21 * RHO * g / (21 * RHO * g + 35), rel=1e-12)
    assert _p_hot([0], 0) == pytest.approx(0.611273, abs=1e-6)


def test_two_sightings_in_the_early_window() -> None:
    g = 1 - 0.85
    assert _p_hot([0, 0], 0) == pytest.approx(21 * RHO**2 * g / (21 * RHO**2 * g + 35))


def test_trap_early_factor_zeros_hypotheses() -> None:
    # the first 3 draws all class 0: class 0 cannot be hot (no trap would be early)
    assert _p_hot([0, 0, 0], 0) == 0.0
    post = MODEL.posterior_from_history([0, 1, 2])
    h012 = [i for i, row in enumerate(MODEL.hyp) if set(np.flatnonzero(row)) == {0, 1, 2}]
    assert post.pi[0, h012[0]] == 0.0
    want = (10 * RHO**2 + 10 * RHO) / (15 * RHO**2 + 30 * RHO + 10)
    assert post.hot_prob()[0, 0] == pytest.approx(want, rel=1e-12)
    # once a trap is certainly seen early, the factor is 1 for every hypothesis
    assert _p_hot([0, 0, 0, 1, 1, 1, 1], 1) > 0.999


def test_no_trap_early_condition_means_no_factor() -> None:
    model = HotSetModel.from_config(StreamConfig(trap_early=False))
    p = float(model.posterior_from_history([0, 0, 0]).hot_prob()[0, 0])
    assert p == pytest.approx(21 * RHO**3 / (21 * RHO**3 + 35))


TINY = StreamConfig(n_classes=4, n_hot=2, n_tasks=6, budget=2)


def _brute_likelihood(cfg: StreamConfig):  # type: ignore[no-untyped-def]
    """L(x) = Σ_H P(H) P(x, trap-early | H), by enumerating completions of the window."""
    hyps = list(itertools.combinations(range(cfg.n_classes), cfg.n_hot))
    w = cfg.early_window

    def p(h: tuple[int, ...], c: int) -> float:
        return cfg.p_hot if c in h else cfg.p_trap

    @functools.cache
    def lik(x: tuple[int, ...]) -> float:
        total = 0.0
        for h in hyps:
            prefix = math.prod(p(h, c) for c in x)
            if w == 0 or any(c not in h for c in x[:w]):
                cond = 1.0
            else:
                m = w - min(len(x), w)
                cond = sum(
                    math.prod(p(h, c) for c in comp)
                    for comp in itertools.product(range(cfg.n_classes), repeat=m)
                    if any(c not in h for c in comp)
                )
            total += prefix * cond / len(hyps)
        return total

    return lik


def test_predictive_and_posterior_match_brute_force() -> None:
    lik = _brute_likelihood(TINY)
    model = HotSetModel.from_config(TINY)
    for x in [(), (0,), (0, 0), (0, 1), (2, 2, 3), (1, 1, 1, 1)]:
        pred = model.posterior_from_history(list(x)).predictive()[0]
        want = [lik((*x, c)) / lik(x) for c in range(4)]
        np.testing.assert_allclose(pred, want, rtol=1e-12, atol=1e-15)
        assert pred.sum() == pytest.approx(1.0)


# -- the DP -------------------------------------------------------------------------------
def _brute_optimum(cfg: StreamConfig, cost: float) -> float:
    lik = _brute_likelihood(cfg)

    @functools.cache
    def v(x: tuple[int, ...], built: frozenset[int], b: int) -> float:
        if len(x) == cfg.n_tasks:
            return 0.0
        total = 0.0
        for c in range(cfg.n_classes):
            pc = lik((*x, c)) / lik(x)
            if pc == 0:
                continue
            xc = (*x, c)
            if c in built:
                val = 1 + v(xc, built, b)
            elif b > 0:
                val = max(v(xc, built, b), 1 - cost + v(xc, built | {c}, b - 1))
            else:
                val = v(xc, built, b)
            total += pc * val
        return total

    return v((), frozenset(), cfg.budget)


@pytest.mark.parametrize(
    ("cfg", "cost"),
    [
        (TINY, 0.0),
        (TINY, 1.5),
        (StreamConfig(n_classes=4, n_hot=1, n_tasks=7, budget=2), 0.5),
        (StreamConfig(n_classes=5, n_hot=2, n_tasks=6, budget=3, hot_mass=0.7), 2.0),
        (StreamConfig(n_classes=4, n_hot=2, n_tasks=6, budget=1, trap_early=False), 0.0),
    ],
)
def test_exact_dp_equals_brute_force_expectimax(cfg: StreamConfig, cost: float) -> None:
    solver = BayesSolver(cfg, cost=cost, cap=None).solve()
    assert solver.exact
    assert solver.value0 == pytest.approx(_brute_optimum(cfg, cost), rel=1e-12, abs=1e-12)


def _expected_value(spec: str, cfg: StreamConfig, cost: float) -> float:
    """E[net utility] of a policy: exact sum over every stream, weighted by its probability."""
    lik = _brute_likelihood(cfg)
    policy = make_policy(spec, cfg, cost=cost)
    total = 0.0
    for x in itertools.product(range(cfg.n_classes), repeat=cfg.n_tasks):
        px = lik(x) / lik(())  # lik is joint with the trap-early event
        if px == 0:
            continue
        stream = Stream(seed=0, config=cfg, hot=tuple(range(cfg.n_hot)), classes=x)
        policy.reset(stream)
        total += px * Game(stream, cost=cost).play(policy.decide).utility
    return total


@pytest.mark.parametrize("cost", [0.0, 1.2])
def test_bayes_beats_every_policy_in_expectation(cost: float) -> None:
    cfg = StreamConfig(n_classes=4, n_hot=2, n_tasks=5, budget=2)
    best = BayesSolver(cfg, cost=cost, cap=None).solve().value0
    bayes = _expected_value("bayes:exact", cfg, cost)
    assert bayes == pytest.approx(best, rel=1e-9)
    others = ["eager", "wait:2", "wait:3", "posterior:0.5", "posterior:0.88", "never"]
    values = {spec: _expected_value(spec, cfg, cost) for spec in others}
    assert all(bayes >= v - 1e-9 for v in values.values()), values
    # (on so short a stream eager is optimal too; strict gains are tested at T = 16)


@pytest.mark.parametrize("cost", [0.0, 3.0])
def test_bayes_beats_heuristics_exactly_on_a_shorter_stream(cost: float) -> None:
    # exact expected values (no sampling noise) of each rule on the exact state space
    cfg = StreamConfig(n_tasks=16)
    exact = BayesSolver(cfg, cost=cost, cap=None).solve()
    rules = ["eager", "wait:2", "wait:3", "posterior:0.8", "posterior:0.88", "posterior:0.95"]
    values = {spec: exact.evaluate(RuleActor(spec, cfg, cost)) for spec in rules}
    assert all(exact.value0 > v + 1e-6 for v in values.values()), (exact.value0, values)
    # and the evaluation agrees with playing the policy on sampled streams
    streams = generate_streams(range(400), cfg)
    sampled = np.mean([r.utility for r in play_many(make_policy("wait:2", cfg), streams, cost)])
    assert sampled == pytest.approx(values["wait:2"], abs=0.4)


def test_capped_solver_gap_is_small_and_measured_exactly() -> None:
    cfg = StreamConfig(n_tasks=12)
    exact = BayesSolver(cfg, cap=None).solve()
    assert exact.evaluate(exact) == pytest.approx(exact.value0, rel=1e-12)
    gaps = [exact.value0 - exact.evaluate(BayesSolver(cfg, cap=c)) for c in (1, 2, 3)]
    assert all(g >= -1e-9 for g in gaps)
    assert gaps[0] > gaps[2] and gaps[2] < 0.01


def test_capped_solver_uses_fewer_states() -> None:
    cfg = StreamConfig(n_tasks=12)
    assert BayesSolver(cfg, cap=2).solve().n_states < BayesSolver(cfg, cap=None).solve().n_states


def test_charge_too_high_means_never_build() -> None:
    cfg = StreamConfig(n_tasks=12, budget=2)
    solver = BayesSolver(cfg, cost=12.0, cap=None).solve()
    assert solver.value0 == 0.0
    res = play_many(
        make_policy("bayes:exact", cfg, cost=12.0), generate_streams(range(20), cfg), cost=12.0
    )
    assert all(r.commits == [] for r in res)


def test_bayes_on_default_config_against_posterior_and_wait() -> None:
    # At T = 60 the tuned posterior:0.88 is close to optimal: over 3,000 seeds the capped
    # bayes leads it by 0.02 ± 0.04 utility (docs/allobench.md), so 300 seeds cannot order the two;
    # the paired difference must stay within sampling noise, and wait:2 must be beaten.
    streams = generate_streams(range(300))
    util = {
        spec: np.array([r.utility for r in play_many(make_policy(spec), streams)])
        for spec in ["bayes", "posterior:0.88", "wait:2"]
    }
    diff = util["bayes"] - util["posterior:0.88"]
    assert diff.mean() > -2 * diff.std() / np.sqrt(len(diff))
    gain = util["bayes"] - util["wait:2"]
    assert gain.mean() > 2 * gain.std() / np.sqrt(len(gain))
    opt = sum(r.opt for r in play_many(make_policy("never"), streams))
    assert util["bayes"].sum() / opt >= util["wait:2"].sum() / opt + 0.01


def test_bayes_is_deterministic() -> None:
    cfg = StreamConfig(n_tasks=20)
    a = play_many(make_policy("bayes", cfg, cost=2.0), generate_streams(range(30), cfg), cost=2.0)
    b = play_many(make_policy("bayes", cfg, cost=2.0), generate_streams(range(30), cfg), cost=2.0)
    assert [r.to_dict() for r in a] == [r.to_dict() for r in b]


# -- the solver's shortcuts are the same numbers as the plain computation --------------------
@pytest.mark.parametrize("cfg", [StreamConfig(), StreamConfig(trap_early=False)])
@pytest.mark.parametrize("t", [1, 2, 10])
@pytest.mark.parametrize("n_distinct", [1, 2, 7])
def test_posterior_of_shared_rows_is_the_direct_posterior_bit_for_bit(
    cfg: StreamConfig, t: int, n_distinct: int
) -> None:
    """A level's states share (counts, early) rows; computing each row once must give the
    same bits and memory layout as computing it per state (the later BLAS products, whose
    last bits depend on the layout, then agree too)."""
    model = HotSetModel.from_config(cfg)
    rng = np.random.default_rng(t * 10 + n_distinct)
    counts = rng.integers(0, 6, (n_distinct, cfg.n_classes))
    early = rng.random((n_distinct, cfg.n_classes)) < 0.3
    early[:, 0] = True  # a history the generator can produce after the window closes
    row_of = rng.integers(0, n_distinct, 41)
    direct = model.posterior(counts[row_of], early[row_of], t)
    shared = model.posterior(counts, early, t, row_of)
    assert np.array_equal(direct.pi, shared.pi)
    assert np.array_equal(direct.contained, shared.contained)
    assert direct.pi.flags.f_contiguous == shared.pi.flags.f_contiguous
    assert direct.pi.flags.c_contiguous == shared.pi.flags.c_contiguous
    assert np.array_equal(direct.predictive(), shared.predictive())
    assert np.array_equal(direct.expected_future(), shared.expected_future())


def test_reinsert_sorts_like_numpy() -> None:
    """The successor rows re-sorted by one bubble pass equal ``np.sort``'s rows."""
    from econbench.allo.solvers.bayes import _reinsert

    rng = np.random.default_rng(0)
    rows = np.sort(rng.integers(0, 200, (500, 8)).astype(np.uint8), axis=1)
    for i in range(8):
        grown = rows.copy()
        grown[:, i] += rng.integers(0, 56, 500).astype(np.uint8)
        assert np.array_equal(_reinsert(grown.copy(), i), np.sort(grown, axis=1))


@pytest.mark.parametrize("cfg", [StreamConfig(n_tasks=12), StreamConfig(n_classes=10, n_tasks=8)])
def test_levels_are_in_key_order(cfg: StreamConfig) -> None:
    """Lookups bisect each level's keys, which the forward pass leaves sorted and distinct."""
    solver = BayesSolver(cfg, cost=1.0).solve()
    for level in solver.levels:  # (rows of ten classes make byte-string keys: no "<")
        assert np.array_equal(np.sort(level.keys), level.keys)
        assert len(np.unique(level.keys)) == len(level.keys)
