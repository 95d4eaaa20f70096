"""Vectorised numpy implementation of the features game: E episodes stepped at once.

It reproduces :class:`econbench.allo.gym.envs.AlloFeaturesEnv` exactly (same observations,
rewards, terminations and episode results for the same streams and actions), but each
``step`` resolves one decision in every live episode with array operations: the next decision
turn is the first later position whose class has no tool, the automatic turns in between are
collected, and an episode whose budget reaches 0 scores its tail and terminates.

Finished episodes stay finished until the next :meth:`VectorFeaturesGame.reset`: their
actions are ignored, their reward is 0 and their observation is all zeros (no auto-reset, so
that every episode's result stays inspectable; RL loops reset a fresh batch of seeds).

Streams from seeds are drawn as the gym envs and the runner draw them: ``stream_budget="fixed"``
(default, the paper's protocol) with the config's budget (3) whatever B is, ``"cell"`` with B.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from econbench.allo.game import Commit, EpisodeResult, hindsight_opt
from econbench.allo.game.stream import (
    Stream,
    StreamBudget,
    StreamConfig,
    generate_stream,
    stream_config_for,
)
from econbench.allo.gym.envs import N_FEATURES, SIGHTING_SCALE, RewardMode


class VectorFeaturesGame:
    """Many AlloBench features-game episodes in lockstep (one decision per episode per step)."""

    def __init__(
        self,
        config: StreamConfig | None = None,
        cost: float = 0.0,
        budget: int | None = None,
        reward_mode: RewardMode = "collects",
        stream_budget: StreamBudget = "fixed",
    ) -> None:
        self.config = config or StreamConfig()
        self.cost = float(cost)
        self.budget = self.config.budget if budget is None else int(budget)
        if self.budget < 1 or self.cost < 0:
            raise ValueError("budget must be >= 1 and cost >= 0")
        self.stream_budget = stream_budget
        self.config = stream_config_for(self.config, self.budget, stream_budget)  # as the runner
        if reward_mode not in ("collects", "stream"):
            raise ValueError("reward_mode must be 'collects' or 'stream'")
        self.reward_mode = reward_mode
        self.streams: list[Stream] = []

    @property
    def n_envs(self) -> int:
        return len(self.streams)

    def reset(self, seeds: Sequence[int] | Sequence[Stream]) -> np.ndarray:
        """Start one episode per seed (or per given stream); returns the observations (E, 6)."""
        streams = [
            s if isinstance(s, Stream) else generate_stream(int(s), self.config) for s in seeds
        ]
        if not streams:
            raise ValueError("reset needs at least one seed")
        T, N = streams[0].config.n_tasks, streams[0].config.n_classes
        if any(s.config.n_tasks != T or s.config.n_classes != N for s in streams):
            raise ValueError("all streams must share n_tasks and n_classes")
        self.streams = streams
        E, B = len(streams), self.budget
        self.T, self.N = T, N
        self.classes = np.array([s.classes for s in streams], dtype=np.int64)  # (E, T)
        onehot = np.zeros((E, T, N), dtype=np.int16)
        onehot[np.arange(E)[:, None], np.arange(T)[None, :], self.classes] = 1
        self.cum = np.cumsum(onehot, axis=1, dtype=np.int16)  # sightings at positions <= p
        self.totals = self.cum[:, -1, :].astype(np.int64)
        seen = self.cum > 0
        self.first_seen = np.where(seen.any(axis=1), seen.argmax(axis=1), T)  # (E, N)
        self.early = np.array([s.config.early_window for s in streams])[:, None]
        self.is_hot = np.zeros((E, N), dtype=bool)
        for e, s in enumerate(streams):
            self.is_hot[e, list(s.hot)] = True
        self.t = np.zeros(E, dtype=np.int64)
        self.budget_left = np.full(E, B, dtype=np.int64)
        self.built = np.zeros((E, N), dtype=bool)
        self.collected = np.zeros(E, dtype=np.int64)
        self.n_commits = np.zeros(E, dtype=np.int64)
        self.commit_t = np.zeros((E, B), dtype=np.int64)
        self.commit_cls = np.zeros((E, B), dtype=np.int64)
        self.commit_sighting = np.zeros((E, B), dtype=np.int64)
        self.done = np.zeros(E, dtype=bool)
        self._rows = np.arange(E)
        return self.observe()

    # -- views ----------------------------------------------------------------------------
    def current_class(self) -> np.ndarray:
        return self.classes[self._rows, np.minimum(self.t, self.T - 1)]

    def sightings(self) -> np.ndarray:
        """Sightings of the current class (including this turn), per episode."""
        t = np.minimum(self.t, self.T - 1)
        return self.cum[self._rows, t, self.current_class()].astype(np.int64)

    def observe(self) -> np.ndarray:
        """(E, 6) float32 features, identical to ``AlloFeaturesEnv``'s."""
        t = np.minimum(self.t, self.T - 1)
        cls = self.current_class()
        counts = self.cum[self._rows, t, :]
        unkept_seen = ((counts > 0) & ~self.built).sum(axis=1)
        early = (self.first_seen[self._rows, cls] < self.early[:, 0]).astype(np.float64)
        cost_feat = min(np.float64(self.cost) / self.T, 1.0)
        obs = np.stack(
            [
                self.t.astype(np.float64) / self.T,
                self.budget_left.astype(np.float64) / self.budget,
                np.minimum(self.sightings(), SIGHTING_SCALE).astype(np.float64) / SIGHTING_SCALE,
                unkept_seen.astype(np.float64) / self.N,
                np.full(len(self.t), cost_feat),
                early,
            ],
            axis=1,
        ).astype(np.float32)
        obs[self.done] = 0.0
        assert obs.shape[1] == N_FEATURES
        return obs

    # -- stepping -------------------------------------------------------------------------
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one action per episode (0 PASS, 1 KEEP); returns (obs, reward, done, info)."""
        actions = np.asarray(actions).reshape(-1)
        if actions.shape != (self.n_envs,) or not np.isin(actions, (0, 1)).all():
            raise ValueError(f"actions must be {self.n_envs} values in {{0, 1}}")
        live = ~self.done
        rows = self._rows
        t = np.minimum(self.t, self.T - 1)
        cls = self.current_class()
        sight = self.sightings()
        keep = live & (actions == 1)
        reward = np.zeros(self.n_envs)

        k = np.flatnonzero(keep)
        slot = self.n_commits[k]
        self.commit_t[k, slot] = t[k]
        self.commit_cls[k, slot] = cls[k]
        self.commit_sighting[k, slot] = sight[k]
        self.n_commits[k] += 1
        self.built[k, cls[k]] = True
        self.budget_left[k] -= 1
        self.collected[k] += 1
        if self.reward_mode == "collects":
            reward[k] = self.totals[k, cls[k]] - sight[k] + 1 - self.cost

        # positions after t whose class has a tool (collected automatically)
        tooled = self.built[rows[:, None], self.classes]  # (E, T)
        later = np.arange(self.T)[None, :] > t[:, None]
        spent = live & (self.budget_left == 0)
        tail = (tooled & later).sum(axis=1)
        nxt_mask = later & ~tooled
        has_next = nxt_mask.any(axis=1)
        nxt = np.where(has_next, nxt_mask.argmax(axis=1), self.T)
        auto = np.where(spent, tail, nxt - t - 1)
        auto = np.where(live, auto, 0)
        self.collected += auto
        if self.reward_mode == "stream":
            reward = (keep + auto) - self.cost * keep
        self.t = np.where(live & ~spent, nxt, np.where(spent, self.T, self.t))
        self.done = self.done | (live & (spent | (nxt >= self.T)))
        return self.observe(), reward, self.done.copy(), {}

    # -- results --------------------------------------------------------------------------
    def utility(self) -> np.ndarray:
        return self.collected - self.cost * self.n_commits

    def results(self) -> list[EpisodeResult]:
        """Per-episode results, identical to :meth:`Game.result` on the same actions."""
        out = []
        for e, s in enumerate(self.streams):
            commits = []
            for j in range(int(self.n_commits[e])):
                c, sg = int(self.commit_cls[e, j]), int(self.commit_sighting[e, j])
                commits.append(
                    Commit(
                        t=int(self.commit_t[e, j]),
                        cls=c,
                        sighting=sg,
                        first_sight=sg == 1,
                        trap=not bool(self.is_hot[e, c]),
                        collects=int(self.totals[e, c]) - sg + 1,
                    )
                )
            out.append(
                EpisodeResult(
                    seed=s.seed,
                    cost=self.cost,
                    budget=self.budget,
                    n_tasks=self.T,
                    collected=int(self.collected[e]),
                    commits=commits,
                    utility=float(self.collected[e] - self.cost * len(commits)),
                    opt=hindsight_opt(s, self.cost, self.budget),
                    trap_commits=sum(c.trap for c in commits),
                    unused_budget=int(self.budget_left[e]),
                    hot_never_tooled=int((self.is_hot[e] & ~self.built[e]).sum()),
                )
            )
        return out
