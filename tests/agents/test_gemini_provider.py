"""GeminiProvider through the real ``google-genai`` SDK against a local fake Gemini API."""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field
from tests.fakes.common import BrainReply, BrainRequest, Fault
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.harness import ProviderHarness, shop_brain

from econbench.agents.models.base import (
    ChatMessage,
    FatalModelError,
    GenerateConfig,
    TransientModelError,
)
from econbench.agents.models.gemini_provider import GeminiProvider, to_gemini_schema
from econbench.agents.tools import ToolCall, Toolkit, ToolSpec, tool

KEY = "AIza-test-DO-NOT-LEAK-0123456789"
MODEL = "gemini-3.1-pro"
SYSTEM = "You run roaster_A, a coffee roaster. " * 40


class Leg(BaseModel):
    item: Literal["green", "roasted"] = Field(description="Which coffee.")
    kg: float = Field(gt=0, description="Kilograms.")


class Shop(Toolkit):
    @tool("write")
    def buy(self, qty: int, price: float | None = None) -> dict:
        """Buy green coffee.

        Args:
            qty: Kilograms to buy.
            price: Highest price per kilogram, or none for the market price.
        """
        return {"bought": qty}

    @tool()
    def check_cash(self) -> dict:
        """Show the firm's cash."""
        return {"cash": 1000.0}

    @tool("write")
    def ship(self, legs: list[Leg], mode: Literal[1, 2] = 1, notes: dict[str, str] | None = None):
        """Ship an order in legs.

        Args:
            legs: The legs of the shipment.
            mode: 1 for road, 2 for rail.
            notes: Free-form notes by key.
        """
        return {"legs": len(legs)}


TOOLS: list[ToolSpec] = Shop().specs()


scripted = shop_brain
Harness = ProviderHarness


@pytest.fixture
def h() -> Any:
    def make(server: Any, **kw: Any) -> GeminiProvider:
        return GeminiProvider(MODEL, api_key=KEY, base_url=server.root_url, **kw)

    harness = ProviderHarness(make, TOOLS)
    yield harness
    harness.close()


def convo(*texts: str) -> list[ChatMessage]:
    return [ChatMessage("system", SYSTEM), *(ChatMessage("user", t) for t in texts)]


def generation_config(body: dict[str, Any]) -> dict[str, Any]:
    return body.get("generationConfig") or {}


# ---------------------------------------------------------------- happy paths
def test_text_reply_and_request_shape(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        out = h.call(h.make(server), convo("hello"))
        request = server.requests[0]
        headers = server.headers[0]
    body = request["body"]
    assert out.text == "echo: hello"
    assert request["path"].endswith(f"/models/{MODEL}:generateContent")
    assert body["systemInstruction"]["parts"] == [{"text": SYSTEM}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hello"}]}]
    declarations = {d["name"]: d for d in body["tools"][0]["functionDeclarations"]}
    assert "parameters" not in declarations["check_cash"]  # no empty OBJECT schemas
    assert declarations["buy"]["parameters"]["properties"]["price"]["nullable"] is True
    assert generation_config(body)["thinkingConfig"] == {"include_thoughts": True}
    assert headers["x-goog-api-key"] == KEY


def test_tool_call_round_trip_keeps_gemini_ids_and_signatures(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        provider = h.make(server)
        messages = convo("please buy")
        first = h.call(provider, messages)
        [tc] = first.tool_calls
        assert (tc.name, tc.arguments, tc.call_id) == ("buy", {"qty": 5}, "call_0001_0")
        assert first.text == "Buying."
        messages += [
            first.as_message(),
            ChatMessage("tool", '{"status": "success", "bought": 5}', tool_call_id=tc.call_id),
        ]
        second = h.call(provider, messages)
        body = server.requests[1]["body"]
    assert second.text.startswith("tool said")
    model_turn, results = body["contents"][1], body["contents"][2]
    call_part = model_turn["parts"][1]
    assert call_part["functionCall"] == {"id": "call_0001_0", "name": "buy", "args": {"qty": 5}}
    assert call_part["thoughtSignature"]  # the fake rejects a call replayed without it
    assert results == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "call_0001_0",
                    "name": "buy",
                    "response": {"status": "success", "bought": 5},
                }
            }
        ],
    }


