"""The report over many runs: the paper's tables as Markdown, CSV and LaTeX, figures, and one
self-contained ``index.html`` (``econbench report``).

Tables (each a :class:`Table`: numeric ``data`` for the CSV, formatted ``display`` for
Markdown, LaTeX and HTML; the same numbers in all three):

- ``table2``: the evaluated firm ``roaster_A`` per configuration (runs grouped by label, seeds
  pooled): net income, revenue, tool calls, idle days, messages sent, LLM cost in USD, as
  mean ± std over seeds (std with ddof = 1, blank for one seed; the cost is "n/a" when any
  run used an unpriced model). ``table2_firms``: the same for all six firms.
- ``table3``: ``roaster_A``'s average inventory (kg), spoilage rate (%) and realised average
  sale price per item ($/kg, over the runs that sold the item).
- ``ladder``: AlloBench policies × framings (``r0``, R0 reskins as ``r0:quiver`` …, ``r1``,
  ``r2``, ``r3``) at one (B, K) setting (the paper's B = 3, K = 0 when present): pooled score
  ± SE and first-sight rate ± SE; reference policies first, then models. ``ladder_paper``: the
  paper's first-sight rates (docs/allobench.md §7) for comparison.
  Each policy row ends with the preregistered **trigger** (see :func:`ladder_trigger`); a rung
  whose unresolved decision turns exceed 10 % is invalid and marked ‡.
- ``ladder_paired``: per policy, adjacent rungs sharing seeds: the paper's paired comparison,
  the difference of the two rungs' re-pooled first-sight-among-commitments ratios with a
  seed-bootstrap interval (:func:`econbench.allo.metrics.paired_ratio_bootstrap`: both rungs
  re-pooled on the same resampled seeds, 10,000 resamples, RNG seed 0, percentile interval;
  zero-commit seeds stay in and add nothing).
- ``paper_check``: when the runs include cells imported from the paper (``econbench allo
  import``), every number of the paper's published tables recomputed from them beside the
  paper's (:mod:`econbench.allo.paper_check`).
- ``kappa``: one row per (framing, policy, B, K), the paper's economic-surface columns first:
  first-sight hazard (committed share of eligible first-occurrence turns, zero-commit episodes
  included), mean net utility, mean exact hindsight net optimum, mean regret (optimum − net);
  then the pooled ratio Σ utility / Σ OPT (it degenerates as the optimum → 0 at high K), the
  first-sight rate among commits, budget utilisation and zero-commit incidence (only when the
  runs cover at least two values of K).

Standard errors (:func:`ratio_se`) are delta-method (linearisation) errors of a pooled ratio
with the episode as the sampling unit: the score is Σ utility / Σ OPT over episodes, the
first-sight rate Σ first-sight commits / Σ commits over episodes with commits (so commits of
one episode are not treated as independent draws, unlike a binomial error). They are exact
closed forms, so reports are deterministic. Episodes of the same cell found in two run
directories under the same seed are counted once.

Only completed runs enter the tables unless ``include_partial``; the others are listed with
their status. Included partial runs are marked with † (their numbers are provisional).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from econbench.allo.metrics import paired_ratio_bootstrap
from econbench.allo.paper_check import Check, paper_checks
from econbench.runs.frames import RunFrames, framing_name, load_runs

FOCAL_FIRM = "roaster_A"
FIRM_ORDER = ("farmer_A", "farmer_B", "roaster_A", "roaster_B", "retailer_A", "retailer_B")
PARTIAL_MARK = "†"
INVALID_MARK = "‡"
INVALID_UNRESOLVED = 0.10
"""The paper's validity rule: a rung is invalid when more than 10 % of its decisions are
unresolved (no decision, several decisive calls, an unparseable reply: counted as PASS)."""
TRIGGER_RISE = 0.30
"""The paper's preregistered trigger: an adjacent rise of at least 30 points."""
PARTIAL_NOTE = (
    f"{PARTIAL_MARK} includes runs that had not completed (stopped, or still running); "
    "their numbers are provisional."
)
PAPER_SETTING = (3, 0.0)
"""The ladder's (B, K) when the runs hold it: the paper's."""

