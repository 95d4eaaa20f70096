"""The report's figures as PNG files (matplotlib, no pyplot: ``Figure`` objects render with
the Agg canvas, so nothing touches a display or global state).

CoffeeBench, per configuration: daily cash, cumulative revenue and cumulative net income per
firm (the mean over seeds, with the min–max band when there are several), and an idle-day
timeline (firm × day; the shade is the share of seeds in which that day was idle). Across
configurations: roaster_A's tool calls by tool and its messages by recipient (means per run).
AlloBench: κ curves against the build charge K, one line per (policy, framing), one column per
budget B, the paper's economic-surface outcomes: first-sight hazard, net utility with the exact
hindsight net optimum (dashed), and regret (optimum − net). The pooled ratio Σ utility / Σ OPT is
left to the κ table: it runs to large negative values as the optimum → 0 at high K.

This module imports matplotlib; ``econbench.cli`` imports it only when a report is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from econbench.runs.frames import RunFrames, idle_flags
from econbench.runs.report import FIRM_ORDER, FOCAL_FIRM, Report, group_by_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

DPI = 110
TRAJECTORIES = [("cash", "cash ($)"), ("revenue_cum", "revenue, cumulative ($)")]
TRAJECTORIES.append(("net_income_cum", "net income, cumulative ($)"))


@dataclass(frozen=True)
class FigureFile:
    """A written figure and how the report introduces it."""

    path: Path
    title: str
    section: str
    """``coffee`` or ``allo``."""


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})
    return path


def slugs(labels: Sequence[str]) -> dict[str, str]:
    """A distinct file-name-safe slug per label."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for label in labels:
        base = re.sub(r"[^A-Za-z0-9._=-]+", "-", label).strip("-.") or "run"
        slug, i = base[:80], 2
        while slug in used:
            slug, i = f"{base[:76]}-{i}", i + 1
        used.add(slug)
        out[label] = slug
    return out


def _firms(frame: pd.DataFrame) -> list[str]:
    present = set(frame["firm"])
    return [f for f in FIRM_ORDER if f in present] + sorted(present - set(FIRM_ORDER))


# -- CoffeeBench --------------------------------------------------------------------------------


def trajectories(label: str, runs: Sequence[RunFrames], path: Path) -> Path | None:
    """Cash, cumulative revenue and cumulative net income per firm and day."""
    daily = [r.daily.assign(_run=i) for i, r in enumerate(runs) if not r.daily.empty]
    if not daily:
        return None
    frame = pd.concat(daily, ignore_index=True)
    fig = _figure(15, 4.2)
    axes = fig.subplots(1, len(TRAJECTORIES))
    many = len(daily) > 1
    for ax, (column, title) in zip(axes, TRAJECTORIES, strict=True):
        for firm in _firms(frame):
            stats = frame[frame["firm"] == firm].groupby("day")[column].agg(["mean", "min", "max"])
            (line,) = ax.plot(stats.index, stats["mean"], label=firm, linewidth=1.4)
            if many:
                ax.fill_between(
                    stats.index, stats["min"], stats["max"], color=line.get_color(), alpha=0.15
                )
        ax.set_title(title)
        ax.set_xlabel("day")
        ax.xaxis.set_major_locator(_integer_locator())
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    seeds = f"mean of {len(daily)} seeds, band min–max" if many else "1 seed"
    fig.suptitle(f"{label} ({seeds})")
    return _save(fig, path)


def idle_timeline(label: str, runs: Sequence[RunFrames], path: Path) -> Path | None:
    """A firm × day grid: the share of seeds in which the firm was idle that day."""
    parts = [idle_flags(r.events, r.daily) for r in runs if not r.daily.empty]
    if not parts:
        return None
    flags = pd.concat(parts, ignore_index=True)
    live = flags[flags["live"]]
    share = live.groupby(["firm", "day"])["idle"].mean().unstack("day")
    firms = _firms(flags)
    days = sorted(flags["day"].unique())
    grid = share.reindex(index=firms, columns=days).to_numpy(dtype=float)
    fig = _figure(min(max(7.5, 3 + 0.12 * len(days)), 16), 1.5 + 0.38 * len(firms))
    ax = fig.subplots()
    cmap = _cmap("Greys").with_extremes(bad="#f4c7c3")
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
    totals = live.groupby("firm")["idle"].sum() / len(parts)
    ax.set_title(
        f"{label}\nidle days: dark = idle, pink = bankrupt; "
        f"{FOCAL_FIRM}: {totals.get(FOCAL_FIRM, 0):.1f} per run",
        fontsize="medium",
    )
    ax.xaxis.set_major_locator(_integer_locator())
    if len(parts) > 1:
        fig.colorbar(image, ax=ax, label="share of seeds idle", shrink=0.8)
    return _save(fig, path)


def _integer_locator() -> MaxNLocator:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _cmap(name: str) -> Colormap:
    from matplotlib import colormaps

    return colormaps[name].copy()


