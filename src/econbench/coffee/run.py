"""Run CoffeeBench into a run directory, checkpointing as it goes, and resume it.

A run writes ``config.json``, ``meta.json``, the append-only ``events.jsonl`` and
``daily.jsonl``, ``record.sqlite`` when a model plays (every request and response), and at
the end ``summary.json``. While it runs it keeps ``checkpoint.json`` — the whole state at
the last tick boundary — and ``progress.json``.

A tick is one group's decisions (spec §3). The checkpoint is rewritten after every tick in
which a model was asked and at every day's end; ticks of scripted firms alone cost
microseconds to redo, so they ride on the next checkpoint. A process killed at any moment
therefore loses at most the model tick in flight (or the scripted part of a day), and
:func:`resume_to_dir` continues from the checkpoint: it cuts the logs back to their length
at the checkpoint, restores the world and every agent, and plays on. With the same scripted
or recorded replies the resumed run's files are byte-identical to an uninterrupted run's.

A model failure that retries cannot fix (a bad key, an unknown model, retries exhausted)
stops the run cleanly: everything written so far stays, the summary records where and why
it stopped, and the caller gets a ``RunStopped``; ``econbench resume`` continues it later.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from econbench.agents.models.base import ModelError, ProviderWrap
from econbench.agents.models.pricing import PRICE_TABLE_VERSION
from econbench.coffee.agents import is_model, validate_agents
from econbench.coffee.config import FIRMS, RunConfig
from econbench.coffee.events import JsonlSink
from econbench.coffee.metrics import run_summary
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.world import hhmm
from econbench.runs.checkpoint import (
    cut_log,
    read_checkpoint,
    write_checkpoint,
    write_progress,
)
from econbench.runs.diff import config_diff
from econbench.runs.layout import CONFIG, DAILY, EVENTS, META, RECORD, SUMMARY, read_jsonl
from econbench.runs.lock import RunLock
from econbench.runs.store import (
    JsonlWriter,
    RunDirError,
    prepare_run_dir,
    run_metadata,
    write_json,
)


class RunStopped(RuntimeError):
    """The run stopped early on a model error; its directory keeps what was written."""


class ResumeError(RuntimeError):
    """The run cannot be resumed as asked (the message says why and what to do)."""


def run_to_dir(
    config: RunConfig,
    out: Path,
    *,
    overwrite: bool = False,
    on_day: Callable[[int], None] | None = None,
    policies: dict[str, Any] | None = None,
    provider_wrap: ProviderWrap | None = None,
    label: str | None = None,
    cache: Path | None = None,
) -> dict[str, Any]:
    """Play a whole run, writing its files into ``out``; returns the summary.

    ``provider_wrap`` replaces the default wrap of model providers (record every call into
    ``record.sqlite``, plus the response cache at ``cache`` when given).
    """
    validate_agents(config)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RunDirError(f"{out} is a file, not a run directory")
    with RunLock(out):
        prepare_run_dir(out, overwrite=overwrite)
        write_json(out / CONFIG, config.model_dump(mode="json", by_alias=True))
        write_json(
            out / META,
            run_metadata("coffee", config.seed, label)
            | {"price_table_version": PRICE_TABLE_VERSION},
        )
        return _play(config, out, None, on_day, policies, provider_wrap, cache)


def resume_to_dir(
    out: Path,
    *,
    config: RunConfig | None = None,
    force: bool = False,
    on_day: Callable[[int], None] | None = None,
    provider_wrap: ProviderWrap | None = None,
    cache: Path | None = None,
    check_keys: bool = True,
) -> dict[str, Any]:
    """Continue the run in ``out`` from its checkpoint; returns the final summary.

    ``config`` (default: the run's own ``config.json``) may differ from the saved one only
    with ``force``; the refusal lists every changed field.
    """
    out = Path(out)
    with RunLock(out):
        saved = json.loads((out / CONFIG).read_text(encoding="utf-8"))
        summary = _read_summary(out)
        if summary is not None and summary.get("status") == "completed":
            raise ResumeError(f"{out} is a completed run; there is nothing to resume")
        checkpoint = read_checkpoint(out)
        if checkpoint is None:
            raise ResumeError(
                f"{out} has no checkpoint (it was killed while being created); start it again "
                f"with `econbench coffee run --config {out / CONFIG} --overwrite --out {out}`"
            )
        if config is None:
            config = RunConfig.model_validate(saved)
        changes = config_diff(saved, config.model_dump(mode="json", by_alias=True))
        if changes and not force:
            raise ResumeError(
                "the config differs from the one the run started with:\n  "
                + "\n  ".join(changes)
                + "\nResume with the run's own config, or pass --force to continue anyway."
            )
        if check_keys:
            validate_agents(config)
        if changes:
            write_json(out / CONFIG, config.model_dump(mode="json", by_alias=True))
        (out / SUMMARY).unlink(missing_ok=True)
        return _play(config, out, checkpoint, on_day, None, provider_wrap, cache)


def _read_summary(out: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _default_wrap(config: RunConfig, out: Path, cache: Path | None) -> ProviderWrap | None:
    """Record every model call of the run (and use the response cache when asked)."""
    if not any(is_model(config.policy_for(f)) for f in FIRMS):
        return None
    from econbench.agents.models.wraps import make_provider_wrap

    return make_provider_wrap(record=out / RECORD, cache=cache)


def _play(
    config: RunConfig,
    out: Path,
    checkpoint: dict[str, Any] | None,
    on_day: Callable[[int], None] | None,
    policies: dict[str, Any] | None,
    provider_wrap: ProviderWrap | None,
    cache: Path | None,
) -> dict[str, Any]:
    """Play from the start or from ``checkpoint``, checkpointing along the way."""
    events_path, daily_path = out / EVENTS, out / DAILY
    if checkpoint is None:
        events_path.write_bytes(b"")
        daily_path.write_bytes(b"")
    else:
        cut_log(events_path, checkpoint["logs"][EVENTS])
        cut_log(daily_path, checkpoint["logs"][DAILY])
    daily_rows: list[dict[str, Any]] = read_jsonl(daily_path)
    sink = JsonlSink(events_path)
    writer = JsonlWriter(daily_path)
    wrap = provider_wrap if provider_wrap is not None else _default_wrap(config, out, cache)
    paid = any(is_model(config.policy_for(f)) for f in FIRMS)

    def record(row: dict[str, Any]) -> None:
        daily_rows.append(row)
        writer(row)

    def save(run: CoffeeRun) -> None:
        sink.flush()
        writer.flush()
        write_checkpoint(
            out,
            {
                "benchmark": "coffee",
                "day": run.world.day,
                "phase": run.world.state.phase,
                "logs": {EVENTS: events_path.stat().st_size, DAILY: daily_path.stat().st_size},
            },
            run.state_json(),
            durable=paid,
        )
        _progress(out, config, run, "running")

    run = CoffeeRun(
        config,
        sink=sink,
        daily_sink=record,
        policies=dict(policies or {}),
        provider_wrap=wrap,
        on_checkpoint=save,
    )
    if checkpoint is not None:
        run.load_state(checkpoint["state"])
    else:
        save(run)  # before the first tick, so even an early crash is resumable
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
        close = getattr(wrap, "close", None)
        if callable(close):
            close()
    names = {firm_id: config.policy_for(firm_id) for firm_id in FIRMS}
    names.update({f: getattr(p, "name", names[f]) for f, p in (policies or {}).items()})
    summary = run_summary(world, names, daily_rows, run.agent_stats())
    summary["status"] = "completed" if error is None else "stopped"
    if error is not None:
        where = f"day {world.day} {hhmm(world.now)}"
        summary["stopped"] = {"at": where, "error_type": type(error).__name__, "error": str(error)}
    write_json(out / SUMMARY, summary)
    _progress(out, config, run, summary["status"])
    if error is not None:
        raise RunStopped(
            f"the run stopped on {where}: {error}\nEverything up to that point is in {out} "
            "(events.jsonl, daily.jsonl, summary.json). Fix the cause (key, model name, "
            f"provider outage), then continue it with `econbench resume {out}`."
        ) from error
    return summary


def _progress(out: Path, config: RunConfig, run: CoffeeRun, status: str) -> None:
    stats = run.agent_stats().values()
    write_progress(
        out,
        benchmark="coffee",
        status=status,
        done=min(run.world.day, config.days),
        total=config.days,
        unit="day",
        cost_usd=sum(float(s.get("cost_usd_priced_part") or 0.0) for s in stats),
    )
