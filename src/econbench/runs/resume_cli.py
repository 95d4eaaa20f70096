"""``econbench resume RUN_DIR``: continue a killed or stopped run of either benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from econbench.agents.models.base import ModelError
from econbench.agents.models.registry import ModelConfigError
from econbench.runs.layout import CONFIG, read_json


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def _coffee_config(run_dir: Path, config_file: Path | None, days: int | None, agent: list[str]):
    """The saved config with the command line's changes, or ``None`` when none was asked."""
    if config_file is None and days is None and not agent:
        return None
    from pydantic import ValidationError

    from econbench.coffee.cli import parse_agents
    from econbench.coffee.config import ConfigError, RunConfig, format_validation, load_config

    if config_file is not None:
        return load_config(config_file, {"days": days, "agents": parse_agents(agent) or None})
    data = read_json(run_dir / CONFIG)
    if not isinstance(data, dict):
        raise ConfigError(f"{run_dir / CONFIG} is missing or not valid JSON")
    data = dict(data)
    if days is not None:
        data["days"] = days
    if agent:
        data["agents"] = {**(data.get("agents") or {}), **parse_agents(agent)}
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"invalid config: {format_validation(exc)}") from None


def register(app: typer.Typer) -> None:
    @app.command("resume")
    def resume_command(
        run_dir: Annotated[Path, typer.Argument(help="The run directory to continue.")],
        force: Annotated[
            bool,
            typer.Option(help="Continue even if the config or the econbench version changed."),
        ] = False,
        config_file: Annotated[
            Path | None,
            typer.Option("--config", help="CoffeeBench: a changed config (needs --force)."),
        ] = None,
        days: Annotated[
            int | None, typer.Option(help="CoffeeBench: change the horizon (needs --force).")
        ] = None,
        agent: Annotated[
            list[str],
            typer.Option("--agent", help="CoffeeBench: FIRM=POLICY changes (need --force)."),
        ] = [],  # noqa: B006 - typer needs a literal default for repeatable options
        cache: Annotated[
            str | None,
            typer.Option(help="Response cache file ('default' for the user cache)."),
        ] = None,
        quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    ) -> None:
        """Continue a run that was killed or stopped, from its last checkpoint.

        The run keeps its directory; the events of the tick that was in flight are dropped
        and redone. The config must be unchanged unless --force.
        """
        from econbench.allo.runner import CellStopped
        from econbench.coffee.config import ConfigError
        from econbench.coffee.run import RunStopped
        from econbench.runs.checkpoint import RunFileError
        from econbench.runs.lock import RunLockedError
        from econbench.runs.resume import ResumeError, resume_run, run_status

        if not run_dir.is_dir():
            raise _fail(f"{run_dir} is not a directory")
        try:
            cache_path = None
            if cache is not None:
                from econbench.agents.models.cache import cache_path_from_option

                cache_path = cache_path_from_option(cache)
            coffee_config = _coffee_config(run_dir, config_file, days, agent)
        except (ConfigError, ModelConfigError, ValueError) as exc:
            raise _fail(str(exc)) from None
        status = run_status(run_dir)
        console = Console(stderr=True)
        progress = Progress(
            TextColumn(f"[bold]resume[/] {run_dir.name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=quiet,
        )
        try:
            with progress:
                task = progress.add_task("resume", total=None)

                def on_progress(done: int, total: int) -> None:
                    progress.update(task, completed=done, total=total)

                summary: dict[str, Any] = resume_run(
                    run_dir,
                    force=force,
                    cache=cache_path,
                    coffee_config=coffee_config,
                    on_progress=on_progress,
                )
        except (ResumeError, ModelConfigError, ConfigError, RunFileError) as exc:
            raise _fail(str(exc)) from None
        except RunLockedError as exc:
            raise _fail(str(exc)) from None
        except (RunStopped, CellStopped, ModelError) as exc:
            console.print(f"[bold red]stopped:[/] {exc}")
            raise typer.Exit(code=1) from None
        typer.echo(f"resumed {run_dir} (was {status}); status: {summary.get('status')}")
