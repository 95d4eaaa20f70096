"""Reading the fixture: the requests the paper's own scripts sent, grouped into episodes.

``tests/allo/data/paper_requests/<file>.jsonl.xz``: one JSON line per request (``body`` = the
request body exactly as it arrived, ``reply`` = the scripted reply it got, ``raw_sha256`` = the
sha256 of its raw bytes; README.md there says how it was made). An episode is one *unit* of a
file: a seed, with the reskin's ``vocab`` or the surface's ``cell`` where the file has them.
"""

from __future__ import annotations

import functools
import json
import lzma
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "paper_requests"
SUFFIX = ".jsonl.xz"
UNIT_FIELDS = ("vocab", "cell", "seed")
"""The fields that tell a file's episodes apart, in the order they vary."""


@dataclass(frozen=True)
class Unit:
    """One episode of a fixture file."""

    seed: int
    vocab: str | None = None
    cell: str | None = None  # "R0:B:K" (economic surface)
    budget: int | None = None
    cost: int | None = None

    @property
    def label(self) -> str:
        parts = [f"seed {self.seed}"]
        if self.vocab is not None:
            parts.append(f"vocab {self.vocab}")
        if self.cell is not None:
            parts.append(f"cell {self.cell}")
        return ", ".join(parts)


@dataclass(frozen=True)
class FixtureEpisode:
    unit: Unit
    requests: tuple[dict[str, Any], ...]


def manifest() -> dict[str, Any]:
    return json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))


def files() -> list[str]:
    """The fixture files' names (the condition names of the capture), sorted."""
    return sorted(p.name[: -len(SUFFIX)] for p in DATA.glob(f"*{SUFFIX}"))


def kind_of(file: str) -> str:
    """What the file's requests ask (``player.KINDS``), as the manifest records it."""
    return manifest()["conditions"][file]["kind"]


def unit_of(line: dict[str, Any]) -> Unit:
    return Unit(
        seed=int(line["seed"]),
        vocab=line.get("vocab"),
        cell=line.get("cell"),
        budget=line.get("budget"),
        cost=line.get("cost"),
    )


_SEED = re.compile(rb'"seed":(\d+)')


@functools.lru_cache(maxsize=4)
def _raw_lines(file: str) -> tuple[bytes, ...]:
    with lzma.open(DATA / f"{file}{SUFFIX}", "rb") as fh:
        return tuple(fh.read().splitlines())


def episodes(file: str, seeds: Iterable[int] | None = None) -> list[FixtureEpisode]:
    """The file's episodes in the order they were played, only those of ``seeds`` if given
    (the lines of other seeds are not parsed: the R3 Haiku file holds 130 MB of JSON)."""
    wanted = None if seeds is None else {int(s) for s in seeds}
    out: list[FixtureEpisode] = []
    current: list[dict[str, Any]] = []
    for raw in _raw_lines(file):
        if wanted is not None:
            found = _SEED.search(raw[:400])
            if found is None or int(found.group(1)) not in wanted:
                continue
        line = json.loads(raw)
        if line["request"] == 0 and current:
            out.append(FixtureEpisode(unit_of(current[0]), tuple(current)))
            current = []
        current.append(line)
    if current:
        out.append(FixtureEpisode(unit_of(current[0]), tuple(current)))
    return out


def seeds_of(file: str) -> list[int]:
    """Every seed the file holds, in the manifest's order."""
    return [int(s) for s in manifest()["conditions"][file]["seeds"]]
