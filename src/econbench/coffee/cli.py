"""``econbench coffee …`` commands: run the economy offline, and the headroom analysis."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from econbench.agents.models.cache import cache_path_from_option
from econbench.agents.models.registry import ModelConfigError
from econbench.coffee.agents import validate_agents
from econbench.coffee.config import FIRMS, ConfigError, RunConfig, load_config
from econbench.coffee.headroom import both_regimes
from econbench.coffee.policies import UnknownPolicyError
from econbench.coffee.run import RunStopped, run_to_dir
from econbench.runs.store import RunDirError, default_run_dir

app = typer.Typer(no_args_is_help=True)
console = Console()
if not console.is_terminal:
    console = Console(width=120)  # logs and pipes: no wrapping at the 80-column default
err_console = Console(stderr=True, width=None if Console(stderr=True).is_terminal else 120)


def fail(message: str) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {message}")
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
            help="FIRM=POLICY, repeatable; FIRM may be 'default'. POLICY: passive, "
            "heuristic, scripted, or a model: openai/MODEL, anthropic/MODEL, google/MODEL, "
            "openai-compatible/NAME, hf/PATH (a local model folder).",
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
        cache_path = cache_path_from_option(cache)
    except (ConfigError, UnknownPolicyError, ModelConfigError, ValueError) as exc:
        raise fail(str(exc)) from None
    out = out or default_run_dir("coffee", f"seed{config.seed}")
    progress = Progress(
        TextColumn("[bold]CoffeeBench[/] seed {task.fields[seed]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("days"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )
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
    table = Table(title=f"Headroom of roaster_A over {config.days} days (spec §16)")
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
    console.print(
        f"The best model in the paper (+$3,109) reached {3109 / duopoly:.1%} of the duopoly bound."
        if duopoly > 0
        else "The duopoly bound is not positive under this economy."
    )
