"""``econbench allo …`` commands: ``run`` one configuration, ``sweep`` a grid of them.

Both go through :func:`econbench.runs.allo.cell.run_cell`, so a sweep cell and a ``run`` with the
same settings write identical files. Every setting is checked before anything runs or is
written; a bad one is a one-line ``error: …`` on stderr and exit code 2.

Streams: ``--streams paper`` (default: the paper's generator, so seeds 2000–2023 are its 24
episodes) or ``numpy`` (econbench's earlier generator); ``--stream-budget fixed`` (default: the
paper's protocol, every (B, K) cell plays the B = 3 stream of each seed) or ``cell`` (each
cell's streams drawn with its own B, so the trap-early window follows B).

Texts and turn rules: ``--protocol paper`` (default: the paper's prompts, hidden problem types,
one tool call per turn and its re-asks) or ``econbench`` (econbench's earlier texts and rules;
the cell's directory gets an ``-econbench`` suffix).
"""

from __future__ import annotations

import csv
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from econbench.agents.models import providers
from econbench.agents.models.cache import cache_path_from_option
from econbench.agents.models.registry import MissingKeyError, ModelSettings
from econbench.allo.episodes.actors import ActorFactory
from econbench.allo.episodes.runner import PAPER_TASKS, CellSpec, Episode
from econbench.allo.framings import FRAMINGS, PROTOCOLS, SKIN_NAMES, takes_skin
from econbench.allo.framings.base import Framing
from econbench.allo.game.stream import (
    GENERATORS,
    STREAM_BUDGETS,
    StreamConfig,
    seeds_from_options,
)
from econbench.allo.paper.conditions import CONDITIONS, DEFAULT_CONDITION
from econbench.allo.solvers.policies import EXACT_TASKS_LIMIT
from econbench.runs.allo.cell import (
    CellResumeError,
    CellStopped,
    check_continuable,
    continues_cell,
    run_cell,
)
from econbench.runs.allo.factory import make_factory
from econbench.runs.allo.run_cost import cell_estimate as _cell_estimate
from econbench.runs.allo.run_cost import cell_usage_table, dry_run_cell
from econbench.runs.allo.run_cost import cost_guard as _cost_guard
from econbench.runs.allo.run_cost import stopped_at_limit as _stopped_at_limit
from econbench.runs.cost_preflight import (
    CostLimitError,
    announce,
    check_affordable,
    check_cost_limit,
)
from econbench.runs.experiment import ExperimentError, Plan, format_errors
from econbench.runs.limits import (
    CONFIRM_ABOVE,
    MAX_BUDGET,
    MAX_COST,
    MAX_ENTRIES,
    MAX_SEED,
    MAX_TASKS,
    int_option,
    range_error,
)
from econbench.runs.lock import RunLockedError
from econbench.runs.store import RunDirError, check_out_dir
from econbench.runs.user_files import UserFileError, read_user_toml
from econbench.suggest import did_you_mean

if TYPE_CHECKING:
    from econbench.runs.allo.experiment import AlloExperiment

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None)

DEFAULT_OUT = Path("runs/allo")
SURFACE_COLUMNS = [
    "framing",
    "policy",
    "skin",
    "protocol",
    "condition",
    "instances",
    "generator",
    "stream_budget",
    "budget",
    "build_cost",
    "episodes",
    "score",
    "score_mean",
    "score_ci_lo",
    "score_ci_hi",
    "first_sight_rate",
    "utility_mean",
    "opt_mean",
    "trap_commits_mean",
    "unused_budget_mean",
    "hot_never_tooled_mean",
    "lateness1_mean",
    "lateness0_mean",
    "commits_mean",
    "unresolved_turns",
    "realised_utility_mean",
    "sandbox_backend",
    "dir",
]


ModelsFileOption = Annotated[
    Path | None,
    typer.Option(help='TOML with per-model settings: [models."provider/model"] tables.'),
]
CacheOption = Annotated[
    str | None,
    typer.Option(help="Response cache file ('default': ~/.cache/econbench/responses.sqlite)."),
]
OverwriteOption = Annotated[
    bool,
    typer.Option(
        help="Start over a cell already in the output directory (by default its finished "
        "episodes are kept and only the missing ones are played)."
    ),
]


