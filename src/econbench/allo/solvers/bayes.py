"""The Bellman-optimal ``bayes`` policy: backward induction over canonical belief states.

State before the draw at position t: the budget left b and, per class, (count, seen among the first
W draws, built). The posterior (see :mod:`econbench.allo.solvers.posterior`) depends on the counts
only through Σ_{c∈H} n_c and on the early flags, and classes are exchangeable, so a state is the
*multiset* of per-class codes ``count << 2 | early << 1 | built`` (a sorted byte row; b is implied
by B − #built). The recursion at a state s is

    V_t(s) = Σ_c P(c | s) · { 1 + V_{t+1}(s+c)                           if c is built
                            { max(V_{t+1}(s+c), 1 − K + V_{t+1}(s+c, built c))  otherwise,

with V_T = 0 and, once the budget is spent, the closed form V_t(s) = Σ_{c built} E[future
occurrences of c | s]. States are enumerated forwards level by level with numpy (unique over
byte keys), then valued backwards with vectorised predictive probabilities; each level keeps
only its sorted keys and values (≈16 bytes per state). Ties COMMIT vs PASS resolve to PASS.

Approximation (documented, measured). Exact at the defaults would be ~10^9 states (the
count of every class up to 60), so states record each class's count capped at ``cap``
(:data:`DEFAULT_CAP` = 4) and, with ``saturate`` (default), a class at the cap is treated by
the posterior as certainly hot (credited ``SATURATION`` extra sightings, ρ^60); without it, a
capped class is treated as seen exactly ``cap`` times (under-confident, measurably worse at
T = 60). Counts below the cap, the early flags, K, B, the trap-early factor and the
closed-form tail are exact. When the last unit is spent at t ≥ W the tail value is computed
from the level's own posterior updated with the drawn class (so the drawn class's count
enters even at the cap). ``cap=None`` is exact (needs T ≤ 63; feasible up to T ≈ 34).

The loss is measured without sampling noise: :meth:`BayesSolver.evaluate` runs the backward
pass of an exact solver with another actor's decisions (a capped solver, or a rule through
:class:`RuleActor`), giving that actor's exact expected net utility. Loss of the cap-4 policy
against the exact optimum: 4.8e-5 of 16.37 at T = 24, 1.0e-4 of 4.45 at T = 24 with K = 4,
5.0e-5 of 25.28 at N = 6, n_hot = 2, T = 30, and 5.1e-4 of 23.86 at T = 34 (cap 3: 1.0e-3 and
1.1e-2 at T = 24 and 34). The loss grows about tenfold per ten turns, so at T = 60 (not
solvable exactly) expect a few tenths of a point: there the cap-4 policy is statistically
level with ``posterior:0.88`` (−0.01 ± 0.04 utility per episode over 3,000 seeds; cap 5:
+0.02 ± 0.04). Read ``bayes`` at the defaults as near-optimal, not as a certified optimum;
``bayes:5`` (a larger solve, ~0.8 GB peak) is available.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from econbench.allo.game import GameView
from econbench.allo.game.stream import StreamConfig
from econbench.allo.solvers.posterior import HotSetModel

DEFAULT_CAP = 4
"""Count cap used for the default configuration (see the module docstring)."""

SATURATION = 60
"""Extra sightings credited to a class at the cap when ``saturate`` (ρ^60: certainly hot)."""

_MAX_EXACT_COUNT = 63  # count << 2 | flags must fit in one byte

SolveProgress = Callable[[int, int], None]
"""``on_progress(done, total)`` of a solve: its two passes count one step per turn each, so
``total`` is 2·T (a solve at the defaults takes seconds; exact ones, minutes)."""


def _keys(codes: np.ndarray) -> np.ndarray:
    """One sortable key per canonical (sorted) row of byte codes."""
    codes = np.ascontiguousarray(codes, dtype=np.uint8)
    s, n = codes.shape
    if n <= 8:
        padded = np.zeros((s, 8), dtype=np.uint8)
        padded[:, 8 - n :] = codes
        return padded.view(np.uint64).ravel()
    return codes.view(np.dtype((np.void, n))).ravel()


def _reinsert(rows: np.ndarray, i: int) -> np.ndarray:
    """Sort rows (in place) that were sorted before column i's entry grew.

    A code only grows (counts, flags and the built bit never fall), so one bubble pass from
    column i rightwards restores the order: the same rows as ``np.sort`` at a fraction of
    the cost (a sort of 8-byte rows pays per row; this pays per column).
    """
    for k in range(i, rows.shape[1] - 1):
        left, right = rows[:, k], rows[:, k + 1]
        low = np.minimum(left, right)
        rows[:, k + 1] = np.maximum(left, right)
        rows[:, k] = low
    return rows


def _rows(keys: np.ndarray, n: int) -> np.ndarray:
    """The code rows of :func:`_keys`' keys (their inverse)."""
    if keys.dtype == np.uint64:
        return keys.view(np.uint8).reshape(-1, 8)[:, 8 - n :]
    return keys.view(np.uint8).reshape(-1, n)


