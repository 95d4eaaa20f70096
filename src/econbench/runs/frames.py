"""Runs as pandas DataFrames, for notebooks and for ``econbench report``.

>>> import econbench
>>> run = econbench.load_run("runs/coffee/20260101-000000-offline")
>>> run.daily.pivot(index="day", columns="firm", values="cash").plot()
>>> runs = econbench.load_sweep("runs/sweeps/paper")
>>> s = runs.summary
>>> s[s.firm == "roaster_A"].groupby("label").net_income.agg(["mean", "std", "count"])

One run gives a :class:`RunFrames`: the run's ``config`` and ``meta`` as dicts and, read
lazily the first time they are used,

- CoffeeBench: ``events`` (one row per event; top-level fields are columns, nested payloads
  such as ``arguments`` and ``result`` stay Python objects), ``daily`` (one row per firm and
  day, nested fields flattened to ``inventory.<item>.qty`` etc., plus ``inventory_kg``) and
  ``summary`` (one row per firm, the run-level fields as columns; nested per-tool, per-recipient
  and per-item dicts flattened to ``tool_calls_by_name.<tool>`` etc.);
- AlloBench: ``episodes`` (one row per episode, without the bulky ``turns``, plus
  ``n_commits``, ``first_sight_eligible`` and ``first_sight_eligible_commits``: the episode's
  eligible first-occurrence turns and the commits among them, counted from its ``turns`` by
  ``econbench.allo.metrics.first_sight_turns``), ``turns`` (one
  row per turn with its episode's ``seed``; a turn's class label is ``class_label``) and
  ``summary`` (one row).

The frames that do not apply to a run's benchmark are empty. A run still in progress (no
``summary.json``; maybe a torn last log line, which is skipped) gets a *provisional* summary
computed from its logs, flagged by ``provisional = True``. Many runs: :func:`load_runs` and
:func:`load_sweep` return a :class:`RunSet`, whose frames concatenate the runs' frames with
``run`` (the run directory), ``label`` (the configuration, seeds excluded) and ``seed``
columns added.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from econbench.runs import layout
from econbench.runs.layout import Benchmark, RunRef

WAIT_TOOL = "wait_for_next_day"
"""CoffeeBench's waiting tool (``econbench.coffee.world.WAIT_TOOL``)."""

KINDS = ("events", "daily", "summary", "episodes", "turns")
EVENT_COLUMNS = ["seq", "day", "time", "type", "firm"]
_COUNT_DICTS = ("tool_calls_by_name", "messages_sent_by_recipient", "sold_kg", "opex_breakdown")
_MAX_ECONOMY_PARTS = 3


# -- labels -------------------------------------------------------------------------------------


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf values of nested dicts, keyed by dotted path (lists stay values)."""
    if not isinstance(data, dict):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _short(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(_short(v) for v in value)
    return str(value)


def _coffee_label(config: dict[str, Any]) -> str:
    """``roaster_A=POLICY`` plus every difference from the default run config but the seed."""
    from econbench.coffee.config import FIRMS, FOCAL_FIRM, RunConfig

    default = RunConfig()
    agents = config.get("agents") or {}
    background = agents.get("default") or default.policy_for("default")

    def policy(firm: str) -> str:
        return agents.get(firm) or background

    parts = [f"{FOCAL_FIRM}={policy(FOCAL_FIRM)}"]
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
    diffs = [f"{k}={_short(v)}" for k, v in sorted(mine.items()) if base.get(k) != v]
    if len(diffs) > _MAX_ECONOMY_PARTS:
        diffs = [f"economy:{len(diffs)}-changes"]
    return " ".join(parts + diffs)


def framing_name(framing: str, skin: str | None) -> str:
    """A rung as the reports name it: ``r0``, ``r0:quiver``, ``r2``."""
    return framing if not skin or skin == "default" else f"{framing}:{skin}"


def _allo_label(config: dict[str, Any]) -> str:
    """``POLICY FRAMING B=b K=k`` (the R0 skin joins the framing, e.g. ``r0:quiver``)."""
    framing = framing_name(str(config.get("framing")), config.get("skin"))
    return (
        f"{config.get('policy')} {framing} B={config.get('budget')} K={_short(config.get('cost'))}"
    )


def derive_label(benchmark: Benchmark, config: dict[str, Any]) -> str:
    """A readable, deterministic name of a run's configuration; never mentions seeds."""
    return _coffee_label(config) if benchmark == "coffee" else _allo_label(config)


