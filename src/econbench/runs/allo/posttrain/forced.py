"""Forced-choice R0 evaluation: the model read exactly as training reads it.

Free-text evaluation (``transfer``) asks whether the model *writes* ``DECISION: KEEP``. A small
model may never write a readable decision at all (SmolLM2-135M rarely does), and then the
free-text table cannot show what training changed. This evaluation plays the R0 urn and its
reskins with the training policy itself: each decision is sampled from the two-way softmax
after the assistant prefix ``DECISION:`` (``rollout.DecisionActor``), at the training
temperature, so every decision is resolved. It measures what the update optimised, on the
evaluation seeds; the reskins (same words KEEP and PASS, other vocabulary) show whether it
transfers lexically. Base and adapted models draw from the same random numbers per episode
(common random numbers), so their difference is the policies' difference, not sampling luck.
R1 and R2 decide through tool calls and have no such reading.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from econbench.allo.game.stream import StreamConfig
from econbench.allo.paper.conditions import DEFAULT_CONDITION
from econbench.runs.allo.posttrain.config import train_framing
from econbench.runs.allo.posttrain.rollout import EpisodeRollout, LMPolicy, play_rollout

FORCED_SALT = 0xF0CE
SKINS: tuple[tuple[str, str], ...] = (
    ("r0", "default"),
    ("chest", "chest"),
    ("quiver", "quiver"),
    ("cauldron", "cauldron"),
)


def forced_rng(stream_seed: int) -> np.random.Generator:
    """The decision sampler of one evaluation episode (the same for every model)."""
    return np.random.default_rng([stream_seed, FORCED_SALT])


def forced_pooled(episodes: Sequence[EpisodeRollout]) -> dict[str, Any]:
    """Pooled forced-choice metrics: first-sight rate, score, KEEP rate."""
    outcomes = [o for ep in episodes for o in ep.outcomes]
    keeps = [o for o in outcomes if o.keep]
    utility = sum(ep.result.utility for ep in episodes if ep.result is not None)
    opt = sum(ep.result.opt for ep in episodes if ep.result is not None)
    return {
        "episodes": len(episodes),
        "decisions": len(outcomes),
        "commits": len(keeps),
        "first_sight_commits": sum(o.first_sight for o in keeps),
        "first_sight_rate": sum(o.first_sight for o in keeps) / len(keeps) if keeps else None,
        "keep_rate": len(keeps) / len(outcomes) if outcomes else None,
        "utility": utility,
        "opt": opt,
        "score": utility / opt if opt > 0 else None,
    }


def forced_choice(
    model: Any,
    tokenizer: Any,
    seeds: Sequence[int],
    *,
    temperature: float,
    tasks: int = 60,
    budget: int = 3,
    cost: float = 0.0,
    condition: str = DEFAULT_CONDITION,
    on_episode: Callable[[EpisodeRollout], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Forced-choice metrics on R0 and each reskin, keyed by rung (``r0``, ``chest``, …), in
    the rollouts' texts (``config.train_framing`` of ``condition``: ``frontier`` by default,
    ``no-n`` the urn without N, the paper's Run 1)."""
    policy = LMPolicy(model, tokenizer, temperature=temperature)
    config = StreamConfig(n_tasks=tasks)
    out: dict[str, dict[str, Any]] = {}
    for key, skin in SKINS:
        framing = train_framing(condition, skin=skin)
        episodes = []
        for seed in seeds:
            ep = play_rollout(
                policy,
                seed,
                forced_rng(seed),
                cost=cost,
                budget=budget,
                framing=framing,
                config=config,
            )
            episodes.append(ep)
            if on_episode is not None:
                on_episode(ep)
        out[key] = forced_pooled(episodes)
    out["reskins"] = _pool_rows([out[k] for k in ("chest", "quiver", "cauldron")])
    return out


def _pool_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    commits = sum(r["commits"] for r in rows)
    first = sum(r["first_sight_commits"] for r in rows)
    decisions = sum(r["decisions"] for r in rows)
    utility = sum(r["utility"] for r in rows)
    opt = sum(r["opt"] for r in rows)
    return {
        "episodes": sum(r["episodes"] for r in rows),
        "decisions": decisions,
        "commits": commits,
        "first_sight_commits": first,
        "first_sight_rate": first / commits if commits else None,
        "keep_rate": commits / decisions if decisions else None,
        "utility": utility,
        "opt": opt,
        "score": utility / opt if opt > 0 else None,
    }
