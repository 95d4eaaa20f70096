"""A person plays an AlloBench cell: in the terminal or in the browser, started or continued.

The cell is an ordinary one (``econbench.runs.allo.cell.run_cell``) whose player is
``human:<name>``: the person sits in the model's seat, so their moves are recorded in the
cell's ``record.sqlite`` as a model's calls are, the moment they are made. Leaving (``:quit``,
Ctrl-C, the end of piped input, the page's *Stop*) or a killed process loses nothing: the
same command, or ``econbench resume CELL``, replays the recorded moves of the episode in
flight and asks from the first move not made, and the cell ends up byte for byte as if the
game had never stopped. Scores, ``summary.json``, the viewer and the report are a model's.
"""

from __future__ import annotations

import getpass
import os
import sys
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from econbench.agents.models.human import PlayerLeft, human_actor, is_human
from econbench.allo.episodes.runner import CellSpec, Episode, spec_from_config
from econbench.allo.framings.base import Framing
from econbench.runs.allo.cell import check_continuable, continues_cell, run_cell
from econbench.runs.checkpoint import RunFileError, read_checkpoint
from econbench.runs.layout import CONFIG, read_json
from econbench.runs.play.allo_actor import HumanActorFactory
from econbench.runs.play.allo_terminal import TerminalSeat

Mode = Literal["terminal", "browser"]
Echo = Callable[[str], None]


class PlayRefused(ValueError):
    """The game cannot be played as asked (one line, said before anything is written)."""


@dataclass
class Outcome:
    """How a game ended: ``over`` (every episode played: ``summary``) or ``left`` (the
    person left; what they played is kept)."""

    status: Literal["over", "left"]
    summary: dict[str, Any] | None = None


def default_name() -> str:
    """The login name, as a player name (``human:<login>``)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in this environment
        return "player"


def player(name: str | None) -> str:
    """``human:<name>`` for ``name`` (default: the login name); ``PlayRefused`` if it is not
    a valid player name."""
    try:
        return human_actor(name if name is not None else default_name())
    except ValueError as exc:
        hint = "" if name is not None else " (the login name); give --name"
        raise PlayRefused(f"{exc}{hint}") from None


def has_display() -> bool:
    """Whether a browser can be opened here: a desktop session (or macOS, Windows)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def choose_mode(*, tui: bool, browser: bool, interactive: bool) -> Mode:
    """Terminal with ``tui`` or when nothing else can work (piped input, no display), the
    browser when asked (``browser``) or when a display and a terminal are there."""
    if tui and browser:
        raise PlayRefused(
            "--tui plays in the terminal; --open and --serve in the browser: pick one"
        )
    if tui:
        return "terminal"
    if browser:
        return "browser"
    return "browser" if interactive and has_display() else "terminal"


def continuing(spec: CellSpec, out: Path, framing: Framing, overwrite: bool = False) -> bool:
    """Whether ``out`` holds this person's cell to continue (``PlayRefused`` when it holds
    something else, or their cell with other settings)."""
    from econbench.runs.allo.cell import CellResumeError

    try:
        if not continues_cell(out, overwrite):
            return False
        check_continuable(spec, out, framing, HumanActorFactory(spec.policy, TerminalSeat()))
    except CellResumeError as exc:
        if exc.changes is not None:
            shown = "; ".join(exc.changes[:6])
            raise PlayRefused(
                f"{out} holds a game with other settings ({shown}); choose another --out, "
                "or pass --overwrite to start it over"
            ) from None
        raise PlayRefused(str(exc)) from None
    return True


def episodes_done(out: Path) -> int:
    """The episodes a cell has finished (sealed by its checkpoint)."""
    try:
        checkpoint = read_checkpoint(out, "allo")
    except RunFileError:
        return 0
    return int((checkpoint or {}).get("episodes") or 0)


def play_in_terminal(
    spec: CellSpec,
    out: Path,
    framing: Framing,
    seat: TerminalSeat,
    *,
    resume: bool,
    force: bool = False,
) -> Outcome:
    """Play the cell's missing episodes with the person at ``seat``."""
    seat.start(spec.policy, spec.slug(), str(out), len(spec.seeds), episodes_done(out))

    def over(episode: Episode) -> None:
        seat.episode_finished(episode.record)

    try:
        summary = run_cell(
            spec,
            out,
            framing=framing,
            seat=seat,
            on_episode=over,
            resume=resume,
            force=force,
            label=spec.slug(),
        )
    except PlayerLeft:
        return Outcome("left")
    return Outcome("over", summary)