def config_key(benchmark: Benchmark, config: dict[str, Any]) -> str:
    """A hash of everything in the config that defines the configuration (seeds excluded)."""
    if benchmark == "coffee":
        ident = {k: v for k, v in config.items() if k != "seed"}
    else:
        keep = ("framing", "policy", "skin", "cost", "budget", "stream_config")
        ident = {k: config.get(k) for k in keep}
        if config.get("protocol", "econbench") != "econbench":  # older keys stay as they were
            ident["protocol"] = config["protocol"]
    text = json.dumps(ident, sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:8]


# -- one run ------------------------------------------------------------------------------------


def _frame(rows: list[dict[str, Any]], columns: Sequence[str] = ()) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(rows) if rows else pd.DataFrame()
    for col in columns:
        if col not in frame.columns:
            frame[col] = pd.Series(dtype=object)
    return frame


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
        calls = events[(events["type"] == "tool_call") & events["tool"].notna()]
        for day, firm, tool, result in zip(
            calls["day"], calls["firm"], calls["tool"], calls["result"], strict=True
        ):
            ok = isinstance(result, dict) and result.get("status") == "success"
            if not (tool == WAIT_TOOL and ok):
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
        events[(events["type"] == "tool_call") & events["tool"].notna()]
        if "tool" in events.columns
        else events.iloc[0:0]
    )
    messages = events[events["type"] == "message"] if not events.empty else events
    models = events[events["type"] == "model_call"] if not events.empty else events
    for firm, days in daily.groupby("firm", sort=False):
        last = days.sort_values("day").iloc[-1]
        mine = calls[calls["firm"] == firm]
        sent = messages[messages["sender"] == firm] if "sender" in messages else messages
        llm = models[models["firm"] == firm]
        costs = list(llm["cost_usd"]) if "cost_usd" in llm else []
        rows.append(
            {
                "firm": firm,
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


def _allo_provisional(config: dict[str, Any], episodes: pd.DataFrame) -> dict[str, Any]:
    """The headline metrics of a cell without ``summary.json``, from its finished episodes."""
    row: dict[str, Any] = {
        k: config.get(k) for k in ("framing", "policy", "skin", "cost", "budget")
    }
    n = len(episodes)
    row["episodes"] = n
    if n:
        opt = float(episodes["opt"].sum())
        commits = int(episodes["commits"].map(len).sum())
        row.update(
            score=float(episodes["utility"].sum()) / opt if opt > 0 else None,
            first_sight_rate=(
                float(episodes["first_sight_commits"].sum()) / commits if commits else None
            ),
            utility_mean=float(episodes["utility"].mean()),
            opt_mean=float(episodes["opt"].mean()),
            commits_mean=commits / n,
        )
        if "first_sight_eligible" in episodes:
            eligible = int(episodes["first_sight_eligible"].sum())
            row["first_sight_hazard"] = (
                float(episodes["first_sight_eligible_commits"].sum()) / eligible
                if eligible
                else None
            )
    return row


@dataclass(eq=False)
class RunFrames:
    """One run directory as DataFrames (read lazily, once)."""

    path: Path
    benchmark: Benchmark
    config: dict[str, Any]
    meta: dict[str, Any]
    status: str
    """``completed``, ``stopped`` or ``running`` (no summary yet)."""
    label: str
    """The configuration's name: ``meta.json``'s ``label``, else derived from the config."""
    seed: int | None
    """The run's seed (CoffeeBench); ``None`` for an AlloBench cell (its episodes have seeds)."""
    raw_summary: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def key(self) -> str:
        """The configuration's identity (seeds excluded), see :func:`config_key`."""
        return config_key(self.benchmark, self.config)

    # CoffeeBench
    @cached_property
    def events(self) -> pd.DataFrame:
        if self.benchmark != "coffee":
            return _frame([], EVENT_COLUMNS)
        return _frame(layout.read_jsonl(self.path / layout.EVENTS), EVENT_COLUMNS)

    @cached_property
    def daily(self) -> pd.DataFrame:
        rows = layout.read_jsonl(self.path / layout.DAILY) if self.benchmark == "coffee" else []
        if not rows:
            return _frame([], ["day", "firm", "cash", "revenue_cum", "net_income_cum"])
        frame = pd.json_normalize(rows, sep=".")
        qty = [c for c in frame.columns if c.startswith("inventory.") and c.endswith(".qty")]
        frame["inventory_kg"] = frame[qty].sum(axis=1) if qty else 0
        return frame

    # AlloBench
    @cached_property
    def _episode_rows(self) -> list[dict[str, Any]]:
        if self.benchmark != "allo":
            return []
        return layout.read_jsonl(self.path / layout.EPISODES)

    @cached_property
    def episodes(self) -> pd.DataFrame:
        rows = [{k: v for k, v in r.items() if k != "turns"} for r in self._episode_rows]
        frame = _frame(rows, ["seed", "utility", "opt", "commits", "first_sight_commits"])
        if rows:
            from econbench.allo.metrics import first_sight_turns

            frame["n_commits"] = frame["commits"].map(len)
            counts = [first_sight_turns(r.get("turns", [])) for r in self._episode_rows]
            frame["first_sight_eligible"] = [e for e, _ in counts]
            frame["first_sight_eligible_commits"] = [c for _, c in counts]
        return frame

    @cached_property
    def turns(self) -> pd.DataFrame:
        rows = []
        for episode in self._episode_rows:
            for turn in episode.get("turns", []):
                row = {"seed": episode.get("seed")}
                row.update({("class_label" if k == "label" else k): v for k, v in turn.items()})
                rows.append(row)
        return _frame(rows, ["seed", "t", "cls", "kind"])

    # Both
    @cached_property
    def summary(self) -> pd.DataFrame:
        if self.benchmark == "allo":
            return self._allo_summary()
        return self._coffee_summary()

    def _coffee_summary(self) -> pd.DataFrame:
        raw = self.raw_summary
        if raw is not None and isinstance(raw.get("firms"), dict):
            firms = [{"firm": firm, **data} for firm, data in raw["firms"].items()]
            run_cols = {k: v for k, v in raw.items() if k != "firms" and not isinstance(v, dict)}
            provisional = False
        else:
            firms = _provisional_coffee(self.config, self.events, self.daily)
            days_run = int(self.daily["day"].max()) + 1 if len(self.daily) else 0
            run_cols = {"days": self.config.get("days"), "days_run": days_run}
            provisional = True
        if not firms:
            return _frame([], ["firm", "net_income", "status"])
        frame = pd.json_normalize(firms, sep=".")
        flat = sorted(c for c in frame.columns if "." in c)
        frame = frame[[c for c in frame.columns if "." not in c] + flat]
        for prefix in _COUNT_DICTS:
            cols = [c for c in frame.columns if c.startswith(prefix + ".")]
            frame[cols] = frame[cols].fillna(0)
        run_cols.setdefault("seed", self.seed)
        for key, value in run_cols.items():
            frame[key] = [value] * len(frame)
        frame["status"] = self.status
        frame["provisional"] = provisional
        return frame

    def _allo_summary(self) -> pd.DataFrame:
        if self.raw_summary is not None:
            row = dict(self.raw_summary)
            lo, hi = (row.get("score_ci") or [None, None])[:2]
            row.update(score_ci_lo=lo, score_ci_hi=hi)
            provisional = False
        else:
            row = _allo_provisional(self.config, self.episodes)
            provisional = True
        row.update(status=self.status, provisional=provisional)
        return pd.DataFrame([row])


def load_run(run: str | Path | RunRef) -> RunFrames:
    """Open one run directory (finished, stopped or still running)."""
    ref = run if isinstance(run, RunRef) else layout.load_ref(Path(run))
    config = layout.read_json(ref.path / layout.CONFIG)
    config = config if isinstance(config, dict) else {}
    seed = ref.meta.get("seed", config.get("seed")) if ref.benchmark == "coffee" else None
    label = ref.meta.get("label") or derive_label(ref.benchmark, config)
    return RunFrames(
        path=ref.path,
        benchmark=ref.benchmark,
        config=config,
        meta=ref.meta,
        status=ref.status,
        label=str(label),
        seed=seed,
        raw_summary=ref.summary,
    )


def _disambiguate(runs: list[RunFrames]) -> None:
    """Derived labels that two different configurations share get the config hash appended
    (a label set in ``meta.json`` is the user's grouping and is kept)."""
    by_label: dict[str, set[str]] = {}
    for run in runs:
        if not run.meta.get("label"):
            by_label.setdefault(run.label, set()).add(run.key)
    for run in runs:
        if not run.meta.get("label") and len(by_label.get(run.label, ())) > 1:
            run.label = f"{run.label} #{run.key[:6]}"


# -- many runs ----------------------------------------------------------------------------------


def concat(runs: Iterable[RunFrames], kind: str) -> pd.DataFrame:
    """One DataFrame of ``kind`` (events, daily, summary, episodes, turns) over many runs,
    with ``run`` (the run directory), ``label`` and ``seed`` columns in front (``seed`` is the
    run's unless the frame has its own, as episodes and turns do); ``summary`` also gets
    ``benchmark``."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    parts = []
    for run in runs:
        frame = getattr(run, kind)
        if frame.empty:
            continue
        frame = frame.copy()
        if "seed" not in frame.columns:
            frame.insert(0, "seed", [run.seed] * len(frame))
        frame.insert(0, "label", run.label)
        frame.insert(0, "run", str(run.path))
        if kind == "summary":
            frame.insert(3, "benchmark", run.benchmark)
        parts.append(frame)
    if not parts:
        return pd.DataFrame(columns=["run", "label", "seed"])
    return pd.concat(parts, ignore_index=True)


@dataclass(eq=False)
class RunSet:
    """Many runs; each frame kind concatenated over them (lazily, once)."""

    runs: list[RunFrames]
    sweep: dict[str, Any] | None = None
    """``sweep.json`` when the set was loaded from a sweep directory."""

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[RunFrames]:
        return iter(self.runs)

    @cached_property
    def index(self) -> pd.DataFrame:
        """One row per run: run, label, seed, benchmark, status."""
        rows = [
            {
                "run": str(r.path),
                "label": r.label,
                "seed": r.seed,
                "benchmark": r.benchmark,
                "status": r.status,
            }
            for r in self.runs
        ]
        frame = pd.DataFrame(rows, columns=["run", "label", "seed", "benchmark", "status"])
        frame["seed"] = pd.array([r.seed for r in self.runs], dtype="Int64")
        return frame

    @cached_property
    def events(self) -> pd.DataFrame:
        return concat(self.runs, "events")

    @cached_property
    def daily(self) -> pd.DataFrame:
        return concat(self.runs, "daily")

    @cached_property
    def summary(self) -> pd.DataFrame:
        return concat(self.runs, "summary")

    @cached_property
    def episodes(self) -> pd.DataFrame:
        return concat(self.runs, "episodes")

    @cached_property
    def turns(self) -> pd.DataFrame:
        return concat(self.runs, "turns")


def load_runs(paths: Iterable[str | Path] | str | Path) -> list[RunFrames]:
    """Every run under the given run, sweep or parent directories (see
    :func:`econbench.runs.layout.find_runs`; a missing path raises ``FileNotFoundError``)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    runs = [load_run(ref) for ref in layout.find_runs(paths)]
    _disambiguate(runs)
    return runs


def load_sweep(path: str | Path) -> RunSet:
    """A sweep directory (or any folder of runs) as a :class:`RunSet`."""
    root = Path(path)
    sweep = layout.read_json(root / layout.SWEEP) if layout.is_sweep_dir(root) else None
    return RunSet(load_runs([root]), sweep=sweep if isinstance(sweep, dict) else None)
