"""The OpenAI providers' assembled bodies (``openai_body``) are the bytes ``create()`` sends.

Each case plays one growing conversation twice, each time against a fresh fake server (the
same reply ids): once through the assembled path (``assemble_bodies``, the default) and once
through the SDK's own ``create()`` (``assemble_bodies = False``), and compares what arrived
(raw body bytes, path, query, content type) and the ``ModelOutput`` of every reply. Broken
replies and failing requests must give the same data or the same error through both paths.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from tests.fakes.common import BrainReply, BrainRequest, Fault
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models import openai_body
from econbench.agents.models.base import ChatMessage, GenerateConfig, ModelError
from econbench.agents.models.compat import PROFILES
from econbench.agents.models.openai_provider import (
    OpenAIChatProvider,
    OpenAIResponsesProvider,
    _OpenAIProvider,
)
from econbench.agents.tools import ToolCall, Toolkit, ToolSpec, tool

KEY = "sk-test-0123456789abcdef"


class Shop(Toolkit):
    @tool("write")
    def buy(self, qty: int, note: str = "") -> dict:
        """Buy green coffee.

        Args:
            qty: Kilograms to buy.
            note: A note for the seller (any text: « café », 珈琲).
        """
        return {"bought": qty}

    @tool()
    def check_cash(self) -> dict:
        """Show the firm's cash."""
        return {"cash": 1000.0}


TOOLS: list[ToolSpec] = Shop().specs()


def conversation() -> list[list[ChatMessage]]:
    """Prefixes of one conversation (the same message objects): non-ASCII and escapes in
    every field, calls with and without ids, arguments that are not JSON, a reasoning item
    to replay, consecutive tool results, system messages first and mid-way."""
    messages = [
        ChatMessage("system", "You run roaster_A — «€» 珈琲 🫘."),
        ChatMessage("system", "\t"),
    ]
    steps: list[list[ChatMessage]] = []
    for i in range(5):
        text = f'Day {i}: price {3 + i / 10:.2f} € — "buy"?\n</script>\u2028\x00\\ ☕'
        messages.append(ChatMessage("user", text))
        steps.append(list(messages))
        calls = [ToolCall("buy", {"qty": i + 1, "note": "é\u00a0😀"}, f"call_{i}")]
        data: dict[str, Any] | None = None
        if i == 1:
            calls.append(ToolCall("check_cash", {}, f"call_{i}_b"))
            data = {
                "openai_responses": {
                    "output": [
                        {
                            "type": "reasoning",
                            "id": "rs_1",
                            "summary": [],
                            "encrypted_content": "ẽñç",
                        },
                        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "buy"},
                    ]
                },
                "openai_chat": {"reasoning_field": "reasoning"},
            }
        if i == 2:
            calls = [ToolCall("buy", {"qty": 3})]  # no id: its form depends on its place
        if i == 3:
            calls = [ToolCall("buy", "{not json ü", f"call_{i}")]
        reasoning = "Prices look fine — 好." if i in (1, 4) else None
        messages.append(
            ChatMessage(
                "assistant",
                "Buying ☕." if i % 2 else "",
                calls,
                reasoning=reasoning,
                provider_data=data,
            )
        )
        for call in calls:
            result = json.dumps(
                {"status": "ok", "call": call.name, "text": "ü"}, ensure_ascii=False
            )
            messages.append(ChatMessage("tool", result, tool_call_id=call.call_id, name=call.name))
        if i == 2:
            messages.append(ChatMessage("system", "A note from the harness: ✓."))
        steps.append(list(messages))
    return steps


def brain(request: BrainRequest) -> BrainReply:
    """Text, a reasoning text and (when tools are offered) a call, usage with cache."""
    calls = [{"name": "buy", "arguments": {"qty": 2, "note": "ß"}}] if request.tools else []
    return BrainReply(
        text="D'accord — ☕", tool_calls=calls, reasoning="Thinking… ✓", reasoning_tokens=4
    )


Make = Callable[[FakeOpenAIServer], _OpenAIProvider]


