"""Recompute the paper's published tables from its imported runs and compare, number by number.

``econbench allo import`` turns the paper's stored sessions into cells whose config names the
folder they came from; :func:`paper_checks` finds the folders each published table uses
(:mod:`econbench.allo.paper.published`), recomputes every number with econbench's own episode
records, and lists it beside the paper's. A number matches when it agrees within the paper's
rounding (half a unit of its last printed digit).

The statistics are the paper's: pooled ratios over seeds; 95 % intervals from 10,000 seed
resamples (numpy ``default_rng(0).integers``, the paper's ``boot_ratio_ci``), percentile; paired
differences re-pool both arms on the same resampled seeds ("difference the re-pooled ratios").
Zero-commit seeds stay in the resamples and add nothing to either ratio.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from econbench.allo.game.metrics import (
    PAIRED_BOOT as N_BOOT,
)
from econbench.allo.game.metrics import (
    PAIRED_BOOT_SEED as BOOT_SEED,
)
from econbench.allo.game.metrics import (
    PairedDifference,
    paired_ratio_bootstrap,
    pooled_ratio_ci,
)
from econbench.allo.paper import published as P
from econbench.runs.layout import EPISODES, read_jsonl

INTERVAL_TOLERANCE = 1.0
"""Points within which a bootstrap interval end counts as reproduced when it is not exact: the
paper's transfer-table intervals were drawn by a resampler its repository does not hold."""


@dataclass
class SeedStats:
    """What one seed of one arm contributes to the paper's measures."""

    first: int = 0  # first-sight commitments
    commits: int = 0
    eligible: int = 0  # eligible first-occurrence decision turns
    eligible_commits: int = 0
    utility: float = 0.0
    opt: float = 0.0
    collected: float = 0.0
    lateness: float = 0.0  # Σ (occurrence − 1) over commitments
    asked: Counter[int] = field(default_factory=Counter)  # resolved decisions by occurrence
    kept: Counter[int] = field(default_factory=Counter)

    def add(self, other: SeedStats) -> None:
        for name in ("first", "commits", "eligible", "eligible_commits"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("utility", "opt", "collected", "lateness"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.asked.update(other.asked)
        self.kept.update(other.kept)


Arm = dict[int, SeedStats]
"""An arm: its seeds' stats by seed."""


def seed_stats(record: Mapping[str, Any]) -> SeedStats:
    """One episode record's contribution."""
    commits = record.get("commits") or []
    stats = SeedStats(
        first=int(record.get("first_sight_commits", 0)),
        commits=len(commits),
        utility=float(record.get("utility", 0.0)),
        opt=float(record.get("opt", 0.0)),
        collected=float(record.get("collected", 0)),
        lateness=float(sum(int(c.get("sighting", 1)) - 1 for c in commits)),
    )
    for turn in record.get("turns") or []:
        if turn.get("kind") != "decision" or turn.get("resolved") is False:
            continue
        occurrence = int(turn.get("sighting", 0))
        stats.asked[occurrence] += 1
        stats.kept[occurrence] += bool(turn.get("commit"))
        if turn.get("first_sight"):
            stats.eligible += 1
            stats.eligible_commits += bool(turn.get("commit"))
    return stats


def load_arms(cell_dirs: Iterable[tuple[str, Path]]) -> dict[str, Arm]:
    """``(source family, cell directory)`` pairs → the arms by family."""
    arms: dict[str, Arm] = {}
    for family, path in cell_dirs:
        arm = arms.setdefault(family, {})
        for record in read_jsonl(path / EPISODES):
            arm[int(record["seed"])] = seed_stats(record)
    return arms


def pool(arms: Mapping[str, Arm], families: Sequence[str]) -> Arm | None:
    """The per-seed sum over several families (the paper pools reskins seed by seed); ``None``
    when one of them was not imported."""
    if any(f not in arms for f in families):
        return None
    out: Arm = {}
    for family in families:
        for seed, stats in arms[family].items():
            out.setdefault(seed, SeedStats()).add(stats)
    return out


# -- statistics -----------------------------------------------------------------------------


def _pairs(arm: Arm, num: str, den: str, seeds: Sequence[int]) -> tuple[list[float], list[float]]:
    return (
        [float(getattr(arm[s], num)) for s in seeds],
        [float(getattr(arm[s], den)) for s in seeds],
    )


def _pct(diff: PairedDifference | None, scale: float = 100.0) -> tuple[float, float, float]:
    if diff is None:
        return (math.nan, math.nan, math.nan)
    return (scale * diff.mean, scale * diff.lo, scale * diff.hi)


def ratio_ci(arm: Arm, num: str, den: str) -> tuple[float, float, float]:
    """100 · Σ num / Σ den over the arm's seeds, with the seed-bootstrap percentile interval."""
    return _pct(pooled_ratio_ci(*_pairs(arm, num, den, sorted(arm))))


def paired_ratio_diff(first: Arm, second: Arm, num: str, den: str) -> tuple[float, float, float]:
    """Second − first re-pooled ratios (points) over the shared seeds, resampled together."""
    seeds = sorted(set(first) & set(second))
    return _pct(
        paired_ratio_bootstrap(_pairs(first, num, den, seeds), _pairs(second, num, den, seeds))
    )


def paired_mean_diff(first: Arm, second: Arm, attr: str) -> tuple[float, float, float]:
    """Mean over shared seeds of second − first of ``attr``, with its seed-bootstrap interval."""
    seeds = sorted(set(first) & set(second))
    if not seeds:
        return (math.nan, math.nan, math.nan)
    d = np.array([getattr(second[s], attr) - getattr(first[s], attr) for s in seeds], float)
    boot = d[np.random.default_rng(BOOT_SEED).integers(0, len(d), size=(N_BOOT, len(d)))].mean(1)
    return (float(d.mean()), float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5)))


