"""How the run layer reads a CoffeeBench run: its label, its frames, its report section, its
figures and what the viewer shows of it (:class:`CoffeeReader`).

The frames: ``events`` (one row per event; top-level fields are columns, nested payloads such
as ``arguments`` and ``result`` stay Python objects), ``daily`` (one row per firm and day,
nested fields flattened to ``inventory.<item>.qty`` etc., plus ``inventory_kg``) and
``summary`` (one row per firm, the run-level fields as columns; nested per-tool, per-recipient
and per-item dicts flattened to ``tool_calls_by_name.<tool>`` etc.). A run without
``summary.json`` gets a provisional summary computed from its logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from econbench.coffee import events as catalogue
from econbench.coffee.paper.clock import AGENT_STEP
from econbench.runs import layout
from econbench.runs.frames import EVENT_COLUMNS, empty_frame, frame_of, short

if TYPE_CHECKING:
    from econbench.runs.figures import FigureFile
    from econbench.runs.frames import RunFrames
    from econbench.runs.report import Section
    from econbench.runs.viewer.coffee_data import CoffeeData

WAIT_TOOL = "wait_for_next_day"
"""CoffeeBench's waiting tool (``econbench.coffee.world.WAIT_TOOL``)."""

_COUNT_DICTS = ("tool_calls_by_name", "messages_sent_by_recipient", "sold_kg", "opex_breakdown")
_MAX_ECONOMY_PARTS = 3


# -- label --------------------------------------------------------------------------------------


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf values of nested dicts, keyed by dotted path (lists stay values)."""
    if not isinstance(data, dict):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def coffee_label(config: dict[str, Any]) -> str:
    """``roaster_A=POLICY`` plus every difference from the default run config but the seed
    (a non-default condition first: ``roaster_A=passive condition=paper …``)."""
    from econbench.coffee.config import FIRMS, FOCAL_FIRM
    from econbench.runs.coffee.config import DEFAULT_CONDITION, RunConfig, condition_of

    default = RunConfig()
    agents = config.get("agents") or {}
    background = agents.get("default") or default.policy_for("default")

    def policy(firm: str) -> str:
        return agents.get(firm) or background

    parts = [f"{FOCAL_FIRM}={policy(FOCAL_FIRM)}"]
    condition = condition_of(config)
    if condition != DEFAULT_CONDITION:
        parts.append(f"condition={condition}")
    if background != default.policy_for("default"):
        parts.append(f"default={background}")
    parts += [f"{f}={policy(f)}" for f in FIRMS if f != FOCAL_FIRM and policy(f) != background]
    for firm, variant in sorted((config.get("prompts") or {}).items()):
        if variant != "standard":
            parts.append(f"prompts.{firm}={variant}")
    days = config.get("days", default.days)
    if days != default.days:
        parts.append(f"days={days}")
    base = _flatten(default.economy.model_dump(mode="json", by_alias=True), "economy")
    mine = _flatten(config.get("economy") or {}, "economy")
    diffs = [f"{k}={short(v)}" for k, v in sorted(mine.items()) if base.get(k) != v]
    if len(diffs) > _MAX_ECONOMY_PARTS:
        diffs = [f"economy:{len(diffs)}-changes"]
    return " ".join(parts + diffs)


# -- frames -------------------------------------------------------------------------------------


def idle_flags(events: pd.DataFrame, daily: pd.DataFrame) -> pd.DataFrame:
    """Per firm and day, whether the day was idle: columns ``day``, ``firm``, ``live``, ``idle``.

    The same rule as the world's own ``idle_days`` counter (``World.end_day``): a firm alive
    that evening is idle when it made no tool call other than a successful
    ``wait_for_next_day`` (invalid and failed calls count as acting; a turn with no call at
    all does not). The summary stores only the count, so reports recompute the days from the
    ``tool_call`` events; the per-firm sum equals the summary's ``idle_days``.
    """
    if daily.empty:
        return pd.DataFrame(columns=["day", "firm", "live", "idle"])
    grid = daily[["day", "firm"]].copy()
    grid["live"] = ~daily["bankrupt"].astype(bool).to_numpy()
    active: set[tuple[int, str]] = set()
    if not events.empty and "tool" in events.columns:
        calls = events[(events["type"] == catalogue.ToolCallApplied.TYPE) & events["tool"].notna()]
        for day, firm, tool, result in zip(
            calls["day"], calls["firm"], calls["tool"], calls["result"], strict=True
        ):
            ok = isinstance(result, dict) and result.get("status") == "success"
            if not (tool == WAIT_TOOL and ok):
                active.add((int(day), str(firm)))
    if not events.empty and "action" in events.columns:
        # A ``paper`` run logs the reference's ``agent_step`` (a reply without a call is its
        # synthesized wait): acting is any step but waiting, as its summary counts.
        steps = events[(events["type"] == AGENT_STEP) & events["action"].notna()]
        for day, firm, action in zip(steps["day"], steps["firm"], steps["action"], strict=True):
            if action != WAIT_TOOL:
                active.add((int(day), str(firm)))
    acted = [(int(d), str(f)) in active for d, f in zip(grid["day"], grid["firm"], strict=True)]
    grid["idle"] = grid["live"] & ~pd.Series(acted, index=grid.index, dtype=bool)
    return grid.reset_index(drop=True)


def _provisional_coffee(
    config: dict[str, Any], events: pd.DataFrame, daily: pd.DataFrame
) -> list[dict[str, Any]]:
    """Per-firm metrics of a run without ``summary.json``, from its logs (so far)."""
    agents = config.get("agents") or {}
    rows = []
    flags = idle_flags(events, daily)
    calls = (
        events[(events["type"] == catalogue.ToolCallApplied.TYPE) & events["tool"].notna()]
        if "tool" in events.columns
        else events.iloc[0:0]
    )
    messages = events[events["type"] == catalogue.MessageSent.TYPE] if not events.empty else events
    models = events[events["type"] == catalogue.ModelCall.TYPE] if not events.empty else events
    for firm, days in daily.groupby("firm", sort=False):
        last = days.sort_values("day").iloc[-1]
        mine = calls[calls["firm"] == firm]
        sent = messages[messages["sender"] == firm] if "sender" in messages else messages
        llm = models[models["firm"] == firm]
        costs = list(llm["cost_usd"]) if "cost_usd" in llm else []
        rows.append(
            {
                "firm": firm,
                # a config without "default" is from before it was recorded: negotiating
                "policy": agents.get(firm) or agents.get("default") or "negotiating",
                "net_income": float(last["net_income_cum"]),
                "revenue": float(last["revenue_cum"]),
                "tool_calls": len(mine),
                "tool_calls_by_name": mine["tool"].value_counts().sort_index().to_dict(),
                "idle_days": int(flags[flags["firm"] == firm]["idle"].sum()),
                "messages_sent": len(sent),
                "messages_sent_by_recipient": (
                    sent["recipient"].value_counts().sort_index().to_dict() if len(sent) else {}
                ),
                "bankrupt": bool(last["bankrupt"]),
                "cash_end": float(last["cash"]),
                "equity_end": float(last["equity"]),
                "average_inventory_kg": round(float(days["inventory_kg"].mean()), 2),
                "llm_calls": len(llm),
                "cost_usd": (
                    None if any(c is None or pd.isna(c) for c in costs) else float(sum(costs))
                ),
            }
        )
    return rows


def daily_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``daily.jsonl`` flattened, plus each firm's ``inventory_kg`` (the sum of its quantities)."""
    if not rows:
        return empty_frame("daily")
    frame = pd.json_normalize(rows, sep=".")
    qty = [c for c in frame.columns if c.startswith("inventory.") and c.endswith(".qty")]
    frame["inventory_kg"] = frame[qty].sum(axis=1) if qty else 0
    return frame


