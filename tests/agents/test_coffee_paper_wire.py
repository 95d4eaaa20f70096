"""The ``coffee_paper`` request bodies: the forms the recorded scenario does not reach (thinking
variants, summaries) and the reference's one-time fall-backs, with literal bodies derived
from the reference's model classes (``coffeebench/models/*_model.py``); and, byte for byte,
the OpenRouter and Gemini bodies recorded from the reference's own ``OpenRouterModel`` and
``GeminiModel`` (``data/coffee_paper/record_reference.py``)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from typing import Any

import pytest
from tests.agents.coffee_paper_scenario import DATA, SCENARIO, ScriptedBrain
from tests.agents.test_reference_agent import play
from tests.fakes.common import BrainReply, Fault
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models import coffee_paper_wire as wire
from econbench.agents.models.base import ChatMessage, ContextOverflowError, TransientModelError
from econbench.agents.models.gemini_provider import GeminiProvider
from econbench.agents.models.openai_provider import OpenAIChatProvider
from econbench.agents.models.registry import ModelSettings, build_provider
from econbench.agents.reference_agent import ReferenceAgent
from econbench.agents.tools import ToolCall, ToolSpec


def ping(n: int) -> dict[str, Any]:
    """Ping."""
    return {}


SPEC = dataclasses.replace(
    ToolSpec.from_function(ping).with_schema(
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    ),
    description="Ping.",
)
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def config(**options: Any) -> Any:
    return wire.CallOptions(**options).to_config(300.0)


def conversation() -> list[ChatMessage]:
    call = ToolCall("ping", {"n": 1}, "call_1")
    return [
        ChatMessage("system", "SYS"),
        ChatMessage("user", "Observation: Day 0."),
        ChatMessage("assistant", "", tool_calls=[call]),  # no raw: rebuilt
        ChatMessage("tool", '{"ok": true}', tool_call_id="call_1", name="ping"),
        ChatMessage("user", "wake"),
    ]


def test_anthropic_thinking_query() -> None:
    body = wire.anthropic_request(
        "claude-sonnet-4-6",
        conversation(),
        [SPEC],
        config(thinking=True, skip_temperature=True, skip_thinking=False),
    )
    assert body["max_tokens"] == 8192 and "temperature" not in body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "call_1", "name": "ping", "input": {"n": 1}}],
    }
    assert body["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "wake", "cache_control": {"type": "ephemeral"}}],
    }
    opus = wire.anthropic_request(
        "claude-opus-4-7", conversation(), [SPEC], config(thinking=True, skip_thinking=False)
    )
    assert opus["max_tokens"] == 4096 and opus["thinking"] == {"type": "adaptive"}
    assert opus["extra_body"] == {"output_config": {"effort": "high"}}


def test_anthropic_raw_replay_is_not_mutated_and_empty_raw_is_kept() -> None:
    raw = [
        {"type": "text", "text": ""},
        {"type": "tool_use", "id": "t", "name": "ping", "input": {}},
    ]
    msgs = [
        ChatMessage("user", "u"),
        ChatMessage("assistant", "", provider_data=wire.with_raw(raw)),
        ChatMessage("assistant", "", provider_data=wire.with_raw([])),
    ]
    body = wire.anthropic_request("claude-sonnet-4-6", msgs, [], config())
    assert body["messages"][1]["content"] == raw
    assert body["messages"][2]["content"] == []  # the reference sends what it kept
    assert "cache_control" not in raw[-1]
    bridge = wire.anthropic_messages([ChatMessage("assistant", "")])
    assert bridge == [{"role": "assistant", "content": [{"type": "text", "text": ""}]}]


def test_summaries() -> None:
    msgs = [ChatMessage("system", "INSTR"), ChatMessage("user", "CONTENT")]
    assert wire.anthropic_request("m", msgs, [], config(call="summarize")) == {
        "model": "m",
        "system": "INSTR",
        "messages": [{"role": "user", "content": "CONTENT"}],
        "max_tokens": 4096,
        "temperature": 0.0,
    }
    assert wire.responses_request("gpt-5.5", msgs, [], config(call="summarize", thinking=True)) == {
        "model": "gpt-5.5",
        "input": [
            {"role": "developer", "content": "INSTR"},
            {"role": "user", "content": "CONTENT"},
        ],
        "max_output_tokens": 4096,
        "temperature": 0.0,
        "reasoning": {"effort": "high"},
    }
    assert wire.chat_request("moonshotai/kimi-k2.6", msgs, [], config(call="summarize")) == {
        "model": "moonshotai/kimi-k2.6",
        "messages": [
            {"role": "system", "content": "INSTR"},
            {"role": "user", "content": "CONTENT"},
        ],
        "max_tokens": 8192,
        "temperature": 0.0,
    }


def test_responses_rebuilt_turn_and_skips() -> None:
    body = wire.responses_request(
        "gpt-5.5", conversation(), [SPEC], config(skip_temperature=True, skip_reasoning=True)
    )
    assert "temperature" not in body and "reasoning" not in body
    assert body["input"][2] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "ping",
        "arguments": '{"n": 1}',
    }
    assert body["tools"] == [
        {"type": "function", "name": "ping", "description": "Ping.", "parameters": SCHEMA}
    ]


def test_openrouter_body_through_the_sdk() -> None:
    with FakeOpenAIServer(lambda r: BrainReply(text="ok"), require_tool_choice=False) as server:
        server.reject_null_content = False  # the reference sends null content with calls
        provider = OpenAIChatProvider(
            "moonshotai/kimi-k2.6",
            api_key="k",
            base_url=server.base_url,
            name="openai-compatible/moonshotai/kimi-k2.6",
        )
        out = asyncio.run(provider.generate(conversation(), [SPEC], config()))
        body = server.requests[0]["body"]
    assert out.text == "ok"
    assert body == {
        "model": "moonshotai/kimi-k2.6",
        "messages": [
            {"role": "system", "content": "SYS"},
            {"role": "user", "content": "Observation: Day 0."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "ping", "arguments": '{"n": 1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'},
            {"role": "user", "content": "wake"},
        ],
        "max_tokens": 4096,
        "temperature": 0.0,
        "tools": [
            {
                "type": "function",
                "function": {"name": "ping", "description": "Ping.", "parameters": SCHEMA},
            }
        ],
        "parallel_tool_calls": False,
    }


def test_fallbacks_follow_the_reference() -> None:
    base = wire.CallOptions()
    refused = "anthropic/x: HTTP 400 invalid_request_error: temperature: not allowed"
    assert wire.fallback("anthropic", "query", refused, base).skip_temperature  # "invalid"
    assert wire.fallback("anthropic", "query", "HTTP 400 error: temperature off", base) is None
    thinking = wire.CallOptions(thinking=True, skip_thinking=False, skip_temperature=True)
    changed = wire.fallback("anthropic", "query", "thinking is not supported", thinking)
    assert changed is not None and changed.skip_thinking
    gpt = "Unsupported parameter: 'temperature' is not supported with this model."
    assert wire.fallback("openai", "query", gpt, base).skip_temperature
    assert wire.fallback("openai", "summarize", "bad temperature", base).skip_temperature
    assert wire.fallback("openai", "query", "bad temperature", base) is None
    assert wire.fallback("openai", "query", "reasoning.effort unknown", base).skip_reasoning
    assert wire.fallback("openai-compatible", "query", "temperature", base).skip_temperature


# ------------------------------------------------------------------ recorded: OpenRouter, Gemini
# The bodies below were recorded from the reference's own OpenRouterModel / GeminiModel
# (data/coffee_paper/record_reference.py); these tests compare the bytes on the wire.
def recorded(kind: str) -> dict[str, Any]:
    return json.loads((DATA / f"{kind}.json").read_text(encoding="utf-8"))


def reference_agent(provider: Any, **kwargs: Any) -> ReferenceAgent:
    return ReferenceAgent(
        provider,
        system_prompt=SCENARIO["system_prompt"],
        initial_observation=SCENARIO["initial_observation"],
        max_attempts=1,
        **kwargs,
    )


def openrouter_run(faults: list[Fault], steps: list[dict[str, Any]]) -> tuple[Any, Any]:
    with FakeOpenAIServer(ScriptedBrain(), require_tool_choice=False) as server:
        server.reject_null_content = False  # the reference sends null content with calls
        server.faults.extend(faults)
        provider = OpenAIChatProvider(
            "z-ai/glm-5.1",
            api_key="sk-or-fake",
            base_url=server.base_url,
            name="openai-compatible/z-ai/glm-5.1",
        )
        agent = reference_agent(provider)
        asyncio.run(play(agent, steps))
    return agent, server


def test_openrouter_bodies_are_the_references_byte_for_byte() -> None:
    agent, server = openrouter_run([], SCENARIO["steps"])
    want = recorded("openrouter")["requests"]
    assert len(server.raw_bodies) == len(want) == 17
    assert [r["path"] for r in server.requests] == [w["path"] for w in want]
    for i, (raw, w) in enumerate(zip(server.raw_bodies, want, strict=True)):
        assert raw == w["raw"].encode("utf-8"), i
    first = server.raw_bodies[0].decode()
    # openai 2.14.0 writes create's parameters in their order, not alphabetically
    assert first.startswith('{"messages":[{"role":"system","content":"You are roaster_A')
    assert '"model":"z-ai/glm-5.1","max_tokens":4096,"parallel_tool_calls":false' in first
    summary = server.requests[15]["body"]
    assert summary["max_tokens"] == 8192 and "tools" not in summary
    assert "—" in server.raw_bodies[15].decode()  # UTF-8, not ASCII-escaped
    assert agent.compactions[0].middle_start == 6  # after the system message's head


def test_openrouter_refused_parallel_tool_calls_is_left_out_of_one_call() -> None:
    faults = [
        Fault("status", status=400, message="parallel_tool_calls is not supported"),
        Fault("delay", seconds=0.0),
        Fault("status", status=400, message="this model does not take temperature"),
    ]
    agent, server = openrouter_run(faults, SCENARIO["steps"][:3])
    want = recorded("openrouter")["fallback"]
    assert [r.decode() for r in server.raw_bodies] == [w["raw"] for w in want]
    bodies = [r["body"] for r in server.requests]
    assert [("parallel_tool_calls" in b, "temperature" in b) for b in bodies] == [
        (True, True),
        (False, True),  # the same call again, without it
        (True, True),  # the next call sends it again
        (True, False),  # temperature: dropped for good
        (True, False),
    ]
    assert agent.options.skip_temperature and not agent.options.drop_parallel_tool_calls


def test_openrouter_text_is_the_content_as_sent() -> None:
    def brain(request: Any) -> BrainReply:
        return BrainReply(text="<think>plan</think>Done.")

    with FakeOpenAIServer(brain, require_tool_choice=False) as server:
        provider = OpenAIChatProvider(
            "moonshotai/kimi-k2.6",
            api_key="k",
            base_url=server.base_url,
            name="openai-compatible/moonshotai/kimi-k2.6",
        )
        out = asyncio.run(provider.generate(conversation()[:2], [SPEC], config()))
    assert out.text == "<think>plan</think>Done."  # OpenRouterModel splits nothing
    reply = {"choices": [{"message": {"content": None, "reasoning": "R"}}]}
    assert wire.chat_text(reply, "summarize") == "R"  # summarize falls back on reasoning
    assert wire.chat_text(reply, "query") == ""


def test_openrouter_parallel_fallback_rules() -> None:
    base = wire.CallOptions()
    msg = "HTTP 400: parallel_tool_calls is not supported"
    changed = wire.fallback("openai-compatible", "query", msg, base)
    assert changed is not None and changed.drop_parallel_tool_calls
    assert not changed.skip_temperature
    assert wire.fallback("openai-compatible", "query", msg, changed) is None
    assert wire.fallback("openai-compatible", "summarize", msg, base) is None  # not sent
    body = wire.chat_request("m", conversation(), [SPEC], changed.to_config(1.0))
    assert "parallel_tool_calls" not in body and body["tools"]
    assert list(wire.chat_body(body)[0]) == [
        "messages",
        "model",
        "max_tokens",
        "temperature",
        "tools",
    ]


def gemini_run(model: str, thinking: bool) -> tuple[ReferenceAgent, FakeGeminiServer]:
    with FakeGeminiServer(ScriptedBrain()) as server:
        provider = GeminiProvider(model, api_key="gm-fake", base_url=server.root_url)
        agent = reference_agent(provider, enable_thinking=thinking)
        asyncio.run(play(agent, SCENARIO["steps"]))
    return agent, server


@pytest.mark.parametrize(("key", "thinking"), [("requests", False), ("thinking", True)])
def test_gemini_bodies_are_the_references_byte_for_byte(key: str, thinking: bool) -> None:
    agent, server = gemini_run("gemini-3.1-pro-preview", thinking)
    want = recorded("gemini")[key]
    assert len(server.raw_bodies) == len(want) == 17
    assert [r["path"] for r in server.requests] == [w["path"] for w in want]
    assert want[0]["path"] == "/v1beta/models/gemini-3.1-pro-preview:generateContent"
    for i, (raw, w) in enumerate(zip(server.raw_bodies, want, strict=True)):
        assert raw == w["raw"].encode("utf-8"), i
    first = server.requests[0]["body"]
    assert first["systemInstruction"] == {
        "parts": [{"text": SCENARIO["system_prompt"]}],
        "role": "user",
    }
    assert first["generationConfig"]["thinkingConfig"] == {
        "include_thoughts": thinking,
        "thinking_budget": -1,
    }
    # a thought signature goes back URL-safe encoded, as the reference's client writes bytes
    issued = server.sign({"functionCall": {"name": "check_balance", "args": {"account_id": 7}}})
    replayed = server.requests[1]["body"]["contents"][1]["parts"][-1]["thoughtSignature"]
    assert replayed == base64.urlsafe_b64encode(base64.b64decode(issued)).decode()
    # the summary: the instructions out of band, no tools; the trigger is promptTokenCount
    summary = server.requests[15]["body"]
    assert list(summary) == ["contents", "systemInstruction", "generationConfig"]
    assert agent.compactions[0].triggered_at_tokens == 160_000
    assert agent.compactions[0].middle_start == 5  # no system message in the conversation
    if thinking:
        assert {"text": "Balance first.", "thought": True} in server.requests[1]["body"][
            "contents"
        ][1]["parts"]


def wait_for_next_day() -> dict[str, Any]:
    """Sleep."""
    return {}


def post_listing(
    item: str,
    qty: int,
    price: float,
    public: bool = True,
    tags: list | None = None,
    terms: dict | None = None,
    note: str = "",
) -> dict[str, Any]:
    """Post."""
    return {}


def test_gemini_tool_schemas_are_converted_as_the_references_client_does() -> None:
    shapes = recorded("gemini")["shapes"]
    tools = [
        dataclasses.replace(
            ToolSpec.from_function(fn).with_schema(t["input_schema"]),
            description=t["description"],
        )
        for fn, t in zip((wait_for_next_day, post_listing), shapes["tools"], strict=True)
    ]
    with FakeGeminiServer(lambda r: BrainReply(text="ok")) as server:
        server.validate = lambda body: None  # the empty parameter object goes as written
        provider = GeminiProvider(
            "gemini-3.1-pro-preview", api_key="gm-fake", base_url=server.root_url
        )
        messages = [ChatMessage("system", SCENARIO["system_prompt"]), *conversation()[1:2]]
        out = asyncio.run(provider.generate(messages, tools, config()))
    assert out.text == "ok"
    assert server.raw_bodies[0] == shapes["request"]["raw"].encode("utf-8")
    params = server.requests[0]["body"]["tools"][0]["functionDeclarations"][0]["parameters"]
    assert params == {"properties": {}, "required": [], "type": "OBJECT"}
    with pytest.raises(ValueError, match="additionalProperties"):
        wire.gemini_schema({"type": "object", "additionalProperties": False})


def test_gemini_reply_is_read_as_the_reference_reads_it() -> None:
    sig = base64.b64encode(bytes(range(250, 256)) * 4).decode()  # has "+" and "/"
    data = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "T1", "thought": True, "thoughtSignature": sig},
                        {"text": "a", "thoughtSignature": sig},  # a text's signature is dropped
                        {"text": ""},
                        {"text": "b"},
                        {
                            "functionCall": {"name": "ping", "args": {"n": 2}, "id": "x"},
                            "thoughtSignature": sig,
                        },
                    ]
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {"promptTokenCount": 70, "toolUsePromptTokenCount": 5},
        "responseId": "r1",
    }
    reply = wire.gemini_reply(data)
    assert (reply.text, reply.thinking, reply.summary) == ("ab", "T1", "T1")
    assert reply.prompt_tokens == 70  # prompt_token_count only, as GeminiModel counts
    [call] = reply.calls
    assert call.name == "ping" and call.arguments == {"n": 2} and call.call_id.startswith("ping_")
    assert reply.raw == {
        "thought_signatures": {call.call_id: sig},
        "thought_parts": [{"text": "T1", "thought_signature": sig}],
    }
    turn = ChatMessage("assistant", "ab", tool_calls=[call], provider_data=wire.with_raw(reply.raw))
    url_safe = base64.urlsafe_b64encode(base64.b64decode(sig)).decode()
    assert wire.gemini_contents([turn]) == [
        {
            "parts": [
                {"text": "T1", "thought": True, "thoughtSignature": url_safe},
                {"text": "ab"},
                {"functionCall": {"args": {"n": 2}, "name": "ping"}, "thoughtSignature": url_safe},
            ],
            "role": "model",
        }
    ]
    # the compactor's bridge and an empty turn: rebuilt from the text, a placeholder part
    assert wire.gemini_contents([ChatMessage("assistant", "")]) == [
        {"parts": [{"text": ""}], "role": "model"}
    ]
    assert wire.gemini_reply({"candidates": []}).raw is None


def test_registry_builds_a_coffee_paper_gemini_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gm-fake")
    provider = build_provider(
        "google/gemini-3.1-pro-preview", ModelSettings(request_style="coffee_paper")
    )
    assert isinstance(provider.inner, GeminiProvider)
    agent = reference_agent(provider.inner)
    agent.start("roaster_A", "roaster", [SPEC])
    assert not agent.system_in_messages and agent.messages[0].role == "user"


def test_gemini_coffee_paper_errors_are_classified() -> None:
    with FakeGeminiServer(lambda r: BrainReply(text="ok")) as server:
        server.faults.extend([Fault("context_overflow"), Fault("status", status=503)])
        provider = GeminiProvider(
            "gemini-3.1-pro-preview", api_key="gm-fake", base_url=server.root_url
        )
        messages = [ChatMessage("user", "hi")]
        with pytest.raises(ContextOverflowError):
            asyncio.run(provider.generate(messages, [], config()))
        with pytest.raises(TransientModelError):
            asyncio.run(provider.generate(messages, [], config()))
