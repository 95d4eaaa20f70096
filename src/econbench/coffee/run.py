"""Run CoffeeBench into a run directory: config, events, daily snapshots and summary."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from econbench.coffee.config import FIRMS, RunConfig
from econbench.coffee.events import JsonlSink
from econbench.coffee.metrics import run_summary
from econbench.coffee.policies import validate_policies
from econbench.coffee.sim import CoffeeRun
from econbench.runs.store import JsonlWriter, prepare_run_dir, run_metadata, write_json


def run_to_dir(
    config: RunConfig,
    out: Path,
    *,
    overwrite: bool = False,
    on_day: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Play a whole run, writing its files into ``out``; returns the summary."""
    validate_policies(config)
    prepare_run_dir(out, overwrite=overwrite)
    write_json(out / "config.json", config.model_dump(mode="json", by_alias=True))
    write_json(out / "meta.json", run_metadata("coffee", config.seed))
    sink = JsonlSink(out / "events.jsonl")
    daily_rows: list[dict[str, Any]] = []
    writer = JsonlWriter(out / "daily.jsonl")

    def record(row: dict[str, Any]) -> None:
        daily_rows.append(row)
        writer(row)

    try:
        run = CoffeeRun(config, sink=sink, daily_sink=record)
        world = run.run(on_day=on_day)
    finally:
        sink.close()
        writer.close()
    policies = {firm_id: config.policy_for(firm_id) for firm_id in FIRMS}
    summary = run_summary(world, policies, daily_rows)
    write_json(out / "summary.json", summary)
    return summary
