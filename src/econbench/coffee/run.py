"""Run CoffeeBench into a run directory: config, events, daily snapshots and summary.

A model failure that retries cannot fix (a bad key, an unknown model, retries exhausted)
stops the run cleanly: everything written so far stays in the run directory, the summary
records where and why it stopped, and the caller gets a ``RunStopped`` with that message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from econbench.agents.models.base import ModelError, ProviderWrap
from econbench.agents.models.pricing import PRICE_TABLE_VERSION
from econbench.coffee.agents import validate_agents
from econbench.coffee.config import FIRMS, RunConfig
from econbench.coffee.events import JsonlSink
from econbench.coffee.metrics import run_summary
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.world import hhmm
from econbench.runs.store import JsonlWriter, prepare_run_dir, run_metadata, write_json


class RunStopped(RuntimeError):
    """The run stopped early on a model error; its directory keeps what was written."""


def run_to_dir(
    config: RunConfig,
    out: Path,
    *,
    overwrite: bool = False,
    on_day: Callable[[int], None] | None = None,
    policies: dict[str, Any] | None = None,
    provider_wrap: ProviderWrap | None = None,
) -> dict[str, Any]:
    """Play a whole run, writing its files into ``out``; returns the summary."""
    validate_agents(config)
    prepare_run_dir(out, overwrite=overwrite)
    write_json(out / "config.json", config.model_dump(mode="json", by_alias=True))
    write_json(
        out / "meta.json",
        run_metadata("coffee", config.seed) | {"price_table_version": PRICE_TABLE_VERSION},
    )
    sink = JsonlSink(out / "events.jsonl")
    daily_rows: list[dict[str, Any]] = []
    writer = JsonlWriter(out / "daily.jsonl")

    def record(row: dict[str, Any]) -> None:
        daily_rows.append(row)
        writer(row)

    run = CoffeeRun(
        config,
        sink=sink,
        daily_sink=record,
        policies=dict(policies or {}),
        provider_wrap=provider_wrap,
    )
    error: ModelError | None = None
    try:
        world = run.run(on_day=on_day)
    except ModelError as exc:
        error = exc
        world = run.world
        world.emit("run_stopped", error_type=type(exc).__name__, error=str(exc))
    finally:
        sink.close()
        writer.close()
    names = {firm_id: config.policy_for(firm_id) for firm_id in FIRMS}
    names.update({f: getattr(p, "name", names[f]) for f, p in (policies or {}).items()})
    summary = run_summary(world, names, daily_rows, run.agent_stats())
    summary["status"] = "completed" if error is None else "stopped"
    if error is not None:
        where = f"day {world.day} {hhmm(world.now)}"
        summary["stopped"] = {"at": where, "error_type": type(error).__name__, "error": str(error)}
    write_json(out / "summary.json", summary)
    if error is not None:
        raise RunStopped(
            f"the run stopped on {where}: {error}\nEverything up to that point is in {out} "
            "(events.jsonl, daily.jsonl, summary.json). Fix the cause (key, model name, "
            "provider outage) and start the run again; resuming a stopped run in place "
            "arrives with the run layer (`econbench resume`)."
        ) from error
    return summary