StreamsOption = Annotated[
    str,
    typer.Option(
        help="Stream generator: paper (the paper's random.Random streams) or numpy "
        "(econbench's earlier generator)."
    ),
]
InstancesOption = Annotated[
    str,
    typer.Option(
        help="R1-R3 problem instances: paper (the paper's draws, its seed 2000 problems) or "
        "econbench (econbench's own generator)."
    ),
]
ProtocolOption = Annotated[
    str,
    typer.Option(
        help="Texts and turn rules: paper (the paper's prompts and rules) or econbench "
        "(econbench's earlier ones)."
    ),
]
ConditionOption = Annotated[
    str | None,
    typer.Option(
        help="The paper's protocol to play, exactly as its scripts sent it: "
        f"{', '.join(CONDITIONS)} (default {DEFAULT_CONDITION}, its framing ladder; econbench "
        "= --protocol econbench). See docs/allobench.md §9.",
    ),
]
SandboxAllowWeakOption = Annotated[
    bool,
    typer.Option(
        "--sandbox-allow-weak",
        help="Run R3 even where its sandbox lacks layers of the full one (the preflight line "
        "names them); sets ECONBENCH_SANDBOX_ALLOW_WEAK=1 for this process.",
    ),
]


def _sandbox_preflight(specs: list[CellSpec], allow_weak: bool) -> None:
    """For R3 cells: check the sandbox before anything is written and say which one runs."""
    if not any(spec.framing == "r3" for spec in specs):
        return
    from econbench.allo.sandbox.core import ALLOW_WEAK_ENV, Sandbox, SandboxUnavailable

    if allow_weak:
        os.environ[ALLOW_WEAK_ENV] = "1"  # every R3 sandbox this process builds
    try:
        line = Sandbox().describe_line()
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None
    Console(stderr=True).print(line, markup=False, highlight=False)


StreamBudgetOption = Annotated[
    str,
    typer.Option(
        help="Budget that draws the streams: fixed (B = 3 for every cell, the paper's "
        "protocol) or cell (each cell's own B)."
    ),
]


class UsageError(Exception):
    """A bad command-line setting (reported in one line, exit code 2)."""


WHOLE_NUMBER = int_option()
"""An integer option takes decimal digits only; its range is checked with the settings,
against the limits experiment files share (``econbench.runs.limits``)."""


def _stream_options(streams: str, stream_budget: str) -> tuple[StreamConfig, Any]:
    """The ``CellSpec.config`` and ``stream_budget`` of ``--streams`` / ``--stream-budget``."""
    gen, budget_mode = streams.strip().lower(), stream_budget.strip().lower()
    if gen not in GENERATORS:
        raise UsageError(f"unknown --streams {streams!r}; choose one of {', '.join(GENERATORS)}")
    if budget_mode not in STREAM_BUDGETS:
        raise UsageError(
            f"unknown --stream-budget {stream_budget!r}; choose one of {', '.join(STREAM_BUDGETS)}"
        )
    return StreamConfig(generator=gen), budget_mode  # type: ignore[arg-type]


def _with_tasks(config: StreamConfig, tasks: int) -> StreamConfig:
    """``config`` with ``--tasks`` tasks per episode (validated as the generator would)."""
    if tasks == config.n_tasks:
        return config
    problem = range_error(tasks, 1, MAX_TASKS)
    if problem:
        raise UsageError(f"--tasks {problem}")
    return StreamConfig.model_validate({**config.model_dump(), "n_tasks": tasks})


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _seeds(episodes: int | None, seeds: str | None, seed: int) -> tuple[int, ...]:
    try:
        chosen = seeds_from_options(episodes, seeds, seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if chosen and max(chosen) > MAX_SEED:
        raise UsageError(f"seeds must be at most {MAX_SEED} (64-bit), got {max(chosen)}")
    return chosen


def _split(text: str, what: str) -> list[str]:
    items = [x.strip() for x in text.split(",")]
    if not text.strip() or any(not x for x in items):
        raise UsageError(f"bad {what} list {text!r}: use comma-separated values")
    return items


def _number(text: str, what: str, kind: Callable[[str], Any]) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"bad {what} {text!r}: not a number") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise UsageError(f"bad {what} {text!r}: not a finite number")
    return value


def _models(path: Path | None) -> dict[str, ModelSettings]:
    """Per-model settings from a TOML file's ``[models."provider/model"]`` tables."""
    if path is None:
        return {}
    try:
        raw = read_user_toml(path, "config file")
    except UserFileError as exc:
        raise UsageError(str(exc)) from None
    unknown = set(raw) - {"models"}
    if unknown:
        raise UsageError(f"unknown table(s) {sorted(unknown)} in {path}; expected [models]")
    out = {}
    models = raw.get("models", {})
    if not isinstance(models, dict) or not all(isinstance(t, dict) for t in models.values()):
        raise UsageError(f'{path}: [models] must hold tables like [models."provider/model"]')
    for name, table in models.items():
        try:
            out[name] = ModelSettings.model_validate(table)
        except ValidationError as exc:
            problems = "; ".join(
                f"models.{name}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
            )
            raise UsageError(f"invalid model settings: {problems}") from None
    return out


