"""One game: the run in a thread of its own, the person's side (a front) in the main thread.

The front (the terminal loop, the page's server) keeps the main thread, so Ctrl-C reaches it
there — ``readline`` restores the terminal, the server closes its socket — and the seat is
left: the run's thread then stops at its waiting turn (``PlayerLeft``), closing its files and
its lock as any stopped run does, and ``econbench resume`` continues it from there.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

from econbench.runs.play.seat import RemoteSeat

JOIN_POLL_S = 0.5
"""How often the main thread, waiting for the run's thread, lets a Ctrl-C in."""


def play_session(
    start: Callable[[], dict[str, Any]],
    seat: RemoteSeat,
    front: Callable[[], None],
) -> dict[str, Any]:
    """Run ``start`` (the run, which asks ``seat``) in a thread while ``front`` lets the person
    play; the run's summary, or what it raised (``PlayerLeft`` when the person left)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        _main_thread_takes_ctrl_c()
        try:
            outcome["summary"] = start()
        except BaseException as exc:  # handed to the main thread, raised there
            outcome["error"] = exc
        finally:
            seat.close()

    thread = threading.Thread(target=run, name="econbench-play-run", daemon=True)
    thread.start()
    try:
        front()
    except KeyboardInterrupt:
        seat.leave("interrupted (Ctrl-C)")
    finally:
        _join(thread, seat)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["summary"]


def _main_thread_takes_ctrl_c() -> None:
    """Block SIGINT in this thread (and the threads it starts): the kernel hands a signal to
    any thread that does not block it, and one landing here would leave the main thread's
    ``readline`` waiting for a key instead of raising ``KeyboardInterrupt``."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _join(thread: threading.Thread, seat: RemoteSeat) -> None:
    """Wait for the run's thread; a Ctrl-C meanwhile leaves the seat (the run stops at once)."""
    while thread.is_alive():
        try:
            thread.join(JOIN_POLL_S)
        except KeyboardInterrupt:
            seat.leave("interrupted (Ctrl-C)")
