"""What every answer of the viewer's API shares: its error, the numbers a request carries,
and the status a polling page reads beside an answer.

Kept apart from the server so that a benchmark's viewer data (``routes``) can answer its own
endpoints without importing the HTTP server.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

MAX_QUERY_INT = 2**53 - 1
"""The largest number a query or path takes (the page's JavaScript holds integers exactly up
to here); a larger one is a 400 naming the limit, not a crash deep in a file read."""
_MAX_DIGITS = len(str(MAX_QUERY_INT))

Query = dict[str, list[str]]
Route = Callable[[Any, list[str], Query], Any]
"""An endpoint's handler: ``(run entry, path parts after the run id, query) -> answer``."""
Ask = Callable[[list[str], dict[str, Any] | None], Any]
"""How a static bundle asks for one answer of a run: ``(path parts, query) -> answer``."""


class ApiError(Exception):
    """A request the API answers with an error status and a message."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def query_int(query: dict[str, list[str]], key: str, default: int | None = None) -> int:
    values = query.get(key)
    if not values:
        if default is None:
            raise ApiError(HTTPStatus.BAD_REQUEST, f"missing query parameter {key!r}")
        return default
    text = values[0].strip()
    digits = text.removeprefix("-").removeprefix("+")
    if not (digits.isascii() and digits.isdigit()):  # int() also takes "٣", "1_0", "²"
        raise ApiError(HTTPStatus.BAD_REQUEST, f"{key} must be an integer")
    if text.startswith("-") and digits.strip("0"):
        raise ApiError(HTTPStatus.BAD_REQUEST, f"{key} must not be negative")
    if len(digits.lstrip("0")) > _MAX_DIGITS or int(digits) > MAX_QUERY_INT:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"{key} must be at most {MAX_QUERY_INT}")
    return int(digits)


def path_int(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text.lstrip("0")) > _MAX_DIGITS:
        raise ApiError(HTTPStatus.NOT_FOUND, f"no such {what}: {text[:40]!r}")
    return int(text)


def found(value: Any, what: str) -> Any:
    if value is None:
        raise ApiError(HTTPStatus.NOT_FOUND, f"no such {what}")
    return value


def with_status(entry: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with what a polling page needs to know besides: status and progress."""
    return {"status": entry.ref.status, "progress": entry.progress(), **body}
