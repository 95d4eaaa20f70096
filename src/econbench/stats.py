"""Small-sample statistics for scores over seeds: mean, sample SD, Student-t intervals, paired
differences on common seeds, and how many seeds an interval of a given half-width needs.

A benchmark score over a handful of seeds is noisy (one extra read-only tool call can move
CoffeeBench's score by $1,000), so a difference between two configurations is read only with
its interval. The t quantile is computed here rather than taken from scipy (not a
dependency): for an integer number of degrees of freedom the Student-t distribution function
has a closed form, a finite trigonometric series (Abramowitz & Stegun 26.7.3–4), which is
inverted by bisection to float precision. ``tests/test_stats.py`` checks it
against published table values.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import NormalDist

LEVEL = 0.95
"""The confidence level of every interval unless one is asked for."""


# -- the t distribution -------------------------------------------------------------------------


def t_central_probability(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with ``df`` (integer ≥ 1) degrees of freedom, in closed
    form (A&S 26.7.3 for odd ``df``, 26.7.4 for even)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be ≥ 1, not {df}")
    if t <= 0:
        return 0.0
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:  # odd: (2/π)(θ + sin θ cos θ (1 + (2/3) cos²θ + (2·4)/(3·5) cos⁴θ + …))
        if df == 1:
            return 2 * theta / math.pi
        term, total = 1.0, 1.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    # even: sin θ (1 + (1/2) cos²θ + (1·3)/(2·4) cos⁴θ + …)
    term, total = 1.0, 1.0
    for k in range(1, df // 2):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return math.sin(theta) * total


EXPANSION_DF = 1000
"""Above this many degrees of freedom the quantile comes from Fisher's expansion (the series
would need df / 2 terms per evaluation); its error there is below 1e-12."""


def _t_quantile_expansion(p: float, df: int) -> float:
    """Fisher's asymptotic expansion of the t quantile in powers of 1/df (A&S 26.7.5)."""
    z = NormalDist().inv_cdf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (0.5 < p < 1) of Student's t with ``df`` degrees of freedom:
    ``t_quantile(0.975, 9)`` = 2.2622, the factor of a 95 % interval from 10 values."""
    if not 0.5 < p < 1:
        raise ValueError(f"p must be in (0.5, 1), not {p}")
    if df > EXPANSION_DF:
        return _t_quantile_expansion(p, df)
    target = 2 * p - 1  # P(|T| ≤ t) at the p quantile
    lo, hi = 0.0, max(1.0, NormalDist().inv_cdf(p))
    while t_central_probability(hi, df) < target:
        lo, hi = hi, 2 * hi
    while hi - lo > 1e-13 * hi:
        mid = (lo + hi) / 2
        if t_central_probability(mid, df) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def t_factor(n: int, level: float = LEVEL) -> float:
    """The two-sided ``level`` t factor for a mean of ``n`` values (df = n − 1); NaN for
    fewer than two values, which give no interval."""
    return t_quantile((1 + level) / 2, n - 1) if n >= 2 else math.nan


# -- one sample ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """A sample of per-seed values: n, mean, sample SD (ddof = 1), range and the Student-t
    interval of the mean. SD and interval are NaN below two values; everything is NaN for
    none."""

    n: int
    mean: float
    sd: float
    min: float
    max: float
    ci_lo: float
    ci_hi: float
    level: float = LEVEL

    @property
    def half_width(self) -> float:
        """Half the interval's width (NaN when there is no interval)."""
        return (self.ci_hi - self.ci_lo) / 2

    @property
    def has_interval(self) -> bool:
        return not math.isnan(self.ci_lo)


def sample_sd(values: Iterable[float]) -> float:
    """The sample standard deviation (ddof = 1); NaN for fewer than two values."""
    vals = [float(v) for v in values]
    n = len(vals)
    if n < 2:
        return math.nan
    mean = math.fsum(vals) / n
    return math.sqrt(math.fsum((v - mean) ** 2 for v in vals) / (n - 1))


def summarize(values: Iterable[float], level: float = LEVEL) -> Summary:
    """:class:`Summary` of ``values``: mean ± t_{(1+level)/2, n−1} · SD / √n."""
    vals = [float(v) for v in values]
    n = len(vals)
    if n == 0:
        return Summary(0, *(math.nan,) * 6, level=level)
    mean = math.fsum(vals) / n
    sd = sample_sd(vals)
    half = t_factor(n, level) * sd / math.sqrt(n) if n >= 2 else math.nan
    return Summary(n, mean, sd, min(vals), max(vals), mean - half, mean + half, level)


# -- paired differences -------------------------------------------------------------------------

Seed = Hashable


@dataclass(frozen=True)
class Paired:
    """``b − a`` on the seeds both have: the summary of the per-seed differences, the seeds
    used and those only one side has (left out of the pairing)."""

    diff: Summary
    common: list[Seed]
    only_a: list[Seed] = field(default_factory=list)
    only_b: list[Seed] = field(default_factory=list)

    @property
    def excludes_zero(self) -> bool | None:
        """Whether the interval lies wholly above or below 0; ``None`` with no interval."""
        if not self.diff.has_interval:
            return None
        return self.diff.ci_lo > 0 or self.diff.ci_hi < 0


def _seed_order(seeds: Iterable[Seed]) -> list[Seed]:
    """Integers first in numeric order, then anything else by its text."""
    return sorted(
        seeds, key=lambda s: (not isinstance(s, int), s if isinstance(s, int) else 0, str(s))
    )


def paired_differences(
    a: Mapping[Seed, float], b: Mapping[Seed, float], level: float = LEVEL
) -> Paired:
    """``b[s] − a[s]`` over the seeds ``s`` in both, summarised; the other seeds are listed,
    not used: an unpaired seed would mix a configuration effect with a seed effect."""
    common = _seed_order(set(a) & set(b))
    diffs = [float(b[s]) - float(a[s]) for s in common]
    return Paired(
        summarize(diffs, level),
        common,
        _seed_order(set(a) - set(b)),
        _seed_order(set(b) - set(a)),
    )


# -- how many seeds ------------------------------------------------------------------------------


def seeds_for_half_width(
    sd: float, half_width: float, *, level: float = LEVEL, paired: bool = True
) -> int | None:
    """The fewest seeds n ≥ 2 whose ``level`` interval of a difference is at most
    ``half_width`` wide on either side, for values of standard deviation ``sd``.

    Paired (``sd`` of the per-seed differences): t_{n−1} · sd / √n ≤ half_width. Unpaired
    (``sd`` of one configuration's scores, both assumed equal; n seeds per configuration,
    pooled variance): t_{2n−2} · sd · √(2/n) ≤ half_width. ``None`` when ``sd`` is not a
    finite number.
    """
    if not math.isfinite(sd) or half_width <= 0:
        return None
    q = (1 + level) / 2
    scale = abs(sd) * (1.0 if paired else math.sqrt(2.0))
    # t > z, so n ≥ (z · scale / half_width)²: start there and step up.
    z = NormalDist().inv_cdf(q)
    n = max(2, math.floor((z * scale / half_width) ** 2))
    while True:
        df = n - 1 if paired else 2 * n - 2
        if t_quantile(q, df) * scale / math.sqrt(n) <= half_width:
            return n
        n += 1