PAPER_FIRST_SIGHT: dict[str, tuple[int, int, int, int]] = {
    "Claude Haiku 4.5": (28, 33, 99, 100),
    "Claude Opus 4.8": (4, 0, 92, 99),
    "GPT-5.4-mini": (15, 29, 85, 88),
    "GPT-5.6 Sol": (24, 0, 39, 100),
}
"""The paper's first-sight commitment rates (%) by rung R0–R3 (docs/allobench.md §7)."""

_RUNG_ORDER = {"r0": 0, "r1": 2, "r2": 3, "r3": 4}
_SKIN_ORDER = {"default": 0, "chest": 1, "quiver": 2, "cauldron": 3}
_REFERENCE_ORDER = ("eager", "wait", "posterior", "bayes", "hindsight", "never", "random")


@dataclass
class Table:
    """One report table: ``data`` is what the CSV holds, ``display`` the formatted cells."""

    name: str
    title: str
    data: pd.DataFrame
    display: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    breaks: list[int] = field(default_factory=list)
    """Display rows before which a rule separates groups (e.g. models after references)."""
    text_columns: int = 1
    """How many leading display columns are names (left-aligned); the rest are numbers."""


# -- numbers ------------------------------------------------------------------------------------


def mean_std(values: Iterable[float | None]) -> tuple[float, float, int]:
    """Mean, std (ddof = 1; NaN for one value) and n; the mean is NaN if any value is missing."""
    vals = [math.nan if v is None else float(v) for v in values]
    n = len(vals)
    if n == 0 or any(math.isnan(v) for v in vals):
        return math.nan, math.nan, n
    arr = np.asarray(vals)
    return float(arr.mean()), float(arr.std(ddof=1)) if n > 1 else math.nan, n


def ratio_se(num: Sequence[float], den: Sequence[float]) -> float:
    """Delta-method standard error of the pooled ratio R = Σ num / Σ den over n units:
    SE = sqrt(Σ (num_i − R·den_i)² / (n (n − 1))) / mean(den). NaN for n < 2 or Σ den = 0."""
    x = np.asarray(num, dtype=float)
    y = np.asarray(den, dtype=float)
    n = len(x)
    if n < 2 or y.sum() <= 0:
        return math.nan
    r = x.sum() / y.sum()
    resid = x - r * y
    return float(math.sqrt((resid**2).sum() / (n * (n - 1))) / y.mean())


def _mean_se(values: Sequence[float]) -> float:
    """Standard error of a mean (NaN for fewer than two values)."""
    arr = np.asarray(values, dtype=float)
    return float(arr.std(ddof=1) / math.sqrt(len(arr))) if len(arr) > 1 else math.nan


def _num(value: float, digits: int) -> str:
    return f"{value:,.{digits}f}"


def fmt_mean_std(mean: float, std: float, digits: int = 2, na: str = "n/a") -> str:
    """``mean ± std``; ``mean`` alone when std is undefined; ``na`` when mean is missing."""
    if mean is None or math.isnan(mean):
        return na
    if std is None or math.isnan(std):
        return _num(mean, digits)
    return f"{_num(mean, digits)} ± {_num(std, digits)}"