def _out_dir(path: Path) -> Path:
    """An output directory that can be written: refuse an existing file, a read-only or
    full file system up front."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {path} exists and is not a directory")
    try:
        check_out_dir(path)
    except RunDirError as exc:
        raise UsageError(f"--out: {exc}") from None
    return path


def _continues(out: Path, overwrite: bool) -> bool:
    """Whether the cell in ``out`` is continued (see ``continues_cell``), as a usage error."""
    try:
        return continues_cell(out, overwrite)
    except CellResumeError as exc:
        raise UsageError(str(exc)) from None


_DERIVED = ("system_prompt", "tools", "framing_settings", "stream_config")
"""Config keys that follow from the settings: a diff shows them only if nothing else changed."""


def _refusal(out: Path, exc: CellResumeError) -> str:
    """Why a cell in ``out`` cannot be continued, with the way to start it over."""
    if exc.changes is not None:
        changes = [c for c in exc.changes if not c.startswith(_DERIVED)] or exc.changes
        shown = "; ".join(changes[:8]) + ("; …" if len(changes) > 8 else "")
        return (
            f"{out} holds a cell with other settings ({shown}); choose another --out, or "
            "pass --overwrite to start it over"
        )
    return f"{exc} (or pass --overwrite to start it over)"


def _cache(value: str | None) -> Path | None:
    try:
        return cache_path_from_option(value)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _condition(condition: str | None, protocol: str) -> str:
    """The condition a cell plays (``--condition``, or the one ``--protocol`` implies)."""
    from econbench.allo.paper.conditions import condition_for

    if protocol.strip().lower() not in PROTOCOLS:
        raise UsageError(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    try:
        return condition_for(condition, protocol.strip().lower())
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check(
    spec: CellSpec, models: dict[str, ModelSettings] | None = None, *, check_keys: bool = True
) -> ActorFactory | None:
    """Validate one cell completely (framing, skin, policy, numbers); return its actor factory.
    Without ``check_keys`` (a dry run) a model's missing API key is no error: ``None``."""
    if spec.framing not in FRAMINGS:
        raise UsageError(
            f"unknown framing {spec.framing!r}{did_you_mean(spec.framing, FRAMINGS)}; "
            f"choose one of {', '.join(FRAMINGS)}"
        )
    if spec.skin not in SKIN_NAMES:
        raise UsageError(f"unknown skin {spec.skin!r}; choose one of {', '.join(SKIN_NAMES)}")
    if spec.skin != "default" and not takes_skin(spec.framing):
        raise UsageError(f"--skin applies to the urn (r0, r0-tool) only, not to {spec.framing}")
    if spec.cost < 0 or not math.isfinite(spec.cost) or spec.cost > MAX_COST:
        raise UsageError(f"--cost must be a number from 0 to {MAX_COST:g}, got {spec.cost:g}")
    problem = range_error(spec.budget, 1, MAX_BUDGET)
    if problem:
        raise UsageError(f"--budget {problem}")
    try:
        spec.validate()
        return make_factory(spec, models)
    except (ValueError, KeyError) as exc:
        if not check_keys and isinstance(exc, MissingKeyError):
            return None
        message = exc.args[0] if exc.args else str(exc)
        raise UsageError(str(message)) from None


def _progress(console: Console, quiet: bool = False) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
    )


