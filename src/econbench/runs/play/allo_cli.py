"""``econbench allo play``: a person plays an AlloBench cell, in the browser or the terminal."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from econbench.allo.episodes.runner import PAPER_TASKS, CellSpec
from econbench.runs.limits import int_option

WHOLE_NUMBER = int_option()


def play(
    framing: Annotated[str, typer.Option(help="Framing rung: r0, r1, r2 or r3 (or r0-tool).")],
    name: Annotated[
        str | None,
        typer.Option(
            help="Your player name: the run is recorded as human:<name> (default: your login "
            "name). Never pooled with a model or a policy."
        ),
    ] = None,
    condition: Annotated[
        str | None,
        typer.Option(
            help="The paper's protocol, exactly as a model is sent it (default frontier); "
            "see docs/allobench.md §9."
        ),
    ] = None,
    episodes: Annotated[
        int, typer.Option(help="Episodes to play, from --seed.", **WHOLE_NUMBER)
    ] = 1,
    seeds: Annotated[
        str | None, typer.Option(help='Seeds instead of --episodes, e.g. "2000-2002".')
    ] = None,
    seed: Annotated[int, typer.Option(help="First seed.", **WHOLE_NUMBER)] = 2000,
    tasks: Annotated[
        int,
        typer.Option(
            help="Tasks per episode (the paper: 60; fewer for a short game).", **WHOLE_NUMBER
        ),
    ] = PAPER_TASKS,
    budget: Annotated[int, typer.Option(help="Build budget B.", **WHOLE_NUMBER)] = 3,
    cost: Annotated[float, typer.Option(help="Build charge K (game points per build).")] = 0.0,
    skin: Annotated[
        str, typer.Option(help="R0 skin: default, chest, quiver, cauldron.")
    ] = "default",
    instances: Annotated[
        str, typer.Option(help="R1-R3 problem instances: paper or econbench.")
    ] = "paper",
    out: Annotated[
        Path | None, typer.Option(help="Output directory (default runs/allo/<cell>).")
    ] = None,
    tui: Annotated[
        bool, typer.Option("--tui", help="Play in the terminal (the prompt as text).")
    ] = False,
    open_page: Annotated[
        bool, typer.Option("--open", help="Play in the browser, and open the page.")
    ] = False,
    serve: Annotated[
        bool,
        typer.Option(
            "--serve", help="Play in the browser, without opening it: print the page's URL."
        ),
    ] = False,
    port: Annotated[
        int,
        typer.Option(help="Port of the page on 127.0.0.1 (0: a free one).", **int_option(0, 65535)),
    ] = 0,
    overwrite: Annotated[
        bool, typer.Option(help="Start over a game already in the output directory.")
    ] = False,
    sandbox_allow_weak: Annotated[
        bool,
        typer.Option(
            "--sandbox-allow-weak",
            help="Run R3 even where its sandbox lacks layers of the full one.",
        ),
    ] = False,
) -> None:
    """Play an AlloBench cell yourself, seeing exactly what a model is sent.

    Your replies are the model's: R0 a text (DECISION: KEEP or PASS), R1 a claim_solver or
    skip_solver call, R2 claim_solver with your code, R3 scripts run in econbench's sandbox
    and submit_answer. The cell is scored and recorded like a model's, as human:<name>.

    In the browser when a display is there (--open; --serve only prints the URL), else in the
    terminal (--tui; piped input is read one command per line). Every move is saved at once:
    after Ctrl-C or a kill, the same command (or `econbench resume DIR`) continues.

    Exit codes: 0 played to the end, 2 bad input, 130 left (all kept)."""
    from econbench.runs.allo import cli as allo_cli
    from econbench.runs.play.allo_play import (
        PlayRefused,
        choose_mode,
        continuing,
        play_in_browser,
        play_in_terminal,
        player,
    )
    from econbench.runs.play.allo_terminal import TerminalSeat

    try:
        who = player(name)
        config = allo_cli._with_tasks(allo_cli.StreamConfig(), tasks)
        chosen = allo_cli._condition(condition, "paper")
        spec = CellSpec(
            framing=framing.strip().lower(),
            policy=who,
            seeds=allo_cli._seeds(None if seeds else episodes, seeds, seed),
            cost=cost,
            budget=budget,
            skin=skin,
            config=config,
            condition=chosen,
            instances=instances.strip().lower(),
        )
        allo_cli._check(replace(spec, policy="never"))  # the cell's settings; the player's
        # name was checked above, and a person's factory needs their seat, made below
        target = out if out is not None else allo_cli.DEFAULT_OUT / spec.slug()
        allo_cli._out_dir(target)
        mode = choose_mode(tui=tui, browser=open_page or serve, interactive=sys.stdin.isatty())
        allo_cli._sandbox_preflight([spec], sandbox_allow_weak)
        framing_obj = spec.make_framing()
        resume = continuing(spec, target, framing_obj, overwrite)
    except (allo_cli.UsageError, PlayRefused) as exc:
        allo_cli._fail(str(exc))
    console = Console(stderr=True)
    try:
        if mode == "terminal":
            outcome = play_in_terminal(spec, target, framing_obj, TerminalSeat(), resume=resume)
        else:
            outcome = play_in_browser(
                spec,
                target,
                framing_obj,
                resume=resume,
                open_page=not serve,
                port=port,
                echo=_to_stderr,
            )
    except KeyboardInterrupt:
        _leave(console, target)
    _end_of_game(console, spec, outcome, target)


def register(app: typer.Typer) -> None:
    """Add ``play`` to ``econbench allo``."""
    app.command("play")(play)


def resume_person(run_dir: Path, *, force: bool, browser: bool) -> None:
    """``econbench resume`` on an AlloBench cell a person plays: continue it with them and
    exit (0 over, 1 stopped, 2 refused, 130 left); return when no person plays ``run_dir``."""
    from econbench.runs.allo.cell import CellResumeError, CellStopped
    from econbench.runs.lock import RunLockedError
    from econbench.runs.play.allo_play import (
        PlayRefused,
        person_cell,
        resume_person_cell,
    )

    try:
        spec = person_cell(run_dir)
    except PlayRefused as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if spec is None:
        return
    console = Console(stderr=True)
    try:
        outcome = resume_person_cell(run_dir, force=force, browser=browser, echo=_to_stderr)
    except (CellResumeError, RunLockedError, PlayRefused) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    except CellStopped as exc:
        console.print(f"stopped: {exc}", soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(code=1) from None
    except KeyboardInterrupt:
        _leave(console, run_dir)
    _end_of_game(console, spec, outcome, run_dir)
    raise typer.Exit(code=0)


def _leave(console: Console, out: Path) -> NoReturn:
    """The person left: how to come back, and exit code 130 (everything is kept)."""
    from econbench.runs.play.allo_play import left_message

    console.print(left_message(out), soft_wrap=True, highlight=False, markup=False)
    raise typer.Exit(code=130)


def _end_of_game(console: Console, spec: CellSpec, outcome: Any, out: Path) -> None:
    """The cell's table when the person played it to the end, else ``_leave``."""
    if outcome.status == "left":
        _leave(console, out)
    assert outcome.summary is not None
    _print_summary(spec, outcome.summary, out)


def _print_summary(spec: CellSpec, summary: dict[str, Any], out: Path) -> None:
    from econbench.runs.allo import cli as allo_cli

    Console().print(allo_cli._run_table(summary, f"AlloBench {spec.framing} · {spec.policy}"))
    typer.echo(f"wrote {out}/episodes.jsonl, summary.json, config.json")


def _to_stderr(text: str) -> None:
    typer.echo(text, err=True)