def test_calls_without_ids_are_matched_by_name_and_order(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        server.issue_call_ids = False
        provider = h.make(server)
        messages = convo("do two things")
        first = h.call(provider, messages)
        assert [c.name for c in first.tool_calls] == ["buy", "check_cash"]
        assert all(c.call_id for c in first.tool_calls)  # invented, so the loop can match
        messages.append(first.as_message())
        for tc in reversed(first.tool_calls):
            messages.append(ChatMessage("tool", f'{{"ok": "{tc.name}"}}', tool_call_id=tc.call_id))
        messages.append(ChatMessage("user", "Day 2, 08:00."))
        h.call(provider, messages)
        body = server.requests[1]["body"]
    model_turn, user_turn = body["contents"][1], body["contents"][2]
    assert [p["functionCall"] for p in model_turn["parts"]] == [
        {"name": "buy", "args": {"qty": 1}},  # invented ids are not sent to Gemini
        {"name": "check_cash", "args": {}},
    ]
    responses = [p.get("functionResponse") for p in user_turn["parts"]]
    assert responses[:2] == [
        {"name": "check_cash", "response": {"ok": "check_cash"}},
        {"name": "buy", "response": {"ok": "buy"}},
    ]
    assert user_turn["parts"][2] == {"text": "Day 2, 08:00."}  # after the responses


def test_usage_and_implicit_caching(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        provider = h.make(server)
        messages = convo("think, then buy")
        outputs = []
        for step in range(3):
            out = h.call(provider, messages)
            outputs.append(out)
            messages.append(out.as_message())
            for tc in out.tool_calls:
                messages.append(ChatMessage("tool", f'{{"step": {step}}}', tool_call_id=tc.call_id))
            if not out.tool_calls:
                messages.append(ChatMessage("user", f"observation {step}; think, then buy"))
        wire = server.usages
    for out, meta in zip(outputs, wire, strict=True):
        assert out.usage.input_tokens == meta["promptTokenCount"]
        assert out.usage.cached_input_tokens == meta.get("cachedContentTokenCount", 0)
        thoughts = meta.get("thoughtsTokenCount", 0)
        assert out.usage.output_tokens == meta["candidatesTokenCount"] + thoughts
        assert out.usage.reasoning_tokens == thoughts
        assert out.usage.cache_write_tokens == 0
    assert outputs[0].usage.cached_input_tokens == 0
    assert outputs[1].usage.cached_input_tokens > 0
    assert outputs[0].usage.reasoning_tokens > 0


def test_thought_summaries_and_signatures_go_back_exactly(h: Harness) -> None:
    config = GenerateConfig(thinking_budget=2048)
    with FakeGeminiServer(scripted) as server:
        provider = h.make(server)
        messages = convo("think, then buy")
        first = h.call(provider, messages, config)
        assert first.reasoning == "Cash is fine; buying 5 kg."
        sent = server.requests  # the reply as Gemini sent it is what must come back
        stored = ChatMessage.from_dict(json.loads(json.dumps(first.as_message().to_dict())))
        [tc] = stored.tool_calls
        messages += [stored, ChatMessage("tool", '{"bought": 5}', tool_call_id=tc.call_id)]
        second = h.call(provider, messages, config)
        bodies = [r["body"] for r in sent]
    assert second.text.startswith("tool said")
    assert generation_config(bodies[0])["thinkingConfig"] == {
        "include_thoughts": True,
        "thinking_budget": 2048,
    }
    replayed = bodies[1]["contents"][1]["parts"]
    assert replayed[0] == {"text": "Cash is fine; buying 5 kg.", "thought": True}
    issued = server.sign({"functionCall": {"name": "buy", "args": {"qty": 5}}})
    assert base64.urlsafe_b64decode(replayed[1]["thoughtSignature"]) == base64.b64decode(issued)


def test_history_without_provider_data_is_rebuilt(h: Harness) -> None:
    history = [
        ChatMessage("system", SYSTEM),
        ChatMessage("user", "start"),
        ChatMessage("assistant", "", tool_calls=[ToolCall("buy", {"qty": 1}, "x1")]),
        ChatMessage("tool", '{"ok": true}', name="buy"),
        ChatMessage("assistant", "two", tool_calls=[ToolCall("check_cash", {}, None)] * 2),
        ChatMessage("tool", "cash 5"),  # not JSON: wrapped; the second result is missing
        ChatMessage("user", "go on"),
    ]
    with FakeGeminiServer(scripted) as server:
        out = h.call(h.make(server), history)
        body = server.requests[0]["body"]
    assert out.text.startswith("echo:")
    responses = [
        p["functionResponse"]["response"]
        for c in body["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    ]
    assert responses == [
        {"ok": True},
        {"output": "cash 5"},
        {"error": "No result was recorded for this tool call."},
    ]


# ---------------------------------------------------------------- bad replies
def test_unknown_tool_name_comes_back_as_a_tool_call(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        server.faults.append(Fault("unknown_tool"))
        out = h.call(h.make(server), convo("please buy"))
    [tc] = out.tool_calls
    assert (tc.name, tc.arguments) == ("teleport_coffee", {})
    assert Shop().call(tc.name, tc.arguments)["status"] == "error"


def test_malformed_function_call_becomes_a_raw_tool_call(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        provider = h.make(server)
        server.faults.append(Fault("malformed_tool_json"))
        messages = convo("please buy")
        out = h.call(provider, messages)
        [tc] = out.tool_calls
        assert out.stop_reason == "malformed_function_call"
        # The reply's JSON is read here, finishMessage included (google-genai's typed
        # response drops it): the call is named and its text kept for the toolkit's error.
        assert tc.name == "buy"
        assert isinstance(tc.arguments, str) and "default_api.buy(" in tc.arguments
        error = Shop().call(tc.name, tc.arguments)
        assert error["status"] == "error"
        messages += [
            out.as_message(),
            ChatMessage("tool", json.dumps(error), tool_call_id=tc.call_id),
        ]
        again = h.call(provider, messages)
        body = server.requests[1]["body"]
    assert again.text  # accepted: the bad call and its error went back as text
    parts = [p for c in body["contents"] for p in c["parts"]]
    assert not any("functionCall" in p or "functionResponse" in p for p in parts)


def test_empty_reply_then_conversation_continues(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        provider = h.make(server)
        server.faults.append(Fault("empty"))
        messages = convo("hello")
        out = h.call(provider, messages)
        assert (out.text, out.tool_calls, out.reasoning) == ("", [], None)
        messages += [out.as_message(), ChatMessage("user", "still there?")]
        again = h.call(provider, messages)
        body = server.requests[1]["body"]
    assert again.text.startswith("echo:")
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "hello"}, {"text": "still there?"}]}
    ]


# ---------------------------------------------------------------- errors
def test_rate_limit_retry_delay_from_retry_info(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        server.retry_info_delay = "12s"
        server.faults.append(Fault("status", status=429))
        with pytest.raises(TransientModelError) as info:
            h.call(h.make(server), convo("hello"))
    assert info.value.retry_after == 12.0


# ---------------------------------------------------------------- configuration
def test_generation_settings_are_sent(h: Harness) -> None:
    with FakeGeminiServer(scripted) as server:
        provider = h.make(server)
        h.call(provider, convo("a"), GenerateConfig(temperature=0.3, max_tokens=900))
        h.call(provider, convo("b"), GenerateConfig(reasoning_effort="HIGH"))
        h.call(provider, convo("c"), GenerateConfig(reasoning_effort="none"))
        h.call(provider, convo("d"), GenerateConfig(thinking_budget=512, reasoning_effort="low"))
        configs = [generation_config(r["body"]) for r in server.requests]
        with pytest.raises(FatalModelError, match="reasoning_effort"):
            h.call(provider, convo("e"), GenerateConfig(reasoning_effort="extreme"))
        assert len(server.requests) == 4
    assert configs[0]["temperature"] == 0.3
    assert configs[0]["maxOutputTokens"] == 900
    assert configs[1]["thinkingConfig"] == {"include_thoughts": True, "thinking_level": "HIGH"}
    assert configs[2]["thinkingConfig"] == {"thinking_budget": 0}
    assert configs[3]["thinkingConfig"] == {"include_thoughts": True, "thinking_budget": 512}
    assert "temperature" not in configs[1]


def test_gemini_base_url_from_the_environment(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeGeminiServer(scripted) as server:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.root_url)
        out = h.call(GeminiProvider(MODEL, api_key=KEY, base_url=None), convo("hello"))
        assert len(server.requests) == 1
    assert out.text == "echo: hello"


def test_missing_key_is_a_clear_fatal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with pytest.raises(FatalModelError, match="API key"):
        GeminiProvider(MODEL, api_key=None, base_url=None)


def test_provider_name_and_window() -> None:
    provider = GeminiProvider(MODEL, api_key=KEY, base_url="http://127.0.0.1:9")
    assert (provider.name, provider.context_window) == (f"google/{MODEL}", 1_000_000)


# ---------------------------------------------------------------- schemas
def test_schema_conversion_to_gemini_subset() -> None:
    [ship] = [t for t in TOOLS if t.name == "ship"]
    schema = to_gemini_schema(ship.parameters)
    text = json.dumps(schema)
    for unsupported in ("additionalProperties", "$ref", "$defs", "exclusiveMinimum", "anyOf"):
        assert unsupported not in text
    legs = schema["properties"]["legs"]
    assert legs["type"] == "ARRAY"
    item = legs["items"]["properties"]["item"]
    assert item == {"type": "STRING", "enum": ["green", "roasted"], "format": "enum",
                    "description": "Which coffee."}  # fmt: skip
    assert legs["items"]["properties"]["kg"]["description"] == "Kilograms. (must be > 0)"
    mode = schema["properties"]["mode"]
    assert mode["type"] == "INTEGER" and "enum" not in mode
    assert mode["description"] == "1 for road, 2 for rail. (one of: 1, 2; default: 1)"
    notes = schema["properties"]["notes"]
    assert notes["type"] == "OBJECT" and notes["nullable"] is True
    assert schema["required"] == ["legs"]


def test_converted_schemas_are_accepted_and_calls_validate(h: Harness) -> None:
    def shipper(request: BrainRequest) -> BrainReply:
        legs = [{"item": "green", "kg": 2.5}]
        return BrainReply(tool_calls=[{"name": "ship", "arguments": {"legs": legs, "mode": 2}}])

    with FakeGeminiServer(shipper) as server:
        out = h.call(h.make(server), convo("ship it"))
    [tc] = out.tool_calls
    assert Shop().call(tc.name, tc.arguments) == {"status": "success", "legs": 1}


# ---------------------------------------------------------------- hostile replies
def test_a_hostile_reply_is_bounded_cleaned_and_the_conversation_goes_on(h: Harness) -> None:
    deep = '{"qty": ' + "[" * 200 + "]" * 200 + "}"

    def brain(request: BrainRequest) -> BrainReply:
        if len(request.messages) > 1:  # the call came back (as a result, or as text)
            return BrainReply(text="noted")
        return BrainReply(
            text="caf\ud800",
            tool_calls=[{"name": "buy", "arguments": deep}],
            input_tokens=10**15,
        )

    with FakeGeminiServer(brain) as server:
        provider = h.make(server)
        out = h.call(provider, convo("buy"))
        [call] = out.tool_calls
        assert isinstance(call.arguments, str), "201 levels: kept as text, not as data"
        assert out.provider_data["gemini"]["parts"][-1]["function_call"]["args"] == call.arguments
        result = Shop().call(call.name, call.arguments)
        assert "nested more than 32 levels deep" in result["error"]
        assert out.text == "caf\ufffd"
        assert out.usage.input_tokens == 0 and out.usage.invalid == ("input_tokens",)
        history = [
            *convo("buy"),
            out.as_message(),
            ChatMessage("tool", json.dumps(result), tool_call_id=call.call_id, name=call.name),
        ]
        assert h.call(provider, history).text == "noted"
