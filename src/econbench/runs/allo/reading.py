"""How the run layer reads an AlloBench cell: its label, its frames, its report section, its
figures and what the viewer shows of it (:class:`AlloReader`).

The frames: ``episodes`` (one row per episode, without the bulky ``turns``, plus
``n_commits``, ``first_sight_eligible`` and ``first_sight_eligible_commits``: the episode's
eligible first-occurrence turns and the commits among them, counted from its ``turns`` by
``econbench.allo.game.metrics.first_sight_turns``), ``turns`` (one row per turn with its episode's
``seed``; a turn's class label is ``class_label``) and ``summary`` (one row). A cell without
``summary.json`` gets a provisional summary from its finished episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from econbench.allo.game.metrics import read_summary
from econbench.runs import layout
from econbench.runs.frames import EMPTY_COLUMNS, frame_of, short

if TYPE_CHECKING:
    from econbench.runs.figures import FigureFile
    from econbench.runs.frames import RunFrames
    from econbench.runs.report import Section
    from econbench.runs.viewer.allo_data import AlloData

IDENTITY_KEYS = ("framing", "policy", "skin", "cost", "budget", "stream_config")
"""What defines a cell's configuration (with its protocol, when not econbench's)."""


# -- label --------------------------------------------------------------------------------------


def framing_name(framing: str, skin: str | None) -> str:
    """A rung as the reports name it: ``r0``, ``r0:quiver``, ``r2``."""
    return framing if not skin or skin == "default" else f"{framing}:{skin}"


def allo_label(config: dict[str, Any]) -> str:
    """``POLICY FRAMING B=b K=k`` (the R0 skin joins the framing, e.g. ``r0:quiver``)."""
    framing = framing_name(str(config.get("framing")), config.get("skin"))
    return (
        f"{config.get('policy')} {framing} B={config.get('budget')} K={short(config.get('cost'))}"
    )


# -- frames -------------------------------------------------------------------------------------


def episodes_frame(episode_rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The episodes without their turns, plus the commit and first-sight counts."""
    rows = [{k: v for k, v in r.items() if k != "turns"} for r in episode_rows]
    frame = frame_of(rows, EMPTY_COLUMNS["episodes"])
    if rows:
        from econbench.allo.game.metrics import first_sight_turns

        frame["n_commits"] = frame["commits"].map(len)
        counts = [first_sight_turns(r.get("turns", [])) for r in episode_rows]
        frame["first_sight_eligible"] = [e for e, _ in counts]
        frame["first_sight_eligible_commits"] = [c for _, c in counts]
    return frame


def turns_frame(episode_rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per turn of every episode, with the episode's seed."""
    rows = []
    for episode in episode_rows:
        for turn in episode.get("turns", []):
            row = {"seed": episode.get("seed")}
            row.update({("class_label" if k == "label" else k): v for k, v in turn.items()})
            rows.append(row)
    return frame_of(rows, EMPTY_COLUMNS["turns"])


def _allo_provisional(config: dict[str, Any], episodes: pd.DataFrame) -> dict[str, Any]:
    """The headline metrics of a cell without ``summary.json``, from its finished episodes."""
    row: dict[str, Any] = {k: config.get(k) for k in ("framing", "policy", "skin")}
    row.update(build_cost=config.get("cost"), budget=config.get("budget"))  # as summary.json
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


def summary_frame(run: RunFrames) -> pd.DataFrame:
    """One row: ``summary.json``'s (under the current metric names, ``read_summary``), or a
    provisional one from the finished episodes."""
    if run.raw_summary is not None:
        row = read_summary(run.raw_summary)
        lo, hi = (row.get("score_ci") or [None, None])[:2]
        row.update(score_ci_lo=lo, score_ci_hi=hi)
        provisional = False
    else:
        row = _allo_provisional(run.config, run.episodes)
        provisional = True
    row.update(status=run.status, provisional=provisional)
    return pd.DataFrame([row])


# -- the reader ---------------------------------------------------------------------------------


class AlloReader:
    """AlloBench's :class:`~econbench.runs.reading.BenchmarkReader`."""

    name = "allo"
    title = "AlloBench"

    def label(self, config: dict[str, Any]) -> str:
        return allo_label(config)

    def identity(self, config: dict[str, Any]) -> dict[str, Any]:
        ident = {k: config.get(k) for k in IDENTITY_KEYS}
        if config.get("protocol", "econbench") != "econbench":  # older keys stay as they were
            ident["protocol"] = config["protocol"]
        if config.get("condition") not in (None, "econbench"):
            ident["condition"] = config["condition"]
        return ident

    def seed(self, meta: dict[str, Any], config: dict[str, Any]) -> int | None:
        """``None``: a cell has no seed of its own (its episodes have seeds)."""
        return None

    def frame(self, run: RunFrames, kind: str) -> pd.DataFrame | None:
        if kind == "episodes":
            return episodes_frame(run.log_rows(layout.EPISODES))
        if kind == "turns":
            return turns_frame(run.log_rows(layout.EPISODES))
        if kind == "summary":
            return summary_frame(run)
        return None

    def section(self, runs: Sequence[RunFrames]) -> Section:
        from econbench.runs.allo.report import allo_section

        return allo_section(runs)

    def figures(self, section: Section, out: Path) -> list[FigureFile]:
        from econbench.runs.allo.figures import allo_figures

        return allo_figures(section, out)

    def viewer_data(self, run_dir: Path) -> AlloData:
        from econbench.runs.viewer.allo_data import AlloData

        return AlloData(run_dir)

    def brief(self, config: dict[str, Any], meta: dict[str, Any]) -> str:
        """The framing, the policy and a non-zero build charge."""
        parts = [config.get("framing"), config.get("policy")]
        if config.get("cost"):
            parts.append(f"k={config['cost']:g}")
        return " · ".join(str(p) for p in parts if p)


READER = AlloReader()
