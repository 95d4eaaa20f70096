"""AlloBench experiment files: the matrix's schema (each combination is one cell), its
expansion into entries and the check of every cell as ``allo run`` checks one (see
``econbench.runs.experiment`` for the file format)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from econbench.agents.models.registry import ModelConfigError, ModelSettings, parse_model_name
from econbench.allo.episodes.runner import CellSpec
from econbench.allo.framings import takes_skin
from econbench.allo.game.stream import EVAL_SEEDS, StreamConfig
from econbench.runs.allo.factory import make_factory
from econbench.runs.experiment import (
    Entry,
    ExperimentBase,
    ExperimentError,
    Strict,
    add_model,
    axis,
    check_matrix_size,
    check_model_keys,
    raise_problems,
    seed_list,
    unique_labels,
)
from econbench.runs.limits import MAX_BUDGET, MAX_COST, MAX_SEED


class AlloMatrix(Strict):
    """The axes of an AlloBench matrix; each combination is one cell."""

    framings: list[str]
    policies: list[str]
    skins: list[str] = Field(["default"])
    budgets: list[int] = Field([3])
    costs: list[float] = Field([0.0])

    @field_validator("*")
    @classmethod
    def _axes(cls, value: list[Any]) -> list[Any]:
        return axis(value)  # type: ignore[return-value]

    @field_validator("budgets")
    @classmethod
    def _budgets(cls, value: list[int]) -> list[int]:
        if any(not 1 <= b <= MAX_BUDGET for b in value):
            raise ValueError(f"every budget must be at least 1 and at most {MAX_BUDGET}")
        return value

    @field_validator("costs")
    @classmethod
    def _costs(cls, value: list[float]) -> list[float]:
        if any(not math.isfinite(k) or not 0 <= k <= MAX_COST for k in value):
            raise ValueError(f"every cost must be a number from 0 to {MAX_COST:g}")
        return value


class AlloExperiment(ExperimentBase):
    benchmark: Literal["allo"]
    episodes: int | None = Field(None, ge=1, le=1_000_000)
    seed: int = Field(2000, ge=0, le=MAX_SEED - 1_000_000)
    """The first episode seed when ``episodes`` is given."""
    seeds: tuple[int, ...] | None = None
    streams: Literal["paper", "numpy"] = "paper"
    """The stream generator: the paper's (seeds 2000–2023 are its episodes) or numpy."""
    stream_budget: Literal["fixed", "cell"] = "fixed"
    """``fixed``: every (B, K) cell plays the B = 3 stream of each seed (the paper's protocol);
    ``cell``: each cell's streams are drawn with its own B."""
    protocol: Literal["paper", "econbench"] = "paper"
    """The framings' texts and turn rules: the paper's, or econbench's earlier ones."""
    condition: str | None = None
    """The paper's condition (``econbench.allo.paper.conditions``): ``frontier`` (default),
    ``full-stream``, ``surface``, ``reskin``, ``no-n``, ``tool-probe``, ``qwen`` or
    ``econbench``."""

    instances: Literal["paper", "econbench"] = "paper"
    """R1–R3's problem instances: the paper's draws, or econbench's own generator."""

    @field_validator("condition")
    @classmethod
    def _condition(cls, value: str | None) -> str | None:
        from econbench.allo.paper.conditions import get_condition

        return get_condition(value).name if value is not None else None

    matrix: AlloMatrix

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> tuple[int, ...] | None:
        return seed_list(value, "allo")

    def episode_seeds(self) -> tuple[int, ...]:
        if self.seeds is not None:
            return self.seeds
        if self.episodes is not None:
            return tuple(range(self.seed, self.seed + self.episodes))
        return tuple(EVAL_SEEDS)


def skins_by_rung(matrix: AlloMatrix) -> dict[str, list[str]]:
    """Each distinct rung of the matrix (in any case, first mention first) and the skins it
    plays: the listed ones for the urn (R0 and its keep/pass probe), the default skin for
    every other rung."""
    skins = list(dict.fromkeys(matrix.skins))
    return {rung: skins if takes_skin(rung) else ["default"] for rung in
            dict.fromkeys(framing.lower() for framing in matrix.framings)}  # fmt: skip


