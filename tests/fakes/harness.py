"""What the provider tests share: a scripted shop brain and a one-loop call harness."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from econbench.agents.models.base import ChatMessage, GenerateConfig, ModelOutput, ModelProvider
from econbench.agents.tools import ToolSpec

from .common import BrainReply, BrainRequest


def shop_brain(request: BrainRequest) -> BrainReply:
    """Buy 5 kg when asked, then say what the tool answered."""
    last = request.messages[-1]
    if last["role"] == "tool":
        return BrainReply(text=f"tool said {last['content']}")
    if "think" in last["content"]:
        return BrainReply(
            reasoning="Cash is fine; buying 5 kg.",
            tool_calls=[{"name": "buy", "arguments": {"qty": 5}}],
        )
    if "two" in last["content"]:
        return BrainReply(
            tool_calls=[
                {"name": "buy", "arguments": {"qty": 1}},
                {"name": "check_cash", "arguments": {}},
            ]
        )
    if "buy" in last["content"]:
        return BrainReply(text="Buying.", tool_calls=[{"name": "buy", "arguments": {"qty": 5}}])
    return BrainReply(text=f"echo: {last['content']}")


class ProviderHarness:
    """One event loop per test, as in a run; providers are closed at the end."""

    def __init__(self, factory: Callable[..., ModelProvider], tools: list[ToolSpec]) -> None:
        self.loop = asyncio.new_event_loop()
        self.factory = factory
        self.tools = tools
        self.providers: list[Any] = []

    def make(self, server: Any, **kwargs: Any) -> Any:
        provider = self.factory(server, **kwargs)
        self.providers.append(provider)
        return provider

    def call(
        self,
        provider: Any,
        messages: list[ChatMessage],
        config: GenerateConfig | None = None,
        tools: list[ToolSpec] | None = None,
    ) -> ModelOutput:
        if provider not in self.providers:
            self.providers.append(provider)
        tools = self.tools if tools is None else tools
        return self.loop.run_until_complete(
            provider.generate(messages, tools, config or GenerateConfig())
        )

    def close(self) -> None:
        for provider in self.providers:
            self.loop.run_until_complete(provider.aclose())
        self.loop.close()
