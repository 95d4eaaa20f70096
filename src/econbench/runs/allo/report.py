"""AlloBench's part of the report (``econbench report``).

- ``ladder``: AlloBench policies × framings (``r0``, R0 reskins as ``r0:quiver`` …, ``r1``,
  ``r2``, ``r3``) at one (B, K) setting (the paper's B = 3, K = 0 when present): pooled score
  ± SE and first-sight rate ± SE; reference policies first, then models. ``ladder_paper``: the
  paper's first-sight rates (docs/allobench.md §7) for comparison.
  Each policy row shows its cells' seed sets (``n`` and ``seeds``: one pair when its cells
  share them, else per framing) and ends with the preregistered **trigger** (see
  :func:`ladder_trigger`), read from adjacent rungs re-pooled on the seeds both ran; a rung
  whose unresolved decision turns exceed 10 % is invalid and marked ‡.
- ``ladder_paired``: per policy, adjacent rungs sharing seeds: the paper's paired comparison,
  the difference of the two rungs' re-pooled first-sight-among-commitments ratios with a
  seed-bootstrap interval (:func:`econbench.allo.game.metrics.paired_ratio_bootstrap`: both rungs
  re-pooled on the same resampled seeds, 10,000 resamples, RNG seed 0, percentile interval;
  zero-commit seeds stay in and add nothing), with the shared seeds and those left out.

Rungs are compared only on the seeds both ran: two cells pooled over different seed sets
differ by their streams as well as their framing (a seed-set effect, not a framing effect).
When every cell of the ladder ran the same seeds (the paper's 2000–2023) this changes nothing.
- ``paper_check``: when the runs include cells imported from the paper (``econbench allo
  import``), every number of the paper's published tables recomputed from them beside the
  paper's (:mod:`econbench.runs.allo.paper_check`).
- ``kappa``: one row per (framing, policy, B, K), the paper's economic-surface columns first:
  first-sight hazard (committed share of eligible first-occurrence turns, zero-commit episodes
  included), mean net utility, mean exact hindsight net optimum, mean regret (optimum − net);
  then the pooled ratio Σ utility / Σ OPT (it degenerates as the optimum → 0 at high K), the
  first-sight rate among commits, budget utilisation and zero-commit incidence (only when the
  runs cover at least two values of K).

Standard errors (:func:`~econbench.runs.report.ratio_se`) are delta-method (linearisation)
errors of a pooled ratio with the episode as the sampling unit: the score is Σ utility / Σ OPT
over episodes, the first-sight rate Σ first-sight commits / Σ commits over episodes with
commits (so commits of one episode are not treated as independent draws, unlike a binomial
error). They are exact closed forms, so reports are deterministic. Episodes of the same cell
found in two run directories under the same seed are counted once.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from econbench.agents.models.human import is_human
from econbench.allo.framings import SKIN_NAMES, framing_class, ladder_order
from econbench.allo.game.metrics import paired_ratio_bootstrap
from econbench.allo.paper.published import RUNGS as PAPER_RUNGS
from econbench.runs.allo.paper_check import Check, paper_checks
from econbench.runs.allo.reading import READER, framing_name
from econbench.runs.frames import RunFrames
from econbench.runs.report import (
    PARTIAL_MARK,
    Section,
    Table,
    fmt_pm,
    mean_se,
    partial_notes,
    ratio_se,
    seed_set_text,
)

INVALID_MARK = "‡"
INVALID_UNRESOLVED = 0.10
"""The paper's validity rule: a rung is invalid when more than 10 % of its decisions are
unresolved (no decision, several decisive calls, an unparseable reply: counted as PASS)."""
TRIGGER_RISE = 0.30
"""The paper's preregistered trigger: an adjacent rise of at least 30 points."""
PAPER_SETTING = (3, 0.0)
"""The ladder's (B, K) when the runs hold it: the paper's."""

PAPER_FIRST_SIGHT: dict[str, tuple[int, int, int, int]] = {
    "Claude Haiku 4.5": (28, 33, 99, 100),
    "Claude Opus 4.8": (4, 0, 92, 99),
    "GPT-5.4-mini": (15, 29, 85, 88),
    "GPT-5.6 Sol": (24, 0, 39, 100),
}
"""The paper's first-sight commitment rates (%) by rung R0–R3 (docs/allobench.md §7)."""

_REFERENCE_ORDER = ("eager", "wait", "posterior", "bayes", "hindsight", "never", "random")
PAGE_TABLES = ("ladder", "ladder_paired", "ladder_paper", "kappa")
"""The tables ``index.html`` shows, in this order (the others are written as files only): the
paired table beside the ladder, since it is where rungs are compared on shared seeds."""