def chat(**options: Any) -> Make:
    def make(server: FakeOpenAIServer) -> _OpenAIProvider:
        return OpenAIChatProvider("fake-model", api_key=KEY, base_url=server.base_url, **options)

    return make


def compatible(profile: str, **options: Any) -> Make:
    return chat(name="openai-compatible/fake-model", compat=profile, **options)


def responses(**options: Any) -> Make:
    def make(server: FakeOpenAIServer) -> _OpenAIProvider:
        return OpenAIResponsesProvider(
            "fake-model", api_key=KEY, base_url=server.base_url, **options
        )

    return make


EXTRA = {"extra_body": {"chat_template_kwargs": {"enable_thinking": False, "ä": [1, 2.5, None]}}}

CASES: dict[str, tuple[Make, GenerateConfig]] = {
    "chat": (chat(), GenerateConfig()),
    "chat-settings": (
        chat(),
        GenerateConfig(
            temperature=0.7, max_tokens=256, reasoning_effort="low", tool_choice="required"
        ),
    ),
    "chat-strict-named-choice": (
        chat(compat="openai"),
        GenerateConfig(tool_choice={"type": "function", "function": {"name": "buy"}}),
    ),
    "chat-extra-body": (chat(), GenerateConfig(max_tokens=9, extra=EXTRA)),
    "chat-extra-overrides": (
        chat(),
        GenerateConfig(temperature=1, extra={"extra_body": {"temperature": 0.5, "zz": "ü"}}),
    ),
    "chat-extra-replaces-messages": (
        chat(),
        GenerateConfig(extra={"extra_body": {"messages": [{"role": "user", "content": "ö"}]}}),
    ),
    "chat-paper": (chat(), GenerateConfig(max_tokens=64, request_style="paper")),
    "chat-paper-effort": (
        chat(),
        GenerateConfig(reasoning_effort="high", request_style="paper", extra=EXTRA),
    ),
    **{
        f"compatible-{name}": (
            compatible(name, replay_reasoning=name == "vllm"),
            GenerateConfig(max_tokens=128, temperature=0.0),
        )
        for name in PROFILES
        if name != "openai"
    },
    "compatible-extra": (
        compatible("generic"),
        GenerateConfig(reasoning_effort="medium", extra=EXTRA),
    ),
    "responses": (responses(), GenerateConfig()),
    "responses-reasoning": (
        responses(reasoning_model=True),
        GenerateConfig(max_tokens=300, reasoning_effort="high", temperature=0.2),
    ),
    "responses-strict-extra": (
        responses(compat="openai", reasoning_model=False),
        GenerateConfig(tool_choice="required", extra=EXTRA),
    ),
}


def play(
    make: Make, assemble: bool, steps: list[list[ChatMessage]], config: GenerateConfig
) -> tuple[list[tuple[Any, ...]], list[Any]]:
    """Each step sent (with and without tools) through a fresh server: what arrived, and
    each reply's output (or its error, as type and message)."""
    outputs: list[Any] = []
    loop = asyncio.new_event_loop()
    try:
        with FakeOpenAIServer(brain, reasoning_field="reasoning") as server:
            provider = make(server)
            provider.assemble_bodies = assemble
            for messages in steps:
                for tools in (TOOLS, []):
                    outputs.append(
                        loop.run_until_complete(outcome(provider, messages, tools, config))
                    )
            loop.run_until_complete(provider.aclose())
            arrived = [
                (r["method"], r["path"], h.get("content-type"), h.get("content-length"), raw)
                for r, h, raw in zip(
                    server.requests, server.headers, server.raw_bodies, strict=True
                )
            ]
    finally:
        loop.close()
    return arrived, outputs


