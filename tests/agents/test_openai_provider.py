"""The OpenAI providers, through the real ``openai`` SDK, against the local fake server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest
from tests.fakes.common import BrainReply, BrainRequest, Fault
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    TransientModelError,
)
from econbench.agents.models.openai_provider import (
    DEFAULT_OPENAI_API,
    OpenAIChatProvider,
    OpenAIResponsesProvider,
    chat_usage,
    create_openai_provider,
    parse_arguments,
)
from econbench.agents.tools import ToolCall, Toolkit, ToolSpec, tool

KEY = "sk-test-SECRET-0123456789abcdef"
SYSTEM = "You run roaster_A in a 90-day coffee economy. " * 40  # long: a cacheable prefix


class Shop(Toolkit):
    @tool("write")
    def buy_beans(self, qty: int, price: float = 1.0) -> dict:
        """Buy green beans.

        Args:
            qty: Kilograms to buy.
            price: Highest price per kilogram.
        """
        return {"bought": qty}

    @tool("read")
    def check_cash(self) -> dict:
        """Read the firm's cash."""
        return {"cash": 100.0}


TOOLS: list[ToolSpec] = Shop().specs()


def convo(*extra: ChatMessage) -> list[ChatMessage]:
    return [ChatMessage("system", SYSTEM), ChatMessage("user", "Day 1, 08:00."), *extra]


def echo_brain(request: BrainRequest) -> BrainReply:
    """Calls buy_beans once; after a tool result, reports what it saw."""
    last = request.messages[-1]
    if last["role"] == "tool":
        return BrainReply(text=f"saw {last['content']}")
    return BrainReply(text="", tool_calls=[{"name": "buy_beans", "arguments": {"qty": 5}}])


def text_brain(request: BrainRequest) -> BrainReply:
    return BrainReply(text="waiting")


