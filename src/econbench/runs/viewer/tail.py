"""Follow an append-only JSONL file: read only what was added since the last look.

A run being written has a last line that may be half on disk (the writer flushes whole
buffers, not whole lines). Only complete lines — ending in a newline — are consumed; the
torn tail is read again next time, once it is complete. A file that was replaced (a run
started again in the same directory) is detected and read from the start.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

_TAIL = 256  # bytes compared to tell a rewritten file from a grown one


@dataclass(frozen=True)
class Line:
    """One complete JSONL row and where it lies in the file (``start`` to ``end`` bytes)."""

    start: int
    end: int
    row: dict[str, Any]


def parse_lines(data: bytes, base: int) -> tuple[list[Line], int]:
    """The complete lines of ``data`` (which starts at byte ``base`` of its file) and the
    offset just past the last one. A line that is not a JSON object is skipped."""
    lines: list[Line] = []
    pos = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        raw = data[pos:nl]
        if raw.strip():
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                row = None
            if isinstance(row, dict):
                lines.append(Line(base + pos, base + nl + 1, row))
        pos = nl + 1
    return lines, base + pos


class JsonlTail:
    """Incremental reader of one JSONL file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0  # bytes of complete lines consumed so far
        self._ident: tuple[int, int] | None = None
        self._tail = b""  # the last bytes consumed, to tell a rewritten file from a grown one

    def poll(self) -> tuple[bool, list[Line]]:
        """``(reset, new_lines)``: ``reset`` is true when the file was replaced or truncated,
        in which case ``new_lines`` start from the top and earlier lines must be forgotten."""
        try:
            fh = self.path.open("rb")
        except FileNotFoundError:
            reset = self.offset > 0
            self.offset, self._ident, self._tail = 0, None, b""
            return reset, []
        with fh:
            st = os.fstat(fh.fileno())
            ident, size = (st.st_dev, st.st_ino), st.st_size
            reset = self.offset > 0 and (
                ident != self._ident or size < self.offset or not self._unchanged(fh)
            )
            if reset:
                self.offset, self._tail = 0, b""
            self._ident = ident
            if size <= self.offset:
                return reset, []
            fh.seek(self.offset)
            data = fh.read(size - self.offset)
        lines, offset = parse_lines(data, self.offset)
        if offset > self.offset:
            consumed = data[: offset - self.offset]
            self._tail = (self._tail + consumed)[-_TAIL:]
            self.offset = offset
        return reset, lines

    def _unchanged(self, fh: BinaryIO) -> bool:
        fh.seek(self.offset - len(self._tail))
        return fh.read(len(self._tail)) == self._tail


def read_span(path: Path, start: int, end: int) -> list[dict[str, Any]]:
    """The rows between two line boundaries of ``path``."""
    with path.open("rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    return [line.row for line in parse_lines(data, start)[0]]


def read_from(path: Path, start: int, max_bytes: int) -> tuple[list[Line], int, int]:
    """Complete lines from byte ``start`` (a line boundary), about ``max_bytes`` of them (at
    least one line when one is complete); returns ``(lines, next_offset, file_size)``."""
    with path.open("rb") as fh:
        size = fh.seek(0, 2)
        if start >= size:
            return [], start, size
        fh.seek(start)
        data = fh.read(max(1, min(max_bytes, size - start)))  # never a buffer past the end
        if b"\n" not in data and start + len(data) < size:
            data += fh.readline()
    lines, next_offset = parse_lines(data, start)
    return lines, next_offset, size


def is_line_start(path: Path, offset: int) -> bool:
    """Whether ``offset`` is 0 or follows a newline (a place a line begins)."""
    if offset == 0:
        return True
    if offset < 0:
        return False
    with path.open("rb") as fh:
        if offset > fh.seek(0, 2):
            return False
        fh.seek(offset - 1)
        return fh.read(1) == b"\n"
