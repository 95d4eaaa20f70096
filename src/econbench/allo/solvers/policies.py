"""Reference policies (docs/allobench.md §3): scripted actors with exactly an agent's information.

Every policy reads the build charge K, the budget and the turn from the :class:`GameView`, and
the generator's parameters (public knowledge: N, T, n_hot, hot mass, trap-early) from the
stream's config at ``reset``; only ``hindsight`` looks at the stream's classes.

Rules with a build charge K > 0 (spec: "build only if the expected collection exceeds K"):

- ``eager`` commits at first sight, ``wait:k`` at the k-th sighting (≥ k, identical in normal
  play), but both only if the turns left including this one, T − t, exceed K (the most a build
  could still collect); otherwise they pass.
- ``posterior:p`` commits when P(class hot | history) ≥ p (exact posterior over the hot-set
  hypotheses with the trap-early factor) *and* the posterior-expected collection
  1 + E[later occurrences] exceeds K.
- ``bayes[:cap]`` is Bellman-optimal under the known generator (see
  :mod:`econbench.allo.solvers.bayes`; counts capped at ``cap`` for the posterior, default
  :data:`econbench.allo.solvers.bayes.DEFAULT_CAP`).
- ``hindsight`` commits at first sight to the best ≤ B classes with n_c > K (ties: lower id).
- ``never`` always passes; ``random[:p]`` commits with probability p (default 0.5) from a
  generator seeded by ``(stream.seed, RANDOM_SALT)``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from econbench.allo.game import EpisodeResult, Game, GameView
from econbench.allo.game.stream import Stream, StreamConfig
from econbench.allo.solvers.bayes import DEFAULT_CAP, get_solver
from econbench.allo.solvers.posterior import HotSetModel
from econbench.suggest import did_you_mean

RANDOM_SALT = 0x5A1D_0001
"""Salt of the ``random`` policy's coin stream."""

REFERENCE_POLICIES: list[str] = [
    "eager",
    "wait:2",
    "posterior:0.88",
    "bayes",
    "hindsight",
    "never",
    "random:0.5",
]


@runtime_checkable
class AlloPolicy(Protocol):
    """A scripted actor: reset on a stream, then a COMMIT/PASS decision per decision turn."""

    name: str

    def reset(self, stream: Stream) -> None: ...

    def decide(self, view: GameView) -> bool: ...


def _can_pay(view: GameView) -> bool:
    """Whether a build now could possibly collect more than K."""
    return view.n_tasks - view.t > view.cost


class EagerPolicy:
    name = "eager"

    def reset(self, stream: Stream) -> None:
        pass

    def decide(self, view: GameView) -> bool:
        return _can_pay(view)


class WaitPolicy:
    def __init__(self, k: int = 2) -> None:
        if k < 1:
            raise ValueError("wait:K needs K >= 1")
        self.k = k
        self.name = f"wait:{k}"

    def reset(self, stream: Stream) -> None:
        pass

    def decide(self, view: GameView) -> bool:
        return view.sighting >= self.k and _can_pay(view)


class PosteriorPolicy:
    def __init__(self, p: float = 0.88, config: StreamConfig | None = None) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError("posterior:P needs 0 <= P <= 1")
        self.p = p
        self.name = f"posterior:{p:g}"
        self._model = HotSetModel.from_config(config or StreamConfig())

    def reset(self, stream: Stream) -> None:
        self._model = HotSetModel.from_config(stream.config)

    def assess(self, view: GameView) -> tuple[float, float]:
        """(P(current class hot), expected collection of a build now) under the posterior."""
        m = self._model
        counts = np.asarray(view.counts, dtype=float)[None, :]
        early = np.array([f is not None and f < m.window for f in view.first_seen])[None, :]
        post = m.posterior(counts, early, view.t + 1)
        p_hot = float(post.hot_prob()[0, view.cls])
        collect = 1.0 + float(post.expected_future()[0, view.cls])
        return p_hot, collect

    def decide(self, view: GameView) -> bool:
        p_hot, collect = self.assess(view)
        return p_hot >= self.p and collect > view.cost


class BayesPolicy:
    def __init__(self, config: StreamConfig | None = None, cap: int | None = DEFAULT_CAP) -> None:
        self.cap = cap
        self.name = "bayes" if cap == DEFAULT_CAP else f"bayes:{cap if cap else 'exact'}"
        self._config = config or StreamConfig()

    def reset(self, stream: Stream) -> None:
        self._config = stream.config

    def solver_for(self, view: GameView):  # type: ignore[no-untyped-def]
        return get_solver(self._config, view.cost, len(view.built) + view.budget_left, self.cap)

    def decide(self, view: GameView) -> bool:
        return self.solver_for(view).decide(view)