def fmt_pm(value: float | None, se: float | None, digits: int = 3, scale: float = 1.0) -> str:
    """``value ± se`` (scaled, e.g. 100 for percent); ``–`` for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = f"{value * scale:.{digits}f}"
    if se is not None and not math.isnan(se):
        text += f" ± {se * scale:.{digits}f}"
    return text


# -- run selection and grouping -----------------------------------------------------------------


def split_runs(
    runs: Sequence[RunFrames], include_partial: bool = False
) -> tuple[list[RunFrames], list[RunFrames]]:
    """(runs entering the tables, runs left out): completed ones, plus the rest if asked."""
    used = [r for r in runs if r.completed or include_partial]
    return used, [r for r in runs if r not in used]


def group_by_label(runs: Iterable[RunFrames]) -> dict[str, list[RunFrames]]:
    """Runs per configuration label, in order of first appearance."""
    groups: dict[str, list[RunFrames]] = {}
    for run in runs:
        groups.setdefault(run.label, []).append(run)
    return groups


def _shown(label: str, runs: Sequence[RunFrames]) -> str:
    return label + (f" {PARTIAL_MARK}" if any(not r.completed for r in runs) else "")


def _firm_row(run: RunFrames, firm: str) -> dict[str, Any] | None:
    frame = run.summary
    if frame.empty:
        return None
    rows = frame[frame["firm"] == firm]
    return None if rows.empty else rows.iloc[0].to_dict()


# -- CoffeeBench tables -------------------------------------------------------------------------

_T2_METRICS: list[tuple[str, str, str, int]] = [
    # (summary column, data column stem, display header, decimals)
    ("net_income", "net_income", "net income ($)", 2),
    ("revenue", "revenue", "revenue ($)", 2),
    ("tool_calls", "tool_calls", "tool calls", 1),
    ("idle_days", "idle_days", "idle days", 1),
    ("messages_sent", "messages_sent", "messages sent", 1),
    ("cost_usd", "llm_cost_usd", "LLM cost (USD)", 2),
]


def _value(row: dict[str, Any], key: str) -> float | None:
    value = row.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def _metric_cells(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, str]]:
    data: dict[str, Any] = {}
    shown: dict[str, str] = {}
    for key, stem, header, digits in _T2_METRICS:
        mean, std, _ = mean_std(_value(r, key) for r in rows)
        data[f"{stem}_mean"], data[f"{stem}_std"] = mean, std
        shown[header] = fmt_mean_std(mean, std, digits)
    return data, shown


def _coffee_groups(runs: Sequence[RunFrames]) -> dict[str, list[RunFrames]]:
    return group_by_label(r for r in runs if r.benchmark == "coffee" and not r.summary.empty)


def table2(runs: Sequence[RunFrames]) -> Table | None:
    """The paper's Table 2: roaster_A per configuration, mean ± std over seeds."""
    data_rows, shown_rows = [], []
    for label, group in _coffee_groups(runs).items():
        rows = [row for run in group if (row := _firm_row(run, FOCAL_FIRM)) is not None]
        if not rows:
            continue
        data, shown = _metric_cells(rows)
        partial = any(not r.completed for r in group)
        data_rows.append({"configuration": label, "n": len(rows), **data, "partial": partial})
        shown_rows.append({"configuration": _shown(label, group), "n": str(len(rows)), **shown})
    if not data_rows:
        return None
    return Table(
        "table2",
        f"Table 2 — {FOCAL_FIRM} per configuration (mean ± std over seeds)",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        [*_partial_notes(data_rows), "LLM cost is n/a when a run used a model with no price."],
    )


def table2_firms(runs: Sequence[RunFrames]) -> Table | None:
    """Table 2's metrics for every firm of every configuration."""
    data_rows, shown_rows = [], []
    for label, group in _coffee_groups(runs).items():
        firms = [f for f in FIRM_ORDER if any(_firm_row(r, f) for r in group)]
        for firm in firms:
            rows = [row for run in group if (row := _firm_row(run, firm)) is not None]
            data, shown = _metric_cells(rows)
            policy = "/".join(dict.fromkeys(str(r.get("policy")) for r in rows))
            partial = any(not r.completed for r in group)
            data_rows.append(
                {"configuration": label, "firm": firm, "policy": policy, "n": len(rows)}
                | data
                | {"partial": partial}
            )
            shown_rows.append(
                {
                    "configuration": _shown(label, group),
                    "firm": firm,
                    "policy": policy,
                    "n": str(len(rows)),
                }
                | shown
            )
    if not data_rows:
        return None
    breaks = [
        i
        for i in range(1, len(data_rows))
        if data_rows[i]["configuration"] != data_rows[i - 1]["configuration"]
    ]
    return Table(
        "table2_firms",
        "Table 2 (all firms) — per configuration and firm (mean ± std over seeds)",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        _partial_notes(data_rows),
        breaks,
        text_columns=3,
    )


def _item_name(item: str) -> str:
    return item.removesuffix("_kg").replace("_", " ")


