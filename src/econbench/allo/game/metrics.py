"""Scores of a set of episodes of one configuration (docs/allobench.md §2).

Definitions (where the spec is silent, the choice is written here):

- ``score`` is the paper's pooled ratio Σ utility / Σ OPT; ``None`` when Σ OPT = 0.
- Per-episode score: utility / OPT when OPT > 0. An episode with OPT = 0 (every class occurs
  at most K times, or B = 0) scores 1 if its utility is 0, else ``1 + utility / K`` (utility is
  then ≤ 0, and each build that collects nothing costs one point). ``score_mean`` is their mean
  and ``score_ci`` a 95 % percentile bootstrap interval of that mean (``n_boot`` resamples of the
  episodes, generator seeded by ``(seed, BOOT_SALT)``).
- ``first_sight_rate`` pools the commits of all episodes (episodes without commits add
  nothing): first-sight commits / commits; ``None`` without any commit. The per-episode average
  over episodes with commits is ``first_sight_rate_episode_mean``.
- ``lateness1_mean`` is the pooled mean sighting index at commit, 1-based (1 = first sight);
  the paper's lateness is 0-based (``lateness0_mean`` below, = ``lateness1_mean`` − 1). Summaries
  written before the two had distinct names call the 1-based one ``lateness_mean``:
  :func:`read_summary` gives an old summary the current names.
- Rebuilds (R3 overwrites) are not commits; they only cost budget and K.

The paper's outcome measures (its Appendix "Statistical Estimands"; docs/allobench.md §8):

- ``first_sight_hazard``: the committed share of *eligible* first-occurrence turns, pooled over
  the eligible turns of all episodes (zero-commit episodes included). A turn is eligible when its
  class has no tool, budget remains and the reply was valid: in econbench's episode records, a
  ``kind == "decision"`` turn with ``first_sight`` and ``resolved`` true (unresolved replies,
  token-cap turns included, are mechanical failures and leave both counts). It needs the turn
  records, so it is ``None`` when :func:`summarize` is not given ``records``;
  ``first_sight_eligible`` is the number of eligible turns (``None`` likewise). The paper's
  analysis scripts count every transcript turn at a first occurrence; they coincide when
  nothing is unresolved.
- ``net_mean``: mean net utility, collected − K · (builds + rebuilds) (the game's ``utility``);
  ``net_optimum_mean``: mean exact hindsight net optimum Σ over the best ≤ B classes of
  max(n_c − K, 0) (the game's ``opt``, prior-free: build those classes at first sight);
  ``regret_mean``: mean of optimum − net per episode, ``regret_se`` its standard error
  (ddof = 1; ``None`` for one episode). The pooled ratio ``score`` degenerates as the optimum
  goes to 0 (high K), so these are the headline outcomes of the κ grid.
- ``budget_utilisation``: mean over episodes of budget spent / B (builds plus R3 rebuilds, i.e.
  ``(B − unused) / B``; builds / B outside R3); ``zero_commit_incidence``: share of episodes
  without a build.
- ``lateness0_mean``: the paper's 0-based lateness, occurrence − 1 at commit, pooled over
  commits (= ``lateness1_mean`` − 1; 0 = first sight).

:func:`paired_bootstrap` is the paper's seed-paired bootstrap of a per-seed quantity (its κ-grid
interaction); :func:`paired_ratio_bootstrap` its comparison of two arms' pooled ratios (the
ladder and transfer tables: "difference the re-pooled ratios"), and :func:`pooled_ratio_ci` the
interval on one arm's pooled ratio.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from econbench.allo.game.core import EpisodeResult

BOOT_SALT = 0xB007
PAIRED_BOOT = 10_000
"""Resamples of the paper's paired seed bootstrap."""
PAIRED_BOOT_SEED = 0
"""Its RNG seed (Python's ``random.Random``, as in the paper's analysis code)."""


def episode_score(result: EpisodeResult) -> float:
    """One episode's score (see the module docstring for OPT = 0)."""
    if result.opt > 0:
        return result.utility / result.opt
    if result.utility == 0:
        return 1.0
    return 1.0 + result.utility / result.cost if result.cost > 0 else 1.0


