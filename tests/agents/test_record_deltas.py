"""``record.sqlite`` stores a call's message hashes as a change from the agent's previous call
(in full every ``FULL_LIST_EVERY``-th call), so it grows with the new messages only (issue 27);
every list reads back exactly, a schema-1 record is still read and continued as schema 1, and
rewriting a call that has later calls cannot corrupt them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from econbench.agents.models import record as record_module
from econbench.agents.models.base import ChatMessage, GenerateConfig, ModelOutput
from econbench.agents.models.record import FULL_LIST_EVERY, CallRecord
from econbench.agents.tools import ToolCall

CONFIG = GenerateConfig(temperature=0.0)


def conversations(n: int) -> list[list[ChatMessage]]:
    """``n`` requests of one growing conversation, compacted (head, summary, tail) every 40."""
    system = ChatMessage("system", "You run a roastery.")
    history: list[ChatMessage] = [ChatMessage("user", "Day 0: good morning.")]
    out = []
    for i in range(n):
        out.append([system, *history])
        history += [
            ChatMessage("assistant", f"step {i}", tool_calls=[ToolCall("view", {"i": i}, f"c{i}")]),
            ChatMessage("tool", json.dumps({"i": i, "pad": "x" * 200}), tool_call_id=f"c{i}"),
        ]
        if i % 40 == 39:
            history = [*history[:3], ChatMessage("user", f"[Summary] up to {i}"), *history[-6:]]
    return out


def record_calls(path: Path, requests: list[list[ChatMessage]], agent: str = "roaster_A") -> None:
    with CallRecord(path) as rec:
        for idx, messages in enumerate(requests):
            rec.add_call(
                agent, idx, "m/x", messages, [], CONFIG, ModelOutput(model="m/x", text=f"r{idx}")
            )


def stored(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [r[0] for r in db.execute("SELECT message_hashes FROM calls ORDER BY idx")]
    finally:
        db.close()


def test_every_list_reads_back_and_most_are_stored_as_changes(tmp_path: Path) -> None:
    requests = conversations(130)
    record_calls(tmp_path / "r.sqlite", requests)
    with CallRecord(tmp_path / "r.sqlite", readonly=True) as rec:
        calls = list(rec.calls("roaster_A"))
        assert [c.message_hashes for c in calls] == [[m.digest for m in r] for r in requests]
        for idx in (129, 77, 50, 49, 0, 101):  # any call alone, in any order
            assert rec.call_at("roaster_A", idx).message_hashes == [  # type: ignore[union-attr]
                m.digest for m in requests[idx]
            ]
        assert [m.content for m in rec.messages_of(calls[-1])] == [m.content for m in requests[-1]]
    rows = stored(tmp_path / "r.sqlite")
    full = [i for i, text in enumerate(rows) if isinstance(json.loads(text), list)]
    assert full == list(range(0, 130, FULL_LIST_EVERY))
    as_lists = sum(len(json.dumps([m.digest for m in r])) for r in requests)
    assert sum(map(len, rows)) < as_lists / 5, "the stored lists grow with the new messages"


def as_schema_1(path: Path) -> None:
    """Make ``path`` what an econbench of schema 1 wrote: every list in full."""
    with CallRecord(path, readonly=True) as rec:
        lists = {(c.agent, c.idx): c.message_hashes for c in rec.calls()}
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        for (agent, idx), hashes in lists.items():
            db.execute(
                "UPDATE calls SET message_hashes = ? WHERE agent = ? AND idx = ?",
                (json.dumps(hashes), agent, idx),
            )
    db.close()


def test_a_schema_1_record_is_read_and_continued_in_full(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    requests = conversations(12)
    record_calls(path, requests[:6])
    as_schema_1(path)
    with CallRecord(path) as rec:  # continued by this econbench
        for idx in range(6, 12):
            output = ModelOutput(model="m/x")
            rec.add_call("roaster_A", idx, "m/x", requests[idx], [], CONFIG, output)
    assert all(isinstance(json.loads(text), list) for text in stored(path))
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
    db.close()
    with CallRecord(path, readonly=True) as rec:
        assert [c.message_hashes for c in rec.calls()] == [[m.digest for m in r] for r in requests]


def test_rewriting_a_call_with_later_calls_keeps_them_readable(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    requests = conversations(8)
    record_calls(path, requests)
    other = [requests[3][0], ChatMessage("user", "something else entirely")]
    with CallRecord(path) as rec:
        rec.add_call("roaster_A", 3, "m/x", other, [], CONFIG, ModelOutput(model="m/x"))
    with CallRecord(path, readonly=True) as rec:
        lists = [c.message_hashes for c in rec.calls()]
    expected = [[m.digest for m in r] for r in requests]
    expected[3] = [m.digest for m in other]
    assert lists == expected


def test_a_change_from_a_missing_call_is_a_record_error(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    record_calls(path, conversations(5))
    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM calls WHERE idx = 2")
    db.close()
    with (
        CallRecord(path, readonly=True) as rec,
        pytest.raises(record_module.RecordError, match="change from call 2, which is missing"),
    ):
        rec.call_at("roaster_A", 3)


def test_the_record_computes_each_request_key_as_request_key_does(tmp_path: Path) -> None:
    """The key the record returns for each call is ``request_key``'s, through growth,
    compaction, another config, another model and non-ASCII."""
    from econbench.agents.models.record import request_key

    requests = conversations(90)
    configs = [CONFIG, GenerateConfig(temperature=0.5, max_tokens=10), CONFIG]
    with CallRecord(tmp_path / "r.sqlite") as rec:
        for idx, messages in enumerate(requests):
            config = configs[(idx // 30) % 3]
            model = "m/x" if idx % 7 else "m/ü"
            if idx % 11 == 5:
                messages = [*messages, ChatMessage("user", "naïve ☕")]
            key = rec.add_call("a", idx, model, messages, [], config, ModelOutput(model=model))
            assert key == request_key(model, messages, [], config), idx
