"""The AlloBench task stream (spec §1): which hidden class each of the T tasks belongs to.

Per episode the class labels are shuffled; the first ``n_hot`` of the permutation are *hot*
(probability ``hot_mass / n_hot`` each), the rest are *trap* classes (probability
``(1 - hot_mass) / (n_classes - n_hot)`` each). The ``n_tasks`` classes are drawn i.i.d.; with
``trap_early`` the whole draw is repeated (up to ``max_redraws`` times) until at least one trap
class appears among the first ``min(budget, n_tasks)`` positions, and if that never happens a
random one of those positions is overwritten with a random trap class (the paper's rule; at the
defaults the fallback has probability 0.614**2001, i.e. never in practice).

Choices where the spec is silent (documented here and in the README):

- All randomness comes from ``np.random.default_rng([seed, STREAM_SALT])`` in a fixed order:
  permutation, then draws (``Generator.choice`` with the class probabilities), then the fallback.
- ``budget == 0`` with ``trap_early``: "a trap among the first 0 positions" is unsatisfiable,
  so the condition is dropped (the early window is empty).
- The stream records how many redraws it needed and whether the fallback overwrite fired.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field, model_validator

STREAM_SALT = 0xA110_5EED
"""Salt of the named random stream that draws an episode's task classes."""

EVAL_SEEDS: list[int] = list(range(2000, 2024))
"""The paper's evaluation seeds: 24 episodes per configuration."""

TRAIN_SEED_START = 9000
"""RL training seeds start here, disjoint from the evaluation seeds."""


class StreamConfig(BaseModel, frozen=True):
    """Generator parameters; the defaults are the paper's."""

    n_classes: int = Field(8, ge=2)
    n_tasks: int = Field(60, ge=1)
    budget: int = Field(3, ge=0)
    n_hot: int = Field(3, ge=1)
    hot_mass: float = Field(0.85, gt=0.0, lt=1.0)
    trap_early: bool = True
    max_redraws: int = Field(2000, ge=0)

    @model_validator(mode="after")
    def _check(self) -> StreamConfig:
        if self.n_hot >= self.n_classes:
            raise ValueError("n_hot must be smaller than n_classes (there must be trap classes)")
        return self

    @property
    def n_trap(self) -> int:
        return self.n_classes - self.n_hot

    @property
    def p_hot(self) -> float:
        """Probability of one particular hot class at a turn."""
        return self.hot_mass / self.n_hot

    @property
    def p_trap(self) -> float:
        """Probability of one particular trap class at a turn."""
        return (1.0 - self.hot_mass) / self.n_trap

    @property
    def early_window(self) -> int:
        """Number of leading positions that must contain a trap (0 = no condition)."""
        return min(self.budget, self.n_tasks) if self.trap_early else 0


class Stream(BaseModel, frozen=True):
    """One episode's realised task stream."""

    seed: int
    config: StreamConfig
    hot: tuple[int, ...]
    classes: tuple[int, ...]
    redraws: int = 0
    forced_trap: bool = False

    @model_validator(mode="after")
    def _check(self) -> Stream:
        cfg = self.config
        if len(self.classes) != cfg.n_tasks:
            raise ValueError(f"stream has {len(self.classes)} tasks, config says {cfg.n_tasks}")
        if len(set(self.hot)) != cfg.n_hot or len(self.hot) != cfg.n_hot:
            raise ValueError(f"stream must have {cfg.n_hot} distinct hot classes")
        for c in (*self.hot, *self.classes):
            if not 0 <= c < cfg.n_classes:
                raise ValueError(f"class id {c} out of range 0..{cfg.n_classes - 1}")
        return self

    def is_hot(self, cls: int) -> bool:
        return cls in self.hot

    def counts(self) -> list[int]:
        """Occurrences of every class over the whole stream."""
        out = [0] * self.config.n_classes
        for c in self.classes:
            out[c] += 1
        return out

    @property
    def traps(self) -> tuple[int, ...]:
        return tuple(c for c in range(self.config.n_classes) if c not in self.hot)


