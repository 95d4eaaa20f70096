"""CoffeeBench's figures in the report.

Per configuration: daily cash, cumulative revenue and cumulative net income per firm (the mean
over seeds, with the min–max band when there are several), and an idle-day timeline (firm ×
day; the shade is the share of seeds in which that day was idle). Across configurations: the
paper's Figure 3 (roaster_A's cash, cumulative revenue and cumulative net income of every
configuration on one set of axes, the festival days shaded), roaster_A's tool calls by tool
and its messages by recipient (means per seed).

Figures across configurations are drawn per horizon: configurations that ran different
numbers of days never share axes (``figure3_3d.png`` beside ``figure3_90d.png``; one set named
as before when every configuration ran the same days), and every title says the horizon, or
that runs of several lengths are pooled. An idle-day figure of runs in which no firm was ever
idle says so in words instead of an empty grid.

A seed counts once, as in the tables: runs of one configuration that repeat a seed are
averaged into one observation before the mean over seeds. Firms take their colours from
:mod:`econbench.runs.palette`, the viewer's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from econbench.runs.coffee.reading import READER, idle_flags
from econbench.runs.coffee.report import FIRM_ORDER, FOCAL_FIRM, condition_groups, days_text
from econbench.runs.figures import FigureFile, colormap, figure, integer_locator, save, slugs
from econbench.runs.frames import RunFrames
from econbench.runs.palette import FESTIVAL_COLOR, config_color, firm_color
from econbench.runs.report import group_by_seed, seed_key

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TRAJECTORIES = [("cash", "cash ($)"), ("revenue_cum", "revenue, cumulative ($)")]
TRAJECTORIES.append(("net_income_cum", "net income, cumulative ($)"))


def _firms(frame: pd.DataFrame) -> list[str]:
    present = set(frame["firm"])
    return [f for f in FIRM_ORDER if f in present] + sorted(present - set(FIRM_ORDER))


def horizon_text(runs: Sequence[RunFrames]) -> str:
    """The runs' horizon for a figure's title: ``90 days``, or, when runs of different lengths
    are pooled, ``runs of 3 and 90 days pooled``."""
    text = days_text(runs)
    if "," not in text:
        return f"{text} days"
    *first, last = text.split(", ")
    return f"runs of {', '.join(first)} and {last} days pooled"


def by_horizon(groups: dict[str, list[RunFrames]]) -> dict[str, dict[str, list[RunFrames]]]:
    """Configurations per horizon (their ``days``; a configuration whose runs differ in
    length is a horizon of its own), so figures across configurations never set a 3-day
    run beside a 90-day one."""
    out: dict[str, dict[str, list[RunFrames]]] = {}
    for label, group in groups.items():
        out.setdefault(days_text(group), {})[label] = group
    return dict(sorted(out.items(), key=lambda item: _horizon_order(item[0])))


def _horizon_order(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.split(", ") if d.isdigit())


def seed_daily(runs: Sequence[RunFrames]) -> pd.DataFrame:
    """The runs' daily rows with a ``_seed`` column, a repeated seed's runs averaged into one
    row per (seed, firm, day); empty when no run has daily rows."""
    parts = [r.daily.assign(_seed=str(seed_key(r))) for r in runs if not r.daily.empty]
    if not parts:
        return pd.DataFrame()
    frame = pd.concat(parts, ignore_index=True)
    columns = [c for c, _ in TRAJECTORIES if c in frame.columns]
    return frame.groupby(["_seed", "firm", "day"], sort=False, as_index=False)[columns].mean()


def trajectories(label: str, runs: Sequence[RunFrames], path: Path) -> Path | None:
    """Cash, cumulative revenue and cumulative net income per firm and day."""
    frame = seed_daily(runs)
    if frame.empty:
        return None
    seeds = frame["_seed"].nunique()
    fig = figure(15, 4.2)
    axes = fig.subplots(1, len(TRAJECTORIES))
    many = seeds > 1
    for ax, (column, title) in zip(axes, TRAJECTORIES, strict=True):
        for firm in _firms(frame):
            stats = frame[frame["firm"] == firm].groupby("day")[column].agg(["mean", "min", "max"])
            color = firm_color(firm)
            ax.plot(stats.index, stats["mean"], label=firm, linewidth=1.4, color=color)
            if many:
                ax.fill_between(stats.index, stats["min"], stats["max"], color=color, alpha=0.15)
        ax.set_title(title)
        ax.set_xlabel("day")
        ax.xaxis.set_major_locator(integer_locator())
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    shown = f"mean of {seeds} seeds, band min–max" if many else "1 seed"
    fig.suptitle(f"{label} ({shown}; {horizon_text(runs)})")
    return save(fig, path)


FIGURE3_LINES = (
    ("cash", "cash", "-"),
    ("revenue_cum", "revenue, cumulative", "--"),
    ("net_income_cum", "net income, cumulative", ":"),
)
"""Figure 3's measures of the evaluated firm: (daily column, legend text, line style)."""


