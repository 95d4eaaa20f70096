"""Play CoffeeBench in the browser: the play page and its API, served by the viewer's server.

The routes plug into the viewer's server as its ``play``
(``econbench.runs.viewer.server.PlayRoutes``), which checks that a POST is JSON from a page
on the loopback before it gets here.

- ``GET /play/coffee`` — the page (``static/play/coffee.html``, ``coffee.js``, ``coffee.css``).
- ``GET /api/play/coffee?from=N`` — the game as the page shows it: ``status`` (``turn``
  while the person is to act, ``waiting`` while the world moves, ``over``, ``left``), the
  turn's number, the conversation from message ``N`` on (exactly the messages a model would
  be sent), the tools with their JSON schemas (the ones the model gets), and the context read
  with the turn (the firm's clock and panels). While the world moves it shows the last turn.
- ``POST /api/play/coffee/action`` with ``{"turn": N, "tool": NAME, "arguments": {...}}`` —
  act. The arguments are checked by the tool's own validator first: a refusal comes back as
  ``{"ok": false, "result": …}``, the error result the tool would return, and spends no
  action. A turn already answered (another tab) is a 409.
- ``POST /api/play/coffee/leave`` — stop the game here (``econbench resume`` continues it),
  or, once it is over, close it (the command then ends).
"""

from __future__ import annotations

import threading
from http import HTTPStatus
from typing import Any, ClassVar

from econbench.agents.models.base import ChatMessage
from econbench.agents.models.human import person_reply
from econbench.agents.tools import ToolCall, ToolError, error_result
from econbench.runs.play.seat import PendingTurn, RemoteSeat
from econbench.runs.viewer.query import ApiError, query_int

PAGE = "/play/coffee"


class CoffeePlayRoutes:
    """The CoffeeBench play page's files and API (see the module docstring)."""

    static: ClassVar[dict[str, tuple[str, str, str]]] = {
        PAGE: ("static", "play/coffee.html", "text/html; charset=utf-8"),
        "/static/play/coffee.js": ("static", "play/coffee.js", "text/javascript; charset=utf-8"),
        "/static/play/coffee.css": ("static", "play/coffee.css", "text/css; charset=utf-8"),
    }

    def __init__(self, seat: RemoteSeat, *, actor: str, out: str, wait_tool: str | None) -> None:
        self.seat = seat
        self.actor = actor
        self.out = out
        self.wait_tool = wait_tool
        self.outcome: dict[str, Any] = {}
        """Set when the game is over: ``status`` and a one-line ``message``."""
        self.closed = threading.Event()
        """Set when the person closes the page's game (stopped, or after it is over)."""
        self._lock = threading.Lock()
        self._last: PendingTurn | None = None
        """The latest turn published, shown while the world moves."""

    def get(self, parts: list[str], query: dict[str, list[str]]) -> Any:
        if parts != ["coffee"]:
            raise ApiError(HTTPStatus.NOT_FOUND, "no such endpoint")
        return self.state(query_int(query, "from", 0))

    def post(self, parts: list[str], body: Any) -> Any:
        if parts == ["coffee", "leave"]:
            if not self.seat.finished:
                self.seat.leave("the player stopped the game from the page")
            self.closed.set()
            return {"ok": True}
        if parts != ["coffee", "action"]:
            raise ApiError(HTTPStatus.NOT_FOUND, "no such endpoint")
        if not isinstance(body, dict):
            raise ApiError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
        return self.act(body)

    def state(self, start: int) -> dict[str, Any]:
        """The game as the page shows it (see the module docstring)."""
        pending = self.seat.pending
        with self._lock:
            if pending is not None:
                self._last = pending
            shown = self._last
        if pending is not None:
            status = "turn"
        elif self.seat.left is not None:
            status = "left"
        elif self.seat.finished:
            status = "over"
        else:
            status = "waiting"
        body: dict[str, Any] = {
            "status": status,
            "actor": self.actor,
            "out": self.out,
            "wait_tool": self.wait_tool,
            "turn": pending.number if pending is not None else None,
            "outcome": self.outcome,
            "left": self.seat.left,
        }
        if shown is None:
            return body | {"message_count": 0, "messages_from": 0, "messages": [], "tools": []}
        messages = shown.turn.messages
        start = min(start, len(messages))
        return body | {
            "message_count": len(messages),
            "messages_from": start,
            "messages": [message_view(m) for m in messages[start:]],
            "tools": [
                {"name": t.name, "description": t.description, "parameters": t.parameters}
                for t in shown.turn.tools
            ],
            "context": shown.context,
        }

    def act(self, body: dict[str, Any]) -> dict[str, Any]:
        """The person's action on the waiting turn, checked by the tool's validator first."""
        pending = self.seat.pending
        if pending is None or body.get("turn") != pending.number:
            raise ApiError(HTTPStatus.CONFLICT, "that turn is over; the page shows the next")
        name = body.get("tool")
        arguments = body.get("arguments", {})
        spec = next((t for t in pending.turn.tools if t.name == name), None)
        if spec is None:
            known = ", ".join(t.name for t in pending.turn.tools)
            return {
                "ok": False,
                "result": error_result(f"unknown tool '{name}'. Available tools: {known}"),
            }
        try:
            spec.validate(arguments)
        except ToolError as exc:
            return {"ok": False, "result": error_result(str(exc))}
        if not self.seat.answer(pending.number, person_reply(ToolCall(spec.name, arguments))):
            raise ApiError(HTTPStatus.CONFLICT, "that turn is over; the page shows the next")
        return {"ok": True}


def message_view(message: ChatMessage) -> dict[str, Any]:
    """A message of the conversation as the page shows it."""
    return {
        "role": message.role,
        "content": message.content,
        "name": message.name,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in message.tool_calls],
    }
