"""Scores of a set of episodes of one configuration (spec §2).

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
- ``lateness_mean`` is the pooled mean sighting index at commit (1 = first sight).
- Rebuilds (R3 overwrites) are not commits; they only cost budget and K.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from econbench.allo.game import EpisodeResult

BOOT_SALT = 0xB007


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


def summarize(results: list[EpisodeResult], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Aggregate the episodes of one configuration into the reported metrics."""
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
        "lateness_mean": (float(np.mean([c.sighting for c in commits])) if n_commits else None),
        "rebuilds_mean": float(np.mean([r.rebuilds for r in results])),
    }