def focal_means(runs: Sequence[RunFrames]) -> tuple[pd.DataFrame, int]:
    """roaster_A's Figure 3 measures per day, the mean over seeds (a repeated seed's runs
    averaged first), and the number of seeds; an empty frame when no run has daily rows."""
    frame = seed_daily(runs)
    if frame.empty:
        return frame, 0
    mine = frame[frame["firm"] == FOCAL_FIRM]
    columns = [c for c, _, _ in FIGURE3_LINES]
    return mine.groupby("day")[columns].mean(), int(mine["_seed"].nunique())


def festival_spans(runs: Sequence[RunFrames]) -> list[tuple[int, int]]:
    """The distinct festival spans (first, last day, inclusive) of the runs' economies: each
    run's ``economy.festival_days``, else the economy's default."""
    from econbench.coffee.config import EconomyConfig

    default = tuple(EconomyConfig.model_fields["festival_days"].default)
    spans = set()
    for run in runs:
        economy = run.config.get("economy") or {}
        first, last = economy.get("festival_days") or default
        spans.add((int(first), int(last)))
    return sorted(spans)


def _span_text(spans: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"{a}–{b}" for a, b in spans)


def figure3(groups: dict[str, list[RunFrames]], path: Path) -> Path | None:
    """The paper's Figure 3 (see :func:`draw_figure3`) as a PNG; ``None`` without daily rows."""
    fig = draw_figure3(groups)
    return None if fig is None else save(fig, path)


def draw_figure3(groups: dict[str, list[RunFrames]]) -> Figure | None:
    """The paper's Figure 3: roaster_A's cash, cumulative revenue and cumulative net income of
    every configuration on one set of axes (colour: configuration; line style: measure), mean
    over seeds, the festival days shaded (each span as its first to last day, inclusive)."""
    from matplotlib.lines import Line2D

    means = {label: focal_means(runs) for label, runs in groups.items()}
    means = {label: m for label, m in means.items() if not m[0].empty}
    if not means:
        return None
    fig = figure(12, 6)
    ax = fig.subplots()
    config_handles = []
    for i, (label, (frame, seeds)) in enumerate(means.items()):
        color = config_color(i)
        for column, _, style in FIGURE3_LINES:
            ax.plot(frame.index, frame[column], color=color, linestyle=style, linewidth=1.5)
        text = f"{label} ({seeds} seed{'s' if seeds != 1 else ''})"
        config_handles.append(Line2D([], [], color=color, linewidth=2, label=text))
    first = min(int(m[0].index.min()) for m in means.values())
    last = max(int(m[0].index.max()) for m in means.values())
    ax.set_xlim(first - 0.5, last + 0.5)
    spans = festival_spans([r for label in means for r in groups[label]])
    shaded = [(max(a, first), min(b, last)) for a, b in spans if a <= last and b >= first]
    for a, b in shaded:
        ax.axvspan(a - 0.5, b + 0.5, color=FESTIVAL_COLOR, alpha=0.25, linewidth=0)
    measure_handles = [
        Line2D([], [], color="#444444", linestyle=style, linewidth=1.5, label=name)
        for _, name, style in FIGURE3_LINES
    ]
    if shaded:
        measure_handles.append(
            Line2D([], [], color=FESTIVAL_COLOR, alpha=0.5, linewidth=8, label="festival days")
        )
    ax.legend(handles=measure_handles, loc="best", fontsize="small")
    fig.legend(
        handles=config_handles,
        loc="outside lower center",
        ncols=1 if len(config_handles) > 4 else 2,
        fontsize="small",
    )
    ax.axhline(0, color="#999999", linewidth=0.8)
    ax.set_xlabel("day")
    ax.set_ylabel("$")
    ax.xaxis.set_major_locator(integer_locator())
    ax.grid(alpha=0.3)
    festival = (
        f"shaded: festival days {_span_text(shaded)}"
        if shaded
        else f"festival days {_span_text(spans)} lie outside the days run"
    )
    horizon = horizon_text([r for label in means for r in groups[label]])
    ax.set_title(
        f"Figure 3 — {FOCAL_FIRM}: cash, revenue and net income by configuration "
        f"(mean over seeds; {horizon}; {festival})",
        fontsize="medium",
    )
    return fig


