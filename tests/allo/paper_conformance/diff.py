"""Comparing what econbench sent with what the paper's scripts sent, request by request.

Two requests are the same when they went to the same endpoint with the same bytes (the
fixture's ``raw_sha256``). Otherwise the first difference is found in the parsed bodies, in
the order the bytes run (keys in their order, list items in theirs), and described by where
it lies: ``params`` (model, max_tokens, tool_choice, temperature, …), ``system`` (the system
prompt), ``tools`` (names, descriptions, schemas), ``tool result``, ``user text``,
``assistant`` (a replayed reply) or ``wire shape`` (the same content packaged otherwise), with
both values and, for texts, the first differing characters.

``ALLOWED`` is the list of differences the test accepts; each names the one field it covers
and why it cannot be identical. Nothing else is masked.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tests.allo.paper_conformance.fixture import FixtureEpisode
from tests.allo.paper_conformance.replay import Replayed
from tests.allo.paper_conformance.stub import Recorded

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Allowed:
    """A difference the comparison accepts: at body paths matching ``path`` (``fnmatch`` over
    the dotted path, ``[i]`` for list items), in files matching ``files``."""

    files: str
    path: str
    why: str

    def covers(self, file: str, where: Path) -> bool:
        return fnmatch.fnmatchcase(file, self.files) and fnmatch.fnmatchcase(
            dotted(where), self.path
        )


ALLOWED: tuple[Allowed, ...] = ()
"""Differences allowed today: none. Every request must be byte-identical to the paper's."""


def dotted(where: Path) -> str:
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(body)"


@dataclass
class Difference:
    where: Path
    what: str  # "value", "type", "missing in econbench", "only in econbench", "length", "order"
    paper: Any
    econbench: Any


_MISSING = object()


