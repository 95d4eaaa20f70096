"""AlloBench as an Inspect task: ``inspect eval econbench/allobench --model … -T framing=r2``.

One sample per stream seed: the episode is played by Inspect's model through econbench's
own model actor (the condition's texts, tools, token limits and turn rules, R3 in econbench's
sandbox), into a one-episode cell beside the Inspect log
(:mod:`econbench.inspect_tasks.rundirs`). A sample's score is its episode's score; the
eval's ``pooled_score`` and ``first_sight_rate`` pool the episodes as ``econbench report``
does (:mod:`econbench.inspect_tasks.metrics`), and ``econbench report`` on the eval's run
directory pools the same cells into the same numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from econbench import api
from econbench.allo.episodes.runner import CellSpec
from econbench.allo.game import EpisodeResult
from econbench.allo.game.metrics import episode_score
from econbench.allo.game.stream import EVAL_SEEDS
from econbench.inspect_tasks.bridge import InspectBridge
from econbench.inspect_tasks.metrics import (
    EPISODE_KEY,
    first_sight_rate,
    pool_episodes,
    pooled_score,
)
from econbench.inspect_tasks.options import TaskArgumentError, positive, seeds_of
from econbench.inspect_tasks.rundirs import place_sample
from econbench.inspect_tasks.sample import evaluated_bridge, play_sample, run_dir_of
from econbench.inspect_tasks.tool_events import ToolRecord, record_tool_calls

TASK = "allobench"
EPISODE_FIELDS = ("utility", "opt", "first_sight_commits", "decision_turns", "unresolved_turns")
"""The episode record's fields a score carries as metadata besides the whole result."""
EVERY_EVAL_SEED = len(EVAL_SEEDS)
"""``seeds``' default: all 24 evaluation seeds (2000–2023), as ``econbench allo run``."""


@task
def allobench(
    framing: str = "r1",
    condition: str | None = None,
    budget: int = 3,
    cost: float = 0.0,
    seeds: int | str | list[int] = EVERY_EVAL_SEED,
    instances: str = "paper",
    skin: str = "default",
    out: str | None = None,
) -> Task:
    """AlloBench: one episode (a stream of 60 tasks) per seed, played by the model.

    Args:
        framing: The rung: ``r0`` (urn), ``r1`` (claim/skip tools), ``r2`` (code), ``r3``
            (scripts in econbench's sandbox).
        condition: The paper's condition (``frontier`` by default, ``surface``, ``qwen``…,
            or ``econbench``: docs/allobench.md §9).
        budget: The build budget B.
        cost: The build charge K.
        seeds: Stream seeds: how many of the 24 evaluation seeds (an integer, default all),
            a list, or a text such as ``"2000-2005"``.
        instances: R1–R3's problems: ``paper`` or ``econbench``.
        skin: R0's skin (``default``, ``chest``, ``quiver``, ``cauldron``).
        out: Where the cell directories go (default beside the Inspect log).
    """
    chosen = seeds_of(seeds, "allo", count_from=EVAL_SEEDS)
    spec = _spec(framing, condition, positive("budget", budget), cost, instances, skin)
    settings = {
        "framing": spec.framing,
        "condition": spec.condition,
        "budget": spec.budget,
        "cost": spec.cost,
        "instances": spec.instances,
        "skin": spec.skin,
    }
    dataset = MemoryDataset(
        [
            Sample(
                id=seed,
                input=(
                    f"AlloBench {spec.framing} ({spec.condition}), stream seed {seed}, "
                    f"budget {spec.budget}, build charge {spec.cost:g}."
                ),
                metadata={"seed": seed, **settings},
            )
            for seed in chosen
        ],
        name=TASK,
    )
    return Task(
        dataset=dataset,
        solver=play_allo(spec, settings, out),
        scorer=episode(),
        epochs=Epochs(1, pool_episodes()),
    )