def idle_timeline(label: str, runs: Sequence[RunFrames], path: Path) -> Path | None:
    """A firm × day grid: the share of seeds in which the firm was idle that day. When no
    firm was idle on any day (and none went bankrupt) the figure says so in words instead of
    drawing an empty grid."""
    parts = [
        idle_flags(r.events, r.daily).assign(_seed=str(seed_key(r)))
        for r in runs
        if not r.daily.empty
    ]
    if not parts:
        return None
    flags = pd.concat(parts, ignore_index=True)
    seeds = flags["_seed"].nunique()
    live = flags[flags["live"]].astype({"idle": float})
    per_seed = live.groupby(["_seed", "firm", "day"], as_index=False)["idle"].mean()
    share = per_seed.groupby(["firm", "day"])["idle"].mean().unstack("day")
    firms = _firms(flags)
    days = sorted(flags["day"].unique())
    grid = share.reindex(index=firms, columns=days).to_numpy(dtype=float)
    seeds_text = f"{seeds} seed{'s' if seeds != 1 else ''}, {horizon_text(runs)}"
    if not np.nansum(grid) and not np.isnan(grid).any():
        return save(no_idle_figure(label, seeds_text), path)
    fig = figure(min(max(7.5, 3 + 0.12 * len(days)), 16), 1.5 + 0.38 * len(firms))
    ax = fig.subplots()
    cmap = colormap("Greys").with_extremes(bad="#f4c7c3")
    image = ax.imshow(
        np.ma.masked_invalid(grid),
        aspect="auto",
        cmap=cmap,
        vmin=0,
        vmax=1,
        interpolation="nearest",
        extent=(days[0] - 0.5, days[-1] + 0.5, len(firms) - 0.5, -0.5),
    )
    ax.set_yticks(range(len(firms)), firms)
    ax.set_yticks(np.arange(len(firms) + 1) - 0.5, minor=True)
    ax.grid(which="minor", axis="y", color="#d0d0d0", linewidth=0.8)
    ax.tick_params(which="minor", left=False)
    ax.set_xlabel("day")
    totals = per_seed.groupby("firm")["idle"].sum() / seeds
    idle = (
        f"{FOCAL_FIRM}: {totals.get(FOCAL_FIRM, 0):.1f} per seed"
        if np.nansum(grid)
        else "no idle days"
    )
    ax.set_title(
        f"{label} ({seeds_text})\nidle days: dark = idle, pink = bankrupt; {idle}",
        fontsize="medium",
    )
    ax.xaxis.set_major_locator(integer_locator())
    if seeds > 1:
        fig.colorbar(image, ax=ax, label="share of seeds idle", shrink=0.8)
    return save(fig, path)


NO_IDLE_TEXT = "No idle days: every firm acted on every day of every run."
"""What an idle-day figure says when there is nothing to shade."""


def no_idle_figure(label: str, seeds_text: str) -> Figure:
    """The idle-day figure of runs in which no firm was ever idle: a sentence, not a grid."""
    fig = figure(7.5, 1.6)
    ax = fig.subplots()
    ax.set_axis_off()
    ax.text(0.5, 0.45, NO_IDLE_TEXT, ha="center", va="center", fontsize="large")
    ax.set_title(f"{label} ({seeds_text})\nidle days", fontsize="medium")
    return fig


def _run_counts(run: RunFrames, prefix: str) -> dict[str, float] | None:
    s = run.summary
    mine = s[s["firm"] == FOCAL_FIRM] if not s.empty else s
    if mine.empty:
        return None
    row = mine.iloc[0]
    return {k.split(".", 1)[1]: row[k] for k in row.index if k.startswith(prefix + ".")}


