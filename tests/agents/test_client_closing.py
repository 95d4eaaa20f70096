"""Whoever ends an event loop closes the model clients that ran on it.

The OpenAI providers send through the SDK's aiohttp transport, whose sessions complain on
stderr ("Unclosed client session", through the ``asyncio`` logger) when they are collected
open. A run, a one-call ``respond`` and the paper's run each close their agents' clients
before their loop ends; a provider wrapped for pricing and recording closes what it wraps.
"""

from __future__ import annotations

import gc
import logging

import pytest
from tests.fakes.common import BrainReply, BrainRequest
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models.base import GenerateConfig
from econbench.agents.models.openai_provider import OpenAIResponsesProvider
from econbench.agents.models.registry import PricedProvider
from econbench.agents.policy import UserText
from econbench.agents.react import LLMAgent
from econbench.api import run_coffee

KEY = "sk-test-closing-0123456789abcdef"


def waiting(request: BrainRequest) -> BrainReply:
    return BrainReply(text="waiting")


def unclosed(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the collector said about open sessions and connectors, after collecting."""
    gc.collect()
    return [r.getMessage() for r in caplog.records if "Unclosed" in r.getMessage()]


def test_a_one_call_respond_closes_its_client_on_each_loop(caplog) -> None:
    caplog.set_level(logging.ERROR, logger="asyncio")
    with FakeOpenAIServer(waiting) as server:
        inner = OpenAIResponsesProvider("gpt-5.5", api_key=KEY, base_url=server.base_url)
        provider = PricedProvider(inner, name="openai/gpt-5.5")
        agent = LLMAgent(provider, system_prompt="You wait.", render_observation=str)
        for day in (1, 2):  # a fresh event loop each time
            reply = agent.respond([UserText(f"Day {day}.")])
            assert reply.text == "waiting"
            assert inner._client.is_closed(), "the loop ended with the client open"
        assert len(server.requests) == 2
    assert unclosed(caplog) == []


def test_a_priced_provider_closes_the_provider_it_wraps() -> None:
    import asyncio

    with FakeOpenAIServer(waiting) as server:
        inner = OpenAIResponsesProvider("gpt-5.5", api_key=KEY, base_url=server.base_url)
        provider = PricedProvider(inner, name="openai/gpt-5.5")

        async def one_call() -> None:
            await provider.generate([], [], GenerateConfig())
            assert not inner._client.is_closed()
            await provider.aclose()

        asyncio.run(one_call())
    assert inner._client.is_closed()


def test_a_model_played_run_closes_its_clients_before_its_loop_ends(
    tmp_path, monkeypatch, caplog
) -> None:
    caplog.set_level(logging.ERROR, logger="asyncio")
    with FakeOpenAIServer(waiting) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        result = run_coffee(
            seed=1, days=2, actors={"roaster_A": "openai/gpt-5.5"}, out=tmp_path / "run"
        )
        assert result.summary["status"] == "completed"
        assert len(server.requests) >= 2  # a request a day at least
    assert unclosed(caplog) == []


def test_a_client_passed_in_is_left_open_for_its_owner() -> None:
    import anthropic
    import openai
    from tests.fakes.anthropic_server import FakeAnthropicServer

    from econbench.agents.models.anthropic_provider import AnthropicProvider

    with FakeOpenAIServer(waiting) as oa, FakeAnthropicServer(waiting) as an:
        owned = {
            "openai": openai.AsyncOpenAI(api_key=KEY, base_url=oa.base_url, max_retries=0),
            "anthropic": anthropic.AsyncAnthropic(api_key=KEY, base_url=an.root_url, max_retries=0),
        }
        providers = [
            OpenAIResponsesProvider(
                "gpt-5.5", api_key=KEY, base_url=oa.base_url, client=owned["openai"]
            ),
            AnthropicProvider(
                "claude-sonnet-4-6", api_key=KEY, base_url=an.root_url, client=owned["anthropic"]
            ),
        ]
        for provider in providers:
            agent = LLMAgent(provider, system_prompt="You wait.", render_observation=str)
            assert agent.respond([UserText("Day 1.")]).text == "waiting"
        assert [c.is_closed() for c in owned.values()] == [False, False]
