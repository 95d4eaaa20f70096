"""Each message is encoded and hashed once; providers convert only what is new (issue 27).

The canonical body and digest a message keeps must be exactly what the record computed
before (so old records, request keys and the response cache still match), and a provider
that converted earlier prefixes of a conversation must send the same bytes, request for
request, as a fresh provider given fresh copies of the messages.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import hashlib
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.common import BrainReply, BrainRequest, FakeServer
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models import base, record
from econbench.agents.models.anthropic_provider import AnthropicProvider
from econbench.agents.models.base import ChatMessage, GenerateConfig, ModelOutput, ModelProvider
from econbench.agents.models.gemini_provider import GeminiProvider
from econbench.agents.models.openai_provider import OpenAIChatProvider, OpenAIResponsesProvider
from econbench.agents.tools import ToolCall, Toolkit, ToolSpec, tool
from econbench.agents.untrusted import valid_text


class Shop(Toolkit):
    @tool("write")
    def buy(self, qty: int) -> dict:
        """Buy green coffee.

        Args:
            qty: Kilograms to buy.
        """
        return {"bought": qty}

    @tool()
    def check_cash(self) -> dict:
        """Show the firm's cash."""
        return {"cash": 1000.0}


TOOLS: list[ToolSpec] = Shop().specs()


# ---------------------------------------------------------------- the old forms, spelled out
def old_body(message: ChatMessage) -> str:
    """``record.message_body`` as it was before messages kept their body."""
    text = json.dumps(message.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return valid_text(text)


def old_digest(message: ChatMessage) -> str:
    return hashlib.sha256(old_body(message).encode("utf-8")).hexdigest()


def old_request_key(model: str, messages: list[ChatMessage], config: GenerateConfig) -> str:
    canon = record.canonical_json
    tools = canon(
        [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in TOOLS]
    )
    data = {
        "model": model,
        "messages": [old_digest(m) for m in messages],
        "tools": hashlib.sha256(tools.encode("utf-8")).hexdigest(),
        "config": record.config_dict(config),
    }
    return hashlib.sha256(canon(data).encode("utf-8")).hexdigest()


def varied_messages() -> list[ChatMessage]:
    return [
        ChatMessage("system", "You run roaster_A."),
        ChatMessage("user", "Prix du café: 3,20 € — 咖啡 \U0001f600"),
        ChatMessage("user", "half a pair: \ud800 here"),  # a lone surrogate
        ChatMessage(
            "assistant",
            "",
            tool_calls=[ToolCall("buy", {"qty": 5, "b": 2.0, "a": [1, True, None]}, "c1")],
            reasoning="think",
            provider_data={"anthropic": {"content": [{"type": "thinking", "signature": "s"}]}},
        ),
        ChatMessage("assistant", "raw", tool_calls=[ToolCall("buy", "{not json", None)]),
        ChatMessage("tool", '{"ok":true}', tool_call_id="c1", name="buy"),
    ]


# ---------------------------------------------------------------- the message's own forms
def test_body_and_digest_are_what_the_record_computed_before() -> None:
    for message in varied_messages():
        assert message.canonical == old_body(message)
        assert message.digest == old_digest(message)
        assert record.message_body(message) == old_body(message)
    assert "\ufffd" in varied_messages()[2].canonical
    assert record.canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


def test_request_key_is_computed_as_before() -> None:
    messages = varied_messages()
    for config in (GenerateConfig(), GenerateConfig(temperature=0.3, tool_choice="required")):
        want = old_request_key("openai/gpt-x", messages, config)
        assert record.request_key("openai/gpt-x", messages, TOOLS, config) == want
        # and again, from the kept digests
        assert record.request_key("openai/gpt-x", messages, TOOLS, config) == want


def test_each_message_is_encoded_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    encoded: list[int] = []
    real = base._canonical_body

    def counting(message: ChatMessage) -> str:
        encoded.append(id(message))
        return real(message)

    monkeypatch.setattr(base, "_canonical_body", counting)
    messages = [ChatMessage("system", "S")]
    config = GenerateConfig()
    with record.CallRecord(tmp_path / "record.sqlite") as rec:
        for i in range(6):
            messages.append(ChatMessage("user", f"day {i}"))
            record.request_key("m", messages, TOOLS, config)
            rec.add_call("a", i, "m", messages, TOOLS, config, ModelOutput(model="m", text="ok"))
            messages.append(ChatMessage("assistant", "ok"))
        assert len(encoded) == len(set(encoded)) == len(messages) - 1
        [stored] = rec._query("SELECT COUNT(*) FROM messages")[0]
        assert stored == len({m.digest for m in messages[:-1]})
        call = rec.call_at("a", 5)
        assert call is not None
        assert call.message_hashes == [old_digest(m) for m in messages[:-1]]
        assert call.request_key == old_request_key("m", messages[:-1], config)
        assert [rec.message(h) for h in call.message_hashes] == messages[:-1]


def test_assigning_a_field_forgets_the_kept_forms() -> None:
    message = ChatMessage("user", "before")
    first = message.digest
    assert message.memo(("wire",), lambda m: {"text": m.content}) == {"text": "before"}
    message.content = "after"
    assert message.digest == old_digest(message) != first
    assert message.memo(("wire",), lambda m: {"text": m.content}) == {"text": "after"}
    message.provider_data = {"x": 1}
    assert message.canonical == old_body(message)


def test_copies_and_pickles_compare_equal_and_derive_their_own_forms() -> None:
    message = varied_messages()[3]
    digest = message.digest
    message.memo(("wire",), lambda m: object())
    for other in (copy.copy(message), copy.deepcopy(message), pickle.loads(pickle.dumps(message))):
        assert other == message
        assert "_memo" not in other.__dict__
        assert other.digest == digest
    changed = dataclasses.replace(message, content="now with text")
    assert changed.digest == old_digest(changed) != digest
    assert repr(message).startswith("ChatMessage(role='assistant'")
    assert "_memo" not in {f.name for f in dataclasses.fields(ChatMessage)}


def test_replay_finds_calls_recorded_before_and_names_a_divergence(tmp_path: Any) -> None:
    messages = varied_messages()
    config = GenerateConfig()
    with record.CallRecord(tmp_path / "record.sqlite") as rec:
        rec.register_agent("a", "m/x", 1000)
        rec.add_call("a", 0, "m/x", messages, TOOLS, config, ModelOutput(model="x", text="hi"))
        # a row written the old way: hashes and key computed from scratch
        fresh = [ChatMessage.from_dict(m.to_dict()) for m in messages] + [ChatMessage("user", "2")]
        with rec._writing() as db:
            db.executemany(
                "INSERT OR IGNORE INTO messages(hash, body) VALUES (?, ?)",
                [(old_digest(m), old_body(m)) for m in fresh],
            )
            db.execute(
                "INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    "a",
                    1,
                    old_request_key("m/x", fresh, config),
                    "m/x",
                    json.dumps([old_digest(m) for m in fresh]),
                    record._sha256(record.tools_body(TOOLS)),
                    record.canonical_json(record.config_dict(config)),
                    json.dumps(record.output_to_dict(ModelOutput(model="x", text="second"))),
                ),
            )
        replay = record.ReplayProvider(rec, "a")
        loop = asyncio.new_event_loop()
        try:
            assert loop.run_until_complete(replay.generate(messages, TOOLS, config)).text == "hi"
            again = [*messages, ChatMessage("user", "2")]
            out = loop.run_until_complete(replay.generate(again, TOOLS, config))
            assert out.text == "second"
            replay.last = 0
            with pytest.raises(base.FatalModelError, match="first difference at message 6"):
                loop.run_until_complete(
                    replay.generate([*messages, ChatMessage("user", "3")], TOOLS, config)
                )
        finally:
            loop.close()


