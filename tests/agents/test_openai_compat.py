"""Tool calls reach strict OpenAI-compatible servers: tool_choice, no null content, profiles.

The fake server is as strict as the strictest real servers by default (llama-cpp-python drops
tools without ``tool_choice``; Ollama and llama-cpp-python reject ``content: null``), so a
provider that regresses on either fails here, not only against a real server.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from tests.fakes.common import BrainReply, BrainRequest
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models.base import ChatMessage, GenerateConfig, ModelOutput
from econbench.agents.models.compat import PROFILES, Compat, profile, resolve
from econbench.agents.models.openai_provider import OpenAIChatProvider, OpenAIResponsesProvider
from econbench.agents.models.registry import (
    ModelConfigError,
    ModelSettings,
    build_provider,
    check_keys,
)
from econbench.agents.tools import Toolkit, ToolSpec, tool


class Shop(Toolkit):
    @tool("write")
    def buy(self, qty: int) -> dict:
        """Buy green coffee.

        Args:
            qty: Kilograms to buy.
        """
        return {"bought": qty}


TOOLS: list[ToolSpec] = Shop().specs()


def buyer(request: BrainRequest) -> BrainReply:
    """Calls ``buy`` when shown it; after a tool result, says what it saw."""
    if request.messages[-1]["role"] == "tool":
        return BrainReply(text="done")
    return BrainReply(tool_calls=[{"name": "buy", "arguments": {"qty": 5}}])


def convo(*extra: ChatMessage) -> list[ChatMessage]:
    return [ChatMessage("system", "You run roaster_A."), ChatMessage("user", "Day 1"), *extra]


def run(provider: Any, messages: list[ChatMessage], tools: list[ToolSpec] | None = None) -> Any:
    async def call() -> ModelOutput:
        try:
            config = GenerateConfig(max_tokens=64)
            return await provider.generate(messages, TOOLS if tools is None else tools, config)
        finally:
            await provider.aclose()

    return asyncio.run(call())


def compatible(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIChatProvider:
    return OpenAIChatProvider(
        "fake-model", api_key=None, base_url=server.base_url, name="openai-compatible/m", **kwargs
    )


def round_trip(provider: Any) -> tuple[ModelOutput, ModelOutput]:
    """A tool call, its result, and the next turn (which replays the tool-only turn)."""
    first = run(provider, convo())
    [call] = first.tool_calls
    history = convo(
        first.as_message(),
        ChatMessage("tool", json.dumps({"bought": 5}), tool_call_id=call.call_id, name="buy"),
    )
    return first, run(provider, history)


def test_tool_choice_is_sent_with_tools_and_only_then() -> None:
    with FakeOpenAIServer(buyer) as server:
        run(compatible(server), convo())
        run(compatible(server), convo(), tools=[])
        run(OpenAIResponsesProvider("gpt-5.5", api_key="sk-x", base_url=server.base_url), convo())
    with_tools, without, responses = (r["body"] for r in server.requests)
    assert with_tools["tool_choice"] == "auto" and "parallel_tool_calls" not in with_tools
    assert "tool_choice" not in without and "tools" not in without
    assert responses["tool_choice"] == "auto"
    assert server.dropped_tools == 0


def test_tool_only_turn_is_replayed_with_empty_content_never_null() -> None:
    with FakeOpenAIServer(buyer) as server:  # rejects content null, like Ollama
        first, second = round_trip(compatible(server))
    assert first.tool_calls and first.text == "" and second.text == "done"
    replayed = server.requests[1]["body"]["messages"][-2]
    assert replayed["role"] == "assistant" and replayed["content"] == ""
    assert replayed["tool_calls"][0]["function"]["name"] == "buy"


def test_tool_only_turn_can_omit_content() -> None:
    with FakeOpenAIServer(buyer) as server:
        round_trip(
            compatible(server, compat=resolve("vllm", compatible=True, tool_call_content="omit"))
        )
    replayed = server.requests[1]["body"]["messages"][-2]
    assert "content" not in replayed and replayed["tool_calls"]


def test_the_strict_fake_catches_a_request_without_tool_choice() -> None:
    """The bug issue 15 reports, reproduced: tools sent without tool_choice never reach a
    llama-cpp-python model, so it can only write the call as text."""
    old = Compat("before-issue-15", tool_choice=None)
    with FakeOpenAIServer(buyer) as server:
        out = run(compatible(server, compat=old), convo())
    assert server.dropped_tools == 1 and server.brain_requests[0].tools == []
    assert out.tool_calls == [] and '"name": "buy"' in out.text
    with FakeOpenAIServer(buyer, require_tool_choice=False) as lenient:
        assert run(compatible(lenient, compat=old), convo()).tool_calls


def test_the_strict_fake_rejects_null_content() -> None:
    body = {
        "model": "fake-model",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "user", "content": "again"},
        ],
    }
    with FakeOpenAIServer(buyer) as server:
        strict = httpx2.post(server.base_url + "/chat/completions", json=body)
    with FakeOpenAIServer(buyer, reject_null_content=False) as lenient:
        accepted = httpx2.post(lenient.base_url + "/chat/completions", json=body)
    assert strict.status_code == 400 and "<nil>" in strict.json()["error"]["message"]
    assert accepted.status_code == 200


def test_profiles_and_overrides() -> None:
    assert set(PROFILES) >= {"generic", "llama.cpp", "vllm", "ollama", "openai"}
    assert all(
        p.tool_choice == "auto" and p.tool_call_content == "empty" for p in PROFILES.values()
    )
    assert profile(None, compatible=True).name == "generic"
    assert profile(None, compatible=False).max_tokens_field == "max_completion_tokens"
    tuned = resolve("vllm", compatible=True, tool_choice="required", parallel_tool_calls=None)
    assert (tuned.name, tuned.tool_choice, tuned.parallel_tool_calls) == ("vllm", "required", None)
    with pytest.raises(ValueError, match="unknown compat profile"):
        resolve("lmstudio", compatible=True)
    with pytest.raises(ValueError, match="unknown compat field"):
        resolve(None, compatible=True, tool_choise="auto")


def test_overrides_reach_the_wire() -> None:
    compat = resolve(
        "generic",
        compatible=True,
        tool_choice="required",
        parallel_tool_calls=False,
        max_tokens_field="max_completion_tokens",
    )
    with FakeOpenAIServer(buyer) as server:
        run(compatible(server, compat=compat), convo())
    body = server.requests[0]["body"]
    assert body["tool_choice"] == "required" and body["parallel_tool_calls"] is False
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body


def test_settings_choose_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "http://127.0.0.1:9/v1"
    default = build_provider("openai-compatible/m", ModelSettings(base_url=url))
    assert default.inner.compat.name == "generic"
    tuned = build_provider(
        "openai-compatible/m", ModelSettings(base_url=url, compat="vLLM", tool_choice="required")
    )
    assert (tuned.inner.compat.name, tuned.inner.compat.tool_choice) == ("vllm", "required")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    native = build_provider("openai/gpt-5.5", ModelSettings(parallel_tool_calls=False))
    assert native.inner.compat.name == "openai" and native.inner.compat.parallel_tool_calls is False
    with pytest.raises(ValueError, match="compat must be one of"):
        ModelSettings(compat="lmstudio")
    with pytest.raises(ModelConfigError, match="only to OpenAI"):
        build_provider("anthropic/claude-sonnet-4-6", ModelSettings(tool_choice="auto"))


def test_openai_key_goes_to_a_foreign_host_only_when_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.setenv("PROXY_KEY", "sk-proxy-0123456789")
    with pytest.raises(ModelConfigError, match="api_key_env"):
        build_provider("openai/gpt-5.5", ModelSettings(base_url="https://llm.example.net/v1"))
    named = ModelSettings(base_url="https://llm.example.net/v1", api_key_env="PROXY_KEY")
    assert build_provider("openai/gpt-5.5", named).inner._api_key == "sk-proxy-0123456789"
    for url in ("https://api.openai.com/v1", "http://127.0.0.1:4000/v1"):
        assert build_provider("openai/gpt-5.5", ModelSettings(base_url=url)).inner._api_key


def test_compatible_hosts_get_no_openai_organisation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-secret")
    with FakeOpenAIServer(buyer) as server:
        run(compatible(server), convo())
        run(OpenAIChatProvider("gpt-5.5", api_key="sk-x", base_url=server.base_url), convo())
    foreign, native = server.headers
    assert "openai-organization" not in foreign and "openai-project" not in foreign
    assert native["openai-organization"] == "org-secret"


def test_every_request_of_a_long_conversation_is_accepted_by_the_strict_fake() -> None:
    """Several tool-only turns in a row (the CoffeeBench shape) replay without a null."""
    with FakeOpenAIServer(buyer) as server:
        provider = compatible(server)
        history = convo()
        for _ in range(3):
            out = run(provider, history)
            [call] = out.tool_calls
            history += [
                out.as_message(),
                ChatMessage("tool", "{}", tool_call_id=call.call_id, name="buy"),
                ChatMessage("user", "next"),
            ]
    assert len(server.brain_requests) == 3 and server.dropped_tools == 0


def test_unset_wire_forms_leave_config_files_and_cache_keys_as_they_were() -> None:
    plain = ModelSettings(base_url="http://127.0.0.1:9/v1", max_tokens=10)
    assert not set(plain.model_dump(mode="json")) & {"compat", "tool_choice", "max_tokens_field"}
    assert plain.generate_config().extra == {}
    tuned = ModelSettings(compat="ollama", tool_choice="required")
    dumped = tuned.model_dump(mode="json")
    assert dumped["compat"] == "ollama" and dumped["tool_choice"] == "required"
    assert "parallel_tool_calls" not in dumped
    assert ModelSettings.model_validate(dumped) == tuned
    assert tuned.generate_config().extra == {"compat": "ollama", "tool_choice": "required"}


def test_a_value_the_named_server_refuses_is_an_error_before_the_run() -> None:
    """llama-cpp-python answers tool_choice "required" and a missing content with HTTP 500s
    (which would be retried); naming them for that profile fails at once, naming the model."""
    url = "http://127.0.0.1:9/v1"
    for field, value in (("tool_choice", "required"), ("tool_call_content", "omit")):
        settings = ModelSettings(base_url=url, compat="llama.cpp", **{field: value})
        with pytest.raises(ModelConfigError, match=f"openai-compatible/m: .*{field}"):
            check_keys(["openai-compatible/m"], {"openai-compatible/m": settings})
    fine = ModelSettings(base_url=url, compat="llama.cpp", tool_choice="none")
    assert build_provider("openai-compatible/m", fine).inner.compat.tool_choice == "none"