def _presolve(spec: CellSpec, factory: ActorFactory, console: Console, quiet: bool = False) -> None:
    """Solve a ``bayes`` policy's table before the first episode, behind a bar of the solve's
    turns: otherwise the first decision solves it silently (seconds at the defaults, minutes
    for ``bayes:exact``). The episodes then find it in the solver cache."""
    from econbench.allo.solvers.bayes import get_solver
    from econbench.allo.solvers.policies import BayesPolicy

    policy = getattr(factory, "policy", None)
    if not isinstance(policy, BayesPolicy):
        return
    progress = Progress(
        TextColumn(f"solving {escape(policy.name)}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("levels"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=quiet,
    )
    with progress:
        task = progress.add_task("solve", total=2 * spec.stream_config.n_tasks)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        get_solver(spec.stream_config, spec.cost, spec.budget, policy.cap, on_progress=advance)


def _framing_for(spec: CellSpec, cache: dict[str, Framing]) -> Framing:
    """One framing object per (rung, skin, condition), so R3 cells share one sandbox."""
    key = spec.framing_key()
    if key not in cache:
        cache[key] = spec.make_framing()
    return cache[key]


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return str(value)


_RUN_ROWS = [
    ("episodes", "episodes"),
    ("score", "score (pooled utility / OPT)"),
    ("score_mean", "score, episode mean"),
    ("score_ci", "95% bootstrap CI"),
    ("first_sight_rate", "first-sight commit rate"),
    ("utility_mean", "utility, mean"),
    ("opt_mean", "OPT, mean"),
    ("trap_commits_mean", "trap commits, mean"),
    ("unused_budget_mean", "unused budget, mean"),
    ("lateness1_mean", "sighting at commit (1 = first), mean"),
    ("lateness0_mean", "lateness, the paper's (0 = first), mean"),
    ("unresolved_turns", "unresolved turns"),
    ("realised_utility_mean", "R3 realised utility, mean"),
    ("sandbox_backend", "R3 sandbox backend"),
]
_SWEEP_COLUMNS = [
    ("framing", "rung"),
    ("policy", "policy"),
    ("budget", "B"),
    ("build_cost", "K"),
    ("score", "score"),
    ("first_sight_rate", "1st-sight"),
    ("utility_mean", "utility"),
    ("opt_mean", "OPT"),
    ("unresolved_turns", "unres."),
]


def _run_table(summary: dict[str, Any], title: str) -> Table:
    """A single cell's summary, one metric per row."""
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, label in _RUN_ROWS:
        if key in summary:
            table.add_row(label, _fmt(summary[key]))
    return table


def _sweep_table(rows: list[dict[str, Any]], title: str) -> Table:
    """One row per sweep cell; fits 80 columns: numbers are never cut, a long policy (a
    model's name) folds onto more lines."""
    table = Table(title=title)
    for key, header in _SWEEP_COLUMNS:
        if key == "policy":
            table.add_column(header, overflow="fold", min_width=8)
        else:
            table.add_column(header, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*(escape(_sweep_cell(key, row.get(key))) for key, _ in _SWEEP_COLUMNS))
    return table


def _sweep_cell(key: str, value: Any) -> str:
    """A sweep table's cell, as short as it can be read: K as written (``10``), utility and
    OPT to one decimal, rates to three."""
    if isinstance(value, float) and key in ("build_cost", "utility_mean", "opt_mean"):
        return f"{value:g}" if key == "build_cost" else f"{value:,.1f}"
    return _fmt(value)


Cell = tuple[CellSpec, ActorFactory, Path]


def _run_cells(
    cells: list[Cell],
    console: Console,
    cache: Path | None = None,
    overwrite: bool = False,
    quiet: bool = False,
    cost_limit: float | None = None,
) -> list[dict[str, Any]]:
    """Play each cell into its directory; a cell already there is continued (its finished
    episodes kept) unless ``overwrite``. With ``cost_limit`` a model's cell stops once its
    calls (its finished episodes' included) have cost that much."""
    framings: dict[str, Framing] = {}
    summaries = []
    total = sum(len(spec.seeds) for spec, _, _ in cells)
    for spec, factory, out in cells:  # every cell checked before any plays
        if continues_cell(out, overwrite):
            try:
                check_continuable(spec, out, _framing_for(spec, framings), factory)
            except CellResumeError as exc:
                _fail(_refusal(out, exc))
    with _progress(console, quiet) as progress:
        task = progress.add_task("episodes", total=total)
        for spec, factory, out in cells:
            progress.update(task, description=spec.slug())
            # A model's cell builds its own actors so that every call is recorded; its
            # episodes are slow (a model call a turn), so a second bar follows their turns.
            settings = getattr(factory, "settings", None)
            turns = (
                progress.add_task("  turns", total=spec.stream_config.n_tasks)
                if settings is not None
                else None
            )

            def advance(_: Episode, turns: Any = turns) -> None:
                progress.advance(task)
                if turns is not None:
                    progress.update(turns, completed=0)

            def turn_begins(t: int, n: int, turns: Any = turns) -> None:
                if turns is not None:
                    progress.update(turns, completed=t, total=n)

            try:
                summary = run_cell(
                    spec,
                    out,
                    framing=_framing_for(spec, framings),
                    actor_factory=None if settings is not None else factory,
                    models={spec.policy: settings} if settings is not None else None,
                    on_episode=advance,
                    on_turn=turn_begins if turns is not None else None,
                    cache=cache,
                    resume=continues_cell(out, overwrite),
                    provider_wrap=_cost_guard(spec, out, cache, cost_limit, overwrite),
                )
            except (CellResumeError, RunLockedError) as exc:
                progress.stop()
                _fail(_refusal(out, exc) if isinstance(exc, CellResumeError) else str(exc))
            except CellStopped as exc:
                progress.stop()
                _stopped_at_limit(exc, out, console)
                console.print(
                    f"[bold red]stopped:[/] {escape(str(exc))}", soft_wrap=True, highlight=False
                )
                raise typer.Exit(code=1) from None
            if turns is not None:
                progress.remove_task(turns)
            summaries.append({**summary, "dir": str(out)})
    return summaries


@app.command()
def run(
    framing: Annotated[str, typer.Option(help="Framing rung: r0, r1, r2 or r3.")],
    policy: Annotated[
        str,
        typer.Option(
            "--actor",
            "--policy",
            help="Who plays: a reference policy (eager, wait:K, posterior:P, bayes, hindsight, "
            f"never, random) or a model: {providers.help_forms()}.",
        ),
    ],
    episodes: Annotated[
        int | None,
        typer.Option(
            help="Play N episodes from --seed (default: seeds 2000–2023).", **WHOLE_NUMBER
        ),
    ] = None,
    seeds: Annotated[
        str | None, typer.Option(help='Seeds, e.g. "2000-2023" or "1,5,9-12".')
    ] = None,
    seed: Annotated[int, typer.Option(help="First seed for --episodes.", **WHOLE_NUMBER)] = 2000,
    cost: Annotated[
        float,
        typer.Option(
            help="Build charge K: game points per tool build (not dollars; the summary's "
            "build_cost)."
        ),
    ] = 0.0,
    budget: Annotated[int, typer.Option(help="Build budget B.", **WHOLE_NUMBER)] = 3,
    tasks: Annotated[
        int,
        typer.Option(
            help="Tasks per episode (the paper: 60). bayes:exact is tractable up to "
            f"{EXACT_TASKS_LIMIT}; a cell of other than 60 gets a -tN suffix.",
            **WHOLE_NUMBER,
        ),
    ] = PAPER_TASKS,
    skin: Annotated[
        str, typer.Option(help="R0 skin: default, chest, quiver, cauldron.")
    ] = "default",
    out: Annotated[
        Path | None, typer.Option(help="Output directory (default runs/allo/<cell>).")
    ] = None,
    streams: StreamsOption = "paper",
    stream_budget: StreamBudgetOption = "fixed",
    protocol: ProtocolOption = "paper",
    condition: ConditionOption = None,
    instances: InstancesOption = "paper",
    config: ModelsFileOption = None,
    cache: CacheOption = None,
    overwrite: OverwriteOption = False,
    sandbox_allow_weak: SandboxAllowWeakOption = False,
    quiet: Annotated[
        bool, typer.Option(help="No progress display; print only the cell's directory.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the cost estimate (model calls, tokens, dollars) and stop; nothing "
            "is run or written.",
        ),
    ] = False,
    cost_limit: Annotated[
        float | None,
        typer.Option(
            "--cost-limit",
            metavar="USD",
            help="Refuse to start when the estimate is over this many dollars, and stop the "
            "cell (resumable) once its model calls have cost this much.",
        ),
    ] = None,
) -> None:
    """Play one configuration and write episodes.jsonl, summary.json and config.json.

    Over a cell that was killed or stopped, the episodes it finished are kept and only the
    missing ones are played (the settings must be the same); --overwrite starts it over.
    Before a model plays, its estimated cost is printed on stderr (--dry-run: only that).

    Exit codes: 0 done, 1 stopped (a model failure), 2 bad input, 3 stopped by
    --cost-limit, 130 interrupted."""
    try:
        cache_path = _cache(cache)
        models = _models(config)
        stream_config, budget_mode = _stream_options(streams, stream_budget)
        stream_config = _with_tasks(stream_config, tasks)
        chosen = _condition(condition, protocol)
        spec = CellSpec(
            framing=framing.lower(),
            policy=policy,
            seeds=_seeds(episodes, seeds, seed),
            cost=cost,
            budget=budget,
            skin=skin,
            config=stream_config,
            stream_budget=budget_mode,
            protocol=protocol.strip().lower(),
            condition=chosen,
            instances=instances.strip().lower(),
        )
        check_cost_limit(cost_limit)
        factory = _check(spec, models, check_keys=not dry_run)
        target = out if out is not None else DEFAULT_OUT / spec.slug()
        if dry_run:
            dry_run_cell(spec, models, target, overwrite)
            return
        _out_dir(target)
        continuing = _continues(target, overwrite)
        _sandbox_preflight([spec], sandbox_allow_weak)
        if "/" in spec.policy:
            estimate, spent = _cell_estimate(spec, models, target, continuing)
            check_affordable(estimate, cost_limit, spent)
            if not quiet:
                announce(estimate, Console(stderr=True), "Cost estimate of this cell", who=None)
    except (UsageError, CostLimitError) as exc:
        _fail(str(exc))
    console = Console(stderr=True)
    try:
        _presolve(spec, factory, console, quiet)
        [summary] = _run_cells(
            [(spec, factory, target)], console, cache_path, overwrite, quiet, cost_limit
        )
    except KeyboardInterrupt:
        console.print(
            f"[bold red]interrupted:[/] the episodes finished so far are kept in "
            f"{escape(str(target))}; `econbench resume {escape(str(target))}` (or this same "
            "command) plays only the missing ones",
            soft_wrap=True,
            highlight=False,
        )
        raise typer.Exit(code=130) from None
    if quiet:
        typer.echo(str(target))
        return
    Console().print(_run_table(summary, f"AlloBench {spec.framing} · {spec.policy}"))
    usage = cell_usage_table(summary)
    if usage is not None:
        Console().print(usage)
    typer.echo(f"wrote {target}/episodes.jsonl, summary.json, config.json")


WorkersOption = Annotated[
    int,
    typer.Option(
        help="Cells at once (1: one after another in this process; more: one worker "
        "process per cell, as econbench sweep).",
        **WHOLE_NUMBER,
    ),
]


@app.command()
def sweep(
    framings: Annotated[str, typer.Option(help="Comma-separated rungs, e.g. r0,r2.")] = "r0",
    policies: Annotated[str, typer.Option(help="Comma-separated policies.")] = "eager,bayes",
    budgets: Annotated[str, typer.Option(help="Comma-separated budgets B.")] = "1,3,5",
    costs: Annotated[str, typer.Option(help="Comma-separated charges K.")] = "0,10,20,24",
    episodes: Annotated[
        int | None, typer.Option(help="N episodes from --seed per cell.", **WHOLE_NUMBER)
    ] = None,
    seeds: Annotated[str | None, typer.Option(help='Seeds, e.g. "2000-2023".')] = None,
    seed: Annotated[int, typer.Option(help="First seed for --episodes.", **WHOLE_NUMBER)] = 2000,
    skin: Annotated[str, typer.Option(help="R0 skin for r0 cells.")] = "default",
    out: Annotated[Path, typer.Option(help="Output directory.")] = DEFAULT_OUT / "sweep",
    streams: StreamsOption = "paper",
    stream_budget: StreamBudgetOption = "fixed",
    protocol: ProtocolOption = "paper",
    condition: ConditionOption = None,
    instances: InstancesOption = "paper",
    config: ModelsFileOption = None,
    cache: CacheOption = None,
    overwrite: OverwriteOption = False,
    sandbox_allow_weak: SandboxAllowWeakOption = False,
    workers: WorkersOption = 1,
    retries: Annotated[
        int,
        typer.Option(
            help="Attempts after the first for a failing cell (each resumes).", **WHOLE_NUMBER
        ),
    ] = 2,
    cost_limit: Annotated[
        float | None,
        typer.Option(
            "--cost-limit",
            metavar="USD",
            help="Stop once the cells have cost this much in total (they resume next time).",
        ),
    ] = None,
    backend: Annotated[
        str,
        typer.Option(
            help="auto (inline for --workers 1, else local), inline, local (a pool of "
            "worker processes), process (one process per cell) or ray."
        ),
    ] = "auto",
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster to join (with --backend ray).")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No progress display.")] = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help=f"Run a grid of more than {CONFIRM_ABOVE} cells without asking (required "
            "when not on a terminal).",
        ),
    ] = False,
) -> None:
    """Run every (framing, policy, budget, cost) cell; write per-cell files and surface.csv.

    The grid is every framing × policy × budget × build charge: the defaults alone are
    1 × 2 × 3 × 4 = 24 cells. Its size and axes are printed first; a grid of more than 24
    cells asks before it starts (--yes answers; off a terminal, --yes is required).

    A front for the ``econbench sweep`` engine: the cells are an experiment's matrix, run
    --workers at a time, each in OUT/<cell>/, with OUT/sweep.json, OUT/sweep_summary.json
    and worker logs in OUT/logs/. Cells already in the output directory are continued
    (their finished episodes kept) unless --overwrite; completed ones are kept as they are.

    By default every cell plays the same streams (drawn with B = 3, the paper's protocol);
    ``--stream-budget cell`` draws each cell's streams with its own B.

    Exit codes: 0 all cells completed, 1 some failed, 2 bad input, 3 incomplete (cost
    limit, or cells held by another process), 130 interrupted."""
    from econbench.runs.sweep import (
        SweepError,
        SweepOptions,
        plan_outline,
        results_table,
        run_sweep,
    )
    from econbench.runs.sweep_cli import confirm_size

    try:
        cache_path = _cache(cache)
        models = _models(config)
        stream_config, budget_mode = _stream_options(streams, stream_budget)
        run_seeds = _seeds(episodes, seeds, seed)
        chosen = _condition(condition, protocol)
        axes = {
            name: _split(text, name)
            for name, text in (
                ("framing", framings),
                ("policy", policies),
                ("budget", budgets),
                ("cost", costs),
            )
        }
        count = math.prod(len(values) for values in axes.values())
        if count > MAX_ENTRIES:
            raise UsageError(
                f"the sweep has {count:,} cells, more than the {MAX_ENTRIES:,} one sweep may "
                "hold; list fewer values, or split it into several sweeps"
            )
        specs = [
            CellSpec(
                framing=f.lower(),
                policy=p,
                seeds=run_seeds,
                cost=_number(k, "cost", float),
                budget=_number(b, "budget", int),
                skin=skin if takes_skin(f.lower()) else "default",
                config=stream_config,
                stream_budget=budget_mode,
                protocol=protocol.strip().lower(),
                condition=chosen,
                instances=instances.strip().lower(),
            )
            for f in axes["framing"]
            for p in axes["policy"]
            for b in axes["budget"]
            for k in axes["cost"]
        ]
        if skin not in SKIN_NAMES:
            raise UsageError(f"unknown skin {skin!r}; choose one of {', '.join(SKIN_NAMES)}")
        slugs = [spec.slug() for spec in specs]
        if len(set(slugs)) != len(slugs):
            raise UsageError("the sweep lists a cell twice")
        _out_dir(out)
        factories = [_check(spec, models) for spec in specs]
        plan = _sweep_plan(specs, skin, models, out)
        cells = [
            (spec, factory, out / entry.id)
            for spec, factory, entry in zip(specs, factories, plan.entries, strict=True)
        ]
        framing_cache: dict[str, Framing] = {}
        for spec, factory, cell_dir in cells:  # every cell checked before any plays
            if _continues(cell_dir, overwrite):
                try:
                    check_continuable(spec, cell_dir, _framing_for(spec, framing_cache), factory)
                except CellResumeError as exc:
                    raise UsageError(_refusal(cell_dir, exc)) from None
        options = SweepOptions(
            out=out,
            workers=workers,
            retries=retries,
            cost_limit=cost_limit,
            backend=("inline" if workers == 1 else "local") if backend == "auto" else backend,
            ray_address=ray_address,
            cache=cache_path,
            force=True,  # cells are independent: any set of them may share the directory
            runs_dir="",
        )
        options.check()
        typer.echo(f"allo sweep: {plan_outline(plan, 'cell')} → {out}")
        confirm_size(plan, "cell", yes=yes)
        _sandbox_preflight(specs, sandbox_allow_weak)
    except SweepError as exc:
        _fail(str(exc))
    except UsageError as exc:
        _fail(str(exc))
    if overwrite:
        _clear_cells([cell_dir for _, _, cell_dir in cells])
    try:
        result = run_sweep(plan, options, console=Console(file=sys.stderr), quiet=quiet)
    except SweepError as exc:
        _fail(str(exc))
    summaries = _completed_summaries([cell_dir for _, _, cell_dir in cells])
    write_surface(out / "surface.csv", summaries)
    if result.status != "completed":
        Console().print(results_table(result))
        typer.echo(f"sweep {result.status}: {out} (sweep_summary.json)", err=True)
    Console().print(_sweep_table(summaries, f"AlloBench sweep ({len(specs)} cells)"))
    typer.echo(f"wrote {len(summaries)} cells and {out / 'surface.csv'}")
    if result.exit_code:
        raise typer.Exit(code=result.exit_code)


