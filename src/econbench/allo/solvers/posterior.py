"""Exact Bayesian inference over the hidden hot set (docs/allobench.md §3), vectorised over states.

There are C(N, n_hot) hypotheses H for the hot set, uniform a priori (the labels are shuffled).
After ``t`` draws with per-class counts ``n_c`` the weight of H is

    w_H ∝ ρ^(Σ_{c∈H} n_c) · g_H,   ρ = p_hot / p_trap,

where ``g_H`` is the trap-early factor: with early window W = min(budget, T) (0 when the
condition is off) and E the set of classes seen among the first min(t, W) draws, g_H = 1 if
E ⊄ H (a trap was already seen early), else 1 − hot_mass^(W − t) for t < W and 0 for t ≥ W.

Given H the next draw (position t) is class c with probability p_H(c), except while t < W and
E ⊆ H, where the "at least one trap before W" condition tilts it: a trap gets
p_H(c) / (1 − h^m) and a hot class p_H(c) (1 − h^(m−1)) / (1 − h^m), m = W − t, h = hot_mass.
The expected number of occurrences of c at positions t..T−1 follows the same way.

The paper's fallback (overwriting an early position after ``max_redraws`` failed redraws) has
probability hot_mass^(W·(max_redraws+1)) (≈ 10^-424 at the defaults) and is ignored here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import combinations

import numpy as np

from econbench.allo.game.stream import StreamConfig


@dataclass(frozen=True)
class Posterior:
    """Posterior over the hot-set hypotheses for a batch of S states (all at draw count t)."""

    model: HotSetModel
    t: int  # number of draws observed
    pi: np.ndarray  # (S, nH) posterior probabilities
    contained: np.ndarray  # (S, nH) bool: E ⊆ H (no trap seen early yet under H)

    def hot_prob(self) -> np.ndarray:
        """(S, N): P(class c is hot | history)."""
        return self.pi @ self.model.hyp.astype(float)

    def _tilted(self) -> tuple[np.ndarray, np.ndarray]:
        """Split π into the untilted part and the part still under the early condition."""
        if self.t >= self.model.window:
            return self.pi, np.zeros_like(self.pi)
        tilted = self.pi * self.contained
        return self.pi - tilted, tilted

    def predictive(self) -> np.ndarray:
        """(S, N): probability that the next draw (position t) is class c."""
        m = self.model
        free, tilted = self._tilted()
        out = free @ m.p_given_h
        if self.t < m.window:
            out = out + tilted @ (m.p_given_h * m.tilt(m.window - self.t))
        return out

    def expected_future(self) -> np.ndarray:
        """(S, N): expected occurrences of class c at positions t..T−1."""
        m = self.model
        rest = max(m.n_tasks - self.t, 0)
        free, tilted = self._tilted()
        out = free @ (m.p_given_h * rest)
        if self.t < m.window:
            k = m.window - self.t
            per = m.p_given_h * (k * m.tilt(k) + (m.n_tasks - m.window))
            out = out + tilted @ per
        return out


@dataclass(frozen=True)
class HotSetModel:
    """The generator's likelihood structure, built from a :class:`StreamConfig`."""

    n_classes: int
    n_hot: int
    n_tasks: int
    hot_mass: float
    window: int  # early window W (0: no trap-early condition)

    @classmethod
    def from_config(cls, config: StreamConfig) -> HotSetModel:
        return cls(
            n_classes=config.n_classes,
            n_hot=config.n_hot,
            n_tasks=config.n_tasks,
            hot_mass=config.hot_mass,
            window=config.early_window,
        )

    @property
    def p_hot(self) -> float:
        return self.hot_mass / self.n_hot

    @property
    def p_trap(self) -> float:
        return (1.0 - self.hot_mass) / (self.n_classes - self.n_hot)

    @property
    def log_rho(self) -> float:
        return float(np.log(self.p_hot / self.p_trap))

    @cached_property
    def hyp(self) -> np.ndarray:
        """(nH, N) bool incidence matrix of the hypotheses, in lexicographic order."""
        rows = list(combinations(range(self.n_classes), self.n_hot))
        out = np.zeros((len(rows), self.n_classes), dtype=bool)
        for i, r in enumerate(rows):
            out[i, list(r)] = True
        return out

    @cached_property
    def p_given_h(self) -> np.ndarray:
        """(nH, N): p_H(c), the untilted draw probabilities."""
        return np.where(self.hyp, self.p_hot, self.p_trap)

    def tilt(self, m: int) -> np.ndarray:
        """(nH, N) factor on p_H(c) for a draw with m ≥ 1 early positions left, E ⊆ H."""
        h = self.hot_mass
        denom = 1.0 - h**m
        return np.where(self.hyp, (1.0 - h ** (m - 1)) / denom, 1.0 / denom)

    @cached_property
    def _hyp_float(self) -> np.ndarray:
        """(nH, N) the incidence matrix as floats (for a BLAS product)."""
        return self.hyp.astype(float)

    @cached_property
    def _hyp_bits(self) -> np.ndarray:
        """(nH,) bitmask of each hypothesis (N ≤ 62) for fast subset tests."""
        return (self.hyp.astype(np.int64) << np.arange(self.n_classes, dtype=np.int64)).sum(axis=1)

    def posterior(
        self, counts: np.ndarray, early: np.ndarray, t: int, row_of: np.ndarray | None = None
    ) -> Posterior:
        """Posterior for S states: ``counts`` (S, N) sightings, ``early`` (S, N) bool flags.

        With ``row_of`` (S',) the rows given are distinct histories and state s is row
        ``row_of[s]``: each row is computed once, and the result is the very numbers (and
        memory layout, which later products' last bits depend on) of a call with every
        state's row.
        """
        counts = np.atleast_2d(np.asarray(counts, dtype=np.int64))
        early = np.atleast_2d(np.asarray(early, dtype=bool))
        if row_of is not None and len(counts) < 2:
            # one row is laid out both ways at once and numpy would then sum it pairwise,
            # unlike the column-major sum of a call with every state's row
            counts, early, row_of = counts[row_of], early[row_of], None
        # (S, nH) Σ_{c∈H} n_c: sums of small integers, so a float product is exact (and far
        # cheaper than gathering (S, nH, n_hot) counts). Laid out column-major, as that
        # gather was: the layout decides the order of the sums below, hence their last bits.
        s_h = (self._hyp_float @ counts.T.astype(float)).T
        if self.n_classes <= 62:
            bits = (early.astype(np.int64) << np.arange(self.n_classes, dtype=np.int64)).sum(1)
            contained = (bits[:, None] & ~self._hyp_bits[None, :]) == 0
        else:
            contained = (early.astype(np.int64) @ (~self.hyp).T.astype(np.int64)) == 0
        log_w = s_h * self.log_rho
        if self.window > 0:
            if t >= self.window:
                log_w = np.where(contained, -np.inf, log_w)
            else:
                m = self.window - t
                log_w = np.where(
                    contained, log_w + np.log(-np.expm1(np.log(self.hot_mass) * m)), log_w
                )
        top = log_w.max(axis=1, keepdims=True)
        if not np.all(np.isfinite(top)):
            raise ValueError("history has probability 0 under the generator")
        w = np.exp(log_w - top)
        total = w.sum(axis=1, keepdims=True)
        pi = w / total
        if row_of is not None:
            # without the window's np.where the arrays keep s_h's column-major layout
            layout = np.asfortranarray if self.window == 0 else np.ascontiguousarray
            pi, contained = layout(pi[row_of]), contained[row_of]
        return Posterior(model=self, t=t, pi=pi, contained=contained)

    def posterior_from_history(self, history: tuple[int, ...] | list[int]) -> Posterior:
        """Posterior after observing the classes ``history`` (positions 0..t−1)."""
        counts = np.bincount(np.asarray(history, dtype=int), minlength=self.n_classes)
        early = np.zeros(self.n_classes, dtype=bool)
        early[list(history[: self.window])] = True
        return self.posterior(counts[None, :], early[None, :], len(history))
