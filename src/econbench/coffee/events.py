"""The append-only event log: one JSON object per line, numbered, never rewritten.

Events carry the simulated day and time, never wall-clock time, so that the same seed and
the same decisions give a byte-identical log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, TextIO

from econbench.jsonio import json_line

EVENT_SCHEMA_VERSION = 1


def dumps(obj: Any) -> str:
    return json_line(obj)


class EventSink(Protocol):
    def write(self, event: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class NullSink:
    """Discards events (tests and benchmarks that only look at state)."""

    def write(self, event: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


class MemorySink:
    """Keeps events in a list."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def write(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def close(self) -> None:
        return None


class JsonlSink:
    """Appends events to a JSONL file, flushing at every day end so a crash loses little."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: TextIO = path.open("a", encoding="utf-8")

    def write(self, event: dict[str, Any]) -> None:
        self._fh.write(dumps(event) + "\n")
        if event.get("type") == "day_end":
            self._fh.flush()

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()