def chat(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIChatProvider:
    return OpenAIChatProvider("fake-model", api_key=KEY, base_url=server.base_url, **kwargs)


def responses(server: FakeOpenAIServer, model: str = "gpt-5.5") -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(model, api_key=KEY, base_url=server.base_url)


def run(
    provider: Any,
    messages: list[ChatMessage],
    config: GenerateConfig | None = None,
    tools: list[ToolSpec] | None = None,
) -> ModelOutput:
    """One call in a fresh event loop, closing the connections before the loop ends."""

    async def call() -> ModelOutput:
        try:
            return await provider.generate(
                messages, TOOLS if tools is None else tools, config or GenerateConfig()
            )
        finally:
            await provider.aclose()

    return asyncio.run(call())


# ------------------------------------------------------------------ chat completions
def test_chat_request_shape() -> None:
    with FakeOpenAIServer(text_brain) as server:
        run(chat(server), convo())
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert body["messages"][0] == {"role": "system", "content": SYSTEM}
    assert [t["function"]["name"] for t in body["tools"]] == ["buy_beans", "check_cash"]
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"


def test_chat_tool_call_round_trip() -> None:
    with FakeOpenAIServer(echo_brain) as server:
        provider = chat(server)
        first = run(provider, convo())
        [call] = first.tool_calls
        assert call.name == "buy_beans" and call.arguments == {"qty": 5} and call.call_id
        result = Shop().call(call.name, call.arguments)
        history = convo(
            first.as_message(),
            ChatMessage("tool", json.dumps(result), tool_call_id=call.call_id, name=call.name),
        )
        second = run(provider, history)
    assert second.text == f"saw {json.dumps(result)}"
    seen = server.brain_requests[1].messages
    assert seen[-2]["tool_calls"] == [
        {"id": call.call_id, "name": "buy_beans", "arguments": {"qty": 5}}
    ]
    assert seen[-1] == {"role": "tool", "tool_call_id": call.call_id, "content": json.dumps(result)}
    wire = server.requests[1]["body"]["messages"][-2]
    assert wire["role"] == "assistant" and wire["content"] == ""  # never null (issue 15)


def test_chat_reasoning_text_and_tokens() -> None:
    def brain(request: BrainRequest) -> BrainReply:
        return BrainReply(text="hold", reasoning="Prices are high; wait a day.")

    for field in ("reasoning_content", "reasoning"):
        with FakeOpenAIServer(brain, reasoning_field=field) as server:
            out = run(chat(server, name="openai-compatible/kimi"), convo())
        assert out.reasoning == "Prices are high; wait a day."
        assert out.usage.reasoning_tokens > 0
        assert out.usage.output_tokens >= out.usage.reasoning_tokens
        assert out.provider_data == {
            "openai_chat": {
                "response_id": "chatcmpl_000001",
                "response_model": "fake-model",
                "reasoning_field": field,
            }
        }


def test_chat_reasoning_replayed_only_when_asked() -> None:
    history = convo(
        ChatMessage(
            "assistant",
            "",
            [ToolCall("check_cash", {}, "c1")],
            reasoning="think",
            provider_data={"openai_chat": {"reasoning_field": "reasoning"}},
        ),
        ChatMessage("tool", "{}", tool_call_id="c1"),
    )
    with FakeOpenAIServer(text_brain) as server:
        run(chat(server, name="openai-compatible/glm"), history)
        run(chat(server, name="openai-compatible/glm", replay_reasoning=True), history)
    assert "reasoning" not in server.requests[0]["body"]["messages"][2]
    assert server.requests[1]["body"]["messages"][2]["reasoning"] == "think"


def test_compatible_think_tags_become_reasoning() -> None:
    def brain(request: BrainRequest) -> BrainReply:
        return BrainReply(text="<think>\nmull it over\n</think>\n\nBuy now.")

    with FakeOpenAIServer(brain, reasoning_field=None) as server:
        out = run(chat(server, name="openai-compatible/qwen"), convo())
        plain = run(chat(server), convo())
    assert out.text == "Buy now." and out.reasoning == "mull it over"
    assert plain.text.startswith("<think>")  # OpenAI itself never does this: left alone


def test_malformed_tool_json_returns_raw_string() -> None:
    with FakeOpenAIServer(echo_brain) as server:
        server.faults.append(Fault("malformed_tool_json"))
        provider = chat(server, name="openai-compatible/local")
        out = run(provider, convo())
        [call] = out.tool_calls
        assert call.name == "buy_beans" and call.arguments == '{"qty": 5,,'
        result = Shop().call(call.name, call.arguments)
        assert result["status"] == "error"
        history = convo(
            out.as_message(), ChatMessage("tool", json.dumps(result), tool_call_id=call.call_id)
        )
        run(provider, history)  # replayed without breaking servers that parse arguments
    replayed = server.requests[1]["body"]["messages"][-2]["tool_calls"][0]["function"]
    assert json.loads(replayed["arguments"]) == {"unparsed_arguments": '{"qty": 5,,'}


def test_several_tool_calls_in_order() -> None:
    def brain(request: BrainRequest) -> BrainReply:
        return BrainReply(
            tool_calls=[
                {"name": "check_cash", "arguments": {}},
                {"name": "buy_beans", "arguments": {"qty": 1}},
                {"name": "buy_beans", "arguments": {"qty": 2, "price": 3.5}},
            ]
        )

    with FakeOpenAIServer(brain) as server:
        out = run(chat(server), convo())
    assert [(c.name, c.arguments) for c in out.tool_calls] == [
        ("check_cash", {}),
        ("buy_beans", {"qty": 1}),
        ("buy_beans", {"qty": 2, "price": 3.5}),
    ]
    assert len({c.call_id for c in out.tool_calls}) == 3


def test_tool_calls_without_ids_get_stable_ids() -> None:
    def brain(request: BrainRequest) -> BrainReply:
        calls = [{"name": "check_cash", "arguments": {}}, {"name": "check_cash", "arguments": {}}]
        return (
            BrainReply(tool_calls=calls)
            if request.messages[-1]["role"] == "user"
            else BrainReply("ok")
        )

    with FakeOpenAIServer(brain, omit_call_ids=True) as server:
        provider = chat(server, name="openai-compatible/llama")
        out = run(provider, convo())
        ids = [c.call_id for c in out.tool_calls]
        assert all(ids) and ids[0] != ids[1]
        results = [ChatMessage("tool", "{}", tool_call_id=i) for i in ids]
        assert run(provider, convo(out.as_message(), *results)).text == "ok"


def test_unknown_tool_and_empty_reply_do_not_crash() -> None:
    with FakeOpenAIServer(echo_brain) as server:
        server.faults.extend([Fault("unknown_tool"), Fault("empty")])
        provider = chat(server)
        unknown = run(provider, convo())
        empty = run(provider, convo())
    assert [c.name for c in unknown.tool_calls] == ["teleport_coffee"]
    assert Shop().call("teleport_coffee", {})["status"] == "error"
    assert empty.text == "" and empty.tool_calls == [] and empty.reasoning is None


def test_missing_usage_is_zero() -> None:
    with FakeOpenAIServer(text_brain, include_usage=False) as server:
        out = run(chat(server, name="openai-compatible/ollama"), convo())
    assert out.usage.to_dict() == {
        "input_tokens": 0,
        "cached_input_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 0,
        "reasoning_tokens": 0,
    }


def test_chat_usage_variants() -> None:
    deepseek = chat_usage(
        {"prompt_tokens": 100, "completion_tokens": 7, "prompt_cache_hit_tokens": 64}
    )
    assert (deepseek.input_tokens, deepseek.cached_input_tokens) == (100, 64)
    moonshot = chat_usage({"prompt_tokens": 50, "completion_tokens": None, "cached_tokens": 32})
    assert (moonshot.cached_input_tokens, moonshot.output_tokens) == (32, 0)
    odd = chat_usage({"prompt_tokens": "12", "prompt_tokens_details": None, "junk": [1]})
    assert odd.input_tokens == 12 and odd.cached_input_tokens == 0
    assert chat_usage(None).input_tokens == 0


def test_request_parameters_openai_and_compatible() -> None:
    config = GenerateConfig(temperature=0.3, max_tokens=321, reasoning_effort="high")
    with FakeOpenAIServer(text_brain) as server:
        run(chat(server), convo(), config)
        run(chat(server, name="openai-compatible/vllm"), convo(), config)
        run(chat(server, name="openai-compatible/vllm"), convo(), GenerateConfig(), tools=[])
        extra = GenerateConfig(extra={"extra_body": {"top_k": 20}})
        run(chat(server, name="openai-compatible/vllm"), convo(), extra)
    openai_body, compat_body, bare_body, extra_body = (r["body"] for r in server.requests)
    assert openai_body["temperature"] == 0.3
    assert openai_body["max_completion_tokens"] == 321 and "max_tokens" not in openai_body
    assert openai_body["reasoning_effort"] == "high"
    assert compat_body["max_tokens"] == 321 and "max_completion_tokens" not in compat_body
    assert compat_body["reasoning_effort"] == "high" and compat_body["temperature"] == 0.3
    assert set(bare_body) == {"model", "messages"}
    assert extra_body["top_k"] == 20


def test_compatible_system_messages_are_conservative() -> None:
    history = [
        ChatMessage("system", "A"),
        ChatMessage("system", "B"),
        ChatMessage("user", "hi"),
        ChatMessage("system", "Summary of earlier days."),
        ChatMessage("user", "go"),
    ]
    with FakeOpenAIServer(text_brain) as server:
        run(chat(server, name="openai-compatible/qwen"), history)
        run(chat(server), history)
    compat, native = (r["body"]["messages"] for r in server.requests)
    assert [m["role"] for m in compat] == ["system", "user", "user", "user"]
    assert compat[0]["content"] == "A\n\nB"
    assert [m["role"] for m in native] == ["system", "system", "user", "system", "user"]


# ------------------------------------------------------------------ errors
def _status_error(status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(status, headers=headers or {}, json=body, request=request)
    cls = {400: openai.BadRequestError, 429: openai.RateLimitError}.get(status)
    cls = cls or (openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return cls(f"Error code: {status}", response=response, body=body.get("error", body))


def test_error_classification_of_real_world_bodies() -> None:
    provider = OpenAIChatProvider("m", api_key=KEY, base_url="http://127.0.0.1:9/v1")
    quota = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    assert isinstance(provider.map_error(_status_error(429, quota)), FatalModelError)
    vllm = {"message": "This model's maximum context length is 4096 tokens.", "code": 400}
    assert isinstance(provider.map_error(_status_error(400, vllm)), ContextOverflowError)
    llamacpp = {
        "error": {
            "message": "the request exceeds the available context size",
            "type": "exceed_context_size_error",
            "code": 400,
        }
    }
    assert isinstance(provider.map_error(_status_error(400, llamacpp)), ContextOverflowError)
    bad = {"error": {"message": "Unsupported parameter: 'temperature'", "code": None}}
    assert isinstance(provider.map_error(_status_error(400, bad)), FatalModelError)
    busy = provider.map_error(_status_error(503, {}, {"retry-after-ms": "1500"}))
    assert isinstance(busy, TransientModelError) and busy.retry_after == 1.5
    nope = provider.map_error(_status_error(500, {}, {"x-should-retry": "false"}))
    assert isinstance(nope, FatalModelError)


def test_error_inside_a_200_body_is_classified() -> None:
    provider = OpenAIChatProvider("m", api_key=KEY, base_url="http://127.0.0.1:9/v1")
    with pytest.raises(TransientModelError):
        provider.parse_response({"error": {"message": "upstream overloaded", "code": 502}})
    with pytest.raises(FatalModelError):
        provider.parse_response({"error": {"message": "no such model", "code": 404}})


def test_parse_arguments_shapes() -> None:
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("") == {} and parse_arguments(None) == {}
    assert parse_arguments('"{\\"a\\": 1}"') == {"a": 1}  # double-encoded
    assert parse_arguments("[1, 2]") == "[1, 2]"
    assert parse_arguments("{oops") == "{oops"


# ------------------------------------------------------------------ base URL, clients
def test_openai_base_url_environment_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(text_brain) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        provider = create_openai_provider("openai-compatible/my-model")
        assert isinstance(provider, OpenAIChatProvider)
        assert run(provider, convo()).text == "waiting"
        assert run(OpenAIResponsesProvider("gpt-5.5", api_key=None, base_url=None), convo()).text
    assert server.requests[0]["body"]["model"] == "my-model"
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions", "/v1/responses"]


def test_explicit_base_url_overrides_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    with FakeOpenAIServer(text_brain) as server:
        assert run(chat(server), convo()).text == "waiting"


def test_missing_key_is_a_clear_error_and_local_servers_need_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(FatalModelError, match="OPENAI_API_KEY"):
        OpenAIResponsesProvider("gpt-5.5", api_key=None, base_url=None)
    with FakeOpenAIServer(text_brain) as server:
        local = OpenAIChatProvider(
            "m", api_key=None, base_url=server.base_url, name="openai-compatible/m"
        )
        assert run(local, convo()).text == "waiting"


def test_factory_and_default_api() -> None:
    assert DEFAULT_OPENAI_API == "responses"
    provider = create_openai_provider("openai/gpt-5.5", api_key=KEY)
    assert isinstance(provider, OpenAIResponsesProvider) and provider.name == "openai/gpt-5.5"
    chatty = create_openai_provider("openai/gpt-5.5", api="chat", api_key=KEY)
    assert isinstance(chatty, OpenAIChatProvider) and not chatty.compatible
    served = create_openai_provider("openai-compatible/Qwen/Qwen3-8B", api_key=KEY)
    assert served.model == "Qwen/Qwen3-8B" and served.compatible
    with pytest.raises(ValueError):
        create_openai_provider("anthropic/claude-sonnet-4-6", api_key=KEY)
    assert KEY not in repr(provider)


def test_provider_survives_several_event_loops() -> None:
    with FakeOpenAIServer(text_brain) as server:
        provider = chat(server)
        once = provider.generate(convo(), TOOLS, GenerateConfig())
        assert asyncio.run(once).text == "waiting"  # its loop ends with the client still open
        assert run(provider, convo()).text == "waiting"
        assert run(provider, convo()).text == "waiting"  # reopened after aclose

        async def both() -> list[ModelOutput]:
            config = GenerateConfig()
            calls = [provider.generate(convo(), TOOLS, config) for _ in range(2)]
            outs = await asyncio.gather(*calls)
            await provider.aclose()
            return list(outs)

        assert [o.text for o in asyncio.run(both())] == ["waiting", "waiting"]


# ------------------------------------------------------------------ responses API
def test_responses_round_trip_keeps_reasoning_items() -> None:
    def brain(request: BrainRequest) -> BrainReply:
        if request.messages[-1]["role"] == "tool":
            return BrainReply(text="done", reasoning="Bought; now wait.")
        return BrainReply(
            text="Buying.",
            reasoning="Beans are cheap today.",
            tool_calls=[{"name": "buy_beans", "arguments": {"qty": 5}}],
        )

    config = GenerateConfig(reasoning_effort="low")
    with FakeOpenAIServer(brain) as server:
        provider = responses(server)
        first = run(provider, convo(), config)
        assert first.text == "Buying." and first.reasoning == "Beans are cheap today."
        assert first.stop_reason == "tool_calls"
        [call] = first.tool_calls
        assert call.arguments == {"qty": 5} and call.call_id.startswith("call_")
        stored = first.provider_data["openai_responses"]["output"]
        assert [i["type"] for i in stored] == ["reasoning", "message", "function_call"]
        assert stored[0]["encrypted_content"] and stored[0]["id"].startswith("rs_")
        assert first.usage.reasoning_tokens > 0
        json.dumps(first.provider_data)  # stored in run logs: must be plain JSON
        message = ChatMessage.from_dict(json.loads(json.dumps(first.as_message().to_dict())))
        tool_result = ChatMessage("tool", '{"status": "success"}', tool_call_id=call.call_id)
        second = run(provider, convo(message, tool_result), config)
    assert second.text == "done" and second.stop_reason == "stop"
    body = server.requests[1]["body"]
    assert body["store"] is False and "previous_response_id" not in body
    assert body["instructions"] == SYSTEM
    kinds = [(i.get("type"), i.get("role")) for i in body["input"]]
    assert kinds == [
        ("message", "user"),
        ("reasoning", None),
        ("message", "assistant"),
        ("function_call", None),
        ("function_call_output", None),
    ]
    reasoning = body["input"][1]
    assert reasoning["id"] == stored[0]["id"]
    assert reasoning["encrypted_content"] == stored[0]["encrypted_content"]
    assert body["input"][2]["id"] == stored[1]["id"]
    assert body["input"][3]["call_id"] == call.call_id and body["input"][3]["id"] == stored[2]["id"]
    assert server.brain_requests[1].messages[-1]["tool_call_id"] == call.call_id


def test_responses_replays_turns_without_provider_data() -> None:
    history = convo(
        ChatMessage("assistant", "Let me check.", [ToolCall("check_cash", {}, None)]),
        ChatMessage("tool", '{"cash": 1}'),
        ChatMessage("user", "Go on."),
    )
    with FakeOpenAIServer(text_brain) as server:
        out = run(responses(server, "gpt-4.1"), history)
    assert out.text == "waiting" and out.reasoning is None
    items = server.requests[0]["body"]["input"]
    assert [i.get("type") for i in items] == [
        "message",
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert items[2]["call_id"] == items[3]["call_id"]


def test_responses_request_parameters_and_usage() -> None:
    config = GenerateConfig(temperature=0.2, max_tokens=999, reasoning_effort="high")
    with FakeOpenAIServer(text_brain) as server:
        provider = responses(server)
        run(provider, convo(), config)
        out = run(provider, convo(ChatMessage("assistant", "ok"), ChatMessage("user", "more")))
        run(responses(server, "gpt-4.1"), convo(), GenerateConfig(), tools=[])
    body, plain, legacy = (r["body"] for r in server.requests)
    assert body["temperature"] == 0.2 and body["max_output_tokens"] == 999
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["tools"][0] == {
        "type": "function",
        "name": "buy_beans",
        "description": "Buy green beans.",
        "parameters": TOOLS[0].parameters,
        "strict": False,
    }
    assert plain["reasoning"] == {"summary": "auto"} and "temperature" not in plain
    assert set(legacy) == {"model", "input", "store", "instructions"}
    assert 0 < out.usage.cached_input_tokens <= out.usage.input_tokens


def test_responses_errors_map_like_chat() -> None:
    with FakeOpenAIServer(text_brain) as server:
        server.faults.extend(
            [Fault("status", status=429, retry_after=3), Fault("status", status=404)]
        )
        with pytest.raises(TransientModelError) as info:
            run(responses(server), convo())
        assert info.value.retry_after == 3.0
        with pytest.raises(FatalModelError, match="base URL"):
            run(responses(server), convo())


def test_responses_summary_refusal_falls_back_once() -> None:
    refusal = "Your organization must be verified to generate reasoning summaries."
    with FakeOpenAIServer(text_brain) as server:
        server.faults.append(Fault("status", status=400, message=refusal))
        provider = responses(server)
        assert run(provider, convo()).text == "waiting"
        run(provider, convo())
    bodies = [r["body"] for r in server.requests]
    assert bodies[0]["reasoning"] == {"summary": "auto"}
    assert "reasoning" not in bodies[1] and "reasoning" not in bodies[2]


def test_responses_incomplete_and_failed() -> None:
    provider = OpenAIResponsesProvider("gpt-5.5", api_key=KEY, base_url="http://127.0.0.1:9/v1")
    out = provider.parse_response(
        {
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": [],
        }
    )
    assert out.stop_reason == "length" and out.text == ""
    with pytest.raises(TransientModelError):
        provider.parse_response(
            {"status": "failed", "error": {"code": "server_error", "message": "oops"}}
        )


class GarbledServer(FakeOpenAIServer):
    """A proxy in front of the model that answers 200 with something that is not a reply."""

    def chat_completions(self, handler: Any, body: dict[str, Any], fault: Fault | None) -> None:
        data = b'{"choices": [' if body.get("model") == "json" else b"<html>Bad gateway</html>"
        handler.send_response(200)
        ctype = "application/json" if body.get("model") == "json" else "text/html"
        handler.send_header("Content-Type", ctype)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


def test_garbled_success_responses_are_transient() -> None:
    with GarbledServer(text_brain) as server:
        for model in ("json", "html"):
            provider = OpenAIChatProvider(model, api_key=KEY, base_url=server.base_url)
            with pytest.raises(TransientModelError, match="unreadable"):
                run(provider, convo())


# ------------------------------------------------------------------ hostile replies
DEEP = '{"qty": ' + "[" * 100_000 + "]" * 100_000 + "}"
"""Arguments nested 100,000 levels deep (``json.loads`` gives up; so does ``json.dumps``)."""
TOO_DEEP_TO_KEEP = '{"qty": 5, "price": ' + "[" * 40 + "]" * 40 + "}"
"""Nested 41 levels: parses, but deeper than any tool needs (the harness keeps 32)."""


def hostile_brain(arguments: str) -> Any:
    def brain(request: BrainRequest) -> BrainReply:
        if request.messages[-1]["role"] == "tool":
            return BrainReply(text="noted")
        return BrainReply(tool_calls=[{"name": "buy_beans", "arguments": arguments}])

    return brain


@pytest.mark.parametrize("name", ["openai-compatible/local", "openai/fake-model"])
@pytest.mark.parametrize("arguments", [DEEP, TOO_DEEP_TO_KEEP], ids=["100k-deep", "41-deep"])
def test_deeply_nested_arguments_are_a_tool_error_and_the_next_request_still_goes(
    name: str, arguments: str
) -> None:
    with FakeOpenAIServer(hostile_brain(arguments)) as server:
        provider = chat(server, name=name)
        out = run(provider, convo())
        [call] = out.tool_calls
        assert call.arguments == arguments, "kept as the text the model sent"
        result = Shop().call(call.name, call.arguments)
        assert result["status"] == "error"
        assert "nested more than 32 levels deep" in result["error"] and len(result["error"]) < 600
        history = convo(
            out.as_message(), ChatMessage("tool", json.dumps(result), tool_call_id=call.call_id)
        )
        assert run(provider, history).text == "noted"  # once: RecursionError building it
    replayed = server.requests[1]["body"]["messages"][-2]["tool_calls"][0]["function"]
    if name.startswith("openai-compatible/"):
        assert json.loads(replayed["arguments"]) == {"unparsed_arguments": arguments}
    else:
        assert replayed["arguments"] == arguments


def test_responses_keep_deep_arguments_as_text_and_replay_them() -> None:
    with FakeOpenAIServer(hostile_brain(DEEP)) as server:
        provider = responses(server)
        out = run(provider, convo())
        [call] = out.tool_calls
        assert call.arguments == DEEP
        result = Shop().call(call.name, call.arguments)
        history = convo(
            out.as_message(), ChatMessage("tool", json.dumps(result), tool_call_id=call.call_id)
        )
        assert run(provider, history).text == "noted"


def test_arguments_past_the_size_limit_are_cut_and_answered_with_an_error() -> None:
    huge = '{"qty": 5, "price": 1, "note": "' + "x" * 300_000 + '"}'
    with FakeOpenAIServer(hostile_brain(huge)) as server:
        out = run(chat(server, name="openai-compatible/local"), convo())
    [call] = out.tool_calls
    assert isinstance(call.arguments, str) and len(call.arguments) < 270_000
    assert call.arguments.startswith(huge[:1000]) and "cut by econbench" in call.arguments
    result = Shop().call(call.name, call.arguments)
    assert result["status"] == "error" and "longer than 262,144 characters" in result["error"]


def test_lone_surrogates_in_text_reasoning_and_arguments_become_replacement_characters() -> None:
    def brain(request: BrainRequest) -> BrainReply:
        return BrainReply(
            text="caf\ud800 and a pair \ud83d\ude00",
            reasoning="think \udc00",
            tool_calls=[{"name": "buy_beans", "arguments": '{"qty": 5, "\\ud800k": "\\udfff"}'}],
        )

    with FakeOpenAIServer(brain, reasoning_field="reasoning_content") as server:
        out = run(chat(server, name="openai-compatible/local"), convo())
    assert out.text == "caf\ufffd and a pair \U0001f600"
    assert out.reasoning == "think \ufffd"
    assert out.tool_calls[0].arguments == {"qty": 5, "\ufffdk": "\ufffd"}
    # Everything the harness keeps is valid UTF-8 now.
    json.dumps(vars(out), default=vars, ensure_ascii=False).encode("utf-8")


def run_priced(provider: Any, messages: list[ChatMessage]) -> ModelOutput:
    """``run`` for a ``PricedProvider`` (it closes the provider it wraps)."""

    async def call() -> ModelOutput:
        try:
            return await provider.generate(messages, TOOLS, GenerateConfig())
        finally:
            await provider.inner.aclose()

    return asyncio.run(call())


@pytest.mark.parametrize("bad", [1e308, -5, 3.5, 10**12])
def test_impossible_usage_counts_are_zero_flagged_and_unpriced(
    bad: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from econbench.agents.models.registry import PricedProvider

    def brain(request: BrainRequest) -> BrainReply:
        return BrainReply(text="hi", input_tokens=bad, cached_input_tokens=0, output_tokens=7)

    with FakeOpenAIServer(brain) as server:
        provider = PricedProvider(chat(server, name="openai/gpt-5.5"), name="openai/gpt-5.5")
        with caplog.at_level("WARNING"):
            out = run_priced(provider, convo())
    assert out.usage.input_tokens == 0 and out.usage.output_tokens == 7
    assert out.usage.invalid == ("input_tokens",)
    assert out.usage.to_dict()["invalid"] == ["input_tokens"]
    assert out.cost_usd is None, "never priced as if the count were 0, nor as infinity"
    assert "impossible usage" in caplog.text and "openai/gpt-5.5" in caplog.text
    json.dumps(out.usage.to_dict(), allow_nan=False)


def test_sound_usage_is_priced_and_carries_no_flag() -> None:
    from econbench.agents.models.registry import PricedProvider

    def brain(request: BrainRequest) -> BrainReply:
        return BrainReply(text="hi", input_tokens=1000, cached_input_tokens=0, output_tokens=10)

    with FakeOpenAIServer(brain) as server:
        provider = PricedProvider(chat(server, name="openai/gpt-5.5"), name="openai/gpt-5.5")
        out = run_priced(provider, convo())
    assert out.usage.invalid == () and "invalid" not in out.usage.to_dict()
    assert out.cost_usd == pytest.approx(1000 * 5 / 1e6 + 10 * 30 / 1e6)


def test_a_compatible_server_never_gets_the_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAIServer(text_brain) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert run(create_openai_provider("openai-compatible/my-model"), convo()).text
        named = OpenAIChatProvider(
            "m", api_key="sk-named-0123456789", base_url=None, name="openai-compatible/m"
        )
        assert run(named, convo()).text
    sent = [h.get("authorization", "") for h in server.headers]
    assert KEY not in "".join(sent)
    assert sent == ["Bearer not-needed", "Bearer sk-named-0123456789"]