def class_probabilities(hot: Iterable[int], config: StreamConfig) -> np.ndarray:
    """Per-class draw probabilities given the hot set."""
    p = np.full(config.n_classes, config.p_trap)
    p[list(hot)] = config.p_hot
    return p / p.sum()


def generate_stream(seed: int, config: StreamConfig = StreamConfig()) -> Stream:  # noqa: B008
    """Draw the stream of episode ``seed`` (deterministic in ``seed`` and ``config``)."""
    if seed < 0:
        raise ValueError("seeds must be non-negative")
    rng = np.random.default_rng([seed, STREAM_SALT])
    perm = rng.permutation(config.n_classes)
    hot = tuple(sorted(int(c) for c in perm[: config.n_hot]))
    is_trap = np.ones(config.n_classes, dtype=bool)
    is_trap[list(hot)] = False
    p = class_probabilities(hot, config)
    window = config.early_window
    redraws = 0
    draw = rng.choice(config.n_classes, size=config.n_tasks, p=p)
    forced = False
    if window > 0:
        while not is_trap[draw[:window]].any():
            if redraws >= config.max_redraws:
                traps = np.flatnonzero(is_trap)
                pos = int(rng.integers(window))
                draw[pos] = traps[int(rng.integers(len(traps)))]
                forced = True
                break
            redraws += 1
            draw = rng.choice(config.n_classes, size=config.n_tasks, p=p)
    return Stream(
        seed=seed,
        config=config,
        hot=hot,
        classes=tuple(int(c) for c in draw),
        redraws=redraws,
        forced_trap=forced,
    )


def generate_streams(seeds: Iterable[int], config: StreamConfig = StreamConfig()) -> list[Stream]:  # noqa: B008
    return [generate_stream(s, config) for s in seeds]


def save_streams(path: str | Path, streams: Iterable[Stream]) -> None:
    """Write streams as JSONL, one stream per line."""
    with Path(path).open("w", encoding="utf-8") as fh:
        for s in streams:
            fh.write(s.model_dump_json() + "\n")


def load_streams(path: str | Path) -> list[Stream]:
    """Read streams written by :func:`save_streams` (blank lines ignored)."""
    out: list[Stream] = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(Stream.model_validate(json.loads(line)))
    return out


MAX_SEEDS = 1_000_000
"""The longest seed range accepted (a million episodes is already days of model time)."""

_RANGE = re.compile(r"^(\d+)\s*-\s*(\d+)$")


def parse_seeds(text: str) -> list[int]:
    """Parse ``"2000-2023"`` or ``"1,5,9-12"`` into a list of seeds (order kept, no duplicates)."""
    seeds: list[int] = []
    seen: set[int] = set()
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise ValueError(f"empty seed item in {text!r}")
    for part in parts:
        m = _RANGE.match(part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise ValueError(f"descending seed range {part!r}")
            if hi - lo >= MAX_SEEDS:
                raise ValueError(f"seed range {part!r} is longer than {MAX_SEEDS:,} seeds")
            items = range(lo, hi + 1)
        elif part.isdigit():
            items = range(int(part), int(part) + 1)
        else:
            raise ValueError(f"bad seed item {part!r} (use N, A-B, comma separated)")
        for s in items:
            if s not in seen:
                seen.add(s)
                seeds.append(s)
    return seeds


def seeds_from_options(episodes: int | None, seeds: str | None, seed: int) -> tuple[int, ...]:
    """The seeds a command's ``--episodes N`` (from ``--seed``) or ``--seeds TEXT`` ask for
    (default: the evaluation seeds); ``ValueError`` with a one-line reason otherwise."""
    if episodes is not None and seeds is not None:
        raise ValueError("give either --episodes or --seeds, not both")
    if seeds is not None:
        try:
            return tuple(parse_seeds(seeds))
        except ValueError as exc:
            raise ValueError(f"bad --seeds {seeds!r}: {exc}") from None
    if episodes is None:
        return tuple(EVAL_SEEDS)
    if not 1 <= episodes <= MAX_SEEDS:
        raise ValueError(f"--episodes must be between 1 and {MAX_SEEDS:,}, got {episodes}")
    if seed < 0:
        raise ValueError(f"--seed must be non-negative, got {seed}")
    return tuple(range(seed, seed + episodes))
