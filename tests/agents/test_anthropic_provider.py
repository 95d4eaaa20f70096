"""AnthropicProvider through the real ``anthropic`` SDK against a local fake Messages API."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.common import Fault
from tests.fakes.harness import ProviderHarness, shop_brain

from econbench.agents.models.anthropic_provider import DEFAULT_MAX_TOKENS, AnthropicProvider
from econbench.agents.models.base import (
    ChatMessage,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    TransientModelError,
)
from econbench.agents.tools import ToolCall, Toolkit, ToolSpec, tool

KEY = "sk-ant-test-DO-NOT-LEAK-0123456789"
MODEL = "claude-sonnet-4-6"
SYSTEM = "You run roaster_A, a coffee roaster. " * 40


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


TOOLS: list[ToolSpec] = Shop().specs()


scripted = shop_brain
Harness = ProviderHarness


@pytest.fixture
def h() -> Any:
    def make(server: Any, **kw: Any) -> AnthropicProvider:
        return AnthropicProvider(MODEL, api_key=KEY, base_url=server.root_url, **kw)

    harness = ProviderHarness(make, TOOLS)
    yield harness
    harness.close()


def convo(*texts: str) -> list[ChatMessage]:
    return [ChatMessage("system", SYSTEM), *(ChatMessage("user", t) for t in texts)]


def breakpoints(body: dict[str, Any]) -> list[str]:
    """Where the request put cache_control markers, as readable labels."""
    found = [f"system.{i}" for i, b in enumerate(body.get("system") or []) if "cache_control" in b]
    for n, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list):
            found += [f"messages.{n}.{m}" for m, b in enumerate(content) if "cache_control" in b]
    return found


# ---------------------------------------------------------------- happy paths
def test_request_shape(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        h.call(h.make(server), convo("hello"))
        body = server.requests[0]["body"]
        headers = server.headers[0]
    assert body["model"] == MODEL
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert body["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][0] == {
        "name": "buy",
        "description": "Buy green coffee.",
        "input_schema": TOOLS[0].parameters,
    }
    assert headers["authorization"] == f"Bearer {KEY}"
    assert "temperature" not in body and "thinking" not in body


def test_tool_call_round_trip(h: Harness) -> None:
    provider_calls: list[ModelOutput] = []
    with FakeAnthropicServer(scripted) as server:
        provider = h.make(server)
        messages = convo("please buy")
        first = h.call(provider, messages)
        provider_calls.append(first)
        assert first.text == "Buying."
        [tc] = first.tool_calls
        assert (tc.name, tc.arguments) == ("buy", {"qty": 5})
        assert tc.call_id and tc.call_id.startswith("toolu_")
        messages += [
            first.as_message(),
            ChatMessage("tool", '{"status": "success", "bought": 5}', tool_call_id=tc.call_id),
        ]
        second = h.call(provider, messages)
        body = server.requests[1]["body"]
    assert second.text == 'tool said {"status": "success", "bought": 5}'
    assistant, result = body["messages"][1], body["messages"][2]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Buying."},
            {"type": "tool_use", "id": tc.call_id, "name": "buy", "input": {"qty": 5}},
        ],
    }
    assert result["role"] == "user"
    assert result["content"][0]["type"] == "tool_result"
    assert result["content"][0]["tool_use_id"] == tc.call_id


def test_consecutive_tool_results_fold_into_one_user_message(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        provider = h.make(server)
        messages = convo("do two things")
        first = h.call(provider, messages)
        assert [c.name for c in first.tool_calls] == ["buy", "check_cash"]
        messages.append(first.as_message())
        # Results come back in the other order; they are matched by id.
        for tc in reversed(first.tool_calls):
            messages.append(ChatMessage("tool", f"ok {tc.name}", tool_call_id=tc.call_id))
        messages.append(ChatMessage("user", "Day 2, 08:00. Cash $1000."))
        h.call(provider, messages)
        body = server.requests[1]["body"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    folded = body["messages"][2]["content"]
    assert [b["type"] for b in folded] == ["tool_result", "tool_result", "text"]
    ids = {b["tool_use_id"]: b["content"] for b in folded[:2]}
    assert ids == {tc.call_id: f"ok {tc.name}" for tc in first.tool_calls}
    assert folded[2]["cache_control"] == {"type": "ephemeral"}


def test_usage_and_prompt_caching_in_a_growing_conversation(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        provider = h.make(server)
        messages = convo("please buy")
        outputs = []
        for step in range(3):
            out = h.call(provider, messages)
            outputs.append(out)
            messages.append(out.as_message())
            for tc in out.tool_calls:
                messages.append(ChatMessage("tool", f"result {step}", tool_call_id=tc.call_id))
            if not out.tool_calls:
                messages.append(ChatMessage("user", f"observation {step}; please buy"))
        bodies = [r["body"] for r in server.requests]
        wire = server.usages
    for out, usage in zip(outputs, wire, strict=True):
        total = (
            usage["input_tokens"]
            + usage["cache_read_input_tokens"]
            + usage["cache_creation_input_tokens"]
        )
        assert out.usage.input_tokens == total
        assert out.usage.cached_input_tokens == usage["cache_read_input_tokens"]
        assert out.usage.cache_write_tokens == usage["cache_creation_input_tokens"]
        assert out.usage.output_tokens == usage["output_tokens"] > 0
    assert outputs[0].usage.cached_input_tokens == 0
    assert outputs[0].usage.cache_write_tokens > 0
    # Each later call reads the previous prefix from the cache and writes only the tail.
    assert outputs[1].usage.cached_input_tokens >= outputs[0].usage.cache_write_tokens
    assert outputs[2].usage.cached_input_tokens > outputs[1].usage.cached_input_tokens
    for body in bodies:
        last = len(body["messages"]) - 1
        last_block = len(body["messages"][last]["content"]) - 1
        assert breakpoints(body) == ["system.0", f"messages.{last}.{last_block}"]


def test_thinking_blocks_kept_and_sent_back_exactly(h: Harness) -> None:
    config = GenerateConfig(thinking_budget=2048, temperature=0.7)
    with FakeAnthropicServer(scripted) as server:
        provider = h.make(server)
        messages = convo("think, then buy")
        first = h.call(provider, messages, config)
        assert first.reasoning == "Cash is fine; buying 5 kg."
        assert first.usage.reasoning_tokens > 0
        blocks = first.provider_data["anthropic"]["content"]
        assert blocks[0] == {
            "type": "thinking",
            "thinking": "Cash is fine; buying 5 kg.",
            "signature": server.sign("Cash is fine; buying 5 kg."),
        }
        # The assistant turn survives the run store's JSON round trip.
        stored = ChatMessage.from_dict(json.loads(json.dumps(first.as_message().to_dict())))
        [tc] = stored.tool_calls
        messages += [stored, ChatMessage("tool", "bought 5", tool_call_id=tc.call_id)]
        second = h.call(provider, messages, config)
        bodies = [r["body"] for r in server.requests]
    assert second.text == "tool said bought 5"  # the fake rejects a modified signature
    for body in bodies:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert body["max_tokens"] == 2048 + DEFAULT_MAX_TOKENS
        assert "temperature" not in body
    assert bodies[1]["messages"][1]["content"][0] == blocks[0]


def test_tampered_thinking_signature_is_rejected_as_fatal(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        provider = h.make(server)
        config = GenerateConfig(thinking_budget=2048)
        messages = convo("think, then buy")
        first = h.call(provider, messages, config)
        first.provider_data["anthropic"]["content"][0]["signature"] = "forged"
        [tc] = first.tool_calls
        messages += [first.as_message(), ChatMessage("tool", "ok", tool_call_id=tc.call_id)]
        with pytest.raises(FatalModelError, match="signature"):
            h.call(provider, messages, config)


# ---------------------------------------------------------------- bad replies
def test_unknown_tool_name_comes_back_as_a_tool_call(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        server.faults.append(Fault("unknown_tool"))
        out = h.call(h.make(server), convo("please buy"))
    [tc] = out.tool_calls
    assert (tc.name, tc.arguments) == ("teleport_coffee", {})
    assert Shop().call(tc.name, tc.arguments)["status"] == "error"


def test_malformed_arguments_from_a_compatible_server_are_kept_raw(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        provider = h.make(server)
        server.faults.append(Fault("malformed_tool_json"))
        messages = convo("please buy")
        out = h.call(provider, messages)
        [tc] = out.tool_calls
        assert tc.arguments == '{"qty": 5,,'
        error = Shop().call(tc.name, tc.arguments)
        assert error["status"] == "error"
        # The next turn still goes through: the bad call is replayed as text, not tool_use.
        messages += [
            out.as_message(),
            ChatMessage("tool", json.dumps(error), tool_call_id=tc.call_id),
        ]
        again = h.call(provider, messages)
        body = server.requests[1]["body"]
    assert again.text  # the fake accepted the request (it rejects a broken tool turn)
    kinds = [b["type"] for m in body["messages"] for b in m["content"]]
    assert "tool_use" not in kinds and "tool_result" not in kinds


def test_empty_reply_then_conversation_continues(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        provider = h.make(server)
        server.faults.append(Fault("empty"))
        messages = convo("hello")
        out = h.call(provider, messages)
        assert (out.text, out.tool_calls, out.reasoning) == ("", [], None)
        messages += [out.as_message(), ChatMessage("user", "still there?")]
        again = h.call(provider, messages)
        body = server.requests[1]["body"]
    assert again.text.startswith("echo:")
    # The empty assistant turn is left out and the two user turns merge into one.
    [turn] = body["messages"]
    assert [b["text"] for b in turn["content"]] == ["hello", "still there?"]


def test_history_from_another_provider_without_ids_or_results(h: Harness) -> None:
    history = [
        ChatMessage("system", SYSTEM),
        ChatMessage("user", "start"),
        ChatMessage("assistant", "", tool_calls=[ToolCall("buy", {"qty": 1})]),
        ChatMessage("tool", "ok", name="buy"),  # no tool_call_id: matched by name
        ChatMessage("assistant", "two calls", tool_calls=[ToolCall("check_cash", {})] * 2),
        ChatMessage("tool", "cash 5"),  # one result missing: filled in
        ChatMessage("user", "go on"),
    ]
    with FakeAnthropicServer(scripted) as server:
        out = h.call(h.make(server), history)
        body = server.requests[0]["body"]
    assert out.text.startswith("echo:")
    results = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert len(results) == 3
    assert results[-1]["content"] == "No result was recorded for this tool call."


# ---------------------------------------------------------------- errors
def test_overloaded_is_transient(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        server.faults.append(Fault("status", status=529))
        with pytest.raises(TransientModelError) as info:
            h.call(h.make(server), convo("hello"))
        assert len(server.requests) == 1
    assert info.value.retry_after is None
    assert "overloaded_error" in str(info.value)


# ---------------------------------------------------------------- configuration
def test_anthropic_base_url_from_the_environment(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropicServer(scripted) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.root_url)
        provider = AnthropicProvider(MODEL, api_key=KEY, base_url=None)
        out = h.call(provider, convo("hello"))
        assert len(server.requests) == 1
    assert out.text == "echo: hello"


def test_generation_settings_are_sent(h: Harness, caplog: pytest.LogCaptureFixture) -> None:
    config = GenerateConfig(
        temperature=0.3, max_tokens=9000, thinking_budget=4096, reasoning_effort="HIGH"
    )
    with FakeAnthropicServer(scripted) as server, caplog.at_level(logging.WARNING):
        provider = h.make(server)
        h.call(provider, convo("hello"), config)
        h.call(provider, convo("hello"), config)
        body = server.requests[0]["body"]
    assert body["max_tokens"] == 9000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["output_config"] == {"effort": "high"}
    assert "temperature" not in body
    warnings = [r for r in caplog.records if "temperature" in r.getMessage()]
    assert len(warnings) == 1  # once per provider, not once per call


def test_temperature_through_extra_for_servers_that_accept_it(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        server.reject_sampling_params = False
        h.call(
            h.make(server), convo("hello"), GenerateConfig(max_tokens=50, extra={"temperature": 0})
        )
        body = server.requests[0]["body"]
    assert body["temperature"] == 0
    assert body["max_tokens"] == 50


def test_invalid_thinking_settings_fail_before_any_request(h: Harness) -> None:
    with FakeAnthropicServer(scripted) as server:
        provider = h.make(server)
        with pytest.raises(FatalModelError, match="minimum"):
            h.call(provider, convo("hi"), GenerateConfig(thinking_budget=500))
        with pytest.raises(FatalModelError, match="must exceed"):
            h.call(provider, convo("hi"), GenerateConfig(thinking_budget=2048, max_tokens=2048))
        with pytest.raises(FatalModelError, match="reasoning_effort"):
            h.call(provider, convo("hi"), GenerateConfig(reasoning_effort="extreme"))
        assert server.requests == []


def test_provider_name_and_window(h: Harness) -> None:
    provider = AnthropicProvider(MODEL, api_key=KEY, base_url="http://127.0.0.1:9")
    assert provider.name == f"anthropic/{MODEL}"
    assert provider.context_window == 200_000
    named = AnthropicProvider(
        MODEL, api_key=KEY, base_url="http://127.0.0.1:9", name="x/y", context_window=1000
    )
    assert (named.name, named.context_window) == ("x/y", 1000)


def test_missing_key_is_a_clear_fatal_error(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    with FakeAnthropicServer(scripted) as server:
        provider = AnthropicProvider(MODEL, api_key=None, base_url=server.root_url)
        with pytest.raises(FatalModelError, match="no Anthropic API key"):
            h.call(provider, convo("hello"))
        assert server.requests == []


# ---------------------------------------------------------------- hostile replies
def test_a_hostile_reply_is_bounded_cleaned_and_the_conversation_goes_on(h: Harness) -> None:
    from tests.fakes.common import BrainReply

    deep = '{"qty": ' + "[" * 200 + "]" * 200 + "}"

    def brain(request: Any) -> BrainReply:
        if len(request.messages) > 1:  # the call came back (as a result, or as text)
            return BrainReply(text="noted")
        return BrainReply(
            text="caf\ud800",
            tool_calls=[{"name": "buy", "arguments": deep}],
            input_tokens=10**15,
        )

    with FakeAnthropicServer(brain) as server:
        provider = h.make(server)
        out = h.call(provider, convo("buy"))
        [call] = out.tool_calls
        assert isinstance(call.arguments, str), "201 levels: kept as text, not as data"
        assert out.provider_data["anthropic"]["content"][-1]["input"] == call.arguments
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