# ---------------------------------------------------------------- providers: the same bytes
PROVIDER_DATA_KEYS = ("openai_responses", "anthropic", "gemini")


def provider_data(i: int, text: str, calls: list[ToolCall]) -> dict[str, Any]:
    """Each provider's record of the turn (each provider reads its own key)."""
    responses: list[dict[str, Any]] = [{"type": "message", "id": f"msg_{i}"}] if text else []
    responses += [
        {"type": "function_call", "id": f"fc_{i}_{j}", "call_id": c.call_id, "name": c.name}
        for j, c in enumerate(calls)
    ]
    anthropic: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    anthropic += [
        {"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.arguments} for c in calls
    ]
    gemini: list[dict[str, Any]] = [{"text": text}] if text else []
    gemini += [{"function_call": {"name": c.name, "args": c.arguments}} for c in calls]
    return {
        "openai_responses": {"output": responses},
        "anthropic": {"content": anthropic},
        "gemini": {"parts": gemini},
    }


def growing_conversation() -> list[list[ChatMessage]]:
    """Prefixes of one conversation (the same message objects), as an agent sends them:
    tool turns with and without call ids and provider data, a turn whose arguments are not
    JSON, consecutive tool results, a system note mid-way, an empty reply."""
    messages = [ChatMessage("system", "You run roaster_A."), ChatMessage("system", "Be brief.")]
    steps: list[list[ChatMessage]] = []
    for i in range(6):
        messages.append(ChatMessage("user", f"Day {i}: price {3 + i / 10:.2f} € — buy?"))
        steps.append(list(messages))
        calls = [ToolCall("buy", {"qty": i + 1}, f"call_{i}")]
        data: dict[str, Any] | None = None
        text = "Buying." if i % 2 else ""
        if i == 1:
            calls.append(ToolCall("check_cash", {}, f"call_{i}_b"))
        if i == 2:
            calls = [ToolCall("buy", {"qty": 3})]  # no id: its conversion depends on its place
        if i == 3:
            calls = [ToolCall("buy", "{not json", f"call_{i}")]
        if i in (0, 1, 5):
            data = provider_data(i, text, calls)
        if i == 4:
            calls, text = [], "Nothing to do today."
        reasoning = "Prices look fine." if i == 5 else None
        messages.append(
            ChatMessage("assistant", text, calls, reasoning=reasoning, provider_data=data)
        )
        for call in calls:
            result = json.dumps({"status": "ok", "call": call.name})
            messages.append(ChatMessage("tool", result, tool_call_id=call.call_id, name=call.name))
        if i == 2:
            messages.append(ChatMessage("system", "A note from the harness."))
        steps.append(list(messages))
    return steps


def _ok(request: BrainRequest) -> BrainReply:
    return BrainReply(text="ok")


Factory = Callable[[FakeServer], ModelProvider]
KEY = "sk-test-0123456789abcdef"

PROVIDERS: dict[str, tuple[type[FakeServer], Factory]] = {
    "openai-chat": (
        FakeOpenAIServer,
        lambda s: OpenAIChatProvider("fake-model", api_key=KEY, base_url=s.base_url),  # type: ignore[attr-defined]
    ),
    "openai-compatible": (
        FakeOpenAIServer,
        lambda s: OpenAIChatProvider(
            "fake-model",
            api_key=KEY,
            base_url=s.base_url,  # type: ignore[attr-defined]
            name="openai-compatible/fake-model",
            replay_reasoning=True,
        ),
    ),
    "openai-responses": (
        FakeOpenAIServer,
        lambda s: OpenAIResponsesProvider("fake-model", api_key=KEY, base_url=s.base_url),  # type: ignore[attr-defined]
    ),
    "anthropic": (
        FakeAnthropicServer,
        lambda s: AnthropicProvider("claude-sonnet-4-6", api_key=KEY, base_url=s.root_url),
    ),
    "gemini": (
        FakeGeminiServer,
        lambda s: GeminiProvider("gemini-3.1-pro", api_key=KEY, base_url=s.root_url),
    ),
}


@pytest.mark.parametrize("which", sorted(PROVIDERS))
def test_a_provider_that_converted_earlier_prefixes_sends_the_same_bytes(which: str) -> None:
    server_type, make = PROVIDERS[which]
    steps = growing_conversation()
    config = GenerateConfig(max_tokens=256)
    loop = asyncio.new_event_loop()
    providers: list[ModelProvider] = []

    def send(provider: ModelProvider, messages: list[ChatMessage]) -> None:
        loop.run_until_complete(provider.generate(messages, TOOLS, config))

    try:
        with server_type(_ok) as server:
            warm = make(server)
            providers.append(warm)
            for messages in steps:
                send(warm, messages)
            for messages in steps:
                send(warm, messages)  # everything converted already
            n = len(steps)
            for messages in steps:
                fresh = make(server)
                providers.append(fresh)
                send(fresh, [copy.copy(m) for m in messages])
            bodies = list(server.raw_bodies)
        for provider in providers:
            loop.run_until_complete(provider.aclose())  # type: ignore[attr-defined]
    finally:
        loop.close()
    assert len(bodies) == 3 * n
    for i in range(n):
        assert bodies[i] == bodies[2 * n + i], f"{which}: request {i} differs"
        assert bodies[n + i] == bodies[2 * n + i], f"{which}: repeated request {i} differs"
    assert len(set(bodies[:n])) == n


def test_the_anthropic_breakpoint_is_not_kept_with_the_message() -> None:
    steps = growing_conversation()
    provider = AnthropicProvider("claude-sonnet-4-6", api_key=KEY, base_url="http://127.0.0.1:9")
    config = GenerateConfig(max_tokens=256)
    for messages in steps:
        request = provider.build_request(messages, TOOLS, config)
        marked = [
            (t, b)
            for t, turn in enumerate(request["messages"])
            for b, block in enumerate(turn["content"])
            if "cache_control" in block
        ]
        assert len(marked) == 1
        assert marked[0][0] == len(request["messages"]) - 1


@pytest.mark.parametrize(
    "hashes",
    [
        [],
        ["ab" * 32, "0f" * 32],
        ['a"b', "c,d"],  # characters JSON escapes or that could pass for separators
        ["é", "\\", "\n"],
        ["ZZ", "", "09"],
    ],
)
def test_the_key_spells_its_message_list_as_canonical_json(hashes: list[str]) -> None:
    config = record.config_dict(GenerateConfig(temperature=0.5))
    data = {"model": "m/é", "messages": hashes, "tools": "t" * 64, "config": config}
    want = hashlib.sha256(record.canonical_json(data).encode("utf-8")).hexdigest()
    assert record._key("m/é", hashes, "t" * 64, config) == want
