"""``econbench resume RUN_DIR``: continue a killed or stopped run of either benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from econbench.agents.models.base import ModelError
from econbench.agents.models.errors import ModelConfigError
from econbench.coffee.config import MAX_DAYS, ConfigError
from econbench.runs.benchmark import ResumeError, StoppedError, get_benchmark
from econbench.runs.checkpoint import RunFileError
from econbench.runs.cost_guard import EXIT_COST_LIMIT, stopped_by_limit
from econbench.runs.cost_preflight import CostLimitError, check_cost_limit
from econbench.runs.layout import benchmark_of
from econbench.runs.limits import int_option
from econbench.runs.lock import RunLockedError
from econbench.runs.resume import resume_run, run_status
from econbench.runs.store import storage_stop


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def _changed_config(
    run_dir: Path, config_file: Path | None, days: int | None, agent: list[str]
) -> Any:
    """The saved config with the command line's changes, or ``None`` when none was asked."""
    if config_file is None and days is None and not agent:
        return None
    name = benchmark_of(run_dir)
    if name is None:
        raise ValueError(f"{run_dir} holds no run whose config could be changed")
    return get_benchmark(name).changed_config(run_dir, config_file, days, agent)


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
            int | None,
            typer.Option(
                help="CoffeeBench: change the horizon (needs --force).",
                **int_option(1, MAX_DAYS),
            ),
        ] = None,
        agent: Annotated[
            list[str],
            typer.Option(
                "--actor", "--agent", help="CoffeeBench: FIRM=ACTOR changes (need --force)."
            ),
        ] = [],  # noqa: B006 - typer needs a literal default for repeatable options
        cache: Annotated[
            str | None,
            typer.Option(help="Response cache file ('default' for the user cache)."),
        ] = None,
        quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
        open_page: Annotated[
            bool,
            typer.Option("--open", help="A person's game: continue it in the browser."),
        ] = False,
        cost_limit: Annotated[
            float | None,
            typer.Option(
                "--cost-limit",
                metavar="USD",
                help="Stop the run (resumable) once it has cost this many dollars in all: what "
                "it cost before it stopped, plus its new model calls.",
            ),
        ] = None,
    ) -> None:
        """Continue a run that was killed or stopped, from its last checkpoint.

        The run keeps its directory; the events of the tick that was in flight are dropped
        and redone. The config must be unchanged unless --force. A game a person plays
        (human:<name>) goes on with them at the terminal (--open: in the browser).
        """
        if not run_dir.is_dir():
            raise _fail(f"{run_dir} is not a directory")
        from econbench.runs.play.allo_cli import resume_person

        resume_person(run_dir, force=force, browser=open_page)  # returns if no person plays
        from econbench.runs.play.coffee_cli import resume_person as resume_coffee_person

        resume_coffee_person(run_dir, force=force, browser=open_page)  # the same, CoffeeBench
        try:
            cache_path = None
            if cache is not None:
                from econbench.agents.models.cache import cache_path_from_option

                cache_path = cache_path_from_option(cache)
            changed = _changed_config(run_dir, config_file, days, agent)
            check_cost_limit(cost_limit)
        except (ConfigError, ModelConfigError, ValueError, CostLimitError) as exc:
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

                try:
                    summary: dict[str, Any] = resume_run(
                        run_dir,
                        force=force,
                        cache=cache_path,
                        config=changed,
                        on_progress=on_progress,
                        cost_limit=cost_limit,
                    )
                except BaseException:
                    progress.live.transient = True  # the error, not a stale bar, is last
                    raise
        except (ResumeError, ModelConfigError, ConfigError, RunFileError) as exc:
            raise _fail(str(exc)) from None
        except RunLockedError as exc:
            raise _fail(str(exc)) from None
        except (StoppedError, ModelError) as exc:
            if stopped_by_limit(exc) is not None:
                console.print(
                    f"[bold red]stopped:[/] {escape(str(exc))}; what was played is kept: "
                    f"`econbench resume {escape(str(run_dir))} --cost-limit …` with a higher limit "
                    "continues it",
                    soft_wrap=True,
                    highlight=False,
                )
                raise typer.Exit(code=EXIT_COST_LIMIT) from None
            console.print(
                f"[bold red]stopped:[/] {escape(str(exc))}", soft_wrap=True, highlight=False
            )
            raise typer.Exit(code=1) from None
        except OSError as exc:  # the run layer stops on these itself; this is the backstop
            message = escape(storage_stop(run_dir, exc))
            console.print(f"[bold red]stopped:[/] {message}", soft_wrap=True, highlight=False)
            raise typer.Exit(code=1) from None
        except KeyboardInterrupt:
            console.print(
                f"[bold red]interrupted:[/] what was played is kept; `econbench resume "
                f"{escape(str(run_dir))}` continues from the last checkpoint again",
                soft_wrap=True,
                highlight=False,
            )
            raise typer.Exit(code=130) from None
        typer.echo(f"resumed {run_dir} (was {status}); status: {summary.get('status')}")
