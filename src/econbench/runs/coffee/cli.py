"""``econbench coffee …`` commands: run the economy offline, and the headroom analysis."""

from __future__ import annotations

import atexit
import functools
import gc
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from econbench.agents.models import providers
from econbench.agents.models.errors import ModelConfigError
from econbench.coffee.config import MAX_DAYS, ConfigError, EconomyConfig
from econbench.coffee.policies import UnknownPolicyError
from econbench.runs.coffee.agents import validate_agents
from econbench.runs.coffee.config import DEFAULT_CONDITION, RunConfig, load_config, parse_agents
from econbench.runs.coffee.run import RunStopped, check_start, run_to_dir
from econbench.runs.cost_preflight import announce, check_affordable, check_cost_limit
from econbench.runs.limits import int_option
from econbench.runs.lock import RunLockedError
from econbench.runs.store import RunDirError, check_out_dir, default_run_dir

if TYPE_CHECKING:  # Rich is imported where something is printed with it: --quiet needs none
    from rich.console import Console
    from rich.table import Table

    from econbench.agents.models.registry import MissingKeyError
    from econbench.runs.coffee.yardstick import Yardstick
    from econbench.runs.cost_estimate import PlanEstimate
    from econbench.runs.cost_guard import CostGuard

PAPER_DAYS = 90
"""The paper's horizon: its headroom figures are comparable only for this economy."""

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)  # help shows [run] as written


@functools.cache
def stdout_console() -> Console:
    """The console for tables and messages, made on first use."""
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # logs and pipes: no wrapping at the 80-column default
    return console