def table3(runs: Sequence[RunFrames]) -> Table | None:
    """The paper's Table 3: roaster_A's average inventory, spoilage rate and sale prices."""
    groups = _coffee_groups(runs)
    per_group: list[tuple[str, list[RunFrames], list[dict[str, Any]]]] = []
    items: set[str] = set()
    for label, group in groups.items():
        rows = [row for run in group if (row := _firm_row(run, FOCAL_FIRM)) is not None]
        if rows:
            per_group.append((label, group, rows))
            for row in rows:
                items |= {
                    k.split(".", 1)[1]
                    for k in row
                    if k.startswith("avg_sale_price.") and _value(row, k) is not None
                }
    if not per_group:
        return None
    data_rows, shown_rows = [], []
    for label, group, rows in per_group:
        n = len(rows)
        inv = mean_std(_value(r, "average_inventory_kg") for r in rows)
        spoil = mean_std(
            None if (v := _value(r, "spoilage_rate")) is None else 100 * v for r in rows
        )
        data: dict[str, Any] = {"configuration": label, "n": n}
        data.update(avg_inventory_kg_mean=inv[0], avg_inventory_kg_std=inv[1])
        data.update(spoilage_rate_pct_mean=spoil[0], spoilage_rate_pct_std=spoil[1])
        shown = {
            "configuration": _shown(label, group),
            "n": str(n),
            "avg inventory (kg)": fmt_mean_std(inv[0], inv[1], 1),
            "spoilage rate (%)": fmt_mean_std(spoil[0], spoil[1], 2),
        }
        for item in sorted(items):
            prices = [v for r in rows if (v := _value(r, f"avg_sale_price.{item}")) is not None]
            mean, std, k = mean_std(prices)
            data[f"price_{item}_mean"], data[f"price_{item}_std"] = mean, std
            data[f"price_{item}_runs"] = k
            text = fmt_mean_std(mean, std, 2, na="–")
            shown[f"price {_item_name(item)} ($/kg)"] = text + (
                f" ({k}/{n} runs)" if 0 < k < n else ""
            )
        data["partial"] = any(not r.completed for r in group)
        data_rows.append(data)
        shown_rows.append(shown)
    return Table(
        "table3",
        f"Table 3 — {FOCAL_FIRM}: inventory, spoilage and realised sale prices",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        [
            *_partial_notes(data_rows),
            "Prices are averaged over the runs that sold the item (k/n when not all did).",
        ],
    )


def _partial_notes(rows: list[dict[str, Any]]) -> list[str]:
    return [PARTIAL_NOTE] if any(r.get("partial") for r in rows) else []


# -- AlloBench tables ---------------------------------------------------------------------------

CELL_KEYS = ["policy", "framing", "skin", "protocol", "budget", "cost"]
"""What makes a cell: cells of different protocols (texts and turn rules) never pool; a run
whose config has no protocol was played before protocols had names, with econbench's texts."""


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
        if run.benchmark != "allo" or run.episodes.empty:
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
        ep["budget"] = int(cfg.get("budget", 3))
        ep["cost"] = float(cfg.get("cost", 0.0))
        ep["partial"] = not run.completed
        parts.append(ep)
    if not parts:
        return pd.DataFrame(columns=[*CELL_KEYS, "seed"]), 0
    frame = pd.concat(parts, ignore_index=True)
    unique = frame.drop_duplicates([*CELL_KEYS, "seed"], keep="first")
    return unique.reset_index(drop=True), len(frame) - len(unique)


