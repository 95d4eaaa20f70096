"""Rewards, Monte-Carlo returns and value features of an episode's decisions (no torch).

The episode is replayed in the game (``econbench.allo.game.Game``) with the decisions the model
made, so the bookkeeping is the benchmark's own:

- reward of a KEEP = ``Commit.collects − K`` (``collects = n_c − sighting + 1``, the occurrences
  the build collects from this one on, counted over the whole stream even when the session ends
  early); reward of a PASS = 0;
- return of a decision = its reward plus the rewards of every later decision (undiscounted), so
  the first decision's return is the episode's net utility;
- features = ``econbench.allo.gym.envs.features_from_view`` at the decision (the public part of
  what the value baseline sees: t/T, budget fraction, sightings, unkept classes seen, K/T, early
  sighting);
- rate = the true draw probability of the decision's class, read from the stream (which classes
  are hot). It is *privileged*: the episode is already played when it is read, no prompt or
  observation carries it, and only the value baseline gets it (:func:`critic_inputs`, the
  paper's asymmetric critic, ``scripts/rl/rl_critic.py``). A baseline may use anything that
  does not depend on the action taken, so the policy gradient stays unbiased.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from econbench.allo.game import EpisodeResult, Game
from econbench.allo.game.stream import Stream, class_probabilities
from econbench.allo.gym.envs import features_from_view


@dataclass(frozen=True)
class DecisionOutcome:
    """One decision of an episode, scored."""

    t: int
    cls: int
    sighting: int
    budget_left: int
    keep: bool
    reward: float
    ret: float
    features: tuple[float, ...]
    rate: float  # privileged: for the critic only

    @property
    def first_sight(self) -> bool:
        return self.sighting == 1


def true_rate(stream: Stream, cls: int) -> float:
    """The probability that a draw of ``stream`` is class ``cls`` (hot or trap)."""
    return float(class_probabilities(stream.hot, stream.config)[cls])


def critic_inputs(outcome: DecisionOutcome, critic: str) -> tuple[float, ...]:
    """What the value baseline reads for a decision: the public features, plus the class's true
    rate when ``critic`` is ``"privileged"``."""
    if critic == "public":
        return outcome.features
    if critic == "privileged":
        return (*outcome.features, outcome.rate)
    raise ValueError(f"unknown critic {critic!r}; choose public or privileged")


def score_decisions(
    stream: Stream, keeps: Sequence[bool], *, cost: float, budget: int
) -> tuple[list[DecisionOutcome], EpisodeResult]:
    """Replay ``stream`` with the decisions ``keeps`` (in order); score every decision.

    Raises ``ValueError`` when the number of decisions is not what the game asks for.
    """
    game = Game(stream, cost=cost, budget=budget)
    window = stream.config.early_window
    rows: list[tuple[int, int, int, int, bool, float, tuple[float, ...]]] = []
    while not game.done:
        turn = game.turn()
        if not turn.needs_decision:
            game.step(False)
            continue
        if len(rows) >= len(keeps):
            raise ValueError(f"the game asks more than the {len(keeps)} decisions given")
        keep = bool(keeps[len(rows)])
        view = game.view()
        features = tuple(float(x) for x in features_from_view(view, window))
        n_commits = len(game.commits)
        game.step(keep)
        reward = float(game.commits[n_commits].collects - cost) if keep else 0.0
        rows.append((turn.t, turn.cls, turn.sighting, view.budget_left, keep, reward, features))
    if len(rows) != len(keeps):
        raise ValueError(f"the game asked {len(rows)} decisions, {len(keeps)} were given")
    rewards = np.array([r[5] for r in rows], dtype=float)
    returns = np.cumsum(rewards[::-1])[::-1] if len(rows) else rewards
    outcomes = [
        DecisionOutcome(t, c, s, b, k, r, float(g), f, true_rate(stream, c))
        for (t, c, s, b, k, r, f), g in zip(rows, returns, strict=True)
    ]
    return outcomes, game.result()
