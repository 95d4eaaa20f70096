"""AlloBench's pooled metrics over an Inspect eval's samples, computed by econbench's own code.

Each AlloBench sample is one episode per epoch; its score carries the episode's result
(``metadata["episode"]``, ``EpisodeResult.to_dict()``), and the task's epoch reducer
(:func:`pool_episodes`) keeps every epoch's (``metadata["episodes"]``: with ``--epochs N``
each seed is N episodes of its stream). The metrics rebuild those results and
hand them to ``econbench.allo.game.metrics.summarize`` — the function that writes a cell's
``summary.json`` — so ``score`` is the paper's pooled Σ utility / Σ OPT and
``first_sight_rate`` the first-sight commits over all commits, pooled over the episodes that
committed, exactly as ``econbench allo run`` and ``econbench report`` pool the same episodes.
A ratio with nothing to pool (Σ OPT = 0, no commit at all) is NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, ScoreReducer, metric, score_reducer

from econbench.allo.game import EpisodeResult
from econbench.allo.game.metrics import summarize

EPISODE_KEY = "episode"
"""The score metadata key holding the episode's ``EpisodeResult`` as a dict."""
EPISODES_KEY = "episodes"
"""The reduced score's metadata key holding every epoch's episode."""


def _episodes(score: Score) -> list[dict[str, Any]]:
    metadata = score.metadata or {}
    if isinstance(metadata.get(EPISODES_KEY), list):
        return [e for e in metadata[EPISODES_KEY] if isinstance(e, dict)]
    episode = metadata.get(EPISODE_KEY)
    return [episode] if isinstance(episode, dict) else []


def episode_results(scores: Sequence[SampleScore]) -> list[EpisodeResult]:
    """The episodes behind the scores (samples that played no episode add nothing)."""
    return [EpisodeResult.from_dict(e) for sample in scores for e in _episodes(sample.score)]


@score_reducer(name="pool_episodes")
def pool_episodes() -> ScoreReducer:
    """A seed's epochs as one score: the mean of their episode scores, and every episode
    kept for the pooled metrics (Inspect's own reducers keep the first epoch's metadata)."""

    def reduce(scores: list[Score]) -> Score:
        values = [float(s.as_float()) for s in scores]
        finite = [v for v in values if math.isfinite(v)]
        return Score(
            value=sum(finite) / len(finite) if finite else math.nan,
            explanation=f"{len(finite)} of {len(scores)} epochs played an episode",
            metadata={EPISODES_KEY: [e for s in scores for e in _episodes(s)]},
        )

    return reduce


def pooled(scores: Sequence[SampleScore], name: str) -> float:
    """One of ``summarize``'s pooled measures over the episodes; NaN when undefined."""
    results = episode_results(scores)
    if not results:
        return math.nan
    value: Any = summarize(results, n_boot=1)[name]
    return math.nan if value is None else float(value)


@metric
def pooled_score() -> Metric:
    """Σ utility / Σ OPT over the episodes (the paper's score)."""

    def compute(scores: list[SampleScore]) -> float:
        return pooled(scores, "score")

    return compute


@metric
def first_sight_rate() -> Metric:
    """First-sight commits / commits, pooled over the episodes."""

    def compute(scores: list[SampleScore]) -> float:
        return pooled(scores, "first_sight_rate")

    return compute