def allo_cells(episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per cell (policy, framing, skin, B, K): episodes, commits, pooled score and
    first-sight rate with their delta-method standard errors (see :func:`ratio_se`)."""
    rows = []
    if episodes.empty:
        return pd.DataFrame(columns=[*CELL_KEYS, "episodes", "score", "first_sight_rate"])
    protocols = set(episodes["protocol"])
    for key, ep in episodes.groupby(CELL_KEYS, sort=False):
        policy, framing, skin, protocol, budget, cost = key
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
                "kind": "model" if "/" in policy else "reference",
                "framing": framing_name(framing, skin)
                + (f" ({protocol})" if len(protocols) > 1 else ""),
                "rung": framing,
                "skin": skin,
                "protocol": protocol,
                "budget": int(budget),
                "cost": float(cost),
                "episodes": len(ep),
                "commits": commits,
                "score": float(ep["utility"].sum()) / opt if opt > 0 else math.nan,
                "score_se": ratio_se(ep["utility"], ep["opt"]),
                "utility_mean": float(ep["utility"].mean()),
                "utility_se": _mean_se(ep["utility"]),
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
                "net_se": _mean_se(ep["utility"]),
                "net_optimum_mean": float(ep["opt"].mean()),
                "regret_mean": float(regret.mean()),
                "regret_se": _mean_se(regret),
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


def _policy_order(policy: str) -> tuple[int, int, str]:
    """Reference policies first, in the spec's order; models after, alphabetically."""
    if "/" in policy:
        return (1, 0, policy)
    head = policy.split(":", 1)[0]
    rank = _REFERENCE_ORDER.index(head) if head in _REFERENCE_ORDER else len(_REFERENCE_ORDER)
    return (0, rank, policy)


def _framing_order(rung: str, skin: str) -> tuple[int, int, str]:
    return (_RUNG_ORDER.get(rung, 9), _SKIN_ORDER.get(skin, 9), f"{rung}:{skin}")


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


def ladder_trigger(rungs: Sequence[tuple[str, float, bool]]) -> str | None:
    """The paper's preregistered trigger: the later rung of the earliest adjacent pair whose
    first-sight commitment (pooled among realised commitments) rises by at least 30 points.

    ``rungs`` are ``(name, first-sight rate, valid)`` in ladder order (R0, R1, R2, R3; the
    rungs a policy was run on, so a missing rung makes its neighbours adjacent). A pair with an
    invalid rung (more than 10 % unresolved decisions, the paper's validity rule) or an
    undefined rate (no commits) cannot trigger. ``None`` when no pair rises by 30 points."""
    for (_, before, ok_a), (name, after, ok_b) in itertools.pairwise(rungs):
        if not (ok_a and ok_b) or math.isnan(before) or math.isnan(after):
            continue
        if after - before >= TRIGGER_RISE - 1e-12:
            return name
    return None


def _ladder_rungs(mine: pd.DataFrame) -> list[tuple[str, float, bool]]:
    """A policy's default-skin rungs in ladder order, for :func:`ladder_trigger`."""
    rows = mine[mine["skin"] == "default"]
    rows = rows.assign(_o=rows["rung"].map(lambda r: _RUNG_ORDER.get(r, 9))).sort_values("_o")
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
    "default skins) where first-sight commitment among commits rises by ≥ 30 points; rungs "
    f"marked {INVALID_MARK} cannot trigger."
)
_INVALID_NOTE = (
    f"{INVALID_MARK} invalid rung (the paper's rule): more than 10 % of its decision turns "
    "were unresolved (counted as PASS)."
)


def ladder_table(cells: pd.DataFrame, dropped: int = 0) -> Table | None:
    """Policies × framings at one (B, K): the framing ladder."""
    if cells.empty:
        return None
    budget, cost = ladder_setting(cells)
    sel = cells[(cells["budget"] == budget) & (cells["cost"] == cost)]
    framings = _framings(sel)
    policies = sorted(dict.fromkeys(sel["policy"]), key=_policy_order)
    shown_rows = []
    for policy in policies:
        mine = sel[sel["policy"] == policy]
        row = {"policy": policy, "type": "model" if "/" in policy else "reference"}
        for framing in framings:
            hit = mine[mine["framing"] == framing]
            row[framing] = _cell_text(hit.iloc[0]) if len(hit) else ""
        rungs = _ladder_rungs(mine)
        row["trigger"] = (ladder_trigger(rungs) or "none") if len(rungs) > 1 else ""
        shown_rows.append(row)
    order = {p: i for i, p in enumerate(policies)}
    fr_order = {f: i for i, f in enumerate(framings)}
    data = sel.assign(_p=sel["policy"].map(order), _f=sel["framing"].map(fr_order))
    data = data.sort_values(["_p", "_f"]).drop(columns=["_p", "_f"]).reset_index(drop=True)
    notes = [_CELL_NOTE, "Reference policies (no model) are listed first, then models."]
    notes.append(_TRIGGER_NOTE)
    if any(_invalid(r) for r in data.to_dict("records")):
        notes.append(_INVALID_NOTE)
    notes += _partial_notes(data.to_dict("records"))
    if dropped:
        notes.append(f"{dropped} duplicate episode(s) (same cell and seed) counted once.")
    return Table(
        "ladder",
        f"AlloBench framing ladder (B = {budget}, K = {cost:g})",
        data,
        pd.DataFrame(shown_rows),
        notes,
        _model_break(policies),
        text_columns=2,
    )


def paper_table() -> Table:
    """The paper's first-sight commitment rates by rung (docs/allobench.md §7), to read
    beside ours."""
    rungs = ["r0", "r1", "r2", "r3"]
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
    ]
    if any(_invalid(r) for r in data.to_dict("records")):
        notes.append(_INVALID_NOTE)
    notes += _partial_notes(data.to_dict("records"))
    return Table(
        "kappa",
        "AlloBench build-charge sensitivity (hazard, net utility, optimum, regret)",
        data,
        pd.DataFrame(shown_rows),
        notes,
        breaks,
        text_columns=4,
    )