class HindsightPolicy:
    name = "hindsight"

    def __init__(self) -> None:
        self._stream: Stream | None = None
        self._targets: frozenset[int] | None = None

    def reset(self, stream: Stream) -> None:
        self._stream = stream
        self._targets = None

    def decide(self, view: GameView) -> bool:
        if self._stream is None:
            raise RuntimeError("hindsight needs reset(stream) first")
        if self._targets is None:
            counts = self._stream.counts()
            order = sorted(range(len(counts)), key=lambda c: (-counts[c], c))
            best = [c for c in order if counts[c] > view.cost][: view.budget]
            self._targets = frozenset(best)
        return view.cls in self._targets and view.sighting == 1


class NeverPolicy:
    name = "never"

    def reset(self, stream: Stream) -> None:
        pass

    def decide(self, view: GameView) -> bool:
        return False


class RandomPolicy:
    def __init__(self, p: float = 0.5) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError("random:P needs 0 <= P <= 1")
        self.p = p
        self.name = f"random:{p:g}"
        self._rng = np.random.default_rng([0, RANDOM_SALT])

    def reset(self, stream: Stream) -> None:
        self._rng = np.random.default_rng([stream.seed, RANDOM_SALT])

    def decide(self, view: GameView) -> bool:
        return bool(self._rng.random() < self.p)


EXACT_TASKS_LIMIT = 40
"""Beyond this many tasks an exact solve needs tens of millions of states (T = 34: ~9 M,
93 s); refuse it up front instead of running out of memory mid-run."""


def make_policy(
    spec: str,
    config: StreamConfig = StreamConfig(),  # noqa: B008
    cost: float = 0.0,
    budget: int | None = None,
) -> AlloPolicy:
    """Build a policy from ``"eager"``, ``"wait:K"``, ``"posterior:P"``, ``"bayes[:CAP|exact]"``,
    ``"hindsight"``, ``"never"``, ``"random[:P]"``.

    ``bayes`` solves its table lazily at the first decision (then cached per cost and budget,
    see :func:`econbench.allo.solvers.bayes.get_solver`); ``cost`` and ``budget`` are accepted for
    symmetry — every policy reads K and B from the :class:`GameView`.
    """
    name, _, arg = spec.strip().partition(":")
    name = name.lower()
    try:
        if name == "eager" and not arg:
            return EagerPolicy()
        if name == "wait":
            return WaitPolicy(int(arg) if arg else 2)
        if name == "posterior":
            return PosteriorPolicy(float(arg) if arg else 0.88, config)
        if name == "bayes":
            cap = DEFAULT_CAP if not arg else (None if arg == "exact" else int(arg))
            if cap is not None and cap < 1:
                raise ValueError("the count cap must be at least 1")
            if cap is None and config.n_tasks > EXACT_TASKS_LIMIT:
                raise ValueError(
                    f"bayes:exact is only tractable up to {EXACT_TASKS_LIMIT} tasks "
                    f"(this game has {config.n_tasks}); use bayes or bayes:CAP, or a shorter "
                    f"game (`allo run --tasks {EXACT_TASKS_LIMIT}`)"
                )
            return BayesPolicy(config, cap)
        if name == "hindsight" and not arg:
            return HindsightPolicy()
        if name == "never" and not arg:
            return NeverPolicy()
        if name == "random":
            return RandomPolicy(float(arg) if arg else 0.5)
    except ValueError as exc:
        raise ValueError(f"bad policy spec {spec!r}: {exc}") from exc
    names = ("eager", "wait", "posterior", "bayes", "hindsight", "never", "random")
    raise ValueError(
        f"unknown policy spec {spec!r}{did_you_mean(name, names)}; use eager, wait:K, "
        "posterior:P, bayes, hindsight, never, random:P"
    )


def play_episode(
    policy: AlloPolicy, stream: Stream, cost: float = 0.0, budget: int | None = None
) -> EpisodeResult:
    """Play one episode of the abstract game with a scripted policy."""
    policy.reset(stream)
    return Game(stream, cost=cost, budget=budget).play(policy.decide)


def play_many(
    policy: AlloPolicy, streams: list[Stream], cost: float = 0.0, budget: int | None = None
) -> list[EpisodeResult]:
    """Play a policy over many streams, resetting it on each."""
    return [play_episode(policy, s, cost, budget) for s in streams]
