"""What the viewer shows of an AlloBench cell, read incrementally from ``episodes.jsonl``.

One line is one played episode with every turn; with a model (and R3's code) a line can be
large, so the episode list carries only each episode's figures and where its line lies, and
an episode's turns are read from disk when the page opens it.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from econbench.runs import layout
from econbench.runs.viewer.query import Ask, Route, found, path_int, query_int, with_status
from econbench.runs.viewer.search import MAX_HITS, first_match, search_lines
from econbench.runs.viewer.tail import JsonlTail, Line, read_span

SUMMARY_KEYS = (
    "seed",
    "framing",
    "actor",
    "cost",
    "budget",
    "score",
    "utility",
    "opt",
    "collected",
    "first_sight_commits",
    "unresolved_turns",
    "decision_turns",
)


def episode_summary(number: int, row: dict[str, Any]) -> dict[str, Any]:
    """The figures of one episode shown in the list."""
    out: dict[str, Any] = {"episode": number}
    out.update({key: row.get(key) for key in SUMMARY_KEYS})
    commits = row.get("commits")
    out["commits"] = len(commits) if isinstance(commits, list) else None
    tokens = row.get("tokens") if isinstance(row.get("tokens"), dict) else {}
    out["output_tokens"] = tokens.get("output_tokens", 0)
    out["cost_usd"] = tokens.get("cost_usd")
    turns = row.get("turns")
    out["turns"] = len(turns) if isinstance(turns, list) else 0
    return out


def _label(labels: list[Any], cls: Any) -> str:
    if isinstance(cls, int) and 0 <= cls < len(labels):
        return str(labels[cls])
    return f"class {cls}"


def episode_strip(row: dict[str, Any]) -> dict[str, Any]:
    """The episode's whole task stream in order, with where it committed: what the page draws
    as one strip (a cell per task, coloured by its class; a mark per commit, first-sight
    commits told apart). The stream comes from ``stream.classes``, else from the turns."""
    stream = row.get("stream") if isinstance(row.get("stream"), dict) else {}
    labels = stream.get("labels") if isinstance(stream.get("labels"), list) else []
    hot = {c for c in stream.get("hot") or [] if isinstance(c, int)}
    turns = [t for t in row.get("turns") or [] if isinstance(t, dict)]
    classes = stream.get("classes")
    if not isinstance(classes, list):
        classes = [turn.get("cls") for turn in turns]
    by_t = {turn.get("t"): turn for turn in turns}
    seen: dict[Any, int] = {}
    tasks = []
    for t, cls in enumerate(classes):
        seen[cls] = seen.get(cls, 0) + 1
        turn = by_t.get(t, {})
        tasks.append(
            {
                "t": t,
                "cls": cls,
                "label": _label(labels, cls),
                "hot": cls in hot,
                "sighting": seen[cls],
                "collected": bool(turn.get("collected")),
            }
        )
    commits = row.get("commits")
    if not isinstance(commits, list):
        commits = [turn for turn in turns if turn.get("commit")]
    marks = [
        {
            "t": c.get("t"),
            "cls": c.get("cls"),
            "label": _label(labels, c.get("cls")),
            "first_sight": bool(c.get("first_sight")),
            "trap": bool(c.get("trap")),
        }
        for c in commits
        if isinstance(c, dict) and isinstance(c.get("t"), int)
    ]
    return {
        "tasks": tasks,
        "commits": marks,
        "labels": [str(label) for label in labels],
        "hot": sorted(hot),
    }


class AlloData:
    """The viewer's incremental reader of one AlloBench cell directory (thread-safe)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._tail = JsonlTail(run_dir / layout.EPISODES)
        self._lock = threading.Lock()
        self._episodes: list[dict[str, Any]] = []
        self._spans: list[tuple[int, int]] = []

    def _refresh(self) -> None:
        reset, lines = self._tail.poll()
        if reset:
            self._episodes, self._spans = [], []
        for line in lines:
            self._take(line)

    def _take(self, line: Line) -> None:
        self._episodes.append(episode_summary(len(self._episodes), line.row))
        self._spans.append((line.start, line.end))

    def episodes(self, start: int = 0) -> dict[str, Any]:
        """Episode figures from episode ``start`` on (the page asks only for new ones)."""
        with self._lock:
            self._refresh()
            start = max(start, 0)
            rows = self._episodes[start:]
            return {"episodes": rows, "next": start + len(rows), "total": len(self._episodes)}

    def episode(self, number: int) -> dict[str, Any] | None:
        """The full record of one episode, turns included, with its ``strip``
        (:func:`episode_strip`); ``None`` when there is no such episode yet."""
        with self._lock:
            self._refresh()
            if not 0 <= number < len(self._spans):
                return None
            start, end = self._spans[number]
        rows = read_span(self._tail.path, start, end)
        if not rows:
            return None
        return {"episode": number, **rows[0], "strip": episode_strip(rows[0])}

    def search(self, query: str) -> dict[str, Any]:
        """The turns (prompts, replies, scripts) holding ``query``, at most ``MAX_HITS``."""
        with self._lock:
            self._refresh()
            end = self._tail.offset
        hits: list[dict[str, Any]] = []
        for number, row, _, _ in search_lines(self._tail.path, end, query):
            turns = row.get("turns") if isinstance(row.get("turns"), list) else []
            for turn in turns:
                found = first_match(turn, query) if isinstance(turn, dict) else None
                if found is None:
                    continue
                if len(hits) == MAX_HITS:
                    return {"query": query, "hits": hits, "truncated": True}
                hits.append(
                    {"episode": number, "t": turn.get("t"), "field": found[0], "excerpt": found[1]}
                )
        return {"query": query, "hits": hits, "truncated": False}

    # ------------------------------------------------------------------ what the viewer serves

    @staticmethod
    def headline(config: dict[str, Any], summary: dict[str, Any] | None) -> dict[str, Any]:
        """The figures the runs table sorts by: score and first-sight rate (empty until the
        cell has a summary)."""
        s = summary or {}
        return {
            "score": s.get("score"),
            "first_sight_rate": s.get("first_sight_rate"),
            "episodes": s.get("episodes"),
            "cost_usd": s.get("cost_usd"),
            "llm_calls": s.get("llm_calls"),  # calls without a cost: "unpriced"
            "policy": config.get("actor") or config.get("policy"),
            "framing": config.get("framing"),
        }

    @staticmethod
    def facets(config: dict[str, Any]) -> dict[str, Any]:
        """What the run list groups and filters by: the paper condition and the actor
        (a model or a scripted policy)."""
        actor = config.get("actor") or config.get("policy")
        condition = config.get("condition")
        return {
            "condition": str(condition) if condition else None,
            "actors": [str(actor)] if actor else [],
        }

    def routes(self) -> dict[tuple[str, int], Route]:
        """The API's AlloBench endpoints, by name and path length (see the server)."""
        return {
            ("episodes", 1): lambda e, r, q: with_status(e, self.episodes(query_int(q, "from", 0))),
            ("episode", 2): lambda e, r, q: found(
                self.episode(path_int(r[1], "episode")), "episode"
            ),
        }

    def bundle(self, ask: Ask, safe: re.Pattern[str]) -> None:
        """Ask every answer a static bundle holds of the cell."""
        episodes = ask(["episodes"], {"from": 0})
        for number in range(episodes["total"]):
            ask(["episode", str(number)], None)
