"""AlloBench's figures in the report.

κ curves against the build charge K, one line per (policy, framing), one column per budget B,
the paper's economic-surface outcomes: first-sight hazard, net utility with the exact
hindsight net optimum (dashed), and regret (optimum − net). The pooled ratio Σ utility / Σ OPT
is left to the κ table: it runs to large negative values as the optimum → 0 at high K.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from econbench.runs.allo.reading import READER
from econbench.runs.figures import FigureFile, figure, save
from econbench.runs.report import Section

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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
    fig = figure(4.6 * len(budgets) + 2.5, 10)
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
    return save(fig, path)


def allo_figures(section: Section, out: Path) -> list[FigureFile]:
    """The κ curves, when the section's cells cover at least two values of K."""
    path = kappa_curves(section.frames["cells"], out / "kappa.png")
    return [FigureFile(path, "κ curves (AlloBench)", READER.name)] if path else []