def _per_run_counts(groups: dict[str, list[RunFrames]], prefix: str) -> pd.DataFrame:
    """Mean per run of roaster_A's ``<prefix>.<name>`` counts: rows names, columns labels."""
    columns = {}
    for label, runs in groups.items():
        rows = []
        for run in runs:
            s = run.summary
            mine = s[s["firm"] == FOCAL_FIRM] if not s.empty else s
            if not mine.empty:
                row = mine.iloc[0]
                rows.append(
                    {k.split(".", 1)[1]: row[k] for k in row.index if k.startswith(prefix + ".")}
                )
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
    fig = _figure(10, 1.5 + 0.28 * len(names) * max(1, len(labels) ** 0.5))
    ax = fig.subplots()
    height = 0.8 / len(labels)
    y = np.arange(len(names))
    for i, label in enumerate(labels):
        ax.barh(y + i * height, counts[label].to_numpy(), height, label=label)
    ax.set_yticks(y + 0.4 - height / 2, names)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return _save(fig, path)


def coffee_figures(runs: Sequence[RunFrames], out: Path) -> list[FigureFile]:
    groups = group_by_label(r for r in runs if r.benchmark == "coffee")
    names = slugs(list(groups))
    files: list[FigureFile] = []
    for label, group in groups.items():
        path = trajectories(label, group, out / f"trajectories_{names[label]}.png")
        if path:
            files.append(FigureFile(path, f"Daily trajectories — {label}", "coffee"))
        path = idle_timeline(label, group, out / f"idle_{names[label]}.png")
        if path:
            files.append(FigureFile(path, f"Idle days — {label}", "coffee"))
    path = grouped_bars(
        _per_run_counts(groups, "tool_calls_by_name"),
        f"{FOCAL_FIRM}: tool calls by tool (mean per run)",
        "calls per run",
        out / "tool_calls.png",
    )
    if path:
        files.append(FigureFile(path, f"Tool-call distribution of {FOCAL_FIRM}", "coffee"))
    path = grouped_bars(
        _per_run_counts(groups, "messages_sent_by_recipient"),
        f"{FOCAL_FIRM}: messages sent by recipient (mean per run)",
        "messages per run",
        out / "messages.png",
    )
    if path:
        files.append(FigureFile(path, f"Message recipients of {FOCAL_FIRM}", "coffee"))
    return files


# -- AlloBench ----------------------------------------------------------------------------------


def _curve(ax: Axes, x: np.ndarray, y: np.ndarray, se: np.ndarray, style: dict) -> None:
    ax.errorbar(x, y, yerr=np.nan_to_num(se), capsize=3, linewidth=1.3, **style)


def _styles(keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], dict]:
    """One colour and marker per (policy, framing), the same in every panel."""
    from matplotlib import colormaps

    colors = colormaps["tab10" if len(keys) <= 10 else "tab20"].colors
    markers = "osD^vP*X"
    return {
        key: {
            "color": colors[i % len(colors)],
            "marker": markers[i % len(markers)],
            "label": f"{key[0]} · {key[1]}",
        }
        for i, key in enumerate(keys)
    }


def kappa_curves(cells: pd.DataFrame, path: Path) -> Path | None:
    """First-sight hazard, net utility (and the hindsight net optimum, dashed) and regret
    against K; a column per B, a line per (policy, framing) with at least two values of K."""
    if cells.empty or cells["cost"].nunique() < 2:
        return None
    lines = {
        key: line.sort_values("cost")
        for key, line in cells.groupby(["budget", "policy", "framing"], sort=True)
        if line["cost"].nunique() >= 2
    }
    if not lines:
        return None
    budgets = sorted({b for b, _, _ in lines})
    styles = _styles(sorted({(p, f) for _, p, f in lines}))
    fig = _figure(4.6 * len(budgets) + 2.5, 10)
    axes = fig.subplots(3, len(budgets), squeeze=False)
    for (budget, policy, framing), line in lines.items():
        j = budgets.index(budget)
        x = line["cost"].to_numpy(dtype=float)
        style = styles[(policy, framing)]
        hazard = line["first_sight_hazard"].to_numpy(float)
        _curve(
            axes[0, j], x, 100 * hazard, 100 * line["first_sight_hazard_se"].to_numpy(float), style
        )
        _curve(
            axes[1, j], x, line["net_mean"].to_numpy(float), line["net_se"].to_numpy(float), style
        )
        axes[1, j].plot(
            x,
            line["net_optimum_mean"].to_numpy(float),
            color=style["color"],
            linestyle="--",
            linewidth=1.0,
        )
        regret, se = line["regret_mean"].to_numpy(float), line["regret_se"].to_numpy(float)
        _curve(axes[2, j], x, regret, se, style)
    for j, budget in enumerate(budgets):
        axes[0, j].set_title(f"B = {budget}")
        axes[0, j].set_ylabel("first-sight hazard (%)")
        axes[1, j].set_ylabel("net utility (dashed: hindsight optimum)")
        axes[2, j].set_ylabel("regret (optimum − net)")
        axes[2, j].set_xlabel("build charge K")
        for ax in axes[:, j]:
            ax.grid(alpha=0.3)
    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    fig.legend(list(handles.values()), list(handles), loc="outside right upper", fontsize="small")
    fig.suptitle("AlloBench κ curves: first-sight hazard, net utility and regret vs K")
    return _save(fig, path)


def write_figures(report: Report, out: Path) -> list[FigureFile]:
    """Every figure for which the report has data, written under ``out``."""
    files = coffee_figures(report.runs, out)
    path = kappa_curves(report.cells, out / "kappa.png")
    if path:
        files.append(FigureFile(path, "κ curves (AlloBench)", "allo"))
    return files