def _sweep_plan(
    specs: list[CellSpec], skin: str, models: dict[str, ModelSettings], out: Path
) -> Plan:
    """The cells as an experiment's matrix (the same entries an experiment file with these
    axes expands to), so ``econbench sweep``'s engine runs them."""
    from econbench.runs.allo.experiment import allo_entries

    source = out / "sweep.json"
    try:  # a bound the checks above missed is still one line, not a traceback
        experiment = _sweep_experiment(specs, skin, models)
        return Plan(source=source, experiment=experiment, entries=allo_entries(experiment, source))
    except ValidationError as exc:
        raise UsageError(format_errors(exc)) from None
    except ExperimentError as exc:
        raise UsageError(str(exc)) from None


def _sweep_experiment(
    specs: list[CellSpec], skin: str, models: dict[str, ModelSettings]
) -> AlloExperiment:
    """The experiment whose matrix is the sweep's cells."""
    from econbench.runs.allo.experiment import AlloExperiment

    first = specs[0]
    return AlloExperiment.model_validate(
        {
            "name": "allo-sweep",
            "benchmark": "allo",
            "seeds": list(first.seeds),
            "streams": first.config.generator,
            "stream_budget": first.stream_budget,
            "protocol": first.protocol,
            "condition": first.condition,
            "instances": first.instances,
            "models": models,
            "matrix": {
                "framings": list(dict.fromkeys(s.framing for s in specs)),
                "policies": list(dict.fromkeys(s.policy for s in specs)),
                "skins": [skin],  # allo_entries gives non-r0 rungs the default skin
                "budgets": list(dict.fromkeys(s.budget for s in specs)),
                "costs": list(dict.fromkeys(s.cost for s in specs)),
            },
        }
    )