def _seed_commits(episodes: pd.DataFrame) -> dict[int, tuple[float, float]]:
    """Per seed: (first-sight commits, commits)."""
    return {
        int(seed): (float(f), float(n))
        for seed, f, n in zip(
            episodes["seed"], episodes["first_sight_commits"], episodes["n_commits"], strict=True
        )
    }


def _paired_rungs(first: pd.DataFrame, second: pd.DataFrame) -> Any:
    a, b = _seed_commits(first), _seed_commits(second)
    seeds = sorted(set(a) & set(b))
    if not seeds:
        return None
    return paired_ratio_bootstrap(
        ([a[s][0] for s in seeds], [a[s][1] for s in seeds]),
        ([b[s][0] for s in seeds], [b[s][1] for s in seeds]),
    )


def ladder_paired(episodes: pd.DataFrame, cells: pd.DataFrame) -> Table | None:
    """Paired comparisons of adjacent rungs (default skins) per policy at the ladder's (B, K):
    the paper's difference of re-pooled first-sight-among-commitments ratios, later − earlier,
    over the seeds both rungs ran, with its seed-bootstrap interval (10,000 resamples, RNG seed
    0, 95 % percentile). Only pairs that share seeds."""
    if cells.empty:
        return None
    budget, cost = ladder_setting(cells)
    sel = cells[(cells["budget"] == budget) & (cells["cost"] == cost)]
    eps = episodes[(episodes["budget"] == budget) & (episodes["cost"] == cost)]
    data_rows, shown_rows = [], []
    for policy in sorted(dict.fromkeys(sel["policy"]), key=_policy_order):
        mine = sel[sel["policy"] == policy]
        rungs = _ladder_rungs(mine)
        trigger = ladder_trigger(rungs)
        base = eps[(eps["policy"] == policy) & (eps["skin"] == "default")]
        for (a, rate_a, ok_a), (b, rate_b, ok_b) in itertools.pairwise(rungs):
            ea, eb = base[base["framing"] == a], base[base["framing"] == b]
            diff = _paired_rungs(ea, eb)
            if diff is None:
                continue
            data_rows.append(
                {
                    "policy": policy,
                    "from": a,
                    "to": b,
                    "paired_seeds": diff.n,
                    "diff_mean": diff.mean,
                    "ci_lo": diff.lo,
                    "ci_hi": diff.hi,
                    "pooled_rise": rate_b - rate_a,
                    "valid": ok_a and ok_b,
                    "trigger": trigger == b,
                }
            )
            shown_rows.append(
                {
                    "policy": policy,
                    "rungs": f"{a} → {b}",
                    "seeds": str(diff.n),
                    "Δ first sight (points)": f"{100 * diff.mean:+.1f}",
                    "95 % CI": f"[{100 * diff.lo:+.1f}, {100 * diff.hi:+.1f}]",
                    "pooled rise": "–"
                    if math.isnan(rate_b - rate_a)
                    else f"{100 * (rate_b - rate_a):+.1f}",
                    "trigger": "yes" if trigger == b else ("" if ok_a and ok_b else "invalid"),
                }
            )
    if not data_rows:
        return None
    return Table(
        "ladder_paired",
        f"AlloBench ladder: paired rung differences (B = {budget}, K = {cost:g})",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        [
            "Δ first sight: the later rung's pooled first-sight share of commits minus the "
            "earlier rung's over the seeds both ran; 95 % percentile interval of 10,000 paired "
            "seed-bootstrap resamples re-pooling both rungs (RNG seed 0; zero-commit seeds stay "
            "in and add nothing), the paper's estimand.",
            "pooled rise: difference of the rungs' pooled first-sight rates, which the "
            "preregistered trigger (≥ 30 points, earliest adjacent pair) is read from.",
        ],
        text_columns=2,
    )


def _paper_cells(runs: Sequence[RunFrames]) -> list[tuple[str, Path]]:
    """(source family, directory) of every AlloBench cell imported from the paper."""
    out = []
    for run in runs:
        source = run.config.get("source") if run.benchmark == "allo" else None
        if isinstance(source, dict) and source.get("kind") == "paper" and source.get("family"):
            out.append((str(source["family"]), run.path))
    return out