CELL_KEYS = ["policy", "framing", "skin", "protocol", "condition", "budget", "cost"]
"""What makes a cell: cells of different protocols (texts and turn rules) or conditions never
pool; a run whose config has no protocol was played before protocols had names, with
econbench's texts."""


def _condition_of(config: dict[str, Any]) -> str:
    """A cell's condition: as its config says; the paper's own sessions (``allo import``) are
    ``paper-runs``; a config without one is ``econbench`` under that protocol and otherwise
    ``paper-0``, econbench's paper protocol before conditions had names (it never pools with
    a condition it did not play)."""
    if config.get("condition"):
        return str(config["condition"])
    protocol = _protocol_of(config)
    if protocol == "econbench":
        return "econbench"
    source = config.get("source")
    return "paper-runs" if isinstance(source, dict) and source.get("kind") == "paper" else "paper-0"


def _protocol_of(config: dict[str, Any]) -> str:
    """A cell's protocol: as its config says; the paper's own sessions (``allo import``) were
    played under the paper's; any other config without one predates protocols (econbench's)."""
    if config.get("protocol"):
        return str(config["protocol"])
    source = config.get("source")
    return "paper" if isinstance(source, dict) and source.get("kind") == "paper" else "econbench"


def allo_episodes(runs: Sequence[RunFrames]) -> tuple[pd.DataFrame, int]:
    """Every episode of the AlloBench runs with its cell's settings; duplicates (same cell,
    same seed, another directory) dropped. Returns the frame and the number dropped."""
    parts = []
    for run in runs:
        if run.episodes.empty:
            continue
        frame = run.episodes
        ep = frame[["seed", "utility", "opt", "first_sight_commits", "n_commits"]].copy()
        for column in ("first_sight_eligible", "first_sight_eligible_commits"):
            ep[column] = frame.get(column, 0)
        for column in ("unresolved_turns", "decision_turns"):
            ep[column] = frame[column].fillna(0) if column in frame else 0
        ep["lateness0"] = frame["commits"].map(
            lambda cs: float(sum(int(c.get("sighting", 1)) - 1 for c in cs))
        )
        results = frame["result"] if "result" in frame else pd.Series([None] * len(frame))
        ep["spent"] = [
            int(r["budget"]) - int(r["unused_budget"]) if isinstance(r, dict) else int(n)
            for r, n in zip(results, frame["n_commits"], strict=True)
        ]
        cfg = run.config
        ep["policy"] = str(cfg.get("policy"))
        ep["framing"] = str(cfg.get("framing"))
        ep["skin"] = str(cfg.get("skin") or "default")
        ep["protocol"] = _protocol_of(cfg)
        ep["condition"] = _condition_of(cfg)
        ep["budget"] = int(cfg.get("budget", 3))
        ep["cost"] = float(cfg.get("cost", 0.0))
        ep["partial"] = not run.completed
        parts.append(ep)
    if not parts:
        return pd.DataFrame(columns=[*CELL_KEYS, "seed"]), 0
    frame = pd.concat(parts, ignore_index=True)
    unique = frame.drop_duplicates([*CELL_KEYS, "seed"], keep="first")
    return unique.reset_index(drop=True), len(frame) - len(unique)


def _variant(protocol: str, condition: str, protocols: bool, conditions: bool) -> str:
    """What a cell's label adds when the report holds several protocols or conditions."""
    if conditions and protocol == "paper" and condition != "paper-runs":
        return f" ({condition})"
    return f" ({protocol})" if protocols else ""


