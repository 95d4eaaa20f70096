"""The AlloBench task stream (docs/allobench.md §1): the hidden class of each of the T tasks.

Per episode the class labels are shuffled; ``n_hot`` of them are *hot* (probability
``hot_mass / n_hot`` each), the rest are *trap* classes (probability
``(1 - hot_mass) / (n_classes - n_hot)`` each). The ``n_tasks`` classes are drawn i.i.d.; with
``trap_early`` the whole draw is repeated until at least one trap class appears among the first
``min(budget, n_tasks)`` positions, and if that never happens a random one of those positions is
overwritten with a random trap class (the paper's rule; at the defaults the fallback has
probability 0.614**2001, i.e. never in practice).

Two generators draw this distribution (``StreamConfig.generator``):

- ``"paper"`` (the default) draws exactly the paper's episodes: seeds 2000–2023 give the 24
  streams its runs played (seed 2000 begins 6, 0, 4, 4, 7, …). One ``random.Random(seed)``
  makes, in this order: a shuffle of the role list ``[hot] * n_hot + [trap] * n_trap`` (class
  ``i`` takes role ``i``, so the hot set is where the hot roles land); one ``random()`` (the
  paper's "condition this seed on an early trap?" coin, drawn with probability 1, so always
  yes; it is drawn and ignored); then up to ``max_redraws`` candidate streams, each
  ``choices(range(n_classes), weights, k=n_tasks)`` with weights ``hot_mass / n_hot`` and
  ``(1 - hot_mass) / n_trap`` (``1 - hot_mass`` taken in decimal, so 0.85 gives exactly 0.15,
  as the paper's ``trap_share``), keeping the first with a trap in the early window. If none
  qualifies, one more stream is drawn and, if it too lacks an early trap, a trap class is
  drawn (``choice`` over the sorted trap ids) and then the position (``randrange(window)``)
  it overwrites — that order, because the paper's ``seq[randrange(w)] = choice(traps)``
  evaluates its right-hand side first. ``redraws`` counts the candidates beyond the first.
  Where the paper has no rule: with ``trap_early=False`` the first candidate is kept (the
  coin is still drawn); with an empty early window (``budget == 0``) the condition is dropped
  (the paper's code would fail there). The paper then draws the episode's problem instances
  from the same generator: :func:`paper_draw` returns it in that state
  (``econbench.allo.game.instances``).
- ``"numpy"`` (econbench's earlier generator, same distribution, different episodes):
  ``np.random.default_rng([seed, STREAM_SALT])`` draws, in order, a permutation (its first
  ``n_hot`` entries are hot), the first stream (``Generator.choice``), up to ``max_redraws``
  redraws, then the fallback (position, then trap class).

Choices where the spec is silent (documented here and in docs/allobench.md):

- ``budget == 0`` with ``trap_early``: "a trap among the first 0 positions" is unsatisfiable,
  so the condition is dropped (the early window is empty).
- The stream records how many redraws it needed, whether the fallback overwrite fired, and (in
  its config) which generator drew it. A stream saved before generators had names carries no
  ``generator`` and is read as ``"numpy"`` (the only one there was).

Which budget draws the stream of a (B, K) cell (``stream_budget``, see
:func:`stream_config_for`): the paper holds the B = 3 stream of each seed fixed for every cell
(``"fixed"``, the default: the config's own ``budget``, ``REFERENCE_BUDGET`` = 3 unless set,
draws the stream whatever the cell's B); ``"cell"`` draws it with the cell's B instead (the
trap-early window then follows B: at B = 1 the first task is always a trap).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

STREAM_SALT = 0xA110_5EED
"""Salt of the named random stream that draws an episode's task classes (``"numpy"`` only)."""

Generator = Literal["paper", "numpy"]
GENERATORS: tuple[str, ...] = ("paper", "numpy")
"""The stream generators: the paper's ``random.Random`` one (default) and econbench's numpy one."""

StreamBudget = Literal["fixed", "cell"]
STREAM_BUDGETS: tuple[str, ...] = ("fixed", "cell")
"""How a (B, K) cell's stream is drawn: with the config's budget (default) or with the cell's B."""

REFERENCE_BUDGET = 3
"""The budget that draws every cell's stream under ``stream_budget="fixed"`` (the paper's B = 3)."""

EVAL_SEEDS: list[int] = list(range(2000, 2024))
"""The paper's evaluation seeds: 24 episodes per configuration."""

TRAIN_SEED_START = 9000
"""RL training seeds start here, disjoint from the evaluation seeds."""