@functools.cache
def stderr_console() -> Console:
    """The console for errors, made on first use."""
    from rich.console import Console

    return Console(stderr=True, width=None if Console(stderr=True).is_terminal else 120)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` as it is (no markup, never wrapped) for exit code 2."""
    from rich.markup import escape

    stderr_console().print(
        f"[bold red]error:[/] {escape(message)}", soft_wrap=True, highlight=False
    )
    return typer.Exit(code=2)


def resolve_config(
    config_file: Path | None,
    seed: int | None,
    days: int | None,
    agent: list[str],
    condition: str | None = None,
) -> RunConfig:
    overrides = {
        "seed": seed,
        "days": days,
        "agents": parse_agents(agent) or None,
        "condition": condition,
    }
    config = load_config(config_file, overrides)
    validate_agents(config)
    return config


@app.command("run")
def run_command(
    config_file: Annotated[
        Path | None, typer.Option("--config", help="TOML file: [run], [agents], [economy].")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Random seed (default 0).", **int_option())
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(
            help="Several seeds, e.g. 0-2 or 0,3,7-9: one run per seed, each in "
            "OUT/seed_N (OUT defaults to runs/coffee/…-seedsTEXT), then a table across seeds."
        ),
    ] = None,
    days: Annotated[
        int | None, typer.Option(help="Days to simulate (default 90).", **int_option())
    ] = None,
    agent: Annotated[
        list[str],
        typer.Option(
            "--actor",
            "--agent",
            help="FIRM=ACTOR: who plays FIRM, repeatable; FIRM may be 'default'. ACTOR: a "
            "scripted policy — bargaining (the default background), negotiating, scripted, "
            "heuristic, passive; for a roaster also haggle, markup:X, undercut, hoard — or a "
            f"model: {providers.help_forms()}.",
        ),
    ] = [],  # noqa: B006 - typer needs a literal default for repeatable options
    out: Annotated[
        Path | None,
        typer.Option(help="Run directory (default runs/coffee/…); with --seeds, its parent."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option(help="Replace the files of an existing run dir.")
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(help="Print only the run directory (one line per seed): no bar, no table."),
    ] = False,
    cache: Annotated[
        str | None,
        typer.Option(help="Response cache file ('default': ~/.cache/econbench/responses.sqlite)."),
    ] = None,
    condition: Annotated[
        str | None,
        typer.Option(
            help="What the run plays: hardened (default: econbench's CoffeeBench) or paper "
            "(the reference implementation's protocol; no [economy] or [prompts], scripted "
            "players passive and heuristic only). Overrides [run] condition."
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the cost estimate (per model-played firm: calls, tokens, dollars) "
            "and stop; nothing is run or written.",
        ),
    ] = False,
    cost_limit: Annotated[
        float | None,
        typer.Option(
            "--cost-limit",
            metavar="USD",
            help="Refuse to start when the estimate is over this many dollars, and stop the "
            "run (resumable) once its model calls have cost this much (all seeds together).",
        ),
    ] = None,
) -> None:
    """Run the coffee economy: scripted firms (no API key needed) or models.

    Before a model plays, its estimated cost is printed on stderr (--dry-run: only that).
    Exit codes: 0 done, 1 stopped (a model failure, a full disk), 2 bad input, 3 stopped
    by --cost-limit, 130 interrupted."""
    try:
        if seed is not None and seeds is not None:
            raise ValueError("give either --seed or --seeds, not both")
        check_cost_limit(cost_limit)
        seed_list: list[int | None] = [seed] if seeds is None else list(parse_seed_text(seeds))
        configs, missing_keys = resolve_configs(
            config_file, seed_list, days, agent, condition, dry_run
        )
        cache_path = None
        if cache is not None:  # the cache module (sqlite3, records) only when asked for
            from econbench.agents.models.cache import cache_path_from_option

            cache_path = cache_path_from_option(cache)
        tag = condition_suffix(configs[0])
        if seeds is None:
            outs = [out or default_run_dir("coffee", f"seed{configs[0].seed}{tag}")]
        else:
            parent = out or default_run_dir("coffee", "seeds" + seeds.replace(",", "_") + tag)
            outs = [parent / f"seed_{config.seed}" for config in configs]
            if not dry_run:
                check_run_dirs(outs, overwrite)
        if dry_run or cost_limit is not None or any(plays_model(c) for c in configs):
            estimate = run_estimate(configs, outs)
            if dry_run:
                dry_run_estimate(estimate, missing_keys)
                return
            check_affordable(estimate, cost_limit)
            if not quiet:
                announce(estimate, stderr_console(), "Cost estimate of this run")
    # ValueError covers RunDirError (a --seeds directory already in use) and CostLimitError
    except (ConfigError, UnknownPolicyError, ModelConfigError, ValueError) as exc:
        raise fail(str(exc)) from None
    summaries = []
    bar = DayBar(quiet)
    spent = 0.0
    for index, (config, run_dir) in enumerate(zip(configs, outs, strict=True)):
        guard = cost_guard(config, run_dir, cache_path, cost_limit, spent)
        summaries.append(
            run_one(config, run_dir, bar, overwrite, cache_path, outs[index + 1 :], guard)
        )
        spent = guard.spent if guard is not None else spent
        if quiet:
            typer.echo(str(run_dir))
            continue
        from rich.markup import escape

        if seeds is None:
            stdout_console().print(summary_table(summaries[-1]))
            print_usage(summaries)
            print_yardstick(configs, summaries)
        if summaries[-1].get("ended_early"):
            stdout_console().print(
                f"[yellow]The run of seed {config.seed} ended early: roaster_A went bankrupt "
                f"on day {summaries[-1]['firms']['roaster_A']['bankrupt_day']}.[/]"
            )
        stdout_console().print(
            f"Run written to [bold]{escape(str(run_dir))}[/] "
            "(summary.json, events.jsonl, daily.jsonl)"
        )
    if seeds is not None and not quiet:
        stdout_console().print(seeds_table(summaries))
        print_usage(summaries)
        print_yardstick(configs, summaries)


def resolve_configs(
    config_file: Path | None,
    seed_list: list[int | None],
    days: int | None,
    agent: list[str],
    condition: str | None,
    dry_run: bool,
) -> tuple[list[RunConfig], MissingKeyError | None]:
    """Each seed's config, checked. A dry run goes on without the API keys a real run
    needs (it calls no model) and returns what is missing, to say so."""
    try:
        configs = [resolve_config(config_file, s, days, agent, condition) for s in seed_list]
    except ModelConfigError as exc:
        from econbench.agents.models.registry import MissingKeyError

        if not dry_run or not isinstance(exc, MissingKeyError):
            raise
        configs = [
            load_config(config_file, {**_overrides(s, days, agent, condition)}) for s in seed_list
        ]
        return configs, exc
    return configs, None


def _overrides(
    seed: int | None, days: int | None, agent: list[str], condition: str | None
) -> dict[str, Any]:
    return {
        "seed": seed,
        "days": days,
        "agents": parse_agents(agent) or None,
        "condition": condition,
    }


def plays_model(config: RunConfig) -> bool:
    """Whether a model plays some firm of ``config`` (a run that will spend money)."""
    from econbench.coffee.config import FIRMS, is_model

    return any(is_model(config.policy_for(firm)) for firm in FIRMS)


def run_estimate(configs: list[RunConfig], outs: list[Path]) -> PlanEstimate:
    """The sweep's estimate of these runs (one entry per seed), each model priced as the run
    will price it."""
    from econbench.runs.cost_estimate import estimate_entries
    from econbench.runs.experiment import Entry

    entries = [
        Entry(
            id=run_dir.name,
            label=f"seed {config.seed}",
            benchmark="coffee",
            params={},
            config=config.model_dump(mode="json", by_alias=True),
        )
        for config, run_dir in zip(configs, outs, strict=True)
    ]
    return estimate_entries("coffee", entries)


def dry_run_estimate(estimate: PlanEstimate, missing_keys: MissingKeyError | None) -> None:
    """``--dry-run``: the estimate on stdout, and the keys a real run still needs."""
    from econbench.runs.cost_preflight import dry_run

    if len(estimate.entries) > 1:
        for entry in estimate.entries:
            for actor in entry.actors:
                actor.actor = f"{entry.id} {actor.actor}"
    dry_run(estimate, stdout_console(), "Cost estimate (coffee run --dry-run)")
    if missing_keys is not None:
        typer.echo(f"missing before a real run: set {', '.join(missing_keys.variables)}")


def cost_guard(
    config: RunConfig, out: Path, cache: Path | None, limit: float | None, spent: float
) -> CostGuard | None:
    """With ``--cost-limit``, the wrap that stops a model run once ``limit`` is spent
    (``spent``: what the seeds before this one cost), around the run's own recording."""
    if limit is None or not plays_model(config):
        return None
    from econbench.agents.models.wraps import make_provider_wrap
    from econbench.runs.cost_guard import CostGuard
    from econbench.runs.layout import RECORD

    return CostGuard(make_provider_wrap(record=out / RECORD, cache=cache), limit, spent)


def condition_suffix(config: RunConfig) -> str:
    """What a default run directory's name adds for a non-default condition (``-paper``)."""
    return "" if config.condition == DEFAULT_CONDITION else f"-{config.condition}"


def print_usage(summaries: list[dict]) -> None:
    """The model-usage table, when a model played."""
    table = usage_table(summaries)
    if table is not None:
        stdout_console().print(table)


def parse_seed_text(text: str) -> list[int]:
    """``--seeds``: the seed-list grammar of ``allo run --seeds`` and ``coffee exploits``,
    imported only when given (it lives with AlloBench's streams)."""
    from econbench.allo.game.stream import parse_seeds

    try:
        return parse_seeds(text)
    except ValueError as exc:
        raise ValueError(f"bad --seeds {text!r}: {exc}") from None


def check_run_dirs(outs: list[Path], overwrite: bool) -> None:
    """Refuse, before the first seed runs, a seed directory that ``run_to_dir`` would refuse,
    so a run of many seeds does not stop half-way for a reason known at the start. These are
    ``run_to_dir``'s own checks (read only), so the two cannot disagree: with ``overwrite``
    too, a folder that is not a run is refused (``store.check_new_run_dir``)."""
    for run_dir in outs:
        check_out_dir(run_dir)
        check_start(run_dir, overwrite)


def run_one(
    config: RunConfig,
    out: Path,
    bar: DayBar,
    overwrite: bool,
    cache: Path | None,
    not_started: list[Path],
    guard: CostGuard | None = None,
) -> dict[str, Any]:
    """Play one seed into ``out``; an error clears the bar and says what to do next.
    ``guard`` (``--cost-limit``) is the run's provider wrap."""
    # What is loaded before the first seed lives as long as the command: kept out of the
    # collector's generations, a full collection mid-run no longer walks every module and
    # class (tens of milliseconds of a scripted run). Only once, so no seed's garbage is
    # frozen. At exit, what is still alive is frozen too: the interpreter's final collection
    # then skips it (about 10 ms of a scripted run).
    if not gc.get_freeze_count():
        gc.freeze()
        atexit.register(gc.freeze)
    bar.start(config.seed, config.days)
    try:
        summary = run_to_dir(
            config, out, overwrite=overwrite, on_day=bar.day, cache=cache, provider_wrap=guard
        )
    except (RunDirError, RunLockedError) as exc:
        bar.clear()
        raise fail(str(exc)) from None
    except OSError as exc:  # the disk filled up or went away mid-run
        bar.clear()
        stopped(
            f"writing {out} failed ({exc.strerror or exc}); what was written so far is kept: "
            f"fix the cause, then `econbench resume {out}`",
            not_started,
        )
        raise typer.Exit(code=1) from None
    except RunStopped as exc:
        bar.clear()
        if stopped_at_limit(exc, out, not_started):
            from econbench.runs.cost_guard import EXIT_COST_LIMIT

            raise typer.Exit(code=EXIT_COST_LIMIT) from None
        stopped(str(exc), not_started)
        raise typer.Exit(code=1) from None
    except KeyboardInterrupt:
        bar.clear()
        stopped(
            f"interrupted; the days played so far are kept: `econbench resume {out}` "
            "continues the run from its last checkpoint",
            not_started,
        )
        raise typer.Exit(code=130) from None
    bar.done()
    return summary


def stopped_at_limit(exc: RunStopped, out: Path, not_started: list[Path]) -> bool:
    """Say so when ``--cost-limit`` stopped the run (and how to continue it); ``False``
    when something else did."""
    from econbench.runs.cost_guard import stopped_by_limit

    reached = stopped_by_limit(exc)
    if reached is None:
        return False
    stopped(
        f"{reached}; the days played so far are kept in {out}: `econbench resume {out} "
        "--cost-limit …` with a higher limit continues the run (the calls made since its last "
        "checkpoint are replayed, not paid again)",
        not_started,
    )
    return True