def bootstrap_ci(
    values: np.ndarray, n_boot: int, seed: int, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean."""
    if len(values) == 1 or n_boot <= 0:
        m = float(values.mean())
        return m, m
    rng = np.random.default_rng([seed, BOOT_SALT])
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    means = values[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def first_sight_turns(turns: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """``(eligible, committed)`` first-occurrence turns of one episode's turn records.

    Eligible: a decision turn (class untooled, budget left) at the class's first occurrence
    whose reply was resolved; committed: those of them that committed."""
    eligible = committed = 0
    for turn in turns:
        if (
            turn.get("kind") == "decision"
            and turn.get("first_sight")
            and turn.get("resolved", True) is not False
        ):
            eligible += 1
            committed += bool(turn.get("commit"))
    return eligible, committed


def budget_spent(result: EpisodeResult) -> int:
    """Builds plus R3 rebuilds: the budget the episode used."""
    return result.budget - result.unused_budget


def _mean_or_none(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _se_or_none(values: np.ndarray) -> float | None:
    return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else None


def paper_measures(
    results: Sequence[EpisodeResult], records: Sequence[Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """The paper's outcome measures over one configuration's episodes (see the module
    docstring); ``records`` are the episodes' records (with ``turns``), in the same order."""
    net = np.array([r.utility for r in results], dtype=float)
    opt = np.array([r.opt for r in results], dtype=float)
    regret = opt - net
    eligible: int | None = None
    hazard: float | None = None
    if records is not None:
        if len(records) != len(results):
            raise ValueError("records and results differ in length")
        counts = [first_sight_turns(rec.get("turns", [])) for rec in records]
        eligible = sum(e for e, _ in counts)
        committed = sum(c for _, c in counts)
        hazard = committed / eligible if eligible else None
    commits = [c for r in results for c in r.commits]
    use = [budget_spent(r) / r.budget for r in results if r.budget > 0]
    return {
        "first_sight_hazard": hazard,
        "first_sight_eligible": eligible,
        "net_mean": float(net.mean()),
        "net_optimum_mean": float(opt.mean()),
        "regret_mean": float(regret.mean()),
        "regret_se": _se_or_none(regret),
        "budget_utilisation": _mean_or_none(use),
        "zero_commit_incidence": sum(not r.commits for r in results) / len(results),
        "lateness0_mean": _mean_or_none([c.sighting - 1 for c in commits]),
    }


@dataclass(frozen=True)
class PairedDifference:
    """A paired comparison of two arms: ``mean`` of the per-seed differences second − first
    over ``n`` shared seeds, with the ``[lo, hi]`` percentile bootstrap interval."""

    n: int
    mean: float
    lo: float
    hi: float


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics
    (numpy's default, and the paper's ``_percentile``)."""
    ordered = sorted(values)
    index = (len(ordered) - 1) * q
    lo = int(index)
    hi = min(lo + 1, len(ordered) - 1)
    weight = index - lo
    return ordered[lo] * (1 - weight) + ordered[hi] * weight


def paired_bootstrap(
    first: Mapping[int, float | None],
    second: Mapping[int, float | None],
    *,
    n_boot: int = PAIRED_BOOT,
    seed: int = PAIRED_BOOT_SEED,
    level: float = 0.95,
) -> PairedDifference | None:
    """The paper's paired seed bootstrap of ``second − first`` (per-seed values by seed).

    Seeds present in both arms with both values defined (a seed without commits has no
    among-commitments rate and is left out of that estimand) give the per-seed differences,
    in seed order; the point estimate is their mean. ``n_boot`` resamples of those differences
    with replacement, drawn with ``random.Random(seed).choices``, give the resampled means, and
    the interval is their percentile interval (linear interpolation). ``None`` without a shared
    seed. With the defaults this is the paper's procedure (10,000 resamples, RNG seed 0).
    """
    seeds = sorted(set(first) & set(second))
    diffs = [
        float(b) - float(a)
        for s in seeds
        if (a := first[s]) is not None
        and (b := second[s]) is not None
        and not (math.isnan(float(a)) or math.isnan(float(b)))
    ]
    if not diffs:
        return None
    n = len(diffs)
    mean = math.fsum(diffs) / n
    if n_boot <= 0:
        return PairedDifference(n, mean, mean, mean)
    rng = random.Random(seed)
    boot = [math.fsum(rng.choices(diffs, k=n)) / n for _ in range(n_boot)]
    alpha = (1.0 - level) / 2.0
    return PairedDifference(n, mean, percentile(boot, alpha), percentile(boot, 1.0 - alpha))


def _seed_resamples(n: int, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` resamples of ``n`` seed indices: the paper's ``boot_ratio_ci`` draws them
    with ``numpy.random.default_rng(seed).integers(0, n, size=(n_boot, n))``."""
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def pooled_ratio_ci(
    num: Sequence[float],
    den: Sequence[float],
    *,
    n_boot: int = PAIRED_BOOT,
    seed: int = PAIRED_BOOT_SEED,
    level: float = 0.95,
) -> PairedDifference | None:
    """Σ num / Σ den over seeds (one entry per seed) with the paper's seed-bootstrap percentile
    interval (``scripts/plotters/_common.py``, ``boot_ratio_ci``); ``None`` when Σ den = 0.
    Seeds with den = 0 (no commitment) stay in the resamples and add nothing."""
    a, b = np.asarray(num, float), np.asarray(den, float)
    if len(a) == 0 or b.sum() == 0:
        return None
    idx = _seed_resamples(len(a), n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = a[idx].sum(axis=1) / b[idx].sum(axis=1)
    boot = boot[np.isfinite(boot)]
    alpha = 100 * (1.0 - level) / 2.0
    return PairedDifference(
        len(a),
        float(a.sum() / b.sum()),
        float(np.percentile(boot, alpha)),
        float(np.percentile(boot, 100 - alpha)),
    )


def paired_ratio_bootstrap(
    first: tuple[Sequence[float], Sequence[float]],
    second: tuple[Sequence[float], Sequence[float]],
    *,
    n_boot: int = PAIRED_BOOT,
    seed: int = PAIRED_BOOT_SEED,
    level: float = 0.95,
) -> PairedDifference | None:
    """The paper's paired comparison of two arms on the same seeds: the difference of their
    re-pooled ratios, second − first (``(num, den)`` per seed, in the same seed order), with
    both arms re-pooled on each resample of the seeds; ``None`` when an arm has Σ den = 0."""
    a1, b1 = (np.asarray(x, float) for x in first)
    a2, b2 = (np.asarray(x, float) for x in second)
    if len(a1) == 0 or b1.sum() == 0 or b2.sum() == 0:
        return None
    idx = _seed_resamples(len(a1), n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = a2[idx].sum(axis=1) / b2[idx].sum(axis=1) - a1[idx].sum(axis=1) / b1[idx].sum(axis=1)
    boot = boot[np.isfinite(boot)]
    alpha = 100 * (1.0 - level) / 2.0
    return PairedDifference(
        len(a1),
        float(a2.sum() / b2.sum() - a1.sum() / b1.sum()),
        float(np.percentile(boot, alpha)),
        float(np.percentile(boot, 100 - alpha)),
    )


def summarize(
    results: list[EpisodeResult],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    records: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Aggregate the episodes of one configuration into the reported metrics; ``records``
    (the episodes' records, with ``turns``) add the first-sight hazard."""
    if not results:
        raise ValueError("no episodes to summarize")
    utility = np.array([r.utility for r in results], dtype=float)
    opt = np.array([r.opt for r in results], dtype=float)
    scores = np.array([episode_score(r) for r in results])
    commits = [c for r in results for c in r.commits]
    n_commits = len(commits)
    with_commits = [r for r in results if r.commits]
    per_episode_fs = [sum(c.first_sight for c in r.commits) / len(r.commits) for r in with_commits]
    lo, hi = bootstrap_ci(scores, n_boot, seed)
    return {
        "episodes": len(results),
        "score": float(utility.sum() / opt.sum()) if opt.sum() > 0 else None,
        "score_mean": float(scores.mean()),
        "score_ci": [lo, hi],
        "first_sight_rate": (
            sum(c.first_sight for c in commits) / n_commits if n_commits else None
        ),
        "first_sight_rate_episode_mean": (
            float(np.mean(per_episode_fs)) if per_episode_fs else None
        ),
        "utility_mean": float(utility.mean()),
        "opt_mean": float(opt.mean()),
        "collected_mean": float(np.mean([r.collected for r in results])),
        "commits_mean": n_commits / len(results),
        "trap_commits_mean": float(np.mean([r.trap_commits for r in results])),
        "unused_budget_mean": float(np.mean([r.unused_budget for r in results])),
        "hot_never_tooled_mean": float(np.mean([r.hot_never_tooled for r in results])),
        "lateness1_mean": (float(np.mean([c.sighting for c in commits])) if n_commits else None),
        "rebuilds_mean": float(np.mean([r.rebuilds for r in results])),
        **paper_measures(results, records),
    }


LEGACY_NAMES: dict[str, str] = {"lateness_mean": "lateness1_mean", "cost": "build_cost"}
"""Summary keys under their earlier names → their current names (the 1-based lateness was
``lateness_mean`` before the paper's 0-based one was added beside it; the build charge K was
``cost``, beside the model's ``cost_usd``)."""


def read_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A summary (a ``summary.json``, a sweep row) under the current metric names: an old
    summary's ``lateness_mean`` becomes ``lateness1_mean``, and ``lateness0_mean`` is derived
    from it when missing (both pool the same commits). A current summary comes back unchanged
    (as a new dict); an old name is not kept beside the new one."""
    out = dict(summary)
    for old, new in LEGACY_NAMES.items():
        if old in out:
            value = out.pop(old)
            out.setdefault(new, value)
    late1 = out.get("lateness1_mean")
    if "lateness1_mean" in out and "lateness0_mean" not in out:
        out["lateness0_mean"] = None if late1 is None else float(late1) - 1.0
    return out