def cell_count(matrix: AlloMatrix) -> int:
    """How many distinct cells ``matrix`` expands to, from its axes alone (no cell built)."""
    rung_skins = sum(len(skins) for skins in skins_by_rung(matrix).values())
    costs = {float(cost) for cost in matrix.costs}
    return rung_skins * len(matrix.policies) * len(matrix.budgets) * len(costs)


def allo_entries(exp: AlloExperiment, source: Path) -> list[Entry]:
    if exp.seeds is not None and exp.episodes is not None:
        raise ExperimentError(f"{source}: give either 'episodes' or 'seeds', not both")
    m = exp.matrix
    check_matrix_size([cell_count(m)], source, "cells")
    seeds = exp.episode_seeds()
    costs = list(dict.fromkeys(float(cost) for cost in m.costs))
    cells = [
        CellSpec(
            framing=rung,
            policy=policy,
            seeds=seeds,
            cost=cost,
            budget=budget,
            skin=skin,
            config=StreamConfig(generator=exp.streams),
            stream_budget=exp.stream_budget,
            protocol=exp.protocol,
            condition=exp.condition,
            instances=exp.instances,
        )
        for rung, skins in skins_by_rung(m).items()
        for policy in m.policies
        for skin in skins
        for budget in m.budgets
        for cost in costs
    ]
    params = [
        {"framing": c.framing, "policy": c.policy, "skin": c.skin, "budget": c.budget,
         "cost": c.cost}
        for c in cells
    ]  # fmt: skip
    labels = unique_labels([c.slug() for c in cells], params)
    entries = []
    for cell, values, label in zip(cells, params, labels, strict=True):
        models = {
            name: settings.model_dump(mode="json")
            for name, settings in exp.models.items()
            if name == cell.policy
        }
        cell_dict = {
            **values,
            "seeds": list(cell.seeds),
            "streams": cell.config.generator,
            "stream_budget": cell.stream_budget,
            "protocol": cell.protocol,
            "condition": cell.condition,
            "instances": cell.instances,
        }
        entries.append(
            Entry(
                id=label,
                label=label,
                benchmark="allo",
                params=values,
                config={"cell": cell_dict, "models": models},
            )
        )
    return entries


def cell_of(entry: Entry) -> tuple[CellSpec, dict[str, ModelSettings]]:
    """An AlloBench entry's ``CellSpec`` and model settings."""
    return cell_of_config(entry.config)


def cell_of_config(config: dict[str, Any]) -> tuple[CellSpec, dict[str, ModelSettings]]:
    """The ``CellSpec`` and model settings of an entry's ``config`` (an entry written before
    the stream choices had names played numpy streams drawn with the cell's budget)."""
    cell = dict(config["cell"])
    spec = CellSpec(
        framing=cell["framing"],
        policy=cell["policy"],
        seeds=tuple(cell["seeds"]),
        cost=float(cell["cost"]),
        budget=int(cell["budget"]),
        skin=cell["skin"],
        config=StreamConfig(generator=cell.get("streams", "numpy")),
        stream_budget=cell.get("stream_budget", "cell"),
        protocol=cell.get("protocol", "econbench"),
        condition=cell.get("condition"),
        instances=cell.get("instances") or ("paper" if "condition" in cell else "econbench"),
    )
    models = {k: ModelSettings.model_validate(v) for k, v in config["models"].items()}
    return spec, models


def check_allo(entries: list[Entry], source: Path) -> None:
    """Every cell's framing, skin, policy, model name and API key, as ``allo run`` checks."""
    problems: dict[str, list[str]] = {}
    keyed: list[dict[str, ModelSettings]] = []
    for entry in entries:
        spec, models = cell_of(entry)
        try:
            spec.validate()
            if "/" in spec.policy:
                parse_model_name(spec.policy)
                add_model(keyed, spec.policy, models.get(spec.policy) or ModelSettings())
            else:
                make_factory(spec, models)
        except (ModelConfigError, ValueError, KeyError) as exc:
            message = exc.args[0] if exc.args else str(exc)
            problems.setdefault(str(message), []).append(entry.id)
    raise_problems(problems, source)
    check_model_keys(keyed, source)