def play_in_browser(
    spec: CellSpec,
    out: Path,
    framing: Framing,
    *,
    resume: bool,
    force: bool = False,
    open_page: bool = True,
    port: int = 0,
    echo: Echo = print,
    ready: Callable[[str], None] | None = None,
) -> Outcome:
    """Play the cell's missing episodes in a page served on the loopback (the viewer's
    server, which shows the cell too). The game plays in a thread; this one waits for it and
    for Ctrl-C. Once the game is over the page stays up (to look at the run) until it is
    closed there or Ctrl-C. ``ready(url)`` is called once the page is served."""
    from econbench.runs.play.allo_browser import PAGE, AlloGame, AlloPlayRoutes
    from econbench.runs.play.seat import RemoteSeat
    from econbench.runs.viewer import Catalog, ViewerServer, serve_in_thread

    seat = RemoteSeat()
    game = AlloGame(
        player=spec.policy,
        cell=spec.slug(),
        framing=spec.framing,
        condition=str(spec.condition),
        out=str(out),
        episodes=len(spec.seeds),
    )
    done: dict[str, Any] = {}

    def play() -> None:
        try:
            done["summary"] = run_cell(
                spec,
                out,
                framing=framing,
                seat=seat,
                on_episode=lambda episode: game.episode_over(episode.record),
                resume=resume,
                force=force,
                label=spec.slug(),
            )
            game.summary = page_summary(done["summary"])
            game.status = "over"
        except PlayerLeft:
            game.status = "left"
        except BaseException as exc:  # shown on the page, raised again here
            done["error"] = exc
            game.status, game.message = "stopped", str(exc)
        finally:
            seat.close()

    out.mkdir(parents=True, exist_ok=True)  # the viewer's catalog is the cell
    server = ViewerServer(Catalog(out), port=port)
    server.play = AlloPlayRoutes(game, seat)
    serve_in_thread(server)
    url = server.url.rstrip("/") + PAGE
    thread = threading.Thread(target=play, name="econbench-allo-play", daemon=True)
    thread.start()
    echo(
        f"{spec.policy} plays {spec.slug()} at {url}  (every move is saved in {out}; "
        "Ctrl-C stops, and the same command continues)"
    )
    if ready is not None:
        ready(url)
    if open_page:
        webbrowser.open(url)
    try:
        while thread.is_alive():
            thread.join(0.25)
        if game.status == "over":
            echo(f"The game is over; {url} shows it until you close it there or press Ctrl-C.")
            while not game.closed.wait(0.25):
                pass
    except KeyboardInterrupt:
        seat.leave("interrupted")
        thread.join(10)
        if game.status == "playing":
            game.status = "left"
    finally:
        server.shutdown()
        server.server_close()
    if "error" in done:
        raise done["error"]
    if game.status == "over":
        return Outcome("over", done["summary"])
    return Outcome("left")


def page_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """The figures the page shows when the game is over (those of ``allo run``'s table)."""
    keys = (
        "episodes",
        "score",
        "score_mean",
        "first_sight_rate",
        "utility_mean",
        "opt_mean",
        "trap_commits_mean",
        "unused_budget_mean",
        "realised_utility_mean",
    )
    return {key: summary[key] for key in keys if key in summary}


def person_cell(run_dir: Path) -> CellSpec | None:
    """The spec of the AlloBench cell in ``run_dir`` when a person plays it, else ``None``."""
    config = read_json(run_dir / CONFIG)
    if not isinstance(config, dict) or not is_human(config.get("policy")):
        return None
    if "framing" not in config:
        return None
    try:
        spec = spec_from_config(config)
        spec.validate()
    except (KeyError, TypeError, ValueError) as exc:
        raise PlayRefused(f"{run_dir / CONFIG} is not a usable cell config: {exc}") from None
    return spec


def resume_person_cell(
    run_dir: Path,
    *,
    force: bool = False,
    browser: bool = False,
    echo: Echo = print,
) -> Outcome:
    """``econbench resume`` on a person's cell: continue it with them in the terminal (or, with
    ``browser``, on the page)."""
    spec = person_cell(run_dir)
    if spec is None:
        raise PlayRefused(f"{run_dir} is not an AlloBench cell played by a person")
    framing = spec.make_framing()
    if browser:
        return play_in_browser(spec, run_dir, framing, resume=True, force=force, echo=echo)
    return play_in_terminal(spec, run_dir, framing, TerminalSeat(), resume=True, force=force)


def left_message(out: Path) -> str:
    """What to tell a person who left: their moves are kept, and how to go on."""
    return (
        f"left: every move is kept in {out}; the same command, or `econbench resume {out}`, "
        "continues from the next one"
    )
