"""Search inside a run's logs: the lines of a JSONL file whose text holds a phrase.

Used for transcript search (CoffeeBench ``events.jsonl``, AlloBench ``episodes.jsonl``). The
file is read line by line up to what the incremental reader has consumed (complete lines
only); a cheap byte test skips most lines before one is parsed, and the answer is bounded to
``MAX_HITS`` hits, each with a short excerpt around the match.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_HITS = 200
MAX_QUERY_CHARS = 200
EXCERPT_CHARS = 80


def needles(query: str) -> list[bytes]:
    """What the phrase looks like in a JSON line, written with or without ASCII escapes."""
    low = query.lower()
    spelled = {low, json.dumps(low)[1:-1], json.dumps(low, ensure_ascii=False)[1:-1]}
    return [s.encode("utf-8") for s in spelled]


def strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string inside ``value`` with where it lies (``text``, ``result.note``…)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from strings(item, f"{path}[{i}]")


def excerpt(text: str, at: int, length: int) -> str:
    start = max(0, at - EXCERPT_CHARS)
    end = min(len(text), at + length + EXCERPT_CHARS)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def first_match(row: dict[str, Any], query: str) -> tuple[str, str] | None:
    """Where in ``row`` the phrase first occurs (case-insensitive), and an excerpt."""
    low = query.lower()
    for where, text in strings(row):
        at = text.lower().find(low)
        if at >= 0:
            return where, excerpt(text, at, len(query))
    return None


def search_lines(
    path: Path, end: int, query: str
) -> Iterator[tuple[int, dict[str, Any], str, str]]:
    """``(line number, row, field, excerpt)`` for each line before byte ``end`` holding the
    phrase in one of its strings."""
    wanted = needles(query)
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return
    with fh:
        read = 0
        for number, raw in enumerate(fh):
            read += len(raw)
            if read > end:
                break
            low = raw.lower()
            if not any(n in low for n in wanted):
                continue
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if not isinstance(row, dict):
                continue
            found = first_match(row, query)
            if found is not None:
                yield number, row, found[0], found[1]
