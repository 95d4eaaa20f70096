"""What the model saw: the viewer's record endpoints, the runs table's figures, sweeps."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.runs.test_viewer_api import Client, serve
from tests.runs.viewer_samples import HOSTILE, SUMMARY, allo_cell, coffee_run, compacting_run

from econbench.agents.compaction import is_summary_request
from econbench.agents.models.record import CallRecord
from econbench.runs import layout
from econbench.runs.viewer import record_data

DAYS = 4


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("record-samples")
    coffee_run(root / "coffee", days=DAYS)
    compacting_run(root / "compacting")
    allo_cell(root / "allo", episodes=1)
    return root


@pytest.fixture(scope="module")
def shared(samples: Path) -> Iterator[Client]:
    yield from serve(samples)


def model_events(run_dir: Path, firm: str) -> list[dict[str, Any]]:
    """The firm's replies and compactions, in log order: one recorded call each."""
    return [
        e
        for e in layout.read_jsonl(run_dir / layout.EVENTS)
        if e["type"] in ("model_call", "compaction") and e.get("firm") == firm
    ]


def transcript_calls(client: Client, run: str, firm: str, days: range) -> list[dict[str, Any]]:
    out = []
    for day in days:
        body = client.get(f"/api/run/{run}/transcript?firm={firm}&day={day}")
        out += [e for e in body["entries"] if e["type"] in ("model_call", "compaction")]
    return out


def test_the_calls_endpoint_lists_the_agents_of_the_record(shared: Client) -> None:
    run = shared.run_id("coffee")
    agents = shared.get(f"/api/run/{run}/calls")["agents"]
    assert [a["agent"] for a in agents] == ["roaster_A"]
    assert agents[0]["model"] == "scripted/viewer-roaster"
    assert agents[0]["calls"] == len(model_events(shared_root(shared) / "coffee", "roaster_A"))


def shared_root(client: Client) -> Path:
    return Path(client.get("/api/runs")["root"])


def test_each_transcript_call_names_its_request_and_the_reply_matches(shared: Client) -> None:
    for rel, days in (("coffee", DAYS), ("compacting", 8)):
        run = shared.run_id(rel)
        entries = transcript_calls(shared, run, "roaster_A", range(days))
        made = [e.get("calls", 1) for e in entries]  # a compaction may make two calls
        assert [e["record_call"] for e in entries] == [
            sum(made[: i + 1]) - 1 for i in range(len(made))
        ]
        assert rel == "coffee" or 2 in made, "the compacting sample has a two-call compaction"
        for entry, calls in zip(entries, made, strict=True):
            last = entry["record_call"]
            outputs = [
                shared.get(f"/api/run/{run}/call?agent=roaster_A&n={n}")["output"]
                for n in range(last - calls + 1, last + 1)
            ]
            said = entry["text"] if entry["type"] == "model_call" else entry["summary"]
            assert outputs[-1]["text"] == said
            for key in outputs[-1]["usage"]:  # the event's usage covers all its calls
                assert entry["usage"][key] == sum(o["usage"].get(key, 0) for o in outputs)


def test_a_request_holds_every_message_in_order_with_what_is_new(
    shared: Client, samples: Path
) -> None:
    run = shared.run_id("coffee")
    with CallRecord(samples / "coffee" / layout.RECORD, readonly=True) as record:
        calls = list(record.calls("roaster_A"))
        want = [[m.to_dict() for m in record.messages_of(c)] for c in calls]
    for idx in (0, 1, len(calls) - 1):
        body = shared.get(f"/api/run/{run}/call?agent=roaster_A&n={idx}")
        got = [
            {k: v for k, v in m.items() if k not in ("i", "hash", "chars")}
            for m in body["messages"]
        ]
        assert got == [{k: v for k, v in m.items() if k != "provider_data"} for m in want[idx]]
        assert body["messages"][0]["role"] == "system"
        assert body["total_messages"] == len(want[idx]) and body["next"] is None
        assert "view_trial_balance" in body["tools"]
    first, second = (shared.get(f"/api/run/{run}/call?agent=roaster_A&n={i}") for i in (0, 1))
    assert first["new_from"] == 0
    assert first["messages"][1]["role"] == "user"  # the first wake's observation
    # The second request repeats the first and adds its reply and the tool's result.
    assert second["new_from"] == first["total_messages"]
    assert [m["role"] for m in second["messages"][second["new_from"] :]] == ["assistant", "tool"]
    assert HOSTILE in second["messages"][second["new_from"]]["content"]


def test_a_compacted_request_starts_with_the_summary(shared: Client, samples: Path) -> None:
    run = shared.run_id("compacting")
    events = model_events(samples / "compacting", "roaster_A")
    made = [e.get("calls", 1) for e in events]  # recorded calls per event
    first = next(i for i, e in enumerate(events) if e["type"] == "compaction")
    at = sum(made[: first + 1]) - 1  # the compaction's last call: the one that summarised
    summariser = shared.get(f"/api/run/{run}/call?agent=roaster_A&n={at}")
    assert is_summary_request(summariser["messages"]) and summariser["output"]["text"] == SUMMARY
    after = shared.get(f"/api/run/{run}/call?agent=roaster_A&n={at + 1}")
    assert any(SUMMARY in (m.get("content") or "") for m in after["messages"])
    before = shared.get(f"/api/run/{run}/call?agent=roaster_A&n={at - 1}")
    assert after["total_messages"] < before["total_messages"]  # the summary replaced history
    assert after["new_from"] < before["total_messages"]
    usage = after["output"]["usage"]
    assert usage["cached_input_tokens"] == 100 * after["total_messages"]