# -- the comparison ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One published number beside econbench's; ``interval``: a bootstrap interval end."""

    table: str
    row: str
    measure: str
    paper: float
    ours: float
    digits: int
    interval: bool = False

    @property
    def status(self) -> str:
        """``"yes"`` (equal within the paper's rounding), ``"≈"`` (an interval end within
        :data:`INTERVAL_TOLERANCE`), or ``"no"``."""
        if math.isnan(self.ours):
            return "no"
        gap = abs(self.ours - self.paper)
        if gap <= 0.5 * 10.0 ** (-self.digits) + 1e-9:
            return "yes"
        return "≈" if self.interval and gap <= INTERVAL_TOLERANCE else "no"


def _triple(
    table: str, row: str, measure: str, paper: Sequence[float], ours: Sequence[float], digits: int
) -> list[Check]:
    names = (measure, f"{measure} CI low", f"{measure} CI high")
    return [
        Check(table, row, n, float(p), float(o), digits, interval=i > 0)
        for i, (n, p, o) in enumerate(zip(names, paper, ours, strict=True))
    ]


def frontier_checks(arms: Mapping[str, Arm]) -> list[Check]:
    """Tables 1, 6, 7 and 8: the frontier models' ladder."""
    checks: list[Check] = []
    for model, sources in P.FRONTIER.items():
        rung_arms = {r: arms.get(src) for r, src in sources.items()}
        for rung, arm in rung_arms.items():
            if arm is None:
                continue
            fs = ratio_ci(arm, "first", "commits")
            checks += _triple("T7 first sight", model, rung, P.FRONTIER_CELL[model][rung], fs, 1)
            zeros, per_seed = P.ZERO_COMMIT[model]
            i = P.RUNGS.index(rung)
            zero = sum(1 for s in arm.values() if s.commits == 0)
            mean = sum(s.commits for s in arm.values()) / len(arm)
            checks.append(Check("T8 zero-commit", model, f"{rung} seeds", zeros[i], zero, 0))
            checks.append(Check("T8 zero-commit", model, f"{rung} per seed", per_seed[i], mean, 2))
        for (a, b), paper in zip(P.PAIRS, P.FRONTIER_PAIRED[model], strict=True):
            if rung_arms[a] is None or rung_arms[b] is None:
                continue
            ours = paired_ratio_diff(rung_arms[a], rung_arms[b], "first", "commits")
            checks += _triple("T6 paired", model, f"{b}−{a}", paper, ours, 1)
    return checks


def econ_checks(arms: Mapping[str, Arm]) -> list[Check]:
    """Table 9: Haiku's economic surface."""
    checks: list[Check] = []
    for (rung, b, k), paper in P.ECON_FULL.items():
        arm = arms.get(P.ECON_SOURCE.format(rung=rung.upper(), b=b, k=k))
        if arm is None:
            continue
        n = len(arm)
        hazard = ratio_ci(arm, "eligible_commits", "eligible")[0]
        net = sum(s.utility for s in arm.values()) / n
        opt = sum(s.opt for s in arm.values()) / n
        row = f"{rung} (B={b}, K={k})"
        measures = ("hazard %", "net", "optimum", "regret")
        for measure, ours, value in zip(
            measures, (hazard, net, opt, opt - net), paper, strict=True
        ):
            checks.append(Check("T9 economic surface", row, measure, value, ours, 1))
    return checks


