"""The before/after transfer table (docs/allobench.md §6): does R0 training change other rungs?

Every cell is an ordinary AlloBench run of the ``hf/PATH`` model through
``econbench.runs.allo.cell.run_cell`` — the same code ``econbench allo run --policy hf/PATH``
uses — once for the base model (``OUT/base/<cell>``) and once with the LoRA adapter
(``OUT/adapted/<cell>``), on the same seeds and settings. Cells, each under the paper's
condition for it (``RUNGS``): the R0 urn, its three lexical reskins (chest, quiver, cauldron),
the keep/pass tool-call probe, R1 declarative and R2 code with four re-asks, as the paper
evaluated its checkpoints (R3 full build and the urn without N on request).
A rerun continues each cell after its last finished episode (finished cells are not played
again); a cell whose settings changed is refused unless ``force``.

Per rung and model the table pools the episodes of its cells: first-sight commitment rate
(first-sight commits / commits, ``–`` without any commit), pooled score (Σ utility / Σ OPT)
and unresolved share (unresolved decision turns / decision turns). The paper's first-sight
rates before and after training are shown beside them (the paper reports the reskins
pooled).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from econbench.agents.models.registry import ModelSettings
from econbench.allo.episodes.runner import CellSpec, Episode
from econbench.allo.framings import framing_label
from econbench.allo.game.stream import StreamConfig
from econbench.runs.allo.cell import run_cell
from econbench.runs.layout import CONFIG, EPISODES, read_json, read_jsonl
from econbench.runs.store import write_json

VARIANTS = ("base", "adapted")


@dataclass(frozen=True)
class Rung:
    """One evaluated cell: a framing, for R0 a skin, and the paper's condition it is played
    under (``econbench.allo.paper.conditions``)."""

    key: str
    framing: str
    skin: str
    title: str
    condition: str


RUNGS: tuple[Rung, ...] = (
    Rung("r0", "r0", "default", framing_label("r0"), "frontier"),
    Rung("chest", "r0", "chest", "R0 reskin: chest", "reskin"),
    Rung("quiver", "r0", "quiver", "R0 reskin: quiver", "reskin"),
    Rung("cauldron", "r0", "cauldron", "R0 reskin: cauldron", "reskin"),
    Rung("tool-probe", "r0", "default", framing_label("r0-tool"), "tool-probe"),
    Rung("no-n", "r0", "default", f"{framing_label('r0')}, N not announced", "no-n"),
    *(Rung(key, key, "default", framing_label(key), "qwen") for key in ("r1", "r2", "r3")),
)
"""The paper's transfer panel (its Table "Full first-sight commitment ladder"): the urn with N
disclosed, its reskins, the keep/pass tool-call probe, and R1–R3 with four empty-fence retries
(the ``qwen`` condition). ``no-n`` (the urn its Run 1 trained on) is evaluated on request."""
OPTIONAL_RUNGS = ("no-n", "r3")
"""Rungs left out unless asked for (``rungs``; R3 also by ``r3=True``)."""
ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("r0", framing_label("r0"), ("r0",)),
    ("chest", "reskin: chest", ("chest",)),
    ("quiver", "reskin: quiver", ("quiver",)),
    ("cauldron", "reskin: cauldron", ("cauldron",)),
    ("reskins", "reskins, pooled", ("chest", "quiver", "cauldron")),
    ("tool-probe", "keep/pass tool call", ("tool-probe",)),
    ("no-n", f"{framing_label('r0')}, N not announced", ("no-n",)),
    *((key, framing_label(key), (key,)) for key in ("r1", "r2", "r3")),
)
PAPER_FIRST_SIGHT: dict[str, tuple[float, float]] = {
    "r0": (0.74, 0.06),
    "reskins": (0.65, 0.03),
    "tool-probe": (0.87, 0.33),
    "r1": (0.62, 0.69),
    "r2": (0.76, 0.67),
    "r3": (0.91, 0.95),
}
"""The paper's first-sight rates, base → trained (Qwen2.5-Coder-14B, Run 2; docs/allobench.md
§6)."""


class TransferError(RuntimeError):
    """A cell cannot be run or resumed as asked (the message says why)."""


@dataclass(frozen=True)
class TransferSpec:
    """What to evaluate: the model, its adapter, the seeds and the generation settings."""

    model: Path
    adapter: Path | None
    seeds: tuple[int, ...]
    max_tokens: int | None = None
    temperature: float | None = None
    device: str = "auto"
    r3: bool = False
    cost: float = 0.0
    budget: int = 3
    tasks: int = 60
    rungs: tuple[str, ...] = field(default=())
    forced_choice: bool = False
    forced_temperature: float = 1.2

    def rung_list(self) -> list[Rung]:
        keys = self.rungs or tuple(
            r.key for r in RUNGS if r.key not in OPTIONAL_RUNGS or (r.key == "r3" and self.r3)
        )
        unknown = sorted(set(keys) - {r.key for r in RUNGS})
        if unknown:
            raise TransferError(
                f"unknown rung(s) {', '.join(unknown)}; choose from "
                f"{', '.join(r.key for r in RUNGS)}"
            )
        return [r for r in RUNGS if r.key in keys]

    def variants(self) -> list[str]:
        return list(VARIANTS) if self.adapter is not None else ["base"]

    @property
    def policy(self) -> str:
        return f"hf/{self.model}"

    def settings(self, variant: str) -> ModelSettings:
        return ModelSettings(
            adapter=str(self.adapter) if variant == "adapted" and self.adapter else None,
            device=self.device,  # type: ignore[arg-type]
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )

    def cell(self, rung: Rung) -> CellSpec:
        return CellSpec(
            framing=rung.framing,
            policy=self.policy,
            seeds=self.seeds,
            cost=self.cost,
            budget=self.budget,
            skin=rung.skin,
            config=StreamConfig(n_tasks=self.tasks),
            condition=rung.condition,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "model": str(self.model),
            "adapter": str(self.adapter) if self.adapter else None,
            "seeds": list(self.seeds),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "device": self.device,
            "cost": self.cost,
            "budget": self.budget,
            "tasks": self.tasks,
            "rungs": [r.key for r in self.rung_list()],
            "conditions": {r.key: r.condition for r in self.rung_list()},
            "forced_choice": self.forced_choice,
            "forced_temperature": self.forced_temperature if self.forced_choice else None,
        }


def pooled(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Pooled metrics of episode records (``episodes.jsonl`` rows)."""
    commits = sum(len(r["commits"]) for r in records)
    first = sum(int(r["first_sight_commits"]) for r in records)
    utility = sum(float(r["utility"]) for r in records)
    opt = sum(float(r["opt"]) for r in records)
    decisions = sum(int(r["decision_turns"]) for r in records)
    unresolved = sum(int(r["unresolved_turns"]) for r in records)
    return {
        "episodes": len(records),
        "commits": commits,
        "first_sight_commits": first,
        "first_sight_rate": first / commits if commits else None,
        "score": utility / opt if opt > 0 else None,
        "decision_turns": decisions,
        "unresolved_turns": unresolved,
        "unresolved_share": unresolved / decisions if decisions else None,
    }