def allo_cells(episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per cell (policy, framing, skin, B, K): episodes, commits, pooled score and
    first-sight rate with their delta-method standard errors (see :func:`ratio_se`)."""
    rows = []
    if episodes.empty:
        return pd.DataFrame(columns=[*CELL_KEYS, "episodes", "score", "first_sight_rate"])
    protocols = set(episodes["protocol"])
    paper = episodes["protocol"] == "paper"
    conditions = set(episodes.loc[paper, "condition"]) - {"paper-runs"}
    for key, ep in episodes.groupby(CELL_KEYS, sort=False):
        policy, framing, skin, protocol, condition, budget, cost = key
        opt = float(ep["opt"].sum())
        with_commits = ep[ep["n_commits"] > 0]
        commits = int(with_commits["n_commits"].sum())
        first = float(with_commits["first_sight_commits"].sum())
        eligible = float(ep["first_sight_eligible"].sum())
        regret = ep["opt"] - ep["utility"]
        decisions = float(ep["decision_turns"].sum())
        rows.append(
            {
                "policy": policy,
                "kind": actor_kind(policy),
                "framing": framing_name(framing, skin)
                + _variant(protocol, condition, len(protocols) > 1, len(conditions) > 1),
                "rung": framing,
                "skin": skin,
                "protocol": protocol,
                "condition": condition,
                "budget": int(budget),
                "cost": float(cost),
                "episodes": len(ep),
                "n": int(ep["seed"].nunique()),
                "seeds": seed_set_text(int(s) for s in ep["seed"]),
                "commits": commits,
                "score": float(ep["utility"].sum()) / opt if opt > 0 else math.nan,
                "score_se": ratio_se(ep["utility"], ep["opt"]),
                "utility_mean": float(ep["utility"].mean()),
                "utility_se": mean_se(ep["utility"]),
                "opt_mean": float(ep["opt"].mean()),
                "first_sight_hazard": (
                    float(ep["first_sight_eligible_commits"].sum()) / eligible
                    if eligible
                    else math.nan
                ),
                "first_sight_hazard_se": ratio_se(
                    ep["first_sight_eligible_commits"], ep["first_sight_eligible"]
                ),
                "first_sight_eligible": int(eligible),
                "net_mean": float(ep["utility"].mean()),
                "net_se": mean_se(ep["utility"]),
                "net_optimum_mean": float(ep["opt"].mean()),
                "regret_mean": float(regret.mean()),
                "regret_se": mean_se(regret),
                "budget_utilisation": float((ep["spent"] / int(budget)).mean())
                if int(budget) > 0
                else math.nan,
                "zero_commit_incidence": float((ep["n_commits"] == 0).mean()),
                "lateness0_mean": float(ep["lateness0"].sum()) / commits_all
                if (commits_all := int(ep["n_commits"].sum()))
                else math.nan,
                "unresolved_share": float(ep["unresolved_turns"].sum()) / decisions
                if decisions
                else 0.0,
                "first_sight_rate": first / commits if commits else math.nan,
                "first_sight_se": ratio_se(
                    with_commits["first_sight_commits"], with_commits["n_commits"]
                ),
                "partial": bool(ep["partial"].any()),
            }
        )
    return pd.DataFrame(rows)


def actor_kind(policy: str) -> str:
    """What plays a cell: ``model``, ``person`` (``human:<name>``) or ``reference`` (policy)."""
    if is_human(policy):
        return "person"
    return "model" if "/" in policy else "reference"


def _policy_order(policy: str) -> tuple[int, int, str]:
    """Reference policies first, in the spec's order; models after, alphabetically; people
    (``human:<name>``) last."""
    if is_human(policy):
        return (2, 0, policy)
    if "/" in policy:
        return (1, 0, policy)
    head = policy.split(":", 1)[0]
    rank = _REFERENCE_ORDER.index(head) if head in _REFERENCE_ORDER else len(_REFERENCE_ORDER)
    return (0, rank, policy)


def _framing_order(rung: str, skin: str) -> tuple[int, int, str]:
    """Rungs in ladder order (the framing registry's), each rung's skins in ``SKIN_NAMES``
    order; a rung or skin that is not registered raises ``ValueError``."""
    if skin not in SKIN_NAMES:
        raise ValueError(f"unknown skin {skin!r}; choose one of {', '.join(SKIN_NAMES)}")
    return (ladder_order(rung), SKIN_NAMES.index(skin), f"{rung}:{skin}")


def _cell_text(row: pd.Series) -> str:
    """``score ± se / fs ± se %``; with no hindsight optimum to compare against (Σ OPT = 0,
    e.g. K = 24) the mean net utility ± SE instead of the score."""
    if math.isnan(row["score"]):
        score = f"utility {fmt_pm(row['utility_mean'], row['utility_se'], 1)} (OPT 0)"
    else:
        score = fmt_pm(row["score"], row["score_se"])
    fs = row["first_sight_rate"]
    first = "–" if math.isnan(fs) else f"{fmt_pm(fs, row['first_sight_se'], 0, 100)} %"
    marks = (f" {INVALID_MARK}" if _invalid(row) else "") + (
        f" {PARTIAL_MARK}" if row["partial"] else ""
    )
    return f"{score} / {first}" + marks


def _invalid(row: pd.Series | dict[str, Any]) -> bool:
    """The paper's validity rule: more than 10 % of the decision turns unresolved."""
    return float(row.get("unresolved_share", 0.0) or 0.0) > INVALID_UNRESOLVED


def first_trigger(rises: Iterable[tuple[str, float, bool]]) -> str | None:
    """The later rung of the earliest adjacent pair ``(later rung, rise, both valid)`` whose
    rise is at least 30 points; a pair invalid or with an undefined rise cannot trigger."""
    for name, rise, valid in rises:
        if valid and not math.isnan(rise) and rise >= TRIGGER_RISE - 1e-12:
            return name
    return None


def ladder_trigger(rungs: Sequence[tuple[str, float, bool]]) -> str | None:
    """The paper's preregistered trigger: the later rung of the earliest adjacent pair whose
    first-sight commitment (pooled among realised commitments) rises by at least 30 points.

    ``rungs`` are ``(name, first-sight rate, valid)`` in ladder order (R0, R1, R2, R3; the
    rungs a policy was run on, so a missing rung makes its neighbours adjacent). A pair with an
    invalid rung (more than 10 % unresolved decisions, the paper's validity rule) or an
    undefined rate (no commits) cannot trigger. ``None`` when no pair rises by 30 points.
    The report reads each pair on the seeds both rungs ran (:func:`rung_pairs`)."""
    return first_trigger(
        (name, after - before, ok_a and ok_b)
        for (_, before, ok_a), (name, after, ok_b) in itertools.pairwise(rungs)
    )


@dataclass(frozen=True)
class RungPair:
    """Two adjacent rungs of one policy, compared on the seeds both ran."""

    first: str
    second: str
    shared: tuple[int, ...]
    """The seeds both rungs ran: the only ones the comparison reads."""
    only_first: tuple[int, ...]
    only_second: tuple[int, ...]
    rise: float
    """The second rung's pooled first-sight rate minus the first's, both pooled over the
    shared seeds (NaN when they share none, or one has no commit on them)."""
    valid: bool


def _pooled_first_sight(episodes: pd.DataFrame) -> float:
    commits = float(episodes["n_commits"].sum())
    return float(episodes["first_sight_commits"].sum()) / commits if commits else math.nan


def rung_pairs(mine: pd.DataFrame, episodes: pd.DataFrame) -> list[RungPair]:
    """A policy's adjacent default-skin rungs (``mine``: its cells at one (B, K);
    ``episodes``: its default-skin episodes there), each pair re-pooled on its shared seeds."""
    pairs = []
    for (a, _, ok_a), (b, _, ok_b) in itertools.pairwise(_ladder_rungs(mine)):
        ea, eb = episodes[episodes["framing"] == a], episodes[episodes["framing"] == b]
        seeds_a, seeds_b = {int(s) for s in ea["seed"]}, {int(s) for s in eb["seed"]}
        shared = seeds_a & seeds_b
        rise = (
            _pooled_first_sight(eb[eb["seed"].isin(shared)])
            - _pooled_first_sight(ea[ea["seed"].isin(shared)])
            if shared
            else math.nan
        )
        pairs.append(
            RungPair(
                a,
                b,
                tuple(sorted(shared)),
                tuple(sorted(seeds_a - shared)),
                tuple(sorted(seeds_b - shared)),
                rise,
                ok_a and ok_b,
            )
        )
    return pairs


def _left_out(pair: RungPair) -> str:
    """The seeds one rung ran and the other did not (``r0 only: 2012–2023``)."""
    parts = [
        f"{name} only: {seed_set_text(seeds)}"
        for name, seeds in ((pair.first, pair.only_first), (pair.second, pair.only_second))
        if seeds
    ]
    return "; ".join(parts) or "none"


def _ladder_rungs(mine: pd.DataFrame) -> list[tuple[str, float, bool]]:
    """A policy's default-skin rungs in ladder order, for :func:`ladder_trigger`."""
    rows = mine[mine["skin"] == "default"]
    rows = rows.assign(_o=rows["rung"].map(ladder_order)).sort_values("_o")
    return [
        (str(r["rung"]), float(r["first_sight_rate"]), not _invalid(r)) for _, r in rows.iterrows()
    ]


def ladder_setting(cells: pd.DataFrame) -> tuple[int, float]:
    """The (B, K) the ladder shows: the paper's (3, 0) when present, else the commonest."""
    pairs = list(zip(cells["budget"], cells["cost"], strict=True))
    if PAPER_SETTING in pairs:
        return PAPER_SETTING
    counts: dict[tuple[int, float], int] = {}
    for pair in pairs:
        counts[pair] = counts.get(pair, 0) + 1
    return min(counts, key=lambda p: (-counts[p], p))


def _framings(cells: pd.DataFrame) -> list[str]:
    pairs = {(r, s) for r, s in zip(cells["rung"], cells["skin"], strict=True)}
    return [framing_name(r, s) for r, s in sorted(pairs, key=lambda p: _framing_order(*p))]


def _seed_columns(mine: pd.DataFrame, framings: Sequence[str]) -> dict[str, str]:
    """A ladder row's ``seeds`` and ``n``: the seed set most of its cells ran, then each
    framing that ran another one (``2000–2023; r2: 2000–2011``)."""
    sets: dict[str, tuple[str, int]] = {}
    for framing in framings:
        hit = mine[mine["framing"] == framing]
        if len(hit):
            sets[framing] = (str(hit.iloc[0]["seeds"]), int(hit.iloc[0]["n"]))
    if not sets:
        return {"seeds": "", "n": ""}
    counts: dict[tuple[str, int], int] = {}
    for value in sets.values():
        counts[value] = counts.get(value, 0) + 1
    common = max(counts, key=lambda v: counts[v])  # the first of the commonest, on a tie
    others = [(f, v) for f, v in sets.items() if v != common]
    return {
        "seeds": "; ".join([common[0], *(f"{f}: {v[0]}" for f, v in others)]),
        "n": "; ".join([str(common[1]), *(f"{f}: {v[1]}" for f, v in others)]),
    }


def _seed_note(sel: pd.DataFrame) -> str:
    """Whether the ladder's cells ran one seed set, and how rungs are compared when not."""
    sets = set(sel["seeds"])
    if len(sets) == 1:
        return f"Every cell ran the same seeds: {sets.pop()} (n = {int(sel['n'].iloc[0])})."
    return (
        "Cells differ in their seed sets (n and seeds: the set most of a row's cells ran, then "
        "each framing that ran another): a cell pools its own seeds, so two cells read side by "
        "side differ by their streams as well as their framing. The trigger and ladder_paired "
        "compare adjacent rungs only on the seeds both ran."
    )


def _model_break(policies: list[str]) -> list[int]:
    kinds = ["/" in p for p in policies]
    return [i for i in range(1, len(kinds)) if kinds[i] and not kinds[i - 1]]


_CELL_NOTE = (
    "Cells: pooled score (Σ utility / Σ OPT) ± SE / first-sight commitment rate ± SE; "
    "SEs are delta-method errors with episodes as units. Where Σ OPT = 0 the cell shows the "
    "mean net utility instead."
)


_TRIGGER_NOTE = (
    "trigger: the paper's preregistered rule, the earliest adjacent rung (R0 → R1 → R2 → R3, "
    "default skins) where first-sight commitment among commits rises by ≥ 30 points, both "
    "rungs re-pooled on the seeds they share (rungs sharing none cannot trigger); rungs "
    f"marked {INVALID_MARK} cannot trigger."
)
_INVALID_NOTE = (
    f"{INVALID_MARK} invalid rung (the paper's rule): more than 10 % of its decision turns "
    "were unresolved (counted as PASS)."
)


def _beyond_paper_note(cells: pd.DataFrame) -> list[str]:
    """A note naming the rungs shown that the paper's ladder (R0–R3) does not have, by the
    registry's label and title (none when every rung is the paper's)."""
    extra = sorted(set(cells["rung"]) - set(PAPER_RUNGS), key=ladder_order)
    if not extra:
        return []
    named = "; ".join(f"{r}: {framing_class(r).label} ({framing_class(r).title})" for r in extra)
    return [f"Rungs beyond the paper's R0–R3, in ladder order: {named}."]


def _setting_episodes(episodes: pd.DataFrame, budget: int, cost: float) -> pd.DataFrame:
    return episodes[(episodes["budget"] == budget) & (episodes["cost"] == cost)]


def _row_trigger(mine: pd.DataFrame, policy_episodes: pd.DataFrame | None) -> str:
    """A ladder row's trigger: on each pair's shared seeds given the episodes, else (cells
    alone) on the cells' pooled rates."""
    rungs = _ladder_rungs(mine)
    if len(rungs) < 2:
        return ""
    if policy_episodes is None:
        return ladder_trigger(rungs) or "none"
    pairs = rung_pairs(mine, policy_episodes)
    return first_trigger((p.second, p.rise, p.valid) for p in pairs) or "none"


def ladder_table(
    cells: pd.DataFrame, dropped: int = 0, episodes: pd.DataFrame | None = None
) -> Table | None:
    """Policies × framings at one (B, K): the framing ladder. With ``episodes`` (the report
    passes them) the trigger reads each adjacent pair on the seeds both rungs ran."""
    if cells.empty:
        return None
    budget, cost = ladder_setting(cells)
    sel = cells[(cells["budget"] == budget) & (cells["cost"] == cost)]
    eps = None if episodes is None else _setting_episodes(episodes, budget, cost)
    framings = _framings(sel)
    policies = sorted(dict.fromkeys(sel["policy"]), key=_policy_order)
    shown_rows = []
    for policy in policies:
        mine = sel[sel["policy"] == policy]
        row = {"policy": policy, "type": actor_kind(policy)}
        row |= _seed_columns(mine, framings)
        for framing in framings:
            hit = mine[mine["framing"] == framing]
            row[framing] = _cell_text(hit.iloc[0]) if len(hit) else ""
        base = None if eps is None else eps[(eps["policy"] == policy) & (eps["skin"] == "default")]
        row["trigger"] = _row_trigger(mine, base)
        shown_rows.append(row)
    order = {p: i for i, p in enumerate(policies)}
    fr_order = {f: i for i, f in enumerate(framings)}
    data = sel.assign(_p=sel["policy"].map(order), _f=sel["framing"].map(fr_order))
    data = data.sort_values(["_p", "_f"]).drop(columns=["_p", "_f"]).reset_index(drop=True)
    notes = [_CELL_NOTE, "Reference policies (no model) are listed first, then models."]
    if any(is_human(p) for p in policies):
        notes.append("People (human:<name>, econbench allo play) follow the models, each apart.")
    notes += [_seed_note(sel), _TRIGGER_NOTE, *_beyond_paper_note(sel)]
    if any(_invalid(r) for r in data.to_dict("records")):
        notes.append(_INVALID_NOTE)
    notes += partial_notes(data.to_dict("records"))
    if dropped:
        notes.append(f"{dropped} duplicate episode(s) (same cell and seed) counted once.")
    return Table(
        "ladder",
        f"AlloBench framing ladder (B = {budget}, K = {cost:g})",
        data,
        pd.DataFrame(shown_rows),
        notes,
        _model_break(policies),
        text_columns=3,
    )


def paper_table() -> Table:
    """The paper's first-sight commitment rates by rung (docs/allobench.md §7), to read
    beside ours."""
    rungs = list(PAPER_RUNGS)
    data = pd.DataFrame(
        [{"model": m, **dict(zip(rungs, v, strict=True))} for m, v in PAPER_FIRST_SIGHT.items()]
    )
    display = data.copy()
    for rung in rungs:
        display[rung] = [f"{v} %" for v in data[rung]]
    return Table(
        "ladder_paper",
        "The paper's first-sight commitment rates by rung (for comparison)",
        data,
        display.astype(str),
        ["From the AllocBench paper (docs/allobench.md §7); rates in % of commits."],
    )


def _pct(value: float, digits: int = 0) -> str:
    return "–" if value is None or math.isnan(value) else f"{100 * value:.{digits}f} %"


def kappa_table(cells: pd.DataFrame) -> Table | None:
    """One row per (framing, policy, B, K): hazard, net, optimum and regret first (the paper's
    economic surface), then the pooled ratio and the other diagnostics."""
    if cells.empty or cells["cost"].nunique() < 2:
        return None
    data = cells.assign(
        _f=[_framing_order(r, k) for r, k in zip(cells["rung"], cells["skin"], strict=True)],
        _p=cells["policy"].map(_policy_order),
    )
    data = data.sort_values(["_f", "_p", "budget", "cost"], kind="stable")
    data = data.drop(columns=["_f", "_p"]).reset_index(drop=True)
    shown_rows = []
    for _, row in data.iterrows():
        marks = (f" {INVALID_MARK}" if _invalid(row) else "") + (
            f" {PARTIAL_MARK}" if row["partial"] else ""
        )
        score = "–" if math.isnan(row["score"]) else fmt_pm(row["score"], row["score_se"])
        shown_rows.append(
            {
                "framing": row["framing"],
                "policy": row["policy"],
                "B": str(row["budget"]),
                "K": f"{row['cost']:g}",
                "hazard": _pct(row["first_sight_hazard"]) + marks,
                "net": fmt_pm(row["net_mean"], row["net_se"], 1),
                "optimum": f"{row['net_optimum_mean']:.1f}",
                "regret": fmt_pm(row["regret_mean"], row["regret_se"], 1),
                "score": score,
                "first sight": _pct(row["first_sight_rate"]),
                "budget use": _pct(row["budget_utilisation"]),
                "zero-commit": _pct(row["zero_commit_incidence"]),
                "n": str(row["episodes"]),
                "seeds": row["seeds"],
            }
        )
    framings = [r["framing"] for r in shown_rows]
    breaks = [i for i in range(1, len(framings)) if framings[i] != framings[i - 1]]
    notes = [
        "hazard: first-sight hazard, the committed share of eligible first-occurrence turns "
        "(class untooled, budget left, reply resolved), pooled over turns, zero-commit episodes "
        "included. net: mean net utility (collected − K · builds) ± SE; optimum: mean exact "
        "hindsight net optimum; regret: mean optimum − net ± SE.",
        "score: the pooled ratio Σ utility / Σ OPT ± SE (it degenerates as the optimum → 0 at "
        "high K; no headline there); first sight: among commits; budget use: builds (and R3 "
        "rebuilds) / B; zero-commit: share of episodes without a build.",
        "K is the build charge; at K = 24 the optimum is to build nothing.",
        "n: the cell's episodes, one per seed; seeds: which (rows with different seeds pool "
        "different streams).",
    ]
    if any(_invalid(r) for r in data.to_dict("records")):
        notes.append(_INVALID_NOTE)
    notes += partial_notes(data.to_dict("records"))
    return Table(
        "kappa",
        "AlloBench build-charge sensitivity (hazard, net utility, optimum, regret)",
        data,
        pd.DataFrame(shown_rows),
        notes,
        breaks,
        text_columns=4,
    )


def _seed_ratio(episodes: pd.DataFrame, num: str, den: str) -> dict[int, tuple[float, float]]:
    """Per seed: (numerator, denominator) of a pooled ratio (first-sight commits and commits,
    or utility and OPT)."""
    return {
        int(seed): (float(x), float(y))
        for seed, x, y in zip(episodes["seed"], episodes[num], episodes[den], strict=True)
    }


def _paired_rungs(
    first: pd.DataFrame, second: pd.DataFrame, seeds: Sequence[int], num: str, den: str
) -> Any:
    """The paper's paired difference of the two rungs' pooled ``num / den`` over ``seeds``
    (both ran them); ``None`` when a rung's Σ den is 0 on them."""
    if not seeds:
        return None
    a, b = _seed_ratio(first, num, den), _seed_ratio(second, num, den)
    return paired_ratio_bootstrap(
        ([a[s][0] for s in seeds], [a[s][1] for s in seeds]),
        ([b[s][0] for s in seeds], [b[s][1] for s in seeds]),
    )


def _points(diff: Any, scale: float, digits: int) -> tuple[str, str]:
    """A paired difference and its interval as display text (``–`` when undefined)."""
    if diff is None:
        return "–", "–"
    lo, hi = scale * diff.lo, scale * diff.hi
    return f"{scale * diff.mean:+.{digits}f}", f"[{lo:+.{digits}f}, {hi:+.{digits}f}]"


def ladder_paired(episodes: pd.DataFrame, cells: pd.DataFrame) -> Table | None:
    """Paired comparisons of adjacent rungs (default skins) per policy at the ladder's (B, K),
    over the seeds both rungs ran (the others are listed as left out): the paper's difference
    of re-pooled first-sight-among-commitments ratios, later − earlier, and the same paired
    difference of the pooled score Σ utility / Σ OPT, each with its seed-bootstrap interval
    (10,000 resamples, RNG seed 0, 95 % percentile). Only pairs that share seeds.
    ``pooled_rise`` is the rise the trigger reads: the same shared-seed difference."""
    if cells.empty:
        return None
    budget, cost = ladder_setting(cells)
    sel = cells[(cells["budget"] == budget) & (cells["cost"] == cost)]
    eps = _setting_episodes(episodes, budget, cost)
    data_rows, shown_rows = [], []
    for policy in sorted(dict.fromkeys(sel["policy"]), key=_policy_order):
        mine = sel[sel["policy"] == policy]
        base = eps[(eps["policy"] == policy) & (eps["skin"] == "default")]
        pairs = rung_pairs(mine, base)
        trigger = first_trigger((p.second, p.rise, p.valid) for p in pairs)
        for pair in pairs:
            a, b = pair.first, pair.second
            ea, eb = base[base["framing"] == a], base[base["framing"] == b]
            fs = _paired_rungs(ea, eb, pair.shared, "first_sight_commits", "n_commits")
            score = _paired_rungs(ea, eb, pair.shared, "utility", "opt")
            if fs is None and score is None:
                continue
            nan = math.nan
            data_rows.append(
                {
                    "policy": policy,
                    "from": a,
                    "to": b,
                    "paired_seeds": len(pair.shared),
                    "shared_seeds": seed_set_text(pair.shared),
                    "only_from": seed_set_text(pair.only_first) if pair.only_first else "",
                    "only_to": seed_set_text(pair.only_second) if pair.only_second else "",
                    "diff_mean": fs.mean if fs else nan,
                    "ci_lo": fs.lo if fs else nan,
                    "ci_hi": fs.hi if fs else nan,
                    "score_diff": score.mean if score else nan,
                    "score_ci_lo": score.lo if score else nan,
                    "score_ci_hi": score.hi if score else nan,
                    "pooled_rise": pair.rise,
                    "valid": pair.valid,
                    "trigger": trigger == b,
                }
            )
            fs_text, fs_ci = _points(fs, 100, 1)
            score_text, score_ci = _points(score, 1, 3)
            shown_rows.append(
                {
                    "policy": policy,
                    "rungs": f"{a} → {b}",
                    "shared seeds": seed_set_text(pair.shared),
                    "left out": _left_out(pair),
                    "n": str(len(pair.shared)),
                    "Δ first sight (points)": fs_text,
                    "95 % CI": fs_ci,
                    "Δ score": score_text,
                    "95 % CI (score)": score_ci,
                    "trigger": "yes" if trigger == b else ("" if pair.valid else "invalid"),
                }
            )
    if not data_rows:
        return None
    notes = [
        "Δ first sight: the later rung's pooled first-sight share of commits minus the "
        "earlier rung's, both re-pooled over the seeds both ran (shared seeds; the seeds only "
        "one rung ran are left out and listed); 95 % percentile interval of 10,000 paired "
        "seed-bootstrap resamples re-pooling both rungs (RNG seed 0; zero-commit seeds stay "
        "in and add nothing), the paper's estimand.",
        "Δ score: the same paired difference of the pooled score Σ utility / Σ OPT, so a "
        "score change between rungs is read on the same streams (– where Σ OPT = 0).",
        "trigger: the preregistered rule (≥ 30 points, earliest adjacent pair), read from the "
        "same shared-seed first-sight difference.",
    ]
    if any(r["only_from"] or r["only_to"] for r in data_rows):
        notes.append(
            "Some rungs ran seeds their neighbour did not: those seeds enter neither Δ nor the "
            "trigger, so a seed-set difference is not read as a framing effect."
        )
    return Table(
        "ladder_paired",
        f"AlloBench ladder: paired rung differences on shared seeds (B = {budget}, K = {cost:g})",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        notes,
        text_columns=4,
    )


def _paper_cells(runs: Sequence[RunFrames]) -> list[tuple[str, Path]]:
    """(source family, directory) of every AlloBench cell imported from the paper."""
    out = []
    for run in runs:
        source = run.config.get("source")
        if isinstance(source, dict) and source.get("kind") == "paper" and source.get("family"):
            out.append((str(source["family"]), run.path))
    return out


def _check_text(check: Check, value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.{check.digits}f}"


def paper_check_table(runs: Sequence[RunFrames]) -> Table | None:
    """The paper's published numbers beside the same numbers recomputed from its imported runs
    (:mod:`econbench.runs.allo.paper_check`)."""
    cells = _paper_cells(runs)
    if not cells:
        return None
    checks = paper_checks(cells)
    if not checks:
        return None
    data = pd.DataFrame(
        [{**c.__dict__, "status": c.status} for c in checks],
    )
    display = pd.DataFrame(
        [
            {
                "table": c.table,
                "row": c.row,
                "measure": c.measure,
                "paper": _check_text(c, c.paper),
                "econbench": _check_text(c, c.ours),
                "match": c.status,
            }
            for c in checks
        ]
    )
    counts = data["status"].value_counts()
    tables = [i for i in range(1, len(checks)) if checks[i].table != checks[i - 1].table]
    return Table(
        "paper_check",
        "The paper's published tables, recomputed from its stored runs",
        data,
        display,
        [
            f"{int(counts.get('yes', 0))} of {len(checks)} numbers agree within the paper's "
            f"rounding; {int(counts.get('≈', 0))} bootstrap interval ends lie within 1 point "
            f"(≈); {int(counts.get('no', 0))} differ (no). docs/allobench.md, 'The paper's "
            "tables, reproduced', explains each difference.",
            "T6–T9, T11, T12 and T3 are the paper's Tables 6–9 (paired ladder differences, "
            "per-rung first sight, zero-commit incidence, economic surface), 11 (transfer of the "
            "post-trained Qwen), 12 and 3 (Qwen scores); T7 at integer precision is Table 1.",
            "Intervals: 10,000 seed resamples drawn as the paper's boot_ratio_ci draws them "
            "(numpy default_rng(0).integers), percentile; paired differences re-pool both arms "
            "on the same resamples.",
        ],
        tables,
        text_columns=3,
    )


def allo_section(runs: Sequence[RunFrames]) -> Section:
    """AlloBench's tables over its cells; the episodes and cells stay for the figures."""
    episodes, dropped = allo_episodes(runs)
    cells = allo_cells(episodes)
    built = (
        ladder_table(cells, dropped, episodes),
        paper_table() if not cells.empty else None,
        ladder_paired(episodes, cells),
        kappa_table(cells),
        paper_check_table(runs),
    )
    tables = [t for t in built if t is not None]
    frames = {"episodes": episodes, "cells": cells}
    return Section(READER.name, READER.title, list(runs), tables, PAGE_TABLES, frames)