def _per_run_counts(groups: dict[str, list[RunFrames]], prefix: str) -> pd.DataFrame:
    """Mean per seed of roaster_A's ``<prefix>.<name>`` counts (a repeated seed's runs
    averaged first): rows names, columns labels."""
    columns = {}
    for label, runs in groups.items():
        rows = []
        for seed_runs in group_by_seed(runs).values():
            counts = [c for run in seed_runs if (c := _run_counts(run, prefix)) is not None]
            if counts:
                rows.append(pd.DataFrame(counts).fillna(0).astype(float).mean())
        if rows:
            columns[label] = pd.DataFrame(rows).fillna(0).astype(float).mean()
    frame = pd.DataFrame(columns).fillna(0.0)
    return frame[(frame > 0).any(axis=1)] if not frame.empty else frame


def grouped_bars(counts: pd.DataFrame, title: str, xlabel: str, path: Path) -> Path | None:
    """Horizontal bars: one group per row name, one bar per configuration."""
    if counts.empty:
        return None
    counts = counts.sort_index()
    names, labels = list(counts.index), list(counts.columns)
    fig = figure(10, 1.5 + 0.28 * len(names) * max(1, len(labels) ** 0.5))
    ax = fig.subplots()
    height = 0.8 / len(labels)
    y = np.arange(len(names))
    for i, label in enumerate(labels):
        ax.barh(
            y + i * height, counts[label].to_numpy(), height, label=label, color=config_color(i)
        )
    ax.set_yticks(y + 0.4 - height / 2, names)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return save(fig, path)


def coffee_figures(runs: Sequence[RunFrames], out: Path) -> list[FigureFile]:
    """Figure 3 and the tool-call and message bars per horizon (one set when every
    configuration ran the same number of days: ``figure3.png``; else ``figure3_90d.png``,
    ``figure3_3d.png``, …), then each configuration's trajectories and idle days."""
    # As the tables group them, never across conditions; only runs whose daily rows are one
    # per firm and day (a run whose daily.jsonl has another layout is drawn from nothing).
    groups = condition_groups([r for r in runs if r.daily.empty or "firm" in r.daily.columns])
    names = slugs(list(groups))
    files: list[FigureFile] = []
    horizons = by_horizon(groups)
    for horizon, members in horizons.items():
        suffix = "" if len(horizons) == 1 else "_" + horizon.replace(", ", "-") + "d"
        files += _across_configurations(members, out, suffix, f"{horizon} days")
    for label, group in groups.items():
        path = trajectories(label, group, out / f"trajectories_{names[label]}.png")
        if path:
            files.append(FigureFile(path, f"Daily trajectories — {label}", READER.name))
        path = idle_timeline(label, group, out / f"idle_{names[label]}.png")
        if path:
            files.append(FigureFile(path, f"Idle days — {label}", READER.name))
    return files


def _across_configurations(
    groups: dict[str, list[RunFrames]], out: Path, suffix: str, horizon: str
) -> list[FigureFile]:
    """Figure 3 and roaster_A's tool-call and message bars over configurations of one
    horizon."""
    files: list[FigureFile] = []
    path = figure3(groups, out / f"figure3{suffix}.png")
    if path:
        title = f"Figure 3 — {FOCAL_FIRM} across configurations ({horizon}), festival days shaded"
        files.append(FigureFile(path, title, READER.name))
    path = grouped_bars(
        _per_run_counts(groups, "tool_calls_by_name"),
        f"{FOCAL_FIRM}: tool calls by tool (mean per seed; {horizon})",
        "calls per seed",
        out / f"tool_calls{suffix}.png",
    )
    if path:
        title = f"Tool-call distribution of {FOCAL_FIRM} ({horizon})"
        files.append(FigureFile(path, title, READER.name))
    path = grouped_bars(
        _per_run_counts(groups, "messages_sent_by_recipient"),
        f"{FOCAL_FIRM}: messages sent by recipient (mean per seed; {horizon})",
        "messages per seed",
        out / f"messages{suffix}.png",
    )
    if path:
        title = f"Message recipients of {FOCAL_FIRM} ({horizon})"
        files.append(FigureFile(path, title, READER.name))
    return files