def _clear_cells(cell_dirs: list[Path]) -> None:
    """--overwrite: start these cells over. Only the files a cell wrote are removed (never
    one of the user's, never through a link); a cell another process is writing, or a
    folder that is not a cell, is refused before any cell is touched."""
    from econbench.runs.sweep import SweepError, restart_runs

    try:
        restart_runs(cell_dirs)
    except SweepError as exc:
        _fail(str(exc))


def _completed_summaries(cell_dirs: list[Path]) -> list[dict[str, Any]]:
    """Each completed cell's ``summary.json`` (in the sweep's order), for ``surface.csv``."""
    from econbench.allo.game.metrics import read_summary
    from econbench.runs.layout import SUMMARY, read_json

    rows = []
    for cell_dir in cell_dirs:
        summary = read_json(cell_dir / SUMMARY)
        if isinstance(summary, dict) and summary.get("status", "completed") == "completed":
            rows.append({**read_summary(summary), "dir": str(cell_dir)})  # old names read too
    return rows


def surface_row(summary: dict[str, Any]) -> dict[str, Any]:
    """One ``surface.csv`` row from a cell summary (missing values are empty; an old
    summary's names are read as the current ones)."""
    from econbench.allo.game.metrics import read_summary

    summary = read_summary(summary)
    lo, hi = (summary.get("score_ci") or [None, None])[:2]
    row = {key: summary.get(key) for key in SURFACE_COLUMNS}
    row.update(score_ci_lo=lo, score_ci_hi=hi)
    return {k: "" if v is None else v for k, v in row.items()}