def differences(a: Any, b: Any, where: Path = ()) -> Iterator[Difference]:
    """Every difference between ``a`` (the paper's) and ``b`` (econbench's), in byte order."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            if key in b:
                yield from differences(a[key], b[key], (*where, key))
            else:
                yield Difference((*where, key), "missing in econbench", a[key], _MISSING)
        for key in b:
            if key not in a:
                yield Difference((*where, key), "only in econbench", _MISSING, b[key])
        shared_a = [k for k in a if k in b]
        shared_b = [k for k in b if k in a]
        if shared_a != shared_b:
            yield Difference(where, "key order", shared_a, shared_b)
        return
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from differences(x, y, (*where, i))
        if len(a) != len(b):
            yield Difference(where, "length", len(a), len(b))
        return
    if type(a) is not type(b):
        yield Difference(where, "type", a, b)
    elif a != b:
        yield Difference(where, "value", a, b)


def first_difference(
    file: str, paper: dict[str, Any], econbench: dict[str, Any]
) -> Difference | None:
    """The first difference not in ``ALLOWED``, or None."""
    for d in differences(paper, econbench):
        if not any(rule.covers(file, d.where) for rule in ALLOWED):
            return d
    return None


def same_request(file: str, line: dict[str, Any], rec: Recorded) -> bool:
    if line["path"] != rec.path:
        return False
    if hashlib.sha256(rec.raw).hexdigest() == line["raw_sha256"]:
        return True
    return bool(ALLOWED) and first_difference(file, line["body"], rec.body) is None


# --------------------------------------------------------------------------- describing one


_MESSAGE_KEYS = ("messages", "input")


def area(body: dict[str, Any], where: Path) -> str:
    """Which part of a request ``where`` lies in (see the module docstring)."""
    if not where:
        return "wire shape"
    top = where[0]
    if top in ("system", "instructions"):
        return "system"
    if top == "tools":
        return "tools"
    if top not in _MESSAGE_KEYS:
        return "params"
    if len(where) < 2 or not isinstance(where[1], int):
        return "messages"
    items = body.get(top) or []
    if where[1] >= len(items):
        return "messages"
    item = items[where[1]]
    role = item.get("role") or item.get("type")
    if role in ("system", "developer"):
        return "system"
    if role in ("tool", "function_call_output"):
        return "tool result"
    if role == "assistant" or role == "function_call":
        return "assistant"
    content = item.get("content")
    if (
        len(where) >= 4
        and isinstance(content, list)
        and isinstance(where[3], int)
        and where[3] < len(content)
        and content[where[3]].get("type") == "tool_result"
    ):
        return "tool result"
    if len(where) == 2 or (len(where) == 3 and where[2] == "content"):
        return "wire shape"
    return "user text"


def _show(value: Any, limit: int = 400) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def text_diff(a: str, b: str, context: int = 80, max_lines: int = 24) -> str:
    """Where two texts part: the first differing character with some context, and a line diff
    when they have several lines."""
    i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    lo = max(0, i - context)
    out = [
        f"first difference at character {i} (lengths {len(a)} / {len(b)}):",
        f"  paper:     …{a[lo : i + context]!r}",
        f"  econbench: …{b[lo : i + context]!r}",
    ]
    if "\n" in a or "\n" in b:
        lines = list(
            difflib.unified_diff(
                a.splitlines(), b.splitlines(), "paper", "econbench", n=1, lineterm=""
            )
        )
        if lines:
            out += ["  " + x for x in lines[:max_lines]]
            if len(lines) > max_lines:
                out.append(f"  … ({len(lines) - max_lines} more diff lines)")
    return "\n".join(out)


def describe(body: dict[str, Any], d: Difference) -> str:
    head = f"{area(body, d.where)} differs at {dotted(d.where)} ({d.what})"
    if d.what == "value" and isinstance(d.paper, str) and isinstance(d.econbench, str):
        return f"{head}\n{text_diff(d.paper, d.econbench)}"
    return f"{head}\n  paper:     {_show(d.paper)}\n  econbench: {_show(d.econbench)}"


# --------------------------------------------------------------------------- a whole file


@dataclass
class EpisodeReport:
    label: str
    paper_requests: int
    econbench_requests: int
    identical: bool
    first: str | None = None
    """The first difference, described; None when the episode is identical."""


def compare_episode(file: str, fx: FixtureEpisode, got: Replayed) -> EpisodeReport:
    lines, recs = fx.requests, got.requests
    report = EpisodeReport(fx.unit.label, len(lines), len(recs), identical=False)
    for i, (line, rec) in enumerate(zip(lines, recs, strict=False)):
        if same_request(file, line, rec):
            continue
        head = (
            f"request {i} (paper: task {line['task']} attempt {line['attempt']}; "
            f"econbench: task {rec.task} attempt {rec.attempt})"
        )
        if line["path"] != rec.path:
            report.first = f"{head}: endpoint paper {line['path']}, econbench {rec.path}"
            return report
        d = first_difference(file, line["body"], rec.body)
        if d is None:  # the same JSON in other bytes (e.g. other separators or escapes)
            report.first = f"{head}: the same JSON, serialised differently"
        else:
            report.first = f"{head}: {describe(line['body'], d)}"
        return report
    if len(lines) != len(recs) or got.error:
        seq = lambda xs: [(x["task"], x["attempt"]) for x in xs]  # noqa: E731
        report.first = (
            f"request count: paper {len(lines)}, econbench {len(recs)}"
            + (f"; econbench stopped: {got.error}" if got.error else "")
            + f"\n  (task, attempt) paper:     {seq(lines)[:30]}"
            + f"\n  (task, attempt) econbench: {[(r.task, r.attempt) for r in recs][:30]}"
        )
        return report
    report.identical = True
    return report


@dataclass
class FileReport:
    file: str
    episodes: list[EpisodeReport]

    @property
    def identical(self) -> bool:
        return all(e.identical for e in self.episodes)

    def summary(self) -> str:
        paper = sum(e.paper_requests for e in self.episodes)
        eb = sum(e.econbench_requests for e in self.episodes)
        same = sum(e.identical for e in self.episodes)
        head = (
            f"{self.file}: {len(self.episodes)} episodes, {same} identical; "
            f"requests paper/econbench {paper}/{eb}"
        )
        first = next((e for e in self.episodes if not e.identical), None)
        if first is None:
            return f"{head}: IDENTICAL"
        return f"{head}\n  first difference, {first.label}: {_indent(first.first or '')}"


def _indent(text: str) -> str:
    return re.sub(r"\n", "\n  ", text)


def compare(file: str, fixture: Sequence[FixtureEpisode], got: Sequence[Replayed]) -> FileReport:
    if [f.unit for f in fixture] != [g.unit for g in got]:
        raise ValueError("the replay's episodes are not the fixture's")
    return FileReport(
        file, [compare_episode(file, f, g) for f, g in zip(fixture, got, strict=True)]
    )
