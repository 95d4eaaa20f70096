"""Resume a run of either benchmark from its checkpoint, and tell what state a run is in.

How a run resumes is its benchmark's (``Benchmark.resume``): CoffeeBench runs from
``checkpoint.json`` (see ``econbench.runs.coffee.run``), AlloBench cells from their last
complete episode (see ``econbench.runs.allo.cell.run_cell``). Either way the config must be
the one the run started with — and the package version too, since code changes change
behaviour — unless ``force`` is given; the refusal lists what changed.

A run played by a *custom* policy (a Python object handed to ``econbench.api`` or
``run_to_dir``/``run_cell``, recorded as ``custom:<qualified name>``) cannot be rebuilt from its
directory, so ``resume_run`` refuses it and says how to continue it from Python with the same
policy (:func:`custom_refusal`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from econbench import __version__
from econbench.runs.benchmark import BENCHMARKS, ProgressFn, ResumeError, get_benchmark
from econbench.runs.checkpoint import RunFileError, is_final, read_checkpoint
from econbench.runs.layout import (
    CHECKPOINT,
    CONFIG,
    META,
    RUN_LOGS,
    SUMMARY,
    benchmark_of,
    read_json,
)
from econbench.runs.lock import is_locked
from econbench.runs.store import holds_unplayed_run

__all__ = [
    "CUSTOM_PREFIX",
    "ResumeError",
    "check_version",
    "completed_by",
    "custom_name",
    "custom_players",
    "custom_refusal",
    "is_custom",
    "resume_run",
    "run_status",
]

CUSTOM_PREFIX = "custom:"
"""How a run's config names a player that was a Python object, not a name the run layer can
build: ``custom:<module>.<qualified name>`` (CoffeeBench ``agents.FIRM``, AlloBench ``policy``)."""


def is_custom(name: object) -> bool:
    """Whether a config's policy name records a custom (Python-supplied) player."""
    return isinstance(name, str) and name.startswith(CUSTOM_PREFIX)


def custom_name(player: Any) -> str:
    """The name a run records for a player object (a CoffeeBench policy, an AlloBench actor
    factory): ``custom:`` plus its ``custom_name`` attribute when it has one (``econbench.api``
    wraps a plain function and names it after the function), else its class's
    ``module.QualifiedName``. Never a model name (no slash)."""
    own = getattr(player, "custom_name", None)
    if isinstance(own, str) and own:
        name = own
    else:
        cls = type(player)
        name = f"{cls.__module__}.{cls.__qualname__}"
    name = name.removeprefix(CUSTOM_PREFIX).replace("/", ".")
    return CUSTOM_PREFIX + name


def custom_players(config: Mapping[str, Any]) -> dict[str, str]:
    """The custom players a run's ``config.json`` records: per CoffeeBench firm (``agents``),
    or ``{"policy": NAME}`` for an AlloBench cell; empty when every player can be rebuilt."""
    agents = config.get("agents")
    found = {k: v for k, v in agents.items() if is_custom(v)} if isinstance(agents, dict) else {}
    if is_custom(config.get("policy")):
        found["policy"] = config["policy"]
    return found


def custom_refusal(run_dir: Path, players: Mapping[str, str], benchmark: str) -> str:
    """Why a run played by custom policies cannot be resumed from its directory, and how to
    resume it from Python instead (one line)."""
    who = ", ".join(f"{k} = {v!r}" for k, v in players.items())
    how = get_benchmark(benchmark).resume_from_python(players)
    return (
        f"{run_dir} was played by a custom policy ({who}), which cannot be rebuilt from the run "
        f"directory; resume it from Python with the same policy: {how}"
    )


def run_status(run_dir: Path) -> str:
    """``new`` (nothing usable), ``completed``, ``stopped`` (a model error), ``interrupted``
    (killed mid-run, even before its first checkpoint), or ``running`` (a live process holds
    its lock).

    A run whose files are damaged is ``interrupted`` too: resuming it says what is wrong
    (never silently starting it over, which would throw away what it played). So is one
    whose summary says ``completed`` but whose checkpoint is not its last
    (:func:`completed_by`).
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
    if not isinstance(summary, dict):
        return "interrupted"
    if summary.get("status") == "stopped":
        return "stopped"
    try:
        checkpoint = read_checkpoint(run_dir, bench)
    except RunFileError:
        return "interrupted"  # resuming it says what is wrong
    return "completed" if completed_by(checkpoint, run_dir) else "interrupted"


def completed_by(checkpoint: dict[str, Any] | None, run_dir: Path) -> bool:
    """Whether a run whose ``summary.json`` says it completed did: its verified checkpoint
    (``checkpoint``, read from ``run_dir``) must be its final one. A summary alone is a file
    anyone can leave (copied from another run, restored from a backup); trusted alone, it
    would make an interrupted run look finished, and a sweep skip it. Without a checkpoint,
    a run that never played (``holds_unplayed_run``) did not complete either."""
    if checkpoint is None:
        return not holds_unplayed_run(run_dir, RUN_LOGS)
    return is_final(checkpoint)


def resume_run(
    run_dir: Path,
    *,
    force: bool = False,
    cache: Path | None = None,
    config: Any | None = None,
    on_progress: ProgressFn | None = None,
    cost_limit: float | None = None,
) -> dict[str, Any]:
    """Continue an interrupted or stopped run; returns its final summary.

    ``config`` replaces the run's saved config (``Benchmark.changed_config``; refused unless
    ``force`` when it differs). ``on_progress(done, total)`` follows days or episodes.
    ``cost_limit`` stops the run once it has cost that many dollars in all.
    """
    run_dir = Path(run_dir)
    check_resumable(run_dir, force)
    name = benchmark_of(run_dir)
    assert name is not None  # a run that is not "new" has a benchmark
    saved = read_json(run_dir / CONFIG)
    players = custom_players(saved) if isinstance(saved, dict) and config is None else {}
    if players:
        raise ResumeError(custom_refusal(run_dir, players, name))
    return get_benchmark(name).resume(
        run_dir,
        force=force,
        cache=cache,
        config=config,
        on_progress=on_progress,
        cost_limit=cost_limit,
    )


def check_resumable(run_dir: Path, force: bool) -> None:
    """Refuse (``ResumeError``) a run that is completed, written by a live process, never
    started, or of another econbench version (unless ``force``)."""
    status = run_status(run_dir)
    if status == "completed":
        raise ResumeError(f"{run_dir} is a completed run; there is nothing to resume")
    if status == "running":
        raise ResumeError(f"{run_dir} is being written by another live process")
    if status == "new":
        if any(run_dir.iterdir()) and holds_unplayed_run(run_dir, RUN_LOGS):
            bench = benchmark_of(run_dir) or "|".join(BENCHMARKS)
            raise ResumeError(
                f"{run_dir} holds no run that can be resumed: it was killed before it wrote "
                f"{CONFIG} (nothing was played); start it again with `econbench {bench} run "
                f"--out {run_dir}` and its options"
            )
        raise ResumeError(f"{run_dir} holds no run that can be resumed")
    check_version(run_dir, force)


def check_version(run_dir: Path, force: bool) -> None:
    """Refuse (``ResumeError``) to continue a run started by another econbench version,
    unless ``force``: code changes change behaviour."""
    meta = read_json(run_dir / META)
    started = meta.get("econbench_version") if isinstance(meta, dict) else None
    if started not in (None, __version__) and not force:
        raise ResumeError(
            f"{run_dir} was started with econbench {started}, this is {__version__}; "
            "behaviour may differ, so resuming needs --force"
        )
