"""What the model saw: one recorded call of a run, read from ``record.sqlite``.

The event log keeps a model's reply but not its prompt; ``record.sqlite``
(:mod:`econbench.agents.models.record`) keeps every request once per distinct message. This
module rebuilds one call's messages in order, read-only (a ``mode=ro`` URI: the viewer never
writes, nor leaves a journal beside a record at rest) and bounded like every other read of
the viewer: at most ``MAX_CALL_BYTES`` of message text per answer, each message cut at
``MAX_MESSAGE_CHARS``; a longer request is paged with ``from``. It also says where the
request stops repeating the previous request of the same conversation (``new_from``), so
the page can fold the history the model saw already and show what was new: the wake's
observation, the tool results, a compaction's summary.

A record being written is in WAL mode; a read-only connection reads it as of its last
committed call. The file is opened per request, so a growing run is always read afresh.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from econbench.agents.models.record import common_prefix, message_hashes_of
from econbench.runs import layout

MAX_CALL_BYTES = 1 << 20
"""Message text in one answer; the page asks again from ``next`` for the rest."""
MAX_MESSAGE_CHARS = 200_000
"""Text kept of one message's content (a 90-day prompt's tool results stay far below)."""
MAX_AGENTS = 1000


class RecordUnavailable(LookupError):
    """The run has no readable record (no model played, or the file is not a record)."""


def _connect(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise RecordUnavailable("this run has no record.sqlite (no model played in it)")
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
        db.execute("SELECT 1 FROM calls LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise RecordUnavailable(f"record.sqlite cannot be read: {exc}") from None
    return db


def _cut(text: Any, limit: int) -> tuple[Any, bool]:
    if isinstance(text, str) and len(text) > limit:
        return text[:limit], True
    return text, False


def _message(position: int, digest: str, body: str | None) -> dict[str, Any]:
    """One stored message as the page shows it (content cut at ``MAX_MESSAGE_CHARS``)."""
    if body is None:
        return {"i": position, "hash": digest[:12], "role": "?", "missing": True}
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        data = {"role": "?", "content": body}
    if not isinstance(data, dict):
        data = {"role": "?", "content": str(data)}
    data.pop("provider_data", None)  # signatures and item ids: opaque, and large
    content, cut = _cut(data.get("content", ""), MAX_MESSAGE_CHARS)
    reasoning, cut_r = _cut(data.get("reasoning"), MAX_MESSAGE_CHARS)
    out = {"i": position, "hash": digest[:12], **data, "content": content}
    if reasoning is not None:
        out["reasoning"] = reasoning
    out["chars"] = len(body)
    if cut or cut_r:
        out["truncated"] = True
    return out


class RecordData:
    """Read-only access to one run's ``record.sqlite`` (a fresh connection per call)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / layout.RECORD

    def available(self) -> bool:
        return self.path.is_file()

    def agents(self) -> dict[str, Any]:
        """Every agent that made calls, with its model and how many calls it made."""
        with closing(_connect(self.path)) as db:
            rows = db.execute(
                "SELECT agent, COUNT(*) FROM calls GROUP BY agent ORDER BY agent LIMIT ?",
                (MAX_AGENTS,),
            ).fetchall()
            models = dict(db.execute("SELECT agent, model FROM agents").fetchall())
        return {
            "agents": [{"agent": a, "calls": n, "model": models.get(a)} for a, n in rows],
        }

    def call(self, agent: str, idx: int, start: int = 0) -> dict[str, Any] | None:
        """Call ``idx`` of ``agent``: its messages in order from ``start`` (bounded), tools,
        settings, reply, usage and cache marker, and the attempts that failed before it;
        ``None`` when the record holds no such call (yet)."""
        with closing(_connect(self.path)) as db:
            row = db.execute(
                "SELECT model, message_hashes, tools_hash, config, output FROM calls "
                "WHERE agent = ? AND idx = ?",
                (agent, idx),
            ).fetchone()
            if row is None:
                return None
            model, hashes_text, tools_hash, config, output_text = row
            hashes = message_hashes_of(db, agent, idx, hashes_text)
            # The previous request of the same conversation (same tools), not a compaction's
            # summariser call in between: what the model had already seen.
            prev = db.execute(
                "SELECT idx, message_hashes FROM calls WHERE agent = ? AND idx < ? "
                "AND tools_hash = ? ORDER BY idx DESC LIMIT 1",
                (agent, idx, tools_hash),
            ).fetchone()
            seen = message_hashes_of(db, agent, prev[0], prev[1]) if prev else []
            new_from = common_prefix(seen, hashes) if prev else 0
            messages, next_at = self._messages(db, hashes, max(start, 0))
            tools = db.execute("SELECT body FROM tools WHERE hash = ?", (tools_hash,)).fetchone()
            failures = db.execute(
                "SELECT seq, kind, error_type, message, retry_after FROM failures "
                "WHERE agent = ? AND idx = ? ORDER BY seq",
                (agent, idx),
            ).fetchall()
            total = db.execute("SELECT COUNT(*) FROM calls WHERE agent = ?", (agent,)).fetchone()
        output = json.loads(output_text)
        if isinstance(output, dict):
            output.pop("provider_data", None)
            for key in ("text", "reasoning"):
                output[key] = _cut(output.get(key), MAX_MESSAGE_CHARS)[0]
        tool_list = json.loads(tools[0]) if tools else []
        return {
            "agent": agent,
            "idx": idx,
            "calls": int(total[0]),
            "model": model,
            "config": json.loads(config),
            "tools": [t.get("name") for t in tool_list if isinstance(t, dict)],
            "output": output,
            "total_messages": len(hashes),
            "new_from": new_from,
            "from": max(start, 0),
            "messages": messages,
            "next": next_at,
            "failures": [
                {"seq": s, "kind": k, "error_type": t, "message": m[:2000], "retry_after": r}
                for s, k, t, m, r in failures
            ],
        }

    @staticmethod
    def _messages(
        db: sqlite3.Connection, hashes: list[str], start: int
    ) -> tuple[list[dict[str, Any]], int | None]:
        """Messages from ``start`` until ``MAX_CALL_BYTES`` (at least one); the position to
        ask from next, or ``None`` when the request is complete."""
        out: list[dict[str, Any]] = []
        size = 0
        for position in range(start, len(hashes)):
            digest = hashes[position]
            found = db.execute("SELECT body FROM messages WHERE hash = ?", (digest,)).fetchone()
            message = _message(position, digest, found[0] if found else None)
            weight = len(message.get("content") or "") + len(message.get("reasoning") or "")
            if out and size + weight > MAX_CALL_BYTES:
                return out, position
            out.append(message)
            size += weight
        return out, None
