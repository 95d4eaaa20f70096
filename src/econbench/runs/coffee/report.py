"""CoffeeBench's part of the report (``econbench report``).

- ``table2``: the evaluated firm ``roaster_A`` per configuration (runs grouped by label, seeds
  pooled), with its background (who played the other five firms) and horizon: net income,
  revenue, tool calls, idle days, messages sent, LLM cost in USD, as mean ± std over seeds
  (std with ddof = 1, blank for one seed; the cost is "unpriced" when any run used an unpriced
  model, "–" when no model played the firm). ``table2_firms``: the same for all six firms.
- ``paper_table2``: the paper's own Table 2 (``econbench.runs.coffee.paper_table2``) with
  Table 2's columns, every model and both baselines, beside every Table 2, each row marked as
  the paper's, its notes saying how the paper's background compares with the runs'.
- ``yardstick``: roaster_A's mean per configuration beside the passive floor, the heuristic
  baseline and the headroom on the same background, horizon and seeds
  (``econbench.runs.coffee.yardstick``).
- ``table3``: ``roaster_A``'s average inventory (kg), spoilage rate (%) and realised average
  sale price per item ($/kg, over the seeds that sold the item).
- ``score_ci``: ``roaster_A``'s score (net income) per configuration with its resolution:
  mean, sample SD over seeds, min to max, n and the 95 % Student-t interval of the mean.
- ``score_paired``: the score's paired differences between configurations on the seeds they
  share (mean of per-seed differences, its 95 % interval, whether it excludes 0); every pair
  up to :data:`ALL_PAIRS_UP_TO` configurations, else each against the first.

A seed counts once, as AlloBench counts it: ``n`` is the number of distinct seeds and
``seeds`` lists them. Runs of one configuration that repeat a seed (a rerun, a copy) are one
observation, the mean of their values (a value any of them lacks is missing for the seed; a
price is the mean over the runs that sold the item). The mean keeps every rerun's information
without weighting a repeated seed twice; a note under the table says how many runs repeat one.

Runs of different conditions (``hardened``, ``paper``; ``econbench.runs.coffee.config``) are
never pooled: the condition is part of every configuration's key, named in its label
(``condition=paper``, or `` [paper]`` after a label that does not say it), shown in its own
column of ``table2`` when a report holds a non-default condition, and configurations of
different conditions are never paired. Configurations of different horizons are never pooled
either (the horizon is part of a derived label); a note says when a table holds several.

Every function takes CoffeeBench runs only (:func:`econbench.runs.report.build_report` hands
each benchmark its own).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from econbench.coffee.config import is_model
from econbench.runs.coffee.config import DEFAULT_CONDITION, condition_of
from econbench.runs.coffee.reading import READER
from econbench.runs.coffee.yardstick import background_text
from econbench.runs.cost_display import UNPRICED
from econbench.runs.frames import RunFrames
from econbench.runs.report import (
    Section,
    Table,
    fmt_mean_std,
    group_by_label,
    group_by_seed,
    mean_std,
    partial_notes,
    seed_set_text,
    shown_label,
)
from econbench.stats import LEVEL, Paired, Summary, paired_differences, summarize

FOCAL_FIRM = "roaster_A"
FIRM_ORDER = ("farmer_A", "farmer_B", "roaster_A", "roaster_B", "retailer_A", "retailer_B")
PAGE_TABLES = (
    "table2",
    "paper_table2",
    "yardstick",
    "score_ci",
    "score_paired",
    "table2_firms",
    "table3",
)
"""The tables ``index.html`` shows, in this order."""


def _firm_row(run: RunFrames, firm: str) -> dict[str, Any] | None:
    frame = run.summary
    if frame.empty:
        return None
    rows = frame[frame["firm"] == firm]
    return None if rows.empty else rows.iloc[0].to_dict()


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


SeedRows = list[tuple[int | str, list[dict[str, Any]]]]
"""Per seed of a configuration: (seed key, the firm's summary rows of its runs)."""


def _seed_rows(group: Sequence[RunFrames], firm: str) -> SeedRows:
    """The firm's summary rows, one entry per seed (a repeated seed's runs together)."""
    out: SeedRows = []
    for key, runs in group_by_seed(group).items():
        rows = [row for run in runs if (row := _firm_row(run, firm)) is not None]
        if rows:
            out.append((key, rows))
    return out


def _seed_value(rows: list[dict[str, Any]], key: str) -> float | None:
    """One seed's value: the mean over its runs; missing when any run lacks it."""
    values = [_value(r, key) for r in rows]
    if any(v is None for v in values):
        return None
    return float(np.mean([v for v in values if v is not None]))


def _seed_price(rows: list[dict[str, Any]], key: str) -> float | None:
    """One seed's sale price: the mean over its runs that sold the item."""
    values = [v for r in rows if (v := _value(r, key)) is not None]
    return float(np.mean(values)) if values else None


def _seed_columns(seeds: SeedRows) -> tuple[dict[str, Any], dict[str, str]]:
    """``n`` (distinct seeds) and ``seeds`` for the data and the display."""
    text = seed_set_text(key for key, _ in seeds)
    runs = sum(len(rows) for _, rows in seeds)
    return {"n": len(seeds), "seeds": text, "runs": runs}, {"n": str(len(seeds)), "seeds": text}


def _repeat_notes(rows: list[dict[str, Any]]) -> list[str]:
    """How many runs repeat a seed of their configuration, and how they were counted."""
    repeats = sum(int(r["runs"]) - int(r["n"]) for r in rows)
    if not repeats:
        return []
    return [
        f"{repeats} run(s) repeat a seed of their configuration: each seed counts once "
        "(n = distinct seeds), as the mean of its runs' values."
    ]


NO_MODEL = "–"
"""LLM cost of a configuration no model played: not a cost of zero, no cost at all."""


def played_by_no_model(rows: Sequence[dict[str, Any]]) -> bool:
    """Whether every run's firm was played by a scripted policy that made no model call, or
    by a person (their actions pass through the agent loop as calls, but no model's: its LLM
    cost is shown as :data:`NO_MODEL`; an unpriced model's as "unpriced")."""
    return all(_no_model(str(row.get("policy") or ""), row) for row in rows)


def _no_model(policy: str, row: dict[str, Any]) -> bool:
    from econbench.agents.models.human import is_human

    return not is_model(policy) and (is_human(policy) or _scripted_usage(row))


def _scripted_usage(row: dict[str, Any]) -> bool:
    """No model call and a cost of exactly zero, or no usage recorded at all (a ``paper``
    run's scripted player); a cost missing beside a call count is an unpriced model's."""
    calls, cost = _value(row, "llm_calls"), _value(row, "cost_usd")
    return (not calls and cost == 0.0) or (calls is None and cost is None)


def _metric_cells(seeds: SeedRows) -> tuple[dict[str, Any], dict[str, str]]:
    data: dict[str, Any] = {}
    shown: dict[str, str] = {}
    no_model = played_by_no_model([row for _, rows in seeds for row in rows])
    for key, stem, header, digits in _T2_METRICS:
        mean, std, _ = mean_std(_seed_value(rows, key) for _, rows in seeds)
        data[f"{stem}_mean"], data[f"{stem}_std"] = mean, std
        shown[header] = fmt_mean_std(mean, std, digits, na=UNPRICED if key == "cost_usd" else "n/a")
        if key == "cost_usd" and no_model:
            shown[header] = NO_MODEL
    return data, shown


def _condition(run: RunFrames) -> str:
    return condition_of(run.config)


def _names_condition(label: str, condition: str) -> bool:
    """Whether ``label`` already says its condition: a derived label (``condition=paper``)
    or a sweep entry's (``roaster_A-passive__paper``)."""
    return f"condition={condition}" in label or f"__{condition}" in label


def _coffee_groups(runs: Sequence[RunFrames]) -> dict[str, list[RunFrames]]:
    return condition_groups([r for r in runs if not r.summary.empty])


def condition_groups(runs: Sequence[RunFrames]) -> dict[str, list[RunFrames]]:
    """Runs per configuration: its label and its condition (never pooled across
    conditions), in order of first appearance; a label that does not name its non-default
    condition gets `` [NAME]``."""
    keyed: dict[tuple[str, str], list[RunFrames]] = {}
    for label, group in group_by_label(runs).items():
        for run in group:
            keyed.setdefault((label, _condition(run)), []).append(run)
    groups: dict[str, list[RunFrames]] = {}
    for (label, condition), group in keyed.items():
        name = label
        if condition != DEFAULT_CONDITION and not _names_condition(label, condition):
            name = f"{label} [{condition}]"
        groups.setdefault(name, []).extend(group)
    return groups


def _conditions(runs: Sequence[RunFrames]) -> list[str]:
    """The conditions of ``runs``, in order of first appearance."""
    return list(dict.fromkeys(_condition(r) for r in runs))


def background(group: Sequence[RunFrames]) -> str:
    """Who played the five firms beside roaster_A in a configuration's runs."""
    texts = dict.fromkeys(background_text(dict(r.config.get("agents") or {})) for r in group)
    return " | ".join(texts)


def run_days(run: RunFrames) -> int | None:
    """The horizon a run was configured for (its config's ``days``)."""
    days = run.config.get("days")
    if days is None and run.raw_summary:
        days = run.raw_summary.get("days")
    return None if days is None else int(days)


def days_text(runs: Iterable[RunFrames]) -> str:
    """The horizons of ``runs``: ``90``, or ``3, 90`` when they differ."""
    days = sorted({d for r in runs if (d := run_days(r)) is not None})
    return ", ".join(str(d) for d in days) or "–"


def _horizon_notes(groups: Iterable[Sequence[RunFrames]]) -> list[str]:
    """A note when the table's configurations ran different horizons (never pooled)."""
    days = sorted({d for group in groups for r in group if (d := run_days(r)) is not None})
    if len(days) < 2:
        return []
    return [
        f"Configurations ran {', '.join(map(str, days[:-1]))} and {days[-1]} days: "
        "net income grows with the horizon, so compare rows of one length only."
    ]


def table2(runs: Sequence[RunFrames]) -> Table | None:
    """The paper's Table 2: roaster_A per configuration, mean ± std over seeds, with the
    background (who played the other firms) and the horizon (with a ``condition`` column when
    the runs hold a non-default condition)."""
    data_rows, shown_rows = [], []
    with_condition = _conditions(runs) not in ([], [DEFAULT_CONDITION])
    groups = _coffee_groups(runs)
    for label, group in groups.items():
        seeds = _seed_rows(group, FOCAL_FIRM)
        if not seeds:
            continue
        data, shown = _metric_cells(seeds)
        counted, counted_shown = _seed_columns(seeds)
        partial = any(not r.completed for r in group)
        which = {"condition": _condition(group[0])} if with_condition else {}
        setting = {"background": background(group), "days": days_text(group)}
        data_rows.append(
            {"configuration": label, **which, **setting, **counted, **data, "partial": partial}
        )
        shown_rows.append(
            {"configuration": shown_label(label, group), **which, **setting} | counted_shown | shown
        )
    if not data_rows:
        return None
    return Table(
        "table2",
        f"Table 2 — {FOCAL_FIRM} per configuration (mean ± std over seeds)",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        [
            *partial_notes(data_rows),
            *_repeat_notes(data_rows),
            *_horizon_notes(groups.values()),
            "background: who played the five other firms. LLM cost is unpriced when a run used a "
            f"model with no price, and {NO_MODEL} when no model played roaster_A.",
        ],
        text_columns=3 if with_condition else 2,
    )


def _reported(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _reported_income(row: Any) -> str:
    income = _reported(row.net_income_mean, 2)
    if row.net_income_mean is not None and row.net_income_sd is not None:
        income += f" ± {row.net_income_sd:,.2f}"
    return income


def paper_table2(runs: Sequence[RunFrames]) -> Table | None:
    """The paper's own Table 2 (``econbench.runs.coffee.paper_table2``) with Table 2's
    columns, every model and both baselines, marked as the paper's: shown beside every
    CoffeeBench Table 2, whatever condition or background the runs used (the notes say how
    the paper's background compares with theirs). ``None`` when there is no Table 2."""
    from econbench.runs.coffee import paper_table2 as paper

    groups = [g for g in _coffee_groups(runs).values() if _seed_rows(g, FOCAL_FIRM)]
    if not groups:
        return None
    with_condition = _conditions(runs) not in ([], [DEFAULT_CONDITION])
    seeds = seed_set_text(paper.SEEDS)
    data_rows, shown_rows = [], []
    for row in paper.ROWS:
        which = {"condition": "paper"} if with_condition else {}
        data_rows.append(
            {"configuration": f"the paper: {row.model}", "origin": "paper", "model": row.model}
            | {"player": row.player, **which, "background": paper.BACKGROUND}
            | {"days": paper.DAYS, "n": len(paper.SEEDS), "seeds": seeds}
            | {
                "net_income_mean": row.net_income_mean,
                "net_income_std": row.net_income_sd,
                "revenue_mean": row.revenue_mean,
                "tool_calls_mean": row.tool_calls_mean,
                "idle_days_mean": row.idle_days_mean,
                "messages_sent_mean": row.messages_sent_mean,
                "llm_cost_usd_mean": row.llm_cost_usd_mean,
                "source": row.source,
            }
        )
        cost = NO_MODEL if row.scripted else _reported(row.llm_cost_usd_mean, 2)
        shown_rows.append(
            {"configuration": f"the paper: {row.model}", **which}
            | {"background": paper.BACKGROUND_TEXT, "days": str(paper.DAYS)}
            | {"n": str(len(paper.SEEDS)), "seeds": seeds}
            | {
                "net income ($)": _reported_income(row),
                "revenue ($)": _reported(row.revenue_mean, 2),
                "tool calls": _reported(row.tool_calls_mean, 1),
                "idle days": _reported(row.idle_days_mean, 1),
                "messages sent": _reported(row.messages_sent_mean, 1),
                "LLM cost (USD)": cost,
            }
        )
    return Table(
        "paper_table2",
        f"The paper's Table 2 ({paper.PAPER}), as reported — background "
        f"{paper.BACKGROUND_TEXT}; not runs of this report",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        [
            "Every row is the paper's, not a run of this report: roaster_A played by the "
            f"model named, the five other firms by {paper.BACKGROUND} (a model), "
            f"{paper.DAYS} days, seeds {seeds}.",
            _background_comparison(groups, paper.BACKGROUND),
            *paper.NOTES,
        ],
        breaks=[i for i, row in enumerate(paper.ROWS) if row.scripted][:1],
        text_columns=3 if with_condition else 2,
    )


def _background_comparison(groups: Sequence[Sequence[RunFrames]], paper_background: str) -> str:
    """How the report's runs' backgrounds relate to the paper's."""
    mine = list(dict.fromkeys(background(g) for g in groups))
    same = [b for b in mine if b == paper_background]
    if same and len(same) == len(mine):
        return (
            f"Your runs in Table 2 used the paper's background ({paper_background}): the rows "
            "compare directly (under condition 'paper', the paper's protocol)."
        )
    return (
        f"Your runs in Table 2 used the background {', '.join(mine)}, not the paper's "
        f"{paper_background}: a score depends on who the other firms are, so compare "
        "with these rows only as a scale; rows of the same background (condition 'paper' "
        "with the paper's background model) compare directly."
    )


def _signed(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:+,.2f}"


def yardstick_table(runs: Sequence[RunFrames]) -> Table | None:
    """roaster_A's mean score per configuration beside its yardstick on the same background,
    horizon and seeds (:mod:`econbench.runs.coffee.yardstick`): the passive floor, the
    heuristic baseline, the result's edge over each, and the headroom to the paper's duopoly
    bound. Each baseline is played offline once and cached."""
    from econbench.runs.coffee.yardstick import measure

    data_rows, shown_rows, missing = [], [], []
    for label, group, scores in _scored_groups(runs):
        result = float(np.mean(list(scores.values())))
        seeds = [s for s in scores if isinstance(s, int | np.integer)]
        measured = measure(group[0].config, seeds)
        why = measured.unavailable or (None if seeds else "no seeded run")
        values = {
            "passive_floor": measured.passive_mean,
            "heuristic_mean": measured.heuristic_mean,
            "vs_passive": measured.vs_passive(result),
            "vs_heuristic": measured.vs_heuristic(result),
            "duopoly_bound": measured.bound,
            "headroom": measured.headroom(result),
        }
        if why is not None:
            values = dict.fromkeys(values, math.nan)
            missing.append(f"{label}: {why}")
        setting = {"background": background(group), "days": days_text(group)}
        text = seed_set_text(scores)
        data_rows.append(
            {"configuration": label, **setting, "n": len(scores), "seeds": text}
            | {"net_income_mean": result, **values, "unavailable": why or ""}
            | {"partial": any(not r.completed for r in group)}
        )
        shown_rows.append(
            {"configuration": shown_label(label, group), **setting, "n": str(len(scores))}
            | {
                f"{FOCAL_FIRM} ($)": _money(result),
                "passive floor ($)": _money(values["passive_floor"]),
                "heuristic ($)": _money(values["heuristic_mean"]),
                "vs passive ($)": _signed(values["vs_passive"]),
                "vs heuristic ($)": _signed(values["vs_heuristic"]),
                "headroom ($)": _money(values["headroom"]),
            }
        )
    if not data_rows:
        return None
    notes = [
        f"Each row's yardstick is played on its own background, horizon and seeds: "
        f"{FOCAL_FIRM} played by passive (the floor: it only waits) and by heuristic (the "
        "paper's HeuristicRoaster), means over the seeds; 'vs' = the configuration's mean "
        "minus the baseline's. Headroom = the paper's duopoly bound for this economy and "
        f"horizon (Appendix G, `econbench coffee headroom`) minus the mean: what is left to "
        "earn.",
    ]
    if missing:
        notes.append("No yardstick (–) for " + "; ".join(missing) + ".")
    return Table(
        "yardstick",
        f"{FOCAL_FIRM}'s yardstick — passive floor, heuristic baseline and headroom on each "
        "configuration's background",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        [*notes, *partial_notes(data_rows), *_horizon_notes(g for _, g, _ in _scored_groups(runs))],
        text_columns=2,
    )


def table2_firms(runs: Sequence[RunFrames]) -> Table | None:
    """Table 2's metrics for every firm of every configuration."""
    data_rows, shown_rows = [], []
    for label, group in _coffee_groups(runs).items():
        firms = [f for f in FIRM_ORDER if any(_firm_row(r, f) for r in group)]
        for firm in firms:
            seeds = _seed_rows(group, firm)
            data, shown = _metric_cells(seeds)
            counted, counted_shown = _seed_columns(seeds)
            rows = [row for _, rows in seeds for row in rows]
            policy = "/".join(dict.fromkeys(str(r.get("policy")) for r in rows))
            partial = any(not r.completed for r in group)
            data_rows.append(
                {"configuration": label, "firm": firm, "policy": policy}
                | counted
                | data
                | {"partial": partial}
            )
            shown_rows.append(
                {"configuration": shown_label(label, group), "firm": firm, "policy": policy}
                | counted_shown
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
        [*partial_notes(data_rows), *_repeat_notes(data_rows)],
        breaks,
        text_columns=3,
    )


def _item_name(item: str) -> str:
    return item.removesuffix("_kg").replace("_", " ")


def table3(runs: Sequence[RunFrames]) -> Table | None:
    """The paper's Table 3: roaster_A's average inventory, spoilage rate and sale prices."""
    groups = _coffee_groups(runs)
    per_group: list[tuple[str, list[RunFrames], SeedRows]] = []
    items: set[str] = set()
    for label, group in groups.items():
        seeds = _seed_rows(group, FOCAL_FIRM)
        if seeds:
            per_group.append((label, group, seeds))
            for row in (row for _, rows in seeds for row in rows):
                items |= {
                    k.split(".", 1)[1]
                    for k in row
                    if k.startswith("avg_sale_price.") and _value(row, k) is not None
                }
    if not per_group:
        return None
    data_rows, shown_rows = [], []
    for label, group, seeds in per_group:
        n = len(seeds)
        inv = mean_std(_seed_value(rows, "average_inventory_kg") for _, rows in seeds)
        spoil = mean_std(
            None if (v := _seed_value(rows, "spoilage_rate")) is None else 100 * v
            for _, rows in seeds
        )
        counted, counted_shown = _seed_columns(seeds)
        data: dict[str, Any] = {"configuration": label, **counted}
        data.update(avg_inventory_kg_mean=inv[0], avg_inventory_kg_std=inv[1])
        data.update(spoilage_rate_pct_mean=spoil[0], spoilage_rate_pct_std=spoil[1])
        shown = {
            "configuration": shown_label(label, group),
            **counted_shown,
            "avg inventory (kg)": fmt_mean_std(inv[0], inv[1], 1),
            "spoilage rate (%)": fmt_mean_std(spoil[0], spoil[1], 2),
        }
        for item in sorted(items):
            key = f"avg_sale_price.{item}"
            prices = [v for _, rows in seeds if (v := _seed_price(rows, key)) is not None]
            mean, std, k = mean_std(prices)
            data[f"price_{item}_mean"], data[f"price_{item}_std"] = mean, std
            data[f"price_{item}_runs"] = k
            text = fmt_mean_std(mean, std, 2, na="–")
            shown[f"price {_item_name(item)} ($/kg)"] = text + (
                f" ({k}/{n} seeds)" if 0 < k < n else ""
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
            *partial_notes(data_rows),
            *_repeat_notes(data_rows),
            "Prices are averaged over the seeds that sold the item (k/n when not all did).",
        ],
    )


# -- score resolution -----------------------------------------------------------------------------

SCORE_KEY = "net_income"
"""roaster_A's score: its net income."""
ALL_PAIRS_UP_TO = 6
"""Up to this many configurations every pair is compared (15 rows at most); beyond it each
configuration is compared with the first only, so the table stays readable."""
_PCT = f"{LEVEL:.0%}".replace("%", " %")


def _seed_scores(group: Sequence[RunFrames]) -> dict[int | str, float]:
    """roaster_A's score per seed (a repeated seed's runs averaged); a seed without one is
    left out."""
    scores = {}
    for key, rows in _seed_rows(group, FOCAL_FIRM):
        value = _seed_value(rows, SCORE_KEY)
        if value is not None:
            scores[key] = value
    return scores


ScoredGroup = tuple[str, list[RunFrames], dict[int | str, float]]
"""A configuration's label, its runs and roaster_A's score per seed."""


def _scored_groups(runs: Sequence[RunFrames]) -> list[ScoredGroup]:
    """(label, runs, score per seed) of every configuration with at least one score."""
    out = []
    for label, group in _coffee_groups(runs).items():
        scores = _seed_scores(group)
        if scores:
            out.append((label, group, scores))
    return out


def _money(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:,.2f}"


def _interval_text(summary: Summary) -> str:
    """``lo to hi``; why there is none otherwise (one value, or none)."""
    if summary.has_interval:
        return f"{_money(summary.ci_lo)} to {_money(summary.ci_hi)}"
    return "none (n = 1)" if summary.n == 1 else "–"


_INTERVAL_NOTE = (
    f"{_PCT} interval of the mean over seeds (Student t): mean ± t(n - 1) × SD / √n, "
    "SD the sample standard deviation (n - 1); n = 1 gives no interval."
)


def score_ci(runs: Sequence[RunFrames]) -> Table | None:
    """roaster_A's score per configuration with its spread over seeds and the interval of
    its mean: how far apart two configurations must be before their order means anything."""
    data_rows, shown_rows = [], []
    for label, group, scores in _scored_groups(runs):
        s = summarize(scores.values())
        text = seed_set_text(scores)
        n_runs = sum(len(rows) for key, rows in _seed_rows(group, FOCAL_FIRM) if key in scores)
        data_rows.append(
            {"configuration": label, "n": s.n, "seeds": text, "runs": n_runs}
            | {"score_mean": s.mean, "score_sd": s.sd, "score_min": s.min, "score_max": s.max}
            | {"ci_lo": s.ci_lo, "ci_hi": s.ci_hi, "ci_half_width": s.half_width}
            | {"level": s.level, "partial": any(not r.completed for r in group)}
        )
        shown_rows.append(
            {
                "configuration": shown_label(label, group),
                "n": str(s.n),
                "seeds": text,
                "mean ($)": _money(s.mean),
                "SD ($)": _money(s.sd),
                "min to max ($)": f"{_money(s.min)} to {_money(s.max)}",
                f"{_PCT} interval ($)": _interval_text(s),
                "± ($)": _money(s.half_width),
            }
        )
    if not data_rows:
        return None
    notes = [_INTERVAL_NOTE]
    if any(r["n"] == 1 for r in data_rows):
        notes.append("A configuration with one seed has no SD and no interval.")
    return Table(
        "score_ci",
        f"{FOCAL_FIRM}'s score per configuration: spread over seeds and {_PCT} interval",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        [*notes, *partial_notes(data_rows), *_repeat_notes(data_rows)],
    )


def comparison_pairs(
    labels: Sequence[str], all_up_to: int = ALL_PAIRS_UP_TO
) -> list[tuple[str, str]]:
    """The (A, B) pairs the paired table compares: every pair, in order, for up to
    ``all_up_to`` configurations; else each configuration against the first."""
    if len(labels) <= all_up_to:
        return list(itertools.combinations(labels, 2))
    return [(labels[0], other) for other in labels[1:]]


def _sign_text(pair: Paired) -> str:
    if pair.excludes_zero is None:
        return "–"
    if not pair.excludes_zero:
        return "no"
    return "yes (B > A)" if pair.diff.mean > 0 else "yes (B < A)"


def _left_out_text(pair: Paired) -> str:
    parts = [
        f"{side} only: {seed_set_text(seeds)}"
        for side, seeds in (("A", pair.only_a), ("B", pair.only_b))
        if seeds
    ]
    return "; ".join(parts) or "none"


def _pair_rows(a: ScoredGroup, b: ScoredGroup) -> tuple[dict[str, Any], dict[str, str]]:
    (label_a, group_a, scores_a), (label_b, group_b, scores_b) = a, b
    pair = paired_differences(scores_a, scores_b)
    d = pair.diff
    partial = any(not r.completed for r in (*group_a, *group_b))
    data = {
        "configuration_a": label_a,
        "configuration_b": label_b,
        "n_common": d.n,
        "common_seeds": seed_set_text(pair.common),
        "diff_mean": d.mean,
        "diff_sd": d.sd,
        "ci_lo": d.ci_lo,
        "ci_hi": d.ci_hi,
        "excludes_zero": pair.excludes_zero,
        "only_a": len(pair.only_a),
        "only_b": len(pair.only_b),
        "only_a_seeds": seed_set_text(pair.only_a) if pair.only_a else "",
        "only_b_seeds": seed_set_text(pair.only_b) if pair.only_b else "",
        "level": d.level,
        "partial": partial,
    }
    shown = {
        "A": shown_label(label_a, group_a),
        "B": shown_label(label_b, group_b),
        "n common": str(d.n),
        "common seeds": seed_set_text(pair.common) if pair.common else "none",
        "mean B - A ($)": _money(d.mean),
        "SD ($)": _money(d.sd),
        f"{_PCT} interval ($)": _interval_text(d),
        "excludes 0": _sign_text(pair),
        "left out": _left_out_text(pair),
    }
    return data, shown


def score_paired(runs: Sequence[RunFrames]) -> Table | None:
    """Paired differences of roaster_A's score between configurations on their common seeds.

    A seed's economy (demand, shipping, the background firms' draws) is the same in every
    configuration, so B − A seed by seed removes most of the seed-to-seed spread that the
    per-configuration intervals carry; a seed only one configuration ran cannot be paired
    and is left out (counted).
    """
    groups = _scored_groups(runs)
    if len(groups) < 2:
        return None
    by_label = {g[0]: g for g in groups}
    by_condition: dict[str, list[str]] = {}
    for label, group, _ in groups:  # configurations of different conditions never pair
        by_condition.setdefault(_condition(group[0]), []).append(label)
    pairs = [p for labels in by_condition.values() for p in comparison_pairs(labels)]
    if not pairs:
        return None
    data_rows, shown_rows = [], []
    for label_a, label_b in pairs:
        data, shown = _pair_rows(by_label[label_a], by_label[label_b])
        data_rows.append(data)
        shown_rows.append(shown)
    notes = [
        "Each row is B - A on the seeds both configurations ran: the mean of the per-seed "
        f"differences and its {_PCT} Student-t interval (t(n - 1) × SD / √n, SD of the "
        "differences); 'excludes 0' says whether the interval lies wholly on one side of 0.",
    ]
    if len(by_condition) > 1:
        notes.append("Configurations of different conditions are never paired.")
    every_pair = sum(len(labels) * (len(labels) - 1) // 2 for labels in by_condition.values())
    if len(pairs) < every_pair:
        notes.append(
            f"More than {ALL_PAIRS_UP_TO} configurations: each is compared with the first, "
            f"{groups[0][0]}."
        )
    left_out = sum(r["only_a"] + r["only_b"] for r in data_rows)
    if left_out:
        pairs_with = sum(1 for r in data_rows if r["only_a"] + r["only_b"])
        notes.append(
            "A seed that only one configuration of a pair ran is left out of that pair's "
            f"difference: {left_out} in all, in {pairs_with} of {len(data_rows)} pair(s) "
            "('left out' lists them)."
        )
    if any(r["n_common"] == 1 for r in data_rows):
        notes.append("A pair with one common seed has a difference but no interval.")
    return Table(
        "score_paired",
        f"{FOCAL_FIRM}'s score: paired differences between configurations on common seeds",
        pd.DataFrame(data_rows),
        pd.DataFrame(shown_rows),
        [*notes, *partial_notes(data_rows)],
        text_columns=2,
    )


def coffee_section(runs: Sequence[RunFrames]) -> Section:
    """CoffeeBench's tables over its runs."""
    built = (
        table2(runs),
        paper_table2(runs),
        yardstick_table(runs),
        score_ci(runs),
        score_paired(runs),
        table2_firms(runs),
        table3(runs),
    )
    tables = [t for t in built if t is not None]
    section = Section(READER.name, READER.title, list(runs), tables, PAGE_TABLES)
    section.headline = headline(tables)
    return section


def headline(tables: Sequence[Table]) -> Table | None:
    """Table 2 in a few columns for the summary ``econbench report`` prints: each
    configuration's days, seeds, roaster_A's net income and its edge over the heuristic
    baseline on the same background (from the yardstick table)."""
    by_name = {t.name: t for t in tables}
    main = by_name.get("table2")
    if main is None:
        return None
    edges: dict[str, str] = {}
    if (ruler := by_name.get("yardstick")) is not None:
        edges = dict(
            zip(ruler.data["configuration"], ruler.display["vs heuristic ($)"], strict=True)
        )
    shown = pd.DataFrame(
        {
            "configuration": main.display["configuration"],
            "days": main.display["days"],
            "n": main.display["n"],
            f"{FOCAL_FIRM} ($)": main.display["net income ($)"],
            "vs heuristic ($)": [edges.get(c, "–") for c in main.data["configuration"]],
        }
    )
    return Table(main.name, main.title, main.data, shown, text_columns=1)
