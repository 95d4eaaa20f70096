"""The browser seat: an AlloBench game on a page served by the viewer's own server.

The game plays in a thread of its own and asks through a ``RemoteSeat``; the page
(``static/play/allo.html``) polls ``GET /api/play/allo`` for the turn waiting, the episodes
over and the game's state, and posts the person's move to ``POST /api/play/allo/reply``
(``{"turn": N, "text": "...", "call": {"name": "...", "arguments": {...}} | null}``) or
leaves with ``POST /api/play/allo/leave``. Reloading the page, or opening it in another tab,
shows the same turn: the state lives in this process, and a move answers a turn once.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, ClassVar

from econbench.runs.play.allo_turns import (
    ReplyError,
    check_call,
    message_view,
    model_output,
    quick_replies,
    tool_views,
    turn_limits,
)
from econbench.runs.play.seat import RemoteSeat
from econbench.runs.viewer.query import ApiError

PAGE = "/play/allo"


@dataclass
class AlloGame:
    """What the page shows beside the turn: who plays which cell, and how far it is."""

    player: str
    cell: str
    framing: str
    condition: str
    out: str
    episodes: int
    done: list[dict[str, Any]] = field(default_factory=list)
    """The episodes over, each as the page's row (seed, utility, OPT, score, commits)."""
    status: str = "playing"
    """``playing``, ``over`` (every episode played), ``left`` or ``stopped`` (an error)."""
    summary: dict[str, Any] | None = None
    message: str = ""
    closed: threading.Event = field(default_factory=threading.Event)
    """Set when the person closes the page's game after it is over."""

    def episode_over(self, record: Mapping[str, Any]) -> None:
        """Add an episode's row (called from the game's thread)."""
        self.done.append(episode_row(record))


def episode_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """An episode as the page lists it once it is over."""
    return {
        "seed": record["seed"],
        "utility": record["utility"],
        "opt": record["opt"],
        "score": record["score"],
        "commits": len(record.get("commits") or []),
        "first_sight_commits": record.get("first_sight_commits", 0),
    }


class AlloPlayRoutes:
    """The play page's files and API (``econbench.runs.viewer.server.PlayRoutes``)."""

    static: ClassVar[dict[str, tuple[str, str, str]]] = {
        PAGE: ("static", "play/allo.html", "text/html; charset=utf-8"),
        "/static/play/allo.js": ("static", "play/allo.js", "text/javascript; charset=utf-8"),
        "/static/play/allo.css": ("static", "play/allo.css", "text/css; charset=utf-8"),
    }

    def __init__(self, game: AlloGame, seat: RemoteSeat) -> None:
        self.game = game
        self.seat = seat

    def get(self, parts: list[str], query: dict[str, list[str]]) -> Any:
        if parts != ["allo"]:
            raise ApiError(HTTPStatus.NOT_FOUND, "no such endpoint")
        return self.state()

    def post(self, parts: list[str], body: Any) -> Any:
        if parts == ["allo", "reply"]:
            return self._reply(body)
        if parts == ["allo", "leave"]:
            if self.game.status == "playing":
                self.seat.leave("the player left from the page")
            self.game.closed.set()
            return {"ok": True}
        raise ApiError(HTTPStatus.NOT_FOUND, "no such endpoint")

    def state(self) -> dict[str, Any]:
        """The game and the turn waiting for the person, if any."""
        game = self.game
        pending = self.seat.pending
        state: dict[str, Any] = {
            "player": game.player,
            "cell": game.cell,
            "framing": game.framing,
            "condition": game.condition,
            "out": game.out,
            "episodes": game.episodes,
            "done": list(game.done),
            "status": game.status,
            "message": game.message,
            "summary": game.summary,
            "turn": None,
        }
        if pending is not None and game.status == "playing":
            turn = pending.turn
            state["turn"] = {
                "number": pending.number,
                "messages": [message_view(m) for m in turn.messages],
                "tools": [t.as_dict() for t in tool_views(turn.tools)],
                "quick_replies": quick_replies(turn.messages),
                "request": turn_limits(turn),
            }
        return state

    def _reply(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("turn"), int):
            raise ApiError(HTTPStatus.BAD_REQUEST, "a move is {turn, text, call}")
        text = body.get("text", "")
        call = body.get("call")
        if not isinstance(text, str):
            raise ApiError(HTTPStatus.BAD_REQUEST, "text must be a string")
        pending = self.seat.pending
        if pending is None or pending.number != body["turn"]:
            raise ApiError(HTTPStatus.CONFLICT, "that turn is no longer waiting (answered?)")
        try:
            if call is None:
                output = model_output(text)
            else:
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    raise ReplyError("call must be {name, arguments}")
                tools = tool_views(pending.turn.tools)
                arguments = check_call(call["name"], call.get("arguments", {}), tools)
                output = model_output(text, (call["name"], arguments))
        except ReplyError as exc:
            raise ApiError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        if not self.seat.answer(body["turn"], output):
            raise ApiError(HTTPStatus.CONFLICT, "that turn is no longer waiting (answered?)")
        return {"ok": True}