def _spec(
    framing: str, condition: str | None, budget: int, cost: Any, instances: str, skin: str
) -> CellSpec:
    """The cell every sample plays (its seed and actor set per sample), checked now."""
    if isinstance(cost, bool) or not isinstance(cost, int | float):
        raise TaskArgumentError(f"cost: expected a number, got {cost!r}")
    try:
        spec = CellSpec(
            str(framing),
            "eager",
            seeds=(EVAL_SEEDS[0],),
            cost=float(cost),
            budget=budget,
            skin=str(skin),
            condition=condition,
            instances=str(instances),
        )
        spec.validate()
    except ValueError as exc:
        raise TaskArgumentError(str(exc)) from None
    return spec


@solver
def play_allo(spec: CellSpec, settings: dict[str, Any], out: str | None) -> Solver:
    """Play the sample's episode (or continue its cell) with the model under evaluation."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seed = int(state.metadata["seed"])
        bridge = evaluated_bridge()
        identity = settings | {"model": str(bridge.model)}
        place = place_sample(TASK, identity, f"seed-{seed}", out)

        def play() -> None:
            if place.plan != "reuse":
                api.run_allo(
                    framing=spec.framing,
                    actor=bridge.name,
                    seeds=[seed],
                    cost=spec.cost,
                    budget=spec.budget,
                    condition=spec.condition,
                    instances=spec.instances,
                    out=place.run_dir,
                )

        await play_sample(state, place.run_dir, [bridge], play)
        await _record_last_calls(place.run_dir, bridge, spec)
        return state

    return solve


async def _record_last_calls(run_dir: Path, bridge: InspectBridge, spec: CellSpec) -> None:
    """Tool events for the episode's last calls, whose results no later request carried
    back: each call's result from the episode's record, as the framing renders it."""
    calls = [c for pending in bridge.unanswered().values() for c in pending]
    record = _episode_record(run_dir)
    if not calls or record is None:
        return
    results = {
        call.get("call_id"): call.get("result")
        for turn in record.get("turns", [])
        for reply in turn.get("replies", [])
        for call in reply.get("tool_calls", [])
    }
    render = spec.make_framing().render_result
    await record_tool_calls(
        ToolRecord(c.call_id or "", c.name, c.arguments, render(results[c.call_id]))
        for c in calls
        if isinstance(results.get(c.call_id), dict)
    )


def _episode_record(run_dir: Path) -> dict[str, Any] | None:
    """The cell's one episode record (``episodes.jsonl``), if it finished."""
    try:
        lines = (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    complete = [json.loads(line) for line in lines if line.strip()]
    return complete[-1] if complete else None


@scorer(metrics=[pooled_score(), first_sight_rate(), mean()])
def episode() -> Any:
    """The episode's score (utility / OPT); its result, utility, OPT and first-sight counts
    as metadata, which the pooled metrics read."""

    async def score(state: TaskState, target: Target) -> Score:
        run_dir = run_dir_of(state)
        record = _episode_record(run_dir)
        if record is None:
            return Score(
                value=math.nan,
                explanation=f"no episode finished in {run_dir}",
                metadata={"run_dir": str(run_dir), "status": _status(run_dir)},
            )
        result = EpisodeResult.from_dict(record["result"])
        metadata: dict[str, Any] = {k: record.get(k) for k in EPISODE_FIELDS}
        metadata |= {
            "commits": len(result.commits),
            EPISODE_KEY: result.to_dict(),
            "run_dir": str(run_dir),
            "status": _status(run_dir),
        }
        value = episode_score(result)
        return Score(
            value=value,
            explanation=(
                f"utility {result.utility:g} of OPT {result.opt:g}; "
                f"{result.first_sight_commits}/{len(result.commits)} commits at first sight"
            ),
            metadata=metadata,
        )

    return score


def _status(run_dir: Path) -> str | None:
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return summary.get("status") if isinstance(summary, dict) else None
