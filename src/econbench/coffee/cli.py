"""``econbench coffee …`` commands: run the economy offline, and the headroom analysis."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from econbench.agents.models.registry import ModelConfigError
from econbench.coffee.agents import validate_agents
from econbench.coffee.config import FIRMS, ConfigError, EconomyConfig, RunConfig, load_config
from econbench.coffee.headroom import both_regimes
from econbench.coffee.policies import UnknownPolicyError
from econbench.coffee.run import RunStopped, run_to_dir
from econbench.runs.store import RunDirError, default_run_dir

PAPER_DAYS = 90
"""The paper's horizon: its headroom figures are comparable only for this economy."""

app = typer.Typer(no_args_is_help=True)
console = Console()
if not console.is_terminal:
    console = Console(width=120)  # logs and pipes: no wrapping at the 80-column default
err_console = Console(stderr=True, width=None if Console(stderr=True).is_terminal else 120)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` as it is (no markup, never wrapped) for exit code 2."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True, highlight=False)
    return typer.Exit(code=2)


def parse_agents(pairs: list[str]) -> dict[str, str]:
    agents: dict[str, str] = {}
    for pair in pairs:
        firm, sep, policy = pair.partition("=")
        firm, policy = firm.strip(), policy.strip()
        if not sep or not firm or not policy:
            raise ConfigError(f"--agent expects FIRM=POLICY, got '{pair}'")
        if firm != "default" and firm not in FIRMS:
            raise ConfigError(
                f"--agent: unknown firm '{firm}' (firms: {', '.join(FIRMS)}, default)"
            )
        agents[firm] = policy
    return agents


def resolve_config(
    config_file: Path | None, seed: int | None, days: int | None, agent: list[str]
) -> RunConfig:
    overrides = {"seed": seed, "days": days, "agents": parse_agents(agent) or None}
    config = load_config(config_file, overrides)
    validate_agents(config)
    return config


@app.command("run")
def run_command(
    config_file: Annotated[
        Path | None, typer.Option("--config", help="TOML file: [run], [agents], [economy].")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Random seed (default 0).")] = None,
    days: Annotated[int | None, typer.Option(help="Days to simulate (default 90).")] = None,
    agent: Annotated[
        list[str],
        typer.Option(
            "--agent",
            help="FIRM=POLICY, repeatable; FIRM may be 'default'. POLICY: negotiating (the "
            "default background), scripted, heuristic, passive; for a roaster also haggle, "
            "markup:X, undercut, hoard; or a model: openai/MODEL, anthropic/MODEL, "
            "google/MODEL, openai-compatible/NAME, hf/PATH (a local model folder).",
        ),
    ] = [],  # noqa: B006 - typer needs a literal default for repeatable options
    out: Annotated[Path | None, typer.Option(help="Run directory (default runs/coffee/…).")] = None,
    overwrite: Annotated[
        bool, typer.Option(help="Replace the files of an existing run dir.")
    ] = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    cache: Annotated[
        str | None,
        typer.Option(help="Response cache file ('default': ~/.cache/econbench/responses.sqlite)."),
    ] = None,
) -> None:
    """Run the coffee economy with scripted firms (no API key needed)."""
    try:
        config = resolve_config(config_file, seed, days, agent)
        cache_path = None
        if cache is not None:  # the cache module (sqlite3, records) only when asked for
            from econbench.agents.models.cache import cache_path_from_option

            cache_path = cache_path_from_option(cache)
    except (ConfigError, UnknownPolicyError, ModelConfigError, ValueError) as exc:
        raise fail(str(exc)) from None
    out = out or default_run_dir("coffee", f"seed{config.seed}")
    progress = NoProgress() if quiet else day_progress()
    with progress:
        task = progress.add_task("run", total=config.days, seed=config.seed)
        try:
            summary = run_to_dir(
                config,
                out,
                overwrite=overwrite,
                on_day=lambda day: progress.update(task, completed=day),
                cache=cache_path,
            )
        except RunDirError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:  # the disk filled up or went away mid-run
            progress.stop()
            err_console.print(
                f"[bold red]stopped:[/] writing {escape(str(out))} failed "
                f"({escape(str(exc.strerror or exc))}); what was written so far is kept: fix "
                f"the cause, then `econbench resume {escape(str(out))}`",
                soft_wrap=True,
                highlight=False,
            )
            raise typer.Exit(code=1) from None
        except RunStopped as exc:
            progress.stop()
            err_console.print(f"[bold red]stopped:[/] {exc}")
            raise typer.Exit(code=1) from None
    console.print(summary_table(summary))
    if summary.get("ended_early"):
        console.print(
            f"[yellow]The run ended early: roaster_A went bankrupt on day "
            f"{summary['firms']['roaster_A']['bankrupt_day']}.[/]"
        )
    console.print(f"Run written to [bold]{out}[/] (summary.json, events.jsonl, daily.jsonl)")


class NoProgress:
    """What ``--quiet`` uses instead of a rich ``Progress``: shows nothing, and so does not
    import ``rich.progress`` (a tenth of a scripted run's start-up)."""

    def __enter__(self) -> NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, *args: object, **fields: object) -> int:
        return 0

    def update(self, *args: object, **fields: object) -> None:
        return None

    def stop(self) -> None:
        return None


def day_progress() -> Any:
    """The run's progress bar: one line, days done out of the horizon."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]CoffeeBench[/] seed {task.fields[seed]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("days"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def summary_table(summary: dict) -> Table:
    table = Table(
        title=f"CoffeeBench seed {summary['seed']}: {summary['days_run']} days, "
        f"{summary['deals']} deals, {summary['consumer_sales_kg']} kg sold to consumers"
    )
    for column in ("firm", "policy", "net income", "revenue", "tool calls", "idle days", "status"):
        table.add_column(
            column, justify="left" if column in ("firm", "policy") else "right", no_wrap=True
        )
    for firm_id, row in summary["firms"].items():
        table.add_row(
            firm_id,
            row["policy"],
            f"{row['net_income']:,.2f}",
            f"{row['revenue']:,.2f}",
            str(row["tool_calls"]),
            str(row["idle_days"]),
            f"bankrupt day {row['bankrupt_day']}" if row["bankrupt"] else "live",
        )
    return table


@app.command("headroom")
def headroom_command(
    config_file: Annotated[
        Path | None, typer.Option("--config", help="TOML file whose [economy] to analyse.")
    ] = None,
    days: Annotated[int | None, typer.Option(help="Horizon in days (default 90).")] = None,
) -> None:
    """The paper's headroom analysis: an upper bound on roaster_A's net income."""
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
    console.print(table)
    duopoly = rows[1].net_income
    if duopoly <= 0:
        console.print("The duopoly bound is not positive under this economy.")
    elif config.days == PAPER_DAYS and config.economy == EconomyConfig():
        console.print(
            f"The best model in the paper (+$3,109) reached {3109 / duopoly:.1%} of the "
            "duopoly bound."
        )
    else:
        console.print(
            "The paper's figures (best model +$3,109 of ≈ $23,800) are for its own 90-day "
            "economy; no comparison is made for this horizon or economy."
        )


@app.command("exploits")
def exploits_command(
    seeds: Annotated[
        str, typer.Option(help="Seeds: N, A-B, or a comma list (e.g. 0-2,7).")
    ] = "0-2",
    days: Annotated[int, typer.Option(help="Days per run.", min=3)] = 90,
    background: Annotated[
        str, typer.Option(help="The other firms' policy: passive, scripted, negotiating, …")
    ] = "passive",
    random_trials: Annotated[
        int, typer.Option("--random", help="Random-search plans per seed.", min=0)
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

    from econbench.allo.stream import parse_seeds
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
    console.print(table)
    console.print("The best run of each tactic in which the group traded:", markup=False)
    for note in notes:
        console.print(note, markup=False, soft_wrap=True)
    if json_file is not None:
        json_file.write_text(json.dumps(report.to_dict(), indent=2))
        console.print(f"Figures written to [bold]{json_file}[/]")
    failing = report.failing()
    if failing:
        console.print(
            f"[bold red]{len(failing)} tactic(s) gain more than ${tolerance:.2f}:[/] "
            + ", ".join(r.tactic for r in failing)
        )
    else:
        console.print(f"[green]No tactic gains more than ${tolerance:.2f}.[/]")
    if check and failing:
        raise typer.Exit(code=1)
