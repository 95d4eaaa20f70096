"""``econbench coffee play``: a person plays one CoffeeBench firm, in a terminal or a browser.

The game is an ordinary run (``run_to_dir``) whose firm is played by ``human:<name>``
through a :class:`~econbench.runs.play.coffee_person.CoffeeSeat`; the run plays in a thread of
its own while the person's side (the terminal loop, or the page's server) holds the main
thread (:mod:`econbench.runs.play.session`). ``econbench resume`` continues a game with
:func:`resume_coffee`, in the terminal by default or in the browser with ``--open``.
"""

from __future__ import annotations

import getpass
import os
import sys
import time
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from econbench.agents.models.human import human_actor, is_human
from econbench.coffee.config import FIRMS
from econbench.coffee.world import WAIT_TOOL
from econbench.runs.coffee.config import RunConfig
from econbench.runs.layout import CONFIG, read_json
from econbench.runs.play.coffee_person import CoffeeSeat
from econbench.runs.play.seat import RemoteSeat
from econbench.runs.play.session import play_session

Front = Literal["terminal", "browser"]
Echo = Callable[[str], None]
POLL_S = 0.2
"""How often the browser front looks whether the game is over (Ctrl-C gets in between)."""


def player_name(name: str | None) -> str:
    """``human:<name>`` for ``--name`` (default: the login name); ``ValueError`` saying how
    to name oneself when the name cannot be used."""
    if name is None:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            raise ValueError("cannot tell your login name; give one with --name") from None
        try:
            return human_actor(name)
        except ValueError as exc:
            raise ValueError(f"{exc}; give another with --name") from None
    return human_actor(name)


def play_config(config: RunConfig, firm: str, actor: str) -> RunConfig:
    """``config`` with ``firm`` played by the person ``actor``."""
    if firm not in FIRMS:
        raise ValueError(f"unknown firm {firm!r}; firms: {', '.join(FIRMS)}")
    return config.model_copy(update={"agents": {**config.agents, firm: actor}})


def choose_front(tui: bool, open_page: bool) -> Front:
    """The terminal with ``--tui`` or without a display or a terminal to play from; the browser
    with ``--open`` or when a display is there."""
    if tui:
        return "terminal"
    if open_page:
        return "browser"
    if not sys.stdin.isatty():
        return "terminal"  # piped commands: a script plays
    return "browser" if display_available() else "terminal"


def display_available() -> bool:
    """Whether a browser can be opened here (a desktop, or an X / Wayland display)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def play_coffee(
    config: RunConfig,
    out: Path,
    *,
    firm: str,
    front: Front,
    overwrite: bool = False,
    port: int = 0,
    open_page: bool = True,
    linger: bool = False,
    echo: Echo = print,
) -> dict[str, Any]:
    """Play ``config`` (whose ``firm`` a person plays) into ``out``; the run's summary.
    ``PlayerLeft`` when the person left before the end (the run is kept, resumable)."""
    from econbench.runs.coffee.run import run_to_dir

    seat = CoffeeSeat(firm)
    actor = config.policy_for(firm)
    return _session(
        lambda: run_to_dir(config, out, overwrite=overwrite, seats={firm: seat}),
        seat,
        _Front(front, seat, actor, Path(out), port, open_page, linger, echo),
    )


def resume_coffee(
    out: Path,
    *,
    front: Front,
    force: bool = False,
    port: int = 0,
    open_page: bool = True,
    linger: bool = False,
    echo: Echo = print,
) -> dict[str, Any]:
    """Continue the game in ``out`` where it stopped: the person's recorded actions are
    replayed, then they are asked again."""
    from econbench.runs.coffee.run import resume_to_dir

    found = person_of(out)
    if found is None:
        raise ValueError(f"{out} is not a run a person plays")
    firm, actor = found
    seat = CoffeeSeat(firm)
    return _session(
        lambda: resume_to_dir(out, force=force, seats={firm: seat}),
        seat,
        _Front(front, seat, actor, Path(out), port, open_page, linger, echo),
    )


def person_of(out: Path) -> tuple[str, str] | None:
    """The firm a person plays in the CoffeeBench run at ``out`` and who (``human:<name>``),
    from its ``config.json``; ``None`` when no person plays there."""
    config = read_json(Path(out) / CONFIG)
    agents = config.get("agents") if isinstance(config, dict) else None
    if not isinstance(agents, dict):
        return None
    return next(((f, a) for f, a in agents.items() if f in FIRMS and is_human(a)), None)


def _session(
    start: Callable[[], dict[str, Any]], seat: RemoteSeat, front: _Front
) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        try:
            summary = start()
        except BaseException as exc:
            front.over("stopped", f"{type(exc).__name__}: {exc}")
            raise
        front.over(str(summary.get("status", "completed")), _result_line(summary, front.firm))
        return summary

    return play_session(run, seat, front.play)


def _result_line(summary: dict[str, Any], firm: str) -> str:
    row = (summary.get("firms") or {}).get(firm) or {}
    income = row.get("net_income")
    return f"{firm} net income ${income:,.2f}" if isinstance(income, int | float) else ""


class _Front:
    """The person's side of the game: the terminal loop or the page's server."""

    def __init__(
        self,
        kind: Front,
        seat: CoffeeSeat,
        actor: str,
        out: Path,
        port: int,
        open_page: bool,
        linger: bool,
        echo: Echo,
    ) -> None:
        self.kind, self.seat, self.actor, self.out = kind, seat, actor, out
        self.firm = seat.firm_id
        self.port, self.open_page, self.linger, self.echo = port, open_page, linger, echo
        self.routes: Any = None

    def over(self, status: str, message: str) -> None:
        """The game ended (called from the run's thread before the seat closes)."""
        if self.routes is not None:
            self.routes.outcome = {"status": status, "message": message}

    def play(self) -> None:
        if self.kind == "terminal":
            self._terminal()
        else:
            self._browser()

    def _terminal(self) -> None:
        from econbench.runs.play.terminal import TerminalPlayer

        TerminalPlayer(
            self.seat,
            stdin=sys.stdin,
            stdout=sys.stdout,
            interactive=sys.stdin.isatty(),
            wait_tool=WAIT_TOOL,
        ).play()

    def _browser(self) -> None:
        from econbench.runs.play.browser import PAGE, CoffeePlayRoutes
        from econbench.runs.viewer import Catalog, ViewerServer, serve_in_thread

        seat = self.seat
        self.routes = CoffeePlayRoutes(
            seat, actor=self.actor, out=str(self.out), wait_tool=WAIT_TOOL
        )
        while seat.wait_turn(POLL_S) is None and not seat.finished:
            pass  # the run directory exists once the first turn is asked
        if seat.finished and not self.out.is_dir():
            return  # the run refused to start: the session raises why
        server = ViewerServer(Catalog(self.out), port=self.port)
        server.play = self.routes
        serve_in_thread(server)
        url = server.url.rstrip("/") + PAGE
        self.echo(
            f"Playing {self.firm} as {self.actor} at {url}  (Ctrl-C to stop; "
            f"`econbench resume {self.out} --open` continues)"
        )
        if self.open_page:
            webbrowser.open(url)
        try:
            while not seat.finished and seat.left is None:
                time.sleep(POLL_S)
            if self.linger and seat.left is None:
                self.echo(
                    f"The game is over; the page ({url}) and the viewer ({server.url}) stay "
                    "up until you close the game there, or Ctrl-C."
                )
                self.routes.closed.wait()
        finally:
            server.shutdown()
            server.server_close()