def _check_text(check: Check, value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.{check.digits}f}"


def paper_check_table(runs: Sequence[RunFrames]) -> Table | None:
    """The paper's published numbers beside the same numbers recomputed from its imported runs
    (:mod:`econbench.allo.paper_check`)."""
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
            f"(≈); {int(counts.get('no', 0))} differ (no). The README explains each difference.",
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


# -- writers ------------------------------------------------------------------------------------


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table with its title and notes."""
    cols = list(table.display.columns)
    lines = [f"### {table.title}", ""]
    lines.append("| " + " | ".join(_md_cell(c) for c in cols) + " |")
    lines.append(
        "|" + "|".join(":---" if i < table.text_columns else "---:" for i in range(len(cols))) + "|"
    )
    for row in table.display.itertuples(index=False):
        lines.append("| " + " | ".join(_md_cell(v) for v in row) + " |")
    lines += ["", *[f"- {note}" for note in table.notes]] if table.notes else []
    return "\n".join(lines) + "\n"


_TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "±": r"$\pm$",
    "†": r"$^\dagger$",
    "–": "--",
    "—": "---",
    "Σ": r"$\Sigma$",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX_ESCAPES))


def tex_escape(text: Any) -> str:
    return _TEX_RE.sub(lambda m: _TEX_ESCAPES[m.group(0)], str(text))


def to_latex(table: Table) -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
    cols = list(table.display.columns)
    text = min(table.text_columns, len(cols))
    align = "l" * text + "r" * (len(cols) - text)
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        rf"\caption{{{tex_escape(table.title)}}}",
        rf"\label{{tab:{table.name}}}",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(tex_escape(c) for c in cols) + r" \\",
        r"\midrule",
    ]
    for i, row in enumerate(table.display.itertuples(index=False)):
        if i in table.breaks:
            lines.append(r"\midrule")
        lines.append(" & ".join(tex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [rf"\par\smallskip{{\footnotesize {tex_escape(n)}}}" for n in table.notes]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_table(table: Table, out: Path) -> list[Path]:
    """``<name>.md``, ``<name>.csv`` and ``<name>.tex`` in ``out``."""
    paths = [out / f"{table.name}.{ext}" for ext in ("md", "csv", "tex")]
    paths[0].write_text(to_markdown(table), encoding="utf-8")
    table.data.to_csv(paths[1], index=False)
    paths[2].write_text(to_latex(table), encoding="utf-8")
    return paths


# -- the whole report ---------------------------------------------------------------------------


@dataclass
class Report:
    """Everything a report shows, before it is written."""

    title: str
    runs: list[RunFrames]
    excluded: list[RunFrames]
    tables: list[Table]
    cells: pd.DataFrame
    include_partial: bool = False


def build_report(
    runs: Sequence[RunFrames], *, include_partial: bool = False, title: str = "econbench report"
) -> Report:
    """Select the runs and build every table for which there is data."""
    used, excluded = split_runs(runs, include_partial)
    episodes, dropped = allo_episodes(used)
    cells = allo_cells(episodes)
    builders: list[Callable[[], Table | None]] = [
        lambda: table2(used),
        lambda: table2_firms(used),
        lambda: table3(used),
        lambda: ladder_table(cells, dropped),
        lambda: paper_table() if not cells.empty else None,
        lambda: ladder_paired(episodes, cells),
        lambda: kappa_table(cells),
        lambda: paper_check_table(used),
    ]
    tables = [t for build in builders if (t := build()) is not None]
    return Report(title, list(used), excluded, tables, cells, include_partial)


def write_report(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    include_partial: bool = False,
    title: str = "econbench report",
) -> list[Path]:
    """Find the runs under ``paths``, write tables, figures and ``index.html`` into ``out``;
    returns the files written. Raises ``FileNotFoundError`` for a missing path or no runs,
    ``NotADirectoryError`` when ``out`` is a file."""
    from econbench.runs.figures import write_figures
    from econbench.runs.report_html import write_html

    target = Path(out)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"--out {target} exists and is not a directory")
    runs = load_runs(paths)
    report = build_report(runs, include_partial=include_partial, title=title)
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for table in report.tables:
        written += write_table(table, target)
    figures = write_figures(report, target / "figures")
    written += [f.path for f in figures]
    written.append(write_html(report, figures, target / "index.html"))
    return written