def rl_checks(arms: Mapping[str, Arm]) -> list[Check]:
    """Tables 3, 11 and 12: the Qwen checkpoints before and after post-training."""
    panels = {name: P.qwen_sources(arm) for name, arm in P.QWEN_ARMS.items()}
    checks: list[Check] = []
    for panel, published in P.RL_TRANSFER.items():
        pooled = {name: pool(arms, srcs[panel]) for name, srcs in panels.items()}
        base = pooled["base"]
        levels = (published[0], published[1], published[3])
        for name, (rate, late) in zip(("base", "run1", "run2"), levels, strict=True):
            arm = pooled[name]
            if arm is None:
                continue
            fs = ratio_ci(arm, "first", "commits")[0]
            lateness = sum(s.lateness for s in arm.values()) / sum(s.commits for s in arm.values())
            checks.append(Check("T11 transfer", f"{panel} {name}", "first sight %", rate, fs, 0))
            checks.append(
                Check("T11 transfer", f"{panel} {name}", "mean lateness", late, lateness, 2)
            )
        for name, paper in (("run1", published[2]), ("run2", published[4])):
            if base is None or pooled[name] is None:
                continue
            ours = paired_ratio_diff(base, pooled[name], "first", "commits")
            checks += _triple("T11 transfer", f"{panel} Δ {name}", "points", paper, ours, 1)
    r0 = {name: pool(arms, srcs["R0"]) for name, srcs in panels.items()}
    for occurrence, published in P.P_KEEP.items():
        for name, (kept, asked) in zip(("base", "run1", "run2"), published, strict=True):
            arm = r0[name]
            if arm is None:
                continue
            row = f"P(keep) occurrence {occurrence} {name}"
            ours_kept = sum(s.kept[occurrence] for s in arm.values())
            ours_asked = sum(s.asked[occurrence] for s in arm.values())
            checks.append(Check("T11 transfer", row, "keeps", kept, ours_kept, 0))
            checks.append(Check("T11 transfer", row, "asked", asked, ours_asked, 0))
    base_items, run1_items, d1, run2_items, d2 = P.ITEMS_PER_STREAM
    for name, value in (("base", base_items), ("run1", run1_items), ("run2", run2_items)):
        if (arm := r0[name]) is not None:
            mean = sum(s.collected for s in arm.values()) / len(arm)
            checks.append(Check("T11 transfer", f"items/stream {name}", "R0", value, mean, 1))
    for name, paper in (("run1", d1), ("run2", d2)):
        if r0["base"] is not None and r0[name] is not None:
            ours = paired_mean_diff(r0["base"], r0[name], "collected")
            checks += _triple("T11 transfer", f"items/stream Δ {name}", "R0", paper, ours, 1)
    for rung, (base_score, run2_score, diff) in P.QWEN_SCORE.items():
        b_arm = pool(arms, panels["base"][rung])
        r_arm = pool(arms, panels["run2"][rung])
        if b_arm is not None:
            ours = ratio_ci(b_arm, "utility", "opt")[0]
            checks.append(Check("T3 score", f"{rung} base", "score %", base_score, ours, 1))
        if r_arm is not None:
            ours = ratio_ci(r_arm, "utility", "opt")[0]
            checks.append(Check("T3 score", f"{rung} run2", "score %", run2_score, ours, 1))
        if b_arm is not None and r_arm is not None:
            ours_d = paired_ratio_diff(b_arm, r_arm, "utility", "opt")
            checks += _triple("T12 paired score", rung, "Δ points", diff, ours_d, 1)
    return checks


TABLE_ORDER = (
    "T7 first sight",
    "T6 paired",
    "T8 zero-commit",
    "T9 economic surface",
    "T11 transfer",
    "T3 score",
    "T12 paired score",
)


def paper_checks(cell_dirs: Iterable[tuple[str, Path]]) -> list[Check]:
    """Every published number for which the imported cells hold the paper's runs, grouped by
    table in the order of :data:`TABLE_ORDER`."""
    arms = load_arms(cell_dirs)
    checks = frontier_checks(arms) + econ_checks(arms) + rl_checks(arms)
    return sorted(checks, key=lambda c: TABLE_ORDER.index(c.table))
