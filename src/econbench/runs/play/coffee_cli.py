"""The command line of a person's CoffeeBench game: ``econbench coffee play`` and the part of
``econbench resume`` that seats the person again."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from econbench.coffee.config import FOCAL_FIRM
from econbench.runs.limits import int_option


def play_command(
    firm: Annotated[
        str, typer.Option(help="The firm you play: farmer_A … retailer_B.")
    ] = FOCAL_FIRM,
    name: Annotated[
        str | None,
        typer.Option(help="Your name in the run, recorded as human:NAME (default: login name)."),
    ] = None,
    config_file: Annotated[
        Path | None, typer.Option("--config", help="TOML file: [run], [agents], [economy].")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Random seed (default 0).", **int_option())
    ] = None,
    days: Annotated[
        int | None, typer.Option(help="Days to play (default 90).", **int_option())
    ] = None,
    agent: Annotated[
        list[str],
        typer.Option(
            "--actor",
            "--agent",
            help="FIRM=ACTOR: who plays another firm, as for `coffee run` (the offline "
            "background by default, or a model).",
        ),
    ] = [],  # noqa: B006 - typer needs a literal default for repeatable options
    out: Annotated[
        Path | None, typer.Option(help="Run directory (default runs/coffee/…-play-…).")
    ] = None,
    overwrite: Annotated[
        bool, typer.Option(help="Replace the files of an existing run dir.")
    ] = False,
    tui: Annotated[
        bool, typer.Option("--tui", help="Play in the terminal (the default with no display).")
    ] = False,
    open_page: Annotated[
        bool,
        typer.Option("--open", help="Play in the browser (the default when there is a display)."),
    ] = False,
    port: Annotated[
        int,
        typer.Option(help="The page's port on 127.0.0.1 (0: a free one).", **int_option(0, 65535)),
    ] = 0,
) -> None:
    """Play a firm yourself, against the offline background or models.

    You see what a model sees (the observation, the tool results) and act with the same
    tools, under the same clock and 20 actions a day. In the browser each tool has a form; in
    the terminal type `TOOL ARG…` or `TOOL key=value` (`help`, tab completion), one command a
    line (piped commands too). `wait` ends your day. The run is recorded as human:NAME; every
    action is saved as it is made, so `econbench resume RUN_DIR` continues a game stopped
    anywhere. Exit codes: 0 over, 1 stopped (a model failure, a full disk), 2 bad input,
    130 you left (resumable)."""
    from econbench.agents.models.errors import ModelConfigError
    from econbench.coffee.config import ConfigError
    from econbench.coffee.policies import UnknownPolicyError
    from econbench.runs.coffee.agents import validate_agents
    from econbench.runs.coffee.cli import fail, plays_model, run_estimate, stderr_console
    from econbench.runs.coffee.config import PAPER_CONDITION, load_config, parse_agents
    from econbench.runs.coffee.run import check_start
    from econbench.runs.cost_preflight import announce
    from econbench.runs.play.coffee_play import choose_front, play_config, player_name
    from econbench.runs.store import check_out_dir, default_run_dir

    try:
        actor = player_name(name)
        others = parse_agents(agent)
        if firm in others:
            raise ValueError(f"you play {firm}: --actor cannot give it to {others[firm]!r}")
        config = load_config(config_file, {"seed": seed, "days": days, "agents": others or None})
        if config.condition == PAPER_CONDITION:
            raise ValueError(
                "a person plays the hardened condition only (the paper's protocol has no seat "
                'for one); drop condition = "paper"'
            )
        config = play_config(config, firm, actor)
        validate_agents(config, seats={firm: actor})
        label = f"play-{firm}-{actor.removeprefix('human:')}-seed{config.seed}"
        out = out or default_run_dir("coffee", label)
        check_out_dir(out)
        check_start(out, overwrite)
        if plays_model(config):  # the other firms' models cost money, as in `coffee run`
            estimate = run_estimate([config], [out])
            announce(estimate, stderr_console(), "Cost estimate of the model-played firms")
    except (ConfigError, UnknownPolicyError, ModelConfigError, ValueError) as exc:
        raise fail(str(exc)) from None
    front = choose_front(tui, open_page)
    summary = _play(
        lambda **kw: _play_coffee(config, out, firm=firm, overwrite=overwrite, **kw),
        out,
        front,
        port,
    )
    _print_summary(summary, out)


def _play_coffee(config: Any, out: Path, **kw: Any) -> dict[str, Any]:
    from econbench.runs.play.coffee_play import play_coffee

    return play_coffee(config, out, **kw)


def resume_person(run_dir: Path, *, force: bool, browser: bool) -> None:
    """``econbench resume`` on a CoffeeBench game a person plays: seat them again (in the
    terminal, or the browser with ``browser``) and exit (0 over, 1 stopped, 2 refused, 130
    left); return when no person plays ``run_dir`` (it resumes as any run)."""
    from econbench.runs.benchmark import ResumeError
    from econbench.runs.checkpoint import RunFileError
    from econbench.runs.coffee.cli import fail
    from econbench.runs.layout import benchmark_of
    from econbench.runs.play.coffee_play import person_of, resume_coffee
    from econbench.runs.resume import check_resumable

    if benchmark_of(run_dir) != "coffee" or person_of(run_dir) is None:
        return
    try:
        check_resumable(run_dir, force)
        front = "browser" if browser else "terminal"
        summary = _play(lambda **kw: resume_coffee(run_dir, force=force, **kw), run_dir, front, 0)
    except (ResumeError, RunFileError) as exc:
        raise fail(str(exc)) from None
    _print_summary(summary, run_dir)
    raise typer.Exit(code=0)


def _play(start: Any, out: Path, front: str, port: int) -> dict[str, Any]:
    """Play (``start``), mapping how a game ends to the command's messages and exit codes."""
    from econbench.agents.models.human import PlayerLeft
    from econbench.runs.coffee.cli import fail, stopped
    from econbench.runs.coffee.run import RunStopped
    from econbench.runs.lock import RunLockedError
    from econbench.runs.store import RunDirError

    try:
        return start(
            front=front,
            port=port,
            open_page=True,
            linger=front == "browser" and sys.stdin.isatty(),
            echo=typer.echo,
        )
    except PlayerLeft as exc:
        stopped(
            f"{exc}; the game is kept in {out}: `econbench resume {out}` continues it"
            + (
                " (add --open for the browser)" if front == "terminal" else " (--open: the browser)"
            ),
            [],
        )
        raise typer.Exit(code=130) from None
    except (RunDirError, RunLockedError) as exc:
        raise fail(str(exc)) from None
    except RunStopped as exc:
        stopped(str(exc), [])
        raise typer.Exit(code=1) from None
    except OSError as exc:
        stopped(f"writing {out} failed ({exc.strerror or exc}); `econbench resume {out}`", [])
        raise typer.Exit(code=1) from None


def _print_summary(summary: dict[str, Any], out: Path) -> None:
    from rich.markup import escape

    from econbench.runs.coffee.cli import stdout_console, summary_table

    stdout_console().print(summary_table(summary))
    stdout_console().print(
        f"Game written to [bold]{escape(str(out))}[/] (`econbench view {escape(str(out))}`)"
    )