async def outcome(
    provider: _OpenAIProvider,
    messages: list[ChatMessage],
    tools: list[ToolSpec],
    config: GenerateConfig,
) -> Any:
    try:
        return await provider.generate(messages, tools, config)
    except ModelError as exc:  # (each run has its own server: its port is left out)
        return (type(exc).__name__, re.sub(r"127\.0\.0\.1:\d+", "HOST", str(exc)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_assembled_bodies_are_the_bytes_create_sends(case: str) -> None:
    make, config = CASES[case]
    steps = conversation()
    slow, slow_outputs = play(make, False, steps, config)
    fast, fast_outputs = play(make, True, steps, config)
    again, again_outputs = play(make, True, steps, config)  # every message's bytes kept now
    assert len(slow) == 2 * len(steps)
    assert all(method == "POST" for method, *_ in slow)
    assert all(content_type == "application/json" for _, _, content_type, *_ in slow)
    for i, (want, got, kept) in enumerate(zip(slow, fast, again, strict=True)):
        assert got == want, f"{case}: request {i} differs"
        assert kept == want, f"{case}: request {i} differs once the messages kept their bytes"
    assert fast_outputs == slow_outputs
    assert again_outputs == slow_outputs
    assert any(not isinstance(o, tuple) for o in slow_outputs)  # replies, not only errors


def test_messages_keep_their_bytes_and_only_new_ones_are_encoded(monkeypatch) -> None:
    encoded: list[int] = []
    joined = openai_body._joined

    def counting(items: Any) -> bytes:
        encoded.append(len(items))
        return joined(items)

    monkeypatch.setattr(openai_body, "_joined", counting)
    steps = conversation()
    play(responses(), True, steps[-1:], GenerateConfig())
    first = len(encoded)
    play(responses(), True, steps[-1:], GenerateConfig())
    # again (a new provider), only the turn whose call has no id and its result (their form
    # depends on their place) are encoded, for the first request; the second request repeats
    # the first's messages, whose bytes the provider kept (``prefix_fold``): nothing again
    assert first > 4
    assert len(encoded) - first == 2


# ---------------------------------------------------------------- what cannot be sent
@pytest.mark.parametrize(
    "make", [chat(), responses(), compatible("vllm")], ids=["chat", "responses", "vllm"]
)
@pytest.mark.parametrize(
    "problem",
    ["surrogate-user", "surrogate-instructions", "surrogate-arguments", "nan", "nan-extra"],
)
def test_what_cannot_be_encoded_fails_as_create_fails(make: Make, problem: str) -> None:
    messages = [ChatMessage("system", "Sys."), ChatMessage("user", "Hi")]
    config = GenerateConfig()
    if problem == "surrogate-user":
        messages.append(ChatMessage("user", "lone \ud83d here"))
    elif problem == "surrogate-instructions":
        messages[0] = ChatMessage("system", "lone \udc00")
    elif problem == "surrogate-arguments":
        messages.append(ChatMessage("assistant", "", [ToolCall("buy", {"note": "\ud800"}, "c1")]))
        messages.append(ChatMessage("tool", "ok", tool_call_id="c1"))
    elif problem == "nan":
        config = GenerateConfig(temperature=math.nan)
    else:
        config = GenerateConfig(extra={"extra_body": {"x": [math.inf]}})
    slow, slow_outputs = play(make, False, [messages], config)
    fast, fast_outputs = play(make, True, [messages], config)
    assert fast == slow
    assert fast_outputs == slow_outputs


# ---------------------------------------------------------------- broken replies, errors
def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


def _chat_reply(**fields: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": "hé", **fields.pop("message", {})}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        **fields,
    }


def _responses_reply(**fields: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "fake-model",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "ü"}]},
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "hé", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "c1",
                "name": "buy",
                "arguments": "{}",
            },
        ],
        "usage": {"input_tokens": 10, "output_tokens": 2},
        **fields,
    }