def _distinct(codes: np.ndarray) -> np.ndarray:
    """The distinct rows of canonical codes, in key order (a sort of the keys: cheaper than
    ``np.unique``'s argsort for ``return_index``, or its hash table without it)."""
    keys = np.sort(_keys(codes))
    fresh = np.ones(len(keys), dtype=bool)
    fresh[1:] = keys[1:] != keys[:-1]
    return _rows(keys[fresh], codes.shape[1])


@dataclass
class _Level:
    keys: np.ndarray  # sorted unique keys of the states with budget left at this level
    values: np.ndarray  # V_t for those states


class BayesSolver:
    """Solves the allocation MDP for one (config, cost, budget, cap) and answers Q-values."""

    def __init__(
        self,
        config: StreamConfig,
        cost: float = 0.0,
        budget: int | None = None,
        cap: int | None = DEFAULT_CAP,
        saturate: bool = True,
    ) -> None:
        self.config = config
        self.saturate = saturate
        self.cost = float(cost)
        self.budget = config.budget if budget is None else int(budget)
        limit = min(config.n_tasks, _MAX_EXACT_COUNT)
        if cap is None:
            if config.n_tasks > _MAX_EXACT_COUNT:
                raise ValueError(f"exact solve needs n_tasks <= {_MAX_EXACT_COUNT}; pass a cap")
            cap = limit
        if cap < 1:
            raise ValueError("cap must be >= 1")
        self.cap = min(cap, limit)
        self.exact = self.cap >= config.n_tasks
        self.model = HotSetModel.from_config(config)
        self.levels: list[_Level] = []
        self.n_states = 0
        self._solved = False
        self._codes_cache: list[np.ndarray] | None = None  # kept by evaluate() only

    # -- encoding -----------------------------------------------------------------------
    def encode(self, counts, early, built) -> np.ndarray:  # type: ignore[no-untyped-def]
        """Canonical sorted code rows from per-class arrays (S, N)."""
        return np.sort(self._raw_codes(counts, early, built), axis=1)

    def _raw_codes(self, counts, early, built) -> np.ndarray:  # type: ignore[no-untyped-def]
        """Unsorted code rows (slot i = class i), counts capped."""
        n = np.minimum(np.asarray(counts, dtype=np.int64), self.cap)
        codes = (n << 2) | (np.asarray(early, dtype=np.int64) << 1) | np.asarray(built, np.int64)
        return codes.astype(np.uint8)

    def _posterior(self, n: np.ndarray, e: np.ndarray, t: int, row_of=None):  # type: ignore[no-untyped-def]
        """Posterior of capped states; with ``saturate`` a class at the cap counts as certain
        (``row_of``: see :meth:`HotSetModel.posterior`)."""
        if self.saturate and not self.exact:
            n = np.where(n >= self.cap, n + SATURATION, n)
        return self.model.posterior(n, e, t, row_of)

    def _level_posterior(self, codes: np.ndarray, t: int):  # type: ignore[no-untyped-def]
        """Posterior of a level's states, computed once per distinct (counts, early) row:
        the built bits do not enter it, and states share rows (14× at the defaults)."""
        distinct, row_of = np.unique(_keys(codes >> 1), return_inverse=True)
        n, e, _ = self.decode(_rows(distinct, codes.shape[1]) << 1)
        return self._posterior(n, e, t, row_of.ravel())

    @staticmethod
    def decode(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        c = codes.astype(np.int64)
        return c >> 2, (c >> 1) & 1, c & 1

    # -- solving ------------------------------------------------------------------------
    def _successors(self, codes: np.ndarray, t: int, i: int, commit: bool) -> np.ndarray:
        """Sorted successor rows when slot i's class is drawn at position t."""
        c = codes[:, i].astype(np.int64)
        n = np.minimum((c >> 2) + 1, self.cap)
        e = ((c >> 1) & 1) | int(t < self.model.window)
        b = (c & 1) | int(commit)
        out = codes.copy()
        out[:, i] = ((n << 2) | (e << 1) | b).astype(np.uint8)
        return _reinsert(out, i)

    def _closed_form(self, codes: np.ndarray, t: int) -> np.ndarray:
        """Budget spent, before the draw at position t: expected future collections."""
        if t >= self.config.n_tasks or len(codes) == 0:
            return np.zeros(len(codes))
        n, e, b = self.decode(codes)
        post = self._posterior(n, e, t)
        return (post.expected_future() * b).sum(axis=1)

    def _lookup(self, level: _Level, codes: np.ndarray) -> np.ndarray:
        keys = _keys(codes)
        idx = np.searchsorted(level.keys, keys)
        idx = np.minimum(idx, len(level.keys) - 1)
        if not np.array_equal(level.keys[idx], keys):
            raise KeyError("state not in the solved state space")
        return level.values[idx]

    def _enumerate(self, on_level: Callable[[], None] | None = None) -> list[np.ndarray]:
        """Forward pass: the canonical states with budget left at every level t."""
        T, N, B = self.config.n_tasks, self.config.n_classes, self.budget
        codes_by_t: list[np.ndarray] = []
        cur = np.zeros((1, N), dtype=np.uint8) if B > 0 else np.zeros((0, N), dtype=np.uint8)
        for t in range(T):
            if on_level is not None:
                on_level()
            codes_by_t.append(cur)
            if t == T - 1 or len(cur) == 0:
                cur = np.zeros((0, N), dtype=np.uint8)
                continue
            n_built = (cur & 1).sum(axis=1)
            parts = []
            for i in range(N):
                parts.append(self._successors(cur, t, i, commit=False))
                alive = ((cur[:, i] & 1) == 0) & (B - n_built - 1 > 0)
                if alive.any():
                    parts.append(self._successors(cur[alive], t, i, commit=True))
            cur = _distinct(np.concatenate(parts))
        return codes_by_t

    def _backward(
        self,
        codes_by_t: list[np.ndarray],
        actor: BayesSolver | None,
        on_level: Callable[[], None] | None = None,
    ) -> list[_Level]:
        """Backward pass: V_t per level; actions are optimal, or ``actor``'s if given."""
        T, N, B = self.config.n_tasks, self.config.n_classes, self.budget
        levels: list[_Level] = [_Level(_keys(np.zeros((0, N), np.uint8)), np.zeros(0))] * (T + 1)
        for t in range(T - 1, -1, -1):
            if on_level is not None:
                on_level()
            codes = codes_by_t[t]
            nxt = levels[t + 1]
            if len(codes) == 0:
                levels[t] = _Level(keys=_keys(codes), values=np.zeros(0))
                continue
            b = (codes & 1).astype(np.int64)
            post = self._level_posterior(codes, t)
            pred = post.predictive()
            n_built = b.sum(axis=1)
            spent = self._spent_values(post, b, pred) if t >= self.model.window else None
            v = np.zeros(len(codes))
            for i in range(N):
                succ_pass = self._successors(codes, t, i, False)
                v_pass = self._lookup(nxt, succ_pass) if t + 1 < T else np.zeros(len(codes))
                contrib = np.where(b[:, i] == 1, 1.0 + v_pass, v_pass)
                rows = np.flatnonzero(b[:, i] == 0)
                if len(rows):
                    last = (B - n_built[rows] - 1) == 0
                    # with the closed form straight from this level's posterior, no one
                    # looks up a last unit's successor (an actor judges every commit)
                    lean = spent is not None and actor is None
                    succ = None if lean else self._successors(codes[rows], t, i, True)
                    if spent is not None:
                        v_commit = np.zeros(len(rows))
                        v_commit[last] = spent[rows[last], i]
                        if (~last).any() and t + 1 < T:
                            ahead = (
                                self._successors(codes[rows[~last]], t, i, True)
                                if succ is None
                                else succ[~last]
                            )
                            v_commit[~last] = self._lookup(nxt, ahead)
                    else:
                        v_commit = self._commit_values(succ, last, t + 1, nxt)
                    q = 1.0 - self.cost + v_commit
                    if actor is None:
                        commit = q > v_pass[rows] + 1e-12
                    else:
                        commit = actor._prefers_commit(
                            codes[rows], i, succ_pass[rows], succ, last, t
                        )
                    contrib[rows] = np.where(commit, q, v_pass[rows])
                v += pred[:, i] * contrib
            # the forward pass left each level's rows in key order (np.unique sorts)
            levels[t] = _Level(keys=_keys(codes), values=v)
        return levels

    def _spent_values(self, post, built: np.ndarray, pred: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
        """(S, N): value after committing to slot i's class with the last budget unit.

        Valid for t ≥ W (no trap-early tilt left): the posterior after drawing i is
        π'_H ∝ π_H p_H(i), and every built class c then recurs p_H(c) per remaining turn, so
        V = (T − t − 1) Σ_H π_H p_H(i) (Σ_{c∈built} p_H(c) + p_H(i)) / P(i).
        """
        p = self.model.p_given_h
        bsum = built.astype(float) @ p.T  # (S, nH)
        num = (post.pi * bsum) @ p + post.pi @ (p * p)
        rest = self.config.n_tasks - post.t - 1
        with np.errstate(divide="ignore", invalid="ignore"):
            out = rest * num / pred
        return np.where(pred > 0, out, 0.0)

    def _commit_values(
        self, succ: np.ndarray, last: np.ndarray, t1: int, nxt: _Level
    ) -> np.ndarray:
        """V_{t1} of commit successors (closed form where the budget is now spent)."""
        out = np.zeros(len(succ))
        if last.any():
            out[last] = self._closed_form(succ[last], t1)
        if (~last).any() and t1 < self.config.n_tasks:
            out[~last] = self._lookup(nxt, succ[~last])
        return out

    def _recap(self, codes: np.ndarray) -> np.ndarray:
        n, e, b = self.decode(codes)
        return self.encode(n, e, b)

    def _prefers_commit(
        self,
        pre: np.ndarray,
        i: int,
        succ_pass: np.ndarray,
        succ_commit: np.ndarray,
        last: np.ndarray,
        t: int,
    ) -> np.ndarray:
        """This solver's decisions, for states given in another solver's encoding.

        ``pre`` are the level-t rows, ``i`` the slot of the drawn class, ``succ_*`` the
        successors at t + 1, ``last`` marks commits that spend the last budget unit.
        """
        self.solve()
        nxt = self.levels[t + 1]
        sp, sc = self._recap(succ_pass), self._recap(succ_commit)
        T = self.config.n_tasks
        v_pass = self._lookup(nxt, sp) if t + 1 < T else np.zeros(len(sp))
        v_commit = np.zeros(len(sc))
        if last.any():
            v_commit[last] = self._last_values(pre[last], i, t, sc[last])
        if (~last).any() and t + 1 < T:
            v_commit[~last] = self._lookup(nxt, sc[~last])
        return 1.0 - self.cost + v_commit > v_pass + 1e-12

    def _last_values(self, pre: np.ndarray, i: int, t: int, succ: np.ndarray) -> np.ndarray:
        """Value of committing slot i's class with the last unit, as :meth:`_backward` does."""
        if t < self.model.window:
            return self._closed_form(succ, t + 1)
        n, e, b = self.decode(pre)
        post = self._posterior(np.minimum(n, self.cap), e, t)
        return self._spent_values(post, b, post.predictive())[:, i]

    def solve(self, on_progress: SolveProgress | None = None) -> BayesSolver:
        """Enumerate the reachable states and value them (idempotent); ``on_progress`` hears
        of each turn of either pass (see :data:`SolveProgress`)."""
        if not self._solved:
            total, done = 2 * self.config.n_tasks, 0

            def step() -> None:
                nonlocal done
                if on_progress is not None:
                    on_progress(done, total)
                done += 1

            codes_by_t = self._enumerate(step)
            self.n_states = sum(len(c) for c in codes_by_t)
            self.levels = self._backward(codes_by_t, None, step)
            self._solved = True
            if on_progress is not None:
                on_progress(total, total)
        return self

    def evaluate(self, actor: BayesSolver) -> float:
        """Exact expected net utility, under this solver's model, of ``actor``'s decisions.

        Used to measure the loss of a capped solver against the exact optimum: build this
        solver with ``cap=None`` and pass the capped one as ``actor``.
        """
        if self.budget == 0:
            return 0.0
        if self._codes_cache is None:
            self._codes_cache = self._enumerate()
        levels = self._backward(self._codes_cache, actor)
        return float(levels[0].values[0])

    # -- querying -----------------------------------------------------------------------
    @property
    def value0(self) -> float:
        """Optimal expected net utility of a fresh episode."""
        self.solve()
        if self.budget == 0:
            return 0.0
        return float(self.levels[0].values[0])

    def q_values(self, view: GameView) -> tuple[float, float]:
        """(Q_pass, Q_commit) at a decision; the view's turn has been drawn."""
        self.solve()
        if len(view.built) + view.budget_left != self.budget:
            raise ValueError("view budget does not match this solver's budget")
        t = view.t
        w = self.model.window
        counts = np.asarray(view.counts)[None, :]
        early = np.array([f is not None and f < w for f in view.first_seen])[None, :]
        built = np.zeros((1, view.n_classes), dtype=np.int64)
        built[0, list(view.built)] = 1
        codes_pass = self.encode(counts, early, built)
        built_c = built.copy()
        built_c[0, view.cls] = 1
        codes_commit = self.encode(counts, early, built_c)
        nxt = self.levels[t + 1]
        T = self.config.n_tasks
        v_pass = 0.0 if t + 1 >= T else float(self._lookup(nxt, codes_pass)[0])
        if view.budget_left - 1 == 0:
            pre_counts = counts.copy()
            pre_counts[0, view.cls] -= 1
            v_commit = float(
                self._last_values(
                    self._raw_codes(pre_counts, early, built), view.cls, t, codes_commit
                )[0]
            )
        else:
            v_commit = 0.0 if t + 1 >= T else float(self._lookup(nxt, codes_commit)[0])
        return v_pass, 1.0 - self.cost + v_commit

    def decide(self, view: GameView) -> bool:
        q_pass, q_commit = self.q_values(view)
        return q_commit > q_pass + 1e-12

    @property
    def nbytes(self) -> int:
        return sum(lv.keys.nbytes + lv.values.nbytes for lv in self.levels)


_CACHE: OrderedDict[tuple, BayesSolver] = OrderedDict()
_CACHE_LOCK = threading.Lock()
CACHE_SIZE = 4
"""Solved tables kept in memory (least recently used are dropped)."""


def get_solver(
    config: StreamConfig,
    cost: float = 0.0,
    budget: int | None = None,
    cap: int | None = DEFAULT_CAP,
    on_progress: SolveProgress | None = None,
) -> BayesSolver:
    """A solved :class:`BayesSolver`, shared through a small LRU cache (``on_progress``: see
    :meth:`BayesSolver.solve`; not called when the table is cached)."""
    key = (config, float(cost), config.budget if budget is None else budget, cap)
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    solver = BayesSolver(config, cost, budget, cap).solve(on_progress)
    with _CACHE_LOCK:
        _CACHE[key] = solver
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return solver


class RuleActor:
    """A scripted rule in the vectorised form :meth:`BayesSolver.evaluate` accepts.

    It lets the exact solver compute a heuristic's exact expected net utility (no sampling
    noise): ``"eager"``, ``"wait:k"`` and ``"posterior:p"`` with the K rules of
    :mod:`econbench.allo.solvers.policies`.
    """

    def __init__(self, spec: str, config: StreamConfig, cost: float = 0.0) -> None:
        name, _, arg = spec.partition(":")
        if name not in ("eager", "wait", "posterior"):
            raise ValueError(f"RuleActor supports eager, wait:k, posterior:p, not {spec!r}")
        self.name, self.arg = name, float(arg) if arg else None
        self.config, self.cost = config, float(cost)
        self.model = HotSetModel.from_config(config)

    def _prefers_commit(
        self,
        pre: np.ndarray,
        i: int,
        succ_pass: np.ndarray,
        succ_commit: np.ndarray,
        last: np.ndarray,
        t: int,
    ) -> np.ndarray:
        c = pre.astype(np.int64)
        n, e = (c >> 2).copy(), (c >> 1) & 1
        n[:, i] += 1
        if t < self.model.window:
            e = e.copy()
            e[:, i] = 1
        can_pay = np.full(len(pre), self.config.n_tasks - t > self.cost)
        if self.name == "eager":
            return can_pay
        if self.name == "wait":
            return can_pay & (n[:, i] >= (self.arg or 2))
        post = self.model.posterior(n, e, t + 1)
        collect = 1.0 + post.expected_future()[:, i]
        return (post.hot_prob()[:, i] >= (self.arg or 0.88)) & (collect > self.cost)