def run_transfer(
    spec: TransferSpec,
    out: str | Path,
    *,
    force: bool = False,
    on_cell: Callable[[str, Rung, int], None] | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> dict[str, Any]:
    """Play every cell (continuing finished work), then write ``transfer.json`` and
    ``transfer.md``; returns the JSON document. ``on_cell(variant, rung, done)`` is called
    before each cell with the number of its episodes already played."""
    from econbench.runs.allo.cell import CellResumeError, CellStopped

    out = Path(out)
    for variant in spec.variants():
        for rung in spec.rung_list():
            cell_dir = out / variant / rung.key
            resume = (cell_dir / CONFIG).exists()
            if on_cell is not None:
                on_cell(variant, rung, len(read_jsonl(cell_dir / EPISODES)) if resume else 0)
            try:
                run_cell(
                    spec.cell(rung),
                    cell_dir,
                    models={spec.policy: spec.settings(variant)},
                    on_episode=on_episode,
                    label=f"transfer-{variant}-{rung.key}",
                    resume=resume,
                    force=force,
                )
            except (CellResumeError, CellStopped) as exc:
                raise TransferError(f"{cell_dir}: {exc}") from None
    forced = run_forced(spec, out) if spec.forced_choice else None
    result = transfer_result(spec, out, forced)
    write_json(out / "transfer.json", result)
    (out / "transfer.md").write_text(transfer_markdown(result), encoding="utf-8")
    return result


def run_forced(spec: TransferSpec, out: Path) -> dict[str, dict[str, Any]]:
    """Forced-choice R0 metrics per variant (``forced``), saved as ``OUT/<variant>/forced.json``
    and reused by a rerun with the same settings."""
    from econbench.agents.models.hf.loading import load_causal_lm
    from econbench.runs.allo.posttrain.forced import forced_choice

    unused = ("rungs", "conditions", "forced_choice", "adapter", "max_tokens", "temperature")
    common = {k: v for k, v in spec.describe().items() if k not in unused}
    results = {}
    for variant in spec.variants():
        path = out / variant / "forced.json"
        settings = {**common, "adapter": str(spec.adapter) if variant == "adapted" else None}
        saved = read_json(path)
        if isinstance(saved, dict) and saved.get("settings") == settings:
            results[variant] = saved["rungs"]
            continue
        adapter = str(spec.adapter) if variant == "adapted" and spec.adapter else None
        model, tokenizer = load_causal_lm(spec.model, device=spec.device, adapter=adapter)
        rungs = forced_choice(
            model,
            tokenizer,
            spec.seeds,
            temperature=spec.forced_temperature,
            tasks=spec.tasks,
            budget=spec.budget,
            cost=spec.cost,
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, {"settings": settings, "rungs": rungs})
        results[variant] = rungs
    return results


def transfer_result(
    spec: TransferSpec, out: Path, forced: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The table as data: one row per rung (and the pooled reskins), per model variant."""
    keys = {r.key for r in spec.rung_list()}
    rows = []
    for key, title, cells in ROWS:
        if not set(cells) <= keys:
            continue
        row: dict[str, Any] = {"rung": key, "title": title, "cells": list(cells)}
        for variant in spec.variants():
            records = [rec for c in cells for rec in read_jsonl(out / variant / c / EPISODES)]
            row[variant] = pooled(records)
        paper = PAPER_FIRST_SIGHT.get(key)
        row["paper_first_sight"] = {"base": paper[0], "trained": paper[1]} if paper else None
        rows.append(row)
    result = {"settings": spec.describe(), "variants": spec.variants(), "rows": rows}
    if forced is not None:
        result["forced_choice"] = forced
    return result


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _pair(row: dict[str, Any], variants: list[str], key: str, fmt: Callable[..., str]) -> str:
    return " → ".join(fmt(row[v][key]) for v in variants)


def transfer_markdown(result: dict[str, Any]) -> str:
    """The before/after table in Markdown (base → adapted; the paper's base → trained)."""
    s = result["settings"]
    variants = result["variants"]
    arrow = " → ".join(variants)
    lines = [
        "# AlloBench post-training transfer",
        "",
        f"Model `{s['model']}`"
        + (f", adapter `{s['adapter']}`" if s["adapter"] else ", no adapter (base only)")
        + f"; {len(s['seeds'])} episode(s) per cell (seeds {_seed_text(s['seeds'])}), "
        f"T = {s['tasks']}, B = {s['budget']}, K = {s['cost']:g}; "
        f"max_tokens {s['max_tokens'] or 'the framing default'}, "
        f"temperature {s['temperature'] if s['temperature'] is not None else 'the model default'}.",
        "",
        f"| rung | first-sight ({arrow}) | paper first-sight (base → trained) "
        f"| pooled score ({arrow}) | unresolved share ({arrow}) | commits ({arrow}) |",
        "|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        paper = row["paper_first_sight"]
        paper_text = f"{_pct(paper['base'])} → {_pct(paper['trained'])}" if paper else ""
        lines.append(
            f"| {row['title']} | {_pair(row, variants, 'first_sight_rate', _pct)} | {paper_text} "
            f"| {_pair(row, variants, 'score', _num)} "
            f"| {_pair(row, variants, 'unresolved_share', _pct)} "
            f"| {' → '.join(str(row[v]['commits']) for v in variants)} |"
        )
    lines += [
        "",
        "First-sight = commits at a class's first occurrence / commits (– without commits); "
        "score = Σ utility / Σ OPT; unresolved = decision turns whose reply could not be read "
        "as a decision (counted as PASS) / decision turns.",
        "",
    ]
    if "forced_choice" in result:
        lines += forced_markdown(result["forced_choice"], variants, s["forced_temperature"])
    return "\n".join(lines)


FORCED_ROWS = (
    ("r0", framing_label("r0")),
    ("chest", "reskin: chest"),
    ("quiver", "reskin: quiver"),
    ("cauldron", "reskin: cauldron"),
    ("reskins", "reskins, pooled"),
)


def forced_markdown(
    forced: dict[str, dict[str, Any]], variants: list[str], temperature: float
) -> list[str]:
    """The forced-choice section of ``transfer.md``."""
    arrow = " → ".join(variants)
    lines = [
        f"## Forced choice (the training reading, temperature {temperature:g})",
        "",
        "Every decision sampled from the two-way KEEP/PASS softmax after the assistant prefix "
        "`DECISION:`, as in training (every decision resolved; same random numbers for both "
        "models).",
        "",
        f"| rung | first-sight ({arrow}) | paper first-sight (base → trained) "
        f"| pooled score ({arrow}) | KEEP rate ({arrow}) | commits ({arrow}) |",
        "|---|---|---|---|---|---|",
    ]
    for key, title in FORCED_ROWS:
        rows = [forced[v][key] for v in variants]
        paper = PAPER_FIRST_SIGHT.get(key)
        paper_text = f"{_pct(paper[0])} → {_pct(paper[1])}" if paper else ""
        lines.append(
            f"| {title} | {' → '.join(_pct(r['first_sight_rate']) for r in rows)} "
            f"| {paper_text} | {' → '.join(_num(r['score']) for r in rows)} "
            f"| {' → '.join(_pct(r['keep_rate']) for r in rows)} "
            f"| {' → '.join(str(r['commits']) for r in rows)} |"
        )
    return [*lines, ""]


def _seed_text(seeds: list[int]) -> str:
    if seeds and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else str(seeds[0])
    return ",".join(str(x) for x in seeds)