BODIES: dict[str, Callable[[bool], Any]] = {
    "plain": lambda chat_api: _chat_reply() if chat_api else _responses_reply(),
    "nan-usage": lambda chat_api: json.dumps(
        _chat_reply(usage={"prompt_tokens": math.nan, "completion_tokens": math.inf})
        if chat_api
        else _responses_reply(usage={"input_tokens": math.nan, "output_tokens": -math.inf})
    ).encode(),
    "overflowing-float": lambda chat_api: (
        json.dumps(_chat_reply() if chat_api else _responses_reply())
        .replace('"model": "fake-model"', '"model": "fake-model", "x": 1e400')
        .encode()
    ),
    "deep-extra": lambda chat_api: (_chat_reply if chat_api else _responses_reply)(x=_deep(100)),
    "too-deep": lambda chat_api: (_chat_reply if chat_api else _responses_reply)(x=_deep(300)),
    "odd-types": lambda chat_api: (
        _chat_reply(message={"content": 5, "tool_calls": "no"}, created="soon", usage="x")
        if chat_api
        else _responses_reply(output="nothing", usage=[1])
    ),
    "error-in-200": lambda chat_api: {"error": {"message": "overloaded", "code": "server_error"}},
    "a-list": lambda chat_api: [1, 2],
    "null": lambda chat_api: None,
    "html": lambda chat_api: b"<html>Bad gateway</html>",
    "truncated-json": lambda chat_api: b'{"choices": [',
    "empty": lambda chat_api: b"",
    "surrogate-escape": lambda chat_api: json.dumps(
        _chat_reply(message={"content": "\ud800 x"}) if chat_api else _responses_reply()
    ).encode(),
}


@pytest.mark.parametrize("body", sorted(BODIES))
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_broken_replies_read_as_create_reads_them(body: str, api: str) -> None:
    make = chat() if api == "chat" else responses(reasoning_model=True)
    results = []
    for assemble in (False, True):
        loop = asyncio.new_event_loop()
        try:
            with FakeOpenAIServer(brain) as server:
                server.faults.append(Fault("body", body=BODIES[body](api == "chat")))
                provider = make(server)
                provider.assemble_bodies = assemble
                messages = [ChatMessage("user", "Hi")]
                results.append(
                    loop.run_until_complete(outcome(provider, messages, TOOLS, GenerateConfig()))
                )
                loop.run_until_complete(provider.aclose())
        finally:
            loop.close()
    assert results[1] == results[0]


@pytest.mark.parametrize(
    "fault",
    [
        Fault("status", status=429, retry_after=2),
        Fault("status", status=400, message="bad ü"),
        Fault("status", status=401),
        Fault("status", status=503, headers={"x-should-retry": "false"}),
        Fault("context_overflow"),
        Fault("drop"),
        Fault("body", body=b"<html>", body_status=502),
    ],
    ids=["429", "400", "401", "503", "overflow", "drop", "html-502"],
)
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_errors_map_as_through_create(fault: Fault, api: str) -> None:
    make = chat() if api == "chat" else responses()
    results = []
    for assemble in (False, True):
        loop = asyncio.new_event_loop()
        try:
            with FakeOpenAIServer(brain) as server:
                server.faults.append(fault)
                provider = make(server)
                provider.assemble_bodies = assemble
                messages = [ChatMessage("user", "Hi")]
                results.append(
                    loop.run_until_complete(
                        outcome(provider, messages, TOOLS, GenerateConfig(timeout_s=5))
                    )
                )
                loop.run_until_complete(provider.aclose())
        finally:
            loop.close()
    assert isinstance(results[0], tuple)
    assert results[1] == results[0]


def test_the_reasoning_summary_retry_goes_the_same_way() -> None:
    fault = Fault(
        "status",
        status=400,
        message="Your organization must be verified to generate reasoning summaries",
    )
    arrived = []
    for assemble in (False, True):
        loop = asyncio.new_event_loop()
        try:
            with FakeOpenAIServer(brain) as server:
                server.faults.append(fault)
                provider = responses(reasoning_model=True)(server)
                provider.assemble_bodies = assemble
                output = loop.run_until_complete(
                    provider.generate([ChatMessage("user", "Hi")], TOOLS, GenerateConfig())
                )
                assert output.text
                loop.run_until_complete(provider.aclose())
                arrived.append(list(server.raw_bodies))
        finally:
            loop.close()
    assert len(arrived[0]) == 2
    assert arrived[1] == arrived[0]


def test_another_client_goes_through_create() -> None:
    import openai

    class Mine(openai.AsyncOpenAI):
        pass

    assert openai_body.eligible(openai.AsyncOpenAI(api_key=KEY))
    assert not openai_body.eligible(Mine(api_key=KEY))
    assert not openai_body.eligible(
        openai.AsyncOpenAI(api_key=KEY, _strict_response_validation=True)
    )