def write_surface(path: Path, summaries: list[dict[str, Any]]) -> None:
    """Write the sweep's ``surface.csv``: one row per cell."""
    import io

    from econbench.runs.checkpoint import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=SURFACE_COLUMNS)
    writer.writeheader()
    for summary in summaries:
        writer.writerow(surface_row(summary))
    write_atomic(path, buffer.getvalue())  # replaces a link at the path, never follows it


from econbench.allo.gym.yardstick_cli import register as _register_yardstick  # noqa: E402
from econbench.runs.allo.train_cli import register as _register_train  # noqa: E402

_register_yardstick(app, int_option)  # the allo layer may not import runs.limits
_register_train(app)

from econbench.runs.play.allo_cli import register as _register_play  # noqa: E402

_register_play(app)


@app.command("import")
def import_paper(
    path: Annotated[Path, typer.Argument(help="A folder of the paper's stored runs (runs/).")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the cells.")] = Path(
        "runs/paper"
    ),
) -> None:
    """Turn the paper's stored sessions into AlloBench cells (see runs/allo/paper_import.py)."""
    from econbench.runs.allo.paper_import import PaperImportError, import_runs

    def warn(message: str) -> None:
        typer.echo(f"warning: {message}", err=True)

    try:
        written = import_runs(path, out, warn)
    except PaperImportError as exc:
        _fail(str(exc))
    typer.echo(f"imported {len(written)} cells into {out}")