def stopped(message: str, not_started: list[Path]) -> None:
    """``stopped: …`` on stderr, naming the seeds of ``--seeds`` that never started."""
    if not_started:
        names = ", ".join(p.name.removeprefix("seed_") for p in not_started)
        message += (
            f"\nSeeds {names} did not start; run them with --seeds {names.replace(' ', '')} "
            f"--out {not_started[0].parent}"
        )
    from rich.markup import escape

    stderr_console().print(
        f"[bold red]stopped:[/] {escape(message)}", soft_wrap=True, highlight=False
    )


class DayBar:
    """The run's progress line (days done out of the horizon), shown from the first day
    played: an error before that leaves no empty bar behind, and one after it clears the bar,
    so the error is the last thing on screen. ``quiet`` shows nothing and does not import
    ``rich.progress`` (a tenth of a scripted run's start-up)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.progress: Any = None
        self.seed = 0
        self.total = 0
        self.task: Any = None

    def start(self, seed: int, total: int) -> None:
        self.seed, self.total, self.task = seed, total, None

    def day(self, day: int) -> None:
        if self.quiet:
            return
        if self.progress is None:
            self.progress = day_progress()
            self.progress.start()
        if self.task is None:
            self.task = self.progress.add_task("run", total=self.total, seed=self.seed)
        self.progress.update(self.task, completed=day)

    def done(self) -> None:
        """Leave the finished bar on screen (it shows the run's time)."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def clear(self) -> None:
        if self.progress is not None:
            self.progress.live.transient = True
            self.progress.stop()
            self.progress = None


def day_progress() -> Any:
    """The run's progress bar: one line, days done out of the horizon."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]CoffeeBench[/] seed {task.fields[seed]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("days"),
        TimeElapsedColumn(),
        console=stdout_console(),
        transient=False,
    )


def _number_column(table: Table, header: str) -> None:
    """A right-aligned column of numbers: never wrapped, so the layout shrinks the text
    columns first (a number cut short would end in an ellipsis, which the tests refuse)."""
    table.add_column(header, justify="right", no_wrap=True)


def _text_column(table: Table, header: str, *, wrap: bool = True) -> None:
    """A left-aligned name column; long names (models) fold onto further lines."""
    table.add_column(header, no_wrap=not wrap, overflow="fold")


def _money(value: float, signed: bool = False) -> str:
    return f"{value:+,.2f}" if signed else f"{value:,.2f}"


def usage_table(summaries: list[dict]) -> Table | None:
    """Model calls, tokens and cost of each model-played firm over ``summaries`` (one run or
    every seed), or ``None`` when only scripted firms played. Calls of a model with no price
    show as ``unpriced`` (after the priced part, when some were priced: ``1.23 + unpriced``)."""
    from rich.markup import escape
    from rich.table import Table

    from econbench.runs.cost_display import usd

    firms = [
        f for f in summaries[0]["firms"] if any(s["firms"][f].get("llm_calls") for s in summaries)
    ]
    if not firms:
        return None
    runs = "" if len(summaries) == 1 else f", {len(summaries)} seeds together"
    table = Table(title=f"Model usage{runs}")
    _text_column(table, "firm", wrap=False)
    _text_column(table, "model")
    for column in ("calls", "input\ntokens", "cached", "output\ntokens", "cost $"):
        _number_column(table, column)
    for firm_id in firms:
        rows = [s["firms"][firm_id] for s in summaries]
        total = {k: sum(int(r.get(k) or 0) for r in rows) for k in USAGE_COUNTS}
        priced = sum(float(r.get("cost_usd_priced_part") or 0.0) for r in rows)
        unpriced = any(r.get("llm_calls") and r.get("cost_usd") is None for r in rows)
        table.add_row(
            firm_id,
            escape(" | ".join(dict.fromkeys(r["policy"] for r in rows))),
            *(f"{total[k]:,}" for k in USAGE_COUNTS),
            usd(priced, unpriced=unpriced),
        )
    return table


USAGE_COUNTS = ("llm_calls", "input_tokens", "cached_input_tokens", "output_tokens")
"""The summary's usage counts the usage table sums, in its column order."""


def summary_table(summary: dict) -> Table:
    """Every firm of one run: its player, score, revenue, activity and whether it is live."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        title=f"CoffeeBench seed {summary['seed']}: {summary['days_run']} days, "
        f"{summary['deals']} deals, {summary['consumer_sales_kg']} kg sold to consumers"
    )
    _text_column(table, "firm", wrap=False)
    _text_column(table, "policy")
    for column in ("net income", "revenue", "tool\ncalls", "idle\ndays"):
        _number_column(table, column)
    _text_column(table, "status")
    for firm_id, row in summary["firms"].items():
        table.add_row(
            firm_id,
            escape(row["policy"]),
            _money(row["net_income"]),
            _money(row["revenue"]),
            f"{row['tool_calls']:,}",
            f"{row['idle_days']:,}",
            f"bankrupt day {row['bankrupt_day']}" if row["bankrupt"] else "live",
        )
    return table


MAX_SEED_COLUMNS = 8
"""Up to this many seeds, the across-seeds table shows each seed's net income (as long as
the columns fit the terminal, :func:`fits`)."""


def fits(table: Table, width: int) -> bool:
    """Whether ``table`` renders ``width`` columns wide with no cell cut short (Rich marks a
    cut cell with an ellipsis; names wrap instead, so only a number can be cut)."""
    import io

    from rich.console import Console

    console = Console(width=width, file=io.StringIO(), color_system=None, record=True)
    console.print(table)
    return "…" not in console.export_text()


def seeds_table(summaries: list[dict], width: int | None = None) -> Table:
    """One row per firm over every seed run: net income per seed, mean and spread.

    Laid out to fit ``width`` (default: the terminal's) with no number cut: each seed's
    column when there are at most :data:`MAX_SEED_COLUMNS` seeds and they fit; else the mean,
    SD, min and max with roaster_A's per-seed figures listed under the table; else, for very
    wide numbers, one row per firm and statistic."""
    limit = stdout_console().width if width is None else width
    layouts = [lambda: _seeds_table(summaries, per_seed=False), lambda: _seeds_long(summaries)]
    if len(summaries) <= MAX_SEED_COLUMNS:
        layouts.insert(0, lambda: _seeds_table(summaries, per_seed=True))
    for build in layouts[:-1]:
        table = build()
        if fits(table, limit):
            return table
    return layouts[-1]()


FOCAL = "roaster_A"
"""The evaluated firm, whose per-seed figures the across-seeds table always shows."""


def _seed_stats(rows: list[dict]) -> dict[str, float]:
    import statistics

    incomes = [float(r["net_income"]) for r in rows]
    sd = statistics.stdev(incomes) if len(incomes) > 1 else 0.0
    return {"mean": statistics.fmean(incomes), "sd": sd, "min": min(incomes), "max": max(incomes)}


def _focal_caption(summaries: list[dict]) -> str | None:
    focal = [
        f"{s['seed']}: {_money(s['firms'][FOCAL]['net_income'])}"
        for s in summaries
        if FOCAL in s["firms"]
    ]
    return f"{FOCAL} per seed — " + "; ".join(focal) if focal else None


def _policies(rows: list[dict]) -> str:
    from rich.markup import escape

    return escape(" | ".join(dict.fromkeys(r["policy"] for r in rows)))


def _seeds_title(summaries: list[dict]) -> str:
    return f"CoffeeBench, {len(summaries)} seeds: net income per firm"


def _seeds_table(summaries: list[dict], per_seed: bool) -> Table:
    from rich.table import Table

    table = Table(title=_seeds_title(summaries))
    table.caption = None if per_seed else _focal_caption(summaries)
    _text_column(table, "firm", wrap=False)
    _text_column(table, "policy")
    for summary in summaries if per_seed else []:
        _number_column(table, f"seed {summary['seed']}")
    for column in ("mean", "sd", "min", "max", "bankrupt"):
        _number_column(table, column)
    for firm_id in summaries[0]["firms"]:
        rows = [s["firms"][firm_id] for s in summaries]
        cells = [firm_id, _policies(rows)]
        cells += [_money(r["net_income"]) for r in rows] if per_seed else []
        cells += [_money(value) for value in _seed_stats(rows).values()]
        cells.append(f"{sum(1 for r in rows if r['bankrupt'])}/{len(rows)}")
        table.add_row(*cells)
    return table


def _seeds_long(summaries: list[dict]) -> Table:
    """The across-seeds figures one per row (firm, statistic), for numbers too wide to
    stand side by side."""
    from rich.table import Table

    table = Table(title=_seeds_title(summaries), caption=_focal_caption(summaries))
    _text_column(table, "firm", wrap=False)
    _text_column(table, "policy")
    _text_column(table, "")
    _number_column(table, "net income $")
    for firm_id in summaries[0]["firms"]:
        rows = [s["firms"][firm_id] for s in summaries]
        stats = _seed_stats(rows)
        bankrupt = f"{sum(1 for r in rows if r['bankrupt'])}/{len(rows)}"
        for i, (name, value) in enumerate(stats.items()):
            first = i == 0
            table.add_row(
                firm_id if first else "", _policies(rows) if first else "", name, _money(value)
            )
        table.add_row("", "", "bankrupt", bankrupt, end_section=True)
    return table


def yardstick_table(yardstick: Yardstick, summaries: list[dict]) -> Table | None:
    """roaster_A's result beside its yardstick (``econbench.runs.coffee.yardstick``): the
    passive floor, the heuristic baseline and the duopoly bound on the same background,
    horizon and seeds; ``None`` when roaster_A has no score or there is no yardstick."""
    import statistics

    from rich.markup import escape
    from rich.table import Table

    incomes = [float(s["firms"][FOCAL]["net_income"]) for s in summaries if FOCAL in s["firms"]]
    if not incomes or yardstick.unavailable is not None:
        return None
    result = statistics.fmean(incomes)
    n = len(yardstick.seeds)
    over = f"seed {yardstick.seeds[0]}" if n == 1 else f"mean of {n} seeds"
    table = Table(
        title=f"{FOCAL}'s yardstick ({over}, {yardstick.days} days)",
        caption=f"Background {escape(yardstick.background)}, condition {yardstick.condition}. "
        f"Headroom (duopoly bound − {FOCAL}): {_money(yardstick.headroom(result))}. "
        f"Edge = {FOCAL} − the row.",
    )
    _text_column(table, "")
    _number_column(table, "net income $")
    _number_column(table, f"{FOCAL}'s\nedge $")
    mine = "this run" if len(incomes) == 1 else f"mean of these {len(incomes)} runs"
    table.add_row(f"{FOCAL} ({mine})", _money(result), "")
    table.add_row(
        "passive floor (waits)",
        _money(yardstick.passive_mean),
        _money(yardstick.vs_passive(result), signed=True),
    )
    table.add_row(
        "heuristic baseline",
        _money(yardstick.heuristic_mean),
        _money(yardstick.vs_heuristic(result), signed=True),
    )
    table.add_row(
        "duopoly bound (paper, App. G)",
        _money(yardstick.bound),
        _money(result - yardstick.bound, signed=True),
    )
    return table


def print_yardstick(configs: list[RunConfig], summaries: list[dict]) -> None:
    """The yardstick beside the result tables: measured once per background, horizon and
    seed, then read from its cache (``econbench.runs.coffee.yardstick``). A failure to
    measure it is reported and never fails the run that was just written."""
    from econbench.runs.coffee import yardstick

    played = configs[: len(summaries)]
    try:
        for config, summary in zip(played, summaries, strict=True):
            yardstick.remember(config, summary)
        measured = yardstick.measure(played[0], [c.seed for c in played])
    except Exception as exc:  # a display extra: the run itself is complete and written
        stderr_console().print(f"no yardstick: {exc}", markup=False, highlight=False)
        return
    table = yardstick_table(measured, summaries)
    if table is not None:
        stdout_console().print(table)
    elif measured.unavailable is not None:
        stdout_console().print(
            f"No yardstick for {FOCAL}: {measured.unavailable}.", markup=False, highlight=False
        )


@app.command("headroom")
def headroom_command(
    config_file: Annotated[
        Path | None, typer.Option("--config", help="TOML file whose [economy] to analyse.")
    ] = None,
    days: Annotated[
        int | None, typer.Option(help="Horizon in days (default 90).", **int_option())
    ] = None,
) -> None:
    """The paper's headroom analysis: an upper bound on roaster_A's net income."""
    from rich.table import Table

    from econbench.coffee.headroom import both_regimes

    try:
        config = load_config(config_file, {"days": days})
    except ConfigError as exc:
        raise fail(str(exc)) from None
    rows = both_regimes(config.economy, config.days)
    table = Table(title=f"Headroom of roaster_A over {config.days} days (docs/coffeebench.md §16)")
    table.add_column("")
    for row in rows:
        table.add_column(row.regime, justify="right")
    lines = [
        ("specialty green (kg)", "specialty_green_kg", "{:,.0f}"),
        ("regular green (kg)", "regular_green_kg", "{:,.0f}"),
        ("roasted specialty sold (kg)", "roasted_specialty_kg", "{:,.1f}"),
        ("roasted regular sold (kg)", "roasted_regular_kg", "{:,.1f}"),
        ("wholesale price specialty ($/kg)", "wholesale_specialty", "{:,.2f}"),
        ("wholesale price regular ($/kg)", "wholesale_regular", "{:,.2f}"),
        ("revenue ($)", "revenue", "{:,.2f}"),
        ("green cost ($)", "green_cost", "{:,.2f}"),
        ("roasting labour ($)", "labour", "{:,.2f}"),
        ("opex ($)", "opex", "{:,.2f}"),
        ("net income ($)", "net_income", "{:,.2f}"),
    ]
    for label, key, fmt in lines:
        table.add_row(label, *(fmt.format(getattr(r, key)) for r in rows))
    stdout_console().print(table)
    duopoly = rows[1].net_income
    if duopoly <= 0:
        stdout_console().print("The duopoly bound is not positive under this economy.")
    elif config.days == PAPER_DAYS and config.economy == EconomyConfig():
        stdout_console().print(
            f"The best model in the paper (+$3,109) reached {3109 / duopoly:.1%} of the "
            "duopoly bound."
        )
    else:
        stdout_console().print(
            "The paper's figures (best model +$3,109 of ≈ $23,800) are for its own 90-day "
            "economy; no comparison is made for this horizon or economy."
        )


@app.command("exploits")
def exploits_command(
    seeds: Annotated[
        str, typer.Option(help="Seeds: N, A-B, or a comma list (e.g. 0-2,7).")
    ] = "0-2",
    days: Annotated[int, typer.Option(help="Days per run.", **int_option(3, MAX_DAYS))] = 90,
    background: Annotated[
        str, typer.Option(help="The other firms' policy: passive, scripted, negotiating, …")
    ] = "passive",
    random_trials: Annotated[
        int, typer.Option("--random", help="Random-search plans per seed.", **int_option(0))
    ] = 20,
    tactic: Annotated[
        list[str], typer.Option("--tactic", help="Only this tactic (repeatable).")
    ] = [],  # noqa: B006 - typer needs a literal default for repeatable options
    check: Annotated[
        bool, typer.Option(help="Exit 1 if any tactic's best gain exceeds the tolerance.")
    ] = False,
    tolerance: Annotated[
        float, typer.Option(help="Dollars of rounding allowed per tactic (default 0.50).")
    ] = 0.50,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="Write the figures as JSON here.")
    ] = None,
) -> None:
    """Search for collusion that pays: a group trading only among itself vs doing nothing."""
    import json

    from rich.table import Table

    from econbench.allo.game.stream import parse_seeds
    from econbench.coffee.exploits import (
        TACTIC_NAMES,
        UnknownBackgroundError,
        check_background,
        plan_sources,
        run_search,
    )

    try:
        seed_list = parse_seeds(seeds)
        check_background(background)
    except (ValueError, UnknownBackgroundError) as exc:
        raise fail(str(exc)) from None
    unknown = [t for t in tactic if t not in TACTIC_NAMES]
    if unknown:
        raise fail(f"unknown tactic(s) {', '.join(unknown)}; choose from {', '.join(TACTIC_NAMES)}")
    sources = plan_sources(tactic or None, days, random_trials)
    report = run_search(sources, seed_list, days, background, tolerance=tolerance)
    table = Table(
        title=f"Exploit search: {len(seed_list)} seed(s), {days} days, background {background} "
        f"({report.wall_s:.1f} s); gain = group net income with the plan − without it"
    )
    table.add_column("tactic", no_wrap=True)
    table.add_column("group (best run)", no_wrap=True)
    for column in ("runs", "traded", "deals", "returns"):
        table.add_column(column, justify="right")
    table.add_column("best $", justify="right")
    table.add_column("best traded $", justify="right")
    table.add_column("mean $", justify="right")
    notes = []
    for row in report.results:
        best = row.best_trading or row.best
        style = "bold red" if row.best_gain > tolerance else "green"
        table.add_row(
            row.tactic,
            "+".join(best.plan.group),
            str(row.runs),
            str(row.trading_runs),
            str(row.deals),
            str(row.returns),
            f"[{style}]{row.best_gain:,.2f}[/]",
            "–" if row.best_trading is None else f"{row.best_trading.gain / 100:,.2f}",
            f"{row.mean_gain:,.2f}",
        )
        notes.append(
            f"  {row.tactic}: seed {best.seed}, {best.deals}/{best.planned_trades} deals"
            + (f", bankrupt {','.join(best.bankrupt)}" if best.bankrupt else "")
            + f": {best.plan.describe(2)}"
        )
    stdout_console().print(table)
    stdout_console().print("The best run of each tactic in which the group traded:", markup=False)
    for note in notes:
        stdout_console().print(note, markup=False, soft_wrap=True)
    if json_file is not None:
        json_file.write_text(json.dumps(report.to_dict(), indent=2))
        stdout_console().print(f"Figures written to [bold]{json_file}[/]")
    failing = report.failing()
    if failing:
        stdout_console().print(
            f"[bold red]{len(failing)} tactic(s) gain more than ${tolerance:.2f}:[/] "
            + ", ".join(r.tactic for r in failing)
        )
    else:
        stdout_console().print(f"[green]No tactic gains more than ${tolerance:.2f}.[/]")
    if check and failing:
        raise typer.Exit(code=1)


@app.command("background-exploits")
def background_exploits_command(
    seeds: Annotated[
        str, typer.Option(help="Seeds: N, A-B, or a comma list (e.g. 0-2,7).")
    ] = "0-2",
    days: Annotated[int, typer.Option(help="Days per run.", **int_option(3, MAX_DAYS))] = 90,
    background: Annotated[
        str | None,
        typer.Option(help="The other firms' policy (default: the default background)."),
    ] = None,
    tactic: Annotated[
        list[str], typer.Option("--tactic", help="Only this tactic (repeatable).")
    ] = [],  # noqa: B006 - typer needs a literal default for repeatable options
    check: Annotated[
        bool,
        typer.Option(
            help="Exit 1 if a tactic pays: mean edge over the threshold, 95 % interval above 0."
        ),
    ] = False,
    threshold: Annotated[
        float | None,
        typer.Option(help="Dollars of mean edge per run allowed per tactic (default 250)."),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Worker processes for the runs.", **int_option(1, 64))
    ] = 2,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="Write the figures as JSON here.")
    ] = None,
) -> None:
    """Search for probes of the background that pay: roaster_A alone vs a matched control.

    Each tactic (bisecting the retailers' prices, laddering the farms' floors, pumping
    roaster_B's price memory, broken promises, message floods, reselling the rival's coffee,
    end-of-run dumping, …) plays roaster_A against the background; its edge on a seed is
    roaster_A's net income minus that of the control roastery, which trades at public
    market prices. A tactic pays when its mean edge is over the threshold (default $250 a
    run, half the $500 bar set for bisection; bisecting the old negotiating background earns
    $7,773) and its 95 % interval over the seeds lies above zero, i.e. beyond the noise a
    change of trading alone gives a matched pair (docs/coffeebench.md §11).
    """
    from rich.markup import escape
    from rich.table import Table

    from econbench.allo.game.stream import parse_seeds
    from econbench.coffee.exploits import (
        BACKGROUND_TACTICS,
        DEFAULT_THRESHOLD,
        UnknownBackgroundError,
        default_background,
        run_background_search,
    )

    limit = DEFAULT_THRESHOLD if threshold is None else threshold
    try:
        seed_list = parse_seeds(seeds)
        unknown = [t for t in tactic if t not in BACKGROUND_TACTICS]
        if unknown:
            raise ValueError(
                f"unknown tactic(s) {', '.join(unknown)}; "
                f"choose from {', '.join(BACKGROUND_TACTICS)}"
            )
        report = run_background_search(
            tactic or None,
            seed_list,
            days,
            background or default_background(),
            threshold=limit,
            workers=workers,
        )
    except (ValueError, UnknownBackgroundError) as exc:
        raise fail(str(exc)) from None
    per_seed = len(seed_list) <= MAX_SEED_COLUMNS
    table = Table(
        title=f"Background-exploit search: {len(seed_list)} seed(s), {days} days, background "
        f"{escape(report.background)} ({report.runs} runs, {report.wall_s:.1f} s); edge = "
        "roaster_A's net income with the tactic − with the control"
    )
    table.add_column("tactic", no_wrap=True)
    table.add_column("mean edge $", justify="right")
    table.add_column("95 % interval $", justify="right")
    for seed in seed_list if per_seed else []:
        table.add_column(f"seed {seed}", justify="right")
    for column in ("min $", "max $", "control mean $"):
        table.add_column(column, justify="right")
    for row in report.results:
        best = row.best
        style = "bold red" if best.pays(limit) else "green"
        low, high = best.interval
        interval = "–" if low != low else f"{low:,.0f} to {high:,.0f}"  # NaN: one seed
        cells = [row.tactic, f"[{style}]{row.mean_edge:,.2f}[/]", interval]
        cells += [f"{e:,.2f}" for e in best.edges] if per_seed else []
        cells += [f"{min(best.edges):,.2f}", f"{max(best.edges):,.2f}"]
        cells.append(f"{best.control_mean:,.2f}")
        table.add_row(*cells)
    stdout_console().print(table)
    stdout_console().print("The best variant of each tactic:", markup=False)
    for row in report.results:
        stdout_console().print(
            f"  {row.tactic}: {row.best.describe()}", markup=False, soft_wrap=True
        )
    if json_file is not None:
        import json

        json_file.write_text(json.dumps(report.to_dict(), indent=2))
        stdout_console().print(f"Figures written to [bold]{escape(str(json_file))}[/]")
    failing = report.failing()
    if failing:
        stdout_console().print(
            f"[bold red]{len(failing)} tactic(s) pay: over ${limit:,.2f} a run, beyond the "
            "seeds' noise:[/] " + ", ".join(r.tactic for r in failing)
        )
    else:
        stdout_console().print(
            f"[green]No tactic pays (over ${limit:,.2f} a run with its interval above 0).[/]"
        )
    if check and failing:
        raise typer.Exit(code=1)


def _register_play() -> None:
    """``econbench coffee play``: a person plays a firm (``econbench.runs.play``)."""
    from econbench.runs.play.coffee_cli import play_command

    app.command("play")(play_command)


_register_play()
