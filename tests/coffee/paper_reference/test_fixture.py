"""The CoffeeBench ``paper`` conformance fixture is self-consistent, and ``ScriptedServer``
answers it the way it answered the reference (so a later run of econbench's ``paper``
condition against it can be compared byte for byte)."""

from __future__ import annotations

import itertools
import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest
from tests.coffee.paper_reference import fixture
from tests.coffee.paper_reference.server import (
    ENDPOINTS,
    FirmScript,
    Reply,
    Scenario,
    ScriptedCall,
    ScriptedServer,
    Usage,
    is_summary_request,
)

SUMMARY_MARKER = "[The block above is a system-generated factual summary of your earlier turns"
ID8 = re.compile(r"^(lst_|off_|dl_|msg_)?[0-9a-f]{8}$")


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return fixture.load_scenario()


@pytest.fixture(scope="module")
def reqs() -> dict[str, list[fixture.FixtureRequest]]:
    return fixture.requests()


def _history(api: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    return body["messages"] if api == "anthropic" else body["input"]


def test_params_name_the_run(scenario: Scenario) -> None:
    p = scenario.params
    assert (p["seed"], p["max_days"], p["main_agent"]) == (0, 4, "roaster_A")
    assert p["models"]["roaster_A"] == "gpt-5.5"
    assert p["models"]["farmer_A"] == "claude-sonnet-4-6"
    assert sorted(m for a, m in p["models"].items() if a not in scenario.firms) == ["passive"] * 4
    assert {f: s.api for f, s in scenario.firms.items()} == {
        "roaster_A": "openai",
        "farmer_A": "anthropic",
    }


def test_every_body_parses_and_the_path_names_its_firm(
    scenario: Scenario, reqs: dict[str, list[fixture.FixtureRequest]]
) -> None:
    assert set(reqs) == set(scenario.firms)
    for firm, rs in reqs.items():
        api = scenario.firms[firm].api
        assert [r.index for r in rs] == list(range(len(rs)))
        for r in rs:
            body = r.json()
            assert r.path.startswith(f"/{firm}/")
            assert r.path[len(firm) + 1 :] in ENDPOINTS[api]
            assert body["model"] == scenario.firms[firm].model
            assert r.raw.decode("utf-8") == r.body


def test_counts_match_the_scenario(
    scenario: Scenario, reqs: dict[str, list[fixture.FixtureRequest]]
) -> None:
    for firm, script in scenario.firms.items():
        turns = [r for r in reqs[firm] if r.kind == "turn"]
        summaries = [r for r in reqs[firm] if r.kind == "summary"]
        scripted = [r.reply_index for r in turns if r.reply_index is not None]
        assert scripted == list(range(len(script.replies)))
        # past the script only text-only answers, and only at the end
        assert all(r.reply_index is None for r in turns[len(scripted) :])
        assert [r.reply_index for r in summaries] == list(range(len(script.summaries)))


def test_both_firms_compacted_once(
    scenario: Scenario, reqs: dict[str, list[fixture.FixtureRequest]]
) -> None:
    compactions = fixture.economy()["compactions"]
    for firm, script in scenario.firms.items():
        rs = reqs[firm]
        positions = [i for i, r in enumerate(rs) if r.kind == "summary"]
        assert len(positions) == 1 == len(compactions[firm])
        i = positions[0]
        assert is_summary_request(script.api, rs[i].json())
        assert not any(is_summary_request(script.api, r.json()) for r in rs if r.kind == "turn")
        # the turn before reported ≥ 160,000 input tokens; the reference then compacted
        before = rs[i - 1]
        assert before.reply_index is not None
        assert script.replies[before.reply_index].usage.input_tokens >= 160_000
        assert compactions[firm][0]["triggered_at_tokens"] >= 160_000
        # the next turn carries the scripted summary and a shorter history
        after = rs[i + 1].json()
        summary = script.summaries[0].text.strip()
        text = json.dumps(_history(script.api, after), ensure_ascii=False)
        assert f"<context_summary>\\n{json.dumps(summary)[1:-1]}\\n</context_summary>" in text
        assert SUMMARY_MARKER in rs[i + 1].body
        assert SUMMARY_MARKER not in before.body
        assert len(_history(script.api, after)) < len(_history(script.api, before.json()))
        # the summary request sends the middle of the transcript, no tools
        request = rs[i].json()
        assert "tools" not in request
        (user,) = [m for m in _history(script.api, request) if m.get("role") == "user"]
        assert "\n\nTRANSCRIPT:\n[" in user["content"]


def _assistant_turn_in(api: str, history: list[dict[str, Any]], reply: Reply) -> bool:
    """Whether ``history`` replays ``reply`` as the reference does (its raw provider form)."""
    call = reply.tool_call
    if api == "anthropic":
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        if call is not None:
            blocks.append(
                {"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments}
            )
        return {"role": "assistant", "content": blocks} in history
    wanted = []
    if reply.text:
        texts = [{"type": "output_text", "text": reply.text}]
        wanted.append(("message", texts))
    if call is not None:
        args = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        wanted.append(("function_call", (call.call_id, call.name, args)))
    found = []
    for item in history:
        if item.get("type") == "message" and item.get("role") == "assistant":
            found.append(("message", item["content"]))
        elif item.get("type") == "function_call":
            found.append(("function_call", (item["call_id"], item["name"], item["arguments"])))
    return all(w in found for w in wanted)


def _tool_result_in(api: str, history: list[dict[str, Any]], call_id: str) -> str | None:
    for item in history:
        if api == "anthropic":
            content = item.get("content")
            if item.get("role") == "user" and isinstance(content, list):
                for b in content:
                    if b.get("type") == "tool_result" and b.get("tool_use_id") == call_id:
                        return b["content"]
        elif item.get("type") == "function_call_output" and item.get("call_id") == call_id:
            return item["output"]
    return None


def test_each_scripted_reply_appears_in_the_next_turns_history(
    scenario: Scenario, reqs: dict[str, list[fixture.FixtureRequest]]
) -> None:
    for firm, script in scenario.firms.items():
        turns = [r for r in reqs[firm] if r.kind == "turn"]
        for this, nxt in itertools.pairwise(turns):
            assert this.reply_index is not None
            reply = script.replies[this.reply_index]
            history = _history(script.api, nxt.json())
            assert _assistant_turn_in(script.api, history, reply), (firm, this.index)
            if reply.tool_call is not None:
                result = _tool_result_in(script.api, history, reply.tool_call.call_id)
                assert result is not None, (firm, this.index)
                assert json.loads(result)["status"] in ("success", "error")


def test_the_fixture_exercises_what_it_should(
    scenario: Scenario, reqs: dict[str, list[fixture.FixtureRequest]]
) -> None:
    calls = {
        r.tool_call.name
        for s in scenario.firms.values()
        for r in s.replies
        if r.tool_call is not None
    }
    assert calls >= {
        "view_listings",
        "post_listing",
        "make_offer",
        "accept_offer",
        "pay_invoice",
        "roast",
        "send_message",
        "view_messages",
        "read_message",
        "view_trial_balance",
        "view_deals",
        "view_offers",
        "return_shipment",
        "wait_for_next_day",
        "buy_everything",  # unknown tool
    }
    for s in scenario.firms.values():
        assert any(r.tool_call is None for r in s.replies)  # a turn with no tool call
    text = "\n".join(r.body for rs in reqs.values() for r in rs)
    for needle in (
        "Unknown action 'buy_everything'. Pick one of the registered tools.",
        "Tool call failed: TypeError",  # malformed JSON arguments
        "[Wake reason: offer_received: ",
        "[Wake reason: deal_accepted: ",
        "[Wake reason: dm_received: ",
        "[Wake reason: invoice_paid: ",
        "[Wake reason: return_received: ",
    ):
        assert needle in text.replace('\\"', '"'), needle
    statuses: dict[str, str] = {}
    for firm, rs in reqs.items():
        api = scenario.firms[firm].api
        for r in rs:
            for s in scenario.firms[firm].replies:
                if s.tool_call is not None:
                    out = _tool_result_in(api, _history(api, r.json()), s.tool_call.call_id)
                    if out is not None:
                        statuses[s.tool_call.call_id] = json.loads(out)["status"]
    # every scripted call but the last of each firm (its result is never sent) got a result
    n_calls = sum(1 for s in scenario.firms.values() for r in s.replies if r.tool_call)
    assert len(statuses) == n_calls - len(scenario.firms)
    errors = sorted(cid for cid, st in statuses.items() if st == "error")
    # post_listing over holdings; unknown tool; roast without green; malformed arguments
    assert errors == ["call_rA_003", "call_rA_006", "call_rA_007", "toolu_fA_004"]


def test_economy_holds_the_traded_ids(scenario: Scenario) -> None:
    eco = fixture.economy()
    market = eco["marketplace"]
    roaster = scenario.firms["roaster_A"].replies
    farmer = scenario.firms["farmer_A"].replies
    offered = next(
        r.tool_call.arguments
        for r in roaster
        if r.tool_call is not None
        and r.tool_call.name == "make_offer"
        and isinstance(r.tool_call.arguments, dict)
    )
    accepted = next(
        r.tool_call.arguments
        for r in farmer
        if r.tool_call is not None and r.tool_call.name == "accept_offer"
    )
    paid = next(
        r.tool_call.arguments
        for r in roaster
        if r.tool_call is not None and r.tool_call.name == "pay_invoice"
    )
    assert offered["listing_id"] in {lt["id"] for lt in market["listings"]}
    (deal,) = market["deals"]
    assert deal["listing_id"] == offered["listing_id"]
    assert deal["offer_id"] == accepted["offer_id"]
    assert deal["invoice_id"] == paid["invoice_id"]
    assert (deal["seller_id"], deal["buyer_id"]) == ("farmer_A", "roaster_A")
    for kind in ("listings", "offers", "deals", "messages"):
        assert all(ID8.match(x["id"]) for x in market[kind])
    for entries in eco["truth_ledger"].values():
        assert all(ID8.match(e["id"]) for e in entries)
    # all ids distinct: one shared id source
    ids = [x["id"] for k in ("listings", "offers", "deals", "messages") for x in market[k]]
    ids += [e["id"] for entries in eco["truth_ledger"].values() for e in entries]
    assert len(set(ids)) == len(ids)


def test_economy_is_complete_and_consistent() -> None:
    eco = fixture.economy()
    agents = eco["result"]["agents"]
    assert set(agents) == set(eco["agent_books"]) == set(fixture.params()["models"])
    assert [d["day"] for d in eco["daily_stats"]] == [0, 1, 2, 3]
    last = eco["daily_stats"][-1]["per_agent"]
    for aid, books in eco["agent_books"].items():
        assert round(books["cash"], 2) == last[aid]["cash"]
        assert {k: v for k, v in books["inventory"].items() if v} == {
            k: v for k, v in last[aid]["inventory_by_item"].items() if v
        }
        assert agents[aid]["completed"] is True
    # the invoice was paid, then part of the goods returned for a refund
    roaster = eco["agent_books"]["roaster_A"]
    (invoice,) = roaster["accounts_payable"]
    assert invoice["paid"] is True
    assert invoice["credited_amount"] > 0
    types = {e["entry_type"] for e in eco["truth_ledger"]["farmer_A"]}
    assert {"sale_revenue", "sale_reversal"} <= types


def test_server_replays_the_fixture_as_captured(
    scenario: Scenario, reqs: dict[str, list[fixture.FixtureRequest]]
) -> None:
    """Posting the captured bodies again routes each to the same reply, summary or turn."""
    with ScriptedServer(scenario) as server:
        for rs in reqs.values():
            for r in rs:
                _post(f"http://127.0.0.1:{server.port}{r.path}", r.raw)
        for firm, rs in reqs.items():
            got = server.requests(firm)
            assert [(g.path, g.kind, g.reply_index) for g in got] == [
                (r.path, r.kind, r.reply_index) for r in rs
            ]
            assert server.bodies(firm) == [r.body for r in rs]
        assert server.errors == []


def _post(url: str, raw: bytes) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=raw, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _tiny() -> Scenario:
    def turn(text: str, name: str, args: dict[str, Any] | str, cid: str) -> Reply:
        return Reply(
            text=text, tool_call=ScriptedCall(name, args, cid), usage=Usage(input_tokens=7)
        )

    return Scenario(
        firms={
            "a": FirmScript(
                api="anthropic",
                model="claude-sonnet-4-6",
                replies=(turn("hi", "view_deals", {}, "toolu_1"),),
                summaries=(Reply(text="SUMMARY A"),),
                exhausted_text="done",
            ),
            "o": FirmScript(
                api="openai",
                model="gpt-5.5",
                replies=(
                    Reply(
                        text="",
                        tool_call=ScriptedCall("make_offer", '{"bad', "call_1"),
                        reasoning="think",
                    ),
                ),
                summaries=(Reply(text="SUMMARY O"),),
            ),
        }
    )


def test_server_routes_scripts_summaries_and_runs_out() -> None:
    compaction = "You are summarizing a transcript of an LLM agent's turns in a multi-day "
    compaction += "business simulation. Rest."
    with ScriptedServer(_tiny()) as server:
        a = server.base_url("a")
        o = server.base_url("o")
        assert a.endswith("/a") and o.endswith("/o/v1")
        s, r1 = _post(f"{a}/v1/messages", b'{"model":"m","messages":[]}')
        assert s == 200 and r1["stop_reason"] == "tool_use"
        assert r1["content"][1] == {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "view_deals",
            "input": {},
        }
        assert r1["usage"]["input_tokens"] == 7
        body = json.dumps({"model": "m", "system": compaction, "messages": []}).encode()
        s, r2 = _post(f"{a}/v1/messages", body)
        assert r2["content"][0]["text"] == "SUMMARY A"
        s, r3 = _post(f"{a}/v1/messages", b'{"model":"m","messages":[]}')
        assert r3["stop_reason"] == "end_turn"
        assert [b["type"] for b in r3["content"]] == ["text"]
        assert r3["content"][0]["text"] == "done"
        s, r4 = _post(f"{o}/responses", b'{"model":"m","input":[]}')
        kinds = [i["type"] for i in r4["output"]]
        assert kinds == ["reasoning", "function_call"]
        assert r4["output"][1]["arguments"] == '{"bad'
        assert r4["output"][1]["id"] == "fc_o_t000"
        body = json.dumps(
            {"model": "m", "input": [{"role": "developer", "content": compaction}]}
        ).encode()
        s, r5 = _post(f"{o}/responses", body)
        assert r5["output"][0]["content"][0]["text"] == "SUMMARY O"
        assert r5["output"][0]["id"] == "msg_o_s000"
        s, _ = _post(f"http://127.0.0.1:{server.port}/nobody/v1/messages", b"{}")
        assert s == 400
        s, _ = _post(f"{a}/v1/responses", b"{}")  # wrong API for the firm
        assert s == 400
        assert len(server.errors) == 2
        assert [(r.kind, r.reply_index) for r in server.requests("a")] == [
            ("turn", 0),
            ("summary", 0),
            ("turn", None),
        ]
        assert server.requests("a")[0].raw == b'{"model":"m","messages":[]}'


def test_official_sdks_parse_the_server_replies() -> None:
    anthropic = pytest.importorskip("anthropic")
    openai = pytest.importorskip("openai")
    with ScriptedServer(_tiny()) as server:
        ac = anthropic.Anthropic(base_url=server.base_url("a"), api_key="x", max_retries=0)
        msg = ac.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=10,
            messages=[{"role": "user", "content": "go"}],
        )
        (tool,) = [b for b in msg.content if b.type == "tool_use"]
        assert (tool.id, tool.name, tool.input) == ("toolu_1", "view_deals", {})
        assert msg.usage.input_tokens == 7
        oc = openai.OpenAI(base_url=server.base_url("o"), api_key="x", max_retries=0)
        resp = oc.responses.create(model="gpt-5.5", input=[{"role": "user", "content": "go"}])
        assert [i.type for i in resp.output] == ["reasoning", "function_call"]
        assert resp.output[1].call_id == "call_1"
        assert resp.usage.input_tokens == 1000
        resp2 = oc.responses.create(
            model="gpt-5.5",
            input=[
                {"role": "developer", "content": COMPACTION_FOR_TEST},
                {"role": "user", "content": "x"},
            ],
        )
        assert resp2.output_text == "SUMMARY O"
        assert [r.kind for r in server.requests("o")] == ["turn", "summary"]


COMPACTION_FOR_TEST = (
    "You are summarizing a transcript of an LLM agent's turns in a multi-day business "
    "simulation. Your task is ..."
)