def test_a_long_request_is_paged_and_a_long_message_cut(
    shared: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = shared.run_id("coffee")
    whole = shared.get(f"/api/run/{run}/call?agent=roaster_A&n=5")
    monkeypatch.setattr(record_data, "MAX_CALL_BYTES", 10)
    monkeypatch.setattr(record_data, "MAX_MESSAGE_CHARS", 50)
    seen: list[dict[str, Any]] = []
    start: int | None = 0
    while start is not None:
        page = shared.get(f"/api/run/{run}/call?agent=roaster_A&n=5&from={start}")
        assert len(page["messages"]) == 1  # at least one message, however small the bound
        seen += page["messages"]
        start = page["next"]
    assert [m["i"] for m in seen] == list(range(whole["total_messages"]))
    assert seen[0]["truncated"] and len(seen[0]["content"]) == 50


def test_missing_calls_and_records_are_404s_with_a_reason(shared: Client) -> None:
    run = shared.run_id("coffee")
    assert shared.status(f"/api/run/{run}/call?agent=roaster_A&n=999") == 404
    assert shared.status(f"/api/run/{run}/call?agent=nobody&n=0") == 404
    assert shared.status(f"/api/run/{run}/call?n=0") == 400
    assert shared.status(f"/api/run/{run}/call?agent=roaster_A&n=x") == 400
    allo = shared.run_id("allo")
    assert shared.status(f"/api/run/{allo}/calls") == 404
    index = shared.get(f"/api/run/{shared.run_id('coffee')}/index")
    assert index["record"] is True


def test_the_record_is_read_without_writing_beside_it(shared: Client, samples: Path) -> None:
    before = sorted(p.name for p in (samples / "coffee").iterdir())
    shared.get(f"/api/run/{shared.run_id('coffee')}/call?agent=roaster_A&n=0")
    assert sorted(p.name for p in (samples / "coffee").iterdir()) == before


def test_the_run_list_carries_headline_figures_and_seeds(shared: Client, samples: Path) -> None:
    runs = {r["rel"]: r for r in shared.get("/api/runs")["runs"]}
    summary = json.loads((samples / "coffee" / layout.SUMMARY).read_text())
    coffee = runs["coffee"]
    assert coffee["seed"] == 1
    assert coffee["headline"]["net_income"] == {
        f: v["net_income"] for f, v in summary["firms"].items()
    }
    assert coffee["headline"]["policies"]["roaster_A"] == "scripted/viewer-roaster"
    allo_summary = json.loads((samples / "allo" / layout.SUMMARY).read_text())
    assert runs["allo"]["headline"]["score"] == allo_summary["score"]
    assert runs["allo"]["headline"]["policy"] == "wait:2"


def test_a_sweep_root_is_summarised(samples: Path, tmp_path: Path) -> None:
    doc = {"name": "mini", "benchmark": "coffee", "description": "d", "entries": [{}, {}]}
    (tmp_path / layout.SWEEP).write_text(json.dumps(doc))
    shutil.copytree(samples / "coffee", tmp_path / "runs" / "a")
    for client in serve(tmp_path):
        body = client.get("/api/runs")
        assert body["sweep"] == {
            "name": "mini",
            "benchmark": "coffee",
            "description": "d",
            "entries": 2,
        }
        assert [r["rel"] for r in body["runs"]] == ["runs/a"]


def test_search_finds_transcript_entries_and_turns(shared: Client, samples: Path) -> None:
    run = shared.run_id("coffee")
    body = shared.get(f"/api/run/{run}/search?q=%3CSCRIPT%3Ewindow")  # case-insensitive
    events = layout.read_jsonl(samples / "coffee" / layout.EVENTS)
    holding = [
        e["seq"]
        for e in events
        if e["type"] in ("model_call", "tool_call", "message")
        and "<script>" in json.dumps(e, ensure_ascii=False)
    ]
    assert [h["seq"] for h in body["hits"]] == holding and not body["truncated"]
    message = next(h for h in body["hits"] if h["type"] == "message")
    assert message["firms"] == ["roaster_A", "farmer_A"] and message["field"] == "body"
    assert HOSTILE in message["excerpt"]
    nothing = shared.get(f"/api/run/{run}/search?q=no%20such%20phrase")
    assert nothing["hits"] == []
    allo = shared.get(f"/api/run/{shared.run_id('allo')}/search?q=KEEP%20or%20PASS")
    assert allo["hits"] and {h["episode"] for h in allo["hits"]} == {0}
    assert allo["hits"][0]["field"] == "observation"


def test_search_refuses_an_empty_or_huge_query(shared: Client) -> None:
    run = shared.run_id("coffee")
    assert shared.status(f"/api/run/{run}/search") == 400
    assert shared.status(f"/api/run/{run}/search?q=" + "x" * 201) == 400
