"""``econbench.stats``: the t quantile against published table values, the summary and
paired differences against hand-computed numbers, and the seeds needed for a half-width."""

from __future__ import annotations

import math

import pytest

from econbench.runs.coffee.report import comparison_pairs
from econbench.stats import (
    EXPANSION_DF,
    paired_differences,
    sample_sd,
    seeds_for_half_width,
    summarize,
    t_central_probability,
    t_factor,
    t_quantile,
)

# t_{0.975, df} from standard tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2), 6 decimals.
T975 = {
    1: 12.706205,
    2: 4.302653,
    3: 3.182446,
    4: 2.776445,
    5: 2.570582,
    9: 2.262157,
    10: 2.228139,
    16: 2.119905,
    17: 2.109816,
    19: 2.093024,
    29: 2.045230,
    30: 2.042272,
    60: 2.000298,
    62: 1.998972,
    100: 1.983972,
    1000: 1.962339,
}


@pytest.mark.parametrize(("df", "want"), sorted(T975.items()))
def test_t_quantile_matches_the_table(df: int, want: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(want, abs=1e-6)


def test_t_quantile_other_levels_and_the_normal_limit() -> None:
    assert t_quantile(0.995, 1) == pytest.approx(63.656741, abs=1e-6)
    assert t_quantile(0.95, 5) == pytest.approx(2.015048, abs=1e-6)
    assert t_quantile(0.995, 10) == pytest.approx(3.169273, abs=1e-6)
    # past EXPANSION_DF the quantile comes from Fisher's expansion; it joins the series
    df = EXPANSION_DF
    assert t_quantile(0.975, df + 1) == pytest.approx(t_quantile(0.975, df), abs=1e-5)
    assert t_quantile(0.975, df + 1) < t_quantile(0.975, df)
    assert t_quantile(0.975, 2000) == pytest.approx(1.961151, abs=1e-6)
    assert t_quantile(0.975, 10**7) == pytest.approx(1.959964, abs=1e-6)
    with pytest.raises(ValueError):
        t_quantile(0.4, 3)


def test_t_central_probability_in_closed_form() -> None:
    # df = 1 (Cauchy): P(|T| ≤ 1) = 2·atan(1)/π = 1/2; df = 2: t / sqrt(t² + 2)
    assert t_central_probability(1.0, 1) == pytest.approx(0.5)
    assert t_central_probability(math.sqrt(2), 2) == pytest.approx(1 / math.sqrt(2))
    # df = 3: (2/π)(θ + sinθ cosθ), θ = atan(t/√3); at t = √3, θ = π/4
    assert t_central_probability(math.sqrt(3), 3) == pytest.approx(
        2 / math.pi * (math.pi / 4 + 0.5)
    )
    assert t_central_probability(0.0, 5) == 0.0
    with pytest.raises(ValueError):
        t_central_probability(1.0, 0)


def test_summary_by_hand() -> None:
    s = summarize([1, 2, 3, 4])
    # mean 2.5; SD = sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3) = sqrt(5/3)
    sd = math.sqrt(5 / 3)
    half = 3.182446 * sd / 2
    assert (s.n, s.mean, s.min, s.max) == (4, 2.5, 1, 4)
    assert s.sd == pytest.approx(sd)
    assert (s.ci_lo, s.ci_hi) == (pytest.approx(2.5 - half), pytest.approx(2.5 + half))
    assert s.half_width == pytest.approx(half) and s.has_interval
    assert t_factor(4) == pytest.approx(3.182446, abs=1e-6)


def test_one_value_has_no_sd_and_no_interval_and_none_has_nothing() -> None:
    one = summarize([7.0])
    assert (one.n, one.mean, one.min, one.max) == (1, 7.0, 7.0, 7.0)
    assert math.isnan(one.sd) and math.isnan(one.ci_lo) and math.isnan(one.half_width)
    assert not one.has_interval
    assert math.isnan(t_factor(1)) and math.isnan(sample_sd([7.0]))
    none = summarize([])
    assert none.n == 0 and math.isnan(none.mean) and not none.has_interval


def test_paired_differences_use_only_the_common_seeds() -> None:
    a = {0: 10.0, 1: 20.0, 2: 30.0, 5: 1.0}
    b = {2: 29.0, 0: 12.0, 1: 25.0, 7: 3.0}
    pair = paired_differences(a, b)
    # b − a on 0, 1, 2: 2, 5, −1; mean 2; SD = sqrt((0 + 9 + 9) / 2) = 3
    assert pair.common == [0, 1, 2]
    assert (pair.only_a, pair.only_b) == ([5], [7])
    assert pair.diff.n == 3 and pair.diff.mean == pytest.approx(2.0)
    assert pair.diff.sd == pytest.approx(3.0)
    half = 4.302653 * 3 / math.sqrt(3)
    assert pair.diff.ci_lo == pytest.approx(2 - half, abs=1e-5)
    assert pair.diff.ci_hi == pytest.approx(2 + half, abs=1e-5)
    assert pair.excludes_zero is False


def test_a_consistent_difference_excludes_zero_and_one_seed_says_nothing() -> None:
    pair = paired_differences({1: 0.0, 2: 0.0, 3: 0.0}, {1: -10.0, 2: -11.0, 3: -12.0})
    # mean −11, SD 1, half-width 4.302653 / √3 = 2.484: wholly below 0
    assert pair.diff.ci_hi == pytest.approx(-11 + 4.302653 / math.sqrt(3), abs=1e-5)
    assert pair.excludes_zero is True
    single = paired_differences({1: 0.0, 2: 5.0}, {2: 8.0, 3: 1.0})
    assert single.diff.n == 1 and single.diff.mean == 3.0
    assert single.excludes_zero is None
    assert paired_differences({1: 0.0}, {2: 0.0}).diff.n == 0


def test_unseeded_keys_never_pair_and_sort_after_the_seeds() -> None:
    pair = paired_differences({"run:/x": 1.0, 3: 1.0, 1: 2.0}, {1: 2.0, 3: 4.0})
    assert pair.common == [1, 3] and pair.only_a == ["run:/x"]


def test_seeds_for_half_width_at_the_boundary() -> None:
    # paired, SD 1000, ±500: t_16 · 1000 / √17 = 514.2 > 500, t_17 · 1000 / √18 = 497.3
    assert T975[16] * 1000 / math.sqrt(17) > 500 >= T975[17] * 1000 / math.sqrt(18)
    assert seeds_for_half_width(1000, 500) == 18
    # unpaired, SD 1000 in each: t_{2n−2} · 1000 · √(2/n); n = 31: 508.1, n = 32: 499.7
    assert T975[60] * 1000 * math.sqrt(2 / 31) > 500 >= T975[62] * 1000 * math.sqrt(2 / 32)
    assert seeds_for_half_width(1000, 500, paired=False) == 32
    assert seeds_for_half_width(0.0, 500) == 2  # no spread: the fewest seeds with an interval
    assert seeds_for_half_width(math.nan, 500) is None
    big = seeds_for_half_width(20_000, 500)  # ≈ (1.96 · 40)² = 6147 seeds
    assert big is not None and 6_100 < big < 6_200


def test_comparison_pairs_every_pair_up_to_six_else_against_the_first() -> None:
    labels = [f"c{i}" for i in range(7)]
    assert comparison_pairs(labels[:3]) == [("c0", "c1"), ("c0", "c2"), ("c1", "c2")]
    assert len(comparison_pairs(labels[:6])) == 15
    assert comparison_pairs(labels) == [("c0", f"c{i}") for i in range(1, 7)]
    assert comparison_pairs(labels[:1]) == []
