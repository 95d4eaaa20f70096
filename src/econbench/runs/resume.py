"""Resume a run of either benchmark from its checkpoint, and tell what state a run is in.

CoffeeBench runs resume from ``checkpoint.json`` (see ``econbench.coffee.run``); AlloBench
cells from their last complete episode (see ``econbench.allo.runner.run_cell``). Either way
the config must be the one the run started with — and the package version too, since code
changes change behaviour — unless ``force`` is given; the refusal lists what changed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from econbench import __version__
from econbench.coffee.config import RunConfig
from econbench.coffee.run import ResumeError, resume_to_dir
from econbench.runs.layout import (
    CHECKPOINT,
    CONFIG,
    DAILY,
    EPISODES,
    EVENTS,
    META,
    SUMMARY,
    benchmark_of,
    read_json,
)
from econbench.runs.lock import is_locked
from econbench.runs.store import holds_unplayed_run

__all__ = ["ResumeError", "resume_run", "run_status"]


def run_status(run_dir: Path) -> str:
    """``new`` (nothing usable), ``completed``, ``stopped`` (a model error), ``interrupted``
    (killed mid-run, even before its first checkpoint), or ``running`` (a live process holds
    its lock).

    A run whose files are damaged is ``interrupted`` too: resuming it says what is wrong
    (never silently starting it over, which would throw away what it played).
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return "new"
    if is_locked(run_dir):
        return "running"
    bench = benchmark_of(run_dir)
    if bench is None or not ((run_dir / CONFIG).exists() or (run_dir / CHECKPOINT).exists()):
        return "new"
    summary = read_json(run_dir / SUMMARY)
    if isinstance(summary, dict):
        return "stopped" if summary.get("status") == "stopped" else "completed"
    return "interrupted"


def resume_run(
    run_dir: Path,
    *,
    force: bool = False,
    cache: Path | None = None,
    coffee_config: RunConfig | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Continue an interrupted or stopped run; returns its final summary.

    ``coffee_config`` replaces a CoffeeBench run's saved config (refused unless ``force``
    when it differs). ``on_progress(done, total)`` follows days or episodes.
    """
    run_dir = Path(run_dir)
    status = run_status(run_dir)
    if status == "completed":
        raise ResumeError(f"{run_dir} is a completed run; there is nothing to resume")
    if status == "running":
        raise ResumeError(f"{run_dir} is being written by another live process")
    if status == "new":
        if any(run_dir.iterdir()) and holds_unplayed_run(run_dir, (EVENTS, DAILY, EPISODES)):
            bench = benchmark_of(run_dir) or "coffee|allo"
            raise ResumeError(
                f"{run_dir} holds no run that can be resumed: it was killed before it wrote "
                f"{CONFIG} (nothing was played); start it again with `econbench {bench} run "
                f"--out {run_dir}` and its options"
            )
        raise ResumeError(f"{run_dir} holds no run that can be resumed")
    _check_version(run_dir, force)
    if benchmark_of(run_dir) == "coffee":
        total = coffee_config.days if coffee_config is not None else _saved_days(run_dir)
        on_day = (lambda day: on_progress(day, total)) if on_progress is not None else None
        return resume_to_dir(run_dir, config=coffee_config, force=force, on_day=on_day, cache=cache)
    return _resume_cell(run_dir, force=force, cache=cache, on_progress=on_progress)


def _saved_days(run_dir: Path) -> int:
    """The horizon of the saved config, for the progress bar only (0 when unreadable: the
    resume itself then says what is wrong with the file)."""
    config = read_json(run_dir / CONFIG)
    days = config.get("days") if isinstance(config, dict) else None
    return days if isinstance(days, int) else 0


def _check_version(run_dir: Path, force: bool) -> None:
    meta = read_json(run_dir / META)
    started = meta.get("econbench_version") if isinstance(meta, dict) else None
    if started not in (None, __version__) and not force:
        raise ResumeError(
            f"{run_dir} was started with econbench {started}, this is {__version__}; "
            "behaviour may differ, so resuming needs --force"
        )


def _resume_cell(
    run_dir: Path,
    *,
    force: bool,
    cache: Path | None,
    on_progress: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    from econbench.agents.models.registry import ModelSettings
    from econbench.allo.runner import CellResumeError, run_cell, spec_from_config

    config = read_json(run_dir / CONFIG)
    if not isinstance(config, dict):
        raise ResumeError(f"{run_dir / CONFIG} is missing or not valid JSON; it cannot be resumed")
    try:
        spec = spec_from_config(config)
        spec.validate()
        models = {
            name: ModelSettings.model_validate(settings)
            for name, settings in (config.get("models") or {}).items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = (str(exc).splitlines() or [""])[0]
        raise ResumeError(
            f"{run_dir / CONFIG} is not an AlloBench cell config ({type(exc).__name__}: {detail})"
        ) from None
    meta = read_json(run_dir / META)
    meta = meta if isinstance(meta, dict) else {}
    done = 0

    def step(_: Any) -> None:
        nonlocal done
        done += 1
        if on_progress is not None:
            on_progress(done, len(spec.seeds))

    try:
        return run_cell(
            spec,
            run_dir,
            models=models,
            cache=cache,
            label=meta.get("label"),
            resume=True,
            force=force,
            on_episode=step,
        )
    except CellResumeError as exc:
        raise ResumeError(str(exc)) from None