class StreamConfig(BaseModel, frozen=True):
    """Generator parameters; the defaults are the paper's."""

    n_classes: int = Field(8, ge=2)
    n_tasks: int = Field(60, ge=1)
    budget: int = Field(REFERENCE_BUDGET, ge=0)
    n_hot: int = Field(3, ge=1)
    hot_mass: float = Field(0.85, gt=0.0, lt=1.0)
    trap_early: bool = True
    max_redraws: int = Field(2000, ge=0)
    generator: Generator = "paper"

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

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        """A stream saved before generators had names was drawn by the numpy one."""
        if isinstance(data, dict):
            cfg = data.get("config")
            if isinstance(cfg, dict) and "generator" not in cfg:
                data = {**data, "config": {**cfg, "generator": "numpy"}}
        return data

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
    """Draw the stream of episode ``seed`` (deterministic in ``seed`` and ``config``) with the
    config's generator."""
    if seed < 0:
        raise ValueError("seeds must be non-negative")
    if config.generator == "paper":
        return _paper_stream(seed, config)
    return _numpy_stream(seed, config)


def stream_config_for(
    config: StreamConfig, budget: int, stream_budget: StreamBudget = "fixed"
) -> StreamConfig:
    """The generator config that draws the streams of a cell played with budget ``budget``:
    ``config`` itself under ``"fixed"`` (the paper's protocol: one stream per seed for every
    B), ``config`` with its budget set to ``budget`` under ``"cell"``."""
    if stream_budget == "fixed":
        return config
    if stream_budget == "cell":
        return config.model_copy(update={"budget": int(budget)})
    raise ValueError(
        f"stream_budget must be one of {', '.join(STREAM_BUDGETS)}, got {stream_budget!r}"
    )


def _decimal_complement(x: float) -> float:
    """``1 - x`` computed in decimal (``1 - 0.85`` is exactly 0.15, as the paper writes it)."""
    return float(Decimal(1) - Decimal(repr(x)))


def _paper_stream(seed: int, config: StreamConfig) -> Stream:
    """The paper's generator (see the module docstring for the exact order of draws)."""
    return paper_draw(seed, config)[0]


def paper_draw(seed: int, config: StreamConfig) -> tuple[Stream, random.Random]:
    """The paper generator's stream of episode ``seed`` and its ``random.Random`` right after
    drawing it, whatever ``config.generator`` says: the paper draws the episode's problem
    instances next, from the same generator (``econbench.allo.game.instances``)."""
    if seed < 0:
        raise ValueError("seeds must be non-negative")
    rng = random.Random(seed)
    n = config.n_classes
    roles = [True] * config.n_hot + [False] * config.n_trap  # True: hot
    rng.shuffle(roles)
    hot = tuple(c for c in range(n) if roles[c])
    traps = [c for c in range(n) if not roles[c]]
    p_hot = config.hot_mass / config.n_hot
    p_trap = _decimal_complement(config.hot_mass) / config.n_trap
    weights = [p_hot if roles[c] else p_trap for c in range(n)]
    rng.random()  # the paper's early-trap coin, drawn with probability 1: always "yes"
    window = config.early_window
    trap_set = set(traps)

    def draw() -> list[int]:
        return rng.choices(range(n), weights=weights, k=config.n_tasks)

    def early_trap(seq: list[int]) -> bool:
        return any(c in trap_set for c in seq[:window])

    if window == 0:  # no condition (trap_early off, or an empty window)
        return _stream(seed, config, hot, draw(), 0, False), rng
    for attempt in range(config.max_redraws):
        seq = draw()
        if early_trap(seq):
            return _stream(seed, config, hot, seq, attempt, False), rng
    seq = draw()
    forced = not early_trap(seq)
    if forced:
        trap = rng.choice(traps)  # the paper evaluates the trap class before the position
        seq[rng.randrange(window)] = trap
    return _stream(seed, config, hot, seq, config.max_redraws, forced), rng


def _stream(
    seed: int,
    config: StreamConfig,
    hot: tuple[int, ...],
    seq: list[int],
    redraws: int,
    forced: bool,
) -> Stream:
    return Stream(
        seed=seed,
        config=config,
        hot=hot,
        classes=tuple(int(c) for c in seq),
        redraws=redraws,
        forced_trap=forced,
    )


def _numpy_stream(seed: int, config: StreamConfig) -> Stream:
    """econbench's numpy generator (``generator="numpy"``)."""
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
    return _stream(seed, config, hot, [int(c) for c in draw], redraws, forced)


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