def summary_frame(run: RunFrames) -> pd.DataFrame:
    """One row per firm: ``summary.json``'s, or a provisional one computed from the logs."""
    raw = run.raw_summary
    if raw is not None and isinstance(raw.get("firms"), dict):
        firms = [{"firm": firm, **data} for firm, data in raw["firms"].items()]
        run_cols = {k: v for k, v in raw.items() if k != "firms" and not isinstance(v, dict)}
        provisional = False
    else:
        firms = _provisional_coffee(run.config, run.events, run.daily)
        days_run = int(run.daily["day"].max()) + 1 if len(run.daily) else 0
        run_cols = {"days": run.config.get("days"), "days_run": days_run}
        provisional = True
    if not firms:
        return frame_of([], ["firm", "net_income", "status"])
    frame = pd.json_normalize(firms, sep=".")
    flat = sorted(c for c in frame.columns if "." in c)
    frame = frame[[c for c in frame.columns if "." not in c] + flat]
    for prefix in _COUNT_DICTS:
        cols = [c for c in frame.columns if c.startswith(prefix + ".")]
        frame[cols] = frame[cols].fillna(0)
    run_cols.setdefault("seed", run.seed)
    for key, value in run_cols.items():
        frame[key] = [value] * len(frame)
    frame["status"] = run.status
    frame["provisional"] = provisional
    return frame


# -- the reader ---------------------------------------------------------------------------------


class CoffeeReader:
    """CoffeeBench's :class:`~econbench.runs.reading.BenchmarkReader`."""

    name = "coffee"
    title = "CoffeeBench"

    def label(self, config: dict[str, Any]) -> str:
        return coffee_label(config)

    def identity(self, config: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in config.items() if k != "seed"}

    def seed(self, meta: dict[str, Any], config: dict[str, Any]) -> int | None:
        return meta.get("seed", config.get("seed"))

    def frame(self, run: RunFrames, kind: str) -> pd.DataFrame | None:
        if kind == "events":
            return frame_of(layout.read_jsonl(run.path / layout.EVENTS), EVENT_COLUMNS)
        if kind == "daily":
            return daily_frame(layout.read_jsonl(run.path / layout.DAILY))
        if kind == "summary":
            return summary_frame(run)
        return None

    def section(self, runs: Sequence[RunFrames]) -> Section:
        from econbench.runs.coffee.report import coffee_section

        return coffee_section(runs)

    def figures(self, section: Section, out: Path) -> list[FigureFile]:
        from econbench.runs.coffee.figures import coffee_figures

        return coffee_figures(section.runs, out)

    def viewer_data(self, run_dir: Path) -> CoffeeData:
        from econbench.runs.viewer.coffee_data import CoffeeData

        return CoffeeData(run_dir)

    def brief(self, config: dict[str, Any], meta: dict[str, Any]) -> str:
        """The seed and the evaluated firm's policy."""
        agents = config.get("agents") if isinstance(config.get("agents"), dict) else {}
        seed = config.get("seed", meta.get("seed"))
        focal = agents.get("roaster_A") or agents.get("default")
        condition = config.get("condition")
        parts = [
            f"seed {seed}" if seed is not None else None,
            f"roaster_A={focal}" if focal else None,
            f"condition {condition}" if condition and condition != "hardened" else None,
        ]
        return " · ".join(p for p in parts if p)


READER = CoffeeReader()
